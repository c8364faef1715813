"""Sessions stored before states and field statuses became enums load, and are
written back in the same plain strings."""

from __future__ import annotations

import json

from si_agent.core.state import FieldStatus, State
from si_agent.session.model import Session

STORED = {  # a session as an older release wrote it to Redis
    "session_id": "u", "state": "confirming", "business_id": "social_transfer",
    "fields": {"from_city": {"value": "杭州市", "status": "collected", "attempts": 0},
               "to_city": {"value": None, "status": "invalid", "attempts": 1,
                           "error": "请输入城市"}},
    "awaiting": "confirm", "turn": 3, "version": 7,
}


def test_an_old_stored_session_loads_with_enums_and_round_trips():
    session = Session.model_validate_json(json.dumps(STORED))
    assert session.state is State.CONFIRMING
    assert session.fields["from_city"].status is FieldStatus.COLLECTED
    assert session.fields["to_city"].status == "invalid"  # still equal to the string
    assert session.awaiting == "confirm"
    written = json.loads(session.model_dump_json())
    assert written["state"] == "confirming"
    assert written["fields"]["to_city"]["status"] == "invalid"
    assert {k: written[k] for k in STORED} == STORED | {
        "fields": {k: {**v, "error": v.get("error")} for k, v in STORED["fields"].items()}}
