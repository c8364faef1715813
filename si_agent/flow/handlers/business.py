"""Starting, resuming, switching and cancelling a business."""

from __future__ import annotations

import logging
import uuid

from si_agent import replies
from si_agent.config.model import Business
from si_agent.core import actions as A
from si_agent.core.decision import Rule
from si_agent.core.state import AT_REST, IN_DIALOGUE, State
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
    if kept is not None and kept.cancelled and not asked_back(t, business):
        s.suspended.remove(kept)  # named again after a cancel: a fresh start
        t.forget_flow(kept)
    elif kept is not None:
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


def asked_back(t: Flow, business: Business) -> bool:
    """Whether a cancelled business is asked back ("继续", or yes to the offer to take
    it up again), not named afresh ("灵活就业参保" once more starts from the start).
    A model is told that match_business takes a kept business up again."""
    rule = t.decision.rule if t.decision else None
    return rule in (Rule.RESUME, Rule.MODEL) or t.st.pending_suggestion == business.id


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
    if current is not None:
        put_aside(t, current, cancelled=False)
    t.fire("suspend")
    t.clear(keep_files=True)  # the suspended flow keeps its photos
    return match_business(t, A.MatchBusinessArgs(business_id=target.id))


def put_aside(t: Flow, current: Business, *, cancelled: bool) -> SuspendedFlow:
    """Keep the business in progress, where it stands, among the suspended ones.

    A cancelled one (issue 25: cancel with a safety net) is kept the same way, for
    "继续" to bring back; only the latest cancelled one is kept, and it gives way
    silently when more than ``MAX_SUSPENDED`` are kept.
    """
    s = t.s
    if cancelled:
        for flow in [f for f in s.suspended if f.cancelled or f.business_id == current.id]:
            s.suspended.remove(flow)
            t.forget_flow(flow)
    kept = SuspendedFlow(
        business_id=current.id, state=s.state, fields=s.fields, awaiting=s.awaiting,
        step_data=s.step_data, produced=s.produced, step_files=s.step_files,
        skipped=s.skipped, resume=s.resume, flow_nonce=s.flow_nonce, cancelled=cancelled)
    s.suspended.append(kept)
    while len(s.suspended) > MAX_SUSPENDED:
        flow = next((f for f in s.suspended if f.cancelled), s.suspended[0])
        s.suspended.remove(flow)
        t.forget_flow(flow)
        log.info("session %s: suspended %s dropped (more than %d put aside)",
                 session_ref(s.session_id), flow.business_id, MAX_SUSPENDED)
        if not flow.cancelled:
            old = t.deps.catalog.get(flow.business_id)
            t.st.parts.append(replies.render(replies.SUSPENDED_DROPPED, limit=MAX_SUSPENDED,
                                             name=old.name if old else flow.business_id))
    return kept


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
    calls = t.decision.calls if t.decision else []
    then_starts = any(c.name == A.MATCH_BUSINESS for c in calls)
    # Stopped for now, not dropped for another business: kept for "继续" (issue 25).
    kept = (put_aside(t, b, cancelled=True)
            if b is not None and not then_starts and resumable(t, b) else None)
    t.fire("cancel")
    t.clear(keep_files=kept is not None)
    if b is None:
        text = replies.NOTHING_TO_CANCEL
    elif then_starts:
        text = replies.render(replies.DROPPED, name=b.name)
    elif kept is not None and kept.worth_offering:
        text = replies.render(replies.CANCELLED_KEPT, name=b.name)
    else:
        text = replies.render(replies.CANCELLED, name=b.name)
    t.st.parts.append(text)
    t.st.asked = True
    if not then_starts and not (kept is not None and kept.worth_offering):
        t.offer_resume()  # dropped for another business: no offer in between
    return A.applied(detail="cancelled, kept to resume" if kept is not None else "")


def resumable(t: Flow, business: Business) -> bool:
    """Whether a cancelled business can be taken up again: one being filled in (a
    consultation keeps its own profile, a submission is past taking back)."""
    return not business.is_consult and (t.s.state in IN_DIALOGUE
                                        or t.s.state == State.STEP_EXECUTING)
