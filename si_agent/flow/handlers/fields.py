"""Typed field values: given, changed, checked across fields, explained."""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

from si_agent import replies
from si_agent.config.model import Business, Check, FieldDef, Ineligible
from si_agent.core import actions as A
from si_agent.core.display import recorded_items
from si_agent.core.state import FieldStatus, State
from si_agent.flow import handoff, readback
from si_agent.flow.handlers.slots import set_slots
from si_agent.flow.moves import Flow, join
from si_agent.handoff import Reason
from si_agent.session.model import FieldState
from si_agent.validators import check as validate_value

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt,
    "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}


def provide_field(t: Flow, args: A.ProvideFieldArgs) -> A.CallOutcome:
    business = t.business
    assert business is not None
    known = {k: v for k, v in args.values.items()
             if k in business.field_keys and v is not None}
    if not known:
        return A.rejected(A.Reason.UNKNOWN_FIELD, f"unknown fields {sorted(args.values)}")
    if business.is_consult:
        return set_slots(t, business, known)
    outcome = set_fields(t, business, known)
    if t.s.state == State.COLLECTING and not t.pending(business):
        t.complete()
    return outcome


def set_fields(t: Flow, business: Business, values: Mapping[str, Any], *,
               confirmed: bool = False) -> A.CallOutcome:
    """Validate and store ``values``; a long number from a spoken message is read back
    first (``flow.readback``) unless ``confirmed`` (the citizen said it is right)."""
    s = t.s
    recorded: list[str] = []
    problems: list[str] = []
    heard: dict[str, str] = {}
    for key, raw in values.items():
        field = business.field(key)
        st = s.fields.setdefault(key, FieldState())
        res = validate_value(field.type, str(raw), **field.validator_options())
        produced = s.produced.get(key)
        # An answer that means "not eligible" is no wrong option: the policy is said
        # (free text would take it as it stands, so it is looked for first there).
        barred = field.ineligible_in(str(raw)) if not res.ok or field.type == "text" else None
        if barred is not None:
            st.value, st.status, st.error = None, FieldStatus.PENDING, None
            s.awaiting = key
            problems.append(ineligible_reply(t, business, field, barred))
        elif res.ok and produced is not None and produced.value != res.value:
            step = next((x for x in business.steps if x.id == produced.step), None)
            message = replies.render(replies.TYPED_MISMATCH, label=field.label,
                                     step=step.label if step else "")
            problems += mark_invalid(t, field, st, message, "")
        elif res.ok and not confirmed and readback.needed(t, field):
            st.value, st.status, st.error = None, FieldStatus.PENDING, None
            heard[key] = str(res.value)
        elif res.ok:
            st.value, st.status, st.error, st.attempts = res.value, FieldStatus.COLLECTED, None, 0
            recorded.append(key)
        else:
            problems += mark_invalid(t, field, st, res.error or "", field.error_msg or "")
    for chk in business.checks:
        if check_fails(t, chk):
            st = s.fields[chk.reask]
            st.value, st.status = None, FieldStatus.PENDING
            if chk.reask in recorded:
                recorded.remove(chk.reask)
            problems += mark_invalid(t, business.field(chk.reask), st, chk.message, "")
    if recorded:
        items = recorded_items(business, recorded, s.fields)
        t.st.parts.append(replies.render(replies.RECORDED, items=items))
    t.st.parts.extend(problems)
    if s.awaiting in recorded:
        s.awaiting = None
    if heard and not problems:  # a value to give again is asked first; then the others
        readback.hold(t, business, heard)
    bad = [k for k in values if s.fields[k].status != FieldStatus.COLLECTED]
    return A.applied(detail=f"collected={recorded} invalid={bad}")


def settle_heard(t: Flow) -> bool:
    """The citizen's answer to long numbers read back (``flow.readback``): yes stores
    them, no asks for the first again; True if the message was that answer."""
    heard, t.s.heard = t.s.heard, {}
    business = t.business
    said = readback.answer(t.text)
    if business is None or t.s.state != State.COLLECTING or said is None:
        return False
    heard = {k: v for k, v in heard.items() if k in business.field_keys}
    if not heard:
        return False
    if said:
        set_fields(t, business, heard, confirmed=True)
        if not t.pending(business):
            t.complete()
    else:
        first = business.field(next(iter(heard)))
        t.s.awaiting = first.key
        t.st.parts.append(replies.render(replies.READ_BACK_AGAIN, label=first.label))
        t.st.asked = True
    return True


