"""The executor registry and ``Executors``: built-ins, entry points, code, injected instances.

The entry-point tests install a real (temporary) package: a module and a
``*.dist-info`` directory with ``entry_points.txt`` on ``sys.path``, found by
``importlib.metadata`` like any installed plugin.
"""

from __future__ import annotations

import sqlite3
import sys
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest
from pydantic import BaseModel

from si_agent.config import kinds
from si_agent.config.loader import check_directory, load_businesses
from si_agent.config.model import Business
from si_agent.config.settings import Settings
from si_agent.demo_backend.seed import APPLICATIONS, PERSONS
from si_agent.errors import ConfigErrors, DefinitionError, UnknownBackendError
from si_agent.executor import (
    BuiltinExecutor,
    ExecutorOptions,
    Executors,
    HttpExecutor,
    HttpOptions,
    executor_kinds,
    register_executor,
    registry,
)
from si_agent.executor.rpa import RpaExecutor

PLUGIN = "si_echo_plugin_for_tests"
REPO_BUSINESSES = Path(__file__).resolve().parents[2] / "businesses"

PLUGIN_SOURCE = '''
"""An executor kind shipped by a (temporary) installed package."""
from si_agent.executor.base import ExecutorOptions


class EchoOptions(ExecutorOptions):
    prefix: str = ""


class EchoExecutor:
    kind = "echo_test"
    Options = EchoOptions
    long_running = True
    resumable = False

    def run(self, business, values, *, idempotency_key, options, progress=None):
        if progress is not None:
            progress("正在回显…")
        return {"echo": options.prefix + values["x"], "key": idempotency_key}


class Misfit:
    kind = "something_else"
    Options = dict
    long_running = "no"
'''

ENTRY_POINTS = f"""
[si_agent.executors]
echo_test = {PLUGIN}:EchoExecutor
broken_test = si_missing_module_for_tests:Nothing
misfit_test = {PLUGIN}:Misfit
"""


def business_yaml(business_id: str, api: str) -> str:
    """A minimal query business with one text field ``x`` and the given ``api:`` block."""
    return textwrap.dedent(f"""\
        # test business
        id: {business_id}
        name: 回显
        type: query
        description: 测试用业务。
        keywords: [{business_id}]
        fields:
          - key: x
            label: 内容
            type: text
            prompt: 请输入内容。
        """) + textwrap.dedent(api)


@pytest.fixture
def fresh_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """A registry that lists entry points again and forgets kinds registered in code."""
    monkeypatch.setattr(kinds, "_entry_points", None)
    monkeypatch.setattr(kinds, "_loaded", {})
    monkeypatch.setattr(kinds, "_broken", {})
    monkeypatch.setattr(kinds, "_registered", {})


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_registry) -> Iterator[Path]:
    """Install the echo plugin package (module + dist-info) on ``sys.path``."""
    site = tmp_path / "site"
    (site / "si_echo_plugin-1.0.dist-info").mkdir(parents=True)
    (site / f"{PLUGIN}.py").write_text(PLUGIN_SOURCE, "utf-8")
    info = site / "si_echo_plugin-1.0.dist-info"
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: si-echo-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS, "utf-8")
    monkeypatch.syspath_prepend(str(site))
    yield site
    sys.modules.pop(PLUGIN, None)


@pytest.fixture
def executors(settings: Settings) -> Iterator[Executors]:
    with Executors(settings) as ex:
        yield ex


def write(directory: Path, business_id: str, api: str) -> Path:
    directory.mkdir(exist_ok=True)
    path = directory / f"{business_id}.yaml"
    path.write_text(business_yaml(business_id, api), "utf-8")
    return path


def errors_of(directory: Path) -> list[str]:
    return [str(e).replace(f"{directory}/", "") for e in check_directory(directory)[1]]


# --- the registry ----------------------------------------------------------------------


def test_builtins_are_listed_and_declare_how_they_run(fresh_registry):
    assert executor_kinds() == ["builtin", "http", "rpa"]
    assert kinds.executor_class("http") is HttpExecutor
    assert kinds.executor_class("builtin") is BuiltinExecutor
    assert kinds.executor_class("rpa") is RpaExecutor
    assert (HttpExecutor.long_running, HttpExecutor.resumable) == (False, True)
    assert (BuiltinExecutor.long_running, BuiltinExecutor.resumable) == (False, True)
    assert (RpaExecutor.long_running, RpaExecutor.resumable) == (True, True)


