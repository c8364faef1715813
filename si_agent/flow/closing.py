"""How a reply ends: what the dialogue needs next, or that it was not understood.

Shared by the turn and the job driver (after an outcome is applied).
"""

from __future__ import annotations

from collections.abc import Sequence

from si_agent import replies
from si_agent.config.model import Business, Theme
from si_agent.core import consult
from si_agent.core.display import display
from si_agent.core.state import AT_REST, Awaiting, State
from si_agent.flow.moves import Flow, join


def not_understood(t: Flow) -> None:
    s = t.s
    if t.st.resumed:
        return  # "继续" took the consultation up again: its theme is asked next
    if t.st.start_over_asked and s.state not in AT_REST and t.business is not None:
        # "继续" (or no) to "确定要重新开始吗？": the business goes on, its prompt next.
        t.st.parts.append(replies.START_OVER_KEPT + replies.render(replies.CONTINUE,
                                                                   name=t.business.name))
        return
    if s.state in AT_REST:
        t.st.parts.append(t.greeting())
        t.st.asked = True
    elif (t.st.pending_suggestion and t.business is not None
          and t.st.pending_suggestion != t.business.id):
        # No switch after "要先办理…吗？": the business in progress goes on.
        t.st.parts.append(replies.render(t.deps.texts.switch_kept,
                                         current=t.business.name))
    elif s.state == State.EXECUTING:
        return  # phase 2 says where the submission stands
    elif s.state == State.FAILED and not s.retryable:
        t.st.parts.append(replies.REFUSED_REASK)
        t.st.asked = True
    else:
        t.st.parts.append(replies.NOT_UNDERSTOOD)


def consult_lines(t: Flow, business: Business, summed: Sequence[Theme] = ()) -> list[str]:
    """What the turn did to a consultation's slots: the received line first. A slot
    whose one-slot theme is ``summed`` up in the same reply is left to the summary,
    which says it in the theme's words ("已有保障：无。" once, not twice)."""
    texts = business.consult
    assert texts is not None
    said = {theme.slots[0].key for theme in summed if len(theme.slots) == 1}
    keys = sorted((k for k in t.st.received if k not in said), key=business.field_keys.index)
    received = [replies.render(texts.received, items=consult.items(business, keys, t.s.fields))]
    return [*(received if keys else []), *t.st.consult_lines]


def prompt_next(t: Flow) -> None:
    """End the reply with what the dialogue needs next, unless already asked."""
    if t.st.asked:
        return
    s, b = t.s, t.business
    if b is None or s.state in (*AT_REST, State.EXECUTING):
        return
    if s.state == State.COLLECTING and b.is_consult:
        if t.st.consult_lines or t.st.received or not t.st.opened:  # (the opening asks)
            t.st.parts.extend(consult_lines(t, b, consult.summed_up(b, s.fields,
                                                                    t.st.theme_asked)))
            t.st.parts.append(consult.next_move(b, s.fields, t.st.theme_asked))
    elif s.state == State.COLLECTING:
        pending = t.pending(b)
        if not pending:
            return
        pending_keys = [f.key for f in pending]
        first = s.awaiting if s.awaiting in pending_keys else pending_keys[0]
        s.awaiting = first
        ask = [b.field(first)] + [f for f in pending if f.key != first]
        t.st.parts.extend(f.prompt for f in ask[: max(1, b.ask.max_fields)]
                          if f.key not in t.st.reasked)
    elif s.state == State.STEP_EXECUTING:
        step = t.step
        if step is not None:
            s.awaiting = step.id
            t.st.parts.append(step.prompt)
    elif s.state == State.CONFIRMING:
        s.awaiting = Awaiting.CONFIRM
        t.st.parts.append(confirm_text(t, b))
    elif s.state == State.FAILED:
        s.awaiting = Awaiting.RETRY if s.retryable else None
        t.st.parts.append(replies.FAILED_REASK if s.retryable else replies.REFUSED_REASK)


def confirm_text(t: Flow, b: Business) -> str:
    lines = [
        replies.render(replies.SUMMARY_LINE, label=f.label,
                       value=display(f.type, t.s.fields[f.key].value))
        for f in b.fields if t.s.fields.get(f.key) and t.s.fields[f.key].value is not None
    ]
    lines += [
        replies.render(replies.SUMMARY_LINE, label=st.label, value=(
            replies.STEP_SUMMARY_VALUE if st.id in t.s.step_data
            else replies.STEP_DECLINED if st.id in t.s.skipped
            else replies.STEP_NOT_GIVEN))
        for st in b.steps if st.id in t.s.step_data or st.optional
    ]
    text = replies.render(b.confirm_text or replies.DEFAULT_CONFIRM,
                          summary="\n".join(lines), name=b.name)
    optional = [st.prompt for st in b.steps if st.optional
                and st.id not in t.s.step_data and st.id not in t.s.skipped]
    return join([text, *optional])
