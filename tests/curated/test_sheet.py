"""A 常见问题 spreadsheet (.xlsx or .csv) into drafts: good files, bad rows by number, wrong
types, huge files; an import with any bad row changes nothing."""

from __future__ import annotations

import io
import zipfile
from datetime import datetime

import pytest
from openpyxl import Workbook

from si_agent.curated import Draft
from si_agent.curated.sheet import MAX_BYTES, MAX_ROWS, SheetError, read_sheet
from tests.documents import govdocs

BUSINESSES = {"unemployment_benefit": "unemployment_benefit", "失业保险金申领": "unemployment_benefit"}


def xlsx(rows: list[list[object]]) -> bytes:
    book = Workbook()
    for row in rows:
        book.active.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def test_an_xlsx_with_header_variants_dates_and_paraphrases():
    data = xlsx([
        ["常见问题", "回答", "政策依据", "更新日期", "相似问题", "相关业务"],
        ["失业金怎么领", "带身份证到窗口申请。", "市人社局常见问题", datetime(2025, 6, 1),
         "失业金咋领；怎么申请失业金", "失业保险金申领"],
        [None, None, None, None, None, None],  # an empty line between groups
        ["社保卡丢了怎么办", "先挂失，再补办。", "社保卡服务指南", "2025年5月", "社保卡掉了|社保卡丢失", ""],
    ])
    rows = read_sheet(data, "常见问题.xlsx", BUSINESSES)
    assert [(r.number, r.draft.question) for r in rows] == [(2, "失业金怎么领"), (4, "社保卡丢了怎么办")]
    assert rows[0].draft.as_of == "2025-06-01" and rows[1].draft.as_of == "2025-05"
    assert rows[0].draft.paraphrases == ["失业金咋领", "怎么申请失业金"]
    assert rows[0].draft.businesses == ["unemployment_benefit"]
    assert rows[1].draft.paraphrases == ["社保卡掉了", "社保卡丢失"]


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "gb18030"])
def test_a_csv_in_the_encodings_excel_saves(encoding):
    text = "问题,答案,来源,日期,相似问法\n失业金怎么领,\"带身份证，到窗口申请。\",市人社局,2025/6/1,失业金咋领\n"
    rows = read_sheet(text.encode(encoding), "faq.csv")
    assert rows[0].draft == Draft(question="失业金怎么领", answer="带身份证，到窗口申请。",
                                  source="市人社局", as_of="2025-06-01", paraphrases=["失业金咋领"])


def test_every_bad_row_is_reported_by_its_number():
    text = ("问题,答案,来源,日期\n"
            "失业金怎么领,带身份证。,市人社局,2025-06-01\n"
            ",没有问题,市人社局,2025-06-01\n"
            "社保卡,,市人社局,2025-06-01\n"
            "医保,答案,,2025-06-01\n"
            "养老金,答案,来源,\n"
            "生育津贴,答案,来源,下个月\n"
            f"{'问' * 201},答案,来源,2025-06\n")
    with pytest.raises(SheetError) as caught:
        read_sheet(text.encode(), "faq.csv")
    assert caught.value.reasons == [
        "第3行：“问题”为空", "第4行：“答案”为空", "第5行：“来源”为空", "第6行：“日期”为空",
        "第7行：日期“下个月”无法识别（可写作 2025-06-01、2025/6/1 或 2025年6月）",
        "第8行：“问题”超过 200 个字"]


def test_an_unknown_business_is_a_bad_row():
    text = "问题,答案,来源,日期,业务\n失业金怎么领,答,来源,2025-06,不存在的业务\n"
    with pytest.raises(SheetError) as caught:
        read_sheet(text.encode(), "faq.csv", BUSINESSES)
    assert caught.value.reasons == ["第2行：业务“不存在的业务”不存在"]


