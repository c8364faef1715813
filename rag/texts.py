"""Every Chinese text the knowledge base says, in one place."""

from __future__ import annotations

APOLOGY = "抱歉，知识库暂时无法使用，请稍后再试或拨打12333咨询。"
SOURCE_TITLE = "《{title}》"
SOURCES = "来源：{titles}"
NUMBERED_SOURCE = "[{n}]《{title}》"
ELLIPSIS = "……"
# The heading shown before a passage that does not start its document.
PASSAGE_HEADING = "【{heading}】"
