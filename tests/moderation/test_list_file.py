"""The word list file: file:line errors, collisions with businesses, validate and start-up."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from si_agent.app import build_controller
from si_agent.config.loader import load_businesses
from si_agent.config.settings import Settings
from si_agent.errors import ConfigErrors
from si_agent.moderation.words import check_moderation, load_word_list

ROOT = Path(__file__).resolve().parents[2]


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "_moderation.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _messages(path: Path) -> list[str]:
    words, errors = load_word_list(path)
    assert words is None
    return [str(e) for e in errors]


def test_blank_and_duplicate_words_are_located(tmp_path):
    path = _write(tmp_path, """\
categories:
  - id: abuse
    label: 辱骂
    action: mask
    words:
      - 王八蛋
      - " * "
      - 王 八 蛋
  - id: more
    label: 其他
    action: flag
    words: [王八蛋]
""")
    errors = _messages(path)
    assert errors == [
        f"{path}:7: categories[0].words[1]: word ' * ' is empty once spaces and symbols are "
        "left out; remove it (词语为空，请删除)",
        f"{path}:8: categories[0].words[2]: word '王 八 蛋' is listed twice: it is '王八蛋' on "
        "line 6 once folded (case, width, Traditional/Simplified) (词语重复，请删除一处)",
        f"{path}:12: categories[1].words[0]: word '王八蛋' is listed twice: it is '王八蛋' on "
        "line 6 once folded (case, width, Traditional/Simplified) (词语重复，请删除一处)",
    ]


def test_schema_errors_name_the_line_and_the_valid_values(tmp_path):
    path = _write(tmp_path, """\
categories:
  - id: abuse
    label: 辱骂
    action: block
    words: [王八蛋]
""")
    (error,) = _messages(path)
    assert error.startswith(f"{path}:4: categories[0].action:")
    assert "mask" in error and "refuse" in error and "flag" in error


def test_a_word_that_hits_a_business_is_an_error(tmp_path):
    _write(tmp_path, """\
categories:
  - id: odd
    label: 测试
    action: refuse
    words: [挂失, 王八蛋]
""")
    catalog = load_businesses(ROOT / "businesses")
    words, errors, warnings = check_moderation(tmp_path, catalog)
    assert len(errors) == 1
    message = str(errors[0])
    assert message.startswith(f"{tmp_path / '_moderation.yaml'}:5: categories[0].words[0]: ")
    assert "'挂失'" in message and "refused" in message and "allow" in message


def test_single_characters_warn_and_a_misnamed_file_is_an_error(tmp_path):
    _write(tmp_path, "categories:\n  - {id: a, label: 测试, action: mask, words: [靠]}\n")
    words, errors, warnings = check_moderation(tmp_path, {})
    assert errors == [] and len(warnings) == 1 and "single character" in str(warnings[0])
    (tmp_path / "_moderation.yml").write_text("categories: []\n", encoding="utf-8")
    _, errors, _ = check_moderation(tmp_path, {})
    assert "must be named _moderation.yaml" in str(errors[0])


def _folder_with(tmp_path: Path, listing: str) -> Path:
    folder = tmp_path / "businesses"
    shutil.copytree(ROOT / "businesses", folder)
    (folder / "_moderation.yaml").write_text(listing, encoding="utf-8")
    return folder


def test_validate_and_the_start_refuse_a_bad_list(tmp_path):
    folder = _folder_with(tmp_path, "categories:\n  - {id: a, label: 测试, action: mask, "
                                    "words: [社保卡]}\n")
    run = subprocess.run([sys.executable, "-m", "si_agent.cli", "validate", str(folder)],
                         capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 1
    assert "_moderation.yaml:2: categories[0].words[0]: word '社保卡' is found in" in run.stdout
    settings = Settings(business_dir=folder, knowledge="none", session_store="memory",
                        data_dir=tmp_path / "data")
    with pytest.raises(ConfigErrors, match="社保卡"):
        build_controller(settings)


def test_validate_names_the_list_it_uses(tmp_path):
    run = subprocess.run([sys.executable, "-m", "si_agent.cli", "validate"], capture_output=True,
                         text=True, cwd=ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "moderation list: built-in default (" in run.stdout
    folder = _folder_with(tmp_path, "categories:\n  - {id: a, label: 测试, action: mask, "
                                    "words: [王八蛋]}\n")
    run = subprocess.run([sys.executable, "-m", "si_agent.cli", "validate", str(folder)],
                         capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0 and "moderation list: _moderation.yaml (1 words)" in run.stdout
