"""Form labels, options and buttons as they are compared, by the rpa executor and the
agent: "姓名 *", "姓名：", "姓　名" and "申请人姓名（必填）" carry the label 姓名 or contain it;
"Date of birth" is "Date of Birth"; 工商银行 means the option 中国工商银行.
``RESULT_PATTERN`` is where both read a result: a government site's 受理编号.

- ``normalize``: the label as shown to people (full width folded, no spaces,
  asterisks, colons or required marks);
- ``fold``: the label as compared (also case-folded, no punctuation at all);
- ``assign``: value keys paired with the labels of a page's controls, each pair
  saying which ``Rule`` matched (exact, containment, token similarity), never two
  controls for one key nor two keys for one control when the best is not ahead of
  the next by a margin;
- ``repeats``: the controls asking again for another's value (Confirm email);
- ``best_option``: the option of a select or radio group meaning a value (its
  wording, value, containment, a Chinese short form whose characters it has in order);
- ``button_meaning``: whether a button's words mean "next page" or "submit".
"""

from __future__ import annotations

import enum
import functools
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources

# The default ``success`` of an rpa business and of an agent's goal (its groups become
# the output).
RESULT_PATTERN = r"受理编号[:：]\s*(?P<application_no>SI\d{14})"

# Marks a form puts beside a label to say it must (or may) be filled.
_REQUIRED = re.compile(r"[(\[]\s*(?:必填|必选|必填项|选填|可选|required|optional)\s*[)\]]"
                       r"|\b(?:required|optional)\s*$", re.IGNORECASE)
_NOISE = re.compile(r"[\s*:]+")
_PUNCT = re.compile(r"[\W_]+")  # not a letter or digit (Chinese characters are letters)
_WORD = re.compile(r"[a-z0-9]+|[^\W\d_a-z]", re.IGNORECASE)


def normalize(label: str) -> str:
    """``label`` with full-width forms folded (NFKC), and no spaces, asterisks, colons
    or required marks (（必填）, (required))."""
    text = _REQUIRED.sub("", unicodedata.normalize("NFKC", label))
    return _NOISE.sub("", text)


def fold(label: str) -> str:
    """``label`` as compared: ``normalize``'s, case-folded and without punctuation."""
    text = _REQUIRED.sub("", unicodedata.normalize("NFKC", label))
    return _PUNCT.sub("", text.casefold())


def _tokens(label: str) -> str:
    """The words of a label (a Chinese character is one), sorted, space-separated."""
    text = _REQUIRED.sub("", unicodedata.normalize("NFKC", label)).casefold()
    return " ".join(_WORD.findall(text))


class Rule(enum.StrEnum):
    """How a label was found to fit (strongest first)."""

    EXACT = "exact"  # equal once folded
    SYNONYM = "synonym"  # equal once words that mean the same are folded ("失业时间" / "失业日期")
    CONTAINS = "contains"  # one contains the other ("email" / "Email Address")
    WORDS = "words"  # every word of one is in the other ("事故时间" / "事故发生时间")
    TOKENS = "tokens"  # most words shared ("date of birth" / "birth date")


_TIER = {Rule.EXACT: 4.0, Rule.SYNONYM: 3.0, Rule.CONTAINS: 2.0, Rule.WORDS: 1.0,
         Rule.TOKENS: 0.0}
TOKEN_THRESHOLD = 0.85  # token similarity (0-1) a label needs to fit
MARGIN = 0.1  # how far ahead of the next candidate a non-exact match must be


@dataclass(frozen=True)
class LabelMatch:
    """A value key paired with the control at ``index``: by which ``rule``, how
    well (``score``, 0-1 within the rule) and through which of its names."""

    index: int
    rule: Rule
    score: float
    name: str

    @property
    def rank(self) -> float:
        return _TIER[self.rule] + self.score


