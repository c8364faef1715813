"""The rule engine: the same tools as a model, decided by deterministic rules.

It is the offline default and the fast path in front of a model. Each rule is
conservative: when it is not sure, it asks (a suggestion, or no call, which
makes the controller ask again) rather than guesses.

The rules are chosen by the tools the state offers (``flow.actions`` derives
them from the machine), and a rule fires only if its tool is offered:
- ``match_business`` offered (idle, done): accept a pending suggestion
  ("办理"), match a business by keyword or by character-bigram similarity
  (IDF-weighted over the businesses' vocabularies), tell questions from
  requests (``speech_act``: a question is answered, then the business
  recommended; a request starts it); values in the same message are provided
  at once;
- an upload tool offered (a step awaited): a file path for it; values typed
  meanwhile;
- ``provide_field`` offered (collecting): cancel words; values found by the
  validators' extractors, assigned to fields by type, cue words and labels (so
  corrections such as "不对，转出城市是苏州" work); the whole message for the
  awaited field; questions go to ``answer_question``;
- ``confirm_submit``/``retry_submit``/``modify_info``/``redo_step`` (confirming,
  failed): confirm, retry, modify (by label or by a value whose type fits one
  field), redo a step by its label, cancel.

Each decision names the ``Rule`` that fired and a confidence (``SURE`` when a
model could add nothing).
"""

from __future__ import annotations

import logging
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from si_agent.config.model import MASKED_TYPES, Business, FieldDef
from si_agent.engine import lexicon as L
from si_agent.engine.base import SURE, Decision, Rule, SessionView, TextSink, ToolCall
from si_agent.engine.bounds import first_disjoint
from si_agent.engine.consult import asks_for_consultation, extract_slots, meant_slot, stops
from si_agent.engine.speech_act import SpeechAct, classify
from si_agent.flow import actions as T
from si_agent.session.model import FieldState
from si_agent.validators import check, extract

log = logging.getLogger(__name__)

MATCH_THRESHOLD = 0.75
SUGGEST_THRESHOLD = 0.45
ASKED_THRESHOLD = 0.6  # enough for a business asked for outright ("我要…") with a clear margin
MARGIN = 0.15
SCATTERED_SCORE = 0.8  # every character of a keyword, close together, in any order
_SCATTER_SLACK = 6
_CUE_BEFORE = 8  # characters between a cue and the value it introduces
_CUE_AFTER = 2  # characters between a value and a cue that follows it ("60岁")
_AFTER_PENALTY = 3
_NUMERIC = ("integer", "number")


def _bigrams(text: str) -> set[str]:
    return {text[i:i + 2] for i in range(len(text) - 1)} if len(text) > 1 else {text}


def _scattered(phrase: str, text: str) -> bool:
    """All characters of ``phrase`` (3+) occur in ``text`` within a short window.

    Catches "把社保从杭州转到苏州" for the keyword "转社保".
    """
    if len(phrase) < 3:
        return False
    need = Counter(phrase)
    if any(text.count(ch) < n for ch, n in need.items()):
        return False
    limit = len(phrase) + _SCATTER_SLACK
    for i, ch in enumerate(text):
        if ch not in need:
            continue
        window = Counter(text[i:i + limit])
        if all(window[c] >= n for c, n in need.items()):
            return True
    return False


_Ruled = tuple[list[ToolCall], Rule, str]


@dataclass(frozen=True)
class _Candidate:
    type: str
    raw: str
    start: int
    end: int
    field: str | None = None  # set when only one field can take it (enum options)