def test_builtins_declare_their_capabilities_and_options_apart(fresh_registry, settings,
                                                                make_business):
    for kind in kinds.BUILTIN_KINDS:  # the options model named apart is the class's
        assert kinds.executor_options(kind) is kinds.executor_class(kind).Options
    assert registry.capabilities(RpaExecutor) == registry.Capabilities(
        long_running=True, resumable=True, takes_job=True, discovers=True)
    assert registry.capabilities(HttpExecutor) == registry.Capabilities(
        long_running=False, resumable=True, takes_job=False, discovers=False)
    with Executors(settings, executors={"http": Recording()}) as ex:  # undeclared: False
        assert ex.capabilities(make_business("b", ["name"])) == registry.Capabilities(
            long_running=False, resumable=True)


def test_a_kind_that_says_it_discovers_must_be_able_to(fresh_registry):
    class Boaster(MemoExecutor):
        kind = "boast_test"
        discovers = True

    with pytest.raises(DefinitionError, match="no discovered method"):
        register_executor("boast_test", Boaster)

    class Vague(MemoExecutor):
        kind = "vague_test"
        takes_job = "yes"

    with pytest.raises(DefinitionError, match="takes_job must be True or False"):
        register_executor("vague_test", Vague)


def test_unknown_kind_lists_the_valid_names(fresh_registry):
    with pytest.raises(UnknownBackendError) as err:
        kinds.executor_class("ftp")
    assert (err.value.kind, err.value.name, err.value.valid) == ("api kind", "ftp",
                                                                ["builtin", "http", "rpa"])
    assert str(err.value) == "unknown api kind 'ftp'; valid names: builtin, http, rpa"


def test_entry_point_kinds_are_listed_without_being_imported(plugin):
    assert executor_kinds() == ["broken_test", "builtin", "echo_test", "http", "misfit_test",
                                "rpa"]
    assert PLUGIN not in sys.modules
    cls = kinds.executor_class("echo_test")
    assert (cls.__module__, cls.__name__) == (PLUGIN, "EchoExecutor")
    assert kinds.executor_class("echo_test") is cls  # loaded once


def test_a_broken_entry_point_is_reported_by_name_and_spares_the_others(plugin):
    with pytest.raises(DefinitionError) as err:
        kinds.executor_class("broken_test")
    message = str(err.value)
    assert message.startswith(
        "executor kind 'broken_test' cannot be loaded from entry point broken_test = "
        "si_missing_module_for_tests:Nothing in package si-echo-plugin: ModuleNotFoundError"
    )
    with pytest.raises(DefinitionError) as again:  # the failure is remembered, not retried
        kinds.executor_class("broken_test")
    assert str(again.value) == message
    with pytest.raises(DefinitionError) as misfit:
        kinds.executor_class("misfit_test")
    assert "executor kind 'misfit_test'" in str(misfit.value)
    assert "its kind attribute is 'something_else', not 'misfit_test'" in str(misfit.value)
    assert "long_running must be True or False" in str(misfit.value)
    assert kinds.executor_class("echo_test").__name__ == "EchoExecutor"
    assert kinds.executor_class("http") is HttpExecutor


def test_an_entry_point_kind_runs_end_to_end(plugin, tmp_path: Path, settings: Settings):
    businesses = tmp_path / "businesses"
    write(businesses, "echo_query", """\
        api:
          kind: echo_test
          options:
            prefix: 回显：
          result_template: "{echo}"
        """)
    write(businesses, "echo_short", """\
        api:
          kind: echo_test
          prefix: 简写：
          result_template: "{echo}"
        """)
    catalog = load_businesses(businesses)
    said: list[str] = []
    with Executors(settings) as ex:
        result = ex.run(catalog["echo_query"], {"x": "你好"}, idempotency_key="k1",
                        progress=said.append)
        short = ex.run(catalog["echo_short"], {"x": "你好"}, idempotency_key="k2")
        executor = ex.get(catalog["echo_query"])
    assert result == {"echo": "回显：你好", "key": "k1"}
    assert short == {"echo": "简写：你好", "key": "k2"}
    assert said == ["正在回显…"]
    assert (executor.kind, executor.long_running, executor.resumable) == ("echo_test", True, False)


