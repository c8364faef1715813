"""What a turn may use besides its session: narrow protocols in one frozen bundle.

Each protocol has one or two methods, so a test (or another front end) can
give a turn exactly what it needs. The controller builds the bundle once
(``Controller.deps``); the job driver uses the same one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from si_agent.audit import AuditLog
from si_agent.config.assistant import AssistantTexts
from si_agent.config.model import Business, Step
from si_agent.core.catalog import Catalog
from si_agent.core.decision import ValuesWithRequest
from si_agent.core.machine import DialogueMachine
from si_agent.executor import Executors
from si_agent.executor.base import Executor
from si_agent.flow.steps import StepHandler
from si_agent.handoff import Desk
from si_agent.jobs import Job, JobRunner, JobStore
from si_agent.knowledge import Answer
from si_agent.moderation import Moderation
from si_agent.session.base import SessionStore
from si_agent.session.files import StepFiles
from si_agent.session.model import Session


class FileReader(Protocol):
    """Reads a kept step file (or a consultation profile)."""

    def get(self, owner: str, name: str) -> bytes | None: ...


class JobReader(Protocol):
    """Reads a job record."""

    def load(self, job_id: str) -> Job | None: ...


class Discoverer(Protocol):
    """Reads a ``fields: discover`` business's fields from its form (may open a browser);
    raises ``ExecutorError``."""

    def discovered(self, business: Business) -> Business: ...


class KnowledgeChannel(Protocol):
    """Answers a policy question (``None``: nothing found)."""

    def answer(self, question: str, *, generate: bool = True,
               context: str | None = None) -> Answer | None: ...


class Toolsets(Protocol):
    """The tools a state offers (cached by the controller)."""

    def toolset(self, state: str, business: Business | None, step: Step | None,
                retryable: bool = True) -> list[dict]: ...


class JobKinds(Protocol):
    """Whether a business's executor runs long (the job goes to the runner)."""

    def long_running(self, business: Business) -> bool: ...


@dataclass(frozen=True)
class TurnDeps:
    """Everything a turn reads besides its session; nothing here is written by a turn."""

    catalog: Catalog
    machine: DialogueMachine
    texts: AssistantTexts
    handoff_text: str
    unavailable: Mapping[str, list[str]]  # business id -> what it lacks (step handlers, executor requirements)
    files: FileReader
    jobs: JobReader
    discoverer: Discoverer
    knowledge: KnowledgeChannel
    model_text_answers: bool  # no knowledge base: a model's free text is the answer
    toolsets: Toolsets
    step_handlers: Mapping[str, StepHandler]
    job_kinds: JobKinds
    lease: float  # a queued job's first lease, in seconds
    engine_name: str
    values_with_request: ValuesWithRequest | None = None
    moderation: Moderation = Moderation()  # checks every reply before it is shown
    handoff: Desk | None = None  # the hand-off queue (flow.handoff)


class JobHost(Protocol):
    """What the driver uses of its controller (read per use: a test may replace one)."""

    catalog: Catalog
    store: SessionStore
    jobs: JobStore
    files: StepFiles
    audit: AuditLog
    runner: JobRunner
    executor: Executors

    @property
    def deps(self) -> TurnDeps: ...

    def load(self, session_id: str, *, tell_expiry: bool = False) -> Session: ...

    def executor_for(self, business: Business) -> Executor: ...

    def ready(self, business: Business) -> Business: ...
