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
from dataclasses import dataclass, field

from PIL import Image

from si_agent.photo.idcard import CardReading, read_id_card
from si_agent.testing import cards

FIELDS = ("name", "sex", "ethnicity", "birth", "address", "id_number")
PERTURBATIONS = "perspective, rotation ±5°, brightness ±30%, blur (half), JPEG quality 50"
MS_HEADER = "| ms per photo | mean | p50 | p95 | max |\n|---|---|---|---|---|"


@dataclass
class OcrResult:
    cards: int
    seed: int
    hits: Counter[str] = field(default_factory=Counter)
    problems: Counter[str] = field(default_factory=Counter)
    times: list[float] = field(default_factory=list)

    def exact(self, name: str) -> float:
        return self.hits[name] / self.cards

    @property
    def mean_ms(self) -> float:
        return statistics.mean(self.times)


def card_photo(card: cards.Card, rng: random.Random, face: Image.Image | None = None) -> bytes:
    """A perturbed phone photo of the card's portrait side, as JPEG quality 50."""
    return cards.encode(cards.perturb(cards.portrait_photo(card, face), rng), "JPEG", quality=50)


def timed_read(photo: bytes) -> tuple[CardReading, float]:
    """``read_id_card(photo)`` and the milliseconds it took."""
    started = time.perf_counter()
    reading = read_id_card(photo)
    return reading, (time.perf_counter() - started) * 1000


def ms_row(label: str, times: list[float]) -> str:
    """One row under ``MS_HEADER``."""
    times = sorted(times)
    n = len(times)
    return (f"| {label} | {statistics.mean(times):.0f} | {times[n // 2]:.0f} | "
            f"{times[int(n * 0.95)]:.0f} | {times[-1]:.0f} |")


def measure(n_cards: int = 200, seed: int = 7) -> OcrResult:
    """Read ``n_cards`` random perturbed cards; count exact fields, refusals and times."""
    rng = random.Random(seed)
    read_id_card(cards.encode(cards.portrait_photo(cards.random_card(rng))))  # load the engine
    result = OcrResult(n_cards, seed)
    for _ in range(n_cards):
        card = cards.random_card(rng)
        reading, ms = timed_read(card_photo(card, rng))
        result.times.append(ms)
        if reading.problem:
            result.problems[reading.problem.value] += 1
        for name in FIELDS:
            result.hits[name] += getattr(reading, name) == getattr(card, name)
    return result


def table(result: OcrResult) -> str:
    n = result.cards
    lines = [f"{n} cards, seed {result.seed}: {PERTURBATIONS}", "",
             "| field | exact |", "|---|---|"]
    lines += [f"| {name} | {result.exact(name):.1%} |" for name in FIELDS]
    lines += [f"| all fields, accepted | {(n - sum(result.problems.values())) / n:.1%} |", "",
              MS_HEADER, ms_row("read_id_card", result.times)]
    if result.problems:
        lines += ["", "refused: " + ", ".join(f"{k} {v}" for k, v in result.problems.most_common())]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    print(table(measure(args.cards, args.seed)))


if __name__ == "__main__":
    main()
