"""What importing a module pulls in: business loading without the executors,
the browser agent or Playwright, and the job queue without the app or the flow.

Each check runs in a fresh interpreter, so what other tests imported does not count.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def _imported_by(module: str) -> set[str]:
    code = (f"import json, sys, {module}\n"
            "print(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    return set(json.loads(done.stdout))


@pytest.mark.parametrize("module", ["si_agent.config.loader", "si_agent.executor"])
def test_loading_businesses_imports_no_executor_agent_or_playwright(module):
    imported = _imported_by(module)
    for unwanted in ("playwright", "si_agent.agent", "si_agent.executor.rpa.executor",
                     "si_agent.executor.http", "openai"):
        assert unwanted not in imported, f"import {module} imports {unwanted}"


def test_the_job_queue_imports_neither_the_app_nor_the_flow():
    imported = _imported_by("si_agent.jobs.celery")
    assert not {m for m in imported if m == "si_agent.app" or m.startswith("si_agent.flow")}
