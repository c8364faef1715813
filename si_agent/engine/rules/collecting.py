"""Rules while fields are collected: values, corrections, questions, a consultation.

Values are found by the validators' extractors and assigned to fields by type,
cue words and labels (so corrections such as "不对，转出城市是苏州" work); a
correction frame's new value goes to the field it corrects ("还是改回张伟吧"); a
hedge fills nothing ("说不好算不算"); the whole message answers the awaited field,
without an option it negates; questions go to ``answer_question``; "你好" and "谢谢"
are said back briefly, and "？？", "。。。" or "啊" ask the awaited field again.
"""

from __future__ import annotations

from si_agent.config.model import Business, FieldDef
from si_agent.core import actions as T
from si_agent.core.decision import Rule, SessionView, ToolCall
from si_agent.engine import cues
from si_agent.engine import lexicon as L
from si_agent.engine.consult import extract_slots, meant_slot, stops
from si_agent.engine.rules import questions, services, switching, talk
from si_agent.engine.rules.calls import (
    Ruled,
    answer_call,
    cancel_call,
    explain_call,
    redo_call,
    small_talk_call,
)
from si_agent.engine.rules.corrections import corrected
from si_agent.engine.rules.extraction import has_strong_values, modify_call_for, values_for
from si_agent.engine.rules.interrupts import interrupted
from si_agent.engine.rules.matching import BusinessIndex
from si_agent.engine.rules.mentions import (
    mentioned_field,
    mentioned_step,
    named_field,
    strip_cue,
    whole_message_fits,
)
from si_agent.engine.rules.polarity import blank_negated, negated_mentions, other_of_two
from si_agent.session.model import FieldState
from si_agent.validators import check

_WEAK = ("enum", "city", "name", "integer", "number", "year", "text")


def decide(index: BusinessIndex, view: SessionView, text: str,
           offered: frozenset[str]) -> Ruled:
    """The rules when ``provide_field`` is offered (no step awaited)."""
    business = view.business
    assert business is not None
    if business.is_consult:
        return _consulting(index, view, business, text, offered)
    interrupt = services.decide(text, offered) or interrupted(index, view, text, offered)
    if interrupt is not None:
        return interrupt
    awaited = view.awaiting if view.awaiting in business.field_keys else _first(view)
    talked = talk.decide(business, awaited, text, offered)
    if talked is not None:
        return talked
    if L.is_contentless(text):
        # "？？", "。。。", "啊": no question to look up, no value; the awaited field again,
        # with its help if it has one.
        if awaited and T.EXPLAIN_FIELD in offered:
            return [explain_call(awaited, "help")], Rule.FIELD_HELP, (
                f"nothing said: {awaited} again")
        return [], Rule.CONVERSATIONAL, "nothing but punctuation or interjections"
    if awaited and cues.is_hedge(text) and not has_strong_values(business, text):
        # "说不好算不算被辞退", "可能算裁员吧": neither yes nor no; explain and ask again.
        if business.field(awaited).help and T.EXPLAIN_FIELD in offered:
            return [explain_call(awaited, "help")], Rule.FIELD_HELP, f"a hedge on {awaited}"
        return [], Rule.CONVERSATIONAL, "a hedge fills nothing"
    redo = mentioned_step(business, text)
    if redo and T.REDO_STEP in offered and (L.wants_modify(text) or "重新" in text):
        return [redo_call(redo)], Rule.MODIFY, f"redo step {redo}"
    named = named_field(business, text) if L.wants_modify(text) else None
    target = mentioned_field(business, text) or (named if named != awaited else None)
    if target and (L.wants_modify(text) or "重新" in text or "重填" in text):
        return [modify_call_for(business, target, text)], Rule.MODIFY, f"go back to {target}"
    if L.is_preamble_only(text):
        return [], Rule.CONVERSATIONAL, "only a preamble (打错了): the value follows"
    if cues.is_correction(text) or cues.not_but(text):
        fixed = corrected(business, view, awaited, text)
        if fixed is not None:
            if not fixed:
                return [], Rule.CONVERSATIONAL, "a correction without a new value"
            return [ToolCall(name=T.PROVIDE_FIELD, arguments={"values": fixed})], (
                Rule.VALUES), f"corrected {sorted(fixed)}"
    answer = L.strip_preamble(text)
    values = values_for(business, awaited, answer, whole=True)
    if not values and answer != text:
        # "打错了，是张伟": a correction of a value given before, if only one fits.
        fits = [f.key for f in business.fields
                if f.key != awaited and view.fields.get(f.key, FieldState()).status
                == "collected" and whole_message_fits(f, answer)]
        values = {fits[0]: answer} if len(fits) == 1 else {}
    if values:
        statement, question = questions.split(answer)
        weak = all(business.field(k).type in _WEAK for k in values)
        # An option turned down is no part of a question ("工行不行，中行吧": 行不行).
        if L.is_question(blank_negated(business, text)) and weak:
            # "杭州的，备案完多久生效啊": the value stated apart from the question stays.
            stated = _stated_values(business, awaited, statement) if question else {}
            if not stated:
                return [answer_call(text, None)], Rule.QUESTION, "a question that mentions a value"
            return [answer_call(question, None),
                    ToolCall(name=T.PROVIDE_FIELD, arguments={"values": stated})], (
                Rule.VALUES), "a value and a question in separate clauses"
        provide = ToolCall(name=T.PROVIDE_FIELD, arguments={"values": values})
        if L.is_how_question(text) or (question and statement):
            # Mixed intent: answer first (the question only, no numbers), then take the values.
            return [answer_call(question or text, None), provide], Rule.VALUES, (
                "question and values")
        return [provide], Rule.VALUES, "values found"
    polite = talk.courtesy(text, offered)
    if polite is not None:
        return polite
    if L.is_greeting(text) or L.is_conversational(text):
        return [], Rule.CONVERSATIONAL, "no value in a conversational reply"
    if L.is_question(text):
        free = _free_text_stated(business, awaited, answer)
        if awaited is not None and free is not None:
            # "寄到…红旗街88号 大概多久能收到啊": the address stays, the question is answered.
            return [answer_call(questions.split(answer)[1], None),
                    ToolCall(name=T.PROVIDE_FIELD, arguments={"values": {awaited: free}})], (
                Rule.VALUES), "a free-text value and a question in separate clauses"
        return [answer_call(text, None)], Rule.QUESTION, "question while collecting"
    free_text = awaited and business.field(awaited).type == "text"
    if free_text and L.NON_ANSWER.search(text):
        return [], Rule.CONVERSATIONAL, "a non-answer would pass as free text"
    clause = _answering_clause(business, business.field(awaited), answer) if awaited else None
    if awaited and clause:
        # "那我还是自己填吧，吴丽娟": talk around the answer (after asking for a person).
        return [ToolCall(name=T.PROVIDE_FIELD, arguments={"values": {awaited: clause}})], (
            Rule.AWAITED_ANSWER), "the one clause that answers the awaited field"
    if awaited:
        if business.field(awaited).type in ("enum", "multi_enum"):
            # "不是旅游，是…": the option negated is no answer; the rest is checked.
            other = other_of_two(business.field(awaited), answer)
            if other is not None:  # "正式的先不要": of two options, the one not turned down
                return [ToolCall(name=T.PROVIDE_FIELD, arguments={"values": {awaited: other}})], (
                    Rule.AWAITED_ANSWER), "the other of two options, one turned down"
            answer = blank_negated(business, answer).strip(" ，,。")
            if not answer:
                return [], Rule.NONE, "only a negated option"
        return [ToolCall(name=T.PROVIDE_FIELD, arguments={"values": {awaited: answer}})], (
            Rule.AWAITED_ANSWER), "the message as the awaited field's value"
    return [], Rule.NONE, "nothing recognised"


