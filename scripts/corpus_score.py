"""Replay a transcript corpus and print its pass rate per theme.

The theme is a transcript's ``theme`` key, or its file name before ``__``.

    python scripts/corpus_score.py tests/dialogues_real [--engine rules] [--failures]
                                   [--knowledge] [--data DIR]

``--knowledge`` replays with the real knowledge base (Milvus Lite, the shipped corpus
of ``rag/knowledge``) as the product runs; it is built in ``--data`` (default: a
temporary directory, about a minute on first use) and needs its own directory next
to a running server. Without it the controller has no knowledge channel.
"""

from __future__ import annotations

import argparse
import logging
import tempfile
from collections import Counter
from pathlib import Path

from si_agent.cli import demo_backend_hook
from si_agent.config.loader import load_businesses
from si_agent.config.settings import Settings
from si_agent.engine.registry import create_engine
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.knowledge import create_knowledge
from si_agent.replay import load_dialogues, replay
from si_agent.session import MemoryStore

ROOT = Path(__file__).resolve().parents[1]
# Words of a correction or a negation: a stored value that holds one took the citizen's
# frame ("改回张伟", "不是临时的") for the value. Kept here, apart from the engine's own cues.
FRAME_WORDS = ("改回", "改成", "改为", "应该是", "不对", "错了", "说错", "写错", "搞错", "不是",
               "不要", "别填", "重新填")


def framed_values(report) -> list[tuple[int, str, str]]:
    """The values a replay stored that contain correction or negation words."""
    return [(turn, key, value) for turn, key, value in report.stored
            if any(w in value for w in FRAME_WORDS)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--engine", default="rules")
    ap.add_argument("--failures", action="store_true", help="print each failure")
    ap.add_argument("--knowledge", action="store_true",
                    help="replay with the shipped knowledge base (Milvus Lite)")
    ap.add_argument("--data", type=Path, default=None,
                    help="data directory (default: a temporary one)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.ERROR)
    settings = Settings(business_dir=ROOT / "businesses", kb_dir=ROOT / "rag" / "knowledge",
                        data_dir=args.data or Path(tempfile.mkdtemp()))
    catalog = load_businesses(settings.business_dir)
    knowledge = create_knowledge(settings, catalog) if args.knowledge else None
    passed: Counter[str] = Counter()
    total: Counter[str] = Counter()
    framed: list[tuple[str, int, str, str]] = []
    with Executors(settings) as executors:
        controller = Controller(catalog, MemoryStore(), create_engine(args.engine, catalog,
                                                                      settings), executors,
                                knowledge=knowledge)
        hook = demo_backend_hook(settings)
        for source, transcript in load_dialogues(args.paths):
            theme = transcript.get("theme") or Path(source).name.split("__")[0]
            report = replay(controller, transcript, source=source, backend=hook)
            total[theme] += 1
            passed[theme] += report.passed
            framed += [(Path(source).name, *v) for v in framed_values(report)]
            if args.failures and not report.passed:
                print(f"FAIL {Path(source).name}: {report.failures[0]}")
    print(f"{'theme':<12} {'passed':>6} {'total':>6} {'rate':>6}")
    for theme in sorted(total):
        print(f"{theme:<12} {passed[theme]:>6} {total[theme]:>6} {passed[theme] / total[theme]:>6.0%}")
    all_passed, all_total = sum(passed.values()), sum(total.values())
    print(f"{'all':<12} {all_passed:>6} {all_total:>6} {all_passed / max(1, all_total):>6.0%}")
    print(f"values stored with correction or negation words: {len(framed)}")
    for name, turn, key, value in framed:
        print(f"   {name} turn {turn}: {key} = {value!r}")


if __name__ == "__main__":
    main()
