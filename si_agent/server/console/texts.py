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
REPLY_TOO_LONG = "回复不能超过 {limit} 个字。"
BAD_OUTCOME = "请选择结束结果。"
