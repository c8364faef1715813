"""Shared helpers for executor tests: demo people and a Business factory.

Businesses are built here, not loaded from ``businesses/``, so these tests
pin the executor/backend contract independently of the YAML files.
"""

from __future__ import annotations

from collections.abc import Callable

from si_agent.config.model import Business

DEMO_URL = "${SI_BACKEND_URL:-http://demo.si-agent}/api/"

# Demo people (see docs/demo-data.md)
ZHANG_WEI = "330122196303150178"     # retired, Hangzhou
LI_XIUYING = "310104196806120281"    # retired, Shanghai
WANG_FANG = "320583199008230462"     # working, Suzhou
LIU_YANG = "330102199503080133"      # working since 2018-07, Hangzhou
CHEN_JING = "320102198809150628"     # unemployed since 2025-07, Nanjing
ZHAO_LEI = "110105200001100353"      # flexible employment since 2021, Beijing
UNKNOWN_ID = "33010619900101123X"    # valid checksum, not a demo person



def make_business(
    business_id: str,
    keys: tuple[str, ...] | list[str] = (),
    *,
    kind: str = "http",
    type: str = "handle",
    url: str | None = None,
    method: str = "POST",
    timeout: float = 10.0,
    handler: str | None = None,
    steps: tuple[str, ...] | list[str] = (),
) -> Business:
    """A minimal valid Business whose fields are plain text fields named ``keys``."""
    api: dict = {"kind": kind, "method": method, "timeout": timeout, "result_template": "ok"}
    if kind == "http":
        api["url"] = url if url is not None else DEMO_URL + business_id
    if handler is not None:
        api["handler"] = handler
    return Business.model_validate({
        "id": business_id,
        "name": business_id,
        "type": type,
        "description": "test business",
        "keywords": [business_id],
        "fields": [{"key": k, "label": k, "type": "text", "prompt": k} for k in keys],
        "steps": [{"id": s, "label": s, "prompt": s, "handler": "noop"} for s in steps],
        "api": api,
    })
