"""Fixtures for the demo portal: an app on a temporary database and a logged-in client."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from si_agent.demo_portal import create_portal_app
from tests.portal.page import Page

ZHANG_WEI = ("张伟", "330122196303150178")

VALID: dict[str, dict[str, str]] = {
    "social_transfer": {"name": "张伟", "id_type": "居民身份证", "id_number": "330122196303150178",
                        "from_city": "杭州市", "to_city": "苏州市", "agree": "yes"},
    "card_apply": {"name": "王芳", "id_type": "居民身份证", "id_number": "320583199008230462",
                   "phone": "13800138003", "bank": "中国农业银行",
                   "mailing_address": "江苏省苏州市工业园区星湖街1号", "agree": "yes"},
    "medical_filing": {"name": "李秀英", "id_type": "居民身份证", "id_number": "310104196806120281",
                       "insured_city": "上海", "destination_city": "杭州市",
                       "filing_type": "异地长期居住", "start_date": "2026-01-01",
                       "remarks": "随子女居住", "agree": "yes"},
}
UNEMPLOYMENT_PAGES = (
    {"name": "陈静", "id_type": "居民身份证", "id_number": "320102198809150628",
     "phone": "13800138005"},
    {"separation_date": "2025-06-30", "separation_reason": "协商一致解除",
     "bank_card": "6013820800012345672", "agree": "yes"},
)


@pytest.fixture
def app(tmp_path):
    return create_portal_app(tmp_path / "portal.db", secret="test-secret")


@pytest.fixture
def client(app):
    return app.test_client()


def log_in(client, user: str = "demo", password: str = "demo123"):
    return client.post("/login", data={"username": user, "password": password, "next": "/"})


@pytest.fixture
def portal(client):
    """A logged-in client."""
    assert log_in(client).status_code == 303
    return client


@pytest.fixture
def start(portal) -> Callable[..., str]:
    """Open a business's form; returns the draft's URL."""
    def start(business_id: str, query: str = "") -> str:
        response = portal.get(f"/forms/{business_id}{query}")
        assert response.status_code == 302, response.status_code
        return response.location

    return start


@pytest.fixture
def post(portal) -> Callable[..., Page]:
    """POST a page's values to a draft URL, following redirects; returns the page shown."""
    def post(url: str, data: dict[str, str], action: str = "submit") -> Page:
        response = portal.post(url, data={**data, "action": action}, follow_redirects=True)
        return Page(response)

    return post


@pytest.fixture
def applications(portal) -> Callable[[], list[dict]]:
    return lambda: portal.get("/_admin/applications").get_json()