def ineligible_reply(t: Flow, business: Business, field: FieldDef, barred: Ineligible) -> str:
    """The policy for an answer that does not qualify, and the way on: stop, call, or
    give another answer (the field is asked again)."""
    policy = replies.render(barred.reply or field.help or "", business=business.name,
                            label=field.label)
    offer = replies.render(t.deps.texts.ineligible_offer, label=field.label,
                           handoff=t.deps.handoff_text)
    return join([policy, offer])


def mark_invalid(t: Flow, field: FieldDef, st: FieldState, diagnosis: str,
                  instruction: str) -> list[str]:
    """Count a failed attempt; the reply lines to show. A collected value is kept."""
    b = t.business
    assert b is not None
    st.attempts += 1
    st.error = diagnosis
    if st.status != FieldStatus.COLLECTED:
        st.status = FieldStatus.INVALID
        t.s.awaiting = field.key  # a kept value is not asked for again
    if instruction:
        t.st.reasked.add(field.key)
    lines = [replies.render(replies.INVALID, diagnosis=diagnosis, instruction=instruction)]
    if st.attempts >= b.max_attempts:
        lines.append(replies.render(replies.ESCALATE, label=field.label, attempts=st.attempts,
                                    handoff=t.deps.handoff_text))
        lines.append(handoff.request(t, Reason.FAILURES))  # a ticket for a person
        st.attempts = 0
        t.st.reasked.discard(field.key)  # after the offer to stop, ask plainly again
    return lines


def check_fails(t: Flow, chk: Check) -> bool:
    left, right = t.s.fields.get(chk.left), t.s.fields.get(chk.right)
    if not left or not right or left.status != FieldStatus.COLLECTED or right.status != FieldStatus.COLLECTED:
        return False
    try:
        return not _OPS[chk.op](left.value, right.value)
    except TypeError:
        return True


def modify_info(t: Flow, args: A.ModifyInfoArgs) -> A.CallOutcome:
    b = t.business
    assert b is not None
    key = args.field_key
    if key not in b.field_keys:
        return A.rejected(A.Reason.UNKNOWN_FIELD, f"unknown field {key!r}")
    t.fire("fix" if t.s.state == State.FAILED else "modify")
    value = args.value
    st = t.s.fields.setdefault(key, FieldState())
    st.status = FieldStatus.PENDING
    if value not in (None, ""):
        # The old value is what the user called wrong: an invalid new one
        # leaves the field to be asked again, not the old value in place.
        outcome = set_fields(t, b, {key: value})
        if not t.pending(b):
            t.complete()
        return outcome
    t.s.awaiting = key
    t.st.parts.append(replies.render(replies.MODIFY_ASK, label=b.field(key).label))
    return A.applied(A.Reason.AWAITING_VALUE, "awaiting new value")


def explain_field(t: Flow, args: A.ExplainFieldArgs) -> A.CallOutcome:
    """Why a field is needed, or what its term means; the field is asked again."""
    b = t.business
    assert b is not None
    if args.field_key not in b.field_keys:
        return A.rejected(A.Reason.UNKNOWN_FIELD, f"unknown field {args.field_key!r}")
    field = b.field(args.field_key)
    texts = t.deps.texts
    if args.topic == "help":
        if field.help is None:
            return A.applied(detail="no help text: the prompt again")
        t.st.parts.append(replies.render(field.help, business=b.name, label=field.label))
        if not b.is_consult:  # a consultation asks its theme again instead
            t.st.parts.append(replies.render(replies.CONTINUE, name=b.name))
    else:
        why = replies.render(field.why or texts.why_default, business=b.name,
                             label=field.label)
        t.st.parts.append(join([why, texts.refusal_offer]))
    if t.s.state == State.COLLECTING and args.field_key in t.pending_keys(b):
        t.s.awaiting = args.field_key
    return A.applied()
