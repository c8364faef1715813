"""The ``si-agent`` help: every option's help ends with its default.

``finish(parser)`` gives the parser and all its sub-command parsers one
formatter, ``HelpFormatter``: an option's help gets ``(default: …)`` appended
unless it already says what the default is, and flags (on/off) are left as
they are. An option whose default is None says in its own help what happens
without it ("(default: a new one)"); ``tests/test_cli_help.py`` checks that every
option of every sub-command has help and every sub-command a description.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """``ArgumentDefaultsHelpFormatter`` that leaves flags and explicit defaults alone."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if "default" in text or not takes_value(action) or action.default is None:
            return text
        return super()._get_help_string(action)


def takes_value(action: argparse.Action) -> bool:
    """Whether ``action`` reads a value from the command line (not a flag, not --help)."""
    return action.nargs != 0


def walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
         ) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """``parser`` and every sub-command parser under it, with its command words."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from walk(child, (*path, name))


def finish(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """``parser`` with ``HelpFormatter`` on it and every sub-command parser."""
    for _, each in walk(parser):
        each.formatter_class = HelpFormatter
    return parser
