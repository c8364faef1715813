"""Broken copies of the business files give precise ``file:line: path: message`` errors."""

from __future__ import annotations

import shutil

import pytest

from si_agent.config.loader import check_directory, load_businesses
from si_agent.config.model import Business
from si_agent.errors import ConfigError, ConfigErrors
from si_agent.executor import HANDLERS

FIELD_TYPES = ("idcard, phone, year, date, integer, number, enum, city, name, bank_card, text, "
               "multi_enum, bucket")


def test_the_real_directory_loads(copy):
    businesses = load_businesses(copy.dir)
    assert len(businesses) == 13
    assert list(businesses) == sorted(businesses)  # ordered by file name = id
    for business_id, business in businesses.items():
        assert isinstance(business, Business)
        assert business.source == str(copy.dir / f"{business_id}.yaml")


def test_check_directory_reports_nothing_for_the_real_directory(copy):
    businesses, errors = check_directory(copy.dir)
    assert errors == []
    assert len(businesses) == 13


# --- step 1: YAML ---------------------------------------------------------------------


def test_yaml_syntax_error(copy):
    copy.edit("social_transfer.yaml", "    label: 转出城市\n", "    label: 转出城市: 上海\n")
    assert copy.errors() == [
        "social_transfer.yaml:9: <root>: YAML syntax error: mapping values are not allowed here",
    ]


def test_duplicate_yaml_key(copy):
    copy.edit("social_transfer.yaml", "    type: city\n    prompt: 请问您要从",
              "    type: city\n    label: 城市\n    prompt: 请问您要从")
    assert copy.errors() == [
        "social_transfer.yaml:11: fields[0].label: duplicate key 'label' (first defined on line 9)",
    ]


def test_on_and_yes_stay_strings(copy):
    copy.edit("social_transfer.yaml", "    example: 杭州\n", "    example: on\n")
    copy.edit("social_transfer.yaml", "转移接续, 关系转移]", "转移接续, 关系转移, yes, no, off]")
    business = load_businesses(copy.dir)["social_transfer"]
    assert business.fields[0].example == "on"
    assert business.keywords[-3:] == ("yes", "no", "off")


def test_yes_is_not_a_boolean(copy):
    copy.edit("social_transfer.yaml", "require_confirm: true\n", "require_confirm: yes\n")
    assert copy.errors() == [
        "social_transfer.yaml:43: require_confirm: expected a boolean (true or false), got string 'yes'",
    ]


def test_empty_file(copy):
    (copy.dir / "card_loss.yaml").write_text("# nothing yet\n", "utf-8")
    assert copy.errors() == ["card_loss.yaml:1: <root>: the file is empty; expected a mapping"]


# --- step 2: JSON Schema --------------------------------------------------------------


def test_missing_required_key_in_a_field(copy):
    copy.edit("social_transfer.yaml", "    label: 转出城市\n    type: city\n", "    label: 转出城市\n")
    assert copy.errors() == [
        "social_transfer.yaml:8: fields[0]: missing required key 'type'",
    ]


def test_missing_required_key_at_the_root_and_in_api(copy):
    copy.edit("social_transfer.yaml", "name: 社保关系转移\n", "")
    copy.edit("social_transfer.yaml", "  kind: http\n", "")
    assert copy.errors() == [
        "social_transfer.yaml:2: <root>: missing required key 'name'",
        "social_transfer.yaml:48: api: missing required key 'kind'",
    ]


def test_unknown_field_type_lists_the_valid_ones(copy):
    copy.edit("social_transfer.yaml", "    label: 转入城市\n    type: city\n", "    label: 转入城市\n    type: town\n")
    assert copy.errors() == [
        f"social_transfer.yaml:18: fields[1].type: unknown field type 'town'; valid types: {FIELD_TYPES}",
    ]


def test_unknown_key_points_at_the_key(copy):
    copy.edit("progress_query.yaml", "    validate: '", "    valdate: '")
    [error] = copy.errors()
    assert error.startswith("progress_query.yaml:12: fields[0].valdate: unknown key 'valdate'; valid keys: ")
    assert "validate" in error


def test_number_where_a_string_is_expected_suggests_quotes(copy):
    copy.edit("social_transfer.yaml", "    example: 杭州\n", "    example: 330100\n")
    assert copy.errors() == [
        'social_transfer.yaml:15: fields[0].example: expected a string, got integer 330100 (put it in quotes, e.g. "...")',
    ]


def test_unknown_check_operator(copy):
    copy.edit("social_transfer.yaml", '    op: "!="\n', '    op: "<>"\n')
    assert copy.errors() == [
        "social_transfer.yaml:40: checks[0].op: '<>' is not allowed; valid values: ==, !=, <, <=, >, >=",
    ]


# --- step 3: meaning checks -----------------------------------------------------------


def test_bad_regex(copy):
    copy.edit("progress_query.yaml", r"'^SI\d{14}$'", r"'^SI(\d{14}$'")
    [error] = copy.errors()
    assert error.startswith(
        "progress_query.yaml:12: fields[0].validate: invalid regular expression '^SI(\\\\d{14}$': "
        "missing ), unterminated subpattern"
    )


