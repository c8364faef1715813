"""The demo backend itself: seed data, one-time setup, admin routes, failure injection."""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

import pytest

from si_agent.demo_backend import create_demo_app, db, ensure_db, fail_next
from si_agent.demo_backend.seed import APPLICATIONS, PERSONS, id_check_digit, luhn_digit
from si_agent.errors import ExecutorError
from si_agent.executor import Executors
from si_agent.executor.demo_host import demo_app

ZHANG_WEI, LI_XIUYING, WANG_FANG, LIU_YANG, CHEN_JING, ZHAO_LEI = (p.id_number for p in PERSONS)


def rows(db_path: Path, sql: str, *args) -> list[tuple]:
    with sqlite3.connect(db_path) as conn:
        return conn.execute(sql, args).fetchall()


def test_check_digit_helpers():
    # GB 11643 worked example and a known-valid number ending in X
    assert id_check_digit("11010519491231002") == "X"
    assert id_check_digit("33010619900101123") == "X"
    assert luhn_digit("7992739871") == "3"
    with pytest.raises(ValueError):
        id_check_digit("123")


def test_demo_people_have_valid_numbers():
    assert len(PERSONS) == 6
    assert len({p.id_number for p in PERSONS}) == 6
    ric = pytest.importorskip("stdnum.cn.ric")
    luhn = pytest.importorskip("stdnum.luhn")
    for p in PERSONS:
        assert ric.is_valid(p.id_number), p.name
        assert luhn.is_valid(p.bank_card), p.name
        assert len(p.phone) == 11 and p.phone.startswith("1")


def test_seed_contents(db_path: Path):
    ensure_db(db_path)
    assert rows(db_path, "SELECT count(*) FROM persons") == [(6,)]
    # retired people: twelve monthly payments, on the 15th
    for who in (ZHANG_WEI, LI_XIUYING):
        payments = rows(db_path, "SELECT month, paid_on FROM pension_payments"
                                 " WHERE id_number = ? ORDER BY month", who)
        assert len(payments) == 12
        assert all(paid_on.endswith("-15") for _, paid_on in payments)
        assert len({m for m, _ in payments}) == 12
    assert rows(db_path, "SELECT count(*) FROM pension_payments WHERE id_number = ?",
                WANG_FANG) == [(0,)]
    # contributions per year, within 2015..2025
    years = rows(db_path, "SELECT year FROM contributions WHERE id_number = ? ORDER BY year",
                 WANG_FANG)
    assert [y for (y,) in years] == list(range(2015, 2026))
    assert rows(db_path, "SELECT min(year), max(year) FROM contributions") == [(2015, 2025)]
    assert rows(db_path, "SELECT count(*) FROM applications") == [(len(APPLICATIONS),)]


def test_setup_is_idempotent_across_processes(db_path: Path):
    ensure_db(db_path)
    db._ready.clear()  # what a second process would see: a seeded file, a fresh cache
    ensure_db(db_path)
    assert rows(db_path, "SELECT count(*) FROM persons") == [(6,)]
    assert rows(db_path, "SELECT count(*) FROM applications") == [(len(APPLICATIONS),)]
    assert rows(db_path, "PRAGMA journal_mode") == [("wal",)]


def test_each_thread_keeps_one_connection(tmp_path: Path):
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    with db.connection(a) as first, db.connection(a) as again:
        assert first is again
    seen: list[sqlite3.Connection] = []

    def work() -> None:
        with db.connection(a) as conn:
            seen.append(conn)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert seen[0] is not first
    with db.connection(b) as other:  # another file: the kept connection is closed
        assert other is not first
    with pytest.raises(sqlite3.ProgrammingError):
        first.execute("SELECT 1")


def test_a_kept_connection_is_never_left_in_a_transaction(db_path: Path):
    with pytest.raises(RuntimeError), db.connection(db_path) as conn:
        conn.execute("BEGIN IMMEDIATE")
        raise RuntimeError("the block failed mid-transaction")
    with db.connection(db_path) as conn:
        assert not conn.in_transaction


