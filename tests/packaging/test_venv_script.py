"""``scripts/venv.sh``'s ``keep_bytecode``, which ``scripts/run.sh`` calls before starting.

With ``PYTHONDONTWRITEBYTECODE`` set (as in many containers), every start compiled
again the ~1,600 modules a server imports (4 s of CPU on a 2-core machine): the
bytecode is written under ``.venv/pycache`` instead (docs/performance.md, "Start-up").
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def _after_keep_bytecode(**env: str) -> tuple[str, str]:
    script = ('. scripts/venv.sh; keep_bytecode; '
              'echo "${PYTHONDONTWRITEBYTECODE-unset}"; echo "${PYTHONPYCACHEPREFIX-unset}"')
    base = {k: v for k, v in os.environ.items()
            if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    out = subprocess.run(["bash", "-c", script], cwd=ROOT, env={**base, **env},
                         capture_output=True, text=True, check=True, timeout=30).stdout
    dont_write, prefix = out.splitlines()
    return dont_write, prefix


def test_bytecode_goes_under_the_venv_when_the_environment_forbids_writing_it():
    assert _after_keep_bytecode(PYTHONDONTWRITEBYTECODE="1") == (
        "unset", str(ROOT / ".venv" / "pycache"))


def test_a_prefix_already_chosen_is_kept():
    assert _after_keep_bytecode(PYTHONDONTWRITEBYTECODE="1", PYTHONPYCACHEPREFIX="/elsewhere") == (
        "unset", "/elsewhere")


def test_nothing_changes_when_python_writes_its_bytecode_anyway():
    assert _after_keep_bytecode() == ("unset", "unset")


def test_run_sh_keeps_the_bytecode():
    text = (ROOT / "scripts" / "run.sh").read_text(encoding="utf-8")
    assert text.index("keep_bytecode") < text.index("exec \"$repo/.venv/bin/si-agent\"")


def test_test_sh_keeps_the_bytecode():
    text = (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    assert text.index("keep_bytecode") < text.index(".venv/bin/python -m pytest")
