"""``si-agent --help`` tells a newcomer what each command does and every option's default."""

from __future__ import annotations

import argparse

import pytest

from si_agent.cli import _parser
from si_agent.cli_help import takes_value, walk

# The serve sub-command's help is written with the server's start-up work; until
# it is, it is left out here (remove once `serve --help` is described).
PENDING: set[tuple[str, ...]] = set()

COMMANDS = [(path, parser) for path, parser in walk(_parser()) if path not in PENDING]


def options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions
            if not isinstance(a, argparse._HelpAction | argparse._SubParsersAction)]


def test_every_command_is_walked():
    names = {" ".join(path) for path, _ in COMMANDS}
    assert {"chat", "portal", "validate", "graph", "replay", "kb ingest", "kb search",
            "kb ask", "worker", "rpa run", "rpa discover", "agent run", "audit",
            "admin-token"} <= names


@pytest.mark.parametrize("path, parser", COMMANDS, ids=[" ".join(p) or "si-agent" for p, _ in COMMANDS])
def test_each_command_is_described_and_each_option_has_help_with_its_default(path, parser):
    assert (parser.description or "").strip(), f"si-agent {' '.join(path)} has no description"
    text = parser.format_help()
    for action in options(parser):
        name = "/".join(action.option_strings) or action.dest
        assert (action.help or "").strip(), f"{name} of si-agent {' '.join(path)} has no help"
        shown = parser._get_formatter()._expand_help(action)
        if not takes_value(action) or action.required or action.nargs == "+":
            continue
        if action.default is None:  # nothing to show: the help says what happens without it
            assert "default" in shown, f"{name}: say what happens without it (default: …)"
        else:
            assert "default" in shown and (str(action.default) in shown
                                           or "default:" in action.help), (name, shown)
    assert "usage: si-agent" in text


def test_portal_help_describes_the_portal(capsys):
    with pytest.raises(SystemExit):
        _parser().parse_args(["portal", "--help"])
    out = capsys.readouterr().out
    assert "demo government portal" in out and "examples/portal/businesses" in out
    assert "--port PORT  port to listen on (default: 8100)" in out
