"""Personal names in Chinese characters.

A name is 2 to 20 CJK ideographs (``min_length``/``max_length`` change the
bounds); parts of a transliterated name are joined by the middle dot "·",
which may be typed as "•", "・" or "." ("买买提.艾力" -> "买买提·艾力"). Spaces
between characters are dropped. Digits, Latin letters and other symbols are
refused, and so are words and phrases that are clearly not names: a curated
list ("社保", "本人", "自由职业"), phrases with a sentence particle or a
refusal ("就不说了吧", "嗯嗯好的", "打错了"), runs that start with a
pronoun or a function word no surname starts with ("我要", "了要"), and runs of
Chinese numerals ("三三零一零二", "一二三"; "伍六一", "王一", "张三" are names).

``extract`` only finds a name after a cue: "我叫", "姓名是", "姓名：", "名字叫",
"名字", "本人", "叫" opening a clause ("我姓王，叫王芳"), and "我是" when the
name ends the clause.
"""

from __future__ import annotations

import re

from . import messages
from .base import Found, Result, invalid, valid

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_DOTS = "·•・‧･."
_DOT_BETWEEN = re.compile(rf"(?<=[{_CJK}])\s*[{_DOTS}]\s*(?=[{_CJK}])")
_SPACE_BETWEEN = re.compile(rf"(?<=[{_CJK}])\s+(?=[{_CJK}])")
_NAME = re.compile(rf"[{_CJK}]+(?:·[{_CJK}]+)*")
_CJK_CHAR = re.compile(rf"[{_CJK}]")

DEFAULT_MIN = 2
DEFAULT_MAX = 20

# Words that follow a cue ("我是", "本人") but are not names.
NOT_NAMES = frozenset(
    "社保 医保 本人 自己 一个 什么 谁 你们 我们 他们 这个 那个 这里 那里 不知道 没有 "
    "退休 退休人员 退休职工 职工 员工 在职 学生 老师 农民 工人 个人 公司 单位 企业 "
    "客户 用户 市民 居民 群众 老人 家属 失业 失业人员 灵活就业 灵活就业人员 个体户 "
    "参保人 参保人员 办事 办理 查询 咨询 想问 请问 问一下 来办 新来的 外地 本地 "
    "男的 女的 男生 女生 先生 女士 小姐 阿姨 叔叔 大爷 师傅 老板 经理 领导 代办 "
    "朋友 家人 父亲 母亲 爸爸 妈妈 儿子 女儿 老公 老婆 丈夫 妻子 "
    "自由职业 自由职业者 自由 职业 打工 打工的 上班 上班族 无业 待业 务工 务工人员 农民工 "
    "个体 个体工商户 老乡 本人的 好吧 是的 对的 不是 不对 没事 再见 "
    "名字 姓名 全名 真名 随便 应该 更正 重新 修改 继续 取消 人工 投诉 客服 机器人 跳过 略过 "
    "原来 原来的 同上 一样 测试 管理员 等等 等一下".split()
)
# Parts no name contains: sentence particles, refusals, fillers, verbs of the dialogue.
_NOT_IN_NAME = re.compile(
    "[吧呢吗嘛啊呀哦嗯么哈啦哎唉呃额]|不想|不说|不给|不方便|不愿|不告诉|保密|隐私|算了|"
    "打错|写错|输错|说错|弄错|好的|可以|谢谢|知道|什么|怎么|为什么|职业|工作|单位|公司|"
    "社保|医保|养老|失业|挂失|办理|查询|申请|身份证|手机|电话|号码|地址|银行|"
    # Someone asked for, or a reference to an answer given before ("叫你们领导来", "同上").
    "你们|领导|经理|联系|和刚才|跟刚才|同上|"
    # Putting off, checking, starting over ("稍后再说", "查一下进度", "看看结果", "清空重来").
    "再说|稍后|一下|进度|结果|等等|重来|重新|清空|从头|回头|以后|下次|改天|"
    # Times and dates ("上个月底", "去年年底", "下周一"): answers to another question.
    "月底|月初|月末|个月|年底|年初|去年|今年|明年|前年|昨天|今天|明天|前天|后天|星期|礼拜|"
    "上周|下周|本周|这周|上旬|中旬|下旬|以前|之前|以后|之后"
)
# Holidays name a date when said alone or with a time word ("国庆节", "春节前后"), but a
# given name after a surname may be one: 宋国庆, 李建国.
_HOLIDAY = re.compile("^(?:春节|国庆|元旦)|(?:春节|国庆|元旦)(?:节|前|后|期间|假期|那天|左右)")
# First characters of pronouns and function words: no surname starts with them ("是李四"
# is 李四 after a 是 the frame "不是张伟是李四" left).
_NOT_A_SURNAME = frozenset("我你您他她它咱们的了就也还不没请这哪谁个先是稍再")
# Chinese numerals: spoken digits (with the radio forms 幺/洞/两/拐), units, the
# financial forms. A name made only of them ("三三零一零二", "一二三", "壹贰叁") is a
# number read out, not a name: every name starts with a surname, and the only common
# surnames among them are 万, 伍 and 陆 ("伍六一", "陆九", "万一" stay names).
_NUMERALS = frozenset("零〇洞一幺二两三四五六七拐八九十廿卅百千万亿"
                      "壹贰叁肆伍陆柒捌玖拾佰仟")
