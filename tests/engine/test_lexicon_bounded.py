"""The lexicon's regexes stay linear on floods of their own words (issue 23, item 2).

Nested or ambiguous repetition (``(?:嗯+)*``, ``(?:我要|我|要)*``, ``(?:那就|那|就)*``)
makes ``re`` try every split of a flood before it fails: "嗯"×24 + "x" took 4.5 s
in CLOSING, and each more character doubles it. Each case runs in a child process
with a timeout, so the test fails (instead of hanging) when such a pattern comes
back; and each checks the answer, so the language the patterns read stays the same.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 30  # the linear patterns take milliseconds; the old ones hours at this length
N = 60  # repetitions: far past the 24 that took seconds, well under the message limit

CASES = [
    # (recogniser, message, expected answer)
    ("small_talk", "嗯" * N + "x", None),  # CLOSING
    ("small_talk", "嗯" * N + "谢谢", "closing"),
    ("small_talk", "再见" * N + "x", None),  # CLOSING's goodbyes: one way to read them
    ("small_talk", "谢谢啊再见呀拜拜啦", "closing"),
    ("is_conversational", "嗯" * N + "x", False),  # FILLER_ONLY, CLOSING
    ("is_conversational", "啊" * N + "好的", True),
    ("is_conversational", "哦" * N + "x", False),
    ("is_preamble_only", "嗯" * N + "x", False),  # PREAMBLE
    ("is_preamble_only", "呃" * N + "，", True),
    ("is_preamble_only", "啊" * N + "x", False),
    ("is_cancel", "我要" * N + "x", False),  # _CANCEL_CLAUSE
    ("is_cancel", "我要" * N + "取消", True),
    ("is_cancel", "我想" * N + "x", False),
    ("is_cancel", "那就" * N + "x", False),  # _CANCEL_CLAUSE, _STOP_CLAUSE
    ("is_cancel", "那就" * N + "不办了", True),
    ("abandons", "那就" * N + "不挂失x", False),  # _STOP_CLAUSE
]

_CHILD = textwrap.dedent("""
    import sys
    from si_agent.engine import lexicon
    name, text = sys.argv[1], sys.argv[2]
    print(repr(getattr(lexicon, name)(text)))
""")


@pytest.mark.parametrize("name,text,expected", CASES,
                         ids=[f"{n}:{t[:2]}x{N}{t[2 * N:][:4]}" for n, t, _ in CASES])
def test_flood_is_read_in_linear_time(name: str, text: str, expected: object) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD, name, text], env=env,
                              capture_output=True, text=True, timeout=TIMEOUT_S, check=True)
    except subprocess.TimeoutExpired:
        pytest.fail(f"lexicon.{name} ran over {TIMEOUT_S} s on a flood of {len(text)} "
                    "characters: a regex backtracks exponentially")
    assert done.stdout.strip() == repr(expected)
