"""The demo backend behind a real HTTP server, reached through SI_BACKEND_URL."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from werkzeug.serving import make_server

from si_agent.demo_backend import create_demo_app, demo_blueprint, fail_next
from si_agent.demo_backend.seed import PERSONS
from si_agent.errors import ExecutorError
from si_agent.executor import Executors

WANG_FANG = PERSONS[2].id_number
VALUES = {"from_city": "苏州市", "to_city": "上海市", "id_number": WANG_FANG, "name": "王芳"}


def serve(app: Flask) -> Iterator[str]:
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(5)


@pytest.fixture
def transfer(make_business):
    return make_business("social_transfer", ["from_city", "to_city", "id_number", "name"])


@pytest.fixture
def progress(make_business):
    return make_business("progress_query", ["application_no"], type="query")


@pytest.fixture
def server_db(tmp_path: Path) -> Path:
    return tmp_path / "server" / "backend.db"


@pytest.fixture
def root_server(server_db: Path) -> Iterator[str]:
    yield from serve(create_demo_app(server_db))


def applications(db: Path) -> list[str]:
    client = create_demo_app(db).test_client()
    return [a["application_no"] for a in client.get("/api/_admin/applications").get_json()[
        "applications"]]


def test_real_http_round_trip(
    root_server: str, server_db: Path, settings, monkeypatch, transfer, progress
):
    monkeypatch.setenv("SI_BACKEND_URL", root_server)
    with Executors(settings) as ex:
        result = ex.run(transfer, VALUES, idempotency_key="real-1")
        again = ex.run(transfer, VALUES, idempotency_key="real-1")
        found = ex.run(progress, {"application_no": result["application_no"]}, idempotency_key="k")
    assert again == result
    assert found["status"] == "已受理"
    assert found["business_name"] == "社保关系转移"
    # it went over the network to the server's database, not the in-process demo host
    assert result["application_no"] in applications(server_db)
    assert not settings.demo_backend_db.exists()


def test_real_http_field_errors_and_get(
    root_server: str, settings, monkeypatch, transfer, make_business
):
    monkeypatch.setenv("SI_BACKEND_URL", root_server)
    record = make_business("insurance_record", ["id_number", "start_year", "end_year"],
                           type="query", method="GET")
    with Executors(settings) as ex:
        with pytest.raises(ExecutorError) as err:
            ex.run(transfer, {**VALUES, "name": "王小芳"}, idempotency_key="real-2")
        summary = ex.run(record, {"id_number": WANG_FANG, "start_year": 2025,
                                  "end_year": 2025}, idempotency_key="k")["summary"]
    assert err.value.status == 422
    assert err.value.field_errors == {"name": "姓名与身份证号码不一致。"}
    assert summary == "2025年：缴费12个月，缴费基数7800.00元，个人缴纳7488.00元"


def test_injected_failure_over_real_http(root_server: str, server_db: Path, settings,
                                         monkeypatch, transfer):
    monkeypatch.setenv("SI_BACKEND_URL", root_server)
    fail_next(server_db, 1, status=503)
    with Executors(settings) as ex:
        with pytest.raises(ExecutorError) as err:
            ex.run(transfer, VALUES, idempotency_key="real-3")
        assert (err.value.status, err.value.retryable) == (503, True)
        assert err.value.message == "业务系统繁忙，请稍后再试。"
        assert ex.run(transfer, VALUES, idempotency_key="real-3")["application_no"]


def test_blueprint_mounted_under_a_prefix(
    server_db: Path, settings, monkeypatch, transfer, progress
):
    # How the API server exposes it: SI_BACKEND_URL=http://host:port/demo
    app = Flask("host")
    app.register_blueprint(demo_blueprint(server_db), url_prefix="/demo")
    for base in serve(app):
        monkeypatch.setenv("SI_BACKEND_URL", f"{base}/demo")
        with Executors(settings) as ex:
            result = ex.run(transfer, VALUES, idempotency_key="prefixed")
            assert ex.run(progress, {"application_no": result["application_no"]},
                          idempotency_key="k")
