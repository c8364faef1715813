"""Content moderation of citizens' messages and of replies (docs/moderation.md).

``Moderation`` runs its moderators in order (the staff word list, then an optional
moderation service) on a citizen's message before the engine and any model see it,
and on every reply after it is rendered, before the citizen sees it:

- ``refuse``: a message is not used (a fixed polite reply; the session is not
  changed); a reply is replaced by a fixed one;
- ``mask``: the listed words are starred and the text goes on;
- ``flag``: the text goes on unchanged; the audit log gets a ``moderation`` entry
  (the category, never the text) for the console's review and counts.

``create_moderation(settings, catalog, texts)`` builds it from the settings
(``SI_MODERATION``: ``words`` by default, ``http``, ``words+http``, ``off``) and the
business folder's ``_moderation.yaml`` (else the packaged default list), which every
process reloads when it changes (``live``: the console saves and versions it).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from si_agent.config.settings import MODERATION_CHOICES, Settings
from si_agent.core.decision import TextSink
from si_agent.moderation.live import LiveWordList, WordListEditor
from si_agent.moderation.model import Action, Hit, Moderator, Verdict, Where
from si_agent.moderation.words import WordList, WordListModerator

__all__ = ["Action", "Hit", "LiveWordList", "Moderation", "Moderator", "Verdict", "Where",
           "WordList", "WordListEditor", "WordListModerator", "create_moderation",
           "MODERATION_CHOICES"]

log = logging.getLogger(__name__)


class Moderation:
    """The moderators of a deployment, applied in order (see the module docstring)."""

    def __init__(self, moderators: Sequence[Moderator] = ()) -> None:
        self.moderators = tuple(moderators)

    @property
    def active(self) -> bool:
        return bool(self.moderators)

    @property
    def word_list(self) -> LiveWordList | None:
        """The staff word list in use, if this deployment has one (the console edits it)."""
        return next((m for m in self.moderators if isinstance(m, LiveWordList)), None)

    @property
    def labels(self) -> dict[str, str]:
        """The staff word list's names of its categories (``abuse`` → 辱骂); empty without one."""
        words = self.word_list
        return dict(words.words.labels or {}) if words is not None else {}

    def check(self, text: str, where: Where) -> Verdict:
        """Every moderator on the text, each on what the one before left (masked text)."""
        if not self.moderators:
            return Verdict(text=text, source="off")
        hits: list[Hit] = []
        categories: list[str] = []
        flagged = masked = False
        current = text
        sources = []
        for moderator in self.moderators:
            verdict = moderator.check(current, where)
            hits += verdict.hits
            categories += [c for c in verdict.categories if c not in categories]
            if not verdict.clean:
                sources.append(verdict.source)
            if verdict.refused:
                return Verdict(text=text, hits=tuple(hits), refused=True, flagged=flagged,
                               source="+".join(sources), categories=tuple(categories),
                               reply=verdict.reply)
            flagged |= verdict.flagged
            masked |= verdict.masked
            current = verdict.text
        return Verdict(text=current, hits=tuple(hits), masked=masked, flagged=flagged,
                       source="+".join(sources) or self.moderators[0].name,
                       categories=tuple(categories))

    def stream(self, sink: TextSink) -> TextSink:
        """``sink`` fed through the output check: a model's text is sent as it comes,
        held back by the longest word a list word can span so that no listed word is
        ever sent before it is masked (with a moderation service, nothing is sent before
        the end: it checks whole texts); after a refusal nothing more is sent (the turn's
        final reply, checked as a whole, then replaces the streamed text)."""
        if not self.moderators:
            return sink
        return _HeldBack(self, sink)


class _HeldBack:
    """A text sink that sends only what the output check can no longer change."""

    def __init__(self, moderation: Moderation, sink: TextSink) -> None:
        self.moderation, self.sink = moderation, sink
        self.text = ""
        self.sent = 0
        self.stopped = False

    def __call__(self, delta: str) -> None:
        if self.stopped:
            return
        self.text += delta
        verdict = self.moderation.check(self.text, "output")
        if verdict.refused:
            self.stopped = True
            return
        until = min(m.hold(self.text, self.sent) for m in self.moderation.moderators)
        if until > self.sent:
            self.sink(verdict.text[self.sent:until])
            self.sent = until


def create_moderation(settings: Settings, catalog: Mapping[str, Any] | None = None,
                      texts: Any = None) -> Moderation:
    """The deployment's moderation (raises ``ConfigErrors`` for a bad word list: like a bad
    business file, it stops the start with ``file:line`` errors)."""
    choice = settings.moderation
    moderators: list[Moderator] = []
    if "words" in choice.split("+"):
        live = LiveWordList(Path(settings.business_dir), catalog or {}, texts)  # ConfigErrors
        moderators.append(live)
        words = live.words
        log.info("moderation: %d words in %d categories from %s", len(words.entries),
                 len(words.labels or {}), words.path)
    if "http" in choice.split("+"):
        from si_agent.moderation.http import HttpModerator

        assert settings.moderation_url is not None  # Settings refuses http without it
        moderators.append(HttpModerator(settings.moderation_url,
                                        timeout=settings.moderation_timeout,
                                        fail_closed=settings.moderation_fail == "closed"))
    return Moderation(moderators)
