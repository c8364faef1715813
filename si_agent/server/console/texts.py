"""Every Chinese text the console's views say (the templates hold the pages' own words)."""

from __future__ import annotations

SIGN_IN_FIRST = "请先登录工作人员控制台。"
CSRF_FAILED = "页面已过期或请求来源无法确认，请刷新页面后重试。"
ROLE_REQUIRED = "该账号没有工作人员权限，无法使用控制台（需要 staff 或 admin 角色）。"
WRONG_PASSWORD = "用户名或密码不正确。"
BAD_TOKEN = "令牌无效或已过期，请从统一身份认证重新获取。"
TOO_MANY_ATTEMPTS = "登录尝试次数过多，请 {seconds} 秒后再试。"
SIGNED_OUT = "您已退出登录。"

# The relevance gate's verdicts (rag.relevance.Gate), as staff read them.
GATES = {
    "passed": "通过：找到的内容与问题相关，会据此回答。",
    "no_hits": "未通过：没有检索到任何内容（或都因不涉及问题中的险种/方案而被排除）。",
    "no_domain_word": "未通过：问题里没有社保领域词（可在术语表 _terms.yaml 的 domain 中补充）。",
    "below_floor": "未通过：最相关内容的相似度低于阈值。",
}
CORRECTION_SOURCES = {"table": "术语表", "pinyin": "同音字"}
MODES = {"hybrid": "混合（RRF）", "dense": "向量（余弦）", "bm25": "关键词（BM25）"}

# The conversation review.
NO_SUCH_BUSINESS = "没有这个业务。"
NO_SUCH_OUTCOME = "没有这种办理结果。"
NO_SUCH_FEEDBACK = "没有这种评价筛选。"
BAD_SINCE = "时间范围应写成 30m、2h、7d 这样的时长。"
# The dialogue states, as the review shows them (the citizen page's words).
STATES = {"idle": "空闲", "collecting": "信息收集中", "step_executing": "材料核验中",
          "confirming": "待确认", "executing": "提交中", "done": "已完成", "failed": "提交失败"}
# What a conversation was waiting for besides a field (the analytics' "where it ended").
AWAITED_STEPS = {"confirm": "确认", "retry": "重试", "confirming": "确认", "failed": "提交失败后",
                 "executing": "提交中", "collecting": "填写中", "done": "办结后", "idle": "未开始"}

# The sensitive-word list screen (moderation.py).
MODERATION_ACTIONS = {"mask": "打码（以＊代替）", "refuse": "拒绝（固定回复）", "flag": "标记（照常处理，记录待复核）"}
MODERATION_WHERE = {"input": "市民消息", "output": "助手回复"}
MODERATION_VALID = "检查通过：词表没有错误（尚未保存）。"
MODERATION_SAVED = "已保存为版本 {version}：本机所有服务进程将在几秒内使用新词表。"
MODERATION_CHANGED = ("保存失败：在您编辑期间，词表已被他人修改并保存。下方保留了您编辑的内容；"
                      "请先在新标签页查看最新词表，确认后再保存（再次保存将覆盖他人的修改）。")
HTTP_ERRORS = {404: "页面不存在。", 405: "不支持该请求方法。", 413: "提交的内容过大，未保存。"}
HTTP_ERROR = "请求无法处理，请返回上一页重试。"

# The businesses screen (businesses.py).
BUSINESS_SAVED = ("已保存，原文件已备份。正在运行的助手仍使用启动时的业务配置：重启服务后，"
                  "市民才会用到新的配置（预览对话已经按新配置运行）。")
BUSINESS_INVALID = "业务配置有错误（见下方），未保存。"
BUSINESS_CHANGED = ("保存失败：在您编辑期间，这个文件已被他人修改。下方保留了您编辑的内容；"
                    "请在新标签页查看最新内容后再决定。")
PREVIEW_INVALID = "业务配置有错误（见下方），无法预览。"
PREVIEW_FAILED = "预览助手无法启动：{reason}"
# Curated answers (si_agent/server/console/curated.py).
CURATED_DONE = {
    "added": "已添加常用答案。",
    "saved": "已保存修改。",
    "enabled": "已启用。",
    "disabled": "已停用：市民提问时不再使用这条答案。",
    "deleted": "已删除。",
    "taken": "无法启用：它的问题已被另一条常用答案使用。",
}
CURATED_IMPORTED = "导入完成：新增 {added} 条，更新 {updated} 条。"
CURATED_NO_FILE = "请选择要导入的 .xlsx 或 .csv 文件。"
CURATED_INVALID = "内容不完整，请检查后再保存。"
CURATED_FIELDS = {
    "question": "请填写问题（不超过200字）。",
    "answer": "请填写答案（不超过4000字）。",
    "source": "请填写来源（如政策文件或常见问题表的名称）。",
    "as_of": "日期无法识别，请写作 2025-06-01 或 2025年6月。",
    "paraphrases": "相似问法过多或过长（最多50个，每个不超过200字）。",
}
# Knowledge documents (si_agent.server.console.documents).
DOC_STATES = {"draft": "草稿（未发布）", "published": "已发布", "superseded": "已被新版本替换",
              "withdrawn": "已停用"}
