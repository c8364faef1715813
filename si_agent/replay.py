"""Replaying YAML dialogue transcripts against a controller.

A transcript::

    name: 社保转移，一句话给出两个城市
    turns:
      - user: 我要把社保从杭州转到苏州
        expect:
          state: collecting           # machine state after the turn
          business: social_transfer   # or null
          awaiting: id_number
          fields:                     # a subset; raw (unmasked) values
            from_city: 杭州市
            to_city: {value: 苏州市, status: collected}
          reply_contains: [转入城市 苏州市]   # a string or a list
          reply_not_contains: 错误
          suggestion: social_transfer
          result_has: [application_no]
      - backend: {fail_next: 1}       # optional: make the demo backend fail next call
        user: 确认
        expect: {state: failed}

Model-mode transcripts (``engine: llm`` or ``engine: hybrid`` at the top) script
the fake model's answers per turn; every scripted answer must be used, and
``model_calls`` counts the requests the turn sent::

      - user: 我想把社保从杭州弄到苏州去
        llm:
          - tool_calls:
              - {name: match_business, arguments: {business_id: social_transfer}}
              - {name: provide_field, arguments: {values: {from_city: 杭州, to_city: 苏州}}}
        expect: {state: collecting, awaiting: id_number, model_calls: 1}

Every turn is checked against its whole ``expect``; a dialogue passes when
every turn does. An unknown key (in ``expect``, a turn or the transcript) is a
``TranscriptError`` at load, naming the file and line: a typo never makes a
check vacuous.

What a transcript needs from the deployment it runs on::

    requires:
      photo: false            # the photo step handlers (OCR, face) are not registered
      step_handlers: {face_match: true}
      modules: {rapidocr: true}   # an importable library (an extra)
    settings:
      handoff_text: 12333社保服务热线   # Settings fields the controller was built with

A transcript whose requirements the controller does not meet is skipped with
the reason (``DialogueReport.skipped``), not failed; ``si-agent replay`` builds
one controller per distinct ``settings:``, so those are always met there.
Files are read with the project's YAML loader (``config.yamlio``: YAML 1.2
scalars, no duplicate keys).
"""

from __future__ import annotations

import importlib.util
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from si_agent.config.settings import Settings
from si_agent.config.yamlio import format_path, load_yaml
from si_agent.errors import TranscriptError
from si_agent.flow.controller import Controller
from si_agent.flow.result import TurnResult

TRANSCRIPT_KEYS = frozenset({"name", "theme", "engine", "turns", "requires", "settings"})
TURN_KEYS = frozenset({"user", "expect", "llm", "backend"})
EXPECT_KEYS = frozenset({"state", "business", "awaiting", "fields", "reply_contains",
                         "reply_not_contains", "suggestion", "model_calls", "result_has"})
REQUIREMENT_KEYS = frozenset({"photo", "step_handlers", "modules"})
# The step handlers the photo extras provide (si_agent.photo.steps.builtin_step_handlers).
PHOTO_STEP_HANDLERS = ("id_card_ocr", "face_match", "id_photo")

BackendHook = Callable[[dict[str, Any]], None]


class ScriptedModel(Protocol):
    """The fake model's control surface (``si_agent.testing.FakeOpenAI``)."""

    unscripted: int

    def push(self, *entries: dict[str, Any]) -> None: ...

    @property
    def pending(self) -> int: ...

    def clear(self) -> None: ...


@dataclass
class DialogueReport:
    name: str
    source: str
    turns: int = 0
    failures: list[str] = field(default_factory=list)
    skipped: str | None = None  # why the transcript was not run (a requirement not met)
    # Every value a turn stored or changed: (turn number, field key, value as text).
    stored: list[tuple[int, str, str]] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures


def load_dialogues(paths: Iterable[str | Path]) -> list[tuple[str, dict]]:
    """(source, transcript) for each YAML file (directories are searched).

    Raises ``TranscriptError`` (``file:line: path: message``) for a file that is
    no valid transcript, e.g. one with an unknown key.
    """
    out: list[tuple[str, dict]] = []
    for p in map(Path, paths):
        files = sorted(p.rglob("*.yaml")) if p.is_dir() else [p]
        for f in files:
            doc = load_yaml(f.read_text(encoding="utf-8"))
            if doc.problems:
                first = doc.problems[0]
                raise TranscriptError(f"{f}:{first.line or 0}: {first.message}")
            several = isinstance(doc.data, list)
            docs = doc.data if several else [doc.data]
            for i, d in enumerate(docs):
                at: tuple[str | int, ...] = (i,) if several else ()
                for path, problem in _shape_problems(d, at):
                    raise TranscriptError(f"{f}:{doc.line_of(path) or 0}: "
                                          f"{format_path(path) or '<root>'}: {problem}")
                out.append((f"{f}#{i}" if several else str(f), d))
    return out