class RuleEngine:
    """Deterministic decisions over the current state's toolset."""

    name = "rules"

    def __init__(self, catalog: Mapping[str, Business], *,
                 normalise: Callable[[str], str] | None = None) -> None:
        """``normalise`` puts typos and dialect right ("失叶金" → "失业金", "咋整" →
        "怎么办") before an idle message is matched to a business; values are still
        read from the message as typed."""
        self.catalog = dict(catalog)
        self.normalise = normalise
        self._phrases = {
            b.id: tuple(dict.fromkeys(p.lower() for p in (b.name, *b.keywords)))
            for b in self.catalog.values()
        }
        df: Counter[str] = Counter()
        for phrases in self._phrases.values():
            df.update(set().union(*(_bigrams(p) for p in phrases)))
        n = max(1, len(self.catalog))
        self._idf = {g: math.log(1 + n / c) for g, c in df.items()}
        self._chars = {p: frozenset(p) for phrases in self._phrases.values() for p in phrases}
        every = sorted(self._chars, key=len, reverse=True)
        self._any_phrase = re.compile("|".join(map(re.escape, every))) if every else re.compile("$^")
        self._phrase_grams = {
            p: (grams, sum(self._idf[g] for g in grams) or 1.0)
            for phrases in self._phrases.values() for p in phrases
            for grams in (_bigrams(p),)
        }

    # -- entry point ------------------------------------------------------

    def decide(
        self, view: SessionView, message: str, tools: list[dict], on_text: TextSink | None = None
    ) -> Decision:
        """Calls from ``tools`` only: see ``propose``."""
        text = unicodedata.normalize("NFKC", message).strip()
        offered = frozenset(T.tool_names(tools))
        calls, rule, reason = self.propose(view, text, offered)
        kept = _within_toolset(calls, offered)
        if len(kept) < len(calls):  # a rule bug; the controller would reject them anyway
            log.error("rule engine proposed %s outside the toolset %s (%s)",
                      [c.name for c in calls if c not in kept], sorted(offered), rule.value)
            calls = kept
        return Decision(calls=calls, rule=rule, reason=reason, engine=self.name,
                        confidence=_confidence(view, calls, rule, text))

    def propose(self, view: SessionView, text: str, offered: frozenset[str]) -> _Ruled:
        """The rules for what the toolset allows, chosen by the tools it offers (the
        action table's toolsets), never by a table of states of its own."""
        if T.MATCH_BUSINESS in offered:
            return self._idle(view, text, offered)
        if any(name.startswith(T.STEP_PREFIX) for name in offered):
            return self._step(view, text, offered)
        if T.PROVIDE_FIELD in offered:
            return self._collecting(view, text, offered)
        if offered & {T.CONFIRM_SUBMIT, T.RETRY_SUBMIT, T.MODIFY_INFO, T.REDO_STEP}:
            return self._confirming(view, text, offered)
        if T.CANCEL_FLOW in offered and L.is_cancel(text):
            return [_cancel()], Rule.CANCEL_WORD, "cancel word"
        return [], Rule.NONE, "nothing to decide with these tools"

    # -- idle -------------------------------------------------------------

    def _idle(self, view: SessionView, text: str, offered: frozenset[str]) -> _Ruled:
        if view.suggestion in self.catalog and L.is_accept(text):
            return [_match(view.suggestion)], Rule.ACCEPTED_SUGGESTION, (
                f"accepted suggestion {view.suggestion}")
        kind = L.small_talk(text)
        if kind is not None and T.SMALL_TALK in offered:
            return [_small_talk(kind)], Rule.SMALL_TALK, kind
        read = self.normalise(text) if self.normalise else text  # 失叶金咋领 → 失业金怎么领
        bid, score, span, runner_up = self.match(read)
        if L.is_cancel(text) and score < MATCH_THRESHOLD and T.CANCEL_FLOW in offered:
            return [_cancel()], Rule.CANCEL_WORD, "cancel word"
        if (view.state == "done" and view.business is not None and L.AGAIN.search(text)
                and (bid is None or score < MATCH_THRESHOLD)):
            return self.start(view, view.business, text), Rule.AGAIN, (
                f"again: {view.business.id}")
        masked = _mask_codes(read)
        rest = masked[: span[0]] + masked[span[1]:] if span else masked
        if bid and score >= MATCH_THRESHOLD and score - runner_up >= MARGIN:
            business = self.catalog[bid]
            rule = Rule.EXACT_KEYWORD if score >= 1.0 else Rule.SIMILAR_KEYWORD
            given = self.values_for(business, None, self._without_keywords(business, text),
                                    whole=False)
            act, why = classify(read, rest, query=business.type == "query", values=len(given))
            starts = (asks_for_consultation(read, request=act is SpeechAct.REQUEST)
                      if business.is_consult else act is SpeechAct.REQUEST)
            if starts:
                # ("想买保险，不知道买哪种" asks for the consultation to start)
                return self.start(view, business, text), rule, (
                    f"matched {bid} (score {score:.2f}; {why})")
            # A keyword only similar is a guess: the knowledge base's passages may say better.
            rule = Rule.QUESTION if score >= 1.0 else Rule.SUGGEST
            return [_answer(text, bid)], rule, (
                f"question about {bid} (score {score:.2f}; {why})")
        question = L.is_question(read)
        if (bid and score >= ASKED_THRESHOLD and score - runner_up >= MARGIN and not question
                and L.REQUEST_OPENING.match(read)):
            # "我要改一下社保登记的手机号": asked for outright, and no other business is close.
            return self.start(view, self.catalog[bid], text), Rule.SIMILAR_KEYWORD, (
                f"request for {bid} (score {score:.2f})")
        if bid and score >= SUGGEST_THRESHOLD:
            # Not a question: only the suggestion is shown, asking to confirm the guess.
            return [_answer(text if question else "", bid)], Rule.SUGGEST, (
                f"unsure: suggest {bid} (score {score:.2f})"
            )
        if question or len(text) > 6:
            return [_answer(text, None)], Rule.QUESTION, "question, no business"
        if L.is_conversational(text) and T.SMALL_TALK in offered:
            return [_small_talk("closing")], Rule.SMALL_TALK, "a filler reply: closing"
        return [], Rule.NONE, "no business matched"

    def start(self, view: SessionView, business: Business, text: str) -> list[ToolCall]:
        """Start ``business`` with the values in ``text`` and any it can reuse.

        The business's own keywords are blanked out first: "通讯地址备案" names the
        business, it does not give an address.
        """
        rest = self._without_keywords(business, text)
        if business.is_consult:  # slots said with the request ("我40岁，想咨询保险")
            found = extract_slots(business, {}, rest, guess=False)
            calls = [_match(business.id)]
            if found.values:
                calls.append(ToolCall(name=T.PROVIDE_FIELD, arguments={"values": found.values}))
            return calls
        values = self.values_for(business, None, rest, whole=False)
        if view.state == "done" and view.result and view.business is not business:
            # A number just issued is what "查询办理进度" right after means (but
            # "再查一个" after a query asks about another one).
            # Personal data is not carried over: the citizen gives it for each business.
            for f in business.fields:
                if (f.key not in values and isinstance(view.result.get(f.key), str)
                        and f.type not in _PERSONAL):
                    values[f.key] = view.result[f.key]
        calls = [_match(business.id)]
        if values:
            calls.append(ToolCall(name=T.PROVIDE_FIELD, arguments={"values": values}))
        return calls

    def _without_keywords(self, business: Business, text: str) -> str:
        low = text.lower()
        for phrase in sorted(self._phrases.get(business.id, ()), key=len, reverse=True):
            at = low.find(phrase)
            while at >= 0:
                text = text[:at] + " " * len(phrase) + text[at + len(phrase):]
                low = text.lower()
                at = low.find(phrase)
        return text

    def match(self, text: str) -> tuple[str | None, float, tuple[int, int] | None, float]:
        """Best business for ``text``: (id, score, matched span, runner-up score)."""
        low = _mask_codes(text.lower())
        scores: dict[str, tuple[float, int, tuple[int, int] | None]] = {}
        grams = _bigrams(low)
        chars = set(low)
        for bid, phrases in self._phrases.items():
            best: tuple[float, int, tuple[int, int] | None] = (0.0, 0, None)
            for p in phrases:
                at = low.find(p)
                if at >= 0:
                    cand = (1.0, len(p), (at, at + len(p)))
                elif self._chars[p] <= chars and _scattered(p, low):
                    cand = (SCATTERED_SCORE, len(p), None)
                else:
                    pg, total = self._phrase_grams[p]
                    cand = (sum(self._idf[g] for g in pg & grams) / total, 0, None)
                if cand[:2] > best[:2]:
                    best = cand
            scores[bid] = best
        ranked = sorted(scores.items(), key=lambda kv: kv[1][:2], reverse=True)
        if not ranked or ranked[0][1][0] <= 0:
            return None, 0.0, None, 0.0
        (bid, (score, length, span)), runner = ranked[0], ranked[1][1] if len(ranked) > 1 else (0, 0, None)
        runner_score = runner[0]
        if score == runner[0] == 1.0 and length > runner[1]:
            runner_score = 0.0  # the longer keyword wins: "社保卡挂失" over "社保卡"
        return bid, score, span, runner_score

    # -- collecting -------------------------------------------------------

    def _collecting(self, view: SessionView, text: str, offered: frozenset[str]) -> _Ruled:
        business = view.business
        assert business is not None
        if business.is_consult:
            return self._consulting(view, business, text, offered)
        switch = self._switch(view, text, offered)
        if switch is not None:
            return switch
        skip = _skip(view, text, offered)
        if skip is not None:
            return skip
        if L.is_cancel(text):
            return [_cancel()], Rule.CANCEL_WORD, "cancel word"
        awaited = view.awaiting if view.awaiting in business.field_keys else _first(view)
        talk = self._talk_in_flow(business, awaited, text, offered)
        if talk is not None:
            return talk
        redo = _mentioned_step(business, text)
        if redo and T.REDO_STEP in offered and (L.wants_modify(text) or "重新" in text):
            return [_redo(redo)], Rule.MODIFY, f"redo step {redo}"
        named = _named_field(business, text) if L.wants_modify(text) else None
        target = _mentioned_field(business, text) or (named if named != awaited else None)
        if target and (L.wants_modify(text) or "重新" in text or "重填" in text):
            return [self._modify(business, target, text)], Rule.MODIFY, f"go back to {target}"
        if L.is_preamble_only(text):
            return [], Rule.CONVERSATIONAL, "only a preamble (打错了): the value follows"
        answer = L.strip_preamble(text)
        values = self.values_for(business, awaited, answer, whole=True)
        if not values and answer != text:
            # "打错了，是张伟": a correction of a value given before, if only one fits.
            fits = [f.key for f in business.fields
                    if f.key != awaited and view.fields.get(f.key, FieldState()).status
                    == "collected" and _whole_message_fits(f, answer)]
            values = {fits[0]: answer} if len(fits) == 1 else {}
        if values:
            weak = all(business.field(k).type in _WEAK for k in values)
            if L.is_question(text) and weak:
                return [_answer(text, None)], Rule.QUESTION, "a question that mentions a value"
            provide = ToolCall(name=T.PROVIDE_FIELD, arguments={"values": values})
            if L.is_how_question(text):
                # Mixed intent: answer first, then take the values.
                return [_answer(text, None), provide], Rule.VALUES, "question and values"
            return [provide], Rule.VALUES, "values found"
        if L.is_greeting(text) or L.is_conversational(text):
            return [], Rule.CONVERSATIONAL, "no value in a conversational reply"
        if L.is_question(text):
            return [_answer(text, None)], Rule.QUESTION, "question while collecting"
        free_text = awaited and business.field(awaited).type == "text"
        if free_text and L.NON_ANSWER.search(text):
            return [], Rule.CONVERSATIONAL, "a non-answer would pass as free text"
        if awaited:
            return [ToolCall(name=T.PROVIDE_FIELD, arguments={"values": {awaited: answer}})], (
                Rule.AWAITED_ANSWER), "the message as the awaited field's value"
        return [], Rule.NONE, "nothing recognised"

    def _switch(self, view: SessionView, text: str, offered: frozenset[str]) -> _Ruled | None:
        """Another business named mid-flow: switch (after "要先办理…吗？" was answered
        yes, or at once when the current one is dropped for good), or ask once."""
        business = view.business
        if business is None or T.SWITCH_BUSINESS not in offered:
            return None
        pending = view.suggestion if view.suggestion in self.catalog else None
        pending = pending if pending != business.id else None
        if pending and L.is_switch_yes(text):
            return [_switch(pending)], Rule.SWITCH, f"switch to {pending}: accepted"
        explicit = L.abandons(text)
        named = explicit or bool(self._any_phrase.search(_mask_codes(text.lower())))
        bid, score, span, runner_up = self.match(text) if named else (None, 0.0, None, 0.0)
        if pending and bid == pending and score >= MATCH_THRESHOLD:
            # "还是先查养老金吧": the answer names the business asked about.
            return [_switch(pending)], Rule.SWITCH, f"switch to {pending}: named"
        if pending and L.is_decline(text):
            return [], Rule.DECLINED, f"switch to {pending}: declined"
        if bid is None or bid == business.id or score - runner_up < MARGIN:
            return None
        if bid in view.suspended and L.RESUME.search(text):
            # "继续办理【社保卡挂失】" (the page's button): a kept business, taken up again.
            return [_switch(bid)], Rule.SWITCH, f"resume {bid}"
        if not (score >= 1.0 or (explicit and score >= MATCH_THRESHOLD)):
            return None
        if L.wants_modify(text) and _mentioned_field(business, text):
            return None  # "修改手机号码" changes a field here, it is not 联系电话变更
        masked = _mask_codes(text)
        rest = masked[: span[0]] + masked[span[1]:] if span else masked
        if L.is_how_question(rest) and not explicit:
            return None  # a question about the other business, answered in place
        awaited = view.awaiting if view.awaiting in business.field_keys else None
        if awaited is not None:
            field = business.field(awaited)
            if field.type not in ("text", "name") and _whole_message_fits(field, text):
                return None  # a valid answer that happens to contain a keyword
        if explicit:
            calls = [_cancel(), *self.start(view, self.catalog[bid], text)]
            return calls, Rule.SWITCH, f"dropped {business.id} for {bid} (score {score:.2f})"
        return [_answer("", bid)], Rule.SWITCH, f"ask to switch to {bid} (score {score:.2f})"

    def _talk_in_flow(self, business: Business, awaited: str | None, text: str,
                      offered: frozenset[str]) -> _Ruled | None:
        """Small talk, a refusal, or a question about a field, while a business runs."""
        kind = L.small_talk(text)
        if kind in ("handoff", "self_intro") and T.SMALL_TALK in offered:
            return [_small_talk(kind)], Rule.SMALL_TALK, kind
        if T.EXPLAIN_FIELD not in offered:
            return None
        named = _mentioned_field(business, text)
        if (L.is_refusal(text) and not self._strong_values(business, text)
                and not self._answers(business, awaited, text)):
            key = named or awaited
            if key is not None:
                return [_explain(key, "why")], Rule.REFUSAL, f"why {key} is needed"
        if L.is_question(text) or L.ASKS_MEANING.search(text):
            key = named or (awaited if L.ASKS_MEANING.search(text) else None)
            if key is not None and business.field(key).help:
                return [_explain(key, "help")], Rule.FIELD_HELP, f"what {key} means"
        return None

    def _answers(self, business: Business, awaited: str | None, text: str) -> bool:
        """Whether ``text`` also gives the awaited value ("不方便的话寄到公司，文三路100号")."""
        if awaited is None:
            return False
        field = business.field(awaited)
        if field.type == "text" and not field.pattern:
            return any(c.isdigit() for c in text)  # an address has a number; a refusal not
        value = self.values_for(business, awaited, L.strip_preamble(text), whole=True).get(awaited)
        return value is not None and check(field.type, value, **field.validator_options()).ok

    def _strong_values(self, business: Business, text: str) -> bool:
        return any(c.type in _STRONG for c in self._candidates(business, text))

    def values_for(
        self, business: Business, awaited: str | None, text: str, *, whole: bool
    ) -> dict[str, str]:
        """Field values stated in ``text``: ``{field_key: raw text}``.

        A value the sentence itself takes back is dropped: "参保地不是杭州是上海",
        "名字是李四不是李思", "社平工资8000，不对，是8500".
        """
        text = _UNTIL_NOW.sub(r"\1今年", text)
        text = _NOT_THIS.sub(lambda m: " " * len(m.group()), text)
        fix = _SELF_FIX.search(text)
        if fix and text[: fix.start()].strip() and text[fix.end():].strip():
            before = self.values_for(business, awaited, text[: fix.start()], whole=False)
            last = list(before)[-1] if before else awaited
            after = self.values_for(business, last, text[fix.end():], whole=True)
            return {**before, **after}
        candidates = self._candidates(business, text, awaited)
        values = _assign(business, candidates, text, awaited)
        if whole and awaited in business.field_keys and set(values) <= {awaited}:
            # The whole answer to the question asked beats a piece of it.
            field = business.field(awaited)
            answer = _strip_cue(field, text).strip(" ，,。;；")
            if _whole_message_fits(field, answer):
                return {awaited: answer}
        return values

    def _candidates(self, business: Business, text: str,
                    awaited: str | None = None) -> list[_Candidate]:
        found: list[_Candidate] = []
        done_types: set[str] = set()
        for f in business.fields:
            if f.type in ("enum", "multi_enum", "bucket"):  # typed by the field's own options
                kind = "bucket" if f.type == "bucket" else "enum"
                found += [_Candidate(f.type, x.raw, x.start, x.end, f.key)
                          for x in extract(kind, text, **f.validator_options())]
                continue
            if f.type == "text" and f.pattern:
                found += [_Candidate("text", x.raw, x.start, x.end, f.key)
                          for x in extract("text", text, pattern=f.pattern)]
                continue
            kind = "number" if f.type in _NUMERIC else f.type
            if kind in done_types or kind == "text":
                continue
            done_types.add(kind)
            found += [_Candidate(kind, x.raw, x.start, x.end) for x in extract(kind, text)]
        for f in business.fields:
            if f.type == "text" and not f.pattern:
                found += _after_cues(f, text)
        # Longer, more specific spans first; drop anything overlapping a kept span.
        priority = {"idcard": 0, "bank_card": 1, "phone": 2, "text": 3, "date": 4, "enum": 5,
                    "multi_enum": 5, "city": 6, "name": 7, "year": 8, "bucket": 8, "number": 9}
        # Two enum fields with the same options ("原参保地", "新参保地"): the one asked wins.
        kept = first_disjoint(sorted(found, key=lambda c: (priority.get(c.type, 10),
                                                           -(c.end - c.start), c.field != awaited)))
        if any(c.type in _STRONG for c in kept) and any(f.type == "name" for f in business.fields):
            # A list of values ("330122… 张伟"): a lone short run may be the name.
            kept += _bare_names(business, text, kept)
            kept += _rest_as_text(business, text, kept)
        return sorted(kept, key=lambda c: c.start)

    def _consulting(self, view: SessionView, business: Business, text: str,
                    offered: frozenset[str]) -> _Ruled:
        """A consultation: slot values across every theme, declined slots, a question."""
        kind = L.small_talk(text)
        if kind in ("handoff", "self_intro") and T.SMALL_TALK in offered:
            return [_small_talk(kind)], Rule.SMALL_TALK, kind
        if stops(business, dict(view.fields), text):
            return [_cancel()], Rule.CANCEL_WORD, "cancel word"
        switch = self._switch(view, text, offered)
        if switch is not None:
            return switch
        term = meant_slot(business, text)
        if term is not None and T.EXPLAIN_FIELD in offered:
            return [_explain(term, "help")], Rule.FIELD_HELP, f"what {term} means"
        # "我想咨询保险" again names this business; it gives no slot.
        found = extract_slots(business, dict(view.fields), self._without_keywords(business, text))
        if not found.values and not found.skipped:
            if found.question or len(text) > 8:
                return [_answer(text, None)], Rule.QUESTION, "question during a consultation"
            return [], Rule.CONVERSATIONAL, "nothing for the slots"
        calls = [_answer(text, None)] if found.question else []
        if found.values:
            calls.append(ToolCall(name=T.PROVIDE_FIELD, arguments={"values": found.values}))
        if found.skipped:
            calls.append(ToolCall(name=T.SKIP_FIELD, arguments={"field_keys": found.skipped}))
        rule = Rule.AWAITED_ANSWER if found.guessed else Rule.VALUES
        return calls, rule, f"slots {sorted(found.values)} skipped {found.skipped}"

    # -- confirming / failed ----------------------------------------------

    def _confirming(self, view: SessionView, text: str, offered: frozenset[str]) -> _Ruled:
        business = view.business
        assert business is not None
        switch = self._switch(view, text, offered)
        if switch is not None:
            return switch
        skip = _skip(view, text, offered)
        if skip is not None:
            return skip
        if L.is_cancel(text):
            return [_cancel()], Rule.CANCEL_WORD, "cancel word"
        talk = self._talk_in_flow(business, None, text, offered)
        if talk is not None:
            return talk
        failed = T.CONFIRM_SUBMIT not in offered  # after a failure: retry, not confirm
        if failed and (L.is_retry(text) or L.is_confirm(text)):
            if T.RETRY_SUBMIT in offered:
                return [ToolCall(name=T.RETRY_SUBMIT)], Rule.RETRY_WORD, "retry word"
            return [], Rule.RETRY_WORD, "retry word, but this failure cannot be retried"
        if L.is_question(text) and not L.wants_modify(text):
            return [_answer(text, None)], Rule.QUESTION, "question"
        step = _mentioned_step(business, text)
        if step and T.REDO_STEP in offered:
            return [_redo(step)], Rule.MODIFY, f"redo step {step}"
        target = _mentioned_field(business, text) if T.MODIFY_INFO in offered else None
        if target:
            return [self._modify(business, target, text)], Rule.MODIFY, f"modify {target}"
        if L.wants_modify(text) and T.MODIFY_INFO in offered:
            named = _named_field(business, text)  # "地址写错了，应该是…", "名字写错了"
            if named:
                return [self._modify(business, named, text)], Rule.MODIFY, f"modify {named}"
            values = self.values_for(business, None, text, whole=False)
            if len(values) == 1:
                key, value = next(iter(values.items()))
                return [_modify_call(key, value)], Rule.MODIFY, f"modify {key}"
            return [], Rule.MODIFY, "modify, but which field is unclear"
        if T.CONFIRM_SUBMIT in offered and L.is_confirm(text):
            return [ToolCall(name=T.CONFIRM_SUBMIT)], Rule.CONFIRM_WORD, "confirm word"
        if L.is_question(text) or L.is_conversational(text):
            if L.is_question(text):
                return [_answer(text, None)], Rule.QUESTION, "question"
            return [], Rule.CONVERSATIONAL, "conversational"
        if T.MODIFY_INFO not in offered:
            return [], Rule.NONE, "not understood"
        values = self.values_for(business, None, text, whole=False)
        names = [f for f in business.fields if f.type == "name"]
        if not values and len(names) == 1 and _whole_message_fits(names[0], text):
            values = {names[0].key: text}
        if len(values) == 1:
            key, value = next(iter(values.items()))
            return [_modify_call(key, value)], Rule.MODIFY, f"a value that fits only {key}"
        return [], Rule.NONE, "not understood"

    def _modify(self, business: Business, key: str, text: str) -> ToolCall:
        """``modify_info`` for ``key``, with the new value if the text gives one."""
        after = L.strip_filler(_after_label(business, key, text))
        value = self.values_for(business, key, after, whole=True).get(key) if after else None
        return _modify_call(key, value)

    # -- steps -------------------------------------------------------------

    def _step(self, view: SessionView, text: str, offered: frozenset[str]) -> _Ruled:
        switch = self._switch(view, text, offered)
        if switch is not None:
            return switch
        if T.SKIP_STEP in offered and L.SKIP.search(text) and not L.FILE_PATH.search(text):
            calls = [ToolCall(name=T.SKIP_STEP)]
            if any(L.is_confirm(c) for c in L.clauses(text)):  # confirming comes next
                calls.append(ToolCall(name=T.CONFIRM_SUBMIT))
            return calls, Rule.SKIP_WORD, "skip the step"
        if L.is_cancel(text):
            return [_cancel()], Rule.CANCEL_WORD, "cancel word"
        path = L.FILE_PATH.search(text)
        if path and view.step is not None:
            return [ToolCall(name=T.step_tool_name(view.step), arguments={"file": path.group(0)})], (
                Rule.UPLOAD), "a file for the step"
        business = view.business
        if T.PROVIDE_FIELD in offered and business is not None:
            values = self.values_for(business, None, text, whole=False)
            if values and not L.is_question(text):
                return [ToolCall(name=T.PROVIDE_FIELD, arguments={"values": values})], (
                    Rule.VALUES), "values typed during a step"
        if L.is_question(text) or len(text) > 6:
            return [_answer(text, None)], Rule.QUESTION, "question during a step"
        return [], Rule.NONE, "waiting for the step's upload"


