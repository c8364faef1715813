"""The rule engine: the same tools as a model, decided by deterministic rules.

It is the offline default and the fast path in front of a model. Each rule is
conservative: when it is not sure, it asks (a suggestion, or no call, which
makes the controller ask again) rather than guesses.

Per state:
- idle/done: accept a pending suggestion ("办理"), match a business by keyword
  or by character-bigram similarity (IDF-weighted over the businesses'
  vocabularies), tell questions from requests; values in the same message are
  provided at once;
- collecting: cancel words; values found by the validators' extractors,
  assigned to fields by type, cue words and labels (so corrections such as
  "不对，转出城市是苏州" work); the whole message for the awaited field;
  questions go to ``answer_question``;
- confirming/failed: confirm, retry, modify (by label or by a value whose type
  fits one field), cancel;
- step_executing: a file path for the step's upload tool.
"""

from __future__ import annotations

import math
import unicodedata
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from si_agent.config.model import Business, FieldDef
from si_agent.engine import lexicon as L
from si_agent.engine.base import Decision, SessionView, ToolCall
from si_agent.flow import tools as T
from si_agent.validators import check, extract

MATCH_THRESHOLD = 0.75
SUGGEST_THRESHOLD = 0.45
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

    def __init__(self, catalog: Mapping[str, Business]) -> None:
        self.catalog = dict(catalog)
        self._phrases = {
            b.id: tuple(dict.fromkeys(p.lower() for p in (b.name, *b.keywords)))
            for b in self.catalog.values()
        }
        df: Counter[str] = Counter()
        for phrases in self._phrases.values():
            df.update(set().union(*(_bigrams(p) for p in phrases)))
        n = max(1, len(self.catalog))
        self._idf = {g: math.log(1 + n / c) for g, c in df.items()}

    # -- entry point ------------------------------------------------------

    def decide(self, view: SessionView, message: str, tools: list[dict]) -> Decision:
        text = unicodedata.normalize("NFKC", message).strip()
        state = view.state
        if state in ("idle", "done"):
            calls, reason = self._idle(view, text)
        elif state == "collecting":
            calls, reason = self._collecting(view, text)
        elif state in ("confirming", "failed"):
            calls, reason = self._confirming(view, text)
        elif state == "step_executing":
            calls, reason = self._step(view, text)
        else:
            calls, reason = ([ToolCall(name=T.CANCEL_FLOW)], "cancel") if L.is_cancel(text) else ([], "")
        return Decision(calls=calls, reason=reason, engine=self.name)

    # -- idle -------------------------------------------------------------

    def _idle(self, view: SessionView, text: str) -> tuple[list[ToolCall], str]:
        if view.suggestion in self.catalog and L.is_accept(text):
            return [_match(view.suggestion)], f"accepted suggestion {view.suggestion}"
        if L.is_cancel(text):
            return [ToolCall(name=T.CANCEL_FLOW)], "cancel word"
        bid, score, span, runner_up = self.match(text)
        rest = text[: span[0]] + text[span[1]:] if span else text
        question = L.is_question(rest)
        if bid and score >= MATCH_THRESHOLD and score - runner_up >= MARGIN:
            if question and not _is_request(text, rest):
                return [_answer(text, bid)], f"question about {bid} (score {score:.2f})"
            calls = [_match(bid)]
            values = self.values_for(self.catalog[bid], None, text, whole=False)
            if values:
                calls.append(ToolCall(name=T.PROVIDE_FIELD, arguments={"values": values}))
            return calls, f"matched {bid} (score {score:.2f})"
        if bid and score >= SUGGEST_THRESHOLD:
            # Not a question: only the suggestion is shown, asking to confirm the guess.
            question_text = text if question else ""
            return [_answer(question_text, bid)], f"unsure: suggest {bid} (score {score:.2f})"
        if question or len(text) > 6:
            return [_answer(text, None)], "question, no business"
        return [], "no business matched"

    def match(self, text: str) -> tuple[str | None, float, tuple[int, int] | None, float]:
        """Best business for ``text``: (id, score, matched span, runner-up score)."""
        low = text.lower()
        scores: dict[str, tuple[float, int, tuple[int, int] | None]] = {}
        grams = _bigrams(low)
        for bid, phrases in self._phrases.items():
            best: tuple[float, int, tuple[int, int] | None] = (0.0, 0, None)
            for p in phrases:
                at = low.find(p)
                if at >= 0:
                    cand = (1.0, len(p), (at, at + len(p)))
                elif _scattered(p, low):
                    cand = (SCATTERED_SCORE, len(p), None)
                else:
                    pg = _bigrams(p)
                    total = sum(self._idf.get(g, 0.0) for g in pg) or 1.0
                    cand = (sum(self._idf.get(g, 0.0) for g in pg & grams) / total, 0, None)
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

    def _collecting(self, view: SessionView, text: str) -> tuple[list[ToolCall], str]:
        business = view.business
        assert business is not None
        if L.is_cancel(text):
            return [ToolCall(name=T.CANCEL_FLOW)], "cancel word"
        values = self.values_for(business, view.awaiting or _first(view), text, whole=True)
        if values:
            return [ToolCall(name=T.PROVIDE_FIELD, arguments={"values": values})], "values found"
        if L.is_question(text) or bare_conversational(text):
            return [_answer(text, None)], "question while collecting"
        awaited = view.awaiting if view.awaiting in business.field_keys else _first(view)
        if awaited:
            return [ToolCall(name=T.PROVIDE_FIELD, arguments={"values": {awaited: text}})], (
                "the message as the awaited field's value"
            )
        return [], "nothing recognised"

    def values_for(
        self, business: Business, awaited: str | None, text: str, *, whole: bool
    ) -> dict[str, str]:
        """Field values stated in ``text``: ``{field_key: raw text}``."""
        fields = {f.key: f for f in business.fields}
        if whole and awaited in fields and _whole_message_fits(fields[awaited], text):
            return {awaited: text}
        candidates = self._candidates(business, text)
        return _assign(business, candidates, text, awaited)

    def _candidates(self, business: Business, text: str) -> list[_Candidate]:
        found: list[_Candidate] = []
        done_types: set[str] = set()
        for f in business.fields:
            if f.type == "enum":
                found += [_Candidate("enum", x.raw, x.start, x.end, f.key)
                          for x in extract("enum", text, **f.validator_options())]
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
        # Longer, more specific spans first; drop anything overlapping a kept span.
        priority = {"idcard": 0, "bank_card": 1, "phone": 2, "text": 3, "date": 4, "enum": 5,
                    "city": 6, "name": 7, "year": 8, "number": 9}
        kept: list[_Candidate] = []
        for c in sorted(found, key=lambda c: (priority.get(c.type, 10), -(c.end - c.start))):
            if not any(c.start < k.end and k.start < c.end for k in kept):
                kept.append(c)
        return sorted(kept, key=lambda c: c.start)

    # -- confirming / failed ----------------------------------------------

    def _confirming(self, view: SessionView, text: str) -> tuple[list[ToolCall], str]:
        business = view.business
        assert business is not None
        if L.is_cancel(text):
            return [ToolCall(name=T.CANCEL_FLOW)], "cancel word"
        if view.state == "failed" and (L.is_retry(text) or L.is_confirm(text)):
            return [ToolCall(name=T.RETRY_SUBMIT)], "retry word"
        target = _mentioned_field(business, text)
        if target or L.wants_modify(text):
            values = self.values_for(business, target, _after_label(business, target, text),
                                     whole=bool(target))
            key = target or (next(iter(values)) if len(values) == 1 else None)
            if key:
                args = {"field_key": key}
                if key in values:
                    args["value"] = values[key]
                return [ToolCall(name=T.MODIFY_INFO, arguments=args)], f"modify {key}"
            return [], "modify, but which field is unclear"
        if view.state == "confirming" and L.is_confirm(text):
            return [ToolCall(name=T.CONFIRM_SUBMIT)], "confirm word"
        if L.is_question(text):
            return [_answer(text, None)], "question"
        values = self.values_for(business, None, text, whole=False)
        if len(values) == 1:
            key, value = next(iter(values.items()))
            return [ToolCall(name=T.MODIFY_INFO, arguments={"field_key": key, "value": value})], (
                f"a value that fits only {key}"
            )
        return [], "not understood"

    # -- steps -------------------------------------------------------------

    def _step(self, view: SessionView, text: str) -> tuple[list[ToolCall], str]:
        if L.is_cancel(text):
            return [ToolCall(name=T.CANCEL_FLOW)], "cancel word"
        path = L.FILE_PATH.search(text)
        if path and view.step is not None:
            return [ToolCall(name=T.step_tool_name(view.step), arguments={"file": path.group(0)})], (
                "a file for the step"
            )
        if L.is_question(text) or len(text) > 6:
            return [_answer(text, None)], "question during a step"
        return [], "waiting for the step's upload"


