"""An external moderation service, by URL (``SI_MODERATION_URL``).

``POST URL`` with ``{"text": ..., "where": "input" | "output"}`` (ID numbers, phones and
bank cards masked first: the service never sees them) answers
``{"action": "pass" | "mask" | "refuse" | "flag", "text": "...", "categories": [...]}``;
``text`` is the masked text for ``mask``. A service that does not answer in time, or
answers something else, is logged (the error type only) and then, by
``SI_MODERATION_FAIL``: ``open`` lets the text through (the word list still applies),
``closed`` refuses it.
"""

from __future__ import annotations

import logging

import httpx

from si_agent.moderation.model import Action, Verdict, Where
from si_agent.privacy import redact_text

log = logging.getLogger(__name__)


def _is_masking(masked: object, text: str) -> bool:
    """``masked`` is ``text`` with some characters replaced by a star, and nothing else:
    a service may hide words, never rewrite what the citizen said (or the reply)."""
    return (isinstance(masked, str) and len(masked) == len(text)
            and all(a == b or a in "*＊" for a, b in zip(masked, text, strict=True)))


class HttpModerator:
    name = "http"

    def hold(self, text: str, start: int) -> int:
        """A service checks whole texts: a stream sends nothing before the end."""
        return start

    def __init__(self, url: str, *, timeout: float = 2.0, fail_closed: bool = False,
                 client: httpx.Client | None = None) -> None:
        self.url = url
        self.fail_closed = fail_closed
        self._client = client or httpx.Client(timeout=timeout)

    def check(self, text: str, where: Where) -> Verdict:
        sent = redact_text(text)
        try:
            response = self._client.post(self.url, json={"text": sent, "where": where})
            response.raise_for_status()
            data = response.json()
            action = Action(data.get("action", "pass"))
            categories = tuple(str(c) for c in data.get("categories") or ())
            masked = data.get("text") if action is Action.MASK else None
        except (httpx.HTTPError, ValueError, TypeError, AttributeError) as exc:
            log.warning("moderation service %s failed (%s); %s", self.url, type(exc).__name__,
                        "refusing the text" if self.fail_closed else "letting the text through")
            return Verdict(text=text, refused=self.fail_closed, source=self.name,
                           categories=("unavailable",) if self.fail_closed else ())
        if action is Action.MASK and not _is_masking(masked, sent):
            log.warning("moderation service %s answered mask with a text that is not the "
                        "text with some characters starred; flagged instead", self.url)
            masked = None
        # The service saw the redacted text: its masking applies only when nothing was
        # redacted (otherwise the masked numbers would replace the citizen's own); a
        # masking it cannot apply is flagged instead.
        applied = masked is not None and sent == text
        return Verdict(
            text=masked if applied and masked is not None else text,
            refused=action is Action.REFUSE, masked=applied,
            flagged=action is Action.FLAG or (action is Action.MASK and not applied),
            source=self.name, categories=categories)