def _skip(view: SessionView, text: str, offered: frozenset[str]) -> _Ruled | None:
    """Declining the optional step offered while collecting or confirming ("跳过",
    "不用证件照"), and submitting in the same breath ("确认，不用照片")."""
    step = view.step
    if T.SKIP_STEP not in offered or step is None or not L.declines_step(text, step.label):
        return None
    calls = [ToolCall(name=T.SKIP_STEP)]
    if T.CONFIRM_SUBMIT in offered and any(L.is_confirm(c) for c in L.clauses(text)):
        calls.append(ToolCall(name=T.CONFIRM_SUBMIT))  # "确认，不用照片"
    return calls, Rule.SKIP_WORD, f"go on without {step.id}"


# -- confidence ---------------------------------------------------------------------

_SURE_RULES = frozenset({Rule.CANCEL_WORD, Rule.SKIP_WORD, Rule.CONFIRM_WORD, Rule.RETRY_WORD,
                         Rule.ACCEPTED_SUGGESTION, Rule.SMALL_TALK})
_UNSURE = 0.5


def _confidence(view: SessionView, calls: list[ToolCall], rule: Rule, text: str) -> float:
    """How sure the rules are; ``SURE`` means a model could add nothing.

    Never sure with a question in the message (it deserves an answer), nor of
    free text (a pattern-less text field accepts anything).
    """
    if rule in _SURE_RULES:
        return SURE
    if rule is Rule.NONE:
        return 0.0
    started = view.catalog.get(calls[0].arguments.get("business_id", "")) if (
        rule is Rule.EXACT_KEYWORD and calls) else None
    if started is not None and started.is_consult:
        return SURE  # asking how to choose ("怎么配置") is what a consultation is for
    if L.is_question(text):
        return _UNSURE
    if rule is Rule.EXACT_KEYWORD:
        return SURE
    business = view.business
    if rule is Rule.VALUES and business is not None and business.is_consult:
        return SURE  # typed values, cued text or aliases: the model could add nothing
    if rule is Rule.VALUES and business is not None and calls:
        values = calls[-1].arguments["values"]
        awaited = view.awaiting if view.awaiting in values else None
        fields = [business.field(k) for k in values]
        # Free text is sure only when a cue introduced it ("地址是…"), not as a whole message.
        sure = awaited is not None and all(
            not (f.type == "text" and not f.pattern and values[f.key] == text)
            and check(f.type, values[f.key], **f.validator_options()).ok
            for f in fields
        )
        return SURE if sure else _UNSURE
    return _UNSURE


