"""``si-agent kb ingest|search|ask`` through ``rag.cli.register``."""

from __future__ import annotations

import argparse

import pytest

from rag.cli import register
from si_agent.config.settings import Settings


@pytest.fixture
def run(tmp_path, small_corpus):
    parser = argparse.ArgumentParser(prog="si-agent")
    register(parser.add_subparsers(dest="command"))
    settings = Settings(data_dir=tmp_path / "data", kb_dir=small_corpus,
                        embed_model="hashing")

    def run(*argv: str) -> int:
        args = parser.parse_args(argv)
        return args.func(args, settings)

    return run


def test_ingest_is_incremental(run, capsys, small_corpus):
    assert run("kb", "ingest") == 0
    assert "3 added, 0 updated, 0 unchanged, 0 removed; 5 chunks embedded" in capsys.readouterr().out
    assert run("kb", "ingest") == 0
    assert "0 added, 0 updated, 3 unchanged, 0 removed; 0 chunks embedded" in capsys.readouterr().out
    assert run("kb", "ingest", "--rebuild") == 0
    assert "5 chunks embedded (rebuilt)" in capsys.readouterr().out


def test_ingest_a_given_directory_and_report_bad_documents(run, capsys, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "bad.md").write_text("没有 front matter", encoding="utf-8")
    assert run("kb", "ingest", str(other)) == 1
    assert "bad.md:1: missing YAML front matter" in capsys.readouterr().err


def test_search_prints_ranked_chunks_with_scores(run, capsys):
    assert run("kb", "search", "社保卡丢了怎么挂失", "-k", "2", "--mode", "bm25") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("1. bm25 ") and "card#000" in lines[0] and "[card_loss]" in lines[0]
    assert lines[2].startswith("2. ")


def test_ask_answers_or_says_it_has_nothing(run, capsys):
    assert run("kb", "ask", "社保卡丢了怎么挂失") == 0
    out = capsys.readouterr().out
    assert "来源：《社保卡挂失小指南》" in out and "suggested business: card_loss" in out
    assert run("kb", "ask", "今天天气怎么样") == 1


def test_search_and_ask_show_how_a_question_was_read(run, capsys):
    assert run("kb", "search", "社宝卡丢了咋整", "-k", "1") == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == "（按“社保卡丢了怎么办”检索 [咋整→怎么办] [社宝卡→社保卡]）"


def test_kb_without_a_command_prints_usage(run, capsys):
    assert run("kb") == 2
    assert "ingest" in capsys.readouterr().err
