"""The voice benchmark: the committed test clips through the recogniser and the turn.

For every clip of tests/voice/clips.yaml (heard where it would be said: its ``setup``
messages first, in a fresh session), prints one row and then a summary:

- CER: the character error rate of the normalised transcript against the clip's text
  (both without punctuation and spaces, digits as digits);
- intent: whether the spoken turn reaches what the typed sentence reaches: the same
  business, state and fields given (a long number held for read-back counts as given),
  or the same field awaited when none was;
- seconds to transcribe the clip (the model is loaded before the clock starts);
- long numbers stored from voice without the read-back (an ID, phone or bank-card
  field stored by a spoken turn that was not a yes to a read-back): must be 0.

Targets: CER <= 15 %, intent >= 90 %, 0 stored without read-back.

Run: python scripts/bench_voice.py [--asr local] [--threads 2] [--clips DIR]
With ``--asr openai`` the recogniser is SI_ASR_BASE_URL's (SI_ASR_MODEL, SI_ASR_API_KEY).
Needs the voice extra (pip install -e '.[voice]').
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from si_agent.app import build_controller
from si_agent.config.model import MASKED_TYPES
from si_agent.config.settings import Settings
from si_agent.core.state import FieldStatus
from si_agent.flow.controller import Controller
from si_agent.voice import create_recognizer
from si_agent.voice.audio import check_clip
from si_agent.voice.normalise import transcript
from si_agent.voice.prompt import session_prompt

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "tests" / "voice" / "clips.yaml"
VOICE = "voice: "
TARGET_CER, TARGET_INTENT = 0.15, 0.90
_NOT_COUNTED = re.compile(r"[\s，。、！？,.!?：:；;“”\"'（）()-]")


@dataclass
class Reached:
    business: str | None
    state: str
    given: frozenset[str]
    awaiting: str | None
    unread: int  # long numbers stored by a spoken turn that was no yes to a read-back

    def same_intent(self, other: Reached) -> bool:
        return (self.business, self.state, self.given) == (other.business, other.state,
                                                           other.given) and \
            (bool(self.given) or self.awaiting == other.awaiting)


def edits(a: str, b: str) -> int:
    """Levenshtein distance."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def comparable(text: str) -> str:
    return _NOT_COUNTED.sub("", transcript(text))


def run(controller: Controller, user: str, setup: list[str], text: str,
        spoken: bool) -> Reached:
    for said in setup:
        controller.handle(user, said.removeprefix(VOICE), spoken=said.startswith(VOICE))
    before = controller.store.load(user)
    had = {k for k, f in before.fields.items() if f.status == FieldStatus.COLLECTED} \
        if before else set()
    answering = bool(before and before.heard)
    turn = controller.handle(user, text, spoken=spoken)
    after = controller.store.load(user)
    assert after is not None
    stored = {k for k, f in after.fields.items() if f.status == FieldStatus.COLLECTED} - had
    business = controller.catalog.get(after.business_id) if after.business_id else None
    long_numbers = {k for k in stored if business and k in business.field_keys
                    and business.field(k).type in MASKED_TYPES}
    unread = len(long_numbers) if spoken and not answering else 0
    return Reached(turn.business.id if turn.business else None, turn.state,
                   frozenset(stored | set(after.heard)), turn.awaiting, unread)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--asr", default=os.environ.get("SI_ASR", "local"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--clips", type=Path, default=MANIFEST.parent / "clips")
    parser.add_argument("--beam", type=int, default=None, help="local: beam size (default 5)")
    args = parser.parse_args(argv)
    env = {k: v for k, v in os.environ.items() if k.startswith("SI_ASR")}
    settings = Settings.from_env({**env, "SI_ASR": args.asr, "SI_ASR_THREADS": str(args.threads)})
    settings = settings.replace(business_dir=ROOT / "businesses", knowledge="none",
                                session_store="memory", data_dir=Path("/tmp/si-bench-voice"))
    recognizer = create_recognizer(settings)
    if recognizer is None:
        print("SI_ASR=none: no recogniser to measure", file=sys.stderr)
        return 2
    if args.beam is not None and hasattr(recognizer, "beam_size"):
        recognizer.beam_size = args.beam
    started = time.monotonic()
    if hasattr(recognizer, "load"):
        recognizer.load()
    load_s = time.monotonic() - started
    controller = build_controller(settings)
    clips = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))["clips"]
    total_edits = total_chars = right = unread = 0
    seconds: list[float] = []
    audio_s = 0.0
    print("| clip | said | heard | CER | intent | s |")
    print("|---|---|---|---|---|---|")
    for n, clip in enumerate(clips):
        text, setup = str(clip["text"]), [str(s) for s in clip.get("setup", [])]
        typed = run(controller, f"typed-{n}", setup, text, spoken=False)
        user = f"voice-{n}"
        for said in setup:
            controller.handle(user, said.removeprefix(VOICE), spoken=said.startswith(VOICE))
        data = (args.clips / f"{clip['id']}.wav").read_bytes()
        checked = check_clip(data, max_bytes=settings.voice_max_bytes,
                             max_seconds=settings.voice_max_seconds)
        prompt = session_prompt(controller.catalog, controller.store.load(user))
        t0 = time.monotonic()
        raw = recognizer.transcribe(checked, prompt)
        seconds.append(time.monotonic() - t0)
        audio_s += checked.seconds
        heard = transcript(raw, prompt)
        spoken = run(controller, user, [], heard or "（没有听清）", spoken=True)
        ref, hyp = comparable(text), comparable(heard)
        e = edits(ref, hyp)
        total_edits += e
        total_chars += len(ref)
        ok = typed.same_intent(spoken)
        right += ok
        unread += spoken.unread
        print(f"| {clip['id']} | {text} | {heard} | {e / max(1, len(ref)):.0%} | "
              f"{'yes' if ok else 'NO'} | {seconds[-1]:.2f} |")
    cer = total_edits / max(1, total_chars)
    intent = right / len(clips)
    print()
    print(f"recogniser: {recognizer.name} "
          f"({getattr(recognizer, 'model_name', getattr(recognizer, 'url', ''))}), "
          f"{args.threads} threads, beam {getattr(recognizer, 'beam_size', '-')}; "
          f"model load {load_s:.1f} s")
    print("| clips | CER | intent right | s per clip | audio s per clip | real-time factor "
          "| long numbers stored without read-back |")
    print("|---|---|---|---|---|---|---|")
    mean = sum(seconds) / len(seconds)
    print(f"| {len(clips)} | {cer:.1%} | {right}/{len(clips)} ({intent:.0%}) | {mean:.2f} | "
          f"{audio_s / len(clips):.2f} | {sum(seconds) / audio_s:.2f} | {unread} |")
    print(f"targets: CER <= {TARGET_CER:.0%} {'met' if cer <= TARGET_CER else 'MISSED'}; "
          f"intent >= {TARGET_INTENT:.0%} {'met' if intent >= TARGET_INTENT else 'MISSED'}; "
          f"read-back {'met' if unread == 0 else 'MISSED'}")
    return 0 if unread == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
