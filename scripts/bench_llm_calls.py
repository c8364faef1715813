"""Benchmark: how often the model engines call the model, and how big the prompts are.

Replays the rule-engine dialogue corpus (``tests/dialogues/*.yaml``) with the
``llm`` and ``hybrid`` engines against the fake OpenAI-compatible server
(``si_agent.testing.FakeOpenAI``, real HTTP through the real ``openai`` client)
and prints, per engine: model calls per user message, prompt characters per
call (the messages, and the tool schemas apart), and model calls per completed
business (turns that end a business in ``done``).

Those transcripts have no ``llm:`` scripts, so the fake model is an oracle:
just before the model engine sends a request, the rule engine decides on the
same view and message, its calls are kept to the tools the state offers, and
its personal numbers are replaced by the placeholders the request carries
(a ``Redactor`` fed the same history and message, in the same order). The
model therefore answers what the rules would have decided.

This measures cost, not quality: call counts and prompt sizes are real, but
the answers are the rule engine's, so the pass counts only show where the
model path diverges from the rules (for example, a bug in what the engine does
around the model), not how well a real model would understand citizens.

The consultation corpus (``tests/dialogues_consult``) is replayed the same way,
as its own table. For it, the two tool designs the issue names are compared on
the same turns: the one ``provide_field`` tool with every theme's slots (what
si_agent offers) against one tool per theme (built here for the comparison):
the JSON each design sends, and how many tool calls a turn's values would need.

Prompt tokens are estimated (no tokenizer can be downloaded here): one token per
CJK character and one per four other characters, which is close to what the
DeepSeek and Qwen tokenizers give for Chinese text and JSON; treat them as a
relative measure.

    python scripts/bench_llm_calls.py [--dialogues DIR ...] [--by-business]
"""

from __future__ import annotations

import argparse
import json
import logging
import tempfile
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from si_agent.cli import demo_backend_hook
from si_agent.config.loader import load_businesses
from si_agent.config.model import Business
from si_agent.config.settings import Settings
from si_agent.core import actions as T
from si_agent.core.decision import Decision, SessionView, TextSink
from si_agent.engine.llm import HISTORY_MESSAGES, HybridEngine, LLMEngine
from si_agent.engine.rules import RuleEngine
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.privacy import Redactor
from si_agent.replay import load_dialogues, replay
from si_agent.session import MemoryStore
from si_agent.testing import FakeOpenAI

ROOT = Path(__file__).resolve().parents[1]
CORPORA = (ROOT / "tests" / "dialogues", ROOT / "tests" / "dialogues_consult")
TARGETS = {"llm": ("≥ 1", lambda x: x >= 1.0), "hybrid": ("≤ 0.5", lambda x: x <= 0.5)}


def _redacted(value: Any, redactor: Redactor) -> Any:
    if isinstance(value, str):
        return redactor.redact(value)
    if isinstance(value, list):
        return [_redacted(v, redactor) for v in value]
    if isinstance(value, dict):
        return {k: _redacted(v, redactor) for k, v in value.items()}
    return value


def oracle_answer(rules: RuleEngine, view: SessionView, message: str, tools: list[dict]) -> dict:
    """The fake model's answer: the rule engine's calls, as placeholders, offered tools only."""
    redactor = Redactor()  # the same order as LLMEngine._messages: history, then the message
    for m in view.history[-HISTORY_MESSAGES:]:
        redactor.redact(m.text)
    redactor.redact(message)
    offered = T.tool_names(tools)
    calls = [
        {"name": c.name, "arguments": _redacted(c.arguments, redactor)}
        for c in rules.decide(view, message, tools).calls if c.name in offered
    ]
    return {"tool_calls": calls} if calls else {"content": None}


class OracleLLMEngine(LLMEngine):
    """The real model engine; its fake model is told the rule engine's answer first."""

    def __init__(self, catalog: Mapping[str, Business], settings: Settings, fake: FakeOpenAI,
                 rules: RuleEngine) -> None:
        super().__init__(catalog, settings, fallback=rules)
        self.fake = fake

    def decide(self, view: SessionView, message: str, tools: list[dict],
               on_text: TextSink | None = None) -> Decision:
        self.fake.push(oracle_answer(self.fallback, view, message, tools))
        try:
            return super().decide(view, message, tools, on_text)
        finally:
            self.fake.clear()  # per-field extraction would leave nothing; be safe anyway


@dataclass
class Tally:
    """What one engine's replay of the corpus measured."""

    messages: int = 0  # user messages that reached the engine
    skipped: int = 0  # empty or too long: answered before any engine
    calls: int = 0
    completions: int = 0
    calls_in_completing: int = 0  # model calls in dialogues that completed a business
    passed: int = 0
    dialogues: int = 0
    failures: list[str] = field(default_factory=list)
    prompt_chars: list[int] = field(default_factory=list)
    tool_chars: list[int] = field(default_factory=list)
    prompt_tokens: list[int] = field(default_factory=list)  # estimated: messages and tools
    by_business: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))


