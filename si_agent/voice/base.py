"""What every speech recogniser offers: ``transcribe(clip, prompt) -> text``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from si_agent.errors import RuntimeFlowError


@dataclass(frozen=True)
class Clip:
    """A checked audio clip: the bytes as sent, their container and length.

    ``samples`` is the clip decoded to 16 kHz mono float32 (a numpy array) when it
    was decoded to be checked; a local recogniser uses it rather than decode again.
    """

    data: bytes = field(repr=False)
    container: str  # wav, webm, ogg, mp3, m4a
    seconds: float
    samples: Any = field(default=None, repr=False, compare=False)

    @property
    def media_type(self) -> str:
        return MEDIA_TYPES[self.container]


MEDIA_TYPES = {"wav": "audio/wav", "webm": "audio/webm", "ogg": "audio/ogg",
               "mp3": "audio/mpeg", "m4a": "audio/mp4"}


@runtime_checkable
class Recognizer(Protocol):
    """A speech recogniser: the text said in ``clip``, helped by ``prompt`` (words
    likely to be said: business names, the awaited field's label)."""

    name: str

    def transcribe(self, clip: Clip, prompt: str = "") -> str: ...


class RecognizerUnavailable(RuntimeFlowError):
    """The recogniser could not be reached or failed (the citizen is asked to type)."""