_NUMERAL_SURNAMES = frozenset("万伍陆")
_NUMERAL_NAME_MAX = 3  # a surname and a given name of one or two characters
# A particle after the name ("李四吧", "张伟啊"): the name is what comes before it.
_TRAILING_PARTICLE = re.compile("[吧啊呀哦嘛哈啦]+$")
# Words that end the name in "我叫张三想查社保" and may not start one.
_STOP_WORDS = (
    "身份证", "手机", "电话", "号码", "今年", "性别", "出生", "住在", "现在", "来自",
    "户籍", "年龄", "社保", "医保", "需要", "办理", "查询", "申请", "咨询", "工作",
    "的", "想", "要", "在", "是", "我", "了", "啊", "呀", "吧", "呢", "哦", "嗯",
    "今", "也", "就", "还", "请", "帮", "麻", "谢",
)
_STOP = re.compile("|".join(_STOP_WORDS))
# Characters that start a verb phrase or a pronoun, hardly ever a surname.
_NOT_FIRST = frozenset("的想要在是我了今也就还请帮来去从办问说做给跟被把不没很都刚已这那哪谁个有错改")
_PARTICLE = re.compile("[的了吧呢啊呀哦嗯么吗]")
_CUES = re.compile(r"我叫|我是|姓名是|姓名叫|姓名[:：]?|名字叫|名字是|名字[:：]?|本人|(?:^|(?<=[，,。\s]))叫")
_RUN = re.compile(rf"\s*([{_CJK}]+(?:[{_DOTS}][{_CJK}]+)*)")
_CLAUSE_END = re.compile(r"\s|[,，。.!！?？;；:：、)）]|$")


def _normalise(text: str) -> str:
    return _SPACE_BETWEEN.sub("", _DOT_BETWEEN.sub("·", text))


def _problem(name: str, low: int, high: int) -> str | None:
    if not _NAME.fullmatch(name):
        if any(c.isdigit() for c in name):
            return messages.NAME_DIGITS
        if any(c.isascii() and c.isalpha() for c in name):
            return messages.NAME_LATIN
        if "·" in name and _NAME.fullmatch(name.replace("·", "")):
            return messages.NAME_DOT
        return messages.NAME_CHARS
    count = len(_CJK_CHAR.findall(name))
    if count < low:
        return messages.NAME_TOO_SHORT.format(n=low)
    if count > high:
        return messages.NAME_TOO_LONG.format(n=high)
    if (name in NOT_NAMES or _NOT_IN_NAME.search(name) or _HOLIDAY.search(name)
            or name[0] in _NOT_A_SURNAME):
        return messages.NAME_NOT_A_NAME.format(text=name)
    if _only_numerals(name):
        return messages.NAME_NUMERALS.format(text=name)
    return None


def _only_numerals(name: str) -> bool:
    """A run of Chinese numerals, not a surname (one of 万/伍/陆) with a short given name."""
    if not set(name) <= _NUMERALS:
        return False
    return not (name[0] in _NUMERAL_SURNAMES and len(name) <= _NUMERAL_NAME_MAX)


def check(
    raw: str, *, min_length: int | None = None, max_length: int | None = None, **_: object
) -> Result:
    """A whole answer that is a name; the value has its dots normalised to "·"."""
    name = _normalise(raw)
    low, high = min_length or DEFAULT_MIN, max_length or DEFAULT_MAX
    bare = _TRAILING_PARTICLE.sub("", name)
    if bare != name and _problem(bare, low, high) is None:
        name = bare
    error = _problem(name, low, high)
    return invalid(error) if error else valid(name)


def _name_after(text: str, cue: re.Match) -> tuple[int, str] | None:
    """The name right after ``cue``: (start, name as written), or None."""
    run = _RUN.match(text, cue.end())
    if run is None or run.group(1)[0] in _NOT_FIRST:
        return None
    start, written = run.start(1), run.group(1)
    if cue.group() == "我是":
        # "我是来办社保的", "我是说真的": after 我是 only a whole clause can be a name.
        if not _CLAUSE_END.match(text, run.end()) or _PARTICLE.search(written):
            return None
        return start, written
    stop = _STOP.search(written, 2)
    if stop is not None:
        written = written[: stop.start()].rstrip(_DOTS)
    return start, written


def extract(
    text: str, *, min_length: int | None = None, max_length: int | None = None, **_: object
) -> list[Found]:
    """Names introduced by a cue ("我叫张三，身份证..." gives 张三)."""
    low = min_length or DEFAULT_MIN
    found = []
    for cue in _CUES.finditer(text):
        hit = _name_after(text, cue)
        if hit is None:
            continue
        start, written = hit
        name = _normalise(written)
        # Without a middle dot, a run longer than 4 characters is more likely
        # a name followed by other words than a long name.
        limit = DEFAULT_MAX if "·" in name else 4
        if max_length:
            limit = min(limit, max_length)
        if name.endswith("人"):
            continue
        if _problem(name, low, limit) is None:
            found.append(Found(name, start, start + len(written), written))
    return found
