"""A recorded conversation as a replay transcript (``si_agent.replay``) for ``tests/dialogues*``.

Every masked value of a citizen's message (``TurnEvent.input_spans``) is replaced by a
demo value of the same kind that the field's validator accepts: the demo backend's
people (docs/demo-data.md) in order of appearance, so the same masked value gets the
same demo value throughout and an ID number, name, phone and card seen first belong
to the same demo person; a value that was refused gets a demo value that is refused
the same way (an ID number whose check digit is wrong). Each turn expects what the
recorded one did: state, business, awaited field and every field value it stored (the
demo value for a masked one). A turn a reviewer marked wrong expects what the reviewer
wrote the reply should contain instead (or nothing: a comment says so), so the
transcript fails until the assistant is fixed. A submission that failed in the
conversation is made to fail the same way (``backend: {fail_next: 1}``).

A conversation with a photo upload, or with a value a staff member gave in a hand-off,
cannot be exported (a transcript has only what citizens typed): ``ExportRefused``.
"""

from __future__ import annotations

from collections.abc import Mapping

import yaml

from si_agent.audit.log import CLOSED_TYPES
from si_agent.config.model import Business, FieldDef
from si_agent.turns.log import Conversation
from si_agent.turns.model import Span, TurnEvent
from si_agent.validators import check

# The demo backend's people (si_agent/demo_backend/seed.py, with their check digits):
# name, ID number, mobile, bank card.
DEMO_PEOPLE: tuple[tuple[str, str, str, str], ...] = (
    ("张伟", "330122196303150178", "13800138001", "6222021202004568821"),
    ("李秀英", "310104196806120281", "13800138002", "6217001210012345672"),
    ("王芳", "320583199008230462", "13800138003", "6228480402564890018"),
    ("刘洋", "330102199503080133", "13800138004", "6214830571234567896"),
    ("陈静", "320102198809150628", "13800138005", "6013820800012345672"),
    ("赵磊", "110105200001100353", "13800138006", "6222600110012345679"),
)
_PERSON_PART = {"name": 0, "idcard": 1, "phone": 2, "bank_card": 3}
# Free-text values that pass the usual validators, tried after a field's own example.
DEMO_TEXTS = ("浙江省杭州市西湖区文三路100号", "江苏省苏州市姑苏区人民路200号", "示例说明文字")


class ExportRefused(ValueError):
    """The conversation cannot become a transcript; ``reason`` says why (Chinese)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class DemoValues:
    """Demo values for one conversation's masked values (the same one for the same mask)."""

    def __init__(self, catalog: Mapping[str, Business]) -> None:
        self.catalog = catalog
        self._given: dict[tuple[str, str, bool], str] = {}
        self._people: dict[str, int] = {}  # kind -> demo people used so far

    def value(self, event: TurnEvent, span: Span) -> str:
        masked = event.input[span.start:span.end]
        field = self._field(event.business, span.field)
        kind = field.type if field is not None else span.kind
        refused = span.valid is False
        key = (kind, masked, refused)
        if key not in self._given:
            self._given[key] = self._new(kind, field, refused)
        return self._given[key]

    def _field(self, business: str | None, key: str | None) -> FieldDef | None:
        b = self.catalog.get(business or "")
        if b is None or key is None or key not in b.field_keys:
            return None
        return b.field(key)

    def _new(self, kind: str, field: FieldDef | None, refused: bool) -> str:
        if kind == "number":  # a long number no field took: an ID number one digit short
            return DEMO_PEOPLE[self._people.get("idcard", 0) % len(DEMO_PEOPLE)][1][:-1]
        if kind in _PERSON_PART and not (refused and kind in ("name", "phone")):
            # A refused value takes no demo person: the next accepted one gets it.
            person = self._people.get(kind, 0) % len(DEMO_PEOPLE) if refused \
                else self._next(kind)
            value = DEMO_PEOPLE[person][_PERSON_PART[kind]]
            if refused:  # the check digit made wrong
                last = value[-1]
                value = value[:-1] + ("1" if last != "1" else "2")
            return value
        if refused:  # no value of the kind's own: one its validator refuses too
            return {"phone": "1234567"}.get(kind, "？？")
        candidates = [field.example] if field is not None and field.example else []
        for text in [*candidates, *DEMO_TEXTS]:
            if field is None or check(field.type, text, **field.validator_options()).ok:
                return text
        return DEMO_TEXTS[0]

    def _next(self, kind: str) -> int:
        n = self._people.get(kind, 0)
        self._people[kind] = n + 1
        return n % len(DEMO_PEOPLE)


