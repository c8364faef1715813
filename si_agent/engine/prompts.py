"""Every text si_agent sends to a model: the dialogue's system prompt, built per
turn, and the browser agent's two prompts (``AGENT_SYSTEM``, ``AGENT_CHECK``).

Everything here is redacted before it is built: values of personal fields are
masked, and the user's text carries placeholders (<ID_1>, <PHONE_1>...).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date

from si_agent.config.model import Business, FieldDef
from si_agent.core import consult
from si_agent.core.decision import SessionView
from si_agent.core.display import display
from si_agent.core.state import FieldStatus, State

STATE_NAMES = {
    State.IDLE: "空闲（尚未开始办理业务）",
    State.COLLECTING: "信息收集中",
    State.STEP_EXECUTING: "材料核验中",
    State.CONFIRMING: "等待用户确认提交",
    State.EXECUTING: "提交中",
    State.DONE: "已完成上一项业务",
    State.FAILED: "提交失败，等待重试或修改",
}

SYSTEM = """你是社保智能帮办助手的决策模块，负责理解用户的话并调用工具。
只能调用本轮提供的工具，不要编造工具、业务编号或字段名；不要直接回答办理结果。
- 用户提供了业务需要的信息：调用 provide_field，可一次给出多个字段，值照抄用户原话。
- 用户要修改已填的信息：调用 modify_info。
- 用户明确要办理或查询某项业务（“我要领失业金”“帮我挂失社保卡”“帮我查养老金到账没”）：调用 match_business。
- 用户提出政策、材料、条件、时间、金额等问题，或问能不能、会不会（“怎么领”“多久到账”“主动辞职还能领失业金不”
  “忘了认证会停发不”）：调用 answer_question，不要开始办理；如果问题涉及某项业务，填写 suggested_business_id，
  由用户回复“办理”后再开始。答案是“不符合条件”时同样只回答。
- 用户既提问又提供信息：同时调用 answer_question 和 provide_field。
- 用户要取消：调用 cancel_flow；确认提交：调用 confirm_submit。
- 办理中用户明确提到另一项业务：先调用 answer_question 并在 suggested_business_id 填该业务，询问是否切换；
  用户同意（或已被问过后回答“好/是的/办理”）：调用 switch_business，当前业务会保留；
  用户明确说不办当前业务了（如“不办这个了，帮我查养老金”）：先 cancel_flow 再 match_business。
- 用户想继续之前暂停或刚取消的业务（“继续”“刚才那个接着办”）：调用 match_business，原来填写的信息会保留。
- 用户不愿提供某项信息或问为什么要提供（“不想说”“为什么要这个”）：调用 explain_field(topic=why)，不要把拒绝当成字段值；
  用户问某项信息是什么意思、去哪里找：调用 explain_field(topic=help)。
- 寒暄、致谢、道别、找人工或投诉、问你是谁：调用 small_talk。
- 问有哪些业务、能办什么、要业务菜单（“你们能干啥”“还能办些啥”）：调用 small_talk(kind=services)，
  办理中也一样，当前业务和待填信息保持不变。
- 用户说“重新开始”“从头开始”：调用 small_talk(kind=start_over)（有业务在办时会先问用户是否确定，不要把它当成字段值）。
- 身份证号、手机号、银行卡号等已替换为 <ID_1>、<PHONE_1>、<CARD_1> 这样的占位符，填写参数时原样使用占位符。
- 拿不准时不要猜，宁可不调用工具。

