"""``GET /console/analytics`` (and ``.csv``): numbers over the turn-event record.

Per business the funnel (started → all fields given → confirmed → submitted → done) and
where conversations were cancelled, handed off or failed; re-asks per field and per
validator (answers the validator refused); the top unanswered questions (masked); the citizens' ratings; turn
latency p50/p95; model calls and tokens. Over the conversations active in the period
(``since``, default 7d; the newest ``SCAN``). The numbers: ``si_agent.turns.analytics``.
"""

from __future__ import annotations

import csv
import io

from flask import Response, current_app, render_template, request

from si_agent.audit import parse_since
from si_agent.server.console import texts
from si_agent.server.console.blueprint import bp
from si_agent.turns.analytics import ENDINGS, STEP_LABELS, STEPS, report
from si_agent.turns.model import OUTCOMES

SCAN = 1000  # conversations read for one report (about 1 s for 10 turns each)
DEFAULT_SINCE = "7d"


def _report():
    controller = current_app.config["SI_CONTROLLER"]
    since_text = request.args.get("since") or DEFAULT_SINCE
    error = None
    try:
        since = parse_since(since_text)
    except ValueError:
        since_text, since, error = DEFAULT_SINCE, parse_since(DEFAULT_SINCE), texts.BAD_SINCE
    numbers = report(controller.turns.recent(since=since, limit=SCAN))
    names = {b.id: b.name for b in controller.catalog.values()}
    return numbers, names, since_text, error


@bp.get("/analytics")
def analytics():
    numbers, names, since, error = _report()
    catalog = list(current_app.config["SI_CONTROLLER"].catalog.values())
    labels = {f"{b.id}.{f.key}": f"{b.name}·{f.label}" for b in catalog for f in b.fields}
    # Where a conversation ended: the field awaited, or the step (confirming, retrying).
    places = {**{f"{b.id}.{f.key}": f.label for b in catalog for f in b.fields},
              **{f"{b.id}.{step.id}": step.label for b in catalog for step in b.steps},
              **{f"{b.id}.{k}": v for b in catalog for k, v in texts.AWAITED_STEPS.items()}}
    return render_template("console/analytics.html", r=numbers, names=names, since=since,
                           error=error, steps=STEPS, step_labels=STEP_LABELS,
                           endings=ENDINGS, outcomes=OUTCOMES, labels=labels, places=places,
                           validators=by_validator(numbers.reasks, catalog),
                           truncated=numbers.conversations >= SCAN), 400 if error else 200


def by_validator(reasks: dict[str, dict[str, int]], catalog) -> dict[str, dict[str, int]]:
    """The per-field re-asks summed per validator (the field's type: idcard, phone…)."""
    types = {f"{b.id}.{f.key}": f.type for b in catalog for f in b.fields}
    out: dict[str, dict[str, int]] = {}
    for key, counts in reasks.items():
        total = out.setdefault(types.get(key, "?"), {"given": 0, "refused": 0})
        total["given"] += counts["given"]
        total["refused"] += counts["refused"]
    return out


# A cell that starts so is a formula to Excel (=HYPERLINK(...), +cmd|...): a business name
# staff typed is shown as text (OWASP's CSV injection advice: a leading apostrophe).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(text: str) -> str:
    return "'" + text if text.startswith(_FORMULA_START) else text


@bp.get("/analytics.csv")
def analytics_csv():
    numbers, names, _, error = _report()
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["business", "name", *STEPS, *ENDINGS])
    for f in numbers.funnels:
        writer.writerow([_cell(f.business), _cell(names.get(f.business, f.business)),
                         *(f.steps[s] for s in STEPS),
                         *(sum(f.endings[e].values()) for e in ENDINGS)])
    return Response("\ufeff" + out.getvalue(), mimetype="text/csv",  # BOM: Excel reads UTF-8
                    headers={"Content-Disposition": 'attachment; filename="funnel.csv"'})
