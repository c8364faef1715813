"""Words the rule engine recognises: confirm, cancel, modify, retry, questions,
refusals, small talk, correction preambles.

These are recognition vocabularies, not replies; replies live in ``replies``.
"""

from __future__ import annotations

import re
import unicodedata

from si_agent.chinese import to_simplified

CANCEL = ("取消", "不办了", "不要办了", "不想办了", "算了", "退出", "不用了", "放弃", "终止办理",
          "结束办理", "撤销", "不弄了", "不查了", "不用查了", "不测了", "不要了", "先不办",
          "拉倒")  # 东北 "拉倒吧" (a clause of its own: "意外就拉倒吧" drops one choice)
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
    "继续", "继续办理", "继续办", "接着办", "继续吧", "好的继续", "好继续", "要继续", "嗯继续",
})
# Yes to "要先办理【…】吗？" while another business runs: not a confirm word ("确认" submits
# the business in progress) and not "继续" (carry on with it).
SWITCH_YES = frozenset({
    "好", "好的", "好吧", "是", "是的", "对", "对的", "嗯", "嗯嗯", "行", "可以", "要", "需要", "ok",
    "办理", "办", "办理吧", "好的办理", "好的办理吧", "开始", "先办", "先办吧", "好先办",
    "切换", "切换吧", "换吧", "换", "好的换", "行吧", "先查", "先查吧", "好的先查",
})
# No to that question ("不用，先把挂失办完", "继续办挂失").
DECLINE = re.compile(
    r"^(?:不用|不要|不了|不必|先不|别|不换|不切换|不需要|算了吧?$|不$|继续|接着|还是先|先把)")
# Starting the whole conversation again (the page's 重新开始, typed): the whole message.
START_OVER = frozenset({
    "重新开始", "从头开始", "从新开始", "重来", "重新来", "从头来", "从头再来", "重新来过",
    "全部重来", "全部重新开始", "一切重来", "我要重新开始", "重新开始吧", "从头开始吧", "重来吧",
})
# Taking a kept business up again: "继续办理【社保卡挂失】", "接着办挂失".
RESUME = re.compile(r"继续|接着|接下去|回到")
INTENT = ("我要", "我想", "帮我", "请帮", "给我", "麻烦", "想办", "要办", "办理", "申请", "申领",
          "我需要", "需要办", "替我", "开始", "查一下", "查询", "查查", "看看", "看一下")
# A knowledge question ("how", "what", "which"), as opposed to a yes/no question;
# with the dialect forms (咋, 啥, 啷个, 肿么), "谁", "几" (not 好几/十几), an either-or
# ("是先挂失还是直接补办") and the traditional forms of the commonest words; "不是什么
# 顶梁柱", "没什么" deny, they ask nothing.
# "啥保险也没有", "什么都不知道": none at all, no question.
_NONE_AT_ALL = r"[^，,。？?吗呢]{0,6}[也都](?:没|不)"
HOW = re.compile((
    r"请问|问一下|问下|想问|咨询|需要什么|要什么|(?<!不是)(?<!没)(?<!不算)什么(?!{NONE})|哪些|哪里|哪儿|"
    r"材料|条件|流程|手续|多久|"
    r"多长时间|怎么|怎样|如何|为什么|为啥|能不能|可不可以|是否|有没有|要不要|几天|几个|多少|哪|"
    r"想知道|想了解|了解一下|咋|啥(?!{NONE})|啷个|肿么|几时|多会|谁|(?<![好十几])几(?!乎)|是[^，,。？?]{0,15}还是|"
    r"什麼|甚麼|怎麼|為什麼|哪裡|條件|手續"
).replace("{NONE}", _NONE_AT_ALL))
# A yes/no question: a particle, "A不A" (会不会, 算不算, 交没交), or a closing 不/没
# after a clause ("领失业金不", "审核过没"; a bare "不" or "没有" is an answer);
# "不对不对" repeats a no and asks nothing.
YES_NO = re.compile(
    r"吗|(?<!什)么|嗎|麼|呢|(?<![也都])没有|了没|(?<![不没])(?:是不是|对不对|行不行|好不好)|[？?]|"
    r"(?<![不没])([\u4e00-\u9fff])[不没唔]\1|"
    r"(?<=[\u4e00-\u9fff]{2})[不没][啊呀呢哈嘛吧咧]?[\s。.!！~～]*$"
)
# A request opening the message or a clause: "我要领失业金", "帮我查下养老金到账没",
# "麻烦给我办…", "赶紧帮我冻结" ("我妈过来帮我带孩子" is no request to the assistant, nor
# "帮我妈刷脸认证" a request for oneself).
# A wish ("我要…", "我想…", "想做个…"; not "我想问/了解…" nor "我想看看…政策") and a plea for help
# ("帮我…", "能帮我挂失吗"): asked as a yes/no question only the plea is a request
# ("我需要挂失吗", "我要领失业金吗" ask whether they must or may).
_WISH = (r"(?:^|(?<=[，,。；;！!？?\s]))(?:那|那就)?(?:(?:[我俺]|请|麻烦(?:你|您)?)(?:就|还|也)?"
         r"(?:要|想|想要|需要|得)|想要?(?=[做办查算测申开弄]))"
         r"(?!问|了解|咨询|知道|请教|[^，,。；;！!？?\s]*(?:政策|规定))")
