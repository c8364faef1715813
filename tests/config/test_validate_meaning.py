"""``si-agent validate`` checks meaning: keywords that take over other businesses
(warnings), placeholders, what the backend implements, hints for YAML mistakes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from si_agent.cli import main
from si_agent.config.loader import check_directory, load_businesses
from si_agent.engine.rules.collisions import keyword_collisions

ROOT = Path(__file__).resolve().parents[2]

# A new business a staff member adds: 养老金补发 (its keywords are set per test).
NEW = """\
# 养老金补发：补发漏发的养老金。
id: pension_arrears
name: 养老金补发申请
type: handle
description: 养老金漏发或少发时，申请补发。
keywords: [{keywords}]
fields:
  - key: id_number
    label: 身份证号
    type: idcard
    prompt: 请提供您的18位身份证号码。
  - key: amount
    label: 补发金额
    type: number
    prompt: 请问需要补发多少元？
require_confirm: true
api:
  kind: http
  url: {url}
  result_template: 已受理，补发{{amount}}元。
"""
EXTERNAL = "https://backend.example.gov.cn/api/pension_arrears"


def write_new(directory: Path, keywords: str = "养老金补发, 补发养老金", url: str = EXTERNAL,
              **edits: str) -> Path:
    text = NEW.format(keywords=keywords, url=url)
    for old, new in edits.items():
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path = directory / "pension_arrears.yaml"
    path.write_text(text, "utf-8")
    return path


def line_of(path: Path, anchor: str) -> int:
    text = path.read_text("utf-8")
    assert text.count(anchor) == 1, anchor
    return text[: text.index(anchor)].count("\n") + 1


def validate(directory: Path, capsys) -> tuple[int, list[str]]:
    code = main(["validate", str(directory)])
    return code, capsys.readouterr().out.replace(f"{directory}/", "").splitlines()


@pytest.fixture
def shipped(tmp_path, monkeypatch) -> Path:
    monkeypatch.delenv("SI_BACKEND_URL", raising=False)
    monkeypatch.setenv("SI_DATA_DIR", str(tmp_path / "data"))
    target = tmp_path / "businesses"
    shutil.copytree(ROOT / "businesses", target)
    return target


# --- 1. keywords that take over other businesses: warnings ------------------------


@pytest.mark.parametrize("directory", ["businesses", "examples/portal/businesses"])
def test_the_shipped_keywords_collide_with_nothing(directory):
    assert keyword_collisions(load_businesses(ROOT / directory)) == []


def test_a_generic_keyword_is_a_warning_naming_the_businesses_it_takes(shipped, capsys):
    path = write_new(shipped, keywords="养老金补发, 养老金, 社保卡")
    code, out = validate(shipped, capsys)
    assert code == 0  # warnings do not fail validate
    line = line_of(path, "keywords:")
    pension, card = out[0], out[1]
    assert pension.startswith(
        f"pension_arrears.yaml:{line}: keywords[1]: warning: keyword '养老金' is a generic word: "
        "every message that says it would come to this business; it is in the keywords of "
        "pension_certification (养老金资格认证), pension_estimate (养老金测算), "
        "pension_query (养老金查询); takes over messages about other businesses: ")
    assert "“养老金怎么测算” (about pension_estimate (养老金测算))" in pension
    assert card.startswith(
        f"pension_arrears.yaml:{line}: keywords[2]: warning: keyword '社保卡' is a generic word")
    assert "“社保卡怎么挂失” (about card_loss (社保卡挂失))" in card
    assert out[2] == (f"ok: 14 businesses in {shipped}; assistant texts: _assistant.yaml; "
                      "moderation list: built-in default (55 words); "
                      "2 warning(s), which do not fail validate")


def test_a_keyword_of_another_business_is_a_warning(shipped, capsys):
    path = write_new(shipped, keywords="养老金补发, 转社保")
    code, out = validate(shipped, capsys)
    assert code == 0
    assert out[0].startswith(f"pension_arrears.yaml:{line_of(path, 'keywords:')}: keywords[1]: "
                             "warning: keyword '转社保' is also a keyword of social_transfer "
                             "(社保关系转移)")


def test_a_takeover_the_matcher_finds_is_a_warning(shipped, capsys):
    # 认证 is no generic word and no other business's keyword, but with it
    # "养老金怎么认证" (about 养老金资格认证) would come to the new business.
    write_new(shipped, keywords="养老金补发, 认证")
    code, out = validate(shipped, capsys)
    assert code == 0
    assert out[0].endswith(
        "keywords[1]: warning: keyword '认证' takes over messages about other businesses: "
        "“养老金怎么认证” (about pension_certification (养老金资格认证)) would come to this "
        "business; use a phrase only this business's citizens say (e.g. with the action: "
        "补办社保卡, 查养老金到账)")


@pytest.mark.parametrize("word", ["确认", "取消", "办理"])
def test_a_reply_word_as_a_keyword_is_an_error_and_the_server_refuses_it(shipped, capsys, word):
    # With 确认 as a keyword, "确认" at another business's confirmation came here instead.
    from si_agent.app import build_controller
    from si_agent.config.settings import Settings
    from si_agent.errors import ConfigErrors

    path = write_new(shipped, keywords=f"养老金补发, {word}")
    code, out = validate(shipped, capsys)
    assert code == 1
    assert out[0].startswith(f"pension_arrears.yaml:{line_of(path, 'keywords:')}: keywords[1]: "
                             f"keyword '{word}' is a word the assistant reads as a reply")
    assert "请删除" in out[0]
    assert not any("warning" in line and f"'{word}'" in line for line in out)
    with pytest.raises(ConfigErrors, match=f"keyword '{word}' is a word the assistant reads"):
        build_controller(Settings(business_dir=shipped, session_store="memory",
                                  knowledge="none"))


@pytest.mark.parametrize("blank", ['" "', '"　"', '""'])
def test_a_blank_keyword_is_an_error_and_the_server_refuses_it(shipped, capsys, blank):
    # A keyword of one space matched every message with a space in it ("养老金 查询"),
    # and blanking it out of the message looped for ever: a worker at 100% CPU.
    from si_agent.app import build_controller
    from si_agent.config.settings import Settings
    from si_agent.errors import ConfigErrors

    path = write_new(shipped, keywords=f"养老金补发, {blank}")
    code, out = validate(shipped, capsys)
    assert code == 1
    if blank == '""':  # the schema's own check
        assert out[0] == (f"pension_arrears.yaml:{line_of(path, 'keywords:')}: keywords[1]: "
                          "must not be empty")
        return
    assert out[0].startswith(f"pension_arrears.yaml:{line_of(path, 'keywords:')}: keywords[1]: "
                             "keyword ")
    assert "is blank" in out[0] and "请删除" in out[0]
    with pytest.raises(ConfigErrors, match="is blank"):
        build_controller(Settings(business_dir=shipped, session_store="memory",
                                  knowledge="none"))


def test_blanking_a_phrase_of_spaces_out_of_a_message_ends():
    from si_agent.engine.rules.matching import BusinessIndex

    shipped = load_businesses(ROOT / "businesses")
    b = shipped["pension_query"]
    spaced = b.model_copy(update={"keywords": (*b.keywords, " ")})
    index = BusinessIndex({**shipped, b.id: spaced})
    assert index.without_keywords(spaced, "养老金查询 查一下") == "      查一下"


def test_a_one_character_keyword_is_a_warning(shipped, capsys):
    path = write_new(shipped, keywords="养老金补发, 补")
    code, out = validate(shipped, capsys)
    assert code == 0
    assert out[0].startswith(f"pension_arrears.yaml:{line_of(path, 'keywords:')}: keywords[1]: "
                             "warning: keyword '补' is a single character: it is found inside "
                             "many words")


def test_distinct_keywords_give_no_warning(shipped, capsys):
    write_new(shipped)
    code, out = validate(shipped, capsys)
    assert (code, out) == (0, [f"ok: 14 businesses in {shipped}; assistant texts: _assistant.yaml; "
                                "moderation list: built-in default (55 words)"])


# --- 2. placeholders ----------------------------------------------------------------


def test_a_misspelt_result_placeholder_is_an_error_with_a_hint(shipped, capsys):
    path = shipped / "pension_query.yaml"
    path.write_text(path.read_text("utf-8").replace("{amount}", "{amont}"), "utf-8")
    code, out = validate(shipped, capsys)
    assert code == 1
    assert out == [
        f"pension_query.yaml:{line_of(path, 'result_template:')}: api.result_template: "
        "unknown placeholder {amont} (did you mean {amount}?); allowed: {amount}, {bank}, "
        "{handoff}, {id_number}, {month}, {name}, {paid_on}"]


def test_an_external_backend_answer_is_not_known(shipped):
    # What https://backend.example.gov.cn answers is not declared: any plain name.
    write_new(shipped, **{"补发{amount}元": "补发{amount}元，编号{application_no}"})
    assert check_directory(shipped)[1] == []


def test_a_placeholder_in_a_prompt_is_an_error(shipped):
    path = write_new(shipped, **{"请问需要补发多少元？": "请问{name}需要补发多少元？"})
    [error] = check_directory(shipped)[1]
    assert str(error) == (
        f"{path}:{line_of(path, '请问{name}')}: fields[1].prompt: {{name}} would be shown to the "
        "citizen as written: prompts, error messages and check messages are not filled in; "
        "write the words themselves")


# --- 3. what the backend implements -------------------------------------------------


def test_a_business_the_demo_backend_does_not_implement_is_an_error(shipped):
    url = "${SI_BACKEND_URL:-http://demo.si-agent}/api/pension_arrears"
    path = write_new(shipped, url=url)
    [error] = check_directory(shipped)[1]
    assert str(error).startswith(
        f"{path}:{line_of(path, 'url:')}: api.url: the demo backend does not implement "
        "'pension_arrears' (http://demo.si-agent/api/pension_arrears); a citizen would be told "
        "业务系统不支持该业务 on submitting. It implements: card_apply, card_loss, ")


def test_the_configured_backend_decides(shipped, monkeypatch):
    write_new(shipped, url="${SI_BACKEND_URL:-http://demo.si-agent}/api/pension_arrears")
    monkeypatch.setenv("SI_BACKEND_URL", "https://backend.example.gov.cn")
    assert check_directory(shipped)[1] == []


def test_a_key_the_demo_backend_requires_is_an_error(shipped):
    path = shipped / "phone_change.yaml"
    text = path.read_text("utf-8").replace("key: new_phone", "key: mobile")
    path.write_text(text, "utf-8")
    [error] = check_directory(shipped)[1]
    assert str(error) == (
        f"{path}:{line_of(path, 'fields:')}: fields: the demo backend's phone_change needs "
        "new_phone in the submission, and no field or step of this business has that key")


def test_a_demo_result_template_names_only_what_the_demo_answers(shipped):
    path = shipped / "card_apply.yaml"
    path.write_text(path.read_text("utf-8").replace("{eta_days}", "{eta}"), "utf-8")
    [error] = check_directory(shipped)[1]
    assert "unknown placeholder {eta} (did you mean {eta_days}?)" in str(error)


def test_rpa_fields_must_be_fields_of_the_business(tmp_path):
    shutil.copytree(ROOT / "examples/portal/businesses", tmp_path / "b")
    path = tmp_path / "b" / "card_apply.yaml"
    text = path.read_text("utf-8").replace("    fixed:", "    fields: {bank_name: 开户银行}\n    fixed:")
    path.write_text(text, "utf-8")
    [error] = check_directory(tmp_path / "b")[1]
    assert str(error) == (
        f"{path}:{line_of(path, 'fields: {bank_name')}: api.options.fields.bank_name: unknown "
        "field 'bank_name'; options.fields maps fields of this business to form labels "
        "(name, id_number, phone, bank, mailing_address)")


# --- 4. hints for the YAML mistakes staff make -----------------------------------------


@pytest.mark.parametrize(("old", "new", "anchor", "hint"), [
    ("name: 养老金补发申请", "name： 养老金补发申请", "name：",
     "hint: the colon after 'name' is a full-width '：'; YAML needs an ASCII colon and a space: "
     "'name: ...' (提示：“name”后面是中文全角冒号“：”，请改成英文半角冒号加空格“name: ”)"),
    ("    label: 补发金额", "\tlabel: 补发金额", "\tlabel",
     "hint: this line is indented with a tab; YAML indents with spaces only "
     "(提示：这一行用了 Tab 键缩进，YAML 只能用空格缩进，请把 Tab 换成空格)"),
    ("    type: idcard\n", '    type: text\n    validate: "\\d{18}"\n', "validate:",
     "hint: in double quotes a backslash starts an escape; write a regular expression in "
     "single quotes, e.g. validate: '^\\d{6}$' (提示：双引号里的反斜杠会被当作转义符，"
     "正则表达式请用单引号括起来，例如 validate: '^\\d{6}$')"),
])
def test_yaml_mistakes_get_a_hint_at_their_line(shipped, old, new, anchor, hint):
    path = write_new(shipped, **{old: new})
    [error] = check_directory(shipped)[1]
    assert error.line == line_of(path, anchor)
    assert error.message.startswith("YAML syntax error: ")
    assert error.message.endswith(hint)


def test_aliases_of_aliases_are_refused_before_they_expand(shipped, capsys):
    # "Billion laughs": nine levels of nine aliases took 16 GB before this check.
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    (shipped / "laughs.yaml").write_text("\n".join(lines) + "\n", "utf-8")
    code, out = validate(shipped, capsys)
    assert code == 1
    assert any(line.startswith("laughs.yaml:") and "expands to more than 50,000 values" in line
               and "锚点" in line for line in out)


@pytest.mark.parametrize("comma", ["，", "、"])
def test_a_full_width_comma_in_a_keyword_list_is_an_error_at_its_line(shipped, capsys, comma):
    # [养老金补发，补发养老金] is ONE keyword to YAML: no message would ever say it.
    path = write_new(shipped, keywords=f"养老金补发{comma}补发养老金")
    code, out = validate(shipped, capsys)
    assert code == 1
    assert out[0] == (
        f"pension_arrears.yaml:{line_of(path, 'keywords:')}: keywords[0]: "
        f"'养老金补发{comma}补发养老金' is one item: a full-width '{comma}' does not separate the "
        "items of a [...] list; write [养老金补发, 补发养老金] with ASCII commas, or one item per "
        f"line (- 养老金补发); put the item in quotes if the '{comma}' is part of it "
        f"(提示：方括号里的中文“{comma}”不能分隔各项，整段会被当成一项；请改用英文半角逗号“,”，"
        "或每行写一项“- …”)")


def test_a_full_width_comma_in_a_flow_list_of_aliases_is_an_error_at_its_line(shipped):
    path = shipped / "card_apply.yaml"
    text = path.read_text("utf-8").replace("aliases: [工行, 工商银行, 工商]",
                                           "aliases: [工行，工商银行, 工商]")
    path.write_text(text, "utf-8")
    [error] = check_directory(shipped)[1]
    assert error.line == line_of(path, "[工行，工商银行")
    assert error.path.endswith(".aliases[0]")
    assert error.message.startswith("'工行，工商银行' is one item")


def test_a_quoted_item_or_a_block_list_keeps_its_full_width_comma(shipped):
    write_new(shipped, keywords='养老金补发, "补发，养老金"')
    assert check_directory(shipped)[1] == []
    write_new(shipped, keywords="养老金补发", **{"keywords: [养老金补发]":
                                                   "keywords:\n  - 养老金补发\n  - 补发，养老金"})
    assert check_directory(shipped)[1] == []


@pytest.mark.parametrize(("written", "bracket"), [("【养老金补发, 补发养老金】", "【】"),
                                                  ("［养老金补发，补发养老金］", "［］")])
def test_full_width_brackets_around_a_list_get_a_hint(shipped, written, bracket):
    path = write_new(shipped, keywords="X", **{"keywords: [X]": f"keywords: {written}"})
    [error] = check_directory(shipped)[1]
    assert error.line == line_of(path, "keywords:")
    assert error.message == (
        f"expected a list, got string '{written}'; hint: {bracket[0]} {bracket[1]} are "
        "full-width brackets, so YAML reads this as one piece of text; write a list in ASCII "
        f"brackets: [养老金补发, 补发养老金] (提示：列表要用英文半角方括号“[ ]”，不能用中文的“{bracket}”)")


def test_a_list_written_as_text_gets_a_hint(shipped):
    write_new(shipped, keywords="X", **{"keywords: [X]": "keywords: 养老金补发，补发养老金"})
    [error] = check_directory(shipped)[1]
    assert error.message.endswith(
        "hint: write a list in brackets, [养老金补发, 补发养老金], or one item per line "
        "(- 养老金补发) (提示：这里要写成列表：用英文方括号“[ ]”括起来，或每行写一项“- …”)")


NO_SPACE = ("hint: there is no space after the colon of {key!r}, so YAML reads '{key}:{value}' "
            "as one piece of text; write '{key}: {value}' (提示：“{key}:”后面缺少空格，整行会被当成"
            "一段文字，请在冒号后面加一个空格：“{key}: {value}”)")
IDEOGRAPHIC = ("hint: this line is indented with ideographic spaces '　' (U+3000, the full-width "
               "space of a Chinese input method); YAML indents with ASCII spaces only "
               "(提示：这一行用了中文全角空格“　”缩进，YAML 只能用英文半角空格缩进，请把全角空格换成半角空格)")


@pytest.mark.parametrize(("old", "new", "anchor", "hint"), [
    # The parser stops on the line after the mistake; the hint names the mistake's line.
    ("name: 养老金补发申请", "name:养老金补发申请", "name:养",
     NO_SPACE.format(key="name", value="养老金补发申请")),
    ("    label: 补发金额", "    label:补发金额", "label:补",
     NO_SPACE.format(key="label", value="补发金额")),
    ("  - key: amount", "  - key:amount", "key:amount", NO_SPACE.format(key="key", value="amount")),
    ("require_confirm: true", "require_confirm:true", "require_confirm:",
     NO_SPACE.format(key="require_confirm", value="true")),
    ("    label: 补发金额", "　　label: 补发金额", "　　label", IDEOGRAPHIC),
    ("    type: number", "    　　type: number", "　　type", IDEOGRAPHIC),
])
def test_more_yaml_mistakes_get_a_hint_at_their_line(shipped, old, new, anchor, hint):
    path = write_new(shipped, **{old: new})
    [error] = check_directory(shipped)[1]
    assert (error.line, error.message.endswith(hint)) == (line_of(path, anchor), True), error


def test_a_key_indented_with_ideographic_spaces_is_an_error_with_the_hint():
    from si_agent.config.yamlio import load_yaml

    # "　　kind: http" under api: parses, as a top-level key "　　kind" (api is then empty).
    doc = load_yaml("id: a\napi:\n　　kind: http\nname: 甲\n")
    assert [(p.line, p.message) for p in doc.problems] == [
        (3, f"key 'kind' starts with ideographic spaces; {IDEOGRAPHIC}")]


def test_an_item_written_key_colon_value_gets_the_hint_at_its_line(shipped):
    # "- key:amount" alone is a string item: the schema's error says why.
    path = write_new(shipped, **{"  - key: amount\n": "  - key:amount\n  - key: amount\n"})
    [error] = check_directory(shipped)[1]
    assert (error.line, error.path) == (line_of(path, "key:amount"), "fields[1]")
    assert error.message == ("expected a mapping, got string 'key:amount'; "
                             + NO_SPACE.format(key="key", value="amount"))


def test_a_file_saved_as_gbk_says_to_save_it_as_utf8(shipped, capsys):
    path = write_new(shipped)
    path.write_bytes(path.read_text("utf-8").encode("gbk"))
    code, out = validate(shipped, capsys)
    assert code == 1
    assert out[0] == (
        "pension_arrears.yaml:1: <root>: not valid UTF-8: invalid continuation byte at byte 2; "
        "it looks saved as GBK (GB2312/GB18030), as Windows Notepad and Excel do; save the file "
        "as UTF-8 (提示：文件不是 UTF-8 编码，请以UTF-8编码保存，例如在记事本“另存为”里把编码选为 UTF-8)")


def test_a_bad_byte_further_down_is_located_at_its_line(shipped):
    path = write_new(shipped)
    line = line_of(path, "  - key: amount") + 1  # 补发金额, its label, the first in GBK
    head, tail = path.read_text("utf-8").split("  - key: amount\n")
    path.write_bytes(head.encode("utf-8") + b"  - key: amount\n" + tail.encode("gbk"))
    [error] = check_directory(shipped)[1]
    assert error.line == line


def test_a_long_plain_file_is_too_large_not_an_alias_problem(shipped, capsys):
    from si_agent.config.yamlio import MAX_NODES

    lines = ["id: big", "name: 大文件", "keywords:"] + [f"  - 词{i}" for i in range(MAX_NODES)]
    (shipped / "big.yaml").write_text("\n".join(lines) + "\n", "utf-8")
    code, out = validate(shipped, capsys)
    assert code == 1
    [message] = [line for line in out if line.startswith("big.yaml:")]
    assert "the file is too large: more than 50,000 values (the limit is 50,000 nodes)" in message
    assert "文件过大" in message
    assert "alias" not in message and "锚点" not in message


# --- 5. across files -------------------------------------------------------------------


def test_two_files_with_the_same_id_name_both(shipped, capsys):
    # A copied file whose id was not changed.
    first = shipped / "pension_query.yaml"
    copy = shipped / "pension_query_copy.yaml"
    copy.write_text(first.read_text("utf-8").replace("name: 养老金查询", "name: 养老金查询副本"),
                    "utf-8")
    code, out = validate(shipped, capsys)
    assert code == 1
    line = line_of(copy, "id: pension_query")
    assert f"pension_query_copy.yaml:{line}: id: business id 'pension_query' must equal the " \
           "file name 'pension_query_copy'" in out
    assert (f"pension_query_copy.yaml:{line}: id: duplicate business id 'pension_query'; also "
            f"declared in pension_query.yaml:{line_of(first, 'id: pension_query')}; give each "
            "business its own id, equal to its file name (业务 id 重复：每个业务的 id 必须不同，"
            "并与文件名一致)") in out


def test_two_businesses_with_the_same_name_are_a_warning_naming_both(shipped, capsys):
    path = write_new(shipped, **{"name: 养老金补发申请": "name: 养老金查询"})
    code, out = validate(shipped, capsys)
    assert code == 0
    # The warning is on the later file by name, and names the first and its line.
    later = shipped / "pension_query.yaml"
    [warning] = [line for line in out if ": name: warning:" in line]
    assert warning == (
        f"pension_query.yaml:{line_of(later, 'name: 养老金查询')}: name: warning: name '养老金查询' "
        f"is also the name of pension_arrears (pension_arrears.yaml:{line_of(path, 'name:')}): "
        "citizens could not tell the two apart in the list of businesses, and a message saying "
        "it would match both; give each business its own name (业务名称“养老金查询”与 "
        "pension_arrears 重复，请改成不同的名称)")


UNCLOSED = ("hint: the '[' on this line is never closed; end it with an ASCII ']' (full-width "
            "'］', '】' or '｝' do not close it) (提示：这一行的“[”没有配对的英文半角“]”，请在末尾"
            "补上“]”，不能用中文的“］”“】”“｝”)")
UNCLOSED_QUOTE = ("hint: the quote opened on this line is never closed; end the text with the "
                  "same ASCII quote on this line (Chinese quotes “ ” do not close it) (提示：这一行"
                  "的引号没有配对，请在文字末尾补上同样的英文引号，中文引号“ ”不算)")


@pytest.mark.parametrize(("old", "new", "anchor", "hint"), [
    # The parser stops at the next key, or at the end of the file: the hint names the line
    # the list or the quote was opened on.
    ("keywords: [X]", "keywords: [养老金补发, 补发养老金", "keywords:", UNCLOSED),
    ("keywords: [X]", "keywords: [养老金补发, 补发养老金］", "keywords:", UNCLOSED),
    ("name: 养老金补发申请", 'name: "养老金补发申请', "name:", UNCLOSED_QUOTE),
    ("name: 养老金补发申请", 'name: "养老金补发申请”', "name:", UNCLOSED_QUOTE),
])
def test_a_list_or_a_quote_never_closed_is_reported_where_it_opens(shipped, old, new, anchor,
                                                                    hint):
    path = write_new(shipped, keywords="X", **{old: new})
    [error] = check_directory(shipped)[1]
    assert (error.line, error.message.endswith(hint)) == (line_of(path, anchor), True), error


def test_a_list_item_without_a_space_after_its_dash_gets_a_hint(shipped):
    path = write_new(shipped, keywords="X", **{"keywords: [X]":
                                               "keywords:\n  -养老金补发\n  - 补发养老金"})
    [error] = check_directory(shipped)[1]
    assert error.line == line_of(path, "keywords:")
    assert error.message == (
        "expected a list, got string '-养老金补发 - 补发养老金'; hint: a list item needs a space "
        "after its '-': '- 养老金补发' (提示：列表的每一项要写成“- ”加内容，短横线后面要有一个空格，"
        "例如“- 养老金补发”)")
