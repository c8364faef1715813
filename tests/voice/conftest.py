"""Clips for the voice tests: WAV made with numpy, other containers encoded with PyAV."""

from __future__ import annotations

import io
import wave
from pathlib import Path

import pytest

CLIPS = Path(__file__).resolve().parent / "clips"


def wav(seconds: float = 1.0, rate: int = 16000, tone: float = 440.0) -> bytes:
    """A mono 16-bit WAV of a tone (enough to decode; nothing said)."""
    np = pytest.importorskip("numpy")
    t = np.arange(int(seconds * rate)) / rate
    pcm = (0.3 * np.sin(2 * np.pi * tone * t) * 32767).astype(np.int16)
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())
    return out.getvalue()


def encode(data: bytes, container: str, codec: str) -> bytes:
    """``data`` (a WAV) re-encoded, as a browser or a phone would send it."""
    av = pytest.importorskip("av", reason="needs the voice extra (PyAV)")
    source = av.open(io.BytesIO(data))
    out = io.BytesIO()
    target = av.open(out, mode="w", format=container)
    rate = 48000 if codec == "libopus" else 16000
    stream = target.add_stream(codec, rate=rate)
    stream.layout = "mono"
    resampler = av.AudioResampler(format=stream.format.name if stream.format else "s16",
                                  layout="mono", rate=rate)
    for frame in source.decode(audio=0):
        for f in resampler.resample(frame):
            target.mux(stream.encode(f))
    for f in resampler.resample(None):
        target.mux(stream.encode(f))
    target.mux(stream.encode(None))
    target.close()
    return out.getvalue()


def clip_bytes(clip_id: str) -> bytes:
    return (CLIPS / f"{clip_id}.wav").read_bytes()
