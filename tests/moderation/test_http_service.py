"""The moderation service by URL, against a real HTTP server standing in for it."""

from __future__ import annotations

import threading

import pytest
from flask import Flask, jsonify, request
from werkzeug.serving import make_server

from si_agent.config.settings import Settings
from si_agent.errors import SettingsError
from si_agent.moderation import Action, create_moderation
from si_agent.moderation.http import HttpModerator


@pytest.fixture
def service():
    """Refuses 违禁, masks 坏词 (answering the masked text), flags 复查; records requests;
    answers 500 to 出错 and sleeps on 太慢."""
    app = Flask("moderation-service")
    seen: list[dict] = []

    @app.post("/check")
    def check():
        body = request.get_json()
        seen.append(body)
        text = body["text"]
        if "出错" in text:
            return "boom", 500
        if "太慢" in text:
            threading.Event().wait(1.0)
        if "违禁" in text:
            return jsonify(action="refuse", categories=["banned"])
        if "改写" in text:
            return jsonify(action="mask", text="确认", categories=["bad"])
        if "坏词" in text:
            return jsonify(action="mask", text=text.replace("坏词", "＊＊"), categories=["bad"])
        if "复查" in text:
            return jsonify(action="flag", categories=["review"])
        return jsonify(action="pass")

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/check", seen
    server.shutdown()


def test_actions_from_the_service(service):
    url, seen = service
    moderator = HttpModerator(url)
    assert moderator.check("你好", "input").clean
    assert moderator.check("这有违禁内容", "input").action is Action.REFUSE
    masked = moderator.check("这是坏词", "output")
    assert masked.action is Action.MASK and masked.text == "这是＊＊"
    assert moderator.check("请复查", "input").action is Action.FLAG
    assert seen[1] == {"text": "这有违禁内容", "where": "input"}


def test_a_mask_that_rewrites_the_text_is_only_a_flag(service):
    url, _ = service
    verdict = HttpModerator(url).check("等等，我再想想，先别提交，改写", "input")
    assert verdict.text == "等等，我再想想，先别提交，改写"
    assert verdict.flagged and not verdict.masked


def test_personal_numbers_never_reach_the_service(service):
    url, seen = service
    moderator = HttpModerator(url)
    verdict = moderator.check("我的身份证330122196303150178，这是坏词", "input")
    assert "330122196303150178" not in str(seen)
    # its masking would replace the citizen's number with the redacted one: flagged instead
    assert verdict.text == "我的身份证330122196303150178，这是坏词" and verdict.flagged


def test_a_failing_service_fails_open_or_closed(service, caplog):
    url, _ = service
    assert HttpModerator(url).check("出错了", "input").clean
    assert "moderation service" in caplog.text and "HTTPStatusError" in caplog.text
    assert HttpModerator(url, fail_closed=True).check("出错了", "input").refused
    assert HttpModerator(url, timeout=0.2).check("太慢了", "input").clean
    assert HttpModerator("http://127.0.0.1:9/none", timeout=0.2).check("你好", "input").clean


def test_settings_and_the_word_list_together(service, tmp_path):
    url, seen = service
    with pytest.raises(SettingsError, match="SI_MODERATION_URL"):
        Settings(moderation="http", data_dir=tmp_path)
    settings = Settings(moderation="words+http", moderation_url=url, data_dir=tmp_path)
    moderation = create_moderation(settings, {})
    verdict = moderation.check("王八蛋说的坏词", "input")
    assert verdict.text == "＊＊＊说的＊＊" and verdict.masked
    assert seen[-1]["text"] == "＊＊＊说的坏词"  # the service sees the list's masking
    with pytest.raises(SettingsError, match="words, http, words\\+http, off"):
        Settings(moderation="strict", data_dir=tmp_path)
