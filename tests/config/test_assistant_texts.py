"""The assistant's own texts: defaults, businesses/_assistant.yaml over them, and its errors."""

from __future__ import annotations

import logging
import re
import shutil
from pathlib import Path

import jsonschema
import pytest
from pydantic import ValidationError

from si_agent.config.assistant import (
    PLACEHOLDERS,
    AssistantTexts,
    check_assistant_texts,
    load_assistant_texts,
    load_schema,
)
from si_agent.config.loader import check_directory, load_businesses
from si_agent.config.settings import Settings
from si_agent.config.templates import placeholders
from si_agent.errors import ConfigError, ConfigErrors

REPO_BUSINESSES = Path(__file__).resolve().parents[2] / "businesses"


def write(directory: Path, text: str) -> Path:
    path = directory / "_assistant.yaml"
    path.write_text(text, "utf-8")
    return path


def errors_of(directory: Path) -> list[str]:
    _, errors = check_assistant_texts(directory)
    return [str(e).replace(f"{directory}/", "") for e in errors]


# --- defaults and overrides -------------------------------------------------------------------


def test_without_the_file_the_defaults_are_used(tmp_path):
    assert load_assistant_texts(tmp_path) == AssistantTexts()
    assert check_assistant_texts(tmp_path) == (AssistantTexts(), [])


def test_the_defaults(tmp_path):
    texts = AssistantTexts()
    assert texts.closing == "不客气，祝您生活愉快！还有其他社保业务需要办理，随时告诉我。"
    assert texts.why_default == "办理【{business}】需要您的{label}，用于核实身份和办理业务，信息仅用于本次办理。"
    assert texts.switch_ask.format(current="社保卡挂失", filled=2, target="养老金查询") == (
        "您正在办理【社保卡挂失】（已填写2项），要先办理【养老金查询】吗？当前业务会为您保留。")
    assert texts.handoff.format(handoff=Settings().handoff_text).startswith(
        "如需人工服务或反映问题，请联系12333社保服务热线；")
    assert "{examples}" in texts.greeting


def test_an_override_is_taken_and_the_rest_keeps_the_defaults(tmp_path):
    write(tmp_path, "# 本地话术\nclosing: 好的，再见！\nhandoff: 请拨打{handoff}（工作日9:00-17:00）。\n")
    texts = load_assistant_texts(tmp_path)
    assert texts.closing == "好的，再见！"
    assert texts.handoff == "请拨打{handoff}（工作日9:00-17:00）。"
    assert texts.model_dump(exclude={"closing", "handoff"}) == AssistantTexts().model_dump(
        exclude={"closing", "handoff"})


def test_the_shipped_file_shows_every_text_with_its_default():
    # The repository's file lists every key so staff see what they can change; editing a
    # deployment's copy overrides, changing a default means changing both.
    raw = (REPO_BUSINESSES / "_assistant.yaml").read_text("utf-8")
    assert all(re.search(rf"^{key}: ", raw, re.M) for key in AssistantTexts.model_fields)
    assert load_assistant_texts(REPO_BUSINESSES) == AssistantTexts()


def test_the_file_is_not_a_business(tmp_path):
    target = tmp_path / "businesses"
    shutil.copytree(REPO_BUSINESSES, target)
    assert (target / "_assistant.yaml").is_file()
    businesses, errors = check_directory(target)
    assert errors == [] and len(businesses) == 13 and "_assistant" not in businesses
    assert sorted(load_businesses(REPO_BUSINESSES)) == sorted(businesses)


def test_a_broken_assistant_file_does_not_break_the_businesses(tmp_path):
    target = tmp_path / "businesses"
    shutil.copytree(REPO_BUSINESSES, target)
    write(target, "greting: 你好\n")
    assert len(load_businesses(target)) == 13
    with pytest.raises(ConfigErrors):
        load_assistant_texts(target)


def test_a_directory_with_only_the_assistant_file_has_no_businesses(tmp_path):
    write(tmp_path, "closing: 再见。\n")
    _, errors = check_directory(tmp_path)
    assert [e.message for e in errors] == ["no business files (*.yaml) found"]


def test_other_underscore_files_are_skipped_with_a_warning(tmp_path, caplog):
    target = tmp_path / "businesses"
    shutil.copytree(REPO_BUSINESSES, target)
    (target / "_draft.yaml").write_text("id: draft\n", "utf-8")
    with caplog.at_level(logging.WARNING, logger="si_agent.config.loader"):
        businesses, errors = check_directory(target)
    assert errors == [] and len(businesses) == 13
    assert "_draft.yaml: skipped; files starting with _ are not businesses" in caplog.text