# -- assignment of candidates to fields -------------------------------------------


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
    for c in leftovers:
        takers = [f for f in fields if _accepts(f, c) and f.key not in out]
        if not takers:
            continue
        if len(takers) > 1 and c.type in _NUMERIC + ("name",):
            # Bare numbers and names only go to the awaited field: too ambiguous otherwise.
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


def _mentioned_field(business: Business, text: str) -> str | None:
    """The field whose label (or a shortened label) the text names, longest first."""
    best: tuple[int, str] | None = None
    for f in business.fields:
        label = f.label
        names = {label, label.removesuffix("号码").removesuffix("号"), label.removesuffix("名称")}
        for n in names:
            if len(n) >= 2 and n in text and (best is None or len(n) > best[0]):
                best = (len(n), f.key)
    return best[1] if best else None


def _after_label(business: Business, key: str | None, text: str) -> str:
    """The part of the text after the named label (where the new value is)."""
    if key is None:
        return text
    f = business.field(key)
    for n in sorted(_cue_words(f), key=len, reverse=True):
        at = text.find(n)
        if at >= 0:
            rest = text[at + len(n):]
            return rest.lstrip("是为成：:，, ").strip() or ""
    return text


def _whole_message_fits(field: FieldDef, text: str) -> bool:
    if field.type == "name" and (bare_conversational(text) or L.is_question(text)):
        return False
    if field.type == "text" and not field.pattern and (L.is_question(text) or L.is_cancel(text)):
        return False
    return check(field.type, text, **field.validator_options()).ok


def bare_conversational(text: str) -> bool:
    return L.bare(text) in L.CONVERSATIONAL


def _is_request(text: str, rest: str) -> bool:
    """A request to act, even though phrased with a question word ("能帮我办…吗")."""
    asks_how = L.QUESTION.search(rest.replace("吗", "").replace("？", "").replace("?", ""))
    return L.has_intent(text) and not asks_how


def _first(view: SessionView) -> str | None:
    pending = view.pending_keys()
    return pending[0] if pending else None


def _match(bid: str) -> ToolCall:
    return ToolCall(name=T.MATCH_BUSINESS, arguments={"business_id": bid})


def _answer(text: str, suggested: str | None) -> ToolCall:
    return ToolCall(
        name=T.ANSWER_QUESTION,
        arguments={"question": text, "suggested_business_id": suggested},
    )
