"""The staff-edited word list (``_moderation.yaml``) and the moderator that applies it.

The list has categories, each with a label, an action (``mask``, ``refuse``,
``flag``), where it applies (``input``: citizens' messages; ``output``: replies;
both by default) and its words; a word may carry its own action and variants
(other spellings of the same word). ``allow`` lists phrases that contain a listed
word but are fine (a hit inside one of them is dropped).

Matching is on a folded copy of the text: NFKC (full-width letters, compatibility
forms), case folded, Traditional to Simplified (OpenCC ``t2s``), and the characters
people put between the letters of a word to get it past a filter (spaces, ``*``,
``.``, ``-``, zero-width characters) left out; Chinese punctuation still separates
words. Every list word is folded the same way, so 傻逼, 傻 逼 and a Traditional
spelling are one word. One Aho–Corasick automaton (pyahocorasick) finds all words
in one pass: a message costs microseconds whatever the list's size
(``scripts/bench_moderation.py``).

``check_word_list`` validates a file with ``file:line`` errors: the schema, empty or
blank words, a word listed twice (after folding), and words that would hit a
business's name, keywords, field labels or options, or the assistant's own texts
(every citizen asking for that business would be masked or refused).
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import ahocorasick
import jsonschema

from si_agent.chinese import t2s
from si_agent.config.loader import read_document, schema_errors
from si_agent.config.yamlio import format_path
from si_agent.errors import ConfigError, ConfigWarning
from si_agent.moderation.model import Action, Hit, Verdict, Where

MODERATION_FILE = "_moderation.yaml"
DEFAULT_LIST = "moderation.yaml"  # in si_agent/data: used when the business folder has none
MASK_CHAR = "＊"
# Put between the characters of a word to slip it past a filter; left out when matching.
_FILLERS = frozenset("*＊·•._-~`'\"|/\\+=^#@$%&")
# Invisible and decorative characters (format controls, combining and enclosing marks,
# emoji and other symbols) are left out too, wherever they are.
_FILLER_CATEGORIES = frozenset({"Cf", "Cc", "Mn", "Me", "So", "Sk", "Co", "Cn"})
# Spaces separate words ("电脑 残疾" holds no word), except between single characters
# spaced out to slip a word past a filter ("傻 逼", "约 炮 吗"): those are joined.
_SPACED = re.compile(r"(?:(?<=^\S)|(?<=\s\S))\s+(?=\S(?:\s|$))")
_BOTH: tuple[Where, ...] = ("input", "output")


class _FoldTable(dict):
    """``str.translate`` table, filled on first sight of each character: its NFKC form,
    case folded, Traditional to Simplified (OpenCC ``t2s``, character by character),
    and nothing for a filler."""

    def __init__(self) -> None:
        super().__init__()
        self._t2s = t2s()
        self._lock = threading.Lock()

    def __missing__(self, code: int) -> str:
        with self._lock:
            self[code] = folded = self._fold(chr(code))
            return folded

    def _fold(self, ch: str) -> str:
        if ch.isspace():
            return " "
        if ch in _FILLERS or unicodedata.category(ch) in _FILLER_CATEGORIES:
            return ""
        return "".join(out for out in self._t2s.convert(
            unicodedata.normalize("NFKC", ch).casefold())
            if out not in _FILLERS and unicodedata.category(out) not in _FILLER_CATEGORIES)


_TABLE = _FoldTable()


def folded(text: str) -> str:
    """``text`` folded for matching (see the module docstring)."""
    return _SPACED.sub("", text.translate(_TABLE))


def fold(text: str) -> tuple[str, list[int]]:
    """The folded text and, for each of its characters, the index in ``text`` it came from."""
    parts = [_TABLE[ord(ch)] for ch in text]
    flat = "".join(parts)
    origin = [i for i, part in enumerate(parts) for _ in part]
    dropped = {i for m in _SPACED.finditer(flat) for i in range(*m.span())}
    return (_SPACED.sub("", flat), [o for i, o in enumerate(origin) if i not in dropped])


def solid(ch: str) -> bool:
    """Whether ``ch`` folds to a character a word can hold (not a space, not a filler)."""
    return _TABLE[ord(ch)].strip() != ""


def fold_word(word: str) -> str:
    return folded(word).strip()


@dataclass(frozen=True)
class Entry:
    """One listed word (or variant), folded, with where it came from in the file."""

    word: str  # as written in the list
    folded: str
    category: str
    label: str
    action: Action
    where: tuple[Where, ...]
    line: int | None = None
    at: str = ""  # its place in the file, as in other errors: categories[0].words[2]
    reply: str | None = None  # the category's own reply to a message it refuses

    @property
    def latin(self) -> bool:
        return all(_is_latin(ch) for ch in self.folded)


@dataclass(frozen=True)
class WordList:
    entries: tuple[Entry, ...]
    allow: tuple[str, ...] = ()
    path: str = ""
    labels: Mapping[str, str] | None = None  # category id -> label

    @property
    def longest(self) -> int:
        return max((len(e.folded) for e in self.entries), default=0)


class WordListModerator:
    """Applies a ``WordList`` (see the module docstring); never raises."""

    name = "words"

    def __init__(self, words: WordList) -> None:
        self.words = words
        self._automata: dict[Where, Any] = {w: _automaton(e for e in words.entries if w in e.where)
                                            for w in _BOTH}
        self._allow = _automaton(Entry(a, fold_word(a), "", "", Action.FLAG, _BOTH)
                                 for a in words.allow if fold_word(a))
        self._held = max(words.longest - 1, 0)  # characters a word may still grow from

    def hold(self, text: str, start: int) -> int:
        """The index of ``text`` up to which a stream may send (``hold_from``)."""
        return hold_from(text, start, self._held)

    def check(self, text: str, where: Where) -> Verdict:
        automaton = self._automata[where]
        if automaton is None or not text:
            return Verdict(text=text)
        flat = folded(text)
        found = [(end - len(e.folded) + 1, end + 1, e) for end, e in automaton.iter(flat)
                 if not _inside_latin_word(flat, end - len(e.folded) + 1, end + 1, e)]
        if not found:
            return Verdict(text=text)
        _, origin = fold(text)  # only for a text with a hit: where each character came from
        if self._allow is not None:
            allowed = [(end - len(a.folded) + 1, end + 1) for end, a in self._allow.iter(flat)]
            found = [f for f in found if not any(s <= f[0] and f[1] <= e for s, e in allowed)]
        hits = tuple(Hit(start=origin[s], end=origin[e - 1] + 1, category=entry.category,
                         action=entry.action, word=entry.word) for s, e, entry in found)
        if not hits:
            return Verdict(text=text)
        refused = any(h.action is Action.REFUSE for h in hits)
        masking = [h for h in hits if h.action is Action.MASK]
        reply = next((entry.reply for _, _, entry in found
                      if entry.reply and entry.action is Action.REFUSE), None)
        return Verdict(text=text if refused else mask_spans(text, masking), hits=hits,
                       refused=refused, masked=bool(masking) and not refused, reply=reply,
                       flagged=any(h.action is Action.FLAG for h in hits),
                       categories=tuple(dict.fromkeys(h.category for h in hits)))


def hold_from(text: str, start: int, held: int) -> int:
    """Where the part of ``text`` a streamed check must still hold back begins: the last
    ``held`` solid characters (a listed word ending later may start among them), and no
    earlier than ``start``."""
    count, i = 0, len(text)
    while i > start and count < held:
        i -= 1
        count += solid(text[i])
    return i


def _inside_latin_word(folded: str, start: int, end: int, entry: Entry) -> bool:
    """A Latin word of the list (sb, tmd) counts only as a whole word: not the SB of USB."""
    if not entry.latin:
        return False
    before = folded[start - 1] if start > 0 else ""
    after = folded[end] if end < len(folded) else ""
    return _is_latin(before) or _is_latin(after)


def _is_latin(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


def mask_spans(text: str, hits: Iterable[Hit]) -> str:
    chars = list(text)
    for hit in hits:
        for i in range(hit.start, hit.end):
            if not chars[i].isspace():
                chars[i] = MASK_CHAR
    return "".join(chars)


def _automaton(entries: Iterable[Entry]) -> Any:
    automaton = ahocorasick.Automaton()
    for entry in entries:
        automaton.add_word(entry.folded, entry)
    if len(automaton) == 0:
        return None
    automaton.make_automaton()
    return automaton


# -- the file ------------------------------------------------------------------------


@cache
def _validator() -> jsonschema.Validator:
    import json

    text = resources.files("si_agent.config").joinpath("moderation.schema.json").read_text("utf-8")
    return jsonschema.Draft202012Validator(json.loads(text))


def list_path(business_dir: str | Path) -> Path:
    """The business folder's ``_moderation.yaml`` if there is one, else the packaged default."""
    own = Path(business_dir) / MODERATION_FILE
    if own.is_file():
        return own
    return Path(str(resources.files("si_agent.data").joinpath(DEFAULT_LIST)))


