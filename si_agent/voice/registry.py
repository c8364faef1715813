"""Speech recognisers by name (``SI_ASR``): ``auto``, ``local``, ``openai``, ``none``.

``auto`` (the default) is ``openai`` when ``SI_ASR_BASE_URL`` is set, else ``local``
when the ``voice`` extra is installed, else ``none`` (voice input off: the page
shows no microphone and ``POST /api/voice`` answers 503). An unknown name raises,
listing the valid ones.
"""

from __future__ import annotations

import logging
from importlib.util import find_spec

from si_agent.config.settings import Settings
from si_agent.errors import SettingsError, UnknownBackendError
from si_agent.voice.base import Recognizer

log = logging.getLogger(__name__)

RECOGNIZERS = ("auto", "local", "openai", "none")


def create_recognizer(settings: Settings) -> Recognizer | None:
    """The recogniser ``settings.asr`` names, or None for ``none``."""
    name = settings.asr
    if name not in RECOGNIZERS:
        raise UnknownBackendError("speech recogniser", name, RECOGNIZERS)
    if name == "auto":
        from si_agent.voice import local

        name = ("openai" if settings.asr_base_url
                else "local" if settings.asr_model_dir or local.available() else "none")
        log.info("speech recogniser: %s (SI_ASR=auto)", name)
    if name == "none":
        return None
    if name == "openai":
        if not settings.asr_base_url:
            raise SettingsError("SI_ASR=openai needs SI_ASR_BASE_URL (an OpenAI-compatible "
                                "endpoint serving /audio/transcriptions)")
        if find_spec("av") is None:  # clips are decoded here to check their length
            raise SettingsError("SI_ASR=openai needs PyAV to check clips: "
                                "pip install 'si_agent[voice]'")
        from si_agent.voice.remote import RemoteTranscriber

        return RemoteTranscriber(settings.asr_base_url, model=settings.asr_model,
                                 api_key=settings.asr_api_key, timeout=settings.asr_timeout)
    from si_agent.voice.local import LocalWhisper

    return LocalWhisper(settings.asr_model_dir, threads=settings.asr_threads)
