"""``RuleEngine``: picks the rules for the offered toolset and scores the decision."""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any

from si_agent.config.model import Business
from si_agent.core import actions as T
from si_agent.core.catalog import Catalog
from si_agent.core.decision import Decision, Rule, SessionView, TextSink, ToolCall
from si_agent.core.state import AT_REST
from si_agent.engine import lexicon as L
from si_agent.engine.rules import (
    collecting,
    confidence,
    confirming,
    extraction,
    idle,
    polarity,
    services,
    steps,
)
from si_agent.engine.rules.calls import Ruled, cancel_call, small_talk_call, within_toolset
from si_agent.engine.rules.matching import BusinessIndex, Match

log = logging.getLogger(__name__)


class RuleEngine:
    """Deterministic decisions over the current state's toolset."""

    name = "rules"

    def __init__(self, catalog: Catalog | Mapping[str, Business], *,
                 normalise: Callable[[str], str] | None = None) -> None:
        """``catalog`` is the shared ``Catalog`` (a plain mapping is wrapped in one).
        ``normalise`` puts typos and dialect right ("失叶金" → "失业金", "咋整" →
        "怎么办") before an idle message is matched to a business; values are still
        read from the message as typed."""
        self.catalog = catalog if isinstance(catalog, Catalog) else Catalog(catalog)
        self.normalise = normalise
        self._index: BusinessIndex | None = None

    def _current(self) -> BusinessIndex:
        """The index of the catalog's current version, rebuilt when it changed."""
        index = self._index
        # Read before building: a catalog changed meanwhile leaves the index labelled
        # older than its contents, so it is rebuilt next time (never kept stale).
        version = self.catalog.version
        if index is None or index.version != version:
            index = BusinessIndex(self.catalog, version)
            self._index = index
        return index

    # -- entry point ------------------------------------------------------

    def decide(
        self, view: SessionView, message: str, tools: list[dict[str, Any]],
        on_text: TextSink | None = None,
    ) -> Decision:
        """Calls from ``tools`` only: see ``propose``."""
        text = unicodedata.normalize("NFKC", message).strip()
        offered = frozenset(T.tool_names(tools))
        calls, rule, reason = self.propose(view, text, offered)
        kept = within_toolset(calls, offered)
        if len(kept) < len(calls):  # a rule bug; the controller would reject them anyway
            log.error("rule engine proposed %s outside the toolset %s (%s)",
                      [c.name for c in calls if c not in kept], sorted(offered), rule.value)
            calls = kept
        calls = polarity.clean_calls(view.business, calls)  # never store "改回张伟"
        return Decision(calls=calls, rule=rule, reason=reason, engine=self.name,
                        confidence=confidence.score(view, calls, rule, text))

    def propose(self, view: SessionView, text: str, offered: frozenset[str]) -> Ruled:
        """The rules for what the toolset allows, chosen by the tools it offers (the
        action table's toolsets), never by a table of states of its own."""
        index = self._current()
        start_over = _start_over(view, text, offered)
        if start_over is not None:
            return start_over
        if T.MATCH_BUSINESS in offered:
            return idle.decide(index, self.normalise, view, text, offered)
        if any(name.startswith(T.STEP_PREFIX) for name in offered):
            return steps.decide(index, view, text, offered)
        if T.PROVIDE_FIELD in offered:
            return collecting.decide(index, view, text, offered)
        if offered & {T.CONFIRM_SUBMIT, T.RETRY_SUBMIT, T.MODIFY_INFO, T.REDO_STEP}:
            return confirming.decide(index, view, text, offered)
        if T.CANCEL_FLOW in offered and L.is_cancel(text):
            return [cancel_call()], Rule.CANCEL_WORD, "cancel word"
        return services.decide(text, offered) or ([], Rule.NONE,
                                                  "nothing to decide with these tools")

    # -- pieces other engines and tests use ----------------------------------

    def match(self, text: str) -> Match:
        """Best business for ``text``: (id, score, matched span, runner-up score)."""
        return self._current().match(text)

    def start(self, view: SessionView, business: Business, text: str) -> list[ToolCall]:
        """The calls that start ``business`` with the values in ``text``."""
        return idle.start(self._current(), view, business, text)

    def values_for(
        self, business: Business, awaited: str | None, text: str, *, whole: bool
    ) -> dict[str, str]:
        """Field values stated in ``text``: ``{field_key: raw text}``."""
        return extraction.values_for(business, awaited, text, whole=whole)


def _start_over(view: SessionView, text: str, offered: frozenset[str]) -> Ruled | None:
    """"重新开始" typed, in any state (the flow asks first when something would be lost),
    and the answer to that question: yes starts over, "继续" or no keeps the business."""
    if T.SMALL_TALK not in offered:
        return None
    if L.is_start_over(text) or (view.start_over_asked and L.is_start_over_yes(text)):
        return [small_talk_call("start_over")], Rule.SMALL_TALK, "start over"
    if view.start_over_asked and L.is_decline(text) and view.state not in AT_REST:
        return [], Rule.DECLINED, "start over declined: the business goes on"
    return None