def to_transcript(conversation: Conversation, catalog: Mapping[str, Business],
                  name: str | None = None) -> tuple[dict, dict[int, list[str]]]:
    """The transcript (a dict for ``si_agent.replay``) and the comments for each turn."""
    uploads = [t.event.turn for t in conversation.turns if t.event.channel == "upload"]
    if uploads:
        raise ExportRefused(f"第{uploads[0]}轮是上传的照片：对话记录只能导出文字消息，"
                            "含照片的对话请手工编写测试。")
    staffed = [t.event.turn for t in conversation.turns if t.event.channel == "staff"]
    if staffed:  # a transcript replays what citizens typed; this value no citizen typed
        raise ExportRefused(f"第{staffed[0]}轮是人工客服代为填写的信息：对话记录只能导出市民发送的"
                            "文字消息，这段对话请手工编写测试。")
    demo = DemoValues(catalog)
    stored: dict[str, str] = {}  # field key -> the demo value put in its place
    turns: list[dict] = []
    comments: dict[int, list[str]] = {}
    for n, view in enumerate(conversation.turns):
        e = view.event
        text = e.input
        for span in sorted(e.input_spans, key=lambda s: s.start, reverse=True):
            value = demo.value(e, span)
            text = text[:span.start] + value + text[span.end:]
            if span.field is not None and span.valid is not False:
                stored[span.field] = value
        turn: dict = {"user": text}
        notes: list[str] = []
        if e.job is not None and e.job.status == "failed" and e.outcome == "failed":
            turn = {"backend": {"fail_next": 1, "status": 503 if e.job.retryable else 400},
                    **turn}
            notes.append(f"原对话中提交失败：{e.job.error or '（无原因）'}")
        if e.channel == "voice":
            notes.append("原对话是语音输入（这里按文字重放）")
        if e.engine not in ("rules", "read_back", ""):
            notes.append(f"原对话由 {e.engine} 引擎决定；按本测试所在目录的引擎重放")
        if view.review is not None:
            notes.append(f"审核标记为错误（{view.review.actor}）：{view.review.note or '（未写原因）'}")
            if view.review.expected:
                turn["expect"] = {"reply_contains": [view.review.expected]}
            else:
                notes.append("请在 expect 中写下正确的结果")
        else:
            turn["expect"] = _expect(e, catalog.get(e.business or ""), stored)
        comments[n] = notes
        turns.append(turn)
    first = conversation.turns[0].event
    business = catalog.get(conversation.businesses[0]) if conversation.businesses else None
    title = name or f"{business.name if business else '对话'}，来自对话审核 {first.at:%Y-%m-%d}"
    return {"name": title, "turns": turns}, comments


def _expect(e: TurnEvent, business: Business | None, stored: Mapping[str, str]) -> dict:
    expect: dict = {"state": e.state_after, "business": e.business}
    if e.awaiting is not None or e.state_after != "idle":
        expect["awaiting"] = e.awaiting
    fields: dict = {}
    types = {f.key: f.type for f in business.fields} if business else {}
    for change in e.fields:
        if change.status != "collected" or change.value is None:
            continue
        kind = types.get(change.key)
        if kind in CLOSED_TYPES and kind != "multi_enum":
            fields[change.key] = change.value
        elif change.key in stored:
            fields[change.key] = stored[change.key]
    if fields:
        expect["fields"] = fields
    return expect


def transcript_yaml(conversation: Conversation, catalog: Mapping[str, Business],
                    name: str | None = None) -> str:
    """``to_transcript`` as YAML text, with its comments, ready for ``tests/dialogues*``."""
    data, comments = to_transcript(conversation, catalog, name)
    out = [f"# 由工作人员控制台的对话审核导出（对话 {conversation.id}）；"
           "市民信息已换成演示数据（docs/demo-data.md）。\n",
           _dump({"name": data["name"]}), "turns:\n"]
    for n, turn in enumerate(data["turns"]):
        out.extend(f"  # {line}\n" for line in comments.get(n, []))
        block = _dump([turn])
        out.append("".join(f"  {line}\n" for line in block.splitlines()))
    return "".join(out)


def _dump(data: object) -> str:
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=1000)
