"""Offline slot extraction for consultations (``type: consult``), across every theme.

The rule engine's share of a consultation turn: find the slot values a message
holds, the slots it declines ("不想说", "先空着"), and a question in it. Each
clause of the message is read on its own:

- a phrase a slot lists under ``aliases`` ("没孩子" → 0); a short one ("没有")
  only for a slot of the theme being asked;
- typed values by the validators' extractors: options of enum and multi_enum
  slots, amounts of bucket slots, numbers of integer and number slots, given to
  the slot whose cue stands in the clause or whose unit follows the number
  ("40岁"), else to the one such slot the current theme asks;
- free text after a text slot's cue ("我是做IT的", "有高血压");
- what is left of a clause answers the text slot the current theme asks.

Values the engine reports are raw text: the flow validates and normalises them
(so a correction or an invalid value is judged there, not here).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from si_agent.config.model import Business, FieldDef
from si_agent.engine import lexicon as L
from si_agent.flow.consult import current_theme, open_slots
from si_agent.session.model import FieldState
from si_agent.validators import check, extract

SKIP = re.compile(r"不清楚|不知道|先空着|空着|不想说|不方便说|不方便透露|保密|跳过|说不好|不好说"
                  r"|没想好|不告诉|暂时不说|不确定|不想填|不想回答|下一个")
_CLAUSE = re.compile(r"[^，,。；;！!？?\s]+[？?]?")
_FILLER = re.compile(r"^(?:的话|就是|是|为|叫|改成|改为|换成|应该是|其实是|大概|大约|[:：])+")
_TAIL = re.compile(r"(?:的|工作|吧|呢|啊|哈)+$")
_ASKS = re.compile(r"[？?]|吗|什么|啥|怎么|咋|区别|哪|为什么|为啥|是否|能不能|可不可以|如何|多少钱|有用")
_STOP = re.compile(r"不(?:咨询|问|聊|看)了|不想(?:咨询|问|聊)了|结束咨询|先这样吧")
_SHORT_ALIAS = 2  # an alias this short ("没有", "是的") counts only for an asked slot
_DIRECT_ANSWER = 6  # a clause this short may be a bare answer to the question asked
_NUMERIC = ("integer", "number", "bucket")


@dataclass
class Extraction:
    """What one message says about the slots."""

    values: dict[str, str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    question: bool = False
    guessed: bool = False  # free text taken as the asked slot's answer (a model may do better)


def extract_slots(business: Business, fields: dict[str, FieldState], text: str, *,
                  guess: bool = True) -> Extraction:
    """The slots ``text`` speaks of; with ``guess``, unclaimed words answer the asked
    free-text slot."""
    asked = _asked(business, fields)
    out = Extraction()
    leftovers: list[str] = []
    declines: list[str] = []
    named: str | None = None  # a slot a clause named without its value
    for clause in _CLAUSE.findall(text):
        if asks(clause) and not _whole_alias(business, clause, asked):
            out.question = True  # answered as a question; its words are not values
            continue
        if SKIP.search(clause):
            declines.append(clause)
            continue
        found = _clause_values(business, clause, asked, out.values, named)
        named = next((f.key for f in business.fields if f.key not in found
                      and f.type in _NUMERIC and _cued(f, clause)), None)
        if found:
            out.values.update(found)
        elif not (L.is_conversational(clause) or L.is_greeting(clause)
                  or L.is_preamble_only(clause) or L.RESUME.fullmatch(L.bare(clause))):
            leftovers.append(clause)
    free = [k for k in asked if business.field(k).type == "text" and k not in out.values]
    if leftovers and free and guess:
        out.values[free[0]] = "，".join(leftovers)
        out.guessed = True
    for clause in declines:
        targets = [f.key for f in business.fields if _names(f, clause)] or asked
        out.skipped += [k for k in targets if k not in out.values and k not in out.skipped]
    return out


def _asked(business: Business, fields: dict[str, FieldState]) -> list[str]:
    """The open slots of the current theme: what the last reply asked for."""
    theme = current_theme(business, fields)
    return [s.key for s in open_slots(theme, fields)] if theme else []


def _whole_alias(business: Business, clause: str, asked: list[str]) -> bool:
    """"没有" answering an asked slot is an answer, though it reads like "有没有"."""
    bare = L.bare(clause)
    return any(bare in option.aliases for k in asked for option in business.field(k).aliases)


def stops(business: Business, fields: dict[str, FieldState], text: str) -> bool:
    """Ending the consultation ("不咨询了", "取消"), unless it answers the slot asked."""
    return bool(L.is_cancel(text) or L.abandons(text) or _STOP.search(text)) and not (
        _whole_alias(business, text, _asked(business, fields)))


def asks(clause: str) -> bool:
    """A question, not an answer that reads like one ("想了解年金险", "暂时没有")."""
    return L.is_question(clause) and bool(_ASKS.search(clause))


def _names(f: FieldDef, clause: str) -> bool:
    return f.label in clause or any(c in clause for c in f.cues if len(c) >= 2)


def _clause_values(business: Business, clause: str, asked: list[str],
                   taken: dict[str, str], named: str | None = None) -> dict[str, str]:
    values: dict[str, str] = {}
    direct = len(clause) <= _DIRECT_ANSWER
    rest = clause
    for f in business.fields:
        if f.key in taken or f.key in values:
            continue
        alias = _alias(f, clause, f.key in asked)
        if alias is not None:
            values[f.key], phrase = alias
            rest = rest.replace(phrase, " " * len(phrase))
    for f in business.fields:
        if f.key in taken or f.key in values or f.type not in ("enum", "multi_enum"):
            continue
        found = extract("enum", clause, options=[(o.value, o.aliases) for o in f.options])
        sure = [x for x in found if len(x.raw) > _SHORT_ALIAS or f.type == "multi_enum"]
        if sure or (found and (f.key in asked and direct or _cued(f, clause))):
            values[f.key] = "、".join(dict.fromkeys(x.value for x in (sure or found)))
            for x in found:
                rest = rest.replace(x.raw, " " * len(x.raw))
    values.update(_numbers(business, rest, asked, {**taken, **values}, named))
    for f in business.fields:
        if f.type != "text" or f.key in taken or f.key in values:
            continue
        value = _after_cue(f, clause)
        if value is not None and (f.key in asked or len(value) >= 2):
            values[f.key] = value
    return values


def _alias(f: FieldDef, clause: str, asked: bool) -> tuple[str, str] | None:
    """(value, phrase) for a phrase of ``f.aliases`` in the clause: a short one ("没有",
    "丁克") for an asked slot, a longer one anywhere ("没孩子"; free text only when
    asked or cued)."""
    anywhere = asked or f.type != "text" or _cued(f, clause)
    for option in f.aliases:
        for phrase in sorted(option.aliases, key=len, reverse=True):
            if phrase in clause and (asked or (len(phrase) > _SHORT_ALIAS and anywhere)):
                return option.value, phrase
    return None


def _cued(f: FieldDef, clause: str) -> bool:
    return any(c in clause for c in (f.label, *f.cues))


def _numbers(business: Business, clause: str, asked: list[str],
             taken: dict[str, str], named: str | None) -> dict[str, str]:
    """Numbers and amounts, each given to the slot named just before ("年收入说错了，
    应该是25万"), or whose unit follows it ("40岁", a unit no other slot has), or
    whose cue stands closest."""
    slots = [f for f in business.fields if f.type in _NUMERIC and f.key not in taken]
    if not slots:
        return {}
    units = Counter(f.unit for f in slots if f.unit)
    found = extract("number", clause)
    values: dict[str, str] = {}
    invalid: dict[str, str] = {}
    for x in found:
        free = [f for f in slots if f.key not in values]
        unit = [f for f in free if f.unit and units[f.unit] == 1
                and clause.startswith(f.unit, x.end)]
        cued = sorted(((_distance(f, clause, x.start, x.end), f) for f in free
                       if _cued(f, clause)), key=lambda p: p[0])
        if named in [f.key for f in free] and not cued:
            target = business.field(named)
        elif unit:
            target = unit[0]
        elif cued:
            target = cued[0][1]
        else:
            open_asked = [f for f in slots if f.key in asked and f.key not in values]
            if len(open_asked) != 1:
                continue
            target = open_asked[0]
        raw = _span_for(target, clause, x.start, x.end)
        if check(target.type, raw, **target.validator_options()).ok:
            values[target.key] = raw
        elif target.key in asked:  # "200岁": said, and told why it cannot be taken
            invalid.setdefault(target.key, raw)
    return {**{k: v for k, v in invalid.items() if k not in values}, **values}


def _distance(f: FieldDef, clause: str, start: int, end: int) -> int:
    best = len(clause)
    for cue in (f.label, *f.cues):
        at = clause.find(cue)
        while at >= 0:
            best = min(best, start - (at + len(cue)) if at < start else at - end)
            at = clause.find(cue, at + 1)
    return abs(best)


def _span_for(f: FieldDef, clause: str, start: int, end: int) -> str:
    """The words around a number that belong to its value: "不到10万", "月薪8000"."""
    if f.type == "bucket":
        return clause  # hedges and "月薪" around the amount change its range
    if f.unit and clause.startswith(f.unit, end):
        end += len(f.unit)
    return clause[start:end]


def _after_cue(f: FieldDef, clause: str) -> str | None:
    for cue in sorted(f.cues, key=len, reverse=True):
        at = clause.find(cue)
        if at < 0:
            continue
        after = _TAIL.sub("", _FILLER.sub("", clause[at + len(cue):]).strip())
        return after if len(after) >= 2 else clause
    return None
