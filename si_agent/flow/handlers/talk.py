"""Small talk and knowledge questions (which may suggest, or offer to switch to, a business)."""

from __future__ import annotations

from si_agent import replies
from si_agent.config.model import Business
from si_agent.core import actions as A
from si_agent.core.decision import Rule
from si_agent.core.state import AT_REST, FieldStatus, State
from si_agent.engine import lexicon
from si_agent.flow import handoff
from si_agent.flow.handlers.business import match_business
from si_agent.flow.moves import Flow
from si_agent.flow.outcomes import result_text
from si_agent.knowledge import Answer


def small_talk(t: Flow, args: A.SmallTalkArgs) -> A.CallOutcome:
    texts = t.deps.texts
    b = t.business
    running = b is not None and t.s.state not in AT_REST
    if args.kind in ("greeting", "closing") and running:
        # "你好", "谢谢" mid-business: a word back; the awaited field (a consultation:
        # its theme) is asked next.
        assert b is not None
        brief = replies.GREETING_BRIEF if args.kind == "greeting" else replies.CLOSING_BRIEF
        t.st.parts.append(brief if b.is_consult else
                          brief + replies.render(replies.CONTINUE, name=b.name))
    elif args.kind == "start_over":
        return start_over(t)
    elif args.kind == "greeting":
        t.st.parts.append(t.greeting())
    elif (args.kind == "nothing_pending" and b is not None and b.api is not None
          and t.s.state == State.DONE and t.s.result is not None):
        # "确认" again after the submission (a second tap, a page reloaded at once):
        # the outcome again, not "nothing to confirm", which reads as if it was lost
        again = replies.OUTCOME_AGAIN if lexicon.OUTCOME_QUESTION.search(t.text) else \
            replies.ALREADY_DONE
        t.st.parts.append(replies.render(again, name=b.name) + result_text(t, b, t.s.result))
    elif args.kind == "nothing_pending":
        t.offer_resume()  # a business kept aside (cancelled, switched from) is offered first
        if not t.st.asked:
            t.st.parts.append(t.services_reply(texts.nothing_pending))
    elif args.kind == "services":
        t.st.parts.append(t.services_reply(texts.services))
        if b is not None and t.s.state not in AT_REST and not b.is_consult:
            t.st.parts.append(replies.render(replies.CONTINUE, name=b.name))
    elif args.kind == "handoff":
        # A ticket for a person, and what will really happen (flow.handoff); a
        # consultation says its own words about an adviser first.
        if b is not None and b.consult and b.consult.handoff:
            t.st.parts.append(replies.render(b.consult.handoff, handoff=t.deps.handoff_text))
        t.st.parts.append(handoff.request(t))
    else:
        t.st.parts.append(replies.render(getattr(texts, args.kind),
                                         handoff=t.deps.handoff_text))
    if t.s.state in AT_REST:
        t.st.asked = True
    return A.applied()


def start_over(t: Flow) -> A.CallOutcome:
    """"重新开始" typed: with a business in progress or kept aside, asked first (as the
    page's button asks); said again, or yes to the question, everything is cleared and
    the greeting follows. Never while a submission is being processed."""
    s = t.s
    catalog = t.deps.catalog
    running = t.business if s.state not in AT_REST else None
    if s.state == State.EXECUTING and running is not None:
        job = t.deps.jobs.load(s.job_id) if s.job_id else None
        if job is not None and not job.finished:
            t.st.parts.append(replies.render(replies.START_OVER_JOB, name=running.name))
            t.st.asked = True
            return A.applied(A.Reason.JOB_IN_PROGRESS, "a submitted job cannot be cleared")
    names = ([running.name] if running is not None else []) + [
        catalog[f.business_id].name for f in reversed(s.suspended) if f.business_id in catalog]
    if names and not t.st.start_over_asked:
        s.start_over_asked = True
        t.st.parts.append(replies.render(replies.START_OVER_ASK,
                                         names=replies.LIST_SEP.join(names)))
        t.st.asked = True
        return A.applied(A.Reason.AWAITING_VALUE, "asked before starting over")
    for flow in s.suspended:
        t.forget_flow(flow)
    s.suspended = []
    if s.business_id is not None:
        t.fire("cancel")
        t.clear()
    if names:
        t.st.parts.append(replies.render(replies.START_OVER_DONE,
                                         names=replies.LIST_SEP.join(names)))
    t.st.parts.append(t.greeting())
    t.st.asked = True
    return A.applied(detail="started over")