_PLEA = (r"(?:^|(?<=[，,。；;！!？?\s]))(?:请|麻烦|你|您|赶紧|赶快|快|能|可以|能不能|就)*"
         r"(?:帮(?:我|俺)(?![妈爸爹娘家们老婆公哥姐弟妹儿女孩])|帮忙|替我|给我(?:办|查|开|申请))")
REQUEST_OPENING = re.compile(f"{_WISH}|{_PLEA}")
PLEA = re.compile(_PLEA)
# Asking to read the rules ("我想看看失业金政策"), stated without a question mark.
ABOUT_RULES = re.compile(r"政策|规定|文件")
# A wish not to ("我不想领失业金了", "我不要办了", "不用帮我查"): no request.
NOT_WANTED = re.compile(r"(?:[我俺]|也|就|还|先)(?:不想|不要|不用|不需要|不打算)|不用帮|别帮")
# Still possible despite a problem ("没记住受理编号，还能查进度吗"): a question, even about a
# look-up.
STILL = re.compile(r"还能|还可以|还用|还会|还要|还得")
# Asking to look something up: "能查吗", "可以看看吗".
LOOKUP = re.compile(r"查|看看|看一下|看下")
# What may happen or is allowed, in a yes/no question: "会停发不", "还能领吗", "要交税吗".
MODAL = re.compile(r"会|能|可以|算|影响|允许|需要|要|用不用|是否")
GREETING = frozenset({
    "你好", "您好", "在吗", "在不在", "hi", "hello", "哈喽", "嗨", "你好呀", "早上好", "下午好",
    "晚上好", "有人吗", "你能做什么", "你能帮我做什么", "你会什么", "你可以做什么", "帮助", "help",
    "有什么功能", "能办什么", "可以办什么", "你好啊", "您好啊", "哈喽你好", "你好在吗",
})
SELF_INTRO = frozenset({
    "你是谁", "你是谁啊", "你是谁呀", "您是谁", "你是什么", "你叫什么", "你叫什么名字", "你是机器人吗",
    "你是真人吗", "你是人吗", "你是人工吗", "你是ai吗", "是机器人吗", "你是机器人", "你是哪位",
})
# A closing: thanks, goodbye, "that's all" (the whole message, particles aside).
CLOSING = re.compile(
    r"(?:好的?|嗯|行|ok|okay|可以|知道了|明白了?|收到|了解了?|那|那就|这样啊|好吧)*"
    r"(?:谢谢(?:你|您|啦|了)?|多谢|谢了|感谢(?:你|您)?|非常感谢|太感谢了|辛苦了?|麻烦了|"
    r"没事了?|没有了|没了|没别的了|就这些|就这样|不用了谢谢|再见|拜拜|bye|886)+"
    # Particles, and goodbyes after one ("谢谢啊再见"): a goodbye straight after the
    # thanks is the group above's, so no flood of "再见" splits two ways (quadratic).
    r"(?:[啊呀哈啦了吧哦噢]+(?:再见|拜拜)+)*[啊呀哈啦了吧哦噢]*"
    r"(?:那?我?(?:明天|下次|改天|回头|有空)再(?:来|问|办|找你))?"
)
# Asking for a person, or to complain: the hand-off text.
# (人工关节、人工晶体… are medical terms, not a person asked for.)
_PERSON = r"人工(?!关节|晶体|耳蜗|授精|髋|膝|心脏|肾|费|智能|成本)|真人|客服|投诉|举报"
HANDOFF = re.compile(rf"{_PERSON}|找.{{0,3}}领导")
# Asking to be put through, however long the message: "侬帮我寻个客服打电话给我好伐".
FETCH_PERSON = re.compile(
    rf"(?:帮|给|替)(?:我|俺|阿拉)(?:找|寻|叫|转|接|联系)(?:个|一个|一下|位)?(?:{_PERSON})")
