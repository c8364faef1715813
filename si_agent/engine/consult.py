"""Offline slot extraction for consultations (``type: consult``), across every theme.

The rule engine's share of a consultation turn: find the slot values a message
holds, the slots it declines ("不想说", "先空着"), and a question in it. Each
clause is read on its own:

- a phrase a slot lists under ``aliases`` ("没孩子" → 0): a free-text slot's only
  as the whole answer ("没有"), others' anywhere when longer than two characters
  or when the slot is being asked;
- options of enum and multi_enum slots (several-choice slots add up across
  clauses, leave out what is refused: "不要寿险", and take "都要" as all); a short
  alias of a slot not asked counts with a word that chooses ("想看看医疗", not
  "做医疗器械销售的");
- numbers and amounts, given to the slot named just before ("年收入说错了，
  应该是25万"), whose unit follows ("40岁", "40多岁"), whose cue stands closest,
  or to the one slot of the asked theme they are a valid value for; never to a
  slot that measures something else than their unit ("一个月" is no child, "一家
  三口" no three children: ``quantities.py``);
- free text after a text slot's cue, for the slot asked ("我是做IT的"), or the
  whole clause for a slot of another theme ("有高血压"); a cue inside a chosen
  option is none ("住院报销").

Polarity (``engine.cues``): an alias or option inside a negation ("不是什么顶梁柱",
"寿险先不考虑", "哦不对") or before another person ("靠我老公") does not count; a
yes/no slot answered with someone else as the subject ("主要是我先生挣钱") is 否;
fillers ("哦对了") and correction frames ("应该是") are no answers.

A value for a slot already collected counts only as a correction: with a word
that says so ("不对", "改成", "再加一个") or the slot's label in the clause, so
"有个儿子今年5岁" does not change the citizen's own age. When the asked theme is
one free-text slot ("已有保障"), the whole answer is its value; in a mixed theme,
words nothing else took answer its free-text slot, unless they hold a number or
a word of the business (a guess, which a model may do better).

Values are reported as raw text: the flow validates and normalises them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field

from si_agent.config.model import Business, FieldDef
from si_agent.core.consult import current_theme, open_slots
from si_agent.core.state import FieldStatus
from si_agent.engine import cues
from si_agent.engine import lexicon as L
from si_agent.engine.bounds import first_clauses, first_disjoint
from si_agent.engine.quantities import (
    may_measure,
    measured,
    one_told_by_age,
    per_month,
    slot_measures,
    unit_after,
    yearly,
)
from si_agent.session.model import FieldState
from si_agent.validators import check, extract

_CLAUSE = re.compile(r"[^，,。；;！!？?\s]+[？?]?")
_FILLER = re.compile(r"^(?:的话|就是|是|为|叫|改成|改为|换成|应该是|其实是|大概|大约|[:：])+")
_TAIL = re.compile(r"(?:的|工作|吧|呢|啊|哈)+$")
# ("啥也没买过", "啥都没有": nothing, not a question)
_ASKS = re.compile(r"[？?]|吗|(?<!不是)(?<!没)(?<!不算)什么|啥(?![也都])|怎么|咋|区别|哪|为什么|是否|能不能|可不可以|如何"
                   r"|多少钱|有用")
_WANTS = re.compile(r"想|要|帮|给我|推荐|看看|规划|配置|买哪|怎么买|怎么选")
# Words for the consultation itself: a what-question with one asks for it.
# "买哪种保险合适": what suits the person asking is advice, which the consultation gives.
_CONSULTATION = re.compile(r"咨询|规划|帮我看看|帮我分析|帮我参谋|不知道|拿不准|建议|推荐|配置|方案"
                           r"|合适|适合")
_NUMBER_WORDS = re.compile(r"[0-9零〇一二两俩三四五六七八九十百千万]")
_OTHER_UNIT = re.compile(r"次|年|个?月|天|岁|元|块|万|倍|%|个")
_REFUSED = re.compile(r"(?:不要|不考虑|不需要|不买|不用|除了)$")
_CHOOSES = re.compile(r"想|需要|买|看看|了解|考虑|配置")
_ALL = re.compile(r"都要|都想|都行|全部|都了解|都看看|都可以")
_UNIT_GAP = re.compile(r"(?:多|来|左右)?")  # "40多岁": the unit after a rough number
_SHORT_ALIAS = 2  # an alias this short ("没有", "是的") counts only for an asked slot
_DIRECT_ANSWER = 6  # a clause this short may be a bare answer to the question asked
_NUMERIC = ("integer", "number", "bucket")
_AGE_PHRASE = re.compile(r"[0-9零〇一二两三四五六七八九十半]+(?:多|来)?(?:周岁|岁|个多月|个月)")
_CHOICES = ("enum", "multi_enum")


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
    theme = current_theme(business, fields)
    here = {s.key for s in theme.slots} if theme else set()
    collected = {k: st.value for k, st in fields.items() if st.status == FieldStatus.COLLECTED}
    correcting = bool(L.CORRECTION.search(text))
    text = cues.drop_frames(text)  # "应该是36": the 是 of a frame answers no yes/no slot
    text = cues.plain_negation(text)  # "我哪算啥顶梁柱": a denial, not a question
    refused = _refused(business, text)
    out = Extraction()
    answer: list[str] = []  # clauses that may answer the asked free-text slot
    declines: list[str] = []
    named: str | None = None  # a numeric slot a clause named without its value
    clauses = first_clauses(_CLAUSE.findall(text))
    for clause in clauses:
        if cues.is_filler(clause):
            continue  # "哦对了": by the way, not yes
        if asks(clause) and not _whole_alias(business, clause, asked):
            out.question = True  # answered as a question; its words are not values
            continue
        if L.DECLINE_SLOT.search(clause):
            declines.append(clause)
            continue
        found = _clause_values(business, clause, asked, out.values, named,
                               alone=len(clauses) == 1, refused=refused)
        named = next((f.key for f in business.fields if f.key not in found
                      and f.type in _NUMERIC and _cued(f, clause)), None)
        adding = bool(L.ADDITION.search(clause))
        kept = {k: v for k, v in found.items() if k not in collected or correcting
                or (k in here and not _other_cue(business, k, clause))  # "我28" again
                or business.field(k).label in clause
                or (business.field(k).type == "multi_enum" and adding)}
        for key, value in kept.items():
            kind = business.field(key).type
            if kind == "multi_enum" and adding and key in collected and key not in out.values:
                value = "、".join([*collected[key], value])  # "再加一个意外险"
            earlier = out.values.get(key)
            if earlier and kind in ("multi_enum", "text"):
                value = f"{earlier}{'、' if kind == 'multi_enum' else '，'}{value}"
            out.values[key] = value
        if not kept and not _chatter(clause):
            answer.append(clause)
    free = [k for k in asked if business.field(k).type == "text" and k not in out.values]
    if free and guess and answer:
        whole = theme is not None and len(theme.slots) == 1  # one free-text answer: all of it
        usable = answer if whole else [c for c in answer if not _NUMBER_WORDS.search(c)]
        if usable:
            out.values[free[0]] = "，".join(usable)
            out.guessed = True
    if not out.values:  # "收入不想说"; "不清楚" alone declines what was asked
        for clause in declines:
            targets = [f.key for f in business.fields if _names(f, clause)] or asked
            out.skipped += [k for k in targets if k not in out.skipped]
    else:
        out.skipped += [f.key for clause in declines for f in business.fields
                        if _names(f, clause) and f.key not in out.values]
    return out


def _other_cue(business: Business, key: str, clause: str) -> bool:
    """Whether the clause is about another slot too ("有个儿子今年5岁": 儿子)."""
    return any(_cued(f, clause) for f in business.fields if f.key != key)


def _asked(business: Business, fields: dict[str, FieldState]) -> list[str]:
    """The open slots of the current theme: what the last reply asked for."""
    theme = current_theme(business, fields)
    return [s.key for s in open_slots(theme, fields)] if theme else []


def _chatter(clause: str) -> bool:
    """A clause with nothing to store: 好的, 你好, 继续, 我想想."""
    return bool(L.is_conversational(clause) or L.is_greeting(clause)
                or L.is_preamble_only(clause) or L.RESUME.fullmatch(L.bare(clause)))


def _whole_alias(business: Business, clause: str, asked: list[str]) -> bool:
    """"没有" answering an asked slot is an answer, though it reads like "有没有"."""
    bare = L.bare(clause)
    return any(bare in option.aliases for k in asked for option in business.field(k).aliases)


def wants_advice(text: str) -> bool:
    """Naming the consultation with a wish for it ("想买保险，不知道买哪种", "帮我看看"),
    not a question about a fact ("买保险有什么坑？")."""
    return bool(L.has_intent(text) or _WANTS.search(text))


def asks_for_consultation(text: str, *, request: bool) -> bool:
    """Whether a message that names the consultation starts it.

    A request or a wish for advice starts it ("帮我规划一下保险", "想买保险，不知道买哪种",
    "我想咨询一下买什么保险合适"), unless it is a plain what/which question with no word
    for the consultation: "给孩子买什么保险好" is answered first (the general rule),
    and the consultation recommended.
    """
    if not (request or wants_advice(text)):
        return False
    return not L.is_how_question(text) or bool(_CONSULTATION.search(text))


def stops(business: Business, fields: dict[str, FieldState], text: str) -> bool:
    """Ending the consultation ("不咨询了", "取消"), unless it answers the slot asked."""
    return bool(L.is_cancel(text) or L.abandons(text) or L.STOP_CONSULT.search(text)) and not (
        _whole_alias(business, text, _asked(business, fields)))


def asks(clause: str) -> bool:
    """A question, not an answer that reads like one ("想了解年金险", "暂时没有")."""
    return L.is_question(clause) and bool(_ASKS.search(clause))


def meant_slot(business: Business, text: str) -> str | None:
    """The slot whose term a question asks about ("经济支柱是什么意思"), if it explains it."""
    text = cues.plain_negation(text)  # "我哪算啥顶梁柱" asks nothing
    if not (L.ASKS_MEANING.search(text) or asks(text)):
        return None
    return next((f.key for f in business.fields if f.help and f.label in text
                 or f.help and any(len(c) > 2 and c in text for c in f.cues)), None)


def _names(f: FieldDef, clause: str) -> bool:
    return f.label in clause or any(c in clause for c in f.cues if len(c) >= 2)


def _clause_values(business: Business, clause: str, asked: list[str],
                   taken: dict[str, str], named: str | None = None, *,
                   alone: bool = False,
                   refused: dict[str, set[str]] | None = None) -> dict[str, str]:
    values: dict[str, str] = {}
    rest = clause
    for f in business.fields:
        if f.key in taken:
            continue
        alias = _alias(f, clause, f.key in asked, alone)
        if alias is not None:
            values[f.key], phrase = alias
            rest = rest.replace(phrase, " " * len(phrase))
    for f in business.fields:
        if f.type in _CHOICES and f.key not in values:
            chosen = _choices(f, clause, f.key in asked, (refused or {}).get(f.key, set()))
            if chosen:
                values[f.key] = chosen
                for option in f.options:
                    for word in (option.value, *option.aliases):
                        rest = rest.replace(word, " " * len(word))
    for f in business.fields:  # "收入十几万": a range said in words, by its cue
        if (f.type == "bucket" and f.key not in taken and f.key not in values
                and _cued(f, clause) and check(f.type, clause, **f.validator_options()).ok):
            values[f.key] = clause
    for f in business.fields:  # "娃今年三岁": one child, its age no count
        if f.key not in taken and f.key not in values and one_told_by_age(f, clause):
            values[f.key] = "1"
            rest = _AGE_PHRASE.sub(lambda m: " " * len(m.group()), rest)
    values.update(_numbers(business, rest, asked, {**taken, **values}, named))
    for f in business.fields:  # (free text said over several clauses adds up)
        if f.type == "text" and f.key not in values:
            # A cue inside a chosen option is none: "住院报销" is a product, not health.
            value = _after_cue(f, clause, f.key in asked, rest)
            if value is not None:
                values[f.key] = value
    return values


def _alias(f: FieldDef, clause: str, asked: bool, alone: bool) -> tuple[str, str] | None:
    """(value, phrase) for a phrase of ``f.aliases`` in the clause (see the module); a
    free-text slot's only in an answer of one clause ("啥也没买过", not "身体挺好的，
    就是住过院")."""
    bare = L.bare(clause)
    for option in f.aliases:
        for phrase in sorted(option.aliases, key=len, reverse=True):
            if f.type == "text":
                if asked and (phrase == bare or (alone and phrase in clause
                                                 and len(phrase) > _SHORT_ALIAS)):
                    return option.value, phrase
            elif _affirmed(clause, phrase, _yes_no(f)) and (asked or len(phrase) > _SHORT_ALIAS
                                                or any(c in phrase for c in f.cues)):  # "俩娃"
                return option.value, phrase
    if _yes_no(f) and (asked or _cued(f, clause)) and cues.other_subject(clause):
        return "否", ""  # "主要是我先生挣钱": someone else, so not the citizen
    return None


