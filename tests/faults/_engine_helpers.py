"""Shared by the engine-side fault tests (model, backend, worker): the citizen's
card-loss dialogue and counting what a backend database really holds.

The tests count in the backend's own SQLite file, not in what the assistant
says: "zero duplicate submissions" means one row in ``applications``, and
"zero lost fields" means that row's payload carries every collected value.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from si_agent.demo_backend.seed import APPLICATIONS

SEEDED = tuple(a[0] for a in APPLICATIONS)

# card_loss, a handle-type business of the demo backend (one application per key).
CARD_LOSS = {"id_number": "330122196303150178", "name": "张伟", "phone": "13800138001",
             "loss_type": "临时挂失"}


def applications(db_path: Path, business_id: str) -> list[dict]:
    """The applications of ``business_id`` the test created (the seeded ones left out),
    each with its submitted payload decoded."""
    if not Path(db_path).exists():
        return []
    marks = ", ".join("?" * len(SEEDED))
    with sqlite3.connect(db_path) as conn:
        conn.row_factory = sqlite3.Row
        rows = conn.execute(
            f"SELECT * FROM applications WHERE business_id = ? AND application_no NOT IN ({marks})",
            (business_id, *SEEDED)).fetchall()
    return [{**dict(r), "payload": json.loads(r["payload"])} for r in rows]


def calls(db_path: Path, business_id: str) -> list[tuple[str | None, int]]:
    """Every submission the backend received for ``business_id``: (idempotency key, status)."""
    with sqlite3.connect(db_path) as conn:
        return conn.execute("SELECT idempotency_key, status FROM calls WHERE business_id = ?",
                            (business_id,)).fetchall()