def load_word_list(path: str | Path) -> tuple[WordList | None, list[ConfigError]]:
    """The list in ``path`` and its problems (schema, blank words, words listed twice)."""
    path = Path(path)
    doc, errors = read_document(path)
    if doc is None:
        return None, errors

    def error(where: tuple[str | int, ...], message: str) -> ConfigError:
        return ConfigError(str(path), doc.line_of(where), format_path(where), message)

    errors = [error(where, msg) for where, msg in schema_errors(_validator(), doc.data)]
    if errors:
        return None, sorted(errors, key=lambda e: e.line or 0)
    entries: list[Entry] = []
    first: dict[str, tuple[str, int | None]] = {}  # folded word -> (as written, line)
    seen_ids: dict[str, int | None] = {}
    for i, category in enumerate(doc.data["categories"]):
        cid = category["id"]
        if cid in seen_ids:
            errors.append(error(("categories", i, "id"),
                                f"category id {cid!r} is used twice (also line {seen_ids[cid]}) "
                                "(类别 id 重复)"))
        seen_ids.setdefault(cid, doc.line_of(("categories", i, "id")))
        where = tuple(category.get("where") or _BOTH)
        for j, item in enumerate(category["words"]):
            spec = {"word": item} if isinstance(item, str) else item
            action = Action(spec.get("action") or category["action"])
            reply = category.get("reply")
            for k, word in enumerate([spec["word"], *spec.get("variants", [])]):
                at = ("categories", i, "words", j) + (() if k == 0 else ("variants", k - 1))
                line = doc.line_of(at)
                folded = fold_word(word)
                if not folded:
                    errors.append(error(at, f"word {word!r} is empty once spaces and symbols are "
                                            "left out; remove it (词语为空，请删除)"))
                    continue
                if folded in first:
                    written, other = first[folded]
                    errors.append(error(at, f"word {word!r} is listed twice: it is {written!r} "
                                            f"on line {other} once folded (case, width, "
                                            "Traditional/Simplified) (词语重复，请删除一处)"))
                    continue
                first[folded] = (word, line)
                entries.append(Entry(word=word, folded=folded, category=cid,
                                     label=category["label"], action=action, where=where,
                                     line=line, at=format_path(at), reply=reply))
    allow = tuple(doc.data.get("allow") or ())
    for k, phrase in enumerate(allow):
        if not fold_word(phrase):
            errors.append(error(("allow", k), f"allowed phrase {phrase!r} is empty; remove it"))
    labels = {c["id"]: c["label"] for c in doc.data["categories"]}
    if errors:
        return None, sorted(errors, key=lambda e: e.line or 0)
    return WordList(entries=tuple(entries), allow=allow, path=str(path), labels=labels), []