def test_demo_app_is_built_once_per_path(tmp_path: Path):
    assert demo_app(tmp_path / "a.db") is demo_app(tmp_path / "a.db")
    assert demo_app(tmp_path / "a.db") is not demo_app(tmp_path / "b.db")


def test_seeded_application_days_continue_their_serials(db_path: Path, monkeypatch):
    from datetime import datetime

    from si_agent.demo_backend import clock

    monkeypatch.setattr(clock, "now", lambda: datetime(2026, 9, 15, 10, 0, tzinfo=clock.CST))
    client = create_demo_app(db_path).test_client()
    response = client.post(
        "/api/card_loss", headers={"Idempotency-Key": "serial"},
        json={"id_number": ZHAO_LEI, "name": "赵磊", "phone": "13800138006",
              "loss_type": "正式挂失"})
    assert response.get_json()["application_no"] == "SI20260915000002"


def test_admin_applications_lists_everything(db_path: Path):
    client = create_demo_app(db_path).test_client()
    client.post("/api/phone_change", headers={"Idempotency-Key": "p"},
                json={"id_number": ZHAO_LEI, "name": "赵磊", "new_phone": "13912345678"})
    apps = client.get("/api/_admin/applications").get_json()["applications"]
    assert len(apps) == len(APPLICATIONS) + 1
    assert {a[0] for a in APPLICATIONS} < {a["application_no"] for a in apps}
    new = apps[0]
    assert (new["business_id"], new["status"], new["id_number"]) == (
        "phone_change", "已受理", ZHAO_LEI)
    assert new["payload"]["new_phone"] == "13912345678"


def test_admin_fail_next_route(db_path: Path):
    client = create_demo_app(db_path).test_client()
    assert client.post("/api/_admin/fail_next", json={"count": 2, "status": 502}).status_code == 200
    body = {"application_no": "SI20260915000001"}
    assert client.post("/api/progress_query", json=body).status_code == 502
    failed = client.post("/api/progress_query", json=body)
    assert failed.status_code == 502
    assert failed.get_json() == {"error": {"message": "业务系统繁忙，请稍后再试。"}}
    assert client.post("/api/progress_query", json=body).status_code == 200
    assert client.post("/api/_admin/fail_next", json={"count": 1, "status": 200}).status_code == 400


def test_fail_next_helper_validates(db_path: Path):
    with pytest.raises(ValueError):
        fail_next(db_path, 1, status=200)
    with pytest.raises(ValueError):
        fail_next(db_path, -1)


def test_fail_next_then_success_through_the_executor(
    executors: Executors, db_path: Path, make_business
):
    biz = make_business("card_loss", ["id_number", "name", "phone", "loss_type"])
    values = {"id_number": ZHANG_WEI, "name": "张伟", "phone": "13800138001",
              "loss_type": "临时挂失"}
    fail_next(db_path, 1)
    with pytest.raises(ExecutorError) as err:
        executors.run(biz, values, idempotency_key="after-failure")
    assert (err.value.status, err.value.retryable) == (503, True)
    assert err.value.message == "业务系统繁忙，请稍后再试。"
    assert err.value.field_errors == {}
    result = executors.run(biz, values, idempotency_key="after-failure")
    assert result["loss_type"] == "临时挂失"
    assert rows(db_path, "SELECT count(*) FROM applications WHERE business_id = 'card_loss'"
                " AND id_number = ?", ZHANG_WEI) == [(1,)]


def test_request_errors_are_json(db_path: Path):
    client = create_demo_app(db_path).test_client()
    r = client.post("/api/pension_query", data="not json", content_type="application/json")
    assert r.status_code == 400 and "JSON" in r.get_json()["error"]["message"]
    r = client.post("/api/pension_query", json={})
    assert r.status_code == 400 and "id_number" in r.get_json()["error"]["message"]
    r = client.get("/nowhere")
    assert r.status_code == 404 and r.get_json()["error"]["message"]
    r = client.delete("/api/pension_query")
    assert r.status_code == 405 and r.get_json()["error"]["message"]
    r = client.post("/api/no_such_business", json={})
    assert r.status_code == 404
    assert r.headers["Content-Type"].startswith("application/json")


