"""Real-looking Chinese government documents, made in the tests (no file is shipped).

One policy notice (a 公文: title, 文号, numbered headings 一、（一）, a table of rates,
page numbers) in every format the console takes: ``docx()`` (python-docx, heading styles
and an unstyled numbered heading, a table with a merged title cell), ``pdf()``
(reportlab, the Adobe-GB1 CID font STSong-Light, two pages, a ruled table, a bigger
title), ``xlsx()`` (openpyxl, a title row over a header row, a formula), ``html()`` (a
bureau page with navigation and footer around the article) and ``markdown()``.
``FACTS`` are sentences each conversion must keep whole, in this order.
"""

from __future__ import annotations

import io

TITLE = "关于调整2026年度失业保险金发放标准的通知"
NUMBER = "蓉人社发〔2026〕18号"
INTRO = ("各区（市）县人力资源和社会保障局、各有关单位：根据《失业保险条例》和省人力资源和社会保障厅"
         "有关规定，经市政府同意，现就调整我市2026年度失业保险金发放标准有关事项通知如下。")
SECTIONS = [
    ("一、调整范围", [
        "2026年1月1日及以后仍在领取失业保险金期间的失业人员，均按本通知规定的新标准领取失业保险金。",
    ]),
    ("二、发放标准", [
        "失业保险金按月发放，标准为本市最低工资标准的90%，即每月2070元。",
        "累计缴费时间满10年以上的，每月增发50元；领取期间患病的，按规定享受医疗补助金。",
    ]),
    ("三、申领渠道", [
        "失业人员可通过四川人社App、天府市民云或各区（市）县就业服务窗口申领，无需提交纸质材料。",
    ]),
]
TABLE = [
    ["缴费年限", "领取期限", "月标准（元）"],
    ["满1年不足5年", "最长12个月", "2070"],
    ["满5年不足10年", "最长18个月", "2070"],
    ["10年以上", "最长24个月", "2120"],
]
SIGNATURE = "成都市人力资源和社会保障局 2026年1月6日"
# Sentences a good conversion keeps whole and in order.
FACTS = [
    INTRO[:30],
    "失业保险金按月发放，标准为本市最低工资标准的90%，即每月2070元。",
    "累计缴费时间满10年以上的，每月增发50元",
    "无需提交纸质材料",
]
TABLE_ROW = "缴费年限：10年以上；领取期限：最长24个月；月标准（元）：2120"


def docx() -> bytes:
    import docx as python_docx

    doc = python_docx.Document()
    doc.core_properties.title = TITLE
    doc.add_heading(TITLE, level=1)
    doc.add_paragraph(NUMBER)
    doc.add_paragraph(INTRO)
    for n, (heading, paragraphs) in enumerate(SECTIONS):
        if n == 1:
            doc.add_paragraph(heading)  # unstyled, as many bureaus type it
        else:
            doc.add_heading(heading, level=2)
        for text in paragraphs:
            doc.add_paragraph(text)
        if n == 1:
            table = doc.add_table(rows=len(TABLE) + 1, cols=3)
            title = table.rows[0].cells[0].merge(table.rows[0].cells[2])
            title.text = "失业保险金领取期限及标准"
            for r, row in enumerate(TABLE, start=1):
                for c, value in enumerate(row):
                    table.rows[r].cells[c].text = value
    doc.add_paragraph(SIGNATURE)
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def pdf(*, scanned: bool = False, password: str | None = None,
        restricted: bool = False) -> bytes:
    """The notice as a two-page PDF; ``scanned``: the same pages with no text (drawn
    boxes only, as a scan has none); ``password``: encrypted, opening needs it;
    ``restricted``: encrypted with an owner password only (no printing), opening does not."""
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.lib.units import mm
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate, Spacer, Table

    pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
    body = ParagraphStyle("body", fontName="STSong-Light", fontSize=12, leading=20,
                          firstLineIndent=24, wordWrap="CJK")
    head = ParagraphStyle("head", parent=body, fontSize=14, firstLineIndent=0, spaceBefore=8)
    title = ParagraphStyle("title", parent=body, fontSize=20, leading=28, firstLineIndent=0,
                           alignment=1)
    out = io.BytesIO()
    encrypt = None
    if password:
        from reportlab.lib.pdfencrypt import StandardEncryption

        encrypt = StandardEncryption(password, canPrint=0)
    elif restricted:
        from reportlab.lib.pdfencrypt import StandardEncryption

        encrypt = StandardEncryption("", ownerPassword="bureau-owner", canPrint=0, canCopy=0)
    doc = SimpleDocTemplate(out, pagesize=A4, leftMargin=25 * mm, rightMargin=25 * mm,
                            title=TITLE, encrypt=encrypt)

    def number(canvas, document):
        canvas.setFont("STSong-Light", 10)
        canvas.drawCentredString(A4[0] / 2, 12 * mm, f"- {document.page} -")

    if scanned:
        story = [Table([[""] * 3] * 12, colWidths=[50 * mm] * 3, rowHeights=[18 * mm] * 12,
                       style=[("GRID", (0, 0), (-1, -1), 0.5, colors.grey)])]
        doc.build(story)
        return out.getvalue()
    story = [Paragraph(TITLE, title), Paragraph(NUMBER, ParagraphStyle("no", parent=body,
             alignment=1, firstLineIndent=0)), Spacer(1, 6), Paragraph(INTRO, body)]
    for n, (heading, paragraphs) in enumerate(SECTIONS):
        story.append(Paragraph(heading, head))
        story += [Paragraph(text, body) for text in paragraphs]
        if n == 1:
            story.append(Table(TABLE, colWidths=[50 * mm] * 3, style=[
                ("FONTNAME", (0, 0), (-1, -1), "STSong-Light"),
                ("GRID", (0, 0), (-1, -1), 0.5, colors.black)]))
            story.append(PageBreak())
    story.append(Paragraph(SIGNATURE, body))
    doc.build(story, onFirstPage=number, onLaterPages=number)
    return out.getvalue()


