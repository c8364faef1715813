"""``openai``: any OpenAI-compatible ``POST {SI_ASR_BASE_URL}/audio/transcriptions``
(FunASR, vLLM, whisper.cpp's server, faster-whisper-server, a cloud service).

The clip is sent as it came (multipart ``file``) with ``model`` (``SI_ASR_MODEL``),
``language=zh``, the prompt and ``response_format=json``; the answer's ``text`` is
the transcript. A failure after the client's retries is ``RecognizerUnavailable``.
"""

from __future__ import annotations

import logging

import httpx
from pydantic import BaseModel, ValidationError

from si_agent.voice.base import Clip, RecognizerUnavailable

log = logging.getLogger(__name__)


class _Answer(BaseModel):
    text: str


class RemoteTranscriber:
    """An OpenAI-compatible transcription endpoint; see the module docstring."""

    name = "openai"

    def __init__(self, base_url: str, *, model: str = "whisper-1", api_key: str | None = None,
                 timeout: float = 30.0, retries: int = 1) -> None:
        self.url = base_url.rstrip("/") + "/audio/transcriptions"
        self.model = model
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout, headers=headers,
                                    transport=httpx.HTTPTransport(retries=retries))

    def transcribe(self, clip: Clip, prompt: str = "") -> str:
        form = {"model": self.model, "language": "zh", "response_format": "json"}
        if prompt:
            form["prompt"] = prompt
        files = {"file": (f"voice.{clip.container}", clip.data, clip.media_type)}
        try:
            response = self._client.post(self.url, data=form, files=files)
            response.raise_for_status()
            return _Answer.model_validate_json(response.content).text.strip()
        except httpx.HTTPStatusError as exc:
            log.warning("speech endpoint answered %s", exc.response.status_code)
            raise RecognizerUnavailable(f"speech endpoint answered {exc.response.status_code}") \
                from None
        except httpx.HTTPError as exc:
            log.warning("speech endpoint unreachable: %s", type(exc).__name__)
            raise RecognizerUnavailable(f"speech endpoint unreachable: {type(exc).__name__}") \
                from None
        except ValidationError:
            log.warning("speech endpoint gave no text")
            raise RecognizerUnavailable("speech endpoint gave no text") from None
