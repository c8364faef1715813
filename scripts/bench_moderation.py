"""Benchmark the moderation word list: cost per message, and false positives on corpora.

Two tables:

- **false positives**: every citizen message of the project's corpora (all transcript
  folders ``tests/dialogues*``, the public question corpora, the RAG question sets) run
  through the input check, and every text the assistant says from files (the knowledge
  base's paragraphs, the business YAML's texts, ``si_agent.replies``, the assistant
  texts) through the output check, with the default list (or ``--list``): texts that
  got any hit. None is a false positive the default list may have: it must be 0.
- **cost**: microseconds of thread CPU per message (median and p99 over all corpus
  messages, and over the assistant's texts as replies, best of ``--repeat``), for the
  default list and for ``--words`` synthetic words (random 2-4
  character words drawn from the characters of the corpora, seeded), and the time to
  build the automaton.

    PYTHONPATH=. python scripts/bench_moderation.py [--words 10000] [--repeat 3]
        [--list FILE] [--show]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from si_agent.config.assistant import AssistantTexts  # noqa: E402
from si_agent.moderation.model import Action  # noqa: E402
from si_agent.moderation.words import (  # noqa: E402
    Entry,
    WordList,
    WordListModerator,
    fold_word,
    list_path,
    load_word_list,
)


def citizen_messages(root: Path = ROOT) -> dict[str, list[str]]:
    """Every citizen message of the corpora, by corpus folder or file."""
    out: dict[str, list[str]] = {}
    for folder in sorted(p for p in (root / "tests").glob("dialogues*") if p.is_dir()):
        texts = []
        for path in sorted(folder.rglob("*.yaml")):
            data = yaml.safe_load(path.read_text("utf-8"))
            for dialogue in data if isinstance(data, list) else [data]:
                if isinstance(dialogue, dict):
                    texts += [str(t["user"]) for t in dialogue.get("turns") or []
                              if isinstance(t, dict) and "user" in t]
        out[folder.name] = texts
    for name in ("corpus_public", "corpus_public_holdout"):
        items = yaml.safe_load((root / "tests" / name / "questions.yaml").read_text("utf-8"))
        out[name] = [str(i["q"]) for i in items]
    qa = yaml.safe_load((root / "tests" / "rag" / "qa.yaml").read_text("utf-8"))
    out["rag/qa"] = [q["q"] for q in qa["questions"]] + list(qa.get("unrelated") or [])
    real = yaml.safe_load((root / "tests" / "rag" / "qa_real.yaml").read_text("utf-8"))
    out["rag/qa_real"] = [q["q"] for q in real["questions"]]
    return out


def assistant_texts(root: Path = ROOT) -> dict[str, list[str]]:
    """What the assistant says from files: knowledge paragraphs, business texts, replies."""
    from si_agent import replies

    kb = [para for path in sorted((root / "rag" / "knowledge").glob("*.md"))
          for para in path.read_text("utf-8").split("\n\n") if para.strip()]
    business = [text for path in sorted((root / "businesses").glob("*.yaml"))
                for text in _strings(yaml.safe_load(path.read_text("utf-8")))]
    own = [v for k, v in vars(replies).items() if k.isupper() and isinstance(v, str)]
    own += list(AssistantTexts().model_dump().values())
    return {"rag/knowledge": kb, "businesses": business, "replies+assistant": own}


def _strings(node) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


def false_positives(moderator: WordListModerator) -> list[tuple[str, str, int, list[str]]]:
    """(corpus, where, texts, [each text with a hit and its words])."""
    rows = []
    for where, corpora in (("input", citizen_messages()), ("output", assistant_texts())):
        for name, texts in corpora.items():
            hits = []
            for text in texts:
                verdict = moderator.check(text, where)  # type: ignore[arg-type]
                if verdict.hits:
                    hits.append(f"{text[:40]!r}: {', '.join(h.word for h in verdict.hits)}")
            rows.append((name, where, len(texts), hits))
    return rows


def synthetic(words: int, seed: int = 7) -> WordList:
    chars = sorted({ch for texts in citizen_messages().values() for t in texts for ch in t
                    if "\u4e00" <= ch <= "\u9fff"})
    rng = random.Random(seed)
    seen: set[str] = set()
    entries = []
    while len(entries) < words:
        word = "".join(rng.choice(chars) for _ in range(rng.randint(2, 4)))
        if word in seen:
            continue
        seen.add(word)
        entries.append(Entry(word=word, folded=fold_word(word), category="synthetic",
                             label="synthetic", action=Action.MASK, where=("input", "output")))
    return WordList(entries=tuple(entries), path="<synthetic>")


def cost(moderator: WordListModerator, texts: list[str], repeat: int,
         where: str = "input") -> tuple[float, float]:
    best: list[float] | None = None
    for _ in range(repeat):
        times = []
        for text in texts:
            start = time.thread_time()
            moderator.check(text, where)  # type: ignore[arg-type]
            times.append((time.thread_time() - start) * 1e6)
        if best is None or statistics.median(times) < statistics.median(best):
            best = times
    assert best is not None
    best.sort()
    return statistics.median(best), best[int(len(best) * 0.99) - 1]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--words", type=int, default=10000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--list", type=Path, default=None, help="a word list (default: the packaged one)")
    p.add_argument("--show", action="store_true", help="print every text with a hit")
    args = p.parse_args(argv)
    words, errors = load_word_list(args.list or list_path(ROOT / "businesses"))
    if words is None:
        for e in errors:
            print(e)
        return 1
    default = WordListModerator(words)
    print(f"list: {words.path} ({len(words.entries)} words and variants)\n")
    print("| corpus | checked as | texts | texts with a hit |\n|---|---|---:|---:|")
    rows = false_positives(default)
    for name, where, n, hits in rows:
        print(f"| {name} | {where} | {n} | {len(hits)} |")
    total = sum(len(h) for *_, h in rows)
    print(f"| **all** | | {sum(r[2] for r in rows)} | **{total}** |\n")
    if args.show:
        for name, where, _, hits in rows:
            for h in hits:
                print(f"  {name} ({where}): {h}")
    messages = [t for texts in citizen_messages().values() for t in texts]
    said = [t for texts in assistant_texts().values() for t in texts]
    print(f"thread CPU per text: {len(messages)} citizen messages (input check, median "
          f"{statistics.median(len(m) for m in messages):.0f} characters) and {len(said)} "
          f"assistant texts (output check, median {statistics.median(len(m) for m in said):.0f} "
          f"characters), best of {args.repeat}\n")
    print("| list | words | build ms | messages median µs | p99 µs | replies median µs "
          "| p99 µs |\n|---|---:|---:|---:|---:|---:|---:|")
    for label, word_list in (("default", words), ("synthetic", synthetic(args.words))):
        start = time.perf_counter()
        moderator = WordListModerator(word_list)
        build = (time.perf_counter() - start) * 1000
        med, p99 = cost(moderator, messages, args.repeat)
        out_med, out_p99 = cost(moderator, said, args.repeat, "output")
        print(f"| {label} | {len(word_list.entries)} | {build:.1f} | {med:.1f} | {p99:.1f} "
              f"| {out_med:.1f} | {out_p99:.1f} |")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