HANDOFF_MAX = 12  # characters; a longer message is about something else, unless it opens
# with the request ("我要投诉你们窗口的工作人员态度差").
HANDOFF_OPENING = re.compile(rf"^(?:我要|我想|我得|要|想|帮我|请|麻烦)?(?:转|找|接)?(?:{_PERSON})")
# A clause that asks for a person or complains, wherever it stands in the message
# ("我搞不懂，能不能让人工帮我弄啊"); "寄到公司客服部" names no one to talk to.
ASKS_PERSON = re.compile(
    rf"(?:转|找|寻|要|让|叫|接|联系|有没有|能不能|给我)[^，,。]{{0,4}}?(?:{_PERSON})|投诉|举报"
    rf"|(?:{_PERSON})(?:服务|帮|来)")
# Declining something: "不想说", "不方便", "为什么要这个" while a field is awaited.
REFUSAL = re.compile(
    r"不想(?:说|给|填|提供|告诉|透露|讲|选|写)|不愿意?(?:说|给|填|提供|告诉|透露)?|"
    r"不太?方便(?!去|来|到|出门|走|过去|跑)|"
    r"不好说|不告诉|不能说|不便(?:说|透露|告诉|提供)|不透露|^(?:这是|这个|属于)?(?:保密|隐私)(?:的|吧|啊|呀)?$|"
    r"(?:就)?不说了|不给了|不填了|"
    r"(?:能|可以)不(?:填|给|选|说)|不(?:填|给|选|说)(?:行不行|可以吗|不行吗|可不可以)|"
    r"(?:为什么|为啥|干嘛|干吗|凭什么)(?:还|一定|非得|必须)?(?:要|得)"
    r"(?:这个|提供|填|给|选|说|告诉|写|[^，,。？?!！]{0,6}?(?:号|名字|姓名|地址|电话|卡|信息|户口|证|这个))|"
    r"要这个(?:干嘛|干什么|做什么)"
)
# Asking what the field asked for means: "这是什么意思", "填什么", "在哪找".
ASKS_MEANING = re.compile(
    r"什么意思|啥意思|(?<!不)是什么|是啥|指什么|指的是|怎么填|填什么|填啥|选哪个|选哪|有啥区别|有什么区别|"
    r"区别|在哪找|在哪看|在哪查|在哪里|哪里看|哪里找|怎么查|怎么看|不懂|不明白|看不懂"
)
# A preamble before a corrected or hesitant answer: "打错了，是张伟", "嗯，地址的话…".
PREAMBLE = re.compile(
    r"^(?:(?:哦不|嗯|呃|额|啊|哦|噢|那个|这个嘛|就是|不好意思|抱歉|对不起|打错了|写错了|输错了|说错了|"
    r"弄错了|错了|更正一下|更正|纠正一下|我再说一遍|重新说一下|不对|我想想|让我想想|等一下|稍等|"
    r"应该是|应该为|应为|我看看|是(?!的))[\s,，。.:：!！~～、…]*)+"
)
# The words a closing or a filler reply is made of, with nothing to act on.
FILLER_ONLY = re.compile(
    r"(?:嗯|啊|哦|噢|呃|额|好的?|好滴|好嘞|行|对|对的|是的?|ok|okay|收到|明白|了解|知道了|可以)+"
    r"[了啦呀吧哈的]*"
)
CONVERSATIONAL = frozenset({
    "你好", "您好", "谢谢", "好的", "是的", "不是", "不对", "可以", "知道", "不知道", "什么",
    "办理", "确认", "取消", "再见", "你是谁", "帮助", "人工", "转人工", "没有", "还有", "确定",
    "没问题", "提交", "对", "对的", "好", "嗯", "行", "在吗",
})
NON_ANSWER = re.compile(r"不知道|不清楚|不记得|忘了|记不清|没有带|不确定|没带")
# A consultation's slot declined or unknown ("先空着", "收入不想说"): skipped, not asked again.
DECLINE_SLOT = re.compile(
    r"不(?:太)?清楚|不知道|先空着|空着|不想说|就不说了|不说了|不方便(?:说|透露)|保密|跳过|说不好"
    r"|说不准|不好说|没想好|不告诉|暂时不说|不确定|不想填|不想回答|不固定")