def xlsx() -> bytes:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "领取标准"
    sheet.append(["失业保险金领取期限及标准（2026年）"])
    for row in TABLE:
        sheet.append([int(v) if v.isdigit() else v for v in row])
    sheet["D1"] = None
    sheet.append(["合计月数", "=12+18+24", None])
    other = book.create_sheet("申领渠道")
    other.append(["渠道", "说明"])
    other.append(["四川人社App", "无需提交纸质材料"])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def html() -> bytes:
    sections = "".join(
        f"<h2>{h}</h2>" + "".join(f"<p>{p}</p>" for p in ps)
        + (_html_table() if n == 1 else "")
        for n, (h, ps) in enumerate(SECTIONS)
    )
    page = (
        '<!DOCTYPE html><html lang="zh-CN"><head><meta charset="gb18030">'
        f"<title>{TITLE}_成都市人力资源和社会保障局</title><script>var a=1;</script>"
        "<style>p{margin:0}</style></head><body>"
        '<header><a href="/">首页</a></header><nav><a href="/zcfg">政策法规</a>'
        '<a href="/bszn">办事指南</a></nav>'
        f'<div id="content"><h1>{TITLE}</h1><p class="num">{NUMBER}</p><p>{INTRO}</p>'
        f"{sections}<p>{SIGNATURE}</p></div>"
        "<footer>主办：成都市人力资源和社会保障局 ICP备案号</footer></body></html>"
    )
    return page.encode("gb18030")


def _html_table() -> str:
    rows = "".join(
        "<tr>" + "".join(f"<{'th' if r == 0 else 'td'}>{v}</{'th' if r == 0 else 'td'}>"
                         for v in row) + "</tr>"
        for r, row in enumerate(TABLE)
    )
    return f"<table>{rows}</table>"


def markdown() -> bytes:
    parts = [f"# {TITLE}", NUMBER, INTRO]
    for n, (h, ps) in enumerate(SECTIONS):
        parts.append(f"## {h}")
        parts += ps
        if n == 1:
            parts.append("\n".join(
                ["| " + " | ".join(TABLE[0]) + " |", "|---|---|---|"]
                + ["| " + " | ".join(r) + " |" for r in TABLE[1:]]))
    parts.append(SIGNATURE)
    return "\n\n".join(parts).encode("utf-8")


def chromium_pdf(driver) -> bytes:
    """The HTML notice printed to PDF by Chromium (``driver``: a started Playwright), its
    Noto CJK font subset embedded, as a browser or an office suite exports one; page
    numbers in the footer. Its font maps many characters to radical code points."""
    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS

    browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
    try:
        page = browser.new_page()
        page.set_content(html().decode("gb18030").replace(
            "<style>p{margin:0}</style>",
            "<style>body{font-family:'Noto Serif CJK SC';font-size:16px} table,td,th"
            "{border:1px solid #000;border-collapse:collapse}</style>"))
        return page.pdf(format="A4", display_header_footer=True, footer_template=(
            '<div style="font-size:10px;width:100%;text-align:center">- '
            '<span class="pageNumber"></span> -</div>'), header_template="<div></div>",
            margin={"top": "20mm", "bottom": "20mm", "left": "25mm", "right": "25mm"})
    finally:
        browser.close()


def of_a_later_zip_version(data: bytes) -> bytes:
    """``data`` (a zip) with each entry saying it needs a zip version no reader has
    (10.0): Python's zipfile raises NotImplementedError for it, not BadZipFile."""
    out = bytearray(data)
    at = out.find(b"PK\x01\x02")
    while at != -1:
        out[at + 6:at + 8] = (100).to_bytes(2, "little")  # version needed to extract
        at = out.find(b"PK\x01\x02", at + 4)
    return bytes(out)