# -- assignment of candidates to fields -------------------------------------------

_WEAK = ("enum", "city", "name", "integer", "number", "year", "text")
_BARE_NAME_MAX = 5  # without a middle dot, a longer run is a sentence, not a name
_STRONG = ("idcard", "phone", "bank_card")
_PERSONAL = frozenset({"name", *MASKED_TYPES})
_CODES = re.compile(r"[A-Za-z0-9]{6,}")
_UNTIL_NOW = re.compile(r"(至|到)(今|现在|目前|当前)(?!年)")
_SEPARATORS = re.compile(r"[\s,，。;；、]+")
# "不是杭州" in "参保地不是杭州是上海" or "李四不是李思": a value taken back.
_NOT_THIS = re.compile(r"不是(?!不是)[^，,。；;\s是]{1,12}?(?=[，,。；;\s]|是|$)")
# "8000，不对，是8500": what follows replaces what came before.
_SELF_FIX = re.compile(r"[，,。\s]*(?:不对|说错了|错了|哦不|更正一下|更正)[，,。\s]*(?:应该是|是)?")


def _mask_codes(text: str) -> str:
    """Long numbers and codes replaced by one character, for keyword matching."""
    return _CODES.sub("#", text)


def _modify_call(key: str, value: str | None) -> ToolCall:
    args: dict[str, str] = {"field_key": key}
    if value:
        args["value"] = value
    return ToolCall(name=T.MODIFY_INFO, arguments=args)