# Ending a consultation for good ("不咨询了"); "先这样，明天再聊" only pauses it.
STOP_CONSULT = re.compile(r"不(?:咨询|问|聊)了|不想(?:咨询|问|聊)了|结束咨询")
# A later value that replaces one given before ("不对", "说错了", "改成"), and, for a
# several-choice slot, one added to it ("再加一个", "还有").
CORRECTION = re.compile(r"不对|说错|错了|改成|改为|改一下|换成|其实|应该是|更正|重新说"
                        r"|说少了|说多了|少说了|多说了|说低了|说高了")
ADDITION = re.compile(r"再加|加上|加一个|还有|也要|也想|另外")
AGAIN = re.compile(r"再(查|办|来|申请|测算|算|看)|还要(查|办)|也(查|办)一下|另一个|换个人")
# Words between a field's label and the new value: "姓名写错了，应该是张伟".
FILLER = re.compile(
    r"^(?:[\s,，。:：]|写错了|填错了|输错了|打错了|错了|有误|不对|应该是|应该为|应为|改成|改为|换成|"
    r"更正为|是|为)+"
)
# Going on without an optional step: "跳过", "不上传了", "不用证件照，用身份证上的照片".
SKIP = re.compile(r"跳过|略过|不(?:用|要|想|必|需要)?(?:上传|传|拍)|^(?:不用|不需要|不要|不必)了?$"
                  r"|不(?:用|要|想|必|需要)[^，,。]{0,4}照|没有(?:证件照|照片)|用身份证(?:上的)?照片"
                  r"|先不(?:上传|传|拍)?了?$")
_NEGATION = re.compile(r"不(?:用|要|需要|想|必|上传|传)|没有|无需|免")
FILE_PATH = re.compile(
    # Tried only where a run of path characters starts: linear on "a.a.a…", not quadratic.
    r"(?<![^\s，。,;；\"'“”])"
    r"[^\s，。,;；\"'“”]+\.(?:jpe?g|png|bmp|webp|gif|heic|heif|tiff?|pdf|ofd|docx?)\b", re.IGNORECASE)
PUNCT = re.compile(r"[\s,，。.!！~～、;；:：\"'“”‘’()（）]+")


