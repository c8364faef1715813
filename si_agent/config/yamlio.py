"""Safe, line-aware YAML reading for business files.

``SafeLineLoader`` is a ``yaml.SafeLoader`` that reads scalars the YAML 1.2 way:
only ``true``/``false`` are booleans (``on``, ``off``, ``yes``, ``no`` stay
strings), ``2024-01-01`` stays a string, ``010`` is ten, and a mapping may not
repeat a key. ``load_yaml`` returns the data plus the line of every node, keyed
by its path, so later checks can report ``file:line: path: message``.

A syntax error caused by a mistake staff often make gets a hint, in English and
in Chinese (the staff guide's language), at the line of the mistake: a
full-width colon after a key (``name： 值``), a tab or an ideographic space
(U+3000, "　") in the indentation, no space after a key's colon (``name:值``),
a ``[`` or ``{`` never closed (or closed with a full-width ``］``), a quote never
closed (the parser stops lines later, at the end of the file), and a backslash in a double-quoted string (``validate: "\\d{6}"``, a regular
expression: single quotes keep it as written). A key indented with ideographic
spaces that still parses (``"　　kind"``) is a problem with the same hint.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

Path = tuple[str | int, ...]

_BOOL = "tag:yaml.org,2002:bool"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"
_REPLACED = {_BOOL, _INT, _FLOAT, "tag:yaml.org,2002:timestamp"}


class SafeLineLoader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core scalars and an error on duplicate keys."""

    yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag not in _REPLACED]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def construct_yaml_int(self, node: ScalarNode) -> int:
        # Decimal only: PyYAML would read "010" as octal 8 and "1:30" as 90.
        return int(self.construct_scalar(node))

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[tuple[str, str]] = set()
        for key_node, _ in node.value:
            if not isinstance(key_node, ScalarNode) or key_node.tag == _MERGE:
                continue
            if (key_node.tag, key_node.value) in seen:
                raise ConstructorError(
                    "while constructing a mapping", node.start_mark,
                    f"found duplicate key {key_node.value!r}", key_node.start_mark,
                )
            seen.add((key_node.tag, key_node.value))
        return super().construct_mapping(node, deep=deep)