def _consulting(index: BusinessIndex, view: SessionView, business: Business, text: str,
                offered: frozenset[str]) -> Ruled:
    """A consultation: slot values across every theme, declined slots, a question."""
    kind = L.small_talk(text)
    if kind in ("handoff", "self_intro") and T.SMALL_TALK in offered:
        return [small_talk_call(kind)], Rule.SMALL_TALK, kind
    listed = services.decide(text, offered)
    if listed is not None:
        return listed
    if stops(business, dict(view.fields), text):
        return [cancel_call()], Rule.CANCEL_WORD, "cancel word"
    switch = switching.decide(index, view, text, offered)
    if switch is not None:
        return switch
    polite = talk.courtesy(text, offered)
    if polite is not None:
        return polite  # "你好", "谢谢": said back, the theme asked again
    term = meant_slot(business, text)
    if term is not None and T.EXPLAIN_FIELD in offered:
        return [explain_call(term, "help")], Rule.FIELD_HELP, f"what {term} means"
    # "我想咨询保险" again names this business; it gives no slot.
    found = extract_slots(business, dict(view.fields), index.without_keywords(business, text))
    if not found.values and not found.skipped:
        if found.question or len(text) > 8:
            return [answer_call(text, None)], Rule.QUESTION, "question during a consultation"
        return [], Rule.CONVERSATIONAL, "nothing for the slots"
    calls = [answer_call(text, None)] if found.question else []
    if found.values:
        calls.append(ToolCall(name=T.PROVIDE_FIELD, arguments={"values": found.values}))
    if found.skipped:
        calls.append(ToolCall(name=T.SKIP_FIELD, arguments={"field_keys": found.skipped}))
    rule = Rule.AWAITED_ANSWER if found.guessed else Rule.VALUES
    return calls, rule, f"slots {sorted(found.values)} skipped {found.skipped}"


def _answering_clause(business: Business, field: FieldDef, text: str) -> str | None:
    """The one clause of several that is, whole, a value for ``field`` (a typed field:
    free text takes the message as it stands); an option turned down is none ("正式的
    先不要")."""
    parts = L.clauses(text)
    if field.type == "text" or len(parts) < 2 or L.NON_ANSWER.search(text):
        return None  # ("我不知道，张伟说的" gives no name)
    if field.type in ("enum", "multi_enum"):
        parts = [c for c in parts if not negated_mentions(business, c)]
    fits = [c for c in parts if whole_message_fits(field, c)]
    return fits[0] if len(fits) == 1 else None


def _free_text_stated(business: Business, awaited: str | None, text: str) -> str | None:
    """The clauses that ask nothing, as the awaited free-text field's value, when they
    hold a number (an address has one; a remark like "我不太懂" has none)."""
    if awaited is None:
        return None
    field = business.field(awaited)
    statement, question = questions.split(text)
    if field.type != "text" or field.pattern or not question or not statement:
        return None
    value = strip_cue(field, statement).strip(" ，,。")
    if not any(c.isdigit() for c in value) or not whole_message_fits(field, value):
        return None
    return value if check(field.type, value, **field.validator_options()).ok else None


def _stated_values(business: Business, awaited: str | None, statement: str) -> dict[str, str]:
    """The valid values of the clauses that ask nothing (none from a filler: "嗯", "那个")."""
    if not statement or L.is_conversational(statement) or L.is_preamble_only(statement):
        return {}
    values = values_for(business, awaited, statement, whole=True)
    return {k: v for k, v in values.items()
            if check(business.field(k).type, v, **business.field(k).validator_options()).ok}


def _first(view: SessionView) -> str | None:
    pending = view.pending_keys()
    return pending[0] if pending else None
