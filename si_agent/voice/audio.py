"""Checking a voice clip before anything hears it: size, container, length.

Cheap checks first: the byte count, then the container from its first bytes
(WAV, WebM/Matroska as the browser's MediaRecorder writes it, Ogg, MP3, MP4/M4A);
only then is the clip decoded (PyAV, from the ``voice`` extra) to 16 kHz mono, which
gives its true length (a MediaRecorder WebM declares none) and the samples a local
recogniser reads. A refused clip raises ``UploadRejected`` with a Chinese message.
"""

from __future__ import annotations

import io
import logging

from si_agent.errors import UploadRejected
from si_agent.voice.base import Clip

log = logging.getLogger(__name__)

SAMPLE_RATE = 16000  # what Whisper hears
# Citizen-facing texts of a refused clip (the API's error table refers to them).
TOO_LARGE = "语音太大了，请录制不超过{mb}MB的语音。"
TOO_LONG = "语音太长了，请在{seconds}秒内说完，或分几次说。"
NOT_AUDIO = "只能发送 WebM、Ogg、WAV、MP3 或 M4A 格式的语音。"
BROKEN_AUDIO = "语音文件已损坏或没有声音，请重新录制。"
NO_SPEECH = "没有听清您说的话，请靠近麦克风再说一次，或直接输入文字。"
UNAVAILABLE = "语音识别暂时不可用，请直接输入文字。"
VOICE_OFF = "本服务暂未开通语音输入，请直接输入文字。"


def sniff(data: bytes) -> str | None:
    """The container named by the clip's first bytes, or None."""
    head = data[:12]
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return "wav"
    if head[:4] == b"\x1a\x45\xdf\xa3":
        return "webm"
    if head[:4] == b"OggS":
        return "ogg"
    if head[4:8] == b"ftyp":
        return "m4a"
    if head[:3] == b"ID3" or (len(head) > 1 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0):
        return "mp3"
    return None


def check_clip(data: bytes, *, max_bytes: int, max_seconds: float) -> Clip:
    """The clip, checked and decoded; ``UploadRejected`` (413, 415, 400) if refused."""
    limits = {"mb": max(1, max_bytes // 2**20), "seconds": int(max_seconds)}
    if len(data) > max_bytes:
        raise UploadRejected(413, "voice_too_large", TOO_LARGE.format(**limits))
    if not data:  # an empty file: a recording that broke off, not a wrong format
        raise UploadRejected(400, "broken_audio", BROKEN_AUDIO)
    container = sniff(data)
    if container is None:
        raise UploadRejected(415, "not_audio", NOT_AUDIO)
    samples = _decode(data, max_seconds)
    seconds = len(samples) / SAMPLE_RATE
    if seconds > max_seconds:
        raise UploadRejected(413, "voice_too_long", TOO_LONG.format(**limits))
    if seconds < 0.1:
        raise UploadRejected(400, "broken_audio", BROKEN_AUDIO)
    return Clip(data=data, container=container, seconds=seconds, samples=samples)


def _decode(data: bytes, max_seconds: float):
    """16 kHz mono float32 samples; stops a little past ``max_seconds`` (the clip is
    refused then: no need to decode an hour)."""
    try:
        import av
        import numpy as np
    except ImportError as exc:  # pragma: no cover - the server checks this at start
        raise RuntimeError("voice input needs the voice extra: pip install 'si_agent[voice]'") \
            from exc
    limit = int((max_seconds + 1) * SAMPLE_RATE)
    chunks: list = []
    got = 0
    try:
        with av.open(io.BytesIO(data), mode="r", metadata_errors="ignore") as container:
            if not container.streams.audio:
                raise UploadRejected(400, "broken_audio", BROKEN_AUDIO)
            resampler = av.AudioResampler(format="s16", layout="mono", rate=SAMPLE_RATE)
            for frame in container.decode(audio=0):
                for out in resampler.resample(frame):
                    chunk = out.to_ndarray().reshape(-1)
                    chunks.append(chunk)
                    got += len(chunk)
                if got > limit:
                    break
            else:
                for out in resampler.resample(None):
                    chunks.append(out.to_ndarray().reshape(-1))
    except av.error.FFmpegError as exc:
        log.info("voice clip refused: %s", type(exc).__name__)  # never the audio
        raise UploadRejected(400, "broken_audio", BROKEN_AUDIO) from None
    if not chunks:
        raise UploadRejected(400, "broken_audio", BROKEN_AUDIO)
    return np.concatenate(chunks).astype(np.float32) / 32768.0