def similarity(label: str, name: str) -> tuple[Rule, float] | None:
    """How ``label`` (a control's) fits ``name`` (one a value is known by), or None:
    equal once folded; equal once words meaning the same are folded (``words``); one
    containing the other, a containment at the end (the label's head: "受伤职工姓名" /
    "姓名") scoring higher; every word of one in the other; most words shared. A
    qualifier in brackets ("（元）", "(optional)") may be left out, and an acronym
    stands for the words it is made of ("SSN" / "Social Security number")."""
    a, b = fold(label), fold(name)
    if not a or not b:
        return None
    if a == b:
        return Rule.EXACT, 1.0
    best: tuple[Rule, float] | None = None
    short, long = sorted((a, b), key=len)
    # A containment needs two characters of Chinese or a whole word of English.
    if len(short) >= 2 and short in long and (not short.isascii() or _whole_word(
            short, label if fold(label) == long else name)):
        best = Rule.CONTAINS, _contained_score(short, long, long.endswith(short))
    pairs = [(_words(x, folded), _words(y, folded)) for x in _variants(label)
             for y in _variants(name) for folded in (True, False)]
    for x, y in pairs:
        found = _word_fit(*_acronyms(x, y))
        if found is not None and (best is None or _TIER[found[0]] + found[1]
                                  > _TIER[best[0]] + best[1]):
            best = found
    if best is not None:
        return best
    from rapidfuzz import fuzz  # the rpa extra

    score = max(fuzz.token_sort_ratio(_tokens(label), _tokens(name)),
                fuzz.ratio(a, b) if not a.isascii() else 0.0) / 100
    return (Rule.TOKENS, score) if score >= TOKEN_THRESHOLD else None


def _contained_score(short: Sequence[str] | str, long: Sequence[str] | str, head: bool) -> float:
    """How well a containment fits: the share of the longer it covers, and more when the
    shorter is the longer's end (its head word: 姓名 in 受伤职工姓名, phone in Work phone)."""
    ratio = len(short) / len(long)
    return 0.5 + ratio / 2 if head else ratio / 2


# A question's number before its label: "12. ", "3) ", "(3)", "一、", "Q4: ".
_NUMBERED = re.compile(r"^\s*(?:q?\d{1,3}[.)、:]|[(（]\s*(?:\d{1,3}|[一二三四五六七八九十]{1,3})\s*[)）]"
                       r"|[一二三四五六七八九十]{1,3}、)\s*", re.IGNORECASE)
_BRACKETS = re.compile(r"[(（\[【][^()（）\[\]【】]*[)）\]】]")
_STOP = frozenset("a an the of for to in on at and or your you my is are do did does please "
                  "this that what which will would be with from by if any been have has i am "
                  "me we our it its as".split())
_EMAIL = re.compile(r"^\S+@\S+\.\w+$")


def _variants(label: str) -> list[str]:
    """The label, and without its bracketed qualifiers or its question number
    ("12. Type of travel document", "（三）", "一、") when it has some."""
    text = _NUMBERED.sub("", unicodedata.normalize("NFKC", label)) or label
    bare = _BRACKETS.sub(" ", text).strip()
    return [text, bare] if bare and bare != text else [text]


@functools.cache
def _lexicon() -> tuple[dict[tuple[str, ...], str], int]:
    """Words of ``si_agent/data/label_words.yaml`` (as word tuples) -> their meaning."""
    import yaml

    raw = resources.files("si_agent").joinpath("data/label_words.yaml").read_text("utf-8")
    table: dict[tuple[str, ...], str] = {}
    for meaning, words in (yaml.safe_load(raw) or {}).items():
        for word in words:
            table[tuple(_stem(w) for w in _WORD.findall(
                unicodedata.normalize("NFKC", str(word)).casefold()))] = f"#{meaning}"
    return table, max((len(k) for k in table), default=1)


