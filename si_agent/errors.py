"""The exceptions si_agent raises, under one root.

    SiAgentError
    ├── DefinitionError            a definition is wrong; found at load or start (staff/developer)
    │   ├── ConfigError (ValueError)    one problem in a business YAML: file, line, path
    │   ├── ConfigErrors (ValueError)   several ConfigError at once, raised by the loader
    │   ├── InvalidMachine              the state machine definition is inconsistent
    │   ├── SettingsError (ValueError)  a setting is missing or contradicts another
    │   │   └── InsecureSettings        prod mode configured unsafely (the server refuses to start)
    │   └── TranscriptError (ValueError)  a dialogue transcript is malformed (``si-agent replay``)
    ├── UnknownBackendError (LookupError)  a registry name that does not exist; lists the valid ones
    ├── AccountError (ValueError)  a staff account cannot be added or changed (si_agent.staff)
    └── RuntimeFlowError           something went wrong while running a turn or a job
        ├── SessionConflict            a concurrent turn saved the session first
        ├── JobConflict                a concurrent writer changed the job record first
        ├── JobInProgress              a reset while a submission is being processed
        ├── TicketRefused              a hand-off ticket cannot be taken, answered or closed
        ├── NoStepAwaited              a photo arrived, but no step waits for an upload
        ├── StoreUnavailable           the session store cannot be reached
        ├── ExecutorError              a business backend call failed
        ├── ModelUnavailable           the model endpoint failed after its retries, or refused
        ├── ArgumentsRejected (ValueError)  a model's tool-call arguments do not fit the tool
        ├── UploadRejected             an upload refused (413/415) with a Chinese message
        ├── PhotoUnusable              a photo shows no usable face (carries the problem)
        └── RequestError               an HTTP request answered with an error status
            └── server.errors.ApiError, RateLimited  (with the server's message tables)

Definition-time errors (``DefinitionError``) are for developers and business
staff (English) and stop a load or a start; run-time errors
(``RuntimeFlowError``) happen while serving, and what a citizen sees is
rendered from reply templates (or a Chinese ``message`` the error carries),
never from an exception's text.

Outside this tree on purpose: ``ConfigWarning`` (a ``UserWarning``), something in a
business YAML worth a second look that stops nothing (``si-agent validate`` prints
it, e.g. a keyword that takes over another business's messages); the ``rag`` package has its own root
(``rag.errors.RagError``; ``rag`` never imports si_agent), and the demo
backend's ``DemoError`` belongs to the stand-in for a government system.
Old import paths keep working: ``si_agent.engine.chat.ModelUnavailable``,
``si_agent.engine.arguments.ArgumentsRejected``, ``si_agent.server.auth.InsecureSettings``,
``si_agent.uploads.UploadRejected``, ``si_agent.photo.face.Unusable``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class SiAgentError(Exception):
    """Root of every si_agent exception."""


class DefinitionError(SiAgentError):
    """A definition (business YAML, state machine) is wrong; found at load time."""


class _Located(Exception):
    """Something at a place in a business file: ``file:line: path: {label}message``."""

    label = ""

    def __init__(self, file: str, line: int | None, path: str, message: str) -> None:
        self.file = file
        self.line = line
        self.path = path
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"{self.file}:{self.line or 0}: {self.path or '<root>'}: {self.label}{self.message}"


class ConfigError(_Located, DefinitionError, ValueError):
    """One problem in one business file, located as ``file:line: path: message``."""


class ConfigWarning(_Located, UserWarning):
    """Something in a business file worth a second look; stops no load.

    Located like ``ConfigError``: ``file:line: path: warning: message``."""

    label = "warning: "


class ConfigErrors(DefinitionError, ValueError):
    """All the problems found while loading a business directory."""

    def __init__(self, errors: Iterable[ConfigError]) -> None:
        self.errors = list(errors)
        super().__init__("\n".join(str(e) for e in self.errors))


class InvalidMachine(DefinitionError):
    """The state machine definition is inconsistent (e.g. an unreachable state)."""


class SettingsError(DefinitionError, ValueError):
    """A setting is missing or contradicts another (e.g. a model engine without a URL)."""


class InsecureSettings(SettingsError):
    """The settings are not safe for production."""


class TranscriptError(DefinitionError, ValueError):
    """A dialogue transcript is malformed (an unknown key, a bad requirement)."""


class UnknownBackendError(SiAgentError, LookupError):
    """A backend (store, engine, executor, step handler) name is not registered."""

    def __init__(self, kind: str, name: str, valid: Iterable[str]) -> None:
        self.kind = kind
        self.name = name
        self.valid = sorted(valid)
        super().__init__(f"unknown {kind} {name!r}; valid names: {', '.join(self.valid)}")


class AccountError(SiAgentError, ValueError):
    """A staff account cannot be added, changed or removed: ``reason`` says why
    (``invalid_name``, ``weak_password``, ``exists``, ``unknown``, ``invalid_role``)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class RuntimeFlowError(SiAgentError):
    """A problem while running a turn (not caused by a definition)."""