def simplified(text: str) -> str:
    """``text`` in Simplified characters ("我要投訴你們" → "我要投诉你们"), so that every
    word list reads a message typed in Traditional; the text itself when the
    conversion would change its length (values are read from it as typed)."""
    converted = to_simplified(text)
    return converted if len(converted) == len(text) else text


# Asking how the business just finished went ("我的申请提交了吗", "办好了没有").
OUTCOME_QUESTION = re.compile(
    r"(?:提交|交|办|弄|申请|受理)(?:上|好|成|成功|完)?了(?:吗|没|么|嘛|没有)|提交成功|"
    r"(?:结果|情况)(?:怎么样|如何|呢)|成功了(?:吗|没|么)")

def bare(text: str) -> str:
    """The text without spaces and punctuation, lower-cased, for set lookups."""
    return PUNCT.sub("", text).lower()


def is_question(text: str) -> bool:
    return bool(HOW.search(text) or YES_NO.search(text))


def is_how_question(text: str) -> bool:
    return bool(HOW.search(text))


# A request to stop: "取消", "先取消吧", "我不办了", "算了".
# (噉/咁: Cantonese "then"; 今朝/今天…: "for today")
_TODAY = r"今朝|今天|今儿个?|今日|这回|这次|现在"
_CANCEL_UNIT = (
    rf"(?:我|那|就|先|还是|要不|干脆|请|帮我|想|要|噉|咁|{_TODAY})*(?:{'|'.join(CANCEL)})"
    rf"(?:吧|啦|呀|了|啊|哈|办理|我|{'|'.join(CANCEL)})*"
)
_CLAUSES = re.compile(r"[\s,，。.!！~～、;；]+")
# Stopping doing something: "这卡我不办了", "还是不挂失了", "备案不办了", "不改了".
_STOP_UNIT = (
    r"(?:这卡|这张卡|这个|这项|那个|社保卡|卡|备案|业务|申请|转移|手续|认证|测算|登记)?"
    r"(?:卡|备案|业务|申请|转移|手续|认证|测算|登记|挂失)?"
    rf"(?:我们|我|咱们|阿拉|俺|就|还是|那|噉|先|暂时|干脆|{_TODAY})*(?:不|别|唔|莫|冇|无爱|毋爱)(?:要|想|用)?"
    r"(?:办|办理|挂失|挂|申请|申领|转|转移|备案|查|测算|测|算|领|登记|认证|弄|搞|整|寄|改|变更|"
    r"参保)"
    # (咧/哩/咯: 西北、湘 了; "先不提交了" is no stop: the confirmation waits)
    r"[\u4e00-\u9fff]{0,5}?(?:了|喇|嘞|咧|哩|咯)(?:吧|啦|呀|啊)?"
)
# Putting it aside for now: "这个先放一放吧", "先搁着", "回头再说", "改天再办".
_PAUSE_UNIT = (
    # (one way to read each word: "那就" is 那 + 就, so a flood of them stays linear)
    r"(?:这个|这事儿?|这项|那|就|还是|要不|我们?)*(?:先|暂时|暂且)?"
    r"(?:放一放|放放|放一下|搁一搁|搁一下|搁着|放着|缓一缓|缓缓|缓一下|"
    # "先放到这" (but "先别提交，我再看看" keeps it waiting for the citizen's 确认)
    r"放到这(?:里|儿)?|放在这(?:里|儿)?|"
    r"(?:以后|回头|过两天|过几天|改天|下次|下回|改日|晚点|等等)再(?:说|办|弄|搞|整|来|办理))"
    r"(?:吧|啦|呀|了|啊|哈)*"
)
# A clause that is nothing but such requests, one after another ("算了不转了", "那不办了").
_CANCEL_CLAUSE = re.compile(
    rf"(?:{_CANCEL_UNIT}|{_PAUSE_UNIT})(?:{_CANCEL_UNIT}|{_STOP_UNIT}|{_PAUSE_UNIT})*")