class Meter:
    """Wraps ``controller.handle`` to count messages, model calls and completed businesses."""

    def __init__(self, controller: Controller, tally: Tally) -> None:
        self.tally = tally
        self.business = ""  # the file-name prefix of the dialogue being replayed
        self.calls = 0  # model calls in the dialogue being replayed
        self.completions = 0  # businesses it completed
        self._store = controller.store
        self._inner = controller.handle
        controller.handle = self.handle  # type: ignore[method-assign]

    def start(self, source: str) -> None:
        self.business = Path(source).name.split("__")[0]
        self.calls = self.completions = 0

    def handle(self, session_id: str, message: str, on_delta: TextSink | None = None):
        before = self._store.load(session_id)
        result = self._inner(session_id, message, on_delta)
        after = self._store.load(session_id)
        if after is None or after.turn == (before.turn if before else 0):
            self.tally.skipped += 1  # answered before any engine
            return result
        calls = result.usage["turn"].model_calls if "turn" in result.usage else 0
        self.tally.messages += 1
        self.tally.calls += calls
        row = self.tally.by_business[self.business]
        row[0] += 1
        row[1] += calls
        self.calls += calls
        if after.state == "done" and (before is None or before.state != "done"
                                      or before.flow_nonce != after.flow_nonce):
            self.completions += 1
        return result


def run(name: str, dialogues: list[tuple[str, dict]], fake: FakeOpenAI, base_url: str) -> Tally:
    """Replay ``dialogues`` with the engine called ``name`` and measure it."""
    settings = Settings(business_dir=ROOT / "businesses",
                        data_dir=Path(tempfile.mkdtemp(prefix=f"si-bench-{name}-")),
                        llm_base_url=base_url, llm_api_key="bench", llm_timeout=30.0)
    catalog = load_businesses(settings.business_dir)
    rules = RuleEngine(catalog)
    model = OracleLLMEngine(catalog, settings, fake, rules)
    engine = {"rules": rules, "llm": model, "hybrid": HybridEngine(rules, model)}[name]
    controller = Controller(catalog, MemoryStore(), engine, Executors(settings))
    tally = Tally(dialogues=len(dialogues))
    meter = Meter(controller, tally)
    first_request = len(fake.requests)
    for source, transcript in dialogues:
        meter.start(source)
        report = replay(controller, transcript, source=source, backend=demo_backend_hook(settings))
        tally.passed += report.passed
        if not report.passed:
            tally.failures.append(f"{Path(source).name}: {report.failures[0].splitlines()[0]}")
        if meter.completions:
            tally.completions += meter.completions
            tally.calls_in_completing += meter.calls
    for body in fake.requests[first_request:]:
        messages = "".join(m.get("content") or "" for m in body["messages"])
        tools = json.dumps(body.get("tools", []), ensure_ascii=False)
        tally.prompt_chars.append(len(messages))
        tally.tool_chars.append(len(tools))
        tally.prompt_tokens.append(estimate_tokens(messages) + estimate_tokens(tools))
    if len(tally.prompt_chars) != tally.calls:
        print(f"warning: {name}: {len(tally.prompt_chars)} requests but {tally.calls} "
              "model calls counted in the turns")
    return tally


def estimate_tokens(text: str) -> int:
    """One token per CJK character, one per four others (see the module docstring)."""
    cjk = sum(1 for c in text if "\u3000" <= c <= "\u9fff" or "\uff00" <= c <= "\uffef")
    return cjk + (len(text) - cjk + 3) // 4


def per_theme_tools(business: Business) -> list[dict]:
    """The other design: one tool per theme, named by the theme id, with its slots."""
    return [{"type": "function", "function": {
        "name": t.id, "description": f"Give values the user stated about {t.label}.",
        "parameters": {"type": "object", "additionalProperties": False, "minProperties": 1,
                       "properties": {s.key: {"type": "string",
                                              "description": f"{s.label} ({s.type})"}
                                      for s in t.slots}}}} for t in business.themes]


