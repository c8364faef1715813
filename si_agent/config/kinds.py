"""Executor kinds by name: the built-ins, entry points, and kinds registered in code.

    executor_kinds()                      -> ["builtin", "http", ...]
    executor_class("http")                -> HttpExecutor
    register_executor("rpa", RpaExecutor)

A name is looked up in this order:

    built-in      http (HttpExecutor), builtin (BuiltinExecutor), rpa (RpaExecutor);
                  never replaced
    code          register_executor(kind, cls)
    entry point   group ``si_agent.executors`` of any installed package:
                      [project.entry-points."si_agent.executors"]
                      rpa = "si_rpa.executor:RpaExecutor"

A built-in kind is named by import paths, its options model apart from its
class (``executor_options``): loading businesses validates ``api.options``
without importing an executor, the browser agent or Playwright; the class is
imported when a business of the kind first runs (``executor_class``).

Kinds named in business YAML must be known when businesses load, so code
registers its kinds before that. Entry points are listed on first use, once
per process, and each is imported only when its kind is first asked for. An
entry point that cannot be imported, or whose class does not fit the
``Executor`` protocol, raises a ``DefinitionError`` naming it (every time it
is asked for) and leaves every other kind working. An unknown name raises
``UnknownBackendError`` listing the valid ones. An entry point that clashes
with a built-in or with another entry point is ignored with a warning; a kind
registered in code shadows an entry point of the same name.

This lookup lives in ``config``, below the executors, because loading businesses
needs it (``api.kind`` and ``api.options`` are checked at load) and the
executors import the config models: it names every built-in by import path and
imports nothing of ``si_agent.executor``, so the two packages form no import
cycle. Building executors from these classes (``build_executor``,
``capabilities``) is ``si_agent.executor.registry``'s.
"""

from __future__ import annotations

import importlib
import logging
import re
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from pydantic import BaseModel, ValidationError

from si_agent.errors import DefinitionError, UnknownBackendError

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "si_agent.executors"
KIND_PATTERN = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class BuiltinKind:
    """Where a built-in kind lives: ``"module:Name"`` of its class and of its options."""

    executor: str
    options: str


BUILTIN_KINDS: dict[str, BuiltinKind] = {
    "http": BuiltinKind("si_agent.executor.http:HttpExecutor",
                        "si_agent.executor.options:HttpOptions"),
    "builtin": BuiltinKind("si_agent.executor.builtin:BuiltinExecutor",
                           "si_agent.executor.options:BuiltinOptions"),
    "rpa": BuiltinKind("si_agent.executor.rpa.executor:RpaExecutor",
                       "si_agent.executor.rpa.options:RpaOptions"),
}


_lock = threading.RLock()
_registered: dict[str, type] = {}
_entry_points: dict[str, metadata.EntryPoint] | None = None  # listed on first use
_loaded: dict[str, type] = {}  # entry-point kinds imported so far
_broken: dict[str, str] = {}  # entry-point kinds that failed, with the reason


def register_executor(kind: str, cls: type) -> None:
    """Make ``cls`` serve ``api.kind: <kind>``; registering the same class again is a no-op.

    Raises ``ValueError`` for a name that is not an identifier, is a built-in,
    or is taken by another class; ``DefinitionError`` if ``cls`` does not fit
    the ``Executor`` protocol.
    """
    if not KIND_PATTERN.match(kind):
        raise ValueError(f"executor kind {kind!r} must match {KIND_PATTERN.pattern}")
    if kind in BUILTIN_KINDS:
        raise ValueError(f"{kind!r} is a built-in executor kind and cannot be replaced; "
                         f"pass an instance to Executors(executors=...) instead")
    check_executor(kind, cls)
    with _lock:
        current = _registered.get(kind)
        if current is not None and current is not cls:
            raise ValueError(f"executor kind {kind!r} is already registered to "
                             f"{current.__module__}.{current.__qualname__}")
        _registered[kind] = cls


def executor_kinds() -> list[str]:
    """Every valid ``api.kind``, sorted (entry points are listed, not imported)."""
    return sorted({*BUILTIN_KINDS, *_registered, *_listed_entry_points()})


def executor_class(kind: str) -> type:
    """The class serving ``kind``.

    Raises ``UnknownBackendError`` for an unknown name and ``DefinitionError``
    for an entry point that cannot be loaded.
    """
    builtin = BUILTIN_KINDS.get(kind)
    if builtin is not None:
        return _builtin_class(kind, builtin)
    cls = _registered.get(kind)
    if cls is not None:
        return cls
    entry_point = _listed_entry_points().get(kind)
    if entry_point is None:
        raise UnknownBackendError("api kind", kind, executor_kinds())
    with _lock:
        if kind not in _loaded and kind not in _broken:
            _load(kind, entry_point)
    if kind in _broken:
        raise DefinitionError(_broken[kind])
    return _loaded[kind]


def executor_options(kind: str) -> type[BaseModel]:
    """The ``Options`` model of ``kind`` (a built-in's without importing its class).

    Raises like ``executor_class``.
    """
    builtin = BUILTIN_KINDS.get(kind)
    if builtin is not None:
        options: type[BaseModel] = _imported(builtin.options)
        return options
    options = executor_class(kind).Options  # type: ignore[attr-defined]
    return options