def answer_question(t: Flow, args: A.AnswerQuestionArgs) -> A.CallOutcome:
    question = args.question.strip()
    answer = knowledge(t, question) if question else None
    suggested = args.suggested_business_id
    if answer and answer.refused:
        suggested = None  # no business for an instruction or someone else's data
    elif answer and answer.suggested_business_id and not suggested:
        suggested = answer.suggested_business_id
    elif answer and answer.sources and t.decision and t.decision.rule is Rule.SUGGEST:
        # The engine only guessed by word similarity; the passages found say better
        # (a parent's account inherited is no pension estimate), even "none".
        suggested = answer.suggested_business_id
    current = t.business if t.s.state not in AT_REST else None
    named = t.deps.catalog.get(args.suggested_business_id or "")
    if (current is not None and named is not None and named.id != current.id
            and A.SWITCH_BUSINESS in A.tool_names(t.tools())):
        return ask_switch(t, question, answer, current, named)
    target = t.deps.catalog.get(suggested or "")
    can_suggest = target is not None and t.s.state in AT_REST
    offline = can_suggest and target is not None and target.id in t.deps.unavailable
    can_suggest = can_suggest and not offline
    model_text = t.decision.text if t.decision else None
    if (not answer and not model_text and can_suggest and target is not None
            and target.is_consult and target.id == args.suggested_business_id):
        # "买什么保险好啊" with nothing in the knowledge base: the consultation named is
        # the answer (it asks for the situation the advice depends on), not "无法回答".
        return match_business(t, A.MatchBusinessArgs(business_id=target.id))
    if answer:
        t.st.answers.append(answer.text)
    elif model_text and t.deps.model_text_answers:
        t.st.answers.append(model_text)
    elif question or not can_suggest:
        t.st.answers.append(replies.render(replies.NO_ANSWER_TEMPLATE,
                                             handoff=t.deps.handoff_text))
    if offline:
        assert target is not None
        t.st.parts.append(replies.render(replies.BUSINESS_UNAVAILABLE, name=target.name,
                                         handoff=t.deps.handoff_text))
    elif can_suggest:
        assert target is not None
        t.s.suggestion = target.id
        t.st.parts.append(replies.render(replies.SUGGEST, name=target.name))
    elif (t.business is not None and t.s.state not in AT_REST
          and not t.business.is_consult):  # a consultation re-asks its theme instead
        t.st.parts.append(replies.render(replies.CONTINUE, name=t.business.name))
    return A.applied()


def ask_switch(t: Flow, question: str, answer: Answer | None, current: Business,
                target: Business) -> A.CallOutcome:
    """Another business named mid-flow: ask once whether to switch to it."""
    if answer:
        t.st.answers.append(answer.text)
    if target.id in t.deps.unavailable:
        t.st.parts.append(replies.render(replies.BUSINESS_UNAVAILABLE, name=target.name,
                                         handoff=t.deps.handoff_text))
        t.st.parts.append(replies.render(replies.CONTINUE, name=current.name))
        return A.applied(A.Reason.UNAVAILABLE_BUSINESS, "not available online")
    filled = sum(1 for st in t.s.fields.values() if st.status == FieldStatus.COLLECTED)
    t.s.suggestion = target.id
    t.st.parts.append(replies.render(t.deps.texts.switch_ask, current=current.name,
                                     filled=filled, target=target.name))
    t.st.asked = True
    return A.applied(detail=f"asked to switch to {target.id}")


def knowledge(t: Flow, question: str) -> Answer | None:
    b = t.business
    # Mid-flow, the business being done is what "这个收费不", "多久能拿到" ask about.
    context = b.name if b is not None and not b.is_consult and t.s.state not in AT_REST else None
    key = ("answer", question, context)
    if key not in t.memo:
        # A consultation makes one model call a turn at most: the decision's.
        generate = not (b is not None and b.is_consult and t.s.state == State.COLLECTING)
        t.memo[key] = t.deps.knowledge.answer(question, generate=generate, context=context)
    return t.memo[key]