def compare_tool_designs(dialogues: list[tuple[str, dict]]) -> None:
    """Single provide_field vs one tool per theme, on the consultation corpus's turns."""
    catalog = load_businesses(ROOT / "businesses")
    business = catalog["insurance_consult"]
    offered = T.toolset("collecting", business, None, catalog)
    single = next(t for t in offered if t["function"]["name"] == T.PROVIDE_FIELD)
    others = [t for t in offered if t["function"]["name"] != T.PROVIDE_FIELD]
    themed = per_theme_tools(business)
    theme_of = {f.key: f.group for f in business.fields}
    settings = Settings(business_dir=ROOT / "businesses",
                        data_dir=Path(tempfile.mkdtemp(prefix="si-bench-tools-")))
    controller = Controller(catalog, MemoryStore(), RuleEngine(catalog), Executors(settings))
    spans: list[int] = []  # themes the values of each collecting turn belong to
    for source, transcript in dialogues:
        session = f"tools-{Path(source).name}"
        for turn in transcript["turns"]:
            controller.handle(session, turn["user"])
            record = controller.load(session).memory[-1]
            values = [c.arguments.get("values", {}) for c in record.calls
                      if c.name == T.PROVIDE_FIELD and c.status == "applied"]
            if record.state_before == "collecting" and values:
                spans.append(len({theme_of[k] for k in values[0] if k in theme_of}))
    rows = [("one provide_field (shipped)", [single, *others], 1.0),
            ("one tool per theme", [*themed, *others], _mean(spans))]
    print(f"\nconsultation tool design ({len(spans)} turns with values in the corpus; "
          f"{sum(1 for n in spans if n > 1)} of them span more than one theme)")
    head = f"{'design':<28} {'tools':>5} {'tools chars':>11} {'est. tokens':>11} {'calls/turn':>10}"
    print(head)
    print("-" * len(head))
    for label, tools, calls in rows:
        text = json.dumps(tools, ensure_ascii=False)
        print(f"{label:<28} {len(tools):>5} {len(text):>11} {estimate_tokens(text):>11} "
              f"{calls:>10.2f}")
    print("calls/turn: tool calls one model answer must hold to give the turn's values "
          "(still one model call per turn either way).")


def _mean(xs: list[int]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def _p95(xs: list[int]) -> int:
    return sorted(xs)[int(0.95 * (len(xs) - 1))] if xs else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dialogues", nargs="+", default=[str(c) for c in CORPORA],
                    help="transcript folders, each replayed and reported on its own")
    ap.add_argument("--by-business", action="store_true",
                    help="also print model calls per user message for each business")
    ap.add_argument("--failures", action="store_true",
                    help="also list the transcripts whose expectations no longer hold")
    args = ap.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)

    fake = FakeOpenAI()
    base_url = fake.start()
    try:
        for corpus in args.dialogues:
            report(corpus, load_dialogues([corpus]), fake, base_url, args)
    finally:
        fake.stop()


def report(corpus: str, dialogues: list[tuple[str, dict]], fake: FakeOpenAI, base_url: str,
           args: argparse.Namespace) -> None:
    engines = ("rules", "llm", "hybrid")
    tallies = {name: run(name, dialogues, fake, base_url) for name in engines}
    skipped = tallies["rules"].skipped
    print(f"\n{len(dialogues)} dialogues from {corpus}; the fake model answers what "
          "the rule engine decides (an oracle): this counts calls and prompt sizes, it does "
          f"not measure a model's quality. {skipped} empty or too-long messages never reach "
          "an engine and are not counted.\n")
    head = (f"{'engine':<7} {'messages':>8} {'calls':>6} {'calls/msg':>9} {'target':>7} "
            f"{'prompt chars/call':>17} {'p95':>6} {'tools chars/call':>16} "
            f"{'est. tokens/msg':>15} {'done':>5} {'calls/done':>10} {'passed':>8}")
    print(head)
    print("-" * len(head))
    for name in engines:
        t = tallies[name]
        per_msg = t.calls / t.messages if t.messages else 0.0
        label, ok = TARGETS.get(name, ("", None))
        target = f"{label} {'ok' if ok(per_msg) else 'MISS'}" if ok else "-"
        per_done = t.calls_in_completing / t.completions if t.completions else 0.0
        print(f"{name:<7} {t.messages:>8} {t.calls:>6} {per_msg:>9.2f} {target:>7} "
              f"{_mean(t.prompt_chars):>17.0f} {_p95(t.prompt_chars):>6} "
              f"{_mean(t.tool_chars):>16.0f} "
              f"{sum(t.prompt_tokens) / t.messages if t.messages else 0:>15.0f} "
              f"{t.completions:>5} {per_done:>10.2f} "
              f"{t.passed:>4}/{t.dialogues:<3}")
    print("\ncalls/msg: model calls per user message (the issue's target: hybrid ≤ 0.5, "
          "model-only ≥ 1); prompt chars: system prompt + history + message per request; "
          "tools chars: the JSON of the tools offered; est. tokens/msg: estimated prompt "
          "tokens (messages and tools) sent per user message; done: businesses completed; "
          "calls/done: model calls in the dialogues that completed one, per completion; "
          "passed: transcripts whose rule-engine expectations still hold.")

    if args.by_business:
        print(f"\n{'business':<22} " + " ".join(f"{n + ' calls/msg':>18}" for n in engines[1:]))
        for business in sorted(tallies["llm"].by_business):
            cells = []
            for name in engines[1:]:
                messages, calls = tallies[name].by_business[business]
                cells.append(f"{calls / messages if messages else 0:>18.2f}")
            print(f"{business:<22} " + " ".join(cells))

    if args.failures:
        for name in engines:
            for line in tallies[name].failures:
                print(f"{name}: {line}")
    if any(Path(s).name.startswith("insurance_consult__") for s, _ in dialogues):
        compare_tool_designs(dialogues)


if __name__ == "__main__":
    main()
