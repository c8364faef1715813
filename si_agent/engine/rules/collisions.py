"""Keywords that take over other businesses' messages, found with the matcher itself.

A business's name and keywords are what ``matching.BusinessIndex`` routes a
message by: a keyword found verbatim scores 1.0 (the longer of two wins), so a
short, common one ("养老金", "社保卡") pulls in every message that mentions it,
including those about other businesses. ``keyword_collisions`` reports, for each
keyword of each business:

- **shared**: it is the name or a keyword of another business;
- **generic**: it is a word the rule engine reads as a reply ("办理", "查询", "确认":
  ``lexicon``), an umbrella topic (``TOPICS``: 社保, 养老金, 医保, 公积金 …), or it
  is contained in the phrases of two or more other businesses;
- **takes over**: with it, a message about another business goes to this one
  (or is no longer clearly the other's), by ``BusinessIndex.match`` run on the
  catalog with and without this business. The messages about a business are its
  name and keywords, its phrases with a word said between two of its words
  ("社保卡怎么挂失" for 社保卡挂失), as citizens say them, and its description
  (where only a keyword found verbatim counts: a long text is similar to much).

A business whose name is another's (a copied file given a new id) is a finding
on its ``name``, naming the first business and where its name is.

Each finding names the businesses it collides with. They are warnings
(``si-agent validate`` prints them and still passes): whether a shared word is
right is the author's call, but it should be a decision.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from si_agent.config.loader import located
from si_agent.config.model import Business
from si_agent.engine import lexicon as L
from si_agent.engine.rules.matching import MARGIN, MATCH_THRESHOLD, SUGGEST_THRESHOLD, BusinessIndex
from si_agent.errors import ConfigError, ConfigWarning

# Umbrella topics of social insurance: every business is about one of them, so
# none of them alone says which business a citizen means.
TOPICS: frozenset[str] = frozenset({
    "社保", "社会保险", "社保卡", "医保", "医保卡", "医疗保险", "养老金", "养老保险", "退休金",
    "失业保险", "工伤保险", "生育保险", "保险", "公积金", "住房公积金", "参保", "缴费", "业务",
})
# Words the rule engine reads as a reply in the dialogue (accept, confirm, cancel,
# modify, retry) or as the request's verb ("我要", "办理", "申请", "查询").
REPLY_WORDS: frozenset[str] = frozenset(
    {*L.ACCEPT, *L.CONFIRM, *L.CANCEL, *L.MODIFY, *L.RETRY, *L.INTENT, *L.SWITCH_YES})
GENERIC_WORDS: frozenset[str] = TOPICS | REPLY_WORDS
_FILLER = "怎么"
TAKEN, TIED = "taken", "tied"  # said inside a phrase: "社保卡怎么挂失"


@dataclass(frozen=True)
class Collision:
    """One keyword (``index`` in ``keywords``; None for the name) of ``business``
    that collides with the ``others``, and why."""

    business: str
    index: int | None
    keyword: str
    others: tuple[str, ...]
    message: str


def keyword_collisions(catalog: Mapping[str, Business]) -> list[Collision]:
    """Every keyword of every business in ``catalog`` that collides with another business."""
    phrases = {bid: _phrases(b) for bid, b in catalog.items()}
    probes = {bid: _probes(b) for bid, b in catalog.items()}
    found: list[Collision] = list(_name_collisions(catalog))
    for bid, b in catalog.items():
        others = {o: p for o, p in phrases.items() if o != bid}
        taken = _takeovers(catalog, bid, probes)
        for i, keyword in enumerate(b.keywords):
            word = _norm(keyword)
            if not word or word in REPLY_WORDS:  # an error (keyword_errors), not a warning
                continue
            reasons: list[str] = []
            named: dict[str, None] = {}
            if len(word) == 1:
                reasons.append("is a single character: it is found inside many words "
                               "citizens type about other things")
            shared = [o for o, p in others.items() if word in p]
            if shared:
                reasons.append(f"is also a keyword of {_names(catalog, shared)}")
                named.update(dict.fromkeys(shared))
            containing = [o for o, p in others.items() if o not in shared
                          and any(word in phrase for phrase in p)]
            if word in GENERIC_WORDS or len(containing) >= 2:
                kind = "is a generic word"
                where = (f"; it is in the keywords of {_names(catalog, containing)}"
                         if containing else "")
                reasons.append(f"{kind}: every message that says it would come to this "
                               f"business{where}")
                named.update(dict.fromkeys(containing))
            examples = taken.get(word, {})
            for kind, says in ((TAKEN, "takes over messages about other businesses: {} would "
                                       "come to this business"),
                               (TIED, "makes messages about other businesses ambiguous: {} "
                                      "would no longer start that business")):
                hits = [(o, m) for o, (m, k) in examples.items() if k == kind][:3]
                if hits:
                    reasons.append(says.format("; ".join(
                        f"“{m}” (about {_names(catalog, [o])})" for o, m in hits)))
                    named.update(dict.fromkeys(o for o, _ in hits))
            if reasons:
                found.append(Collision(bid, i, keyword, tuple(named),
                                       f"keyword {keyword!r} " + "; ".join(reasons)
                                       + "; use a phrase only this business's citizens "
                                       "say (e.g. with the action: 补办社保卡, 查养老金到账)"))
    return found


def _name_collisions(catalog: Mapping[str, Business]) -> Iterable[Collision]:
    """A business named as an earlier one (in ``catalog``'s order, by file name)."""
    first: dict[str, str] = {}
    for bid, b in catalog.items():
        name = _norm(b.name)
        if name not in first:
            first[name] = bid
            continue
        other = catalog[first[name]]
        at = located(other, ("name",), "")
        where = f"{at.file}:{at.line}" if at.line else at.file
        yield Collision(bid, None, b.name, (other.id,), (
            f"name {b.name!r} is also the name of {other.id} ({where}): citizens could not "
            "tell the two apart in the list of businesses, and a message saying it would "
            "match both; give each business its own name (业务名称“"
            f"{b.name}”与 {other.id} 重复，请改成不同的名称)"))


def _takeovers(catalog: Mapping[str, Business], bid: str,
               probes: Mapping[str, list[tuple[str, bool]]],
               ) -> dict[str, dict[str, tuple[str, str]]]:
    """For each keyword of ``bid`` that takes over a message about another business:
    {other business: (the first such message, TAKEN or TIED)}."""
    b = catalog[bid]
    without = {o: x for o, x in catalog.items() if o != bid}
    before, after = BusinessIndex(without), BusinessIndex(catalog)
    alone: dict[str, BusinessIndex] = {}  # built when first needed
    out: dict[str, dict[str, tuple[str, str]]] = {}
    for other, messages in probes.items():
        if other == bid:
            continue
        for message, verbatim in messages:
            low = _norm(message)
            if (after.score(bid, message) < SUGGEST_THRESHOLD
                    or not _lost(before, after, message, other, bid, verbatim)):
                continue
            for phrase in dict.fromkeys(_norm(k) for k in b.keywords):
                if verbatim and phrase not in low:
                    continue
                if phrase not in alone:
                    single = b.model_copy(update={"name": phrase, "keywords": (phrase,)})
                    alone[phrase] = BusinessIndex({**without, bid: single})
                kind = _lost(before, alone[phrase], message, other, bid, verbatim)
                if kind:
                    out.setdefault(phrase, {}).setdefault(other, (message, kind))
    return out


def _lost(before: BusinessIndex, after: BusinessIndex, message: str, other: str,
          bid: str, verbatim: bool) -> str:
    """How ``message``, about ``other`` without ``bid``, fares with it: TAKEN (it goes
    to ``bid``, by a keyword said verbatim if ``verbatim``), TIED (``other`` no longer
    starts: the two are too close), or ``""``."""
    was, score, _, runner = before.match(message)
    if was != other or score < SUGGEST_THRESHOLD:
        return ""
    now, new_score, _, new_runner = after.match(message)
    clear = new_score - new_runner >= MARGIN
    if now == bid and clear and new_score >= (1.0 if verbatim else SUGGEST_THRESHOLD):
        return TAKEN
    started = score >= MATCH_THRESHOLD and score - runner >= MARGIN
    return TIED if started and now in (bid, other) and not clear and not verbatim else ""


def _probes(b: Business) -> list[tuple[str, bool]]:
    """Messages about ``b``, each with whether only a keyword said verbatim counts:
    its name and keywords; each phrase with a word said between two words of the
    business ("社保卡怎么挂失": 社保卡 and 挂失 stand alone in other phrases of card_loss);
    its description (a long text: only verbatim keywords count)."""
    phrases = list(dict.fromkeys((b.name, *b.keywords)))
    out = [(p, False) for p in phrases]
    for p in phrases:
        rest = [q for q in phrases if q != p]
        out += [(p[:i] + _FILLER + p[i:], False) for i in range(2, len(p) - 1)
                if any(_word(p[:i], q, after=p[i]) for q in rest)
                and any(_word(p[i:], q, before=p[i - 1]) for q in rest)]
    out.append((b.description, True))
    return list(dict.fromkeys(out))


def _word(part: str, phrase: str, *, after: str = "", before: str = "") -> bool:
    """Whether ``part`` stands as a word in ``phrase``: not followed by ``after``
    (or preceded by ``before``) there, as it is in the phrase it was cut from."""
    at = phrase.find(part)
    while at >= 0:
        end = at + len(part)
        if (after and (end == len(phrase) or phrase[end] != after)) or (
                before and (at == 0 or phrase[at - 1] != before)):
            return True
        at = phrase.find(part, at + 1)
    return False


def _phrases(b: Business) -> set[str]:
    return {_norm(p) for p in (b.name, *b.keywords)}


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower().strip()


def _bigrams(text: str) -> set[str]:
    return {text[i:i + 2] for i in range(len(text) - 1)} if len(text) > 1 else {text}


def _names(catalog: Mapping[str, Business], ids: Iterable[str]) -> str:
    return ", ".join(f"{i} ({catalog[i].name})" for i in ids)


def keyword_warnings(catalog: Mapping[str, Business]) -> list[ConfigWarning]:
    """``keyword_collisions`` as warnings located in the business files."""
    return [located(catalog[c.business], ("keywords", c.index) if c.index is not None
                    else ("name",), c.message)
            for c in keyword_collisions(catalog)]


def keyword_errors(catalog: Mapping[str, Business]) -> list[ConfigError]:
    """Keywords that are blank, or replies in every dialogue ("确认", "取消", "办理"…): errors.

    Such a keyword would take the citizen's "确认" at the confirmation of another business
    to this one, in every dialogue: validate fails and the server refuses to start.
    """
    found = []
    for b in catalog.values():
        for i, keyword in enumerate(b.keywords):
            if not _norm(keyword):
                w = located(b, ("keywords", i), "")
                found.append(ConfigError(
                    w.file, w.line, w.path,
                    f"keyword {keyword!r} is blank: only spaces would match every message "
                    "with a space in it; remove it or write the phrase "
                    "(关键词只有空格，会匹配所有带空格的消息，请删除或填写词语)"))
            elif _norm(keyword) in REPLY_WORDS:
                w = located(b, ("keywords", i), "")
                found.append(ConfigError(
                    w.file, w.line, w.path,
                    f"keyword {keyword!r} is a word the assistant reads as a reply in every "
                    "dialogue (confirm, cancel, accept, modify, retry, or the request's verb): "
                    "a citizen saying it while doing another business would be taken to this "
                    f"one; remove it (关键词“{keyword}”是对话里的回复用语，会打断其他业务的办理，请删除)"))
    return found