def _stem(word: str) -> str:
    """An English word without its usual endings (moved, moving -> mov; names -> name)."""
    if not word.isascii() or len(word) <= 4:
        return word
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and not word.endswith("ss") and len(word) - len(suffix) >= 3:
            word = word[:-len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def _words(label: str, meanings: bool = True) -> list[tuple[str, str]]:
    """The label's words (a Chinese character is one) as (word, as written), English
    ones stemmed, and (``meanings``) runs of words that mean one thing (``_lexicon``)
    as that meaning."""
    text = _REQUIRED.sub("", label).strip()
    if _EMAIL.match(text):  # an example address as a placeholder: you@example.com
        return [("#email", text)]
    raw = _WORD.findall(text)
    words = [_stem(w.casefold()) for w in raw]
    table, longest = _lexicon() if meanings else ({}, 0)
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(words):
        for n in range(min(longest, len(words) - i), 0, -1):
            meaning = table.get(tuple(words[i:i + n]))
            if meaning is not None:
                if not out or out[-1][0] != meaning:
                    out.append((meaning, " ".join(raw[i:i + n])))
                i += n
                break
        else:
            out.append((words[i], raw[i]))
            i += 1
    return out


def _acronyms(x: list[tuple[str, str]], y: list[tuple[str, str]]) -> tuple[list[str], list[str]]:
    """Both word lists, the words of one that an acronym of the other is made of
    ("Social Security number" for "SSN") replaced by it."""
    def expand(acr: list[tuple[str, str]], full: list[tuple[str, str]]) -> list[str]:
        words = [w for w, _ in full]
        for word, shown in acr:
            if word.startswith("#") or not (2 <= len(shown) <= 5 and shown.isascii() and shown.isalpha()
                    and shown.isupper()):
                continue
            n, initials = len(shown), shown.casefold()
            for i in range(len(full) - n + 1):
                run = full[i:i + n]
                if all(s[:1].isascii() and s[:1].isalpha() for _, s in run) and "".join(
                        s[0].casefold() for _, s in run) == initials and len(words) == len(full):
                    words[i:i + n] = [_stem(initials)] + [""] * (n - 1)
                    break
        return [w for w in words if w]
    return expand(y, x), expand(x, y)


def _word_fit(x: list[str], y: list[str]) -> tuple[Rule, float] | None:
    """How two word lists fit: equal (``SYNONYM``), one a run of the other's words
    (``CONTAINS``), or every content word of one among the other's (``WORDS``; in
    order for Chinese)."""
    if not x or not y:
        return None
    if x == y:
        return Rule.SYNONYM, 1.0
    short, long = sorted((x, y), key=len)
    single = len(short) == 1
    if not single or short[0].startswith("#") or (short[0].isascii() and len(short[0]) >= 3):
        n = len(short)
        for i in range(len(long) - n + 1):
            if long[i:i + n] == short:
                return Rule.CONTAINS, _contained_score(short, long, i + n == len(long))
    # The shorter by content words: "Application for a" is one word beside
    # "Application type".
    a, b = sorted(([w for w in short if w not in _STOP], [w for w in long if w not in _STOP]),
                  key=len)
    if not a:
        return None
    if all(w.isascii() for w in a):
        if len(a) < 2 and not (len(a[0]) >= 4 and not a[0].startswith("#")):
            return None
        if all(any(v == w or (len(w) >= 4 and v.startswith(w)) for v in b) for w in a):
            return Rule.WORDS, len(a) / len(b)
        return None
    if len(a) >= 3 and _in_order(a, b):  # Chinese: 事故时间 in 事故发生时间
        return Rule.WORDS, len(a) / len(b)
    return None


def _in_order(short: Sequence[str], long: Sequence[str]) -> bool:
    it = iter(long)
    return all(w in it for w in short)


def _whole_word(short: str, text: str) -> bool:
    """``short`` (folded, ASCII) is made of whole words of ``text``."""
    words = [fold(w) for w in re.findall(r"[A-Za-z0-9]+", unicodedata.normalize("NFKC", text))]
    joined = "".join(words)
    start = 0
    while (at := joined.find(short, start)) >= 0:
        bounds = {0}
        for w in words:
            bounds.add(max(bounds) + len(w))
        if at in bounds and at + len(short) in bounds:
            return True
        start = at + 1
    return False


@dataclass(frozen=True)
class Assignment:
    """What ``assign`` found: key -> its match, and the keys left out because two
    controls fit them (or they fit a control as well as another key does)."""

    matches: dict[str, LabelMatch]
    ambiguous: dict[str, list[int]]

    def notes(self, labels: Sequence[str]) -> list[str]:
        """One line per decision, for a trace (labels only, never values)."""
        lines = [f"match {key} -> {labels[m.index]!r} ({m.rule}"
                 + (f" {m.score:.2f}" if m.rule not in (Rule.EXACT, Rule.SYNONYM) else "") + ")"
                 for key, m in self.matches.items()]
        lines += [f"ambiguous: {key} fits " + " and ".join(repr(labels[i]) for i in found)
                  for key, found in self.ambiguous.items()]
        return lines


def assign(wanted: Mapping[str, Sequence[str]], labels: Sequence[str], *,
           margin: float = MARGIN) -> Assignment:
    """Each key of ``wanted`` (with the names it is known by) paired with at most one
    of ``labels`` (the controls', in page order), and each label with at most one key.

    The strongest pairs are taken first (an exact label before a containment before
    a token similarity). A pair that is not exact is taken only when it is ahead by
    ``margin`` of the key's next candidate and of the label's next key; otherwise the
    key is left out (``ambiguous``). Equal exact labels go to the first on the page.
    """
    pairs: list[tuple[float, int, str, LabelMatch]] = []
    for order, (key, names) in enumerate(wanted.items()):
        for index, label in enumerate(labels):
            best: LabelMatch | None = None
            for name in names:
                fit = similarity(label, name)
                if fit is not None:
                    found = LabelMatch(index, fit[0], fit[1], name)
                    if best is None or found.rank > best.rank:
                        best = found
            if best is not None:
                pairs.append((-best.rank, order, key, best))
    pairs.sort(key=lambda p: (p[0], p[3].index, p[1]))
    matches: dict[str, LabelMatch] = {}
    ambiguous: dict[str, list[int]] = {}
    taken: set[int] = set()
    for _, _, key, found in pairs:
        if key in matches or key in ambiguous or found.index in taken:
            continue
        if found.rule != Rule.EXACT:
            rivals = [m for _, _, k, m in pairs if m is not found and (
                (k == key and m.index not in taken)
                or (m.index == found.index and k not in matches and k not in ambiguous))]
            close = [m for m in rivals if found.rank - m.rank < margin]
            if close:
                ambiguous[key] = sorted({found.index, *(m.index for m in close
                                                        if m.index != found.index)})
                continue
        matches[key] = found
        taken.add(found.index)
    return Assignment(matches, ambiguous)


# A label asking again for a value another control of the form takes.
_CONFIRM = re.compile(r"^\s*(?:confirm|re-?enter|re-?type|repeat|verify|确认|再次输入|再次填写|"
                      r"重复输入|重新输入)\s*(?:your\s+|the\s+)?(?P<rest>.+)$", re.IGNORECASE)


def repeats(labels: Sequence[str], taken: Mapping[int, str]) -> dict[int, str]:
    """Controls that ask again for a value another takes ("Confirm email address" after
    "Email address", 确认邮箱 after 电子邮箱): index -> the key of ``taken`` (control
    index -> key) whose control's label is what the repeat names, when one alone is."""
    out: dict[int, str] = {}
    for index, label in enumerate(labels):
        said = _CONFIRM.match(unicodedata.normalize("NFKC", label))
        if index in taken or said is None:
            continue
        fits = [key for i, key in taken.items()
                if (fit := similarity(labels[i], said["rest"])) is not None
                and fit[0] in (Rule.EXACT, Rule.SYNONYM, Rule.CONTAINS)]
        if len(fits) == 1:
            out[index] = fits[0]
    return out


_GENERIC = frozenset({"银行", "市", "省", "其他"})


def best_option(options: Sequence[str], value: str,
                values: Sequence[str] | None = None) -> str | None:
    """The option whose wording (or ``values``, the options' value attributes, in the
    same order) means the value: equal once folded and the usual prefix and suffix
    are gone (中国工商银行 / 工商银行, 苏州 / 苏州市, Evening / evening), else the one
    that contains it or is contained in it (never through a generic word like 银行),
    else the one alone holding a Chinese value's characters in order (租房 / 租赁自住住房)
    or an English value's words in a run."""
    wanted = _core(value)
    if not wanted:
        return None
    names = [(o, _core(o)) for o in options]
    names += [(o, _core(_BRACKETS.sub("", o))) for o in options]  # 劳动（聘用）合同期满终止
    if values is not None:
        names += [(o, _core(v)) for o, v in zip(options, values, strict=True)]
    exact = [o for o, c in names if c == wanted]
    if exact:
        return exact[0]
    near = {o for o, c in names if c and min(len(c), len(wanted)) >= 2
            and c not in _GENERIC and wanted not in _GENERIC and _contains(c, wanted)}
    if len(near) == 1:
        return near.pop()
    if near:
        return None
    # A Chinese value whose characters the option has in order (租房 / 租赁自住住房,
    # 还贷 / 偿还住房贷款本息): a short way of saying it, when one option alone fits.
    if not wanted.isascii() and len(wanted) >= 2 and wanted not in _GENERIC:
        near = {o for o, c in names if len(c) > len(wanted) and _in_order(wanted, c)}
        if len(near) == 1:
            return near.pop()
        if near:
            return None
    # An English value among an option's words ("texts" in "Opt out of texts", "first
    # SIN" in "First Social Insurance Number card").
    texts = [(o, o) for o in options]
    if values is not None:
        texts += list(zip(options, values, strict=True))
    said = _words(value, False)
    if not said or not all(w.isascii() for w, _ in said):
        return None
    near = {o for o, text in texts if _word_run(*_acronyms(said, _words(text, False)))}
    return near.pop() if len(near) == 1 else None


def _word_run(short: list[str], long: list[str]) -> bool:
    """``short``'s words are a run of ``long``'s."""
    n = len(short)
    return 0 < n <= len(long) and any(long[i:i + n] == short for i in range(len(long) - n + 1))


def _contains(a: str, b: str) -> bool:
    """One folded wording holds the other (an English one from its first word on:
    "evening" is in "Evening (6:00 PM - 9:00 PM)", "6 months" in "6 months or more")."""
    short, long = sorted((a, b), key=len)
    if short.isascii():
        return long.startswith(short)
    return short in long


def _core(text: str) -> str:
    return fold(text).removeprefix("中国").removesuffix("市")


class Button(enum.StrEnum):
    """What pressing a button does to a form."""

    NEXT = "next"
    SUBMIT = "submit"


_NEXT_WORDS = re.compile(r"^(?:下一步|下一页|继续|继续填写|保存并继续|保存并下一步|next|nextstep|"
                         r"continue|saveandcontinue|proceed|nextpage)$")
_SUBMIT_WORDS = re.compile(r"^(?:(?:确认|立即|在线)?(?:提交|申请|报名|注册|发送|办理)(?:申请|表单|信息)?|"
                           r"确定|确认|submit|submitapplication|submitform|apply|applynow|send|"
                           r"register|signup|complete|finish|done|confirm|sendapplication)$")


def button_meaning(name: str, *, next_names: Sequence[str] = (),
                   submit_names: Sequence[str] = ()) -> Button | None:
    """Whether a button named ``name`` goes to the form's next page or submits it:
    the names given (a business's ``next``/``submit``) first, then the usual words in
    Chinese and English (下一步, Continue; 提交, Submit, Apply, Send, Register)."""
    words = fold(name)
    if not words:
        return None
    if any(fold(n) == words for n in next_names):
        return Button.NEXT
    if any(fold(n) == words for n in submit_names):
        return Button.SUBMIT
    if _NEXT_WORDS.match(words):
        return Button.NEXT
    if _SUBMIT_WORDS.match(words):
        return Button.SUBMIT
    return None


_LOGIN_WORDS = re.compile(r"^(?:登录|登入|login|signin|logon)$")
_HOLDING_WORDS = re.compile(r"^(?:取消|返回|重置|清空|上一步|退出|退出登录|注销|保存草稿|"
                            r"cancel|back|reset|clear|previous|prev|search|搜索|查询|savedraft|"
                            r"savefordraft|savedraftandexit|saveandexit|"
                            r"logout|logoff|signout|exit)$")
_SAVE_WORDS = re.compile(r"^(?:保存|暂存|save)$")


def logs_in(name: str) -> bool:
    """A login button (登录, Sign in): it sends credentials, not an application."""
    return _LOGIN_WORDS.match(fold(name)) is not None


def holds_back(name: str) -> bool:
    """A button that never sends the form on (取消, Back, Reset, 保存草稿, Search, 登录),
    even when it is the form's only submit button."""
    return _HOLDING_WORDS.match(fold(name)) is not None or logs_in(name)


def saves(name: str) -> bool:
    """A plain 保存 / Save button: it sends the form when it is the form's only submit
    button (a 登记表 saved is filed), and holds back beside another one."""
    return _SAVE_WORDS.match(fold(name)) is not None


def lone_submit(names: Sequence[str]) -> int | None:
    """Of a form's submit buttons whose words say nothing (``names``), the index of the
    one that sends it: the only one that does not hold back, a plain 保存 only when it
    is alone."""
    sending = [i for i, n in enumerate(names) if not holds_back(n)]
    if len(sending) > 1:
        sending = [i for i in sending if not saves(names[i])]
    return sending[0] if len(sending) == 1 else None