@pytest.mark.parametrize(("data", "name", "says"), [
    (b"MZ\x90\x00\x03\x00\x00\x00" + b"\0" * 200, "faq.xlsx", "不是表格文件"),  # a renamed .exe
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 200, "faq.xlsx", "旧版 .xls 或已加密"),
    (b"%PDF-1.7\n" + b"x" * 100, "faq.pdf", "文件类型不受支持"),
    (b"PK\x03\x04 not really a zip", "faq.xlsx", "文件已损坏"),
    pytest.param(govdocs.of_a_later_zip_version(govdocs.xlsx()), "faq.xlsx", "文件已损坏",
                 id="of-a-later-zip-version"),
    ("问题,答案,来源,日期\n".encode(), "faq.csv", "表中没有任何问答"),
    ("名称,说明\n社保卡,答\n".encode(), "faq.csv", "第1行应为表头"),
    ("问题,答案\n社保卡,答\n".encode(), "faq.csv", "缺少：来源、日期"),
])
def test_a_file_that_is_no_faq_sheet_says_why(data, name, says):
    with pytest.raises(SheetError) as caught:
        read_sheet(data, name)
    assert says in caught.value.reasons[0]


def test_a_zip_that_is_no_workbook_says_so():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("readme.txt", "hello")
    with pytest.raises(SheetError) as caught:
        read_sheet(out.getvalue(), "faq.xlsx")
    assert "不是 Excel 工作簿" in caught.value.reasons[0]


def test_a_huge_file_is_refused_before_it_is_read():
    with pytest.raises(SheetError) as caught:
        read_sheet(b"a" * (MAX_BYTES + 1), "faq.csv")
    assert caught.value.reasons == ["文件过大（超过 5 MB），请拆分后分批导入。"]


def test_a_zip_bomb_is_refused_before_it_is_unpacked():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("xl/workbook.xml", "<workbook/>")
        z.writestr("xl/worksheets/sheet1.xml", "0" * (60 * 1024 * 1024))
    assert len(out.getvalue()) < MAX_BYTES
    with pytest.raises(SheetError) as caught:
        read_sheet(out.getvalue(), "faq.xlsx")
    assert "文件过大" in caught.value.reasons[0]


def test_too_many_rows_are_refused():
    text = "问题,答案,来源,日期\n" + "".join(f"问题{i},答,来源,2025-06\n" for i in range(MAX_ROWS + 1))
    with pytest.raises(SheetError) as caught:
        read_sheet(text.encode(), "faq.csv")
    assert caught.value.reasons == [f"行数过多（超过 {MAX_ROWS} 行），请拆分后分批导入。"]


def test_an_import_with_a_duplicate_imports_nothing_and_one_of_an_existing_question_updates(book):
    existing = book.add(Draft(question="失业金怎么领", answer="旧答案。", source="旧", as_of="2024-01"),
                        "alice")
    text = ("问题,答案,来源,日期,相似问法\n"
            "请问失业金怎么领？,新答案。,市人社局,2025-06,失业金咋领\n"
            "社保卡丢了怎么办,先挂失。,社保卡指南,2025-06,社保卡掉了\n"
            "社保卡掉了,重复的问题。,社保卡指南,2025-06,\n")
    rows = read_sheet(text.encode(), "faq.csv")
    plan = book.plan_import([r.draft for r in rows], "bob")
    assert [(rows[at].number, type(exc).__name__) for at, exc in plan.errors] == [(4, "DuplicateQuestion")]
    with pytest.raises(ValueError):
        book.run_import(plan)
    assert [a.id for a in book.all()] == [existing.id]  # nothing half-imported
    rows = rows[:2]
    plan = book.plan_import([r.draft for r in rows], "bob")
    book.run_import(plan)
    assert (len(plan.added), len(plan.updated), plan.errors) == (1, 1, [])
    updated = book.get(existing.id)
    assert (updated.answer, updated.version, updated.updated_by) == ("新答案。", 2, "bob")
    assert book.match("失业金咋领").answer.id == existing.id
    book.set_enabled(updated, False, "carol")  # a row that comes again keeps it disabled
    book.run_import(book.plan_import([rows[0].draft], "bob"))
    assert not book.get(existing.id).enabled and book.match("失业金咋领") is None