def test_unwritable_demo_db_is_a_retryable_error(tmp_path: Path, make_business):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    from si_agent.config.settings import Settings

    with Executors(Settings(data_dir=blocker / "data")) as ex:
        with pytest.raises(ExecutorError) as err:
            ex.run(make_business("progress_query", ["application_no"]),
                   {"application_no": "SI20260915000001"}, idempotency_key="k")
    assert (err.value.status, err.value.retryable) == (503, True)


def test_logs_never_contain_values(executors: Executors, make_business, caplog):
    caplog.set_level(logging.DEBUG)
    record = make_business("insurance_record", ["id_number", "start_year", "end_year"],
                           method="GET")
    executors.run(record, {"id_number": WANG_FANG, "start_year": 2019, "end_year": 2019},
                  idempotency_key="k")
    query = make_business("pension_query", ["id_number"])
    with pytest.raises(ExecutorError):
        executors.run(query, {"id_number": WANG_FANG}, idempotency_key="k")
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert WANG_FANG not in text
    assert "business insurance_record" in text and "200" in text
    assert "business pension_query" in text and "404" in text


def _deeply_nested(depth: int = 5_000) -> str:
    return '{"id_number": ' + "[" * depth + "]" * depth + "}"


def test_deeply_nested_json_is_a_400_not_a_500(db_path: Path):
    # json.loads raises RecursionError on this, which get_json(silent=True) lets through.
    client = create_demo_app(db_path).test_client()
    for path in ("/api/pension_query", "/api/phone_change", "/api/_admin/fail_next"):
        r = client.post(path, data=_deeply_nested(), content_type="application/json",
                        headers={"Idempotency-Key": "deep"})
        assert r.status_code == 400, path
        assert r.get_json()["error"]["message"] == "请求内容必须是JSON对象。"
    # Nothing was created, and the backend still answers.
    assert rows(db_path, "SELECT count(*) FROM applications WHERE business_id = 'phone_change'"
                ) == [(0,)]
    assert client.post("/api/progress_query",
                       json={"application_no": "SI20260915000001"}).status_code == 200


def test_deeply_nested_json_to_the_served_demo_backend_is_a_400(tmp_path: Path):
    from si_agent.testing.processes import api_env, served_api

    with served_api(api_env(tmp_path), user="deep") as client:
        r = client.post("/demo/api/pension_query", content=_deeply_nested(),
                        headers={"Content-Type": "application/json"})
        assert r.status_code == 400 and r.json()["error"]["message"] == "请求内容必须是JSON对象。"
        r = client.post("/demo/api/pension_query", json={"id_number": ZHANG_WEI})
        assert r.status_code == 200


def test_the_portal_asks_for_the_id_photo_size_the_photo_step_checks():
    # The demo backend writes its own rule (it imports nothing of the photo steps):
    # a photo the step accepts must be one the portal accepts.
    from si_agent.demo_backend.services import ID_PHOTO_SIZE
    from si_agent.photo.idphoto import SIZE

    assert ID_PHOTO_SIZE == SIZE


def test_the_routes_serve_exactly_the_declared_endpoints():
    from si_agent.demo_backend.endpoints import ENDPOINTS
    from si_agent.demo_backend.services import SERVICES

    assert set(SERVICES) == set(ENDPOINTS)
    assert all(SERVICES[b].endpoint is ENDPOINTS[b] for b in ENDPOINTS)


def test_an_answer_that_differs_from_its_declaration_is_a_500(db_path: Path, monkeypatch,
                                                               caplog):
    from si_agent.demo_backend import services

    real = services.SERVICES["pension_query"]
    monkeypatch.setitem(services.SERVICES, "pension_query", services.Service(
        lambda ctx, body: {**real.run(ctx, body), "amont": "1"}, real.endpoint))
    client = create_demo_app(db_path).test_client()
    with caplog.at_level(logging.ERROR):
        response = client.post("/api/pension_query", json={"id_number": ZHANG_WEI})
    assert response.status_code == 500
    assert "differ from endpoints.ENDPOINTS: ['amont']" in caplog.text
    monkeypatch.setitem(services.SERVICES, "pension_query", real)
    assert client.post("/api/pension_query", json={"id_number": ZHANG_WEI}).status_code == 200
