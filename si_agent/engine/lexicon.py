"""Words the rule engine recognises: confirm, cancel, modify, retry, questions.

These are recognition vocabularies, not replies; replies live in ``replies``.
"""

from __future__ import annotations

import re

CANCEL = ("取消", "不办了", "不要办了", "不想办了", "算了", "退出", "不用了", "放弃", "终止办理",
          "结束办理", "撤销", "不弄了")
CONFIRM = frozenset({
    "确认", "确定", "是的", "是", "对", "对的", "没问题", "提交", "好", "好的", "可以", "嗯",
    "没错", "正确", "确认提交", "确认无误", "无误", "确定提交", "ok", "yes", "行", "同意",
    "好的提交吧", "提交吧", "确认办理", "对的没问题", "是的没问题", "信息无误", "没有问题",
})
CONFIRM_PREFIX = ("确认", "确定", "提交", "没问题", "无误")
NEGATION = ("不", "别", "没", "先不", "暂不")
MODIFY = ("修改", "改一下", "改成", "改为", "更改", "更正", "不对", "错了", "有误", "写错",
          "填错", "要改", "改下", "换成", "换一下")
RETRY = ("重试", "再试", "重新提交", "再提交", "再次提交", "再来一次", "重新试", "再交")
ACCEPT = frozenset({
    "办理", "办", "好的", "好", "是的", "是", "可以", "开始", "嗯", "要", "需要", "行", "ok",
    "好的办理吧", "好的办理", "办理吧", "开始办理", "我要办理", "帮我办理", "要办理", "好办理",
    "确认办理", "确定", "确认", "对", "对的",
})
INTENT = ("我要", "我想", "帮我", "请帮", "给我", "麻烦", "想办", "要办", "办理", "申请", "申领",
          "我需要", "需要办", "替我", "开始")
# Phrases marking a knowledge question rather than a request to act.
QUESTION = re.compile(
    r"请问|问一下|问下|咨询|需要什么|要什么|什么材料|哪些材料|材料|条件|流程|手续|多久|多长时间|"
    r"怎么|怎样|如何|为什么|为啥|能不能|可不可以|是否|有没有|吗|么|呢|[？?]"
)
CONVERSATIONAL = frozenset({
    "你好", "您好", "谢谢", "好的", "是的", "不是", "不对", "可以", "知道", "不知道", "什么",
    "办理", "确认", "取消", "再见", "你是谁", "帮助", "人工", "转人工", "没有", "还有",
})
FILE_PATH = re.compile(r"[^\s，。,;；\"'“”]+\.(?:jpe?g|png|bmp|webp)\b", re.IGNORECASE)
PUNCT = re.compile(r"[\s,，。.!！~～、;；:：\"'“”‘’()（）]+")


def bare(text: str) -> str:
    """The text without spaces and punctuation, lower-cased, for set lookups."""
    return PUNCT.sub("", text).lower()


def is_cancel(text: str) -> bool:
    b = bare(text)
    return any(b == w or b.startswith(w) or (w in b and len(b) <= len(w) + 4) for w in CANCEL)


def is_confirm(text: str) -> bool:
    b = bare(text)
    if b in CONFIRM:
        return True
    return b.startswith(CONFIRM_PREFIX) and not any(n in b for n in NEGATION)


def is_accept(text: str) -> bool:
    return bare(text) in ACCEPT


def is_retry(text: str) -> bool:
    b = bare(text)
    return any(w in b for w in RETRY)


def wants_modify(text: str) -> bool:
    return any(w in text for w in MODIFY)


def is_question(text: str) -> bool:
    return bool(QUESTION.search(text))


def has_intent(text: str) -> bool:
    return any(w in text for w in INTENT)