def _after_cues(field: FieldDef, text: str) -> list[_Candidate]:
    """A free-text value after one of the field's cues ("寄到浙江省…")."""
    for cue in sorted(_cue_words(field), key=len, reverse=True):
        at = text.find(cue)
        if at < 0:
            continue
        start = _CUE_FILLER.match(text, at + len(cue)).end()
        stop = re.search(r"[，,。;；]", text[start:])
        end = start + stop.start() if stop else len(text)
        raw = text[start:end].strip()
        if raw and not L.is_question(raw) and check("text", raw, **field.validator_options()).ok:
            return [_Candidate("text", raw, start, start + len(raw), field.key)]
    return []


# Words between a cue and its value: "地址的话就寄到江苏…", "地址是：…".
_CUE_FILLER = re.compile(r"(?:的话|就是|就|是|叫|为|在|寄到|寄往|:|：|,|，|\s)*")
_HAN_RUN = re.compile(r"[\u4e00-\u9fff·]+")


def _bare_names(business: Business, text: str, kept: list[_Candidate]) -> list[_Candidate]:
    """Names typed without a cue, set apart from other values ("330122… 张伟")."""
    edges = {0, len(text)}
    edges |= {c.start for c in kept if c.type in _STRONG} | {c.end for c in kept if c.type in _STRONG}
    cue_words = {w for f in business.fields for w in (*_cue_words(f), *_label_names(f.label))}
    cue_words |= {business.name, *business.keywords}
    found = []
    for m in _HAN_RUN.finditer(text):
        start, end, run = m.start(), m.end(), m.group()
        if any(start < c.end and c.start < end for c in kept):
            continue
        apart = all(
            edge in edges or _SEPARATORS.match(text[edge - 1 if edge == start else edge])
            for edge in (start, end)
        )
        if (apart and len(run) <= 4 and not any(w in run for w in cue_words)
                and not L.is_conversational(run) and not L.is_question(run)
                and check("name", run).ok):
            found.append(_Candidate("name", run, start, end))
    return found