DOC_FORMATS = {"pdf": "PDF", "docx": "Word", "xlsx": "Excel", "html": "网页", "markdown": "Markdown"}
DOC_NO_FILE = "请选择要上传的文件。"
DOC_TITLE_NEEDED = "请填写文档标题（文件中也没有可用的标题）。"
DOC_TITLE_TOO_LONG = "标题不能超过 {limit} 个字。"
DOC_SOURCE_NEEDED = "请填写来源（如发文机关、文号或网址），市民看到的答复会注明来源。"
DOC_SOURCE_TOO_LONG = "来源不能超过 {limit} 个字。"
DOC_AS_OF_BAD = "请填写内容的核对日期，格式为 2026-01 或 2026-01-15。"
DOC_BUSINESS_UNKNOWN = "所选业务不存在：{ids}。"
DOC_NOT_FOUND = "没有这份文档（可能已被删除）。"
DOC_VERSION_NOT_DRAFT = "这个版本不是草稿，不能发布或丢弃（请上传新版本替换）。"
DOC_UPLOADED = "已上传为草稿（版本 {version}）。请检查下方的转换文字和分段，确认无误后点击“发布”。"
DOC_PUBLISHED = "已发布版本 {version}：{chunks} 个分段已加入知识库（用时 {seconds:.1f} 秒），市民提问即可检索到。"
DOC_DISCARDED = "已丢弃草稿版本 {version}。"
DOC_DELETED = "已删除《{title}》及其全部版本，知识库中已不再检索到它。"
DOC_NO_KNOWLEDGE = "本部署没有启用知识库（{detail}），文档可以上传预览，但无法发布。"
DOC_INDEX_FAILED = "知识库暂时无法写入，未做任何更改，请稍后重试：{detail}"
DOC_CLASHES = "与内置知识库的文档编号冲突，请重新上传。"
DOC_MISSING_LIBRARY = ("本部署没有安装文档转换所需的程序库（pip install 'si_agent[rag]'），"
                       "暂时无法上传这种格式的文件。")
DOC_DELETE_UNCONFIRMED = "请先勾选“确认删除”，再点击删除。"
# The hand-off queue (console.handoff).
REASONS = {"asked": "要求人工", "complaint": "投诉", "repeated_failures": "多次校验未通过",
           "model": "模型判断需人工"}
TICKET_STATES = {"waiting": "排队中", "held": "处理中", "closed": "已结束"}
OUTCOMES = {"resolved": "已解决", "handed_back": "已交还助手", "callback": "需回电或线下办理",
            "no_reply": "市民未回复", "left": "市民已退出"}
# What staff may close a ticket with (handed back and left have their own ways).
CLOSING_OUTCOMES = ("resolved", "callback", "no_reply")
TICKET_TAKEN = "该工单已被 {holder} 接单。"
TICKET_CLOSED = "该工单已结束。"
TICKET_NOT_FOUND = "没有这张工单（可能已过保存期）。"
TICKET_NOT_HELD = "您已不再持有该工单（页面长时间未响应，工单已回到队列），请重新接单。"
EMPTY_REPLY = "回复不能为空。"
FIELD_SET = "已代市民填写“{label}”：{shown}。市民的页面上会看到这条说明。"
FIELD_SET_MESSAGE = "我已为您填写“{label}”：{shown}。"  # sent to the citizen, as the staff member
FIELD_NOT_COLLECTING = "市民现在不在填写“{business}”的信息，不能代填。"
FIELD_UNKNOWN = "请选择要代填的信息项。"
FIELD_INVALID = "“{label}”未通过校验：{error}"
FIELD_NOT_SET = "“{label}”没有填入：{reply}"
KNOWLEDGE_PUT_IN = "已将知识库的答案放入回复框：请核对、按市民的情况修改后再发送。"
KNOWLEDGE_NONE = "知识库没有找到能回答“{question}”的内容，请换个问法。"
KNOWLEDGE_EMPTY = "请输入要在知识库中查询的问题。"
KNOWLEDGE_SOURCES = "来源：{sources}"
REPLY_TOO_LONG = "回复不能超过 {limit} 个字。"
# A staff reply goes through the same output check as every reply, and is masked.
REPLY_REFUSED = "这条回复没有通过内容检查（{categories}），未发送给市民，请修改后重新发送。"
REPLY_MASKED = "回复已发送，其中的{what}已打码后再发给市民：市民看到的是下面对话中的文字。"
REPLY_MASKED_WHAT = {"personal": "身份证号、银行卡号或手机号", "words": "不适宜的词语",
                     "both": "身份证号、银行卡号、手机号和不适宜的词语"}
BAD_OUTCOME = "请选择结束结果。"
