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