def _rest_as_text(business: Business, text: str, kept: list[_Candidate]) -> list[_Candidate]:
    """In a list of values ("王芳，3205…，工商银行，江苏省苏州市…"), the longest clause
    nothing else took is the free-text value, when one free-text field can take it."""
    free = [f for f in business.fields if f.type == "text" and not f.pattern]
    if len(free) != 1 or any(c.field == free[0].key for c in kept):
        return []
    field = free[0]
    clauses = [m for m in _CLAUSE.finditer(text)
               if not any(m.start() < c.end and c.start < m.end() for c in kept)]
    for m in sorted(clauses, key=lambda m: len(m.group()), reverse=True):
        raw = m.group()
        other = _mentioned_field(business, raw)
        if (len(raw) >= _REST_MIN and not _LONG_RUN.search(raw) and other in (None, field.key)
                and not L.is_question(raw) and not L.is_conversational(raw)
                and not L.is_refusal(raw) and check("text", raw, **field.validator_options()).ok):
            return [_Candidate("text", raw, m.start(), m.end(), field.key)]
        break
    return []


_CLAUSE = re.compile(r"[^\s,，。;；、]+")
_REST_MIN = 5
_LONG_RUN = re.compile(r"\d{7,}")  # a mistyped ID or phone is not an address