def test_entry_point_options_and_kinds_are_checked_at_load(plugin, tmp_path: Path):
    businesses = tmp_path / "businesses"
    write(businesses, "a_good", """\
        api:
          kind: echo_test
          result_template: "{echo}"
        """)
    write(businesses, "b_bad_options", """\
        api:
          kind: echo_test
          options:
            prefix: 5
            colour: red
          result_template: "{echo}"
        """)
    write(businesses, "c_broken", """\
        api:
          kind: broken_test
          result_template: "{echo}"
        """)
    catalog, _ = check_directory(businesses)
    errors = errors_of(businesses)
    assert list(catalog) == ["a_good"]
    assert errors[:2] == [
        "b_bad_options.yaml:15: api.options.prefix: Input should be a valid string",
        "b_bad_options.yaml:16: api.options.colour: unknown option 'colour'; "
        "valid options: prefix",
    ]
    assert len(errors) == 3
    assert errors[2].startswith("c_broken.yaml:13: api.kind: executor kind 'broken_test' "
                                "cannot be loaded from entry point broken_test = ")


# --- kinds registered in code --------------------------------------------------------------


class MemoOptions(ExecutorOptions):
    note: str


class MemoExecutor:
    """A kind registered in code: remembers what it was asked to do."""

    kind: ClassVar[str] = "memo_test"
    Options: ClassVar[type[BaseModel]] = MemoOptions
    long_running: ClassVar[bool] = False
    resumable: ClassVar[bool] = True
    built: ClassVar[list[MemoExecutor]] = []

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.calls: list[tuple[dict, str, BaseModel]] = []

    @classmethod
    def from_settings(cls, settings: Settings) -> MemoExecutor:
        cls.built.append(cls(settings))
        return cls.built[-1]

    def run(self, business: Business, values: Mapping[str, Any], *, idempotency_key: str,
            options: BaseModel, progress=None) -> dict:
        self.calls.append((dict(values), idempotency_key, options))
        return {"note": options.note}


def test_a_kind_registered_in_code_loads_and_runs(fresh_registry, tmp_path: Path,
                                                  settings: Settings):
    register_executor("memo_test", MemoExecutor)
    register_executor("memo_test", MemoExecutor)  # the same class again: a no-op
    assert "memo_test" in executor_kinds()
    businesses = tmp_path / "businesses"
    write(businesses, "memo", """\
        api:
          kind: memo_test
          note: 已记录
          result_template: "{note}"
        """)
    business = load_businesses(businesses)["memo"]
    MemoExecutor.built.clear()
    with Executors(settings) as ex:
        assert ex.run(business, {"x": "1"}, idempotency_key="m1") == {"note": "已记录"}
        assert ex.run(business, {"x": "2"}, idempotency_key="m2") == {"note": "已记录"}
    (executor,) = MemoExecutor.built  # one instance per kind, built from the settings
    assert executor.settings is settings
    assert [(v, k) for v, k, _ in executor.calls] == [({"x": "1"}, "m1"), ({"x": "2"}, "m2")]
    assert executor.calls[0][2] == MemoOptions(note="已记录")


def test_registration_refuses_clashes_and_misfits(fresh_registry):
    with pytest.raises(ValueError, match="built-in"):
        register_executor("http", MemoExecutor)
    with pytest.raises(ValueError, match="must match"):
        register_executor("Memo-Test", MemoExecutor)
    with pytest.raises(DefinitionError, match="its kind attribute is 'memo_test'"):
        register_executor("other_test", MemoExecutor)
    register_executor("memo_test", MemoExecutor)

    class Impostor(MemoExecutor):
        pass

    with pytest.raises(ValueError, match="already registered"):
        register_executor("memo_test", Impostor)

    class LaxOptions(BaseModel):
        note: str

    class Lax(MemoExecutor):
        kind = "lax_test"
        Options = LaxOptions

    with pytest.raises(DefinitionError, match="extra='forbid'"):
        register_executor("lax_test", Lax)


# --- Executors: injected instances, options --------------------------------------------


