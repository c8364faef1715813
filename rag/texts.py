"""Every Chinese text the knowledge base says, in one place."""

from __future__ import annotations

APOLOGY = "抱歉，知识库暂时无法使用，请稍后再试或拨打12333咨询。"
# While the store is opened or built in the background (``KnowledgeBase.prepare``).
BUILDING = "知识库正在准备，请稍后再问；办理业务不受影响。"
SOURCE_TITLE = "《{title}》"
AS_OF = "（{year}年{month}月）"  # when the document's facts were checked
# What a grounded model answers when the passages do not answer the question.
NOT_FOUND = "知识库中没有找到相关内容"
# A question the knowledge base must not answer: instructions to the assistant, someone
# else's personal data, forged documents.
REFUSED = ("抱歉，这个问题我不能回答。我可以解答社保政策问题、帮您办理社保业务；"
           "其他问题请拨打12333社保服务热线。")
# Before the extractive answer when the model's answer could not be checked against the
# passages (it cited none, or a passage it was not given).
UNSURE = "这个问题我不能完全确定，以下是知识库中最相关的原文，供您参考（如需确认，可拨打12333咨询）："
SOURCES = "来源：{titles}"
NUMBERED_SOURCE = "[{n}]《{title}》"
ELLIPSIS = "……"
# The heading shown before a passage that does not start its document.
PASSAGE_HEADING = "【{heading}】"

# Why an uploaded file was not taken (``rag.formats.FileRefused``), as staff read it.
FILE_REFUSED = {
    "too_large": "文件超过 {size} 的上限，未上传。请拆分文件或压缩其中的图片后再上传。",
    "empty": "文件是空的，未上传。",
    "unsupported_type": "不支持 {suffix} 格式，未上传。请上传 PDF、Word（.docx）、Excel（.xlsx）、"
                        "网页（.html）或 Markdown（.md）文件。",
    "type_mismatch": "文件扩展名是 {suffix}，但内容是{actual}，未上传。请确认选对了文件。",
    "foreign_file": "这不是文档，而是{actual}，未上传。",
    "binary_file": "文件内容不是文字（可能是程序或其他二进制文件），未上传。",
    "broken_zip": "文件已损坏（压缩结构不完整，可能没有下载完），无法打开，未上传。",
    "zip_bomb": "文件解压后过大或结构异常（疑似压缩炸弹），为安全起见未打开，未上传。",
    "encrypted_pdf": "PDF 设置了打开密码，无法读取内容，未上传。请上传未加密的版本。",
    "scanned_pdf": "PDF 中没有可提取的文字（可能是扫描件或图片），未上传。"
                   "请上传带文字层的 PDF，或 Word 版本。",
    "no_text": "文件中没有可用的文字内容，未上传。",
    "unmapped_pdf": "PDF 的字体没有文字编码信息，提取出来是乱码，未上传。请上传 Word 版本，"
                    "或用原软件重新导出 PDF。",
    "broken_pdf": "PDF 文件已损坏或格式不规范，无法读取，未上传。",
    "broken_docx": "Word 文件已损坏，无法读取，未上传。可用 Word 打开后另存为 .docx 再试。",
    "broken_xlsx": "Excel 文件已损坏，无法读取，未上传。可用 Excel 打开后另存为 .xlsx 再试。",
    "broken_html": "网页文件结构异常，无法读取，未上传。",
    "unknown_encoding": "无法识别文件的文字编码（应为 UTF-8 或 GBK），未上传。",
    "too_many_pages": "PDF 超过 {pages} 页，未上传。请拆分后再上传。",
    "too_many_cells": "Excel 表格超过 {cells} 个单元格，未上传。请只保留需要的工作表。",
    "too_much_text": "转换后的文字超过 {chars} 字，未上传。请拆分文件。",
}
# Notes shown with a converted file.
PDF_PLAIN_TEXT = "这份 PDF 的字体需要另一种方式读取：已提取文字，但表格和标题字号未能识别，请核对转换结果。"
