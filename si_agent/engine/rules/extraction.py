"""Field values in a message: candidates found by the validators' extractors,
assigned to fields by type, cue words and labels.

``values_for`` is the entry point: it drops what the sentence takes back ("不是
杭州", "8000，不对，是8500"), collects candidates (typed spans, values after a
cue, bare names and a leftover clause in a list of values), gives each to the
field its type and cues point to, and prefers the whole answer to the awaited
field over a piece of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from si_agent.config.model import Business, FieldDef
from si_agent.core.decision import ToolCall
from si_agent.engine import cues
from si_agent.engine import lexicon as L
from si_agent.engine.bounds import first_disjoint
from si_agent.engine.quantities import is_per_period, may_measure, measured, months_as_years
from si_agent.engine.rules.calls import modify_call
from si_agent.engine.rules.mentions import (
    after_filler,
    after_label,
    cue_words,
    label_names,
    mentioned_field,
    strip_cue,
    whole_message_fits,
)
from si_agent.engine.rules.polarity import blank_negated
from si_agent.validators import check, extract

_CUE_BEFORE = 8  # characters between a cue and the value it introduces
_CUE_AFTER = 2  # characters between a value and a cue that follows it ("60岁")
_AFTER_PENALTY = 3
_NUMERIC = ("integer", "number")
_STRONG = ("idcard", "phone", "bank_card")
_CLAUSES = re.compile(r"[，,。；;！!？?\s]+")
_DENIED = re.compile(r"(?:不|毋|唔|伓)是|不要|别填")  # the value taken back, not the new one
_UNTIL_NOW = re.compile(r"(至|到)(今|现在|目前|当前)(?!年)")
_SEPARATORS = re.compile(r"[\s,，。;；、]+")
# "不是杭州" in "参保地不是杭州是上海" or "李四不是李思": a value taken back.
_NOT_THIS = re.compile(r"不是(?!不是)[^，,。；;\s是]{1,12}?(?=[，,。；;\s]|是|$)")
# "8000，不对，是8500": what follows replaces what came before. Tried only where a
# run of separators starts (the lookbehind): linear on a flood of "，", not quadratic.
_SELF_FIX = re.compile(r"(?<![，,。\s])[，,。\s]*(?:不对|说错了|错了|哦不|更正一下|更正)[，,。\s]*(?:应该是|是)?")
_HAN_RUN = re.compile(r"[\u4e00-\u9fff·]+")
_CLAUSE = re.compile(r"[^\s,，。;；、]+")
_REST_MIN = 5
_LONG_RUN = re.compile(r"\d{7,}")  # a mistyped ID or phone is not an address


@dataclass(frozen=True)
class Candidate:
    """A piece of the message that may be a field's value."""

    type: str
    raw: str
    start: int
    end: int
    field: str | None = None  # set when only one field can take it (enum options)


def values_for(
    business: Business, awaited: str | None, text: str, *, whole: bool
) -> dict[str, str]:
    """Field values stated in ``text``: ``{field_key: raw text}``.

    A value the sentence itself takes back is dropped: "参保地不是杭州是上海",
    "名字是李四不是李思", "社平工资8000，不对，是8500".
    """
    text = _UNTIL_NOW.sub(r"\1今年", text)
    text = _NOT_THIS.sub(lambda m: " " * len(m.group()), text)
    text = blank_negated(business, text)  # "不要最低档", "工行太远…还是建行", "不去杭州了"
    fix = _SELF_FIX.search(text)
    if fix and text[: fix.start()].strip() and text[fix.end():].strip():
        before = values_for(business, awaited, text[: fix.start()], whole=False)
        last = list(before)[-1] if before else awaited
        after = values_for(business, last, text[fix.end():], whole=True)
        return {**before, **after}
    candidates = _candidates(business, text, awaited)
    values = _assign(business, candidates, text, awaited)
    if whole and awaited in business.field_keys and (
            set(values) <= {awaited} or _pieces_only(business.field(awaited), candidates)):
        # The whole answer to the question asked beats a piece of it: "宋国庆" asked for a
        # name is the name, not the date 国庆.
        field = business.field(awaited)
        answer = strip_cue(field, text).strip(" ，,。;；")
        answer = months_as_years(field, answer) or answer  # "两百四十个月" of 缴费年限: 20
        if whole_message_fits(field, answer):
            return {awaited: answer}
    return {k: months_as_years(business.field(k), v) or v if k in business.field_keys else v
            for k, v in values.items()}


def _pieces_only(field: FieldDef, candidates: list[Candidate]) -> bool:
    """Whether the other values found are pieces of a name asked for: a whole message the
    name check accepts holds nothing else ("宋国庆" is no date 国庆). Other types check
    more loosely (a date field accepts "2025年6月30日，协商解除"): their pieces stay."""
    return field.type == "name" and not any(c.type in _STRONG for c in candidates)


def has_strong_values(business: Business, text: str) -> bool:
    """Whether ``text`` holds an ID number, a phone or a bank card number."""
    return any(c.type in _STRONG for c in _candidates(business, text))


