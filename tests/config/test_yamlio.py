"""The safe, line-aware YAML reader."""

from __future__ import annotations

import pytest
import yaml

from si_agent.config.yamlio import SafeLineLoader, format_path, load_yaml


def test_only_true_and_false_are_booleans():
    doc = load_yaml("a: [on, off, yes, no, y, n, true, false, True]\n")
    assert doc.problems == []
    assert doc.data == {"a": ["on", "off", "yes", "no", "y", "n", True, False, True]}


def test_numbers_dates_and_nulls():
    doc = load_yaml("a: [10, 010, -3, 1.5, 0.6, 1e3, 1:30, 2024-01-01, 0x1f, ~, null]\n")
    assert doc.data == {"a": [10, 10, -3, 1.5, 0.6, 1000.0, "1:30", "2024-01-01", "0x1f", None, None]}


def test_lines_by_path():
    doc = load_yaml("# header\nid: x\napi:\n  kind: http\nfields:\n  - key: a\n    cues: [b, c]\n")
    assert doc.lines[()] == 2
    assert doc.lines[("api",)] == 3  # the key's line, not the first line below it
    assert doc.lines[("api", "kind")] == 4
    assert doc.lines[("fields", 0)] == 6
    assert doc.lines[("fields", 0, "cues", 1)] == 7
    assert doc.line_of(("fields", 0, "missing", 3)) == 6


def test_duplicate_keys_are_all_reported():
    doc = load_yaml("a: 1\nb:\n  c: 1\n  c: 2\na: 3\n")
    assert doc.data is None
    assert [(p.line, format_path(p.path), p.message) for p in doc.problems] == [
        (4, "b.c", "duplicate key 'c' (first defined on line 3)"),
        (5, "a", "duplicate key 'a' (first defined on line 1)"),
    ]


def test_the_loader_alone_refuses_duplicate_keys():
    with pytest.raises(yaml.constructor.ConstructorError, match="duplicate key 'a'"):
        yaml.load("a: 1\na: 2\n", Loader=SafeLineLoader)  # noqa: S506 - a SafeLoader subclass


def test_the_loader_is_safe():
    doc = load_yaml("a: !!python/object/apply:os.system ['true']\n")
    assert doc.data is None
    assert doc.problems[0].line == 1
    assert "could not determine a constructor" in doc.problems[0].message


def test_syntax_error_line():
    # The parser stops on line 3; the list never closed is opened on line 2.
    doc = load_yaml("a: 1\nb: [1, 2\nc: 3\n")
    assert [p.line for p in doc.problems] == [2]
    assert "the '[' on this line is never closed" in doc.problems[0].message
    doc = load_yaml("a: 1\nb: {c: 1\n")  # stopped at the end of the file
    assert [p.line for p in doc.problems] == [2]
    assert doc.problems[0].message.startswith("YAML syntax error: ")


def test_non_string_keys_are_reported():
    doc = load_yaml("a: 1\n3: x\n")
    assert [(p.line, p.message) for p in doc.problems] == [(2, "mapping keys must be strings, got '3'")]


def test_format_path():
    assert format_path(("fields", 2, "options", 0, "aliases")) == "fields[2].options[0].aliases"
    assert format_path(()) == ""
