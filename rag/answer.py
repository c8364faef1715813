"""From retrieved chunks to an ``Answer``: key sentences, passages, sources, suggestion.

Without a model the answer is extractive: first the one to three sentences
that answer the question (``rag/sentences.py``: chosen by the question's focus,
all from one document), then one or two passages of that document, cleaned of
Markdown, each heading on a line of its own and one bullet a line, without the
sentences the lead already says, trimmed at a sentence end, then
"来源：《title》（2025年6月）" (the documents' as-of dates).

A ``generator`` — any callable taking the question and the numbered passages
and returning text that cites them as [1], [2] — replaces the extractive text;
the sources are then listed by number. The generated answer must be grounded:
it cites at least one passage, and every marker it writes ([k], ［k］, 【k】,
[1,2], [1-3]) names a passage it was given. An answer that cites nothing, or
a passage it was not given, is not used: the extractive answer is, led by
``texts.UNSURE`` (the assistant says it is not sure). The generator's
``NOT_FOUND`` reply (citing nothing) means the passages do not answer the
question: ``compose`` returns None, as for an irrelevant question. If the
generator fails, the extractive answer is used as is. A generator's text goes
to the citizen as it comes: redacting personal data in it is the generator's
job (si_agent's knowledge channel wraps its model in ``redact_text``).

The suggested business comes from the documents' ``businesses`` tags: it is
given when the best passage's document names it and the top passages agree.
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass, field, replace

from rag import texts
from rag.sentences import KeySentence, SentencePicker
from rag.store import Hit

log = logging.getLogger(__name__)

MAX_ANSWER_CHARS = 360
SUGGEST_TOP = 3
SUGGEST_SHARE = 0.5


@dataclass(frozen=True)
class Answer:
    """What the knowledge base answers: reply text, source titles, maybe a business to suggest.

    It satisfies si_agent's ``Answer`` protocol (``si_agent/knowledge.py``).
    """

    text: str
    sources: list[str] = field(default_factory=list)
    suggested_business_id: str | None = None
    refused: bool = False  # a question the channel must not answer (injection, others' data)


@dataclass(frozen=True)
class Passage:
    """A retrieved chunk as shown to a generator: ``[number] title › heading: text``."""

    number: int
    title: str
    heading: str
    text: str
    doc_id: str


Generator = Callable[[str, Sequence[Passage]], str]


def passages(hits: Sequence[Hit]) -> list[Passage]:
    return [Passage(i + 1, h.title, h.heading, clean(h.text), h.doc_id) for i, h in enumerate(hits)]


def compose(question: str, hits: Sequence[Hit], *, generator: Generator | None = None,
            picker: SentencePicker | None = None,
            as_of: Mapping[str, str] | None = None) -> Answer | None:
    """The answer to ``question`` from relevant ``hits`` (best first), or None when the
    generator says the passages do not answer it. ``as_of`` maps document ids to the
    dates their facts were checked."""
    suggestion = suggest_business(hits)
    if generator is not None:
        numbered = passages(hits)
        text = _generated(question, numbered, generator)
        if text is NOT_ANSWERED:
            return None
        if text is UNGROUNDED:
            extractive = _extractive(question, hits, picker, as_of, suggestion)
            return replace(extractive, text=f"{texts.UNSURE}\n{extractive.text}")
        if text:
            cited = " ".join(texts.NUMBERED_SOURCE.format(n=p.number, title=p.title) for p in numbered)
            return Answer(text=f"{text}\n{texts.SOURCES.format(titles=cited)}",
                          sources=_titles(hits), suggested_business_id=suggestion)
    return _extractive(question, hits, picker, as_of, suggestion)


def _extractive(question: str, hits: Sequence[Hit], picker: SentencePicker | None,
                as_of: Mapping[str, str] | None, suggestion: str | None) -> Answer:
    key = (picker or SentencePicker()).pick(question, hits, top=len(hits))
    lead = _lead(key)
    best = max(key, key=lambda k: k.score) if key else None
    chosen = _choose(hits, best.position[0] if best else None)
    # The passages go on from the lead: the sentences it already says are left out.
    shown = {k.text for k in key}
    body = _fit([r for r in (_render(h, shown) for h in chosen) if r], MAX_ANSWER_CHARS)
    parts = [p for p in (lead, body) if p]
    docs = dict.fromkeys([*((h.doc_id, h.title) for h in chosen), *((k.doc_id, k.title) for k in key)])
    cited = "".join(_source(doc_id, title, as_of or {}) for doc_id, title in docs)
    return Answer(text="\n".join([*parts, texts.SOURCES.format(titles=cited)]),
                  sources=list(dict.fromkeys(title for _, title in docs)),
                  suggested_business_id=suggestion)


# What ``_generated`` returns when the model says the passages do not answer, and when
# its answer is not grounded in them.
NOT_ANSWERED = object()
UNGROUNDED = object()
# A citation marker: [1], ［1］, 【1】, a list [1,2] / [1、2] or a range [1-3].
_CITATION = re.compile(r"[\[［【]\s*(\d+(?:\s*[,，、\-–~～]\s*\d+)*)\s*[\]］】]")
_MAX_MARKER = 1000  # a range wider than this cites nothing we gave anyway


def cited_numbers(text: str) -> set[int]:
    """Every passage number the citation markers of ``text`` name."""
    numbers: set[int] = set()
    for marker in _CITATION.findall(text):
        for part in re.split(r"\s*[,，、]\s*", marker):
            ends = [int(n) for n in re.split(r"\s*[\-–~～]\s*", part)]
            low, high = min(ends), max(ends)
            numbers.update(range(low, min(high, low + _MAX_MARKER) + 1))
    return numbers


def _generated(question: str, numbered: list[Passage], generator: Generator):
    """The generator's grounded text, ``NOT_ANSWERED``, ``UNGROUNDED``, or "" when it
    failed (answer extractively)."""
    try:
        text = (generator(question, numbered) or "").strip()
    except Exception:  # a model backend failing must not take the answer down
        log.warning("answer generator failed; answering extractively", exc_info=True)
        return ""
    cited = cited_numbers(text)
    foreign = cited - {p.number for p in numbered}
    if foreign:
        log.warning("generated answer cites passages it was not given (%s of %d); not used",
                    ",".join(map(str, sorted(foreign)[:5])), len(numbered))
        return UNGROUNDED
    if not cited and texts.NOT_FOUND in text:
        return NOT_ANSWERED
    if not cited:
        log.warning("generated answer cites no passage; answering extractively, unsure")
        return UNGROUNDED
    return text


def _lead(key: Sequence[KeySentence]) -> str:
    """The key sentences as one paragraph; items of a list keep a line each ("· ")."""
    lines: list[str] = []
    for k in key:
        text = _sentence_end(k.text)
        if k.item:
            lines.append(f"· {text}")
        elif lines and not lines[-1].startswith("· "):
            lines[-1] += text
        else:
            lines.append(text)
    return "\n".join(lines)


def _sentence_end(sentence: str) -> str:
    return sentence if sentence[-1] in "。！？；!?;" else f"{sentence}。"


def _source(doc_id: str, title: str, as_of: Mapping[str, str]) -> str:
    shown = texts.SOURCE_TITLE.format(title=title)
    date = as_of.get(doc_id, "")
    if date:
        year, month = date.split("-")[:2]
        shown += texts.AS_OF.format(year=year, month=int(month))
    return shown


def suggest_business(hits: Sequence[Hit]) -> str | None:
    """The business the top documents agree on, or None.

    Each of the top passages votes for its document's tags with weight
    1/rank, split among its tags; untagged (general) passages vote for none.
    The winner must be tagged on the best passage and hold at least half of
    all the weight.
    """
    top = list(hits[:SUGGEST_TOP])
    if not top or not top[0].businesses:
        return None
    votes: dict[str, float] = defaultdict(float)
    total = 0.0
    for rank, h in enumerate(top, start=1):
        weight = 1.0 / rank
        total += weight
        for b in h.businesses:
            votes[b] += weight / len(h.businesses)
    best = max(top[0].businesses, key=lambda b: votes[b])
    return best if votes[best] >= SUGGEST_SHARE * total else None


def clean(text: str) -> str:
    """Markdown to plain reply text: no emphasis, bullets as "· ", one a line (also a list
    written on the line of its lead-in, "先挂失，再补办：- 合作银行网点……")."""
    text = re.sub(r"\*\*(.+?)\*\*", r"\1", text)
    text = re.sub(r"([：:])[ \t]*[-*+][ \t]+", "\\1\n· ", text)
    text = re.sub(r"(?m)^\s*[-*+]\s+", "· ", text)
    return text.strip()


def _choose(hits: Sequence[Hit], lead_chunk: str | None = None) -> list[Hit]:
    """Up to two passages of one document.

    The passage holding the best key sentence comes first (``lead_chunk``: it goes
    on from the lead); without one, the fused ranking's best document, its passages
    in document order. Within the document, the question's cosine picks the next
    passage (a document's intro often wins the fusion on shared words while the
    section that answers is a close second).
    """
    lead = next((h for h in hits if h.chunk_id == lead_chunk), hits[0])
    same = sorted((h for h in hits if h.doc_id == lead.doc_id and h is not lead),
                  key=lambda h: h.cosine if h.cosine is not None else 0.0, reverse=True)
    same = [lead, *same] if lead_chunk else sorted(
        [lead, *same], key=lambda h: h.cosine if h.cosine is not None else 0.0, reverse=True)
    chosen = same[:1]
    if len(same) > 1 and len(_render(same[0])) + 1 + len(_render(same[1])) <= MAX_ANSWER_CHARS:
        chosen.append(same[1])
    return chosen if lead_chunk else sorted(chosen, key=lambda h: h.chunk_id)


def _render(hit: Hit, leave_out: Set[str] = frozenset()) -> str:
    """A passage as shown: its heading on a line of its own, then its lines, without the
    sentences in ``leave_out`` (the lead says them); "" when nothing is left."""
    lines = []
    for line in clean(hit.text).split("\n"):
        kept = "".join(piece for piece in _SENTENCE_END.split(line)
                       if _bare(piece) not in leave_out)
        if _bare(kept):
            lines.append(kept)
    if not lines:
        return ""
    text = "\n".join(lines)
    return f"{texts.PASSAGE_HEADING.format(heading=hit.heading)}\n{text}" if hit.heading else text


_SENTENCE_END = re.compile(r"(?<=[。！？；!?;])")
_MARK = re.compile(r"^\s*(?:[·•]|\d+[.、)）])\s*")


def _bare(piece: str) -> str:
    """A piece of a shown line as ``sentences`` gives it (no bullet mark, no blanks)."""
    return _MARK.sub("", piece).strip()


def _fit(parts: list[str], limit: int) -> str:
    """Join passages, keeping whole sentences within ``limit`` characters."""
    out: list[str] = []
    used = 0
    for part in parts:
        room = limit - used - (1 if out else 0)
        if len(part) <= room:
            out.append(part)
            used += len(part) + (1 if len(out) > 1 else 0)
            continue
        if not out:  # the first passage alone is too long: cut it at a sentence end
            out.append(_cut(part, limit))
        break
    return "\n".join(out)


def _cut(text: str, limit: int) -> str:
    head = text[:limit]
    ends = [m.end() for m in re.finditer(r"[。！？；\n]", head)]
    keep = head[: ends[-1]] if ends and ends[-1] >= limit // 2 else head
    return keep.rstrip() + texts.ELLIPSIS


def _titles(hits: Sequence[Hit]) -> list[str]:
    return list(dict.fromkeys(h.title for h in hits))
