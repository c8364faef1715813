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