SafeLineLoader.add_implicit_resolver(
    _BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
SafeLineLoader.add_implicit_resolver(_INT, re.compile(r"^[-+]?[0-9]+$"), list("-+0123456789"))
SafeLineLoader.add_implicit_resolver(
    _FLOAT,
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+.0123456789"),
)
SafeLineLoader.add_constructor(_INT, SafeLineLoader.construct_yaml_int)


@dataclass
class YamlProblem:
    """Something wrong with the YAML text itself, at a 1-based line."""

    line: int | None
    path: Path
    message: str


@dataclass
class YamlDocument:
    """Parsed data, the line of each node by path, and the problems found."""

    data: Any = None
    lines: dict[Path, int] = field(default_factory=dict)
    problems: list[YamlProblem] = field(default_factory=list)
    visited: int = 0  # nodes indexed, aliases counted each time (MAX_NODES)
    # Unquoted items of [...] lists by path: "[a，b]" is one item, "a，b" (flow_items).
    flow_items: dict[Path, str] = field(default_factory=dict)
    aliased: bool = False  # an alias ("*name") was expanded

    def line_of(self, path: Sequence[str | int]) -> int | None:
        """Line of the node at ``path``, or of its nearest ancestor that exists."""
        path = tuple(path)
        while path not in self.lines and path:
            path = path[:-1]
        return self.lines.get(path)


def load_yaml(text: str) -> YamlDocument:
    """Parse one YAML document safely; problems come back as data, not exceptions.

    A mapping value's line is the line of its key (so ``api:`` names the line
    of ``api:``, not of the first key below it); a list item's line is the line
    of its ``-`` entry.
    """
    doc = YamlDocument()
    loader = SafeLineLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            doc.problems.append(YamlProblem(1, (), "the file is empty; expected a mapping"))
            return doc
        try:
            _index(node, (), node.start_mark.line + 1, doc, set())
        except _TooManyNodes as exc:
            doc.problems.append(YamlProblem(exc.line, (), (
                f"the file expands to more than {MAX_NODES:,} values (anchors '&' and aliases "
                "'*' repeating each other); write the values out (提示：文件里的锚点“&”和别名“*”"
                "层层引用，展开后过大，请直接写出各项内容)") if doc.aliased else (
                f"the file is too large: more than {MAX_NODES:,} values (the limit is "
                f"{MAX_NODES:,} nodes); split it into several businesses or shorten its lists "
                f"(提示：文件过大，超过 {MAX_NODES:,} 项的上限，请拆分成几个业务或精简列表)")))
            return doc
        if not doc.problems:
            doc.data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        message = f"YAML syntax error: {_describe(exc)}"
        hinted = syntax_hint(exc, text)
        if hinted is not None:
            line, hint = hinted
            message += f"; {hint}"
        doc.problems.append(YamlProblem(line, (), message))
    except yaml.YAMLError as exc:
        doc.problems.append(YamlProblem(None, (), f"YAML syntax error: {exc}"))
    except ValueError as exc:  # an explicit tag on a bad scalar, e.g. "!!int abc"
        doc.problems.append(YamlProblem(None, (), f"cannot read a value: {exc}"))
    finally:
        loader.dispose()
    return doc


def format_path(path: Sequence[str | int]) -> str:
    """``("fields", 2, "options")`` -> ``fields[2].options``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


# A business file has a few hundred values; aliases of aliases ("billion laughs") expand
# exponentially, and every later check walks the expansion.
MAX_NODES = 50_000


class _TooManyNodes(Exception):
    def __init__(self, line: int) -> None:
        self.line = line


def _index(node: Node, path: Path, line: int, doc: YamlDocument, active: set[int],
           seen: set[int] | None = None) -> None:
    """Record the line of every node under ``node`` and every duplicate key."""
    seen = set() if seen is None else seen
    doc.visited += 1
    if id(node) in seen:  # the same node again: an alias of an anchor
        doc.aliased = True
    seen.add(id(node))
    if doc.visited > MAX_NODES:
        raise _TooManyNodes(line)
    doc.lines.setdefault(path, line)
    if id(node) in active:  # a recursive alias; nothing more to index
        return
    active.add(id(node))
    if isinstance(node, MappingNode):
        first_line: dict[str, int] = {}
        for key_node, value_node in node.value:
            key_line = key_node.start_mark.line + 1
            if key_node.tag == _MERGE:
                _index(value_node, path, key_line, doc, active, seen)
                continue
            if not isinstance(key_node, ScalarNode) or key_node.tag != _STR:
                doc.problems.append(YamlProblem(
                    key_line, path, f"mapping keys must be strings, got {key_node.value!r}"
                ))
                continue
            key = key_node.value
            if key.startswith(_IDEOGRAPHIC_SPACE):
                doc.problems.append(YamlProblem(key_line, path, (
                    f"key {key.lstrip(_IDEOGRAPHIC_SPACE)!r} starts with ideographic spaces; "
                    f"{HINT_IDEOGRAPHIC_SPACE}")))
                continue
            if key in first_line:
                doc.problems.append(YamlProblem(
                    key_line, path + (key,),
                    f"duplicate key {key!r} (first defined on line {first_line[key]})",
                ))
                continue
            first_line[key] = key_line
            _index(value_node, path + (key,), key_line, doc, active, seen)
    elif isinstance(node, SequenceNode):
        for i, item in enumerate(node.value):
            if node.flow_style and isinstance(item, ScalarNode) and item.style is None:
                doc.flow_items.setdefault(path + (i,), item.value)
            _index(item, path + (i,), item.start_mark.line + 1, doc, active, seen)
    active.discard(id(node))


def _describe(exc: yaml.MarkedYAMLError) -> str:
    parts = [exc.context, exc.problem]
    return "; ".join(p for p in parts if p) or "invalid YAML"


# A key followed by a full-width colon (before any ASCII one): "name： 值", "- key： a".
_FULL_WIDTH_KEY = re.compile(r"^\s*(?:-\s+)?(?P<key>[^\s:：#'\"\[\]{},][^:：#]*?)\s*：")
# A key with no space after its colon ("name:值", "- key:a"): one plain string to YAML.
# Not a URL ("- http://x") and not a time ("9:30": keys start with a letter).
_NO_SPACE_KEY = re.compile(r"^\s*(?:-\s+)?(?P<key>[A-Za-z_][\w-]*):(?P<value>(?!//)[^\s].*)$")
_IDEOGRAPHIC_SPACE = "\u3000"
# A line indented with ideographic spaces before a key or a list item ("　　label: 值").
_IDEOGRAPHIC_INDENT = re.compile(r"^ *\u3000[ \u3000]*(?:-(?:\s|$)|[^\s:#]+:(?:\s|$))")
_LOOK_BACK = 3  # lines before the error's line where the mistake may be

HINT_FULL_WIDTH_COLON = (
    "hint: the colon after {key!r} is a full-width '：'; YAML needs an ASCII colon and a "
    "space: '{key}: ...' (提示：“{key}”后面是中文全角冒号“：”，请改成英文半角冒号加空格“{key}: ”)")
HINT_TAB = (
    "hint: this line is indented with a tab; YAML indents with spaces only "
    "(提示：这一行用了 Tab 键缩进，YAML 只能用空格缩进，请把 Tab 换成空格)")
HINT_IDEOGRAPHIC_SPACE = (
    "hint: this line is indented with ideographic spaces '　' (U+3000, the full-width "
    "space of a Chinese input method); YAML indents with ASCII spaces only "
    "(提示：这一行用了中文全角空格“　”缩进，YAML 只能用英文半角空格缩进，请把全角空格换成半角空格)")
HINT_NO_SPACE = (
    "hint: there is no space after the colon of {key!r}, so YAML reads '{key}:{value}' as "
    "one piece of text; write '{key}: {value}' (提示：“{key}:”后面缺少空格，整行会被当成"
    "一段文字，请在冒号后面加一个空格：“{key}: {value}”)")
HINT_UNCLOSED = (
    "hint: the '{open}' on this line is never closed; end it with an ASCII '{close}' "
    "(full-width '］', '】' or '｝' do not close it) (提示：这一行的“{open}”没有配对的英文半角"
    "“{close}”，请在末尾补上“{close}”，不能用中文的“］”“】”“｝”)")
HINT_UNCLOSED_QUOTE = (
    "hint: the quote opened on this line is never closed; end the text with the same ASCII "
    "quote on this line (Chinese quotes “ ” do not close it) (提示：这一行的引号没有配对，"
    "请在文字末尾补上同样的英文引号，中文引号“ ”不算)")
HINT_ESCAPE = (
    "hint: in double quotes a backslash starts an escape; write a regular expression in "
    "single quotes, e.g. validate: '^\\d{6}$' (提示：双引号里的反斜杠会被当作转义符，"
    "正则表达式请用单引号括起来，例如 validate: '^\\d{6}$')")


def syntax_hint(exc: yaml.MarkedYAMLError, text: str) -> tuple[int, str] | None:
    """(1-based line of the mistake, hint) for a syntax error staff often cause, else None."""
    mark = exc.problem_mark or exc.context_mark
    if mark is None:
        return None
    problem = exc.problem or ""
    if "found character '\\t'" in problem:
        return mark.line + 1, HINT_TAB
    context, opened = exc.context or "", exc.context_mark
    if "unknown escape character" in problem and "double-quoted" in context:
        return mark.line + 1, HINT_ESCAPE
    # Reported where the parser gave up (the next key's line, or the end of the file);
    # the mistake is on the line the list, mapping or quote was opened.
    if opened is not None and context.startswith("while parsing a flow "):
        brackets = ("[", "]") if "sequence" in context else ("{", "}")
        return opened.line + 1, HINT_UNCLOSED.format(open=brackets[0], close=brackets[1])
    if opened is not None and context == "while scanning a quoted scalar":
        return opened.line + 1, HINT_UNCLOSED_QUOTE
    lines = text.splitlines()
    nearby = range(min(mark.line, len(lines) - 1), max(0, mark.line - _LOOK_BACK) - 1, -1)
    for i in nearby:
        found = _FULL_WIDTH_KEY.match(lines[i])
        if found:
            return i + 1, HINT_FULL_WIDTH_COLON.format(key=found.group("key"))
    for i in nearby:
        indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
        if "\t" in indent:
            return i + 1, HINT_TAB
        if _IDEOGRAPHIC_INDENT.match(lines[i]):
            return i + 1, HINT_IDEOGRAPHIC_SPACE
    for i in nearby:
        found = _NO_SPACE_KEY.match(lines[i])
        if found:
            return i + 1, no_space_hint(found.group("key"), found.group("value"))
    return None


def no_space_hint(key: str, value: str) -> str:
    """The hint for ``key:value`` written without the space YAML needs after the colon."""
    return HINT_NO_SPACE.format(key=key, value=value.strip())


def looks_like_key_without_space(text: str) -> tuple[str, str] | None:
    """(key, value) if ``text`` (a string where a mapping was expected) is ``key:value``."""
    found = _NO_SPACE_KEY.match(text)
    return (found.group("key"), found.group("value")) if found else None