def _strip_cue(field: FieldDef, text: str) -> str:
    """The answer without a leading cue ("地址是…" → "…")."""
    for cue in sorted(_cue_words(field), key=len, reverse=True):
        if text.startswith(cue):
            return text[_CUE_FILLER.match(text, len(cue)).end():].strip() or text
    return text


def _assign(
    business: Business, candidates: list[_Candidate], text: str, awaited: str | None
) -> dict[str, str]:
    """Give each candidate to the field its type, cues and labels point to."""
    out: dict[str, str] = {}
    fields = list(business.fields)
    for c in candidates:
        if c.field:
            out.setdefault(c.field, c.raw)
    loose = [c for c in candidates if not c.field]
    # Pairs a cue or label ties together, closest first; then the rest in order.
    pairs = sorted(
        (d, i, f.key)
        for i, c in enumerate(loose)
        for f in fields
        if _accepts(f, c) and (d := _cue_distance(f, c, text)) is not None
    )
    taken: set[int] = set()
    for _, i, key in pairs:
        if i not in taken and key not in out:
            out[key] = loose[i].raw
            taken.add(i)
    leftovers = [c for i, c in enumerate(loose) if i not in taken]
    awaited_field = business.field(awaited) if awaited in business.field_keys else None
    for c in leftovers:
        if (c.type == "number" and awaited_field is not None and awaited not in out
                and awaited_field.type in _NUMERIC):
            out[awaited] = c.raw  # the answer to the question asked, valid or not
            continue
        takers = [f for f in fields if _accepts(f, c) and f.key not in out]
        if not takers:
            continue
        if c.type in _NUMERIC or (c.type == "name" and len(takers) > 1):
            # Bare numbers (and names, if several fields could take one) only go
            # to the awaited field: too ambiguous otherwise.
            takers = [f for f in takers if f.key == awaited]
            if not takers:
                continue
        takers.sort(key=lambda f: (f.key != awaited, fields.index(f)))
        out[takers[0].key] = c.raw
    return out


def _accepts(field: FieldDef, c: _Candidate) -> bool:
    if c.type == "number":
        return field.type in _NUMERIC and check(field.type, c.raw, **field.validator_options()).ok
    return field.type == c.type


@lru_cache(maxsize=1024)
def _cue_words(field: FieldDef) -> tuple[str, ...]:
    label = field.label
    short = label.removesuffix("号码").removesuffix("号").removesuffix("名称")
    return tuple(w for w in dict.fromkeys((label, short, *field.cues)) if w)


def _cue_distance(field: FieldDef, c: _Candidate, text: str) -> int | None:
    """How close a cue of ``field`` stands to the candidate, or None."""
    best: int | None = None
    for cue in _cue_words(field):
        window = text[max(0, c.start - _CUE_BEFORE - len(cue)):c.start]
        at = window.rfind(cue)
        if at >= 0:
            d = len(window) - at - len(cue)
            best = d if best is None else min(best, d)
        after = text[c.end:c.end + _CUE_AFTER + len(cue)]
        at = after.find(cue)
        if at >= 0 and at <= _CUE_AFTER:
            # A cue after the value ("60岁") ties less than one before it ("到2023年").
            d = at + _AFTER_PENALTY
            best = d if best is None else min(best, d)
    return best


