"""A consultation's slots (``type: consult``) and its profile kept by conversation."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from si_agent import replies
from si_agent.config.model import Business
from si_agent.core import actions as A
from si_agent.core import consult
from si_agent.core.state import SETTLED, FieldStatus, State
from si_agent.flow.closing import consult_lines
from si_agent.flow.moves import Flow
from si_agent.session.model import FieldState
from si_agent.validators import check as validate_value

log = logging.getLogger(__name__)


def set_slots(t: Flow, business: Business, values: Mapping[str, Any]) -> A.CallOutcome:
    """Take slot values: new ones are acknowledged, changed ones said to be
    corrected, invalid ones explained; the reply's next move is core.consult's."""
    s, texts = t.s, business.consult
    assert texts is not None
    received: list[str] = []
    invalid: list[str] = []
    for key, raw in values.items():
        field = business.field(key)
        st = s.fields.setdefault(key, FieldState())
        said = consult.unalias(field, str(raw))
        res = validate_value(field.type, said, **field.validator_options())
        if res.ok and field.type == "text":
            # Kept as said (or as staff wrote an alias's value): "，" stays "，".
            res = replace(res, value=said.strip())
        if not res.ok:
            st.error = res.error
            if st.status not in SETTLED:
                st.status = FieldStatus.INVALID
            t.st.consult_lines.append(replies.render(replies.LABELLED, label=field.label,
                                                       text=res.error))
            invalid.append(key)
        elif st.status == FieldStatus.COLLECTED and st.value != res.value:
            t.st.consult_lines.append(replies.render(
                texts.corrected, label=field.label, old=consult.shown(field, st.value),
                new=consult.shown(field, res.value)))
        elif st.status != FieldStatus.COLLECTED:
            received.append(key)
        if res.ok:
            st.value, st.status, st.error, st.attempts = res.value, FieldStatus.COLLECTED, None, 0
    t.st.received += [k for k in received if k not in t.st.received]
    consult_progress(t, business)
    return A.applied(detail=f"collected={received} invalid={invalid}")


def skip_field(t: Flow, args: A.SkipFieldArgs) -> A.CallOutcome:
    b, s = t.business, t.s
    assert b is not None and b.consult is not None
    keys = [k for k in dict.fromkeys(args.field_keys) if k in b.field_keys
            and s.fields.get(k, FieldState()).status not in SETTLED]
    if not keys:
        return A.rejected(A.Reason.UNKNOWN_FIELD, f"nothing open to skip in {args.field_keys}")
    for key in keys:
        s.fields[key] = FieldState(status=FieldStatus.SKIPPED)
    t.st.consult_lines.append(replies.render(
        b.consult.skipped, labels=replies.LIST_SEP.join(b.field(k).label for k in keys)))
    consult_progress(t, b)
    return A.applied(detail=f"skipped={keys}")


def consult_progress(t: Flow, business: Business) -> None:
    """Every slot in: the consultation is done, and the closing says what it found."""
    if t.s.state != State.COLLECTING or consult.current_theme(business, t.s.fields):
        return
    t.fire("fields_done")
    t.st.parts.extend(consult_lines(t, business))
    t.st.consult_lines, t.st.received = [], []
    t.st.parts.append(consult.closing(business, t.s.fields))
    t.st.asked = True


def keep_profile(t: Flow) -> None:
    """Store the consultation's slots by group, or drop them once it ended."""
    b, s = t.business, t.s
    if b is not None and b.is_consult and s.state == State.COLLECTING:
        data = json.dumps(consult.profile(b, s.fields), ensure_ascii=False).encode()
        t.effects.put(t.group_owner(), b.id, data)
    elif t.st.consulting is not None:
        t.drop_files(t.group_owner(), (t.st.consulting.id,))


def resume_profile(t: Flow) -> None:
    """A conversation named by its group: take up the consultation it left open."""
    s = t.s
    for b in (x for x in t.deps.catalog.values() if x.is_consult):
        data = t.deps.files.get(t.group_owner(), b.id)
        if data is None:
            continue
        try:
            saved = {k: FieldState.model_validate(v) for k, v in json.loads(data).items()}
        except (ValueError, TypeError) as exc:
            log.warning("consultation profile of %s unreadable (%s); starting afresh",
                        b.id, type(exc).__name__)
            continue
        assert b.consult is not None
        t.clear()
        s.business_id = b.id
        s.fields = {f.key: saved.get(f.key, FieldState()) for f in b.fields}
        s.flow_nonce = uuid.uuid4().hex
        t.fire("begin")
        t.st.parts.append(b.consult.resumed)
        t.st.resumed = True
        return
