"""Long numbers heard in a spoken message are read back before they are stored.

Recognisers drop and swap digits. A spoken message (``Flow.spoken``) whose ID,
phone or bank-card value validates is not stored at once: the value is kept in
``Session.heard`` and the reply reads its last four digits back ("您说的身份证号
后四位是0178，对吗？"); a value that does not validate is asked again as usual.
The next message settles it: yes ("对", "是的") stores the values through the
validators again; no ("不对") drops them and asks for the first again; anything
else drops them (the fields stay pending) and is handled as a message
(``handlers.fields.settle_heard``).
"""

from __future__ import annotations

import re

from si_agent import replies
from si_agent.config.model import MASKED_TYPES, Business, FieldDef
from si_agent.engine import lexicon
from si_agent.flow.moves import Flow

_REPEATED = re.compile(r"(.+?)\1+")
NO_WORDS = frozenset({"不对", "不是", "错了", "不正确", "有误", "说错了", "不对不对", "不是的"})


def needed(t: Flow, field: FieldDef) -> bool:
    """Whether a valid value for ``field`` must be read back before it is stored."""
    return t.spoken and field.type in MASKED_TYPES


def hold(t: Flow, business: Business, heard: dict[str, str]) -> None:
    """Keep the heard values and read them back; nothing else is asked this turn."""
    t.s.heard = dict(heard)
    t.s.awaiting = next(iter(heard))
    items = "，".join(replies.render(replies.READ_BACK_ITEM, label=business.field(k).label,
                                     tail=str(v)[-4:]) for k, v in heard.items())
    t.st.parts.append(replies.render(replies.READ_BACK, items=items))
    t.st.asked = True


def answer(text: str) -> bool | None:
    """True for yes, False for no, None for anything else."""
    word = lexicon.bare(text)
    repeated = _REPEATED.fullmatch(word)  # "对对对", "是的是的", "不对不对不对"
    if repeated:
        word = repeated.group(1)
    if word in NO_WORDS:
        return False
    if word in lexicon.CONFIRM:
        return True
    return None