_STOP_CLAUSE = re.compile(rf"(?:{_STOP_UNIT})(?:{_CANCEL_UNIT}|{_STOP_UNIT}|{_PAUSE_UNIT})*")
_FOR_NOW = re.compile(r"先不|暂时不|暂不|先别|先莫|放|搁|缓|再说|再办|再弄|再搞|再来")


def is_cancel(text: str) -> bool:
    """A request to stop, or to put the business aside ("这个先放一放吧"): some clause
    of the message is only a cancel phrase (the business is kept either way).

    "我算了一下…" or "旧社保卡不要了，帮我挂失" are not requests to stop.
    """
    if NEGATED_CANCEL.search(bare(text)):
        return False
    # (a clause asking how is no cancel; another may be: "一点几我哪晓得 不算了不算了")
    return any(_CANCEL_CLAUSE.fullmatch(c.lower()) or _STOP_CLAUSE.fullmatch(c)
               for c in _CLAUSES.split(text) if c and not is_how_question(c))


def abandons(text: str) -> bool:
    """Stopping for good ("不办这个了", "我不挂失了"), not for now ("先不挂失了")."""
    if NEGATED_CANCEL.search(bare(text)):
        return False
    return any((_CANCEL_CLAUSE.fullmatch(c.lower()) or _STOP_CLAUSE.fullmatch(c))
               and not _FOR_NOW.search(c) for c in _CLAUSES.split(text) if c)


def is_decline(text: str) -> bool:
    return bool(DECLINE.search(bare(text)))


def is_confirm(text: str) -> bool:
    b = bare(text)
    if b in CONFIRM:
        return True
    return (b.startswith(CONFIRM_PREFIX) and len(b) <= 6 and not is_question(text)
            and "一下" not in b and not any(n in b for n in NEGATION))


def is_accept(text: str) -> bool:
    return bare(text) in ACCEPT


def is_retry(text: str) -> bool:
    b = bare(text)
    return any(w in b for w in RETRY) and not _NEGATED_RETRY.search(b)


_NEGATED_RETRY = re.compile(rf"(?:不|别|不要|不用|无需)(?:{'|'.join(RETRY)})")


def declines_step(text: str, label: str) -> bool:
    """Going on without an optional step offered alongside: "跳过", "不用证件照",
    "证件照不上传了", "确认，不用照片" (a clause that negates the step or a photo)."""
    if re.search(r"跳过|略过|不(?:用|要|想|必|需要)?(?:上传|传)了?$", text):
        return True
    return any(_NEGATION.search(c) and (label in c or "照" in c) for c in clauses(text))


def clauses(text: str) -> list[str]:
    """The message's clauses, split at punctuation."""
    return [c for c in _CLAUSES.split(text) if c]


def wants_modify(text: str) -> bool:
    return any(w in text for w in MODIFY)


def has_intent(text: str) -> bool:
    return any(w in text for w in INTENT)


def is_greeting(text: str) -> bool:
    return bare(text) in GREETING


# A greeting proper, as opposed to the capability questions GREETING also holds ("帮助",
# "你能做什么"), which ask for the services list.
_SALUTATION = re.compile(r"你好|您好|在吗|在不在|有人吗|hi|hello|哈喽|嗨|早上好|下午好|晚上好")


def is_salutation(text: str) -> bool:
    """A greeting that only says hello ("你好", "在吗", "早上好")."""
    return is_greeting(text) and bool(_SALUTATION.search(bare(text)))


# An accept or confirm word that asks to act ("办理", "确认", "继续", "提交"), not a plain
# acknowledgment ("好的", "嗯", "对"): said with nothing in progress or suggested, it asks
# which business is meant.
_ACTS = re.compile(r"办|确认|确定|提交|开始|继续|接着|查|同意")
# Interjections that say nothing when a message is made only of them ("啊", "哎呀");
# not 嗯 (a yes) nor 哦 next to 好 ("哦好的" is an acknowledgment, caught before).
_INTERJECTIONS = "啊呀哦噢喔呃额唉哎诶欸咦哈嘿呵嗷"


