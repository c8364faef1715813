"""The ``rpa`` executor kind: government web forms filled with Playwright (see ``executor``)."""

from si_agent.executor.rpa.executor import FieldStatus, RpaExecutor, RpaOptions

__all__ = ["FieldStatus", "RpaExecutor", "RpaOptions"]
