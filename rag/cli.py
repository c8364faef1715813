"""``si-agent kb``: ingest the knowledge documents, search them, ask a question.

Wire it with ``rag.cli.register(subparsers)`` in ``si_agent.cli``; every
sub-command takes ``(args, settings)`` and returns an exit code. A missing
``rag`` extra, an unknown embedder, a bad document or an unavailable store is
printed as one ``error:`` line (exit 1).
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from pathlib import Path

from rag import build_knowledge
from rag.errors import RagError
from rag.store import MODES

Command = Callable[[argparse.Namespace, object], int]


def _reporting(command: Command) -> Command:
    @functools.wraps(command)
    def run(args: argparse.Namespace, settings) -> int:
        try:
            return command(args, settings)
        except RagError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1

    return run


def register(subparsers) -> argparse.ArgumentParser:
    """Add ``kb ingest|embed-ship|search|ask`` to the ``si-agent`` sub-command parsers."""
    kb = subparsers.add_parser(
        "kb", help="the knowledge base: ingest, search, ask",
        description="The knowledge base the assistant answers policy questions from "
                    "(docs/rag.md): embed its documents, search it, ask it.")
    kb.set_defaults(func=lambda args, settings: _usage(kb))
    sub = kb.add_subparsers(dest="kb_command")

    ing = sub.add_parser(
        "ingest", help="embed new and changed documents, delete removed ones",
        description="Bring the knowledge base in step with its directory: embed new and "
                    "changed documents (by content hash), delete removed ones.")
    ing.add_argument("directory", nargs="?", default=None,
                     help="knowledge directory (default: SI_KB_DIR or rag/knowledge)")
    ing.add_argument("--rebuild", action="store_true", help="drop the collection and embed everything")
    ing.set_defaults(func=_reporting(_ingest))

    ship = sub.add_parser(
        "embed-ship", help="refresh the vectors shipped with the corpus (_embeddings.*)",
        description="Write DIR/_embeddings.json and _embeddings.npy: the vector of every chunk "
                    "of the documents, by the configured embedder (SI_EMBED_MODEL). Vectors "
                    "still current are kept; only new and changed chunks are embedded. Run it "
                    "after editing rag/knowledge/ and commit both files.")
    ship.add_argument("directory", nargs="?", default=None,
                      help="knowledge directory (default: SI_KB_DIR or rag/knowledge)")
    ship.set_defaults(func=_reporting(_embed_ship))

    search = sub.add_parser(
        "search", help="ranked chunks with scores",
        description="Print the chunks a question finds, ranked, with their scores and the "
                    "question as rewritten (typos, dialect).")
    search.add_argument("query", help="the question")
    search.add_argument("-k", type=int, default=5, help="how many chunks")
    search.add_argument("--mode", choices=MODES, default="hybrid",
                        help="dense (embeddings), bm25 (words) or hybrid (both)")
    search.set_defaults(func=_reporting(_search))

    ask = sub.add_parser(
        "ask", help="answer a question as the assistant would",
        description="Answer a question from the knowledge base as the assistant would, "
                    "with its sources.")
    ask.add_argument("question", help="the question")
    ask.set_defaults(func=_reporting(_ask))
    return kb


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _ingest(args: argparse.Namespace, settings) -> int:
    if args.directory:
        settings = settings.replace(kb_dir=Path(args.directory))
    kb = build_knowledge(settings, build_missing=False)
    report = kb.ingest(rebuild=args.rebuild, progress=True)
    print(f"{kb.store.location}: {report.summary()}")
    return 0


def _embed_ship(args: argparse.Namespace, settings) -> int:
    from rag import shipped
    from rag.embedders import create_embedder

    directory = Path(args.directory) if args.directory else settings.kb_dir
    embedder = create_embedder(settings.embed_model)
    kept, embedded = shipped.write(directory, embedder)
    print(f"{directory / shipped.VECTORS}: {kept + embedded} chunks ({kept} kept, "
          f"{embedded} embedded) by {shipped.embedder_id(embedder)}")
    return 0


def _understood(kb, question: str) -> None:
    """Print the question as the knowledge base reads it, when that differs."""
    query = kb.understand(question)
    if query.search_text != question:
        changes = "".join(f" [{c.original}→{c.replacement}]" for c in query.corrections)
        print(f"（按“{query.search_text}”检索{changes}）")


def _search(args: argparse.Namespace, settings) -> int:
    kb = build_knowledge(settings)
    _understood(kb, args.query)
    hits = kb.search(args.query, k=args.k, mode=args.mode)
    if not hits:
        print("no results")
        return 1
    for rank, h in enumerate(hits, start=1):
        cosine = f"{h.cosine:.3f}" if h.cosine is not None else "-"
        where = f"《{h.title}》" + (f" › {h.heading}" if h.heading else "")
        tags = f" [{', '.join(h.businesses)}]" if h.businesses else ""
        print(f"{rank}. {args.mode} {h.score:.4f}  cosine {cosine}  {h.chunk_id}  {where}{tags}")
        snippet = h.text.replace("\n", " ")
        print(f"   {snippet[:120]}{'…' if len(snippet) > 120 else ''}")
    return 0


def _ask(args: argparse.Namespace, settings) -> int:
    kb = build_knowledge(settings)
    _understood(kb, args.question)
    answer = kb.answer(args.question)
    if answer is None:
        print("（知识库中没有相关内容）")
        return 1
    print(answer.text)
    if answer.suggested_business_id:
        print(f"suggested business: {answer.suggested_business_id}")
    return 0
