"""Numbers over recorded conversations: the funnel per business, re-asks per field, top
unanswered questions, ratings and turn latency (pure functions over ``Conversation``).

Funnel steps, each counted once per conversation and business::

    started → all fields given → confirmed → submitted → done

``started``: the business began (a turn left it collecting or executing steps); ``all
fields given``: a turn reached confirming (or executing / done directly); ``confirmed``:
a confirmation was applied or the submission queued; ``submitted``: a job ran; ``done``:
the outcome ``done``. A conversation that ended ``cancelled``, ``handed_off`` or
``failed`` is counted with the field it was waiting for when it ended (or the state).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel, Field

from si_agent.core import actions as A
from si_agent.turns.log import Conversation

STEPS = ("started", "fields_given", "confirmed", "submitted", "done")
STEP_LABELS = {"started": "开始办理", "fields_given": "信息填完", "confirmed": "确认提交",
               "submitted": "已提交", "done": "办结"}
ENDINGS = ("cancelled", "handed_off", "failed")


def _no_endings() -> dict[str, dict[str, int]]:
    return {e: {} for e in ENDINGS}


class Funnel(BaseModel):
    business: str
    steps: dict[str, int] = Field(default_factory=lambda: dict.fromkeys(STEPS, 0))
    # ending -> where (field key or state) -> conversations
    endings: dict[str, dict[str, int]] = Field(default_factory=lambda: _no_endings())


class Day(BaseModel):
    day: str
    turns: int = 0
    model_calls: int = 0
    tokens: int = 0


class Report(BaseModel):
    conversations: int = 0
    turns: int = 0
    funnels: list[Funnel] = Field(default_factory=list)
    reasks: dict[str, dict[str, int]] = Field(default_factory=dict)  # "business.field" -> counts
    unanswered: list[tuple[str, int]] = Field(default_factory=list)
    refused: list[tuple[str, int]] = Field(default_factory=list)  # questions declined
    ratings: dict[str, int] = Field(default_factory=lambda: {"up": 0, "down": 0})
    latency_p50: int | None = None
    latency_p95: int | None = None
    model_calls: int = 0
    tokens: int = 0
    # What the moderation did: "input.refuse", "output.mask", ... -> count; and by category.
    moderation: dict[str, int] = Field(default_factory=dict)
    moderation_categories: dict[str, int] = Field(default_factory=dict)
    moderated_conversations: int = 0
    # Per day (UTC, "2026-12-07"): turns, model calls and tokens, oldest first.
    days: list[Day] = Field(default_factory=list)


def percentile(values: list[int], q: float) -> int | None:
    """The nearest-rank ``q`` percentile (0 < q <= 1) of ``values``; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 1))  # ceil(n * q)
    return ordered[int(rank) - 1]


def report(conversations: Iterable[Conversation], top: int = 10) -> Report:
    out = Report()
    funnels: dict[str, Funnel] = {}
    latencies: list[int] = []
    unanswered: Counter[str] = Counter()
    refused: Counter[str] = Counter()
    days: dict[str, Day] = {}
    for c in conversations:
        out.conversations += 1
        out.moderated_conversations += bool(c.moderation)
        for m in c.moderation:
            key = f"{m.where}.{m.action}"
            out.moderation[key] = out.moderation.get(key, 0) + 1
            for category in m.categories:
                out.moderation_categories[category] = \
                    out.moderation_categories.get(category, 0) + 1
        reached: dict[str, set[str]] = {}
        awaiting: dict[str, str | None] = {}
        for view in c.turns:
            e = view.event
            out.turns += 1
            latencies.append(e.latency_ms)
            out.model_calls += e.model_calls
            out.tokens += e.prompt_tokens + e.completion_tokens
            day = days.setdefault(f"{e.at:%Y-%m-%d}", Day(day=f"{e.at:%Y-%m-%d}"))
            day.turns += 1
            day.model_calls += e.model_calls
            day.tokens += e.prompt_tokens + e.completion_tokens
            if view.feedback is not None:
                out.ratings[view.feedback.rating] += 1
            for k in e.knowledge:
                if k.outcome == "unanswered":
                    unanswered[k.question] += 1
                elif k.outcome == "refused":
                    refused[k.question] += 1
            b = e.business
            if b is None:
                continue
            steps = reached.setdefault(b, set())
            after = e.state_after
            if after in ("collecting", "step_executing", "confirming", "executing", "done"):
                steps.add("started")
            if after in ("confirming", "executing", "done") and e.state_before != "done":
                steps.add("fields_given")
            if any(call.name == A.CONFIRM_SUBMIT and call.status == "applied"
                   for call in e.calls) or after == "executing" or (
                    e.job is not None and e.state_before == "confirming"):
                steps.add("confirmed")
            if e.job is not None:
                steps.add("submitted")
            if e.outcome == "done":
                steps.add("done")
            for change in e.fields:
                counts = out.reasks.setdefault(f"{b}.{change.key}", {"given": 0, "refused": 0})
                counts["refused" if change.status == "invalid" else "given"] += 1
            if e.outcome in ENDINGS:
                where = awaiting.get(b) or e.state_before
                ending = funnels.setdefault(b, Funnel(business=b)).endings[e.outcome]
                ending[where] = ending.get(where, 0) + 1
            awaiting[b] = e.awaiting
        for b, steps in reached.items():
            funnel = funnels.setdefault(b, Funnel(business=b))
            for step in steps:
                funnel.steps[step] += 1
    out.funnels = sorted(funnels.values(), key=lambda f: -f.steps["started"])
    out.unanswered = unanswered.most_common(top)
    out.refused = refused.most_common(top)
    out.days = [days[d] for d in sorted(days)]
    out.latency_p50, out.latency_p95 = percentile(latencies, .5), percentile(latencies, .95)
    return out
