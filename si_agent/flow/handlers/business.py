"""Starting, resuming, switching and cancelling a business."""

from __future__ import annotations

import logging
import uuid

from si_agent import replies
from si_agent.config.model import Business
from si_agent.core import actions as A
from si_agent.core.state import AT_REST, State
from si_agent.flow.moves import Flow
from si_agent.session.base import session_ref
from si_agent.session.model import MAX_SUSPENDED, FieldState, SuspendedFlow

log = logging.getLogger(__name__)


def match_business(t: Flow, args: A.MatchBusinessArgs) -> A.CallOutcome:
    business = t.deps.catalog.get(args.business_id)
    if business is None:
        return A.rejected(A.Reason.UNKNOWN_BUSINESS,
                          f"unknown business {args.business_id!r}")
    if business.id in t.deps.unavailable:
        t.st.parts.append(replies.render(replies.BUSINESS_UNAVAILABLE, name=business.name,
                                         handoff=t.deps.handoff_text))
        t.st.asked = True
        return A.applied(A.Reason.UNAVAILABLE_BUSINESS, "not available online")
    if business.discover:
        business = t.discovered(business)
        if business is None:
            t.st.asked = True
            return A.applied(A.Reason.UNAVAILABLE_BUSINESS, "its form cannot be read now")
    s = t.s
    t.clear()
    s.suggestion = None  # whatever the last reply offered, this is what was chosen
    kept = next((f for f in reversed(s.suspended) if f.business_id == business.id), None)
    if kept is not None:
        return resume(t, business, kept)
    s.business_id = business.id
    s.fields = {f.key: FieldState() for f in business.fields}
    s.flow_nonce = uuid.uuid4().hex
    t.fire("begin")
    if business.is_consult:
        assert business.consult is not None
        t.st.parts.append(business.consult.opening)  # asks the first theme's questions
        t.st.theme_asked = business.themes[0]
        t.st.opened = True
        t.st.asked = False  # values given with the request are acknowledged next
        return A.applied()
    t.st.parts.append(replies.render(replies.START, name=business.name))
    t.st.asked = False  # after "不办这个了" the new business asks its first question
    return A.applied()


def resume(t: Flow, business: Business, kept: SuspendedFlow) -> A.CallOutcome:
    """Take up a suspended business exactly where it was left."""
    s = t.s
    s.suspended.remove(kept)
    s.business_id = business.id
    s.fields = {f.key: kept.fields.get(f.key, FieldState()) for f in business.fields}
    s.step_data, s.produced = dict(kept.step_data), dict(kept.produced)
    s.step_files, s.skipped, s.resume = dict(kept.step_files), list(kept.skipped), kept.resume
    s.flow_nonce = kept.flow_nonce or uuid.uuid4().hex
    t.fire("begin")
    t.st.asked = False
    t.st.parts.append(replies.render(t.deps.texts.switch_resumed, business=business.name))
    if s.state == State.COLLECTING and not t.pending(business):
        t.complete()  # it was confirming: confirm again
    elif s.state == State.COLLECTING and kept.awaiting in business.field_keys:
        s.awaiting = kept.awaiting
    return A.applied(detail="resumed")


def switch_business(t: Flow, args: A.SwitchBusinessArgs) -> A.CallOutcome:
    """Put the business in progress aside, with its values, and start another."""
    current, target = t.business, t.deps.catalog.get(args.business_id)
    if target is None:
        return A.rejected(A.Reason.UNKNOWN_BUSINESS, f"unknown business {args.business_id!r}")
    if current is not None and target.id == current.id:
        return A.rejected(A.Reason.NOT_ALLOWED, f"{target.id} is the business in progress")
    if target.id in t.deps.unavailable:
        t.st.parts.append(replies.render(replies.BUSINESS_UNAVAILABLE, name=target.name,
                                         handoff=t.deps.handoff_text))
        return A.applied(A.Reason.UNAVAILABLE_BUSINESS, "not available online")
    s = t.s
    if current is not None:
        s.suspended.append(SuspendedFlow(
            business_id=current.id, state=s.state, fields=s.fields, awaiting=s.awaiting,
            step_data=s.step_data, produced=s.produced, step_files=s.step_files,
            skipped=s.skipped, resume=s.resume, flow_nonce=s.flow_nonce))
        dropped = s.suspended[:-MAX_SUSPENDED]
        del s.suspended[:-MAX_SUSPENDED]
        for flow in dropped:
            t.forget_flow(flow)
            log.info("session %s: suspended %s dropped (more than %d put aside)",
                     session_ref(s.session_id), flow.business_id, MAX_SUSPENDED)
            old = t.deps.catalog.get(flow.business_id)
            t.st.parts.append(replies.render(replies.SUSPENDED_DROPPED, limit=MAX_SUSPENDED,
                                             name=old.name if old else flow.business_id))
    t.fire("suspend")
    t.clear(keep_files=True)  # the suspended flow keeps its photos
    return match_business(t, A.MatchBusinessArgs(business_id=target.id))


def cancel_flow(t: Flow, args: A.NoArgs) -> A.CallOutcome:
    b = t.business
    s = t.s
    if s.state in AT_REST:
        waiting = [f for f in s.suspended if f.business_id == t.st.pending_suggestion]
        if waiting:  # "不用了" to the offer to take a suspended business up again
            s.suspended.remove(waiting[-1])
            t.forget_flow(waiting[-1])
            name = t.deps.catalog[waiting[-1].business_id].name
            t.st.parts.append(replies.render(replies.CANCELLED, name=name))
            t.st.asked = True
            return A.applied(detail=f"dropped suspended {waiting[-1].business_id}")
        t.st.parts.append(replies.NOTHING_TO_CANCEL)
        return A.applied(A.Reason.NOTHING_TO_CANCEL, "nothing to cancel")
    if s.state == State.EXECUTING and b is not None:
        job = t.deps.jobs.load(s.job_id) if s.job_id else None
        if job is not None and not job.finished:
            t.st.parts.append(replies.render(replies.JOB_CANNOT_CANCEL, name=b.name))
            t.st.asked = True
            return A.applied(A.Reason.JOB_IN_PROGRESS, "a submitted job cannot be cancelled")
    t.fire("cancel")
    t.clear()
    calls = t.decision.calls if t.decision else []
    then_starts = any(c.name == A.MATCH_BUSINESS for c in calls)
    text = replies.DROPPED if then_starts else replies.CANCELLED
    t.st.parts.append(replies.render(text, name=b.name) if b
                      else replies.NOTHING_TO_CANCEL)
    t.st.asked = True
    if not then_starts:  # dropped for another business: no offer in between
        t.offer_resume()
    return A.applied()
