"""A task suite for the browser agent (``si_agent.agent``) on the demo portal.

Tasks are data (``tests/agent/tasks.yaml``): where the agent starts, the goal
(task text, values by key, the labels a form may give them, a menu link to look
for) and the outcome expected (success with output keys and the values the
portal stored, or a failure with what is missing or which values were refused),
with an optional portal setup (a one-time fault, or a form already submitted
half-filled so the agent starts on the server's errors).

The same pieces serve the test (``tests/agent/test_task_suite.py``) and the
benchmark (``scripts/bench_agent.py``):

- ``load_tasks`` reads and checks the file (``file:line: path: message`` errors);
- ``PortalProcess`` runs ``si-agent portal`` in a subprocess on a free port;
- ``run_task`` resets the portal, applies the setup, opens the start path in a
  logged-in page and runs the agent, returning a ``TaskOutcome``;
- ``problems`` compares an outcome with what the task expects;
- ``ScriptedModel`` is a decider that goes through ``ModelDecider`` and real HTTP
  to ``FakeOpenAI``, whose answer for each request is the step ``FormPolicy``
  chooses on the same goal, view and memory, pushed just before the request.

Playwright and openai are imported by the callers, not here.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from si_agent.agent import Agent, AgentResult, DomPerception, FormPolicy, Goal, Record, Step, View
from si_agent.agent.decision import ModelDecider
from si_agent.config.yamlio import load_yaml
from si_agent.engine.chat import ChatModel
from si_agent.errors import ConfigError, ConfigErrors
from si_agent.executor.rpa.form import synonyms

USER, PASSWORD = "demo", "demo123"
SENSITIVE_KEYS = ("name", "id_number", "phone", "bank_card")  # never in a model request, raw
_SUBMIT_BUTTON = re.compile(r"^(提交申请|下一步)$")


class Expect(BaseModel):
    """What a task must end with."""

    model_config = ConfigDict(extra="forbid")

    success: bool
    output: list[str] = []  # keys the agent's output must have
    application: dict[str, Any] = {}  # values the portal must have stored (success)
    missing: list[str] | None = None  # the labels Finish reports missing, in order
    failed: dict[str, str] = {}  # value key -> the form's reason (Finish.failed)
    message: str = ""  # a text the agent's message must contain

    @model_validator(mode="after")
    def _consistent(self) -> Expect:
        if self.success and (self.missing or self.failed):
            raise ValueError("a success has no missing or failed values")
        if not self.success and (self.output or self.application):
            raise ValueError("a failure has no output or application to expect")
        return self


class Setup(BaseModel):
    """The portal before the agent starts."""

    model_config = ConfigDict(extra="forbid")

    fault: dict[str, Any] | None = None  # the body of /_admin/fail_next (count 1 by default)
    # The start form was posted once with these controls (by label) filled and the
    # rest empty ({} for all empty): the agent starts on the server's errors.
    submitted: dict[str, str] | None = None


class Task(BaseModel):
    """One task of the suite."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9_]+$")
    start: str = Field(pattern=r"^/")
    task: str
    target: str = ""
    person: str | None = None  # a key of the file's ``people``: their values come first
    values: dict[str, str] = {}
    labels: dict[str, list[str]] = {}  # per key, replaces the suite's default labels
    setup: Setup = Setup()
    expect: Expect
    xfail: str | None = None  # a known agent bug that makes the task fail: why

    goal: Goal | None = Field(default=None, exclude=True)  # filled by load_tasks

    @property
    def business(self) -> str | None:
        """The portal business the task is about (from the start path or the link)."""
        from si_agent.demo_portal.forms import BUSINESSES

        found = re.match(r"^/forms/(\w+)", self.start)
        if found:
            return found.group(1)
        return next((b for b, title in BUSINESSES.items() if title == self.target), None)

    @property
    def rpa_comparable(self) -> bool:
        """The direct RPA mapping can do it too: a version-1 form, no prepared errors."""
        return self.business is not None and "v=2" not in self.start \
            and self.setup.submitted is None


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")

    labels: dict[str, list[str]] = {}
    people: dict[str, dict[str, str]] = {}
    tasks: list[Task]


def default_labels() -> dict[str, list[str]]:
    """Field key -> labels forms use (``si_agent/data/rpa_synonyms.yaml``)."""
    return {key: list(labels) for key, labels in synonyms().items()}


def load_tasks(path: str | Path) -> list[Task]:
    """The tasks of ``path``, each with its ``goal``; ``ConfigErrors`` if the file is wrong."""
    path = Path(path)
    doc = load_yaml(path.read_text("utf-8"))
    if doc.problems:
        raise ConfigErrors(ConfigError(str(path), p.line, "", p.message) for p in doc.problems)
    try:
        suite = _File.model_validate(doc.data)
    except ValidationError as exc:
        raise ConfigErrors(
            ConfigError(str(path), doc.line_of(e["loc"]), ".".join(map(str, e["loc"])), e["msg"])
            for e in exc.errors()) from None
    errors, seen = [], set()
    base_labels = default_labels() | suite.labels
    for i, task in enumerate(suite.tasks):
        where = ("tasks", i)
        if task.id in seen:
            errors.append(ConfigError(str(path), doc.line_of(where), f"tasks[{i}].id",
                                      f"duplicate task id {task.id!r}"))
        seen.add(task.id)
        if task.person is not None and task.person not in suite.people:
            errors.append(ConfigError(str(path), doc.line_of((*where, "person")),
                                      f"tasks[{i}].person", f"unknown person {task.person!r}; "
                                      f"known: {', '.join(suite.people)}"))
            continue
        values = {**suite.people.get(task.person or "", {}), **task.values}
        labels = {k: task.labels.get(k, base_labels.get(k, [])) for k in values}
        task.goal = Goal(task=task.task, values=values, labels=labels, target=task.target)
    if errors:
        raise ConfigErrors(errors)
    return suite.tasks


