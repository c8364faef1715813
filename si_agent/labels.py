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
- ``best_option``: the option of a select or radio group meaning a value;
- ``button_meaning``: whether a button's words mean "next page" or "submit".
"""

from __future__ import annotations

import enum
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

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
    CONTAINS = "contains"  # one contains the other ("email" / "Email Address")
    TOKENS = "tokens"  # most words shared ("date of birth" / "birth date")


_TIER = {Rule.EXACT: 2.0, Rule.CONTAINS: 1.0, Rule.TOKENS: 0.0}
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
    """How ``label`` (a control's) fits ``name`` (one a value is known by), or None."""
    a, b = fold(label), fold(name)
    if not a or not b:
        return None
    if a == b:
        return Rule.EXACT, 1.0
    short, long = sorted((a, b), key=len)
    # A containment needs two characters of Chinese or a whole word of English.
    if len(short) >= 2 and short in long and (not short.isascii() or _whole_word(
            short, label if fold(label) == long else name)):
        return Rule.CONTAINS, len(short) / len(long)
    from rapidfuzz import fuzz  # the rpa extra

    score = max(fuzz.token_sort_ratio(_tokens(label), _tokens(name)),
                fuzz.ratio(a, b) if not a.isascii() else 0.0) / 100
    return (Rule.TOKENS, score) if score >= TOKEN_THRESHOLD else None


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
                 + (f" {m.score:.2f}" if m.rule != Rule.EXACT else "") + ")"
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


_GENERIC = frozenset({"银行", "市", "省", "其他"})


def best_option(options: Sequence[str], value: str,
                values: Sequence[str] | None = None) -> str | None:
    """The option whose wording (or ``values``, the options' value attributes, in the
    same order) means the value: equal once folded and the usual prefix and suffix
    are gone (中国工商银行 / 工商银行, 苏州 / 苏州市, Evening / evening), else the one
    that contains it or is contained in it (never through a generic word like 银行)."""
    wanted = _core(value)
    if not wanted:
        return None
    names = [(o, _core(o)) for o in options]
    if values is not None:
        names += [(o, _core(v)) for o, v in zip(options, values, strict=True)]
    exact = [o for o, c in names if c == wanted]
    if exact:
        return exact[0]
    near = {o for o, c in names if c and min(len(c), len(wanted)) >= 2
            and c not in _GENERIC and wanted not in _GENERIC and _contains(c, wanted)}
    if len(near) == 1:
        return near.pop()
    return None


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
_HOLDING_WORDS = re.compile(r"^(?:取消|返回|重置|清空|上一步|退出|退出登录|注销|保存|保存草稿|暂存|"
                            r"cancel|back|reset|clear|previous|prev|search|搜索|查询|save|savedraft|"
                            r"logout|logoff|signout|exit)$")


def logs_in(name: str) -> bool:
    """A login button (登录, Sign in): it sends credentials, not an application."""
    return _LOGIN_WORDS.match(fold(name)) is not None


def holds_back(name: str) -> bool:
    """A button that never sends the form on (取消, Back, Reset, 保存草稿, Search, 登录),
    even when it is the form's only submit button."""
    return _HOLDING_WORDS.match(fold(name)) is not None or logs_in(name)
