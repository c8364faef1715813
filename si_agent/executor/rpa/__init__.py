"""The ``rpa`` executor kind: government web forms filled with Playwright (see ``executor``)."""

from si_agent.executor.rpa.executor import RpaExecutor, RpaOptions
from si_agent.executor.rpa.trace import FieldStatus

__all__ = ["FieldStatus", "RpaExecutor", "RpaOptions"]