class Recording:
    """An injected executor standing in for the http kind: no network at all."""

    kind = "http"
    Options = HttpOptions
    long_running = False
    resumable = True

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict, str, BaseModel]] = []

    def run(self, business, values, *, idempotency_key, options, progress=None) -> dict:
        self.calls.append((business.id, dict(values), idempotency_key, options))
        return {"application_no": "SI-FAKE"}


def test_an_injected_instance_overrides_its_kind(settings: Settings, make_business):
    fake = Recording()
    biz = make_business("social_transfer", ["name"], timeout=3)
    with Executors(settings, executors={"http": fake}) as ex:
        assert ex.get(biz) is fake
        assert ex.run(biz, {"name": "张伟"}, idempotency_key="i1") == {
            "application_no": "SI-FAKE"}
    [(business_id, values, key, options)] = fake.calls
    assert (business_id, values, key) == ("social_transfer", {"name": "张伟"}, "i1")
    assert options == HttpOptions(url="${SI_BACKEND_URL:-http://demo.si-agent}/api/"
                                  "social_transfer", method="POST", timeout=3)


def test_an_injected_instance_adds_a_kind(settings: Settings, make_business):
    class Fake(Recording):
        kind = "fake_test"
        Options = ExecutorOptions

    fake = Fake()
    biz = make_business("thing", ["name"], kind="fake_test")
    with Executors(settings, executors={"fake_test": fake}) as ex:
        assert ex.run(biz, {"name": "张伟"}, idempotency_key="i2") == {
            "application_no": "SI-FAKE"}
        odd = make_business("thing", kind="odd_test")
        with pytest.raises(UnknownBackendError) as err:
            ex.get(odd)
    assert {"builtin", "http", "fake_test"} <= set(err.value.valid)
    assert fake.calls[0][3] == ExecutorOptions()


def test_an_injected_instance_must_fit_its_kind(settings: Settings):
    with pytest.raises(DefinitionError, match="its kind attribute is 'http', not 'rpa'"):
        Executors(settings, executors={"rpa": Recording()})


def test_options_are_validated_once_per_business(executors: Executors, make_business):
    biz = make_business("social_transfer", ["name"])
    first = executors.options(biz)
    assert isinstance(first, HttpOptions) and first.timeout == 10.0
    assert executors.options(biz) is first
    changed = make_business("social_transfer", ["name"], timeout=2.5)
    assert executors.options(changed).timeout == 2.5  # same id, new definition


def test_bad_options_of_a_business_built_in_code_fail_loudly(executors: Executors,
                                                             make_business):
    biz = make_business("pension_estimate", kind="builtin", options={"handler": "x", "y": 1})
    with pytest.raises(ConfigErrors) as err:
        executors.run(biz, {}, idempotency_key="k")
    assert [str(e) for e in err.value.errors] == [
        "business pension_estimate:0: api.options.handler: unknown builtin handler 'x'; "
        "valid handlers: pension_estimate",
        "business pension_estimate:0: api.options.y: unknown option 'y'; valid options: handler",
    ]


# --- resumable http: the demo backend honours Idempotency-Key -------------------------------


def test_http_rerun_with_the_same_key_applies_once(settings: Settings, monkeypatch):
    monkeypatch.delenv("SI_BACKEND_URL", raising=False)
    transfer = load_businesses(REPO_BUSINESSES)["social_transfer"]
    values = {"from_city": "杭州市", "to_city": "苏州市", "id_number": PERSONS[3].id_number,
              "name": "刘洋"}
    with Executors(settings) as ex:
        assert ex.get(transfer).resumable is True
        first = ex.run(transfer, values, idempotency_key="resume-1")
        again = ex.run(transfer, values, idempotency_key="resume-1")
    assert again == first
    seeded = [a[0] for a in APPLICATIONS]
    with sqlite3.connect(settings.demo_backend_db) as conn:
        rows = conn.execute(
            f"SELECT application_no FROM applications WHERE business_id = 'social_transfer'"
            f" AND application_no NOT IN ({', '.join('?' * len(seeded))})", seeded,
        ).fetchall()
    assert rows == [(first["application_no"],)]


def test_transport_and_an_injected_http_executor_are_exclusive(settings: Settings):
    with pytest.raises(ValueError, match="not both"):
        Executors(settings, transport=httpx.MockTransport(lambda r: httpx.Response(200)),
                  executors={"http": Recording()})
