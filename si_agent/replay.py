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
every turn does.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import yaml

from si_agent.flow.controller import Controller
from si_agent.flow.result import TurnResult

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

    @property
    def passed(self) -> bool:
        return not self.failures


def load_dialogues(paths: Iterable[str | Path]) -> list[tuple[str, dict]]:
    """(source, transcript) for each YAML file (directories are searched)."""
    out: list[tuple[str, dict]] = []
    for p in map(Path, paths):
        files = sorted(p.rglob("*.yaml")) if p.is_dir() else [p]
        for f in files:
            with open(f, encoding="utf-8") as fh:
                doc = yaml.safe_load(fh)
            docs = doc if isinstance(doc, list) else [doc]
            for i, d in enumerate(docs):
                if not isinstance(d, dict) or not isinstance(d.get("turns"), list):
                    raise ValueError(f"{f}: dialogue {i} needs a 'turns' list")
                out.append((f"{f}#{i}" if len(docs) > 1 else str(f), d))
    return out


def replay(
    controller: Controller,
    transcript: dict,
    *,
    source: str = "<memory>",
    backend: BackendHook | None = None,
    model: ScriptedModel | None = None,
) -> DialogueReport:
    """Run one transcript in a fresh session and compare each turn with ``expect``."""
    report = DialogueReport(name=str(transcript.get("name", source)), source=source)
    session_id = f"replay-{uuid.uuid4().hex[:12]}"
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
