"""Executors: carry out a business once its fields are collected and confirmed.

    executors = Executors(settings)        # one per process; thread-safe
    executor = executors.get(business)     # .long_running, .resumable
    result = executors.run(business, values, idempotency_key="...")

``Executors`` serves each ``business.api.kind`` with one executor instance:
an instance passed in ``executors=`` (tests, applications), else one built on
first use from the kind's class looked up by name (``si_agent.config.kinds``: the built-ins
``http``, ``builtin`` and ``rpa``, entry points of group ``si_agent.executors``,
and ``register_executor``). Importing this package imports no executor: each
kind's class is imported when a business of that kind first runs. Before
running, it validates ``business.api.options``
with the kind's ``Options`` model (cached per business). The protocol a kind
implements is in ``base``.

    http      HttpExecutor      the business's HTTP backend; ``http://demo.si-agent``
                                is the in-process demo backend (``demo_host``)
    builtin   BuiltinExecutor   an in-process handler from ``builtin.HANDLERS``

``missing(businesses)`` is the start-up check: what each business's executor
lacks on this machine (a kind may define ``requirements(options)`` returning
``si_agent.requirements.Missing`` items: the rpa kind checks Playwright, the
browser and whether the portal answers).

Failures raise ``ExecutorError`` (message and field errors in Chinese, for the
citizen; ``retryable`` says whether resubmitting the same data may succeed);
an unknown kind raises ``UnknownBackendError``; options that do not validate
raise ``ConfigErrors`` (businesses loaded from YAML were checked at load).
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel

from si_agent.config.kinds import (
    check_executor,
    executor_class,
    executor_kinds,
    option_errors,
    register_executor,
)
from si_agent.config.model import Api, Business
from si_agent.config.settings import Settings
from si_agent.config.yamlio import format_path
from si_agent.errors import ConfigError, ConfigErrors, SiAgentError, UnknownBackendError
from si_agent.executor.base import (
    Discovers,
    Executor,
    ExecutorBase,
    ExecutorOptions,
    JobContext,
    Progress,
)
from si_agent.executor.options import BuiltinOptions, HttpOptions
from si_agent.executor.registry import Capabilities, build_executor, capabilities
from si_agent.requirements import Missing

if TYPE_CHECKING:
    import httpx

    from si_agent.executor.builtin import HANDLERS, BuiltinExecutor
    from si_agent.executor.demo_host import DEMO_ORIGIN
    from si_agent.executor.http import HttpExecutor

__all__ = [
    "DEMO_ORIGIN",
    "HANDLERS",
    "BuiltinExecutor",
    "BuiltinOptions",
    "Capabilities",
    "Executor",
    "ExecutorBase",
    "ExecutorOptions",
    "JobContext",
    "Executors",
    "HttpExecutor",
    "HttpOptions",
    "executor_kinds",
    "register_executor",
]

log = logging.getLogger(__name__)

_LAZY = {  # imported on first use, so importing this package imports no executor
    "DEMO_ORIGIN": "si_agent.executor.demo_host",
    "HANDLERS": "si_agent.executor.handlers",
    "BuiltinExecutor": "si_agent.executor.builtin",
    "HttpExecutor": "si_agent.executor.http",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


class Executors:
    """Runs any business with the executor its ``api.kind`` names.

    ``executors`` maps kinds to ready instances that override or add to the
    registry's; the caller owns (and closes) those. ``transport`` replaces the
    network transport of the http executor built here (tests).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        transport: httpx.BaseTransport | None = None,
        executors: Mapping[str, Executor] | None = None,
    ) -> None:
        self._settings = settings
        self._lock = threading.Lock()
        self._built: list[Executor] = []  # what close() closes
        self._instances: dict[str, Executor] = {}
        self._capabilities: dict[str, Capabilities] = {}
        if transport is not None:
            if "http" in (executors or {}):
                raise ValueError("pass transport or an injected 'http' executor, not both")
            from si_agent.executor.http import HttpExecutor

            self._adopt(HttpExecutor(settings.demo_backend_db, transport=transport))
        for kind, executor in (executors or {}).items():
            check_executor(kind, executor)
            self._instances[kind] = executor
            self._capabilities[kind] = capabilities(executor)
        self._options: dict[str, tuple[Api, BaseModel]] = {}

    def get(self, business: Business) -> Executor:
        """The executor instance for ``business.api.kind``; ``UnknownBackendError`` if none."""
        kind = _api(business).kind
        executor = self._instances.get(kind)
        if executor is not None:
            return executor
        with self._lock:
            executor = self._instances.get(kind)
            if executor is None:
                try:
                    cls = executor_class(kind)
                except UnknownBackendError as exc:
                    raise UnknownBackendError(
                        "api kind", kind, {*executor_kinds(), *self._instances}
                    ) from exc
                executor = self._adopt(build_executor(cls, self._settings))
        return executor

    def capabilities(self, business: Business) -> Capabilities:
        """What the executor of ``business.api.kind`` declares (``long_running``,
        ``resumable``, ``takes_job``, ``discovers``)."""
        self.get(business)
        return self._capabilities[_api(business).kind]

    def options(self, business: Business) -> BaseModel:
        """``business.api.options`` validated by its kind's ``Options`` (cached per business id).

        Raises ``ConfigErrors`` located at ``api.options.<key>`` if they do not validate.
        """
        api = _api(business)
        cached = self._options.get(business.id)
        if cached is not None and cached[0] == api:
            return cached[1]
        executor = self.get(business)
        options, problems = option_errors(executor.Options, api.options)
        if options is None:
            source = business.source or f"business {business.id}"
            raise ConfigErrors(
                ConfigError(source, None, format_path(("api", "options", *loc)), message)
                for loc, message in problems
            )
        self._options[business.id] = (api, options)
        return options

    def missing(self, businesses: Iterable[Business]) -> dict[str, list[Missing]]:
        """What the executors of ``businesses`` lack on this machine, by business id
        (only businesses with something missing). Kinds that declare no
        ``requirements`` need nothing; a kind that cannot even be built or whose
        options do not validate is left to fail when it runs, as before."""
        found: dict[str, list[Missing]] = {}
        for business in businesses:
            if business.api is None:
                continue
            kind = business.api.kind
            try:
                declared = self._instances.get(kind) or executor_class(kind)
                if not callable(getattr(declared, "requirements", None)):
                    continue
                missing = list(self.get(business).requirements(  # type: ignore[attr-defined]
                    self.options(business)))
            except SiAgentError as exc:
                log.debug("business %s: requirements not checked: %s", business.id, exc)
                continue
            if missing:
                found[business.id] = missing
        return found

    def prepare(self, business: Business) -> Business:
        """``business`` ready to collect: with ``fields: discover``, the fields its
        executor reads from the form (cached). Raises ``ExecutorError`` when the form
        cannot be read, ``ConfigErrors`` when the kind cannot discover."""
        if not business.discover:
            return business
        executor = self.get(business)
        if not self.capabilities(business).discovers:
            source = business.source or f"business {business.id}"
            raise ConfigErrors([ConfigError(source, None, "fields", f"api.kind {_api(business).kind!r} "
                                            "cannot discover fields")])
        return cast(Discovers, executor).discovered(business, self.options(business))

    def run(
        self,
        business: Business,
        values: Mapping[str, Any],
        *,
        idempotency_key: str,
        progress: Progress | None = None,
        job: JobContext | None = None,
    ) -> dict:
        """Execute ``business`` with ``values``; raises ``ExecutorError`` on failure.

        ``job`` reaches only executors whose class says ``takes_job = True``."""
        executor = self.get(business)
        takes_job = self.capabilities(business).takes_job
        extra = {"job": job or JobContext(id="")} if takes_job else {}
        result = executor.run(
            business, values, idempotency_key=idempotency_key,
            options=self.options(business), progress=progress, **extra,
        )
        if not isinstance(result, dict):
            raise TypeError(f"executor kind {_api(business).kind!r} returned "
                            f"{type(result).__name__}, not dict")
        return result

    def close(self) -> None:
        """Close the executors built here (e.g. the HTTP connection pool)."""
        with self._lock:
            built, self._built = self._built, []
        for executor in built:  # built from a registered class: closable if it says so
            close = getattr(executor, "close", None)
            if close is not None:
                close()

    def __enter__(self) -> Executors:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _adopt(self, executor: Executor) -> Executor:
        check_executor(executor.kind, executor)
        self._instances[executor.kind] = executor
        self._capabilities[executor.kind] = capabilities(executor)
        self._built.append(executor)
        return executor


def _api(business: Business) -> Api:
    """``business.api``; a consultation (no api) has nothing to execute (``ValueError``)."""
    if business.api is None:
        raise ValueError(f"business {business.id!r} has no api: nothing to execute")
    return business.api
