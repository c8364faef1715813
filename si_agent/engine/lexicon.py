"""Words the rule engine recognises: confirm, cancel, modify, retry, questions.

These are recognition vocabularies, not replies; replies live in ``replies``.
"""

from __future__ import annotations

import re

CANCEL = ("取消", "不办了", "不要办了", "不想办了", "算了", "退出", "不用了", "放弃", "终止办理",
          "结束办理", "撤销", "不弄了", "不查了", "不用查了", "不测了", "不要了", "先不办")
NEGATED_CANCEL = re.compile(r"(不|别|不要|不用|无需|没)(取消|撤销|放弃|退出)")
CONFIRM = frozenset({
    "确认", "确定", "是的", "是", "对", "对的", "没问题", "提交", "好", "好的", "可以", "嗯",
    "没错", "正确", "确认提交", "确认无误", "无误", "确定提交", "ok", "yes", "行", "同意",
    "好的提交吧", "提交吧", "确认办理", "对的没问题", "是的没问题", "信息无误", "没有问题",
    "确认没问题", "都对", "都对的", "全对", "确认了", "提交申请", "好的确认", "嗯确认",
})
CONFIRM_PREFIX = ("确认", "确定", "提交", "没问题", "无误")
NEGATION = ("不", "别", "没", "先不", "暂不", "再看", "等等", "稍等")
MODIFY = ("修改", "改一下", "改成", "改为", "更改", "更正", "不对", "错了", "有误", "写错",
          "填错", "要改", "改下", "换成", "换一下", "输错", "打错")
RETRY = ("重试", "再试", "重新提交", "再提交", "再次提交", "再来一次", "重新试", "再交")
ACCEPT = frozenset({
    "办理", "办", "好的", "好", "是的", "是", "可以", "开始", "嗯", "要", "需要", "行", "ok",
    "好的办理吧", "好的办理", "办理吧", "开始办理", "我要办理", "帮我办理", "要办理", "好办理",
    "确认办理", "确定", "确认", "对", "对的", "查", "查询", "好的查一下", "查一下", "帮我查",
})
INTENT = ("我要", "我想", "帮我", "请帮", "给我", "麻烦", "想办", "要办", "办理", "申请", "申领",
          "我需要", "需要办", "替我", "开始", "查一下", "查询", "查查", "看看", "看一下")
# A knowledge question ("how", "what", "which"), as opposed to a yes/no question.
HOW = re.compile(
    r"请问|问一下|问下|咨询|需要什么|要什么|什么|哪些|哪里|哪儿|材料|条件|流程|手续|多久|"
    r"多长时间|怎么|怎样|如何|为什么|为啥|能不能|可不可以|是否|有没有|要不要|几天|几个|多少|"
    r"想知道|想了解|了解一下"
)
YES_NO = re.compile(r"吗|么|呢|没有|了没|[？?]")
GREETING = frozenset({
    "你好", "您好", "在吗", "在不在", "hi", "hello", "哈喽", "嗨", "你好呀", "早上好", "下午好",
    "晚上好", "有人吗", "你能做什么", "你能帮我做什么", "你会什么", "你可以做什么", "帮助", "help",
    "有什么功能", "能办什么", "可以办什么", "你是谁", "谢谢", "谢谢你", "多谢", "好的谢谢",
})
CONVERSATIONAL = frozenset({
    "你好", "您好", "谢谢", "好的", "是的", "不是", "不对", "可以", "知道", "不知道", "什么",
    "办理", "确认", "取消", "再见", "你是谁", "帮助", "人工", "转人工", "没有", "还有", "确定",
    "没问题", "提交", "对", "对的", "好", "嗯", "行", "在吗",
})
NON_ANSWER = re.compile(r"不知道|不清楚|不记得|忘了|记不清|没有带|不确定|没带")
AGAIN = re.compile(r"再(查|办|来|申请|测算|算|看)|还要(查|办)|也(查|办)一下|另一个|换个人")
# Words between a field's label and the new value: "姓名写错了，应该是张伟".
FILLER = re.compile(
    r"^(?:[\s,，。:：]|写错了|填错了|输错了|打错了|错了|有误|不对|应该是|应该为|应为|改成|改为|换成|"
    r"更正为|是|为)+"
)
FILE_PATH = re.compile(
    r"[^\s，。,;；\"'“”]+\.(?:jpe?g|png|bmp|webp|gif|heic|heif|tiff?|pdf|ofd|docx?)\b", re.IGNORECASE)
PUNCT = re.compile(r"[\s,，。.!！~～、;；:：\"'“”‘’()（）]+")


def bare(text: str) -> str:
    """The text without spaces and punctuation, lower-cased, for set lookups."""
    return PUNCT.sub("", text).lower()


def is_question(text: str) -> bool:
    return bool(HOW.search(text) or YES_NO.search(text))


def is_how_question(text: str) -> bool:
    return bool(HOW.search(text))


# A clause that is nothing but a request to stop: "取消", "先取消吧", "我不办了", "算了".
_CANCEL_CLAUSE = re.compile(
    rf"(?:我|那|那就|就|先|还是|要不|干脆|请|帮我)*(?:{'|'.join(CANCEL)})"
    rf"(?:吧|啦|呀|了|啊|哈|办理|我|{'|'.join(CANCEL)})*"
)
_CLAUSES = re.compile(r"[\s,，。.!！~～、;；]+")


def is_cancel(text: str) -> bool:
    """A request to stop: some clause of the message is only a cancel phrase.

    "我算了一下…" or "旧社保卡不要了，帮我挂失" are not requests to stop.
    """
    if is_how_question(text) or NEGATED_CANCEL.search(bare(text)):
        return False
    return any(_CANCEL_CLAUSE.fullmatch(c.lower()) for c in _CLAUSES.split(text) if c)


def is_confirm(text: str) -> bool:
    b = bare(text)
    if b in CONFIRM:
        return True
    return (b.startswith(CONFIRM_PREFIX) and len(b) <= 6 and not is_question(text)
            and not any(n in b for n in NEGATION))


def is_accept(text: str) -> bool:
    return bare(text) in ACCEPT


def is_retry(text: str) -> bool:
    b = bare(text)
    return any(w in b for w in RETRY)


def wants_modify(text: str) -> bool:
    return any(w in text for w in MODIFY)


def has_intent(text: str) -> bool:
    return any(w in text for w in INTENT)


def is_greeting(text: str) -> bool:
    return bare(text) in GREETING


def is_conversational(text: str) -> bool:
    return bare(text) in CONVERSATIONAL or bare(text) in CONFIRM


def strip_filler(text: str) -> str:
    return FILLER.sub("", text).strip()
