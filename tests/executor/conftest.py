"""Fixtures for executor tests: a fresh demo database per test, executors over it,
and ``make_business``, a factory of minimal Business objects.

Businesses are built here, not loaded from ``businesses/``, so these tests pin
the executor/backend contract independently of the YAML files. (The test suite
runs with ``--import-mode=importlib``, so helpers are shared as fixtures.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from si_agent.config.model import Business
from si_agent.config.settings import Settings
from si_agent.executor import Executors

DEMO_URL = "${SI_BACKEND_URL:-http://demo.si-agent}/api/"


def _make_business(
    business_id: str,
    keys: tuple[str, ...] | list[str] = (),
    *,
    kind: str = "http",
    type: str = "handle",
    url: str | None = None,
    method: str = "POST",
    timeout: float = 10.0,
    handler: str | None = None,
    steps: tuple[str, ...] | list[str] = (),
    options: dict | None = None,
) -> Business:
    """A minimal valid Business whose fields are plain text fields named ``keys``.

    For ``kind="http"``, ``url``, ``method`` and ``timeout`` are written as
    shorthand options; the URL defaults to
    ``${SI_BACKEND_URL:-http://demo.si-agent}/api/<business_id>``. ``handler``
    is the builtin shorthand; ``options`` is written under ``api.options``.
    """
    api: dict = {"kind": kind, "result_template": "ok"}
    if kind == "http":
        api["url"] = url if url is not None else DEMO_URL + business_id
        api.update(method=method, timeout=timeout)
    if handler is not None:
        api["handler"] = handler
    if options is not None:
        api["options"] = options
    return Business.model_validate({
        "id": business_id,
        "name": business_id,
        "type": type,
        "description": "test business",
        "keywords": [business_id],
        "fields": [{"key": k, "label": k, "type": "text", "prompt": k} for k in keys],
        "steps": [{"id": s, "label": s, "prompt": s, "handler": "noop"} for s in steps],
        "api": api,
    })


@pytest.fixture
def make_business() -> Callable[..., Business]:
    return _make_business


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data")


@pytest.fixture
def db_path(settings: Settings) -> Path:
    return settings.demo_backend_db


@pytest.fixture
def executors(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[Executors]:
    monkeypatch.delenv("SI_BACKEND_URL", raising=False)
    with Executors(settings) as ex:
        yield ex


@pytest.fixture(scope="session")
def catalog_business() -> Callable[[str], Business]:
    """A business of the repository's businesses/, by id."""
    from si_agent.config.loader import load_businesses

    catalog = load_businesses(Path(__file__).resolve().parents[2] / "businesses")
    return catalog.__getitem__