def _shape_problems(d: Any, at: tuple[str | int, ...]) -> Iterable[tuple[tuple, str]]:
    if not isinstance(d, dict) or not isinstance(d.get("turns"), list):
        yield at, "a dialogue needs a 'turns' list"
        return
    yield from _unknown(d, TRANSCRIPT_KEYS, at, "transcript")
    for key in ("requires", "settings"):
        if key in d and not isinstance(d[key], dict):
            yield (*at, key), f"'{key}' must be a mapping"
    if isinstance(d.get("requires"), dict):
        yield from _unknown(d["requires"], REQUIREMENT_KEYS, (*at, "requires"), "requirement")
    if isinstance(d.get("settings"), dict):
        yield from _unknown(d["settings"], frozenset(Settings.model_fields), (*at, "settings"),
                            "setting")
    for n, turn in enumerate(d["turns"]):
        where = (*at, "turns", n)
        if not isinstance(turn, dict) or "user" not in turn:
            yield where, "a turn needs a 'user' message"
            continue
        yield from _unknown(turn, TURN_KEYS, where, "turn")
        expect = turn.get("expect")
        if expect is not None and not isinstance(expect, dict):
            yield (*where, "expect"), "'expect' must be a mapping"
        elif expect:
            yield from _unknown(expect, EXPECT_KEYS, (*where, "expect"), "expect")


def _unknown(mapping: Mapping, valid: frozenset[str], at: tuple, what: str
             ) -> Iterable[tuple[tuple, str]]:
    for key in mapping:
        if key not in valid:
            yield (*at, key), (f"unknown {what} key {key!r}; valid keys: "
                               f"{', '.join(sorted(valid))}")


def unmet_requirements(
    transcript: Mapping[str, Any], controller: Controller, settings: Settings | None = None
) -> list[str]:
    """Why ``controller`` (built with ``settings``, when known) cannot replay
    ``transcript``: each unmet ``requires:`` and ``settings:`` entry (empty: it can)."""
    unmet: list[str] = []
    handlers = controller.step_handlers
    requires = transcript.get("requires") or {}
    if "photo" in requires:
        present = [name for name in PHOTO_STEP_HANDLERS if name in handlers]
        if requires["photo"] and len(present) < len(PHOTO_STEP_HANDLERS):
            unmet.append("needs the photo step handlers (pip install 'si_agent[photo,ocr]')")
        elif not requires["photo"] and present:
            unmet.append(f"needs a deployment without the photo step handlers "
                         f"(this one has {', '.join(present)})")
    for name, wanted in (requires.get("step_handlers") or {}).items():
        if bool(wanted) != (name in handlers):
            unmet.append(f"needs step handler {name} {'registered' if wanted else 'absent'}")
    for name, wanted in (requires.get("modules") or {}).items():
        if bool(wanted) != (importlib.util.find_spec(name) is not None):
            unmet.append(f"needs the module {name} {'installed' if wanted else 'absent'}")
    declared = transcript.get("settings") or {}
    if settings is not None and declared:
        wanted = settings.replace(**declared)  # parsed like the environment's text
        unmet.extend(f"needs the setting {name}={value!r}" for name, value in declared.items()
                     if getattr(settings, name) != getattr(wanted, name))
    return unmet


def transcript_settings(transcript: Mapping[str, Any], settings: Settings) -> Settings:
    """``settings`` with the transcript's ``settings:`` applied."""
    declared = transcript.get("settings") or {}
    return settings.replace(**declared) if declared else settings