def _candidates(business: Business, text: str,
                awaited: str | None = None) -> list[Candidate]:
    """The values ``text`` holds, by position; no two overlap."""
    found: list[Candidate] = []
    done_types: set[str] = set()
    for f in business.fields:
        if f.type in ("enum", "multi_enum", "bucket"):  # typed by the field's own options
            kind = "bucket" if f.type == "bucket" else "enum"
            chosen = [Candidate(f.type, x.raw, x.start, x.end, f.key)
                      for x in extract(kind, text, **f.validator_options())]
            if not chosen and f.ineligible:  # "我是自己辞职的": the flow says the policy
                chosen = [Candidate(f.type, x.raw, x.start, x.end, f.key) for x in extract(
                    "enum", text, options=[(i.value, i.aliases) for i in f.ineligible])]
            found += chosen
            continue
        if f.type == "text" and f.pattern:
            found += [Candidate("text", x.raw, x.start, x.end, f.key)
                      for x in extract("text", text, pattern=f.pattern)]
            continue
        kind = "number" if f.type in _NUMERIC else f.type
        if kind in done_types or kind == "text":
            continue
        done_types.add(kind)
        found += [Candidate(kind, x.raw, x.start, x.end) for x in extract(kind, text)
                  if kind != "number" or not is_per_period(text, x.start, x.end)]
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


def _after_cues(field: FieldDef, text: str) -> list[Candidate]:
    """A free-text value after one of the field's cues ("寄到浙江省…")."""
    for cue in sorted(cue_words(field), key=len, reverse=True):
        at = text.find(cue)
        if at < 0:
            continue
        start = after_filler(text, at + len(cue))
        stop = re.search(r"[，,。;；]", text[start:])
        end = start + stop.start() if stop else len(text)
        raw = text[start:end].strip()
        if raw and not L.is_question(raw) and check("text", raw, **field.validator_options()).ok:
            return [Candidate("text", raw, start, start + len(raw), field.key)]
    return []


def _bare_names(business: Business, text: str, kept: list[Candidate]) -> list[Candidate]:
    """Names typed without a cue, set apart from other values ("330122… 张伟")."""
    edges = {0, len(text)}
    strong = [c for c in kept if c.type in _STRONG]
    edges |= {c.start for c in strong} | {c.end for c in strong}
    words = {w for f in business.fields for w in (*cue_words(f), *label_names(f.label))}
    words |= {business.name, *business.keywords}
    found = []
    for m in _HAN_RUN.finditer(text):
        start, end, run = m.start(), m.end(), m.group()
        if any(start < c.end and c.start < end for c in kept):
            continue
        apart = all(
            edge in edges or _SEPARATORS.match(text[edge - 1 if edge == start else edge])
            for edge in (start, end)
        )
        if (apart and len(run) <= 4 and not any(w in run for w in words)
                and not L.is_conversational(run) and not L.is_question(run)
                and check("name", run).ok):
            found.append(Candidate("name", run, start, end))
    return found


def _rest_as_text(business: Business, text: str, kept: list[Candidate]) -> list[Candidate]:
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
        other = mentioned_field(business, raw)
        if (len(raw) >= _REST_MIN and not _LONG_RUN.search(raw) and other in (None, field.key)
                and not L.is_question(raw) and not L.is_conversational(raw)
                and not L.is_refusal(raw) and check("text", raw, **field.validator_options()).ok):
            return [Candidate("text", raw, m.start(), m.end(), field.key)]
        break
    return []


def _assign(
    business: Business, candidates: list[Candidate], text: str, awaited: str | None
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
        if _accepts(f, c) and _measures(f, c, text)
        and (d := _cue_distance(f, c, text)) is not None
    )
    taken: set[int] = set()
    for _, i, key in pairs:
        if i not in taken and key not in out:
            out[key] = loose[i].raw
            taken.add(i)
    leftovers = [c for i, c in enumerate(loose) if i not in taken]
    awaited_field = business.field(awaited) if awaited in business.field_keys else None
    for c in leftovers:
        if (c.type == "number" and awaited_field is not None and awaited_field.key not in out
                and awaited_field.type in _NUMERIC
                and may_measure(awaited_field, measured(text, c.start, c.end))):
            out[awaited_field.key] = c.raw  # the answer to the question asked, valid or not
            continue
        takers = [f for f in fields if _accepts(f, c) and f.key not in out
                  and _measures(f, c, text)]
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


def _measures(field: FieldDef, c: Candidate, text: str) -> bool:
    """Whether a number's unit may measure what ``field`` does (no age for 缴费年限)."""
    return c.type != "number" or may_measure(field, measured(text, c.start, c.end))


def _accepts(field: FieldDef, c: Candidate) -> bool:
    if c.type == "number":
        return field.type in _NUMERIC and check(field.type, c.raw, **field.validator_options()).ok
    return field.type == c.type


def _cue_distance(field: FieldDef, c: Candidate, text: str) -> int | None:
    """How close a cue of ``field`` stands to the candidate, or None."""
    best: int | None = None
    for cue in cue_words(field):
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


def modify_call_for(business: Business, key: str, text: str) -> ToolCall:
    """``modify_info`` for ``key``, with the new value if the text gives one."""
    after = L.strip_filler(after_label(business, key, text))
    swapped = cues.not_but(text)  # the label may stand in the new value's clause ("转出")
    if swapped is not None:  # "转入城市怎么写成苏州了？我要转的是无锡": the new one
        after = swapped[2]
    elif cues.is_correction(after) and not cues.before_frame(after).strip(" ，,。还是"):
        after = cues.corrected_value(after) or ""  # "名字还是改回张伟吧"
    return modify_call(key, last_clause_value(business, key, after) if after else None)


def last_clause_value(business: Business, key: str, text: str) -> Any:
    """The value of ``key`` that ``text`` gives as a whole, or else in its last clause
    that is one ("最后那个字是君，黄建君" → 黄建君: the words before describe it)."""
    value = values_for(business, key, text, whole=True).get(key)
    if value is not None:
        return value
    clauses = [c for c in _CLAUSES.split(text) if c.strip() and not _DENIED.match(c)]
    for clause in reversed(clauses[1:] if len(clauses) > 1 else clauses):
        value = values_for(business, key, L.strip_filler(clause), whole=True).get(key)
        if value is not None:
            return value
    return None
