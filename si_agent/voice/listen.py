"""From a clip to the text of a spoken message, as the API and the terminal chat hear it.

``listen`` checks the clip (``audio.check_clip``), builds the prompt for the session
(``prompt.session_prompt``), asks the recogniser and normalises what it heard
(``normalise.transcript``). It raises ``UploadRejected`` for a refused clip and
``RecognizerUnavailable`` when the recogniser fails; an empty text means nothing was
heard. The audio is never kept and never logged; only its length is.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping

from si_agent.config.model import Business
from si_agent.session.model import Session
from si_agent.voice.audio import check_clip
from si_agent.voice.base import Recognizer
from si_agent.voice.normalise import transcript
from si_agent.voice.prompt import session_prompt

log = logging.getLogger(__name__)


def listen(recognizer: Recognizer, data: bytes, catalog: Mapping[str, Business],
           session: Session | None, *, max_bytes: int, max_seconds: float) -> str:
    """The normalised transcript of ``data`` sent in ``session`` ("" if nothing heard)."""
    clip = check_clip(data, max_bytes=max_bytes, max_seconds=max_seconds)
    prompt = session_prompt(catalog, session)
    started = time.monotonic()
    heard = recognizer.transcribe(clip, prompt)
    # Never the words: they are personal.
    log.info("voice clip of %.1f s transcribed by %s in %.2f s", clip.seconds, recognizer.name,
             time.monotonic() - started)
    return transcript(heard, prompt)
