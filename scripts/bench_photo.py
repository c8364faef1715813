"""The photo-step benchmark: ID-card OCR, face verification, and the two chained.

Prints markdown tables:

1. OCR (``bench_photo_ocr.py``): the exact-match rate of every field read by
   ``read_id_card`` from ``--cards`` synthetic cards, each a phone photo with random
   perspective, rotation ±5°, brightness ±30 %, blur and JPEG quality 50; ms per photo.
2. Face (``bench_photo_face.py``): TAR and FAR of ``si_agent.photo.face.compare``
   over same- and different-person pairs of augmented photos of the astronaut and
   Grace Hopper, plus LFW impostors; ms per comparison.
3. The face step as it runs: a card photo (perturbed as in 1) carrying one of the
   two people's head photo is read by ``read_id_card``; the portrait it cuts out is
   the reference, and every augmented photo of the same and of the other person is
   compared with it as the selfie. TAR, FAR, refusals, ms per comparison and per OCR.
4. Targets: name and id_number exact >= 98 %, FAR 0 on every face row, OCR mean
   under 1500 ms.

The same-person pairs come from one source photo per person (all the offline
images there are), so TAR here is an upper bound; FAR is the number that matters.

Run: python scripts/bench_photo.py [--cards 200] [--seed 7]
Needs ``pip install -e '.[test]'`` and fonts-noto-cjk (``apt-get install fonts-noto-cjk``).
Takes a few minutes (about 0.6 s per card).
"""

from __future__ import annotations

import argparse
import random

import bench_photo_face as face_bench
import bench_photo_ocr as ocr_bench

from si_agent.testing import cards, faces

CARDS_PER_PERSON = 5
HEADS = {"astronaut": faces.astronaut_head, "hopper": faces.hopper_head}
CARD_ROW = "card portrait vs selfie"
TARGET_EXACT = 0.98
TARGET_OCR_MS = 1500


def card_vs_selfie(seed: int) -> tuple[dict, list[float], int]:
    """The ID-card step then the face step: (``face_bench.run`` result, ms per OCR,
    cards not read). A card that is not read refuses all its comparisons."""
    rng = random.Random(seed)
    selfies = face_bench.variants()
    pairs: list[face_bench.Pair] = []
    times: list[float] = []
    unread = 0
    for person, head in HEADS.items():
        for _ in range(CARDS_PER_PERSON):
            photo = ocr_bench.card_photo(cards.random_card(rng), rng, face=head())
            reading, ms = ocr_bench.timed_read(photo)
            times.append(ms)
            unread += not reading.ok
            portrait = reading.portrait if reading.ok and reading.portrait else b""
            pairs += [(selfie, portrait, other == person)
                      for other, photos in selfies.items() for selfie in photos]
    return face_bench.run(pairs), times, unread


def targets(ocr: ocr_bench.OcrResult, face_rows: list[tuple[str, dict]]) -> str:
    checks = [(f"{name} exact >= {TARGET_EXACT:.0%}", f"{ocr.exact(name):.1%}",
               ocr.exact(name) >= TARGET_EXACT) for name in ("name", "id_number")]
    checks += [(f"FAR = 0: {label}", f"{r['far']:.3f} ({r['refused']} of {r['same'] + r['diff']} "
                "pairs refused)", r["far"] == 0) for label, r in face_rows]
    checks.append((f"OCR mean < {TARGET_OCR_MS} ms", f"{ocr.mean_ms:.0f} ms",
                   ocr.mean_ms < TARGET_OCR_MS))
    lines = ["| target | measured | pass |", "|---|---|---|"]
    lines += [f"| {target} | {value} | {'PASS' if ok else 'FAIL'} |" for target, value, ok in checks]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    ocr = ocr_bench.measure(args.cards, args.seed)
    print("## ID-card OCR\n\n" + ocr_bench.table(ocr) + "\n", flush=True)
    face_rows = face_bench.measure()
    print("## Face verification\n\n" + face_bench.table(face_rows) + "\n", flush=True)

    result, times, unread = card_vs_selfie(args.seed)
    n_cards = len(times)
    print(f"## Card portrait vs selfie (id_card_ocr, then face_match)\n\n"
          f"{n_cards} cards ({CARDS_PER_PERSON} per person, {ocr_bench.PERTURBATIONS}), "
          f"{n_cards - unread} read; each card's portrait vs every augmented photo of "
          f"both people as the selfie.\n\n"
          f"{face_bench.HEADER}\n{face_bench.row(CARD_ROW, result)}\n\n"
          f"{ocr_bench.MS_HEADER}\n{ocr_bench.ms_row('read_id_card, card with a face', times)}\n")
    face_rows.append((CARD_ROW, result))
    print("## Targets\n\n" + targets(ocr, face_rows))


if __name__ == "__main__":
    main()