def collision_errors(words: WordList, phrases: Mapping[str, str]) -> list[ConfigError]:
    """Words that hit one of ``phrases`` (what it is -> text: business names, keywords,
    labels, options, the assistant's texts): each such word would mask or refuse every
    message that names that thing."""
    moderator = WordListModerator(words)
    errors: list[ConfigError] = []
    reported: set[str] = set()
    for what, text in phrases.items():
        for where in _BOTH:
            for hit in moderator.check(text, where).hits:
                if hit.word in reported:
                    continue
                reported.add(hit.word)
                entry = next(e for e in words.entries if e.word == hit.word)
                errors.append(ConfigError(words.path, entry.line, entry.at, (
                    f"word {hit.word!r} is found in {what} ({text!r}): every message naming it "
                    f"would be {_DONE[hit.action]}; remove the word or add the phrase to "
                    "'allow' (该词会命中业务名称、关键词、选项或助手用语，请删除，或把那个说法加入 allow)")))
    return errors


_DONE = {Action.MASK: "masked", Action.REFUSE: "refused", Action.FLAG: "flagged"}


def single_character_warnings(words: WordList) -> list[ConfigWarning]:
    return [ConfigWarning(words.path, e.line, e.at, (
        f"word {e.word!r} is a single character: it is found inside many words "
        "(单字词会命中很多正常词语，请写成词语)")) for e in words.entries if len(e.folded) == 1]


def catalog_phrases(catalog: Mapping[str, Any], texts: Any = None) -> dict[str, str]:
    """What a list word must never hit: each business's name, keywords, field labels and
    options (with aliases), and the assistant's own texts."""
    phrases: dict[str, str] = {}
    for business in catalog.values():
        phrases[f"the name of {business.id}"] = business.name
        for k, keyword in enumerate(business.keywords):
            phrases[f"keyword {k} of {business.id}"] = keyword
        for f in business.fields:
            phrases[f"the label of {business.id}.{f.key}"] = f.label
            for option in f.options or ():
                phrases[f"option {option.value!r} of {business.id}.{f.key}"] = " ".join(
                    [option.value, *option.aliases])
    if texts is not None:
        for key, text in texts.model_dump().items():
            phrases[f"the assistant text {key}"] = text
    return phrases


def check_moderation(directory: Path, catalog: Mapping[str, Any], texts: Any = None,
                     ) -> tuple[WordList | None, list[ConfigError], list[ConfigWarning]]:
    """What ``si-agent validate`` says of the folder's word list (or the default one)."""
    misnamed = directory / (Path(MODERATION_FILE).stem + ".yml")
    if misnamed.is_file():
        return None, [ConfigError(str(misnamed), None, "", (
            f"the moderation word list must be named {MODERATION_FILE}; this file is ignored "
            f"(敏感词表文件名必须是 {MODERATION_FILE})"))], []
    words, errors = load_word_list(list_path(directory))
    if words is None:
        return None, errors, []
    return (words, collision_errors(words, catalog_phrases(catalog, texts)),
            single_character_warnings(words))