def _affirmed(clause: str, phrase: str, yes_no: bool) -> bool:
    """Whether ``phrase`` occurs in the clause outside a negation ("哦不对", "不是
    什么顶梁柱") and not as the start of someone else ("靠我老公"); a short yes/no
    word not as the start of a longer phrase ("我是做设计的")."""
    at = clause.find(phrase)
    while at >= 0:
        end = at + len(phrase)
        if not (cues.negated(clause, at, end) or cues.possessive(clause, end)
                or (yes_no and len(phrase) <= _SHORT_ALIAS and cues.continues(clause, end))):
            return True
        at = clause.find(phrase, at + 1)
    return False


def _yes_no(f: FieldDef) -> bool:
    return f.type == "enum" and {o.value for o in f.options} == {"是", "否"}


def _choices(f: FieldDef, clause: str, asked: bool,
             refused_elsewhere: Collection[str] = ()) -> str | None:
    """The options a clause chooses ("重疾和百万医疗"), without those it (or another
    clause: "不要寿险，其他都要") refuses."""
    found = extract("enum", clause, options=_options(f))
    chosen = [x for x in found if not _refuses(clause, x.start, x.end)
              and not (_yes_no(f) and len(x.raw) <= _SHORT_ALIAS
                       and cues.continues(clause, x.end))]  # "我是做设计的"
    if f.type == "multi_enum" and not chosen and _ALL.search(clause):  # "除了年金都要"
        refused = {x.value for x in found} - {x.value for x in chosen} | set(refused_elsewhere)
        return "、".join(o.value for o in f.options if o.value not in refused)
    # A short alias of a slot not asked needs a word that chooses: "医疗" is an
    # occupation in "做医疗器械销售的", a choice in "想看看医疗".
    sure = [x for x in chosen if len(x.raw) > _SHORT_ALIAS or (
        f.type == "multi_enum" and (asked or _cued(f, clause) or _CHOOSES.search(clause)))]
    if sure or (chosen and (asked and len(clause) <= _DIRECT_ANSWER or _cued(f, clause))):
        return "、".join(dict.fromkeys(x.value for x in (sure or chosen)))
    return None


