"""The ``Executor`` protocol every executor kind implements, ``ExecutorBase`` and ``ExecutorOptions``.

An executor kind is a class with one required method and class attributes that
declare what it is and can do:

    class RpaExecutor(ExecutorBase):
        kind = "rpa"                 # the api.kind it serves
        Options = RpaOptions         # an ExecutorOptions subclass: validates api.options
        long_running = True          # runs as a background job, not within the HTTP turn
        resumable = True             # re-running with the same idempotency key applies once
        takes_job = True             # run() takes job=JobContext(...)
        discovers = True             # discovered() reads a ``fields: discover`` business's form

        def run(self, business, values, *, idempotency_key, options, progress=None) -> dict:
            ...

``run`` returns the result dict that ``api.result_template`` is filled from, or
raises ``ExecutorError`` (Chinese ``message`` and ``field_errors`` for the
citizen; ``retryable`` says whether resubmitting the same data may succeed).
``options`` is the business's ``api.options`` already validated by ``Options``;
``progress``, when given, takes short Chinese progress texts ("正在填写表单…").
``takes_job`` and ``discovers`` default to False (``ExecutorBase``, or left
undeclared); a kind that says ``discovers = True`` implements ``Discovers``.
``close()`` (a no-op on ``ExecutorBase``) releases what the instance holds.
A kind may also define ``requirements(options)``, checked once per business when
the assistant starts (``Executors.missing``): a list of
``si_agent.requirements.Missing`` (what is missing and how to fix it; a blocking
one makes the business unavailable online, e.g. the rpa kind without Playwright
or its browser, a non-blocking one is a warning, e.g. a portal down at start).

``Executors`` builds one instance per kind per process (so ``run`` must be
safe across threads): ``cls.from_settings(settings)`` if the class defines
that classmethod, else ``cls()``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict

from si_agent.config.model import Business

Progress = Callable[[str], None]


@dataclass(frozen=True)
class JobContext:
    """The job an executor runs for, given to kinds with ``takes_job = True``:
    its ``id`` (e.g. to name a trace directory), ``attempt`` (a fencing token) and
    ``resume``, the JSON the flow's last failed submission left
    (``ExecutorError.resume``), e.g. the draft of a web form to continue instead
    of starting a second application."""

    id: str
    resume: Mapping[str, Any] = field(default_factory=dict)
    attempt: int = 1  # the job's attempt number: 2 and up once taken over after a crash
    # Records ``resume`` on the job at once (before a submission), so a rerun of the
    # job after a crash, on any machine, continues from it.
    remember: Callable[[dict[str, Any]], None] | None = None


class ExecutorOptions(BaseModel):
    """Base of every kind's ``Options``: frozen, and an unknown option is an error."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Executor(Protocol):
    """Carries out a business whose fields are collected and confirmed."""

    kind: ClassVar[str]
    Options: ClassVar[type[BaseModel]]
    long_running: ClassVar[bool]
    resumable: ClassVar[bool]
    takes_job: ClassVar[bool]
    discovers: ClassVar[bool]

    def run(
        self,
        business: Business,
        values: Mapping[str, Any],
        *,
        idempotency_key: str,
        options: Any,
        progress: Progress | None = None,
    ) -> dict:
        """Return the result dict, or raise ``ExecutorError``. ``options`` is an
        instance of the kind's own ``Options`` (each kind declares that type)."""
        ...

    def close(self) -> None:
        """Release what the instance holds (connections, browsers)."""
        ...


class Discovers(Protocol):
    """What an executor with ``discovers = True`` adds: a business's fields, read from its form."""

    def discovered(self, business: Business, options: Any) -> Business:
        """``business`` with the fields its form asks for; raises ``ExecutorError``."""
        ...


class ExecutorBase:
    """Defaults for the optional parts of ``Executor``: no job context, no
    discovery, nothing to close. Subclasses set ``kind``, ``Options``,
    ``long_running``, ``resumable`` and define ``run``."""

    takes_job: ClassVar[bool] = False
    discovers: ClassVar[bool] = False

    def close(self) -> None:
        """Nothing to release."""