class SessionConflict(RuntimeFlowError):
    """The session was saved by a concurrent turn since it was loaded."""

    def __init__(self, session_id: str, expected: int, found: int | None) -> None:
        self.session_id = session_id
        self.expected = expected
        self.found = found
        super().__init__(
            f"session {session_id!r} changed concurrently (expected version {expected}, found {found})"
        )


class JobConflict(RuntimeFlowError):
    """The job record was saved by someone else since it was loaded."""

    def __init__(self, job_id: str, expected: int, found: int | None) -> None:
        self.job_id = job_id
        self.expected = expected
        self.found = found
        super().__init__(f"job {job_id!r} changed concurrently (expected version {expected}, "
                         f"found {found})")


class JobInProgress(RuntimeFlowError):
    """The session cannot be reset: its submission is still being processed."""

    def __init__(self, session_ref: str, job_id: str) -> None:
        self.session_ref = session_ref
        self.job_id = job_id
        super().__init__(f"{session_ref}: job {job_id} is still being processed")


class TicketRefused(RuntimeFlowError):
    """A staff action on a hand-off ticket that cannot be done: ``why`` is ``not_found``,
    ``closed``, ``taken`` (another staff member, ``holder``, holds it) or ``not_held``
    (the acting staff member does not hold it, or their lease ran out)."""

    def __init__(self, number: str, why: str, holder: str | None = None) -> None:
        self.number = number
        self.why = why
        self.holder = holder
        super().__init__(f"ticket {number}: {why}" + (f" (held by {holder})" if holder else ""))


class NoStepAwaited(RuntimeFlowError):
    """A photo arrived, but no step (or not the named one) waits for an upload."""

    def __init__(self, session_ref: str, step_id: str | None) -> None:
        self.session_ref = session_ref
        self.step_id = step_id
        super().__init__(f"{session_ref}: no step {step_id or ''} awaits an upload".replace("  ", " "))


class StoreUnavailable(RuntimeFlowError):
    """The session store cannot be reached."""


class ExecutorError(RuntimeFlowError):
    """A business backend call failed.

    ``field_errors`` maps field keys to the backend's message for that field, so
    the dialogue can ask again for just those; ``retryable`` says whether the same
    data may simply be submitted again. ``resume`` is JSON the executor wants back
    on the flow's next submission (e.g. the web form's draft to continue), given
    to executors that take a ``JobContext``.
    """

    def __init__(
        self,
        message: str,
        *,
        field_errors: dict[str, str] | None = None,
        retryable: bool = True,
        status: int | None = None,
        resume: dict[str, Any] | None = None,
        unknown: bool = False,
    ) -> None:
        self.message = message
        self.field_errors = dict(field_errors or {})
        self.retryable = retryable
        self.status = status
        self.resume = resume
        # The message is the whole account (something may have been, or was, submitted
        # earlier): shown as it stands, not as a refusal, never offered for retry.
        self.unknown = unknown
        super().__init__(message)


class ModelUnavailable(RuntimeFlowError):
    """The model could not be reached after the SDK's retries, or refused the request.

    ``usage`` is what was spent trying (HTTP requests sent, retries included), a
    ``si_agent.session.model.Usage``; named only here in words, because this module
    sits below every package of si_agent and imports none of them.
    """

    def __init__(self, message: str, usage: Any) -> None:
        super().__init__(message)
        self.usage = usage


class ArgumentsRejected(RuntimeFlowError, ValueError):
    """A tool call's arguments are malformed or do not fit the tool's schema."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class UploadRejected(RuntimeFlowError):
    """An upload refused with ``status`` (413, 415) and a Chinese ``message``."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}")
        self.status, self.code, self.message = status, code, message


class PhotoUnusable(RuntimeFlowError):
    """A photo cannot be used (no face, several, too small...); ``problem`` says
    which (a ``si_agent.photo.face.FaceProblem``)."""

    def __init__(self, problem: Any) -> None:
        super().__init__(problem.value)
        self.problem = problem


class RequestError(RuntimeFlowError):
    """An HTTP request answered with an error ``status``; ``code`` names the
    error and ``message`` is the Chinese text the client shows. The server's
    ``ApiError`` fills them from its message tables."""

    status: int
    code: str
    message: str
