"""Benchmark the ID-card reader on synthetic, perturbed cards; print a markdown table.

Each card gets a random phone-photo distortion (perspective, rotation ±5°,
brightness ±30 %, sometimes a blur) and is saved as JPEG at quality 50. Reports
the exact-match rate of every field, the refusals by kind, and the time per photo.

Usage: python scripts/bench_photo_ocr.py [--cards 200] [--seed 7]
Needs the ``ocr`` extra and fonts-noto-cjk.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections import Counter

from si_agent.photo.idcard import read_id_card
from si_agent.testing import cards

FIELDS = ("name", "sex", "ethnicity", "birth", "address", "id_number")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    read_id_card(cards.encode(cards.portrait_photo(cards.random_card(rng))))  # load the engine
    hits: Counter[str] = Counter()
    problems: Counter[str] = Counter()
    times: list[float] = []
    for _ in range(args.cards):
        card = cards.random_card(rng)
        photo = cards.encode(cards.perturb(cards.portrait_photo(card), rng), "JPEG", quality=50)
        started = time.perf_counter()
        reading = read_id_card(photo)
        times.append((time.perf_counter() - started) * 1000)
        if reading.problem:
            problems[reading.problem.value] += 1
        expected = {"name": card.name, "sex": card.sex, "ethnicity": card.ethnicity,
                    "birth": card.birth, "address": card.address, "id_number": card.id_number}
        for field in FIELDS:
            hits[field] += getattr(reading, field) == expected[field]

    n = args.cards
    print(f"{n} cards, seed {args.seed}: perspective, rotation ±5°, brightness ±30%, "
          "blur (half), JPEG quality 50\n")
    print("| field | exact |")
    print("|---|---|")
    for field in FIELDS:
        print(f"| {field} | {hits[field] / n:.1%} |")
    print(f"| all fields, accepted | {(n - sum(problems.values())) / n:.1%} |")
    print()
    times.sort()
    print("| ms per photo | mean | p50 | p95 | max |")
    print("|---|---|---|---|---|")
    print(f"| read_id_card | {statistics.mean(times):.0f} | {times[n // 2]:.0f} | "
          f"{times[int(n * 0.95)]:.0f} | {times[-1]:.0f} |")
    if problems:
        print("\nrefused: " + ", ".join(f"{k} {v}" for k, v in problems.most_common()))


if __name__ == "__main__":
    main()