@lru_cache(maxsize=1024)
def _label_names(label: str) -> frozenset[str]:
    """A label and its usual short forms: 新手机号码 → 手机号码, 手机号, 新手机, 手机."""
    names = {label}
    for prefix in ("新", "原", "现"):
        names |= {n.removeprefix(prefix) for n in names}
    for suffix in ("号码", "名称"):
        names |= {n.removesuffix(suffix) for n in names}
    names |= {n + "号" for n in names if label.endswith("号码")}
    return frozenset(n for n in names if len(n) >= 2)


def _mentioned_field(business: Business, text: str) -> str | None:
    """The field whose label (or a shortened label) the text names, longest first."""
    best: tuple[int, str] | None = None
    for f in business.fields:
        for n in _label_names(f.label):
            if n in text and (best is None or len(n) > best[0]):
                best = (len(n), f.key)
    return best[1] if best else None


# What citizens call a field of a type, besides its label and cues.
_TYPE_WORDS = {
    "name": ("名字", "姓名", "名"), "idcard": ("身份证号", "身份证"), "phone": ("手机号", "手机", "电话"),
    "bank_card": ("银行卡号", "银行卡", "卡号"), "date": ("日期", "时间"), "year": ("年份",),
}


def _field_words(field: FieldDef) -> tuple[str, ...]:
    return (*_cue_words(field), *_TYPE_WORDS.get(field.type, ()))


def _named_field(business: Business, text: str) -> str | None:
    """The field a correction names by a cue or a common word ("地址写错了", "名字不对"),
    when only one field answers to the longest such word."""
    best: dict[int, set[str]] = {}
    for f in business.fields:
        for w in _field_words(f):
            if len(w) >= 2 and w in text:
                best.setdefault(len(w), set()).add(f.key)
    if not best:
        return None
    keys = best[max(best)]
    return next(iter(keys)) if len(keys) == 1 else None


def _after_label(business: Business, key: str | None, text: str) -> str:
    """The part of the text after the named label (where the new value is)."""
    if key is None:
        return text
    f = business.field(key)
    for n in sorted(_field_words(f), key=len, reverse=True):
        at = text.find(n)
        if at >= 0:
            rest = text[at + len(n):]
            return rest.lstrip("是为成：:，, ").strip() or ""
    return text


_NAME_CUES = re.compile(r"我叫|我是|姓名|名字|本人")


def _whole_message_fits(field: FieldDef, text: str) -> bool:
    """Whether the whole message can be the answer for ``field``."""
    if L.is_conversational(text) or L.NON_ANSWER.search(text):
        return False
    if field.type == "name" and (L.is_question(text) or _NAME_CUES.search(text)
                                 or (len(text) > _BARE_NAME_MAX and "·" not in text)):
        return False
    if field.type == "text" and not field.pattern and (L.is_question(text) or L.is_cancel(text)):
        return False
    return check(field.type, text, **field.validator_options()).ok


def _mentioned_step(business: Business, text: str) -> str | None:
    """The step whose label the text names ("修改人脸照片" → face_photo), longest first."""
    best: tuple[int, str] | None = None
    for step in business.steps:
        for n in _label_names(step.label):
            if n in text and (best is None or len(n) > best[0]):
                best = (len(n), step.id)
    return best[1] if best else None


def _first(view: SessionView) -> str | None:
    pending = view.pending_keys()
    return pending[0] if pending else None


def _within_toolset(calls: list[ToolCall], offered: frozenset[str]) -> list[ToolCall]:
    """The calls the toolset allows. Values given with the request that starts a
    business ("从杭州转到苏州") follow ``match_business``: they belong to the
    business it starts, where the controller checks them again; so does a
    ``match_business`` after ``cancel_flow`` ("不办这个了，帮我查养老金"), and a
    ``confirm_submit`` after ``skip_step`` ("确认，不用照片")."""
    kept: list[ToolCall] = []
    for c in calls:
        after = {k.name for k in kept}
        if (c.name in offered or (T.MATCH_BUSINESS in after and c.name == T.PROVIDE_FIELD)
                or (T.CANCEL_FLOW in after and c.name == T.MATCH_BUSINESS)
                or (T.SKIP_STEP in after and c.name == T.CONFIRM_SUBMIT)):
            kept.append(c)
    return kept


def _cancel() -> ToolCall:
    return ToolCall(name=T.CANCEL_FLOW)


def _switch(bid: str) -> ToolCall:
    return ToolCall(name=T.SWITCH_BUSINESS, arguments={"business_id": bid})


def _explain(key: str, topic: str) -> ToolCall:
    return ToolCall(name=T.EXPLAIN_FIELD, arguments={"field_key": key, "topic": topic})


def _small_talk(kind: str) -> ToolCall:
    return ToolCall(name=T.SMALL_TALK, arguments={"kind": kind})


def _redo(step_id: str) -> ToolCall:
    return ToolCall(name=T.REDO_STEP, arguments={"step_id": step_id})


def _match(bid: str) -> ToolCall:
    return ToolCall(name=T.MATCH_BUSINESS, arguments={"business_id": bid})


def _answer(text: str, suggested: str | None) -> ToolCall:
    return ToolCall(
        name=T.ANSWER_QUESTION,
        arguments={"question": text, "suggested_business_id": suggested},
    )