def replay(
    controller: Controller,
    transcript: dict,
    *,
    source: str = "<memory>",
    backend: BackendHook | None = None,
    model: ScriptedModel | None = None,
    settings: Settings | None = None,
) -> DialogueReport:
    """Run one transcript in a fresh session and compare each turn with ``expect``.

    A transcript whose ``requires:`` (or ``settings:``, compared with the
    ``settings`` the controller was built with, when given) the controller does
    not meet is not run: the report says why in ``skipped``.
    """
    report = DialogueReport(name=str(transcript.get("name", source)), source=source)
    report.failures.extend(f"{format_path(path) or '<root>'}: {problem}"
                           for path, problem in _shape_problems(transcript, ()))
    if report.failures:
        return report
    unmet = unmet_requirements(transcript, controller, settings)
    if unmet:
        report.skipped = "; ".join(unmet)
        return report
    session_id = f"replay-{uuid.uuid4().hex[:12]}"
    seen: dict[str, str] = {}
    for i, turn in enumerate(transcript["turns"], start=1):
        if turn.get("backend"):
            if backend is None:
                report.failures.append(f"turn {i}: 'backend' needs a backend hook")
                break
            backend(turn["backend"])
        if turn.get("llm") is not None:
            if model is None:
                report.failures.append(f"turn {i}: 'llm' needs a scripted model")
                break
            model.push(*turn["llm"])
        unscripted = model.unscripted if model is not None else 0
        result = controller.handle(session_id, str(turn["user"]))
        report.turns += 1
        if model is not None:
            if model.pending:
                report.failures.append(f"turn {i}: {model.pending} scripted model answer(s) unused")
                model.clear()
            if model.unscripted > unscripted:
                report.failures.append(f"turn {i}: the model was called without a scripted answer")
        raw = controller.store.load(session_id)
        raw_fields = {k: v.model_dump() for k, v in raw.fields.items()} if raw else {}
        for key, f in raw_fields.items():
            if f.get("value") is not None and str(f["value"]) != seen.get(key):
                seen[key] = str(f["value"])
                report.stored.append((i, key, seen[key]))
        for problem in compare(turn.get("expect") or {}, result, raw_fields):
            report.failures.append(f"turn {i} ({turn['user']!r}): {problem}\n    reply: {result.reply!r}")
    return report


def compare(expect: dict, got: TurnResult, raw_fields: dict[str, dict]) -> list[str]:
    """What differs between ``expect`` and the turn (empty when it matches)."""
    problems: list[str] = []
    if "state" in expect and got.state != expect["state"]:
        problems.append(f"state {got.state!r} != {expect['state']!r}")
    if "business" in expect:
        bid = got.business.id if got.business else None
        if bid != expect["business"]:
            problems.append(f"business {bid!r} != {expect['business']!r}")
    if "awaiting" in expect and got.awaiting != expect["awaiting"]:
        problems.append(f"awaiting {got.awaiting!r} != {expect['awaiting']!r}")
    if "suggestion" in expect:
        sid = got.suggestion.business_id if got.suggestion else None
        if sid != expect["suggestion"]:
            problems.append(f"suggestion {sid!r} != {expect['suggestion']!r}")
    for key, want in (expect.get("fields") or {}).items():
        have = raw_fields.get(key)
        if have is None:
            problems.append(f"field {key} missing")
            continue
        want = want if isinstance(want, dict) else {"value": want, "status": "collected"}
        for attr, value in want.items():
            if not _same(have.get(attr), value):
                problems.append(f"field {key}.{attr} {have.get(attr)!r} != {value!r}")
    for needle in _as_list(expect.get("reply_contains")):
        if str(needle) not in got.reply:
            problems.append(f"reply lacks {needle!r}")
    for needle in _as_list(expect.get("reply_not_contains")):
        if str(needle) in got.reply:
            problems.append(f"reply contains {needle!r}")
    if "model_calls" in expect:
        calls = got.usage["turn"].model_calls if "turn" in got.usage else 0
        if calls != expect["model_calls"]:
            problems.append(f"model_calls {calls} != {expect['model_calls']}")
    for key in _as_list(expect.get("result_has")):
        if not got.result or key not in got.result:
            problems.append(f"result lacks {key!r}")
    return problems


def _same(have: Any, want: Any) -> bool:
    """Numbers compare by value (a ``number`` field's 8000.0 is 8000), the rest as text."""
    numbers = (int, float)
    if (isinstance(have, numbers) and isinstance(want, numbers)
            and not isinstance(have, bool) and not isinstance(want, bool)):
        return have == want
    return str(have) == str(want)


def _as_list(value: Any) -> list:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]