# --- errors, located as file:line: path: message ----------------------------------------------


def test_an_unknown_placeholder_lists_the_allowed_ones(tmp_path):
    write(tmp_path, "closing: 再见。\ngreeting: 您好，{name}！可以办理：{examples}。\n"
                    "switch_ask: 先办【{target}】吗？（{current}已填{count}项）\n")
    assert errors_of(tmp_path) == [
        "_assistant.yaml:2: greeting: unknown placeholder {name}; allowed: {examples}",
        "_assistant.yaml:3: switch_ask: unknown placeholder {count}; allowed: "
        "{current}, {filled}, {target}",
    ]


def test_a_placeholder_in_a_text_that_takes_none(tmp_path):
    write(tmp_path, "closing: 再见，{name}。\n")
    assert errors_of(tmp_path) == [
        "_assistant.yaml:1: closing: unknown placeholder {name}; this text takes no placeholders "
        "(write {{ and }} for literal braces)",
    ]


def test_unbalanced_braces(tmp_path):
    write(tmp_path, "switch_kept: 好的，继续办理【{current】。\n")
    [error] = errors_of(tmp_path)
    assert error.startswith("_assistant.yaml:1: switch_kept: invalid template: ")


def test_an_unknown_key_lists_the_valid_ones(tmp_path):
    write(tmp_path, "closing: 再见。\ngreting: 您好\n")
    [error] = errors_of(tmp_path)
    assert error.startswith("_assistant.yaml:2: greting: unknown key 'greting'; valid keys: closing, ")


def test_wrong_types_and_empty_texts(tmp_path):
    write(tmp_path, "closing:\nhandoff: 12333\nself_intro: ''\n")
    assert errors_of(tmp_path) == [
        "_assistant.yaml:1: closing: expected a string, got nothing (the value is empty)",
        '_assistant.yaml:2: handoff: expected a string, got integer 12333 (put it in quotes, e.g. "...")',
        "_assistant.yaml:3: self_intro: must not be empty",
    ]


def test_yaml_problems(tmp_path):
    write(tmp_path, "closing: 再见。\nclosing: 拜拜。\n")
    assert errors_of(tmp_path) == [
        "_assistant.yaml:2: closing: duplicate key 'closing' (first defined on line 1)",
    ]
    write(tmp_path, "# 全部使用默认话术\n")
    assert errors_of(tmp_path) == ["_assistant.yaml:1: <root>: the file is empty; expected a mapping"]


def test_the_file_must_end_in_yaml(tmp_path):
    (tmp_path / "_assistant.yml").write_text("closing: 再见。\n", "utf-8")
    texts, errors = check_assistant_texts(tmp_path)
    assert texts == AssistantTexts()
    assert [(Path(e.file).name, e.message) for e in errors] == [
        ("_assistant.yml", "the assistant texts file must be named _assistant.yaml; this file is ignored"),
    ]


def test_errors_are_config_errors(tmp_path):
    write(tmp_path, "greeting: '{name}'\n")
    with pytest.raises(ConfigErrors) as info:
        load_assistant_texts(tmp_path)
    [error] = info.value.errors
    assert isinstance(error, ConfigError) and isinstance(error, ValueError)
    assert (Path(error.file).name, error.line, error.path) == ("_assistant.yaml", 1, "greeting")


def test_the_model_refuses_unknown_placeholders_too():
    with pytest.raises(ValidationError, match=r"greeting: unknown placeholder \{name\}"):
        AssistantTexts(greeting="您好，{name}")
    with pytest.raises(ValidationError):
        AssistantTexts(closng="再见")


# --- one source of truth: model, schema and placeholder table agree ----------------------------


def test_the_schema_the_model_and_the_placeholders_name_the_same_keys():
    schema = load_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["additionalProperties"] is False and "required" not in schema
    assert list(schema["properties"]) == list(AssistantTexts.model_fields) == list(PLACEHOLDERS)


@pytest.mark.parametrize("key", list(PLACEHOLDERS))
def test_each_description_names_its_placeholders_and_the_default_uses_only_those(key):
    prop = load_schema()["properties"][key]
    assert prop["type"] == "string" and prop["minLength"] == 1
    assert set(re.findall(r"\{(\w+)\}", prop["description"])) == PLACEHOLDERS[key]
    assert set(placeholders(getattr(AssistantTexts(), key))) <= PLACEHOLDERS[key]
