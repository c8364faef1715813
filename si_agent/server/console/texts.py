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
# What a conversation was waiting for besides a field (the analytics' "where it ended").
AWAITED_STEPS = {"confirm": "确认", "retry": "重试", "confirming": "确认", "failed": "提交失败后",
                 "executing": "提交中", "collecting": "填写中", "done": "办结后", "idle": "未开始"}