今天是{today}。
当前状态：{state}
{business}{pending}
可办理的业务：
{catalog}"""

BUSINESS = """当前业务：{name}（{id}）
已收集：{collected}
待收集：{pending}
正在等待：{awaiting}"""

NO_BUSINESS = "当前业务：无"

CONSULT = """当前业务：{name}（{id}），是一次咨询：按主题收集信息，回复由系统按模板生成，你只负责提取。
- 用户的话里有任何主题的信息（不限当前主题）：调用 provide_field，一次给出全部槽位，值照抄用户原话；说错后更正的，给出新值。
- 用户说不清楚、先空着、不想说：调用 skip_field，field_keys 填所说的槽位（没点名就填当前主题待收集的槽位）。
- 用户提问：调用 answer_question（可同时调用 provide_field）。
当前主题：{theme}
{themes}"""


def system_prompt(view: SessionView, catalog: Mapping[str, Business]) -> str:
    """The system message for this turn (no raw personal data in it)."""
    listing = "\n".join(f"- {b.id}：{b.name}（{b.description}）" for b in catalog.values())
    return SYSTEM.format(
        today=date.today().isoformat(),
        state=STATE_NAMES.get(State(view.state), view.state),
        business=_business(view) if view.business else NO_BUSINESS,
        pending=_pending_offers(view, catalog),
        catalog=listing,
    )


def _pending_offers(view: SessionView, catalog: Mapping[str, Business]) -> str:
    """Lines on offers the last reply made and businesses put aside."""
    lines = []
    target = catalog.get(view.suggestion) if view.suggestion else None
    if target is not None:
        lines.append(f"上一轮已询问是否办理：{target.name}（{target.id}）")
    if view.start_over_asked:
        lines.append("上一轮已询问是否确定重新开始：用户同意（“确定”“是的”）就调用 "
                     "small_talk(kind=start_over)，不要当成确认提交；说“继续”就接着办理当前业务")
    kept = [catalog[b] for b in view.suspended if b in catalog]
    if kept:
        lines.append("暂停或取消后可恢复的业务：" + "、".join(f"{b.name}（{b.id}）" for b in kept))
    return "".join("\n" + line for line in lines)


def _consult(view: SessionView) -> str:
    """A consultation's slots by theme: collected, skipped, or what may be said."""
    b = view.business
    assert b is not None
    theme = consult.current_theme(b, view.fields)
    lines = []
    for t in b.themes:
        slots = []
        for f in t.slots:
            st = view.fields.get(f.key)
            if st is not None and st.status == FieldStatus.COLLECTED:
                # Free text (health, existing cover) is not repeated to the model.
                shown = "已收集" if f.type == "text" else consult.shown(f, st.value)
                slots.append(f"{f.label}({f.key})={shown}")
            elif st is not None and st.status == FieldStatus.SKIPPED:
                slots.append(f"{f.label}({f.key})=已跳过")
            else:
                slots.append(f"{f.label}({f.key})：待收集，{slot_hint(f)}")
        lines.append(f"{t.label}：" + "；".join(slots))
    return CONSULT.format(name=b.name, id=b.id, theme=theme.label if theme else "无",
                          themes="\n".join(lines))


def slot_hint(f: FieldDef) -> str:
    """What a slot takes, in a few words: its type and choices."""
    if f.options:
        return f.type + "，可选：" + "、".join(o.value for o in f.options)
    if f.buckets:
        return "金额区间：" + "、".join(b.value for b in f.buckets)
    return f.type + (f"，单位{f.unit}" if f.unit else "")


def _business(view: SessionView) -> str:
    b = view.business
    assert b is not None
    if b.is_consult:
        return _consult(view)
    collected, pending = [], []
    for f in b.fields:
        st = view.fields.get(f.key)
        if st is not None and st.status == FieldStatus.COLLECTED:
            collected.append(f"{f.label}({f.key})={display(f.type, st.value)}")
        else:
            options = f"，可选：{'、'.join(o.value for o in f.options)}" if f.options else ""
            pending.append(f"{f.label}({f.key})：{f.type}{options}")
    awaiting = view.awaiting or "无"
    if view.awaiting in b.field_keys:
        awaiting = f"{b.field(view.awaiting).label}({view.awaiting})"
    return BUSINESS.format(
        name=b.name, id=b.id, collected="；".join(collected) or "无",
        pending="；".join(pending) or "无", awaiting=awaiting,
    )


GROUNDED = """你是社保政策咨询助手。只根据下面编号的资料回答群众的问题，用简体中文，简洁易懂。
先用一到三句话直接回答问题（能不能、多少、多久、去哪办），不符合条件的要说明不符合及原因；需要时再补充要点。
每个事实后用 [1]、[2] 这样的编号注明出处。资料里的数字各地不同的，要说明以当地规定为准。
资料不能回答这个问题时，只回复“{not_found}”，不要编造，也不要回答资料以外的问题。
资料：
{passages}"""


def grounded_prompt(passages, not_found: str) -> str:
    """The system message for a model-written answer over retrieved passages; the model
    replies ``not_found`` when they do not answer the question."""
    listed = "\n".join(f"[{p.number}] 《{p.title}》{p.heading}：{p.text}" for p in passages)
    return GROUNDED.format(passages=listed, not_found=not_found)


EXTRACTION = "从用户的话中提取“{label}”，没有就返回 null。"


def extraction_prompt(label: str) -> str:
    """The system message of a per-field extraction call."""
    return EXTRACTION.format(label=label)


# -- the browser agent (si_agent.agent) ---------------------------------------------

# ModelDecider: one next_step call per step.
AGENT_SYSTEM = """你是帮群众在政务网站上办事的浏览器助手。每次只选择一个下一步操作，调用 next_step。
- 元素用方括号里的 ref 指定（如 e12）；只有截图时用 0-1000 的坐标 point。
- 填写的内容只能用任务给出的占位符（如 {{name}}），不要编造或改写个人信息。
- 页面显示受理编号等结果时用 finish 结束并在 output 中给出；缺少必填信息或无法继续时用 finish，success 为 false，并说明缺少什么。
- 参考“已执行的步骤”及其结果，不要重复已经失败的操作。"""

# ModelCheck: did the step do what it meant to? One word back.
AGENT_CHECK = ("浏览器助手刚执行了一步操作。根据操作前后的页面，判断这一步是否达到了目的。"
               "只回答 yes、no 或 uncertain。")
