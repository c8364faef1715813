"""Every Chinese text the assistant says that does not come from a business YAML.

Business-specific wording (prompts, error instructions, confirmation and
result templates) lives in ``businesses/*.yaml``; the generic glue lives here,
in one place, so it can be reviewed and translated as a whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from si_agent.config.settings import DEFAULT_HANDOFF

# The assistant's own small talk (greeting, closing, hand-off, switching business) is
# in ``si_agent.config.assistant.AssistantTexts``: staff may override it in YAML.
# A turn of a citizen whose session expired (SI_SESSION_TTL without a message): told once.
SESSION_EXPIRED = "会话已过期，已为您重新开始；如果之前正在办理业务，请重新提供信息。"
EMPTY_MESSAGE = "您好像没有输入内容，请问有什么可以帮您？"
TOO_LONG = "您的消息太长了（超过{limit}个字），请精简后再发送。"
# Content moderation (si_agent.moderation): a message refused by the word list or the
# moderation service is not used (nothing is stored); a reply refused is not shown.
INPUT_REFUSED = ("抱歉，您的消息里有不适宜的内容，我无法处理。请换一种说法告诉我您要办的事，"
                 "例如“社保卡丢了怎么补办”。")
OUTPUT_REFUSED = "抱歉，这条回复没有通过内容检查，不能显示。请换一种问法，或联系{handoff}。"
MODERATION_UNAVAILABLE = "抱歉，消息暂时无法处理，请稍后再发送。"
START = "好的，开始为您办理【{name}】。"
RECORDED = "已记录：{items}。"
INVALID = "{diagnosis}{instruction}"
ESCALATE = (  # followed by the hand-off ticket's text (HANDOFF_*), which names {handoff}
    "{label}已连续{attempts}次未能通过校验。您可以继续输入，也可以回复“取消”结束办理。"
)
DEFAULT_CONFIRM = "请核对以下信息：\n{summary}\n确认无误请回复“确认”提交；需要修改请回复“修改+项目名称”；放弃请回复“取消”。"
SUMMARY_LINE = "· {label}：{value}"
MODIFY_ASK = "好的，请重新提供{label}。"
# A long number heard in a spoken message, read back before it is stored (flow.readback).
READ_BACK = "您说的{items}，对吗？请回答“对”或“不对”。"
READ_BACK_ITEM = "{label}后四位是{tail}"
READ_BACK_AGAIN = "好的，请再说一遍或直接输入{label}。"
CANCELLED = "已为您取消【{name}】的办理，已填写的信息不会提交。还有什么可以帮您？"
# A cancel with values given: they are kept for the session, and the reply says how back.
CANCELLED_KEPT = ("已为您取消【{name}】的办理，已填写的信息不会提交。"
                  "如果还想接着办，回复“继续”即可，刚才填的信息都还在。还有什么可以帮您？")
SUSPENDED_DROPPED = "最多为您保留{limit}项未办完的业务，最早的【{name}】已不再保留。"
DROPPED = "好的，【{name}】不再办理，已填写的信息不会提交。"  # followed by the next business
BUSINESS_GONE = "您之前办理的业务已暂停在线办理，已为您结束该业务。"
NOTHING_TO_CANCEL = "当前没有正在办理的业务。请问有什么可以帮您？"
EXEC_FAILED = "提交未成功：{message}\n您可以回复“重试”再次提交（不会重复提交），或回复“取消”放弃办理。"
QUERY_FAILED = "查询未成功：{message}\n您可以回复“重试”再查一次，或回复“取消”。"
EXEC_REFUSED = (
    "业务系统未受理：{message}\n这个问题重新提交也无法解决。您可以回复“修改+项目名称”修改信息，"
    "回复“取消”结束办理，或联系{handoff}咨询。"
)
REFUSED_REASK = "这项申请无法重新提交。您可以回复“修改+项目名称”修改信息，或回复“取消”结束办理。"
EXEC_STEP_FAILED = "业务系统未通过【{label}】：{message}请重新完成这一步。"
EXECUTOR_CRASHED = "业务系统处理时出现异常，请稍后再试。"
JOB_QUEUED = "您的【{name}】申请已提交，正在办理，结果出来后会第一时间告诉您。"
# The job runner did not take a long-running job: nothing was submitted (EXEC_FAILED).
JOB_NOT_STARTED = "办理服务暂时无法接收申请，申请没有提交。"
JOB_RUNNING = "您的【{name}】申请正在办理中，请稍候。"
JOB_PROGRESS = "当前进度：{progress}"
JOB_CANNOT_CANCEL = "您的【{name}】申请已经提交，正在办理中，无法取消。办理结果出来后会告诉您。"
JOB_UNKNOWN = (
    "提交过程中断，暂时无法确认【{name}】是否已经提交成功。为避免重复提交，请稍后通过“办理进度查询”"
    "查看，或联系{handoff}核实。"
)
ALREADY_DONE = "【{name}】无需再次确认，结果如下：\n"  # then the result again
OUTCOME_AGAIN = "【{name}】已经办理完成，结果如下：\n"  # "提交了吗" right after: the result again
NONE_ONLINE = (  # every business lacks something here (docs/rpa.md: the start-up check)
    "目前没有可以在线办理的业务，请携带身份证到社保经办窗口办理，或联系{handoff}咨询。"
)
BUSINESS_UNAVAILABLE = (
    "【{name}】暂时无法在线办理，请携带身份证到社保经办窗口办理，或联系{handoff}咨询。"
)
STEP_MISMATCH = "{step}上的{label}与您填写的不一致，请核对后重新输入{label}，或回复“重新上传{step}”。"
TYPED_MISMATCH = "您填写的{label}与{step}上的不一致，请核对后重新输入。"
STEP_REDO_ASK = "好的，请重新完成【{label}】。"
EXEC_FIELD_FAILED = "业务系统未通过以下信息：{items}。请重新提供。"
FAILED_REASK = "您可以回复“重试”再次提交，回复“修改+项目名称”修改信息，或回复“取消”放弃办理。"
# Hand-off to a person (si_agent.handoff): a ticket is opened, and the citizen is told what
# will really happen: a person here when one is signed in to the queue within office hours
# and has room (HANDOFF_QUEUED), else the contact and the ticket number.
HANDOFF_QUEUED = ("已为您转人工服务，工单号{number}，目前排在第{position}位。人工客服接入后会在这里回复您，"
                  "等候期间您也可以继续和我对话；回复“结束人工”可退出排队。")
HANDOFF_OFF_HOURS = ("现在不是人工服务时间（{hours}），已为您登记人工服务工单{number}，工作人员上班后按顺序查看。"
                     "如需尽快处理，请联系{handoff}，并告知工单号。")
HANDOFF_NOBODY = ("目前没有人工客服在线，已为您登记人工服务工单{number}，工作人员上线后按顺序查看。"
                  "如需尽快处理，请联系{handoff}，并告知工单号。")
HANDOFF_BUSY = ("人工客服正忙，已为您登记人工服务工单{number}（排在第{position}位），客服空闲后按顺序查看。"
                "如不便等候，请联系{handoff}，并告知工单号。")
HANDOFF_JOINED = "人工客服已接入（工号{staff}），请问有什么可以帮您？"
HANDOFF_RETURNED = "人工客服已将对话交还智能助手，您可以接着和我对话。"
HANDOFF_ENDED = "人工客服已结束本次服务（工单号{number}）。还有什么可以帮您？"
HANDOFF_LEFT = "好的，已为您结束人工服务（工单号{number}）。"  # then ANYTHING_ELSE or CONTINUE
HANDOFF_LOST = ("人工客服的连接中断了，您的工单{number}已重新排队等候。如不便等候，请联系{handoff}，"
                "并告知工单号。")
HANDOFF_NONE = "当前没有进行中的人工服务。"  # then ANYTHING_ELSE or CONTINUE
# For the staff member holding the ticket (a note the citizen's page does not show): a
# message the content moderation refused; the words only for self-harm (flow.handoff).
HANDOFF_REFUSED_NOTE = "〔市民消息未通过内容检查：{categories}〕"
HANDOFF_REFUSED_WORDS = "市民原话：{text}"
HANDOFF_REFUSED_TOLD = "（已向市民显示：{reply}）"
ANYTHING_ELSE = "还有什么可以帮您？"
HANDOFF_OFF_HOURS_ALWAYS = "暂无在线人工服务时间"  # {hours} when SI_HANDOFF_HOURS is never
NO_ANSWER_TEMPLATE = "抱歉，这个问题我暂时无法回答。您可以联系{handoff}咨询，或告诉我您想办理的业务。"
SUGGEST = "您可能需要办理【{name}】，回复“办理”即可开始。"
CONTINUE = "我们继续办理【{name}】。"
# "重新开始" typed with something to lose: asked first; then done, or kept.
START_OVER_ASK = ("重新开始将清除正在办理的【{names}】和已填写的信息。确定要重新开始吗？"
                  "回复“确定”重新开始，回复“继续”接着办理。")
START_OVER_DONE = "好的，已清除【{names}】和已填写的信息。"  # followed by the greeting
START_OVER_KEPT = "好的，不重新开始，已填写的信息都还在。"  # followed by CONTINUE
START_OVER_CHOICES = ("确定", "继续")  # the page's quick replies to START_OVER_ASK
START_OVER_JOB = "您的【{name}】申请已经提交，正在办理中，办理结果出来前不能重新开始。"
# A greeting or a thanks while a business runs: said back in a word, then CONTINUE.
GREETING_BRIEF = "您好！"
CLOSING_BRIEF = "不客气。"
STEP_DONE = "{label}已完成。"
STEP_UNAVAILABLE = (
    "【{label}】暂时无法在线完成，请携带身份证到社保经办窗口办理，或回复“取消”结束办理。"
)
STEP_FAILED = "{label}未通过：{error}"
STEP_CRASHED = "照片暂时无法处理，请稍后重新上传。"
STEP_SUMMARY_VALUE = "已完成"
STEP_NOT_GIVEN = "未上传（可选）"
STEP_DECLINED = "不上传"
STEP_ASK = "好的，请上传【{label}】。"
FORM_UNREADABLE = "【{name}】的办理网站暂时无法访问，请稍后再试。"
STEP_FILE_GONE = "照片的保存时间已过，请重新上传。"
STEP_OPTIONAL_HINT = "这一步可以不做，不需要请回复“跳过”。"
STEP_SKIPPED = "好的，不上传{label}。"
NOT_UNDERSTOOD = "抱歉，我没有理解您的意思。"


def render(template: str, values: Mapping[str, Any] | None = None, /, **extra: Any) -> str:
    """Fill ``{name}`` placeholders; unknown names are left as written.

    ``{handoff}`` (ESCALATE, EXEC_REFUSED, JOB_UNKNOWN, BUSINESS_UNAVAILABLE,
    NO_ANSWER_TEMPLATE) is the contact of the setting SI_HANDOFF_TEXT: pass
    ``handoff=`` the controller's ``handoff_text``; without it, the default
    contact (``DEFAULT_HANDOFF``) is filled in.
    """
    mapping = _Lenient({"handoff": DEFAULT_HANDOFF, **(values or {}), **extra})
    return template.format_map(mapping)


class _Lenient(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


# NO_ANSWER_TEMPLATE with the default contact, for callers that add it as it stands.
NO_ANSWER = render(NO_ANSWER_TEMPLATE)

# Photo step ``face_match`` (si_agent/photo/face.py): re-asks for a photo that
# cannot be compared. The same text is used whichever photo (selfie or
# reference) failed; ``FaceResult.image`` says which one it was.
FACE_NONE = "未检测到人脸，请正对镜头重新拍摄。"
FACE_MULTIPLE = "检测到多张人脸，请单独拍摄。"
FACE_TOO_SMALL = "照片中的人脸太小，请靠近镜头，让面部占满画面的大部分后重新拍摄。"
FACE_BLURRY = "照片中的人脸不够清晰，请保持手机稳定、对焦后重新拍摄。"
FACE_TOO_DARK = "照片太暗，请到光线充足的地方，正对光源重新拍摄。"
FACE_UNREADABLE = "无法读取这张照片，请上传JPG、PNG或WebP格式的照片。"
FACE_NOT_SAME = "人脸照片与身份证照片不是同一人，请本人正对镜头重新拍摄。"
FACE_NO_REFERENCE = "没有找到可以比对的身份证照片，请先重新上传身份证人像面。"
FACE_BAD_REFERENCE = "身份证照片上的人像无法用于比对，请重新上传清晰的身份证人像面。"
PHOTO_NEEDED = "请使用“上传照片”功能发送照片，在对话中输入文件名无法上传。"

# Photo step ``id_photo`` (si_agent/photo/idphoto.py): a 证件照 for a card.
ID_PHOTO_NOT_FRONTAL = "请正对镜头、头部摆正后重新拍摄。"
ID_PHOTO_BACKGROUND = "请在白墙等浅色纯色背景前重新拍摄，背景中不要有其他物品。"
ID_PHOTO_TOO_CLOSE = "离镜头太近了，请稍微远一些，露出头顶和肩膀后重新拍摄。"

# The pieces replies are assembled from (si_agent/flow, si_agent/core): separators,
# list items and short labels, so no citizen-facing text is written in code.
LIST_SEP = "、"  # items of one kind: 姓名、身份证号
# One line of the services list (the assistant text ``services``), per kind of business.
SERVICE_GROUPS = {"handle": "· 在线办理：{names}", "query": "· 查询测算：{names}",
                  "consult": "· 咨询：{names}"}
ITEMS_SEP = "，"  # label-value pairs of a consultation
FIELD_ERRORS_SEP = "；"  # the backend's reasons, one per field
LABELLED = "{label}：{text}"  # a label and what is said about it
RECORDED_ITEM = "{label} {value}"  # one value in RECORDED's {items}
STEP_VALUE_UNREADABLE = "{label}无法识别（{error}）。{instruction}"  # a value a photo step read
NOT_GIVEN = "未提供"  # a consultation's slot the citizen skipped, in its summary
AMOUNT_WAN = "{amount:g}万元"  # an amount of 元 of 10,000 or more
STAFF_HISTORY = "〔人工客服代为填写：{label}〕"  # the history's line for a value staff set
UPLOAD_HISTORY = "[上传照片]"  # what the history says the citizen sent: never the image

# The terminal chat's status line (si_agent/cli_chat.py): where the dialogue stands.
CHAT_STATES = {"idle": "空闲", "collecting": "填写信息", "step_executing": "上传材料",
               "confirming": "待确认", "executing": "办理中", "done": "已办结",
               "failed": "未成功"}
CHAT_AWAITING = {"confirm": "确认提交", "retry": "重试或修改"}
CHAT_AWAITING_OTHER = "您的回复"  # a consultation's question, or anything without a label
