"""Every Chinese text of the curated answers: the reply's source line, the import's reasons."""

from __future__ import annotations

SOURCE = "来源：《{source}》（{date}）"
FROM_REVIEW = "对话审核"  # the source a new answer written from a reviewed turn starts with
DATE_MONTH = "{year}年{month}月"
DATE_DAY = "{year}年{month}月{day}日"

# The import of a 常见问题 spreadsheet (``si_agent.curated.sheet``).
NOT_A_SHEET = "无法读取该文件：请上传 .xlsx 或 .csv 格式的常见问题表（{detail}）。"
TOO_LARGE = "文件过大（超过 {limit} MB），请拆分后分批导入。"
TOO_MANY_ROWS = "行数过多（超过 {limit} 行），请拆分后分批导入。"
NO_HEADER = "第1行应为表头，至少包含“问题”和“答案”两列（也可写作“常见问题/问/标准问题”“回答/答复/解答”），没有找到。"
EMPTY_SHEET = "表中没有任何问答。"
ROW = "第{row}行：{reason}"
MISSING = "“{column}”为空"
BAD_DATE = "日期“{value}”无法识别（可写作 2025-06-01、2025/6/1 或 2025年6月）"
TOO_LONG = "“{column}”超过 {limit} 个字"
TOO_MANY_PARAPHRASES = "相似问法超过 {limit} 个"
DUPLICATE = "问题“{question}”与{other}重复"
DUPLICATE_ROW = "表中第{row}行"
DUPLICATE_ANSWER = "已有的常用答案“{question}”"
UNKNOWN_BUSINESS = "业务“{business}”不存在"
MORE_ERRORS = "……另有 {count} 行有问题，请一并修改。"
