"""What the audit log writes: hashed users, masked values, and never a broken turn."""

from __future__ import annotations

import logging
from pathlib import Path

from si_agent.audit import AuditEntry, AuditLog, MemoryAuditStore, mask_values
from si_agent.audit.log import NOT_WRITTEN
from si_agent.config.loader import load_businesses
from si_agent.config.model import Business
from si_agent.errors import StoreUnavailable

ID = "330122196303150178"
PHONE = "13800138000"
CARD = "6222021234567890123"
ROOT = Path(__file__).resolve().parents[2]

BUSINESS = Business.model_validate({
    "id": "demo", "name": "演示", "type": "handle", "description": "d", "keywords": ["demo"],
    "fields": [{"key": "id_number", "label": "身份证号", "type": "idcard", "prompt": "p"},
               {"key": "phone", "label": "手机", "type": "phone", "prompt": "p"},
               {"key": "card", "label": "银行卡", "type": "bank_card", "prompt": "p"},
               {"key": "name", "label": "姓名", "type": "name", "prompt": "p"},
               {"key": "note", "label": "备注", "type": "text", "prompt": "p"}],
    "api": {"kind": "builtin", "handler": "echo", "result_template": "ok"},
})


def test_values_are_masked_by_their_field_type_and_free_text_is_not_written():
    note = f"备用电话{PHONE}，身份证{ID}"
    masked = mask_values({"id_number": ID, "phone": PHONE, "card": CARD, "name": "欧阳娜娜",
                          "note": note, "id_photo": {"front": "…"},
                          "undeclared": "张三", "empty": None}, BUSINESS)
    assert masked == {"id_number": "3301**********0178", "phone": "138****8000",
                      "card": "6222***********0123", "name": "欧***",
                      "note": f"<text, {len(note)} chars>", "id_photo": NOT_WRITTEN,
                      "undeclared": "<text, 2 chars>"}


def test_free_text_of_the_real_businesses_is_written_as_its_length_only():
    businesses = load_businesses(ROOT / "businesses")
    address = "杭州市西湖区文三路90号 李秀英收"
    card = mask_values({"bank": "工商银行", "mailing_address": address},
                       businesses["card_apply"])
    assert card == {"bank": "工商银行", "mailing_address": f"<text, {len(address)} chars>"}
    health = "去年查出高血压，在吃药"
    consult = mask_values({"age": 40, "income_range": "10-20万", "product_types": ["重疾险"],
                           "health_summary": health, "occupation": "出租车司机",
                           "existing_insurance": "有一份平安的重疾"},
                          businesses["insurance_consult"])
    assert consult == {"age": "40", "income_range": "10-20万", "product_types": "重疾险",
                       "health_summary": f"<text, {len(health)} chars>",
                       "occupation": "<text, 5 chars>", "existing_insurance": "<text, 8 chars>"}


def test_users_are_a_keyed_hash_of_the_session_id():
    one, other = AuditLog(MemoryAuditStore(), pepper="a" * 32), AuditLog(
        MemoryAuditStore(), pepper="b" * 32)
    assert one.user_ref(PHONE) == one.user_ref(PHONE) != one.user_ref("13800138001")
    assert one.user_ref(PHONE) != other.user_ref(PHONE)  # without the pepper: no dictionary
    assert len(one.user_ref(PHONE)) == 32 and PHONE not in one.user_ref(PHONE)


class BrokenStore(MemoryAuditStore):
    def append(self, entry: AuditEntry) -> None:
        raise StoreUnavailable(f"down while writing {entry.values}")


def test_a_failing_store_is_logged_never_raised_and_the_log_holds_no_values(caplog):
    audit = AuditLog(BrokenStore(), pepper="p" * 32)
    with caplog.at_level(logging.WARNING, logger="si_agent.audit"):
        audit.state_change(PHONE, BUSINESS, "failed", job=None, values={"id_number": ID})
    assert [r.levelno for r in caplog.records] == [logging.WARNING]
    text = caplog.text
    assert "StoreUnavailable" in text and ID not in text and "3301" not in text
    assert PHONE not in text


def test_only_executing_done_and_failed_are_audited():
    audit = AuditLog(MemoryAuditStore(), pepper="p" * 32)
    for state in ("idle", "collecting", "confirming", "step_executing", "done"):
        audit.state_change("alice", BUSINESS, state, job=None, values={})
    (entry,) = audit.query()
    assert entry.state == "done" and entry.outcome == "concluded" and entry.job_id is None