def asks_to_act(text: str) -> bool:
    """Only a word asking to go ahead ("办理", "确认", "继续办理"), with no business named."""
    b = bare(text)
    return (b in ACCEPT or b in CONFIRM) and bool(_ACTS.search(b))


def is_contentless(text: str) -> bool:
    """Nothing but punctuation, symbols and interjections ("？？", "。。。", "啊", "……", "😅"):
    no question, no value, no word to act on."""
    return not any(
        c not in _INTERJECTIONS and unicodedata.category(c)[0] in "LN" for c in text)


def is_thanks(text: str) -> bool:
    """A closing that thanks ("谢谢", "好的谢谢", "辛苦了"), not one that only says there is
    nothing more ("没有了" may answer a field) or goodbye ("再见": leaving mid-business?)."""
    b = bare(text)
    return bool(CLOSING.fullmatch(b)) and bool(_THANKS.search(b)) and not _BYE.search(b)


_THANKS = re.compile(r"谢|辛苦|麻烦了")
_BYE = re.compile(r"再见|拜拜|bye|886|再来|再问|再办|再找")


def is_conversational(text: str) -> bool:
    b = bare(text)
    return (b in CONVERSATIONAL or b in CONFIRM or bool(FILLER_ONLY.fullmatch(b))
            or bool(CLOSING.fullmatch(b)))


def small_talk(text: str) -> str | None:
    """The kind of small talk the whole message is, or None: ``greeting``,
    ``closing``, ``handoff`` or ``self_intro`` (the keys of the assistant texts)."""
    b = bare(text).rstrip("?？")
    if not b:
        return None
    if b in SELF_INTRO:
        return "self_intro"
    short = len(b) <= HANDOFF_MAX and not any(c.isdigit() for c in b)
    if (short and HANDOFF.search(b)) or HANDOFF_OPENING.match(b) or FETCH_PERSON.search(b) or any(
            ASKS_PERSON.search(c) for c in clauses(text) if len(c) <= HANDOFF_MAX):
        return "handoff"  # or one clause asks for a person ("…，能不能让人工帮我弄")
    if CLOSING.fullmatch(b):
        return "closing"
    if b in GREETING:
        return "greeting"
    return None


def is_refusal(text: str) -> bool:
    """Declining to give what is asked ("不想说", "为什么要这个"), not a value."""
    return bool(REFUSAL.search(text)) and not NEGATED_REFUSAL.search(text)


NEGATED_REFUSAL = re.compile(r"没有?不方便|不是不(?:想|愿意?|方便)")


def is_preamble_only(text: str) -> bool:
    """Nothing but a correction or hesitation preamble ("打错了", "嗯，这个嘛")."""
    return bool(PREAMBLE.fullmatch(text.strip()))


def is_switch_yes(text: str) -> bool:
    return bare(text) in SWITCH_YES


def is_start_over(text: str) -> bool:
    return bare(text) in START_OVER


def is_start_over_yes(text: str) -> bool:
    """Yes to "确定要重新开始吗？" (not "继续", which keeps the business)."""
    return (is_switch_yes(text) or is_confirm(text)) and not RESUME.search(text)


# A value given as what to go by: "就按一算", "那按最低档来吧", "照60岁算好了".
TAKEN_AS = re.compile(
    r"^(?:那|那就|就|先|都)*(?:按|按照|照)(?P<value>[^，,。？?！!\s]{1,8}?)"
    r"(?:来算|来|算|计算)(?:吧|好了|就行|就好|了|啊|呗)*[。.!！~～]*$")


def strip_preamble(text: str) -> str:
    """The answer without a correction or hesitation preamble ("打错了，是张伟" → "张伟"),
    or the value a "就按一算" gives."""
    rest = PREAMBLE.sub("", text).strip()
    taken = TAKEN_AS.match(rest)
    if taken is not None:
        rest = taken.group("value")
    return rest or text


def strip_filler(text: str) -> str:
    return FILLER.sub("", text).strip()
