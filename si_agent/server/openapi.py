"""``GET /openapi.json``: the API contract (OpenAPI 3.1), shipped as YAML."""

from __future__ import annotations

from functools import cache
from importlib.resources import files

import yaml
from flask import Blueprint, jsonify

bp = Blueprint("openapi", __name__)


@cache
def openapi_document() -> dict:
    text = files("si_agent.server").joinpath("openapi.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)


@bp.get("/openapi.json")
def openapi_json():
    return jsonify(openapi_document())
