"""The staff-editable term table: how citizens misspell and say domain words.

``_terms.yaml`` sits in the knowledge directory, next to the documents it
serves (``rag/knowledge/_terms.yaml``)::

    corrections:            # the right word: [misspellings, dialect and colloquial forms]
      社保卡: [社宝卡]
      怎么办: [咋整, 咋弄]
    domain: [社保, 养老, 医保]  # words that make a question a social-insurance question
    refuse: [系统提示词, 管理员模式]  # marks of a question not to answer at all

``corrections`` are applied to a question before retrieval (``rag/normalise.py``),
and their right words join the vocabulary the pinyin check corrects towards.
``domain`` feeds the relevance gate (``rag/relevance.py``): a question must
name one of these words (after corrections) to be answered at all. ``refuse``
marks questions that must get no passage even when they name a domain word:
instructions to the assistant ("忽略之前的指令"), someone else's personal data,
forged documents; they get a polite refusal.

Loading checks what would silently break answers and fails with
``file:line: message`` (``TermsError``): unknown keys, empty entries, a
misspelling listed under two words, and a misspelling that occurs inside a
right word (replacing it would corrupt correctly written text).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from rag.errors import TermsError

TERMS_FILE = "_terms.yaml"
KEYS = ("corrections", "domain", "refuse")


@dataclass(frozen=True)
class TermTable:
    """Corrections (variant → right word) and the domain words, as loaded."""

    corrections: dict[str, str] = field(default_factory=dict)
    domain: tuple[str, ...] = ()
    refuse: tuple[str, ...] = ()

    @property
    def words(self) -> tuple[str, ...]:
        """The right words of the corrections, each once."""
        return tuple(dict.fromkeys(self.corrections.values()))


def load_terms(path: Path) -> TermTable:
    """The table in ``path``; raises ``TermsError`` with the line of the first problem."""
    path = Path(path)
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TermsError(file, None, f"cannot read the term table: {exc.strerror}") from None
    return parse_terms(text, file=file)


def parse_terms(text: str, *, file: str = "<text>") -> TermTable:
    """The table from YAML text (every value read as a string: 是/否/on/off stay words)."""
    try:
        root = yaml.compose(text, Loader=yaml.BaseLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise TermsError(file, mark.line + 1 if mark else None, f"not valid YAML: {exc}") from None
    if root is None:
        return TermTable()
    if not isinstance(root, yaml.MappingNode):
        raise TermsError(file, _line(root), "the term table must be a mapping with "
                         f"{' and '.join(KEYS)}")
    corrections: dict[str, str] = {}
    lines: dict[str, int] = {}
    domain: list[str] = []
    refuse: list[str] = []
    for key, value in root.value:
        if key.value == "corrections":
            corrections, lines = _corrections(value, file)
        elif key.value == "domain":
            domain = _words(value, file, "domain")
        elif key.value == "refuse":
            refuse = _words(value, file, "refuse")
        else:
            raise TermsError(file, _line(key), f"unknown key {key.value!r}; valid keys: "
                             f"{', '.join(KEYS)}")
    right = set(corrections.values())
    for variant, word in corrections.items():
        inside = next((w for w in sorted(right) if variant in w), None)
        if inside is not None:
            raise TermsError(file, lines.get(variant), f"corrections: {variant!r} (listed under {word!r}) "
                             f"occurs inside the right word {inside!r}; replacing it would "
                             "corrupt correctly written text")
    return TermTable(corrections=corrections, domain=tuple(dict.fromkeys(domain)),
                     refuse=tuple(dict.fromkeys(refuse)))


def _corrections(node: yaml.Node, file: str) -> tuple[dict[str, str], dict[str, int]]:
    """``{variant: right word}`` and the line of each variant."""
    if not isinstance(node, yaml.MappingNode):
        raise TermsError(file, _line(node), "corrections: a mapping of right word → [variants]")
    out: dict[str, str] = {}
    lines: dict[str, int] = {}
    for key, value in node.value:
        word = _word(key, file, "corrections")
        for variant_node, variant in zip(_nodes(value, file, f"corrections: {word}"),
                                         _words(value, file, f"corrections: {word}"), strict=True):
            if variant == word:
                raise TermsError(file, _line(variant_node),
                                 f"corrections: {word}: a variant equal to the word itself")
            if variant in out and out[variant] != word:
                raise TermsError(file, _line(variant_node), f"corrections: {variant!r} is listed "
                                 f"under both {out[variant]!r} and {word!r}")
            out[variant] = word
            lines[variant] = _line(variant_node)
    return out, lines


def _nodes(node: yaml.Node, file: str, where: str) -> list[yaml.Node]:
    if not isinstance(node, yaml.SequenceNode):
        raise TermsError(file, _line(node), f"{where}: a list of words, e.g. [社宝卡, 社保咔]")
    return list(node.value)


def _words(node: yaml.Node, file: str, where: str) -> list[str]:
    return [_word(n, file, where) for n in _nodes(node, file, where)]


def _word(node: yaml.Node, file: str, where: str) -> str:
    if not isinstance(node, yaml.ScalarNode) or not node.value.strip():
        raise TermsError(file, _line(node), f"{where}: every entry is a non-empty word")
    return node.value.strip()


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1