# -- the portal ------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PortalProcess:
    """``si-agent portal`` in its own process with a fresh data directory; ``url`` once up."""

    def __init__(self, data_dir: str | Path | None = None) -> None:
        self._tmp = None if data_dir else tempfile.TemporaryDirectory(prefix="si-portal-")
        self.data_dir = Path(data_dir or self._tmp.name)
        self.url = ""
        self._proc: subprocess.Popen | None = None

    def start(self, timeout: float = 20.0) -> str:
        port = free_port()
        env = {**os.environ, "SI_DATA_DIR": str(self.data_dir),
               "SI_PORTAL_USER": USER, "SI_PORTAL_PASSWORD": PASSWORD}
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "si_agent.cli", "portal", "--port", str(port)],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"the portal exited with {self._proc.returncode}")
            try:
                httpx.get(self.url + "/login", timeout=1.0)
                return self.url
            except httpx.HTTPError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"the portal at {self.url} did not come up")

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait(10)
            self._proc = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> PortalProcess:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def applications(portal: str) -> list[dict]:
    return httpx.get(portal + "/_admin/applications").json()


def log_in(page: Any, portal: str) -> None:
    """Log the page's browser context in to the portal."""
    page.goto(portal + "/login")
    page.get_by_label("用户名").fill(USER)
    page.get_by_label("密码").fill(PASSWORD)
    page.get_by_role("button", name="登录").click()
    page.wait_for_url(portal + "/")


def prepare(page: Any, portal: str, task: Task) -> None:
    """A fresh portal with the task's setup, and the page at the task's start."""
    httpx.post(portal + "/_admin/reset").raise_for_status()
    page.goto(portal + task.start)
    if task.setup.submitted is not None:
        for label, value in task.setup.submitted.items():
            page.get_by_role("textbox", name=label, exact=True).fill(value)
        page.get_by_role("button", name=_SUBMIT_BUTTON).click()
        page.wait_for_load_state()
    if task.setup.fault is not None:
        httpx.post(portal + "/_admin/fail_next",
                   json={"count": 1, **task.setup.fault}).raise_for_status()


class TaskOutcome(BaseModel):
    """What a run of one task did: the agent's result and the applications it made."""

    task_id: str
    result: AgentResult
    applications: list[dict]


def run_task(page: Any, portal: str, task: Task, decider: Any, *,
             trace_dir: Path | None = None, max_steps: int = 30) -> TaskOutcome:
    """Run ``task`` with ``DomPerception`` and ``decider`` on a logged-in ``page``."""
    prepare(page, portal, task)
    result = Agent(DomPerception(), decider, max_steps=max_steps).run(
        page, task.goal, trace_dir=trace_dir)
    return TaskOutcome(task_id=task.id, result=result, applications=applications(portal))


def problems(task: Task, outcome: TaskOutcome) -> list[str]:
    """How ``outcome`` differs from what ``task`` expects (empty when it matches)."""
    want, got, apps = task.expect, outcome.result, outcome.applications
    found: list[str] = []
    if got.success != want.success:
        found.append(f"success is {got.success}, expected {want.success} "
                     f"(message {got.message!r}, missing {got.missing})")
    for key in want.output:
        if key not in got.output:
            found.append(f"no {key!r} in the output {got.output}")
    if want.message and want.message not in got.message:
        found.append(f"the message {got.message!r} does not contain {want.message!r}")
    if want.success:
        if len(apps) != 1:
            found.append(f"{len(apps)} applications, expected exactly one")
        else:
            app = apps[0]
            if "application_no" in got.output and \
                    got.output["application_no"] != app["application_no"]:
                found.append(f"output {got.output['application_no']} is not the application's "
                             f"{app['application_no']}")
            if app["business_id"] != task.business:
                found.append(f"the application is for {app['business_id']}, not {task.business}")
            for key, value in want.application.items():
                if app["values"].get(key) != value:
                    found.append(f"stored {key}={app['values'].get(key)!r}, expected {value!r}")
        return found
    if apps:
        found.append(f"{len(apps)} applications made by a task that must fail")
    if want.missing is not None and got.missing != want.missing:
        found.append(f"missing {got.missing}, expected {want.missing}")
    for key, reason in want.failed.items():
        if got.failed.get(key) != reason:
            found.append(f"failed.{key} is {got.failed.get(key)!r}, "
                         f"expected {reason!r}")
    return found


# -- a scripted model ------------------------------------------------------------------

class ScriptedModel:
    """``ModelDecider`` over ``FakeOpenAI``, answering what ``FormPolicy`` would do.

    For each step the policy decides on the same goal, view and memory; its step is
    pushed to the fake server as the ``next_step`` tool call, then ``ModelDecider``
    makes its real request and parses the step from the HTTP answer, which is what
    the agent acts on. ``dictated`` counts the pushed steps, ``model.calls`` the
    requests: a run without wasted calls has them equal to the agent's steps.
    """

    def __init__(self, fake: Any, chat: ChatModel) -> None:
        self.fake = fake
        self.policy = FormPolicy()
        self.model = ModelDecider(chat)
        self.dictated = 0

    def decide(self, goal: Goal, view: View, memory: Sequence[Record]) -> Step:
        step = self.policy.decide(goal, view, memory)
        self.fake.push({"tool_calls": [{"name": "next_step",
                                        "arguments": step.model_dump(mode="json")}]})
        self.dictated += 1
        return self.model.decide(goal, view, memory)