def test_a_regex_that_backtracks_without_end_is_refused(copy):
    copy.edit("progress_query.yaml", r"'^SI\d{14}$'", r"'^(\d|\d\d)+$'")
    [error] = copy.errors()
    assert error.startswith("progress_query.yaml:12: fields[0].validate: regular expression ")
    assert "takes too long on an answer like '1111" in error, error
    assert "(a+)+" in error and "嵌套重复" in error


def test_duplicate_field_key(copy):
    copy.edit("social_transfer.yaml", "  - key: name\n", "  - key: id_number\n")
    assert copy.errors() == [
        "social_transfer.yaml:31: fields[3].key: duplicate field key 'id_number'; first used at fields[2]",
    ]


def test_duplicate_business_id_across_files(copy):
    shutil.copy(copy.dir / "social_transfer.yaml", copy.dir / "social_transfer_copy.yaml")
    businesses, errors = check_directory(copy.dir)
    assert [str(e).replace(f"{copy.dir}/", "") for e in errors] == [
        "social_transfer_copy.yaml:2: id: business id 'social_transfer' must equal the file name "
        "'social_transfer_copy'",
        "social_transfer_copy.yaml:2: id: duplicate business id 'social_transfer'; also declared in "
        "social_transfer.yaml:2; give each business its own id, equal to its file name "
        "(业务 id 重复：每个业务的 id 必须不同，并与文件名一致)",
    ]
    assert businesses["social_transfer"].source == str(copy.dir / "social_transfer.yaml")


def test_id_must_equal_the_file_stem(copy):
    copy.edit("card_loss.yaml", "id: card_loss\n", "id: card_lost\n")
    assert copy.errors() == [
        "card_loss.yaml:2: id: business id 'card_lost' must equal the file name 'card_loss'",
    ]


def test_check_referencing_an_unknown_field(copy):
    copy.edit("social_transfer.yaml", "    right: from_city\n", "    right: origin_city\n")
    assert copy.errors() == [
        "social_transfer.yaml:41: checks[0].right: unknown field 'origin_city'; "
        "fields of this business: from_city, to_city, id_number, name",
    ]


def test_check_reask_field_must_exist(copy):
    copy.edit("social_transfer.yaml", "    right: from_city\n", "    right: from_city\n    field: city\n")
    assert copy.errors() == [
        "social_transfer.yaml:42: checks[0].field: unknown field 'city'; "
        "fields of this business: from_city, to_city, id_number, name",
    ]


def test_check_comparing_incompatible_types(copy):
    copy.edit("insurance_record.yaml", "    right: start_year\n", "    right: id_number\n")
    assert copy.errors() == [
        "insurance_record.yaml:37: checks[0].right: cannot compare end_year (year) with id_number (idcard)",
    ]


def test_ordering_check_needs_numbers_or_dates(copy):
    copy.edit("social_transfer.yaml", '    op: "!="\n', '    op: ">"\n')
    assert copy.errors() == [
        "social_transfer.yaml:40: checks[0].op: '>' needs numbers, years or dates; to_city is city",
    ]


def test_ambiguous_alias(copy):
    copy.edit("card_apply.yaml", "aliases: [中行]", "aliases: [中行, 工行]")
    assert copy.errors() == [
        "card_apply.yaml:42: fields[3].options[2].aliases[1]: '工行' of option '中国银行' also names "
        "option '中国工商银行'; each value and alias must name one option",
    ]


def test_aliases_are_compared_after_nfkc_and_case_folding(copy):
    copy.edit("flexible_employment.yaml", '一倍, "100", "1.0"]', '一倍, "100", "1.0", "６０"]')
    assert copy.errors() == [
        "flexible_employment.yaml:57: fields[4].options[1].aliases[6]: '６０' of option '100%' also "
        "names option '60%'; each value and alias must name one option",
    ]


def test_options_on_a_non_enum_field(copy):
    copy.edit("card_apply.yaml", "    label: 合作银行\n    type: enum\n", "    label: 合作银行\n    type: text\n")
    assert copy.errors() == [
        "card_apply.yaml:36: fields[3].options: options are only allowed on enum and multi_enum fields, not text",
    ]


def test_enum_field_without_options(copy):
    copy.edit("pension_query.yaml", "    type: idcard\n", "    type: enum\n")
    assert copy.errors() == [
        "pension_query.yaml:8: fields[0].options: an enum field needs at least one option",
    ]


def test_min_greater_than_max(copy):
    copy.edit("pension_estimate.yaml", "    min: 50\n    max: 70\n", "    min: 70\n    max: 50\n")
    assert copy.errors() == [
        "pension_estimate.yaml:14: fields[0].min: min (70) is greater than max (50)",
    ]


