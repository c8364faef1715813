"""Asking what can be done here: "有哪些业务可以办", "你们能干啥", "都能办些什么事",
"业务菜单", "能查些什么", "除了查养老金还能弄啥", "你这嘎达都能整啥业务",
"你哋可以幫我辦啲咩嘢", "除了算这个还有啥别的功能没有".

The answer is the services list (``small_talk`` of kind ``services``), in every
state: idle, done, and in the middle of a business (which stays, its field asked
again). What counts is the question's form, not one sentence:

- a menu word: 菜单, 业务/服务/功能 + 列表/清单/目录 (not 目录 alone: 医保目录);
- a capability asked of the assistant: 能/可以/会 (+ 帮我) + 办/干/做/查/弄/管 (+ 些/点,
  别的) + 什么/啥/哪些/嘛 ("还能办点别的啥");
- the list asked for: 有 + 哪些/什么/啥 + 业务/服务/功能 ("都有啥业务"), 办/查 + 的 +
  有哪些 ("能在线办的有哪些"), "我能办哪些业务", "有啥能办的";
- anything else, asked yes/no: "还可以办别的吗", "还有其他业务吗", "还能干点别的不",
  "还有啥别的服务没".

The capability and the list count only when said of the assistant: at the start of
a clause or after 你们/这里/帮办/都/还 …, never after a thing ("电子社保卡能做什么",
"社保卡有哪些功能" are questions about the card, for the knowledge base).
"""

from __future__ import annotations

import re

from si_agent.core import actions as T
from si_agent.core.decision import Rule
from si_agent.engine.rules.calls import Ruled, small_talk_call

# Where a question about the assistant may stand: a clause start, or after the
# assistant, the place, or an adverb ("你们这儿都有啥业务", "对了你们还能办些啥", "这能办啥").
# (哋: Cantonese 们; 嘎达: 东北 "this place"; 遮: 闽南 "here"; 总共/一共: all told)
_OF_ASSISTANT = r"(?:^|(?<=[你您们哋这里儿边达办手都还那就也又遮共台，,。;；！!？?\s…]))"
# "what", with the Cantonese 咩/乜嘢 ("可以幫我辦啲咩嘢"), 湘 么子, 客家 麼个, 闽南 啥物
_WHAT = r"(?:什么|啥物|啥|哪些|嘛|哪几|咩|乜|么子|麼个|么个|哪样)"
_MENU = r"(?:业务|服务|功能|事项)(?:菜单|列表|清单|目录|大全|一览)|菜单"
_CAPABILITY = (
    _OF_ASSISTANT + r"(?:都|还|也)?(?:能|可以|会当|会)(?:帮(?:我|您|你|忙)?|给我|替我|在线)?"
    r"(?:办|干|做|查|弄|整|搞|处理|提供|管)(?:理|询)?(?:些|点|一些|啲)?(?:别的|其他|其它)?"
    + _WHAT +
    # "你都会些啥" (not "都会什么时候到账")
    r"|" + _OF_ASSISTANT + r"(?:都|还|也)?会(?:些|点)?(?:什么|啥)(?!时)")
# What the citizen can do here: "我能办哪些业务" (the noun says it is about services).
_WHAT_I_CAN = (r"(?:^|(?<=[我俺你您们这里儿边都还也]))(?:能|可以)(?:办理?|查询?|做)"
               r"(?:哪些|什么|啥|哪几[个项种])(?:业务|服务|事项|事)")
_LIST = (
    _OF_ASSISTANT + r"(?:都|还)?(?:有|提供|开通了?|支持)(?:哪些|什么|啥|些啥|些什么|哪几[个项种])"
    r"(?:业务|服务|功能|事项)"
    r"|(?:办|查|做)的(?:业务|服务|事)?(?:都)?有(?:哪些|什么|啥)"
    r"|" + _OF_ASSISTANT + r"有" + _WHAT + r"(?:能|可以|好(?=办(?!法)))(?:办|查|做)"
    # "你这儿都管哪些事儿", "你们负责什么业务" (the noun says it is about services)
    r"|" + _OF_ASSISTANT + r"(?:都|还|也)?(?:管|负责|受理|处理|经办)(?:些|点)?"
    r"(?:哪些|什么|啥|哪几[个项种]|哪一?类)(?:事|业务|服务|事项)")
# Anything else to do, asked yes/no: "还可以办别的吗", "还有其他业务吗".
# ("除了算这个还有啥别的功能没有": after 这个, the business in progress, too)
_OTHER = (r"(?:" + _OF_ASSISTANT + r"|(?<=这个))(?:还|另外)(?:能|可以|会)?(?:办|查|做|有|干|弄|整|搞|管|处理)(?:点|些)?"
          + _WHAT + r"?(?:别的|其他|其它)"
          r"(?:业务|服务|功能|事)?(?:吗|么|不|没)")
SERVICES = re.compile(f"{_MENU}|{_CAPABILITY}|{_WHAT_I_CAN}|{_LIST}|{_OTHER}")


def asks_for_services(text: str) -> bool:
    """Whether ``text`` asks which services the assistant offers."""
    return bool(SERVICES.search(text))


def decide(text: str, offered: frozenset[str]) -> Ruled | None:
    """The services list, if ``text`` asks for it (before a business it names is
    matched or switched to: "除了查养老金，还能弄啥")."""
    if asks_for_services(text) and T.SMALL_TALK in offered:
        return [small_talk_call("services")], Rule.SMALL_TALK, "asks which services"
    return None