def _options(f: FieldDef) -> list[tuple[str, tuple[str, ...]]]:
    return [(o.value, o.aliases) for o in f.options]


def _refuses(clause: str, start: int, end: int) -> bool:
    """Whether the option at ``clause[start:end]`` is refused ("不要寿险", "寿险先不考虑",
    "不对") or belongs to someone else ("靠我老公")."""
    return bool(_REFUSED.search(clause[max(0, start - 3):start])
                or cues.negated(clause, start, end) or cues.possessive(clause, end))


def _refused(business: Business, text: str) -> dict[str, set[str]]:
    """The options of several-choice slots the message refuses anywhere."""
    out: dict[str, set[str]] = {}
    for f in business.fields:
        if f.type == "multi_enum":
            refused = {x.value for x in extract("enum", text, options=_options(f))
                       if _refuses(text, x.start, x.end)}
            if refused:
                out[f.key] = refused
    return out


def _cued(f: FieldDef, clause: str) -> bool:
    return any(c in clause for c in (f.label, *f.cues))


def _numbers(business: Business, clause: str, asked: list[str],
             taken: dict[str, str], named: str | None) -> dict[str, str]:
    """Numbers and amounts, each given to the slot named just before, whose unit
    follows (a unit no other slot has), whose cue stands closest, or to the one slot
    of the asked theme the number is a valid value for."""
    slots = [f for f in business.fields if f.type in _NUMERIC and f.key not in taken]
    if not slots:
        return {}
    units = Counter(f.unit for f in slots if f.unit)
    values: dict[str, str] = {}
    invalid: dict[str, str] = {}
    checked: dict[tuple[str, str], bool] = {}  # a bucket slot checks the whole clause: once

    def fits(f: FieldDef, raw: str) -> bool:
        if (f.key, raw) not in checked:
            checked[f.key, raw] = check(f.type, raw, **f.validator_options()).ok
        return checked[f.key, raw]

    cued_slots = {f.key for f in slots if _cued(f, clause)}  # the clause's, not the number's
    # The first MAX_CANDIDATES numbers of the clause (bounds.py): a flood of numbers
    # states nothing more, and each one costs a distance per cued slot.
    for x in first_disjoint(extract("number", clause)):
        # A number goes only to a slot measuring what its unit measures: "一个月" is
        # no child, "七千来块" no age (quantities.py).
        quantity = measured(clause, x.start, x.end)
        free = [f for f in slots if f.key not in values and may_measure(f, quantity)]
        gap = m.end() if (m := _UNIT_GAP.match(clause, x.end)) else x.end  # always matches
        word = unit[0] if (unit := unit_after(clause, x.end)) else ""
        by_unit = [f for f in free if f.unit and units[f.unit] == 1 and word.endswith(f.unit)]
        cued = sorted(((_distance(f, clause, x.start, x.end), f) for f in free
                       if f.key in cued_slots), key=lambda p: p[0])
        if named in [f.key for f in free] and not cued:
            target = business.field(named)
        elif by_unit:
            target = by_unit[0]
        elif cued:
            target = cued[0][1]
        else:
            after = _OTHER_UNIT.match(clause, gap)
            fitting = [f for f in free if f.key in asked
                       and (after is None or after.group() == f.unit  # not "住过一次院"
                            or (quantity is not None and slot_measures(f) is quantity))
                       and fits(f, _span_for(f, clause, x.start, x.end))]
            if len(fitting) != 1:
                continue
            target = fitting[0]
        raw = _span_for(target, clause, x.start, x.end)
        if yearly(target) and per_month(clause, x.start, x.end) and isinstance(x.value, float | int):
            raw = f"{x.value * 12:g}"  # "保费一个月两百" for a yearly budget: 2400
        if fits(target, raw):
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


def _after_cue(f: FieldDef, clause: str, asked: bool, rest: str | None = None) -> str | None:
    """Free text a cue introduces: what follows it for the slot asked ("我是做IT的" →
    IT), the whole clause for another theme's slot ("有高血压"). The cue is looked
    for in ``rest``, the clause without the words other slots took."""
    for cue in sorted(f.cues, key=len, reverse=True):
        at = (clause if rest is None else rest).find(cue)
        if at < 0:
            continue
        if not asked:
            return clause
        after = _TAIL.sub("", _FILLER.sub("", clause[at + len(cue):]).strip())
        return after if len(after) >= 2 else clause
    return None
