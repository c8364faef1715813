"""Clips are checked before anything hears them: size, container, length; refusals
carry the status and the Chinese message the API answers with."""

from __future__ import annotations

import pytest

from si_agent.errors import UploadRejected
from si_agent.voice.audio import check_clip, sniff

from .conftest import encode, wav

pytest.importorskip("av", reason="needs the voice extra (PyAV): pip install 'si_agent[voice]'")

LIMITS = {"max_bytes": 2 * 2**20, "max_seconds": 60}


@pytest.mark.parametrize(("container", "codec", "name"), [
    ("webm", "libopus", "webm"), ("ogg", "libopus", "ogg"), ("mp3", "mp3", "mp3"),
    ("ipod", "aac", "m4a"),
])
def test_browser_and_phone_formats_are_decoded(container, codec, name):
    data = encode(wav(2.0), container, codec)
    clip = check_clip(data, **LIMITS)
    assert clip.container == name == sniff(data)
    assert 1.9 < clip.seconds < 2.2 and clip.samples.dtype.name == "float32"


def test_wav_length_is_measured():
    clip = check_clip(wav(3.0, rate=44100), **LIMITS)
    assert clip.container == "wav" and clip.seconds == pytest.approx(3.0, abs=0.01)
    assert clip.media_type == "audio/wav"


def test_too_large_is_413_before_decoding():
    with pytest.raises(UploadRejected) as err:
        check_clip(b"RIFF" + b"\0" * 100, max_bytes=50, max_seconds=60)
    assert err.value.status == 413 and err.value.code == "voice_too_large"


def test_too_long_is_413():
    with pytest.raises(UploadRejected) as err:
        check_clip(wav(4.0, rate=8000), max_bytes=2**20, max_seconds=3)
    assert (err.value.status, err.value.code) == (413, "voice_too_long")
    assert err.value.message == "语音太长了，请在3秒内说完，或分几次说。"


def test_not_audio_is_415():
    with pytest.raises(UploadRejected) as err:
        check_clip(b"\x89PNG\r\n\x1a\n" + b"\0" * 64, **LIMITS)
    assert (err.value.status, err.value.code) == (415, "not_audio")


def test_broken_audio_is_400():
    with pytest.raises(UploadRejected) as err:
        check_clip(b"\x1a\x45\xdf\xa3" + b"\x00garbage" * 50, **LIMITS)
    assert (err.value.status, err.value.code) == (400, "broken_audio")


def test_an_empty_file_is_broken_audio_not_a_wrong_format():
    with pytest.raises(UploadRejected) as err:
        check_clip(b"", **LIMITS)
    assert (err.value.status, err.value.code) == (400, "broken_audio")