def test_http_api_without_url(copy):
    copy.edit("social_transfer.yaml", "  url: ${SI_BACKEND_URL:-http://demo.si-agent}/api/social_transfer\n", "")
    assert copy.errors() == ["social_transfer.yaml:49: api: missing required option 'url'"]


def test_malformed_environment_reference(copy):
    copy.edit("social_transfer.yaml", "${SI_BACKEND_URL:-", "${SI-BACKEND_URL:-")
    assert copy.errors() == [
        "social_transfer.yaml:51: api.url: malformed environment reference "
        "'${SI-BACKEND_URL:-http://demo.si-agent}'; use ${NAME} or ${NAME:-default}",
    ]


def test_builtin_api_without_handler(copy):
    copy.edit("pension_estimate.yaml", "  handler: pension_estimate\n", "")
    assert copy.errors() == ["pension_estimate.yaml:59: api: missing required option 'handler'"]


def test_unknown_builtin_handler_lists_the_known_ones(copy, monkeypatch):
    monkeypatch.setitem(HANDLERS, "tax_estimate", lambda values: {})
    copy.edit("pension_estimate.yaml", "  handler: pension_estimate\n", "  handler: pension_guess\n")
    assert copy.errors() == [
        "pension_estimate.yaml:61: api.handler: unknown builtin handler 'pension_guess'; "
        "valid handlers: pension_estimate, tax_estimate",
    ]


def test_handle_business_needs_confirmation_or_steps(copy):
    copy.edit("phone_change.yaml", "require_confirm: true\n", "require_confirm: false\n")
    assert copy.errors() == [
        "phone_change.yaml:4: type: a handle business needs require_confirm: true or steps",
        "phone_change.yaml:30: confirm_text: confirm_text is set but require_confirm is not true",
    ]


def test_confirm_text_placeholders(copy):
    copy.edit("social_transfer.yaml", "  {summary}\n", "  {summary}\n  转入{to_city}\n")
    assert copy.errors() == [
        "social_transfer.yaml:44: confirm_text: unknown placeholder {to_city}; allowed: {name}, {summary}",
    ]


def test_result_template_braces(copy):
    copy.edit("social_transfer.yaml", "{eta_days}个工作日", "{eta_days个工作日")
    [error] = copy.errors()
    assert error.startswith("social_transfer.yaml:54: api.result_template: invalid template: ")


def test_business_needs_fields_or_steps(copy):
    path = copy.dir / "pension_query.yaml"
    text = path.read_text("utf-8")
    start, end = text.index("fields:\n"), text.index("max_attempts:")
    path.write_text(text[:start] + text[end:], "utf-8")
    assert copy.errors() == [
        "pension_query.yaml:2: <root>: a business needs at least one entry in fields or steps",
    ]


# --- the directory and the whole report -----------------------------------------------


def test_empty_directory(tmp_path):
    with pytest.raises(ConfigErrors) as info:
        load_businesses(tmp_path)
    assert [str(e) for e in info.value.errors] == [
        f"{tmp_path}:0: <root>: no business files (*.yaml) found",
    ]


def test_directory_without_yaml_files(tmp_path):
    (tmp_path / "README.md").write_text("notes", "utf-8")
    (tmp_path / "pension_query.yml").write_text("id: pension_query\n", "utf-8")
    _, errors = check_directory(tmp_path)
    assert [str(e) for e in errors] == [
        f"{tmp_path / 'pension_query.yml'}:0: <root>: business files must end in .yaml; "
        "this file is ignored",
        f"{tmp_path}:0: <root>: no business files (*.yaml) found",
    ]


def test_missing_directory(tmp_path):
    _, errors = check_directory(tmp_path / "nowhere")
    assert [str(e) for e in errors] == [f"{tmp_path / 'nowhere'}:0: <root>: not a directory"]


def test_every_problem_of_every_file_is_reported(copy):
    copy.edit("card_loss.yaml", "id: card_loss\n", "id: card_lost\n")
    copy.edit("social_transfer.yaml", "  - key: name\n", "  - key: id_number\n")
    copy.edit("social_transfer.yaml", "    right: from_city\n", "    right: origin_city\n")
    with pytest.raises(ConfigErrors) as info:
        load_businesses(copy.dir)
    errors = info.value.errors
    assert all(isinstance(e, ConfigError) for e in errors)
    assert [(e.file.rsplit("/", 1)[-1], e.line, e.path) for e in errors] == [
        ("card_loss.yaml", 2, "id"),
        ("social_transfer.yaml", 31, "fields[3].key"),
        ("social_transfer.yaml", 41, "checks[0].right"),
    ]
    assert str(info.value).count("\n") == 2
    businesses, _ = check_directory(copy.dir)
    assert "card_loss" not in businesses and "social_transfer" not in businesses
    assert len(businesses) == 11


def test_a_step_id_may_not_be_a_field_key(copy):
    copy.edit("pension_certification.yaml", "  - id: face_photo\n", "  - id: phone\n")
    assert copy.errors() == [
        "pension_certification.yaml:14: steps[1].id: step id 'phone' is also a field key; "
        "rename one",
    ]
