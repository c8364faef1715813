"""Voice input: speech recognisers by name (``SI_ASR``), audio checks, transcript
normalisation and the recognition prompt.

``POST /api/voice`` checks the clip (``audio.check_clip``), asks the recogniser
(``Recognizer.transcribe``) with a prompt built from the catalog and the awaited
field (``prompt.recognition_prompt``), normalises the text (``normalise.transcript``)
and runs it as the citizen's message. Audio is never stored or logged.

Recognisers (``registry.RECOGNIZERS``): ``local`` (faster-whisper, offline, the
``voice`` extra), ``openai`` (any OpenAI-compatible ``/v1/audio/transcriptions``
endpoint at ``SI_ASR_BASE_URL``), ``none`` (voice input off), and ``auto``.
"""

from si_agent.voice.base import Clip, Recognizer, RecognizerUnavailable
from si_agent.voice.registry import RECOGNIZERS, create_recognizer

__all__ = ["RECOGNIZERS", "Clip", "Recognizer", "RecognizerUnavailable", "create_recognizer"]