def check_executor(kind: str, executor: Any) -> None:
    """Raise ``DefinitionError`` unless ``executor`` (a class or instance) serves ``kind``."""
    problems = list(_protocol_problems(kind, executor))
    if problems:
        raise DefinitionError(f"executor kind {kind!r}: " + "; ".join(problems))


def option_errors(
    options_model: type[BaseModel], options: Mapping[str, Any]
) -> tuple[BaseModel | None, list[tuple[tuple[str | int, ...], str]]]:
    """Validate ``options`` with a kind's ``Options`` model.

    Returns the options (None if invalid) and each problem as ``(path inside
    options, message)``; a missing key is reported at the mapping that lacks
    it. Messages are meant for the business author.
    """
    try:
        return options_model.model_validate(dict(options)), []
    except ValidationError as exc:
        return None, [_option_problem(options_model, e) for e in exc.errors(include_url=False)]


def _option_problem(
    options_model: type[BaseModel], error: Mapping[str, Any]
) -> tuple[tuple[str | int, ...], str]:
    loc, kind = tuple(error["loc"]), error["type"]
    if kind == "missing":
        return loc[:-1], f"missing required option {loc[-1]!r}"
    if kind == "extra_forbidden" and len(loc) == 1:
        valid = ", ".join(sorted(options_model.model_fields)) or "(none)"
        return loc, f"unknown option {loc[0]!r}; valid options: {valid}"
    if kind in ("value_error", "assertion_error") and "error" in error.get("ctx", {}):
        return loc, str(error["ctx"]["error"])
    return loc, error["msg"]


def _protocol_problems(kind: str, executor: Any) -> Iterator[str]:
    declared = getattr(executor, "kind", None)
    if declared != kind:
        yield f"its kind attribute is {declared!r}, not {kind!r}"
    options = getattr(executor, "Options", None)
    if not (isinstance(options, type) and issubclass(options, BaseModel)):
        yield "Options must be a pydantic model class (subclass ExecutorOptions)"
    elif options.model_config.get("extra") != "forbid":
        yield "Options must forbid unknown keys (model_config extra='forbid')"
    for flag in ("long_running", "resumable"):
        if not isinstance(getattr(executor, flag, None), bool):
            yield f"{flag} must be True or False"
    for flag in ("takes_job", "discovers"):  # optional, False if not declared
        if not isinstance(getattr(executor, flag, False), bool):
            yield f"{flag} must be True or False"
    if getattr(executor, "discovers", False) and not callable(
            getattr(executor, "discovered", None)):
        yield "it says discovers = True but has no discovered method"
    if not callable(getattr(executor, "run", None)):
        yield "it has no run method"


_builtin_classes: dict[str, type] = {}


def _builtin_class(kind: str, builtin: BuiltinKind) -> type:
    cls = _builtin_classes.get(kind)
    if cls is None:
        cls = _imported(builtin.executor)
        options = _imported(builtin.options)
        if cls.Options is not options:
            raise DefinitionError(f"built-in executor kind {kind!r}: {builtin.executor}.Options "
                                  f"is not {builtin.options}")
        check_executor(kind, cls)
        _builtin_classes[kind] = cls
    return cls


def _imported(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def _listed_entry_points() -> dict[str, metadata.EntryPoint]:
    global _entry_points
    if _entry_points is None:
        with _lock:
            if _entry_points is None:
                _entry_points = _discover()
    return _entry_points


def _discover() -> dict[str, metadata.EntryPoint]:
    found: dict[str, metadata.EntryPoint] = {}
    for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        name, where = entry_point.name, _origin(entry_point)
        if not KIND_PATTERN.match(name):
            logger.warning("ignoring executor entry point %r (%s): not a valid kind name",
                           name, where)
        elif name in BUILTIN_KINDS:
            logger.warning("ignoring executor entry point %r (%s): a built-in kind",
                           name, where)
        elif name in found and found[name].value != entry_point.value:
            logger.warning("ignoring executor entry point %r (%s): already provided by %s",
                           name, where, _origin(found[name]))
        else:
            found.setdefault(name, entry_point)
    if found:
        logger.info("executor kinds from entry points: %s", ", ".join(sorted(found)))
    return found


def _load(kind: str, entry_point: metadata.EntryPoint) -> None:
    where = _origin(entry_point)
    try:
        cls = entry_point.load()
        if not isinstance(cls, type):
            raise DefinitionError(f"{entry_point.value} is not a class")
        check_executor(kind, cls)
    except Exception as exc:  # any failure of third-party code is reported, by name
        _broken[kind] = (f"executor kind {kind!r} cannot be loaded from entry point "
                         f"{where}: {type(exc).__name__}: {exc}")
        logger.error("%s", _broken[kind])
        return
    _loaded[kind] = cls


def _origin(entry_point: metadata.EntryPoint) -> str:
    dist = getattr(entry_point, "dist", None)
    package = f" in package {dist.name}" if dist is not None else ""
    return f"{entry_point.name} = {entry_point.value}{package}"
