"""The assistant's own small-talk texts, which staff may override in ``businesses/_assistant.yaml``.

``AssistantTexts`` carries every text with a built-in default, so a deployment
without the file works. ``load_assistant_texts(business_dir)`` reads
``_assistant.yaml`` if present and merges it over the defaults; the file goes
through the same steps as a business file (safe YAML, the JSON Schema
``assistant.schema.json``, then meaning checks: each text may only use the
placeholders listed in ``PLACEHOLDERS`` for its key), and every problem is a
``ConfigError`` located as ``file:line: path: message``.

Placeholders are filled when a text is shown (``si_agent.replies.render``):

=====================  ==================================================
key                    placeholders
=====================  ==================================================
greeting               {examples}: up to three business names from the catalog
closing                none
handoff                {handoff}: the contact from the setting SI_HANDOFF_TEXT
self_intro             none
services               {services}: the catalog's business names, grouped by kind
nothing_pending        {services}: as for services
why_default            {business}, {label}: business name, field label
refusal_offer          none
ineligible_offer       {label}: the field; {handoff}: the contact from SI_HANDOFF_TEXT
switch_ask             {current}, {filled}, {target}: current business,
                       number of fields filled, business asked for
switch_resume_offer    {business}: the business kept aside
switch_resumed         {business}: the business taken up again
switch_kept            {current}: the business kept after a declined switch
=====================  ==================================================
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

import jsonschema
from pydantic import BaseModel, ConfigDict, model_validator

from si_agent.config.loader import ASSISTANT_FILE, read_document, schema_errors
from si_agent.config.meaning import FIELD_TEXT_PLACEHOLDERS
from si_agent.config.templates import template_errors
from si_agent.config.yamlio import format_path
from si_agent.errors import ConfigError, ConfigErrors

PLACEHOLDERS: Mapping[str, frozenset[str]] = MappingProxyType({
    "greeting": frozenset({"examples"}),
    "closing": frozenset(),
    "handoff": frozenset({"handoff"}),
    "self_intro": frozenset(),
    "services": frozenset({"services"}),
    "nothing_pending": frozenset({"services"}),
    "why_default": FIELD_TEXT_PLACEHOLDERS,
    "refusal_offer": frozenset(),
    "ineligible_offer": frozenset({"label", "handoff"}),
    "switch_ask": frozenset({"current", "filled", "target"}),
    "switch_resume_offer": frozenset({"business"}),
    "switch_resumed": frozenset({"business"}),
    "switch_kept": frozenset({"current"}),
})


class AssistantTexts(BaseModel):
    """The assistant's own texts; every one has a default (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    greeting: str = (
        "您好，我是社保智能帮办助手，可以帮您查询和办理社保业务。"
        "例如：{examples}。请问您想办理什么？"
    )
    closing: str = "不客气，祝您生活愉快！还有其他社保业务需要办理，随时告诉我。"
    handoff: str = (
        "如需人工服务或反映问题，请联系{handoff}；"
        "也可以携带身份证到就近的社保经办窗口咨询办理。"
    )
    self_intro: str = "我是社保智能帮办助手，可以帮您查询社保信息、在线办理社保业务，并解答常见的社保问题。"
    services: str = "我可以帮您办理这些业务：\n{services}\n直接告诉我业务名称或您要办的事即可。"
    nothing_pending: str = (
        "目前没有需要您确认或继续办理的业务。请问您想办理哪一项？\n{services}\n"
        "直接告诉我业务名称或您要办的事即可。"
    )
    why_default: str = "办理【{business}】需要您的{label}，用于核实身份和办理业务，信息仅用于本次办理。"
    refusal_offer: str = "如果暂时不方便提供，可以回复“取消”结束办理。"
    ineligible_offer: str = (
        "如果情况确实如此，可以回复“取消”结束办理，或联系{handoff}咨询您的具体情况；"
        "如果{label}其实是其他情况，请按实际情况重新回复。"
    )
    switch_ask: str = (
        "您正在办理【{current}】（已填写{filled}项），要先办理【{target}】吗？当前业务会为您保留。"
    )
    switch_resume_offer: str = "刚才的【{business}】还没办完，要继续吗？"
    switch_resumed: str = "好的，继续办理【{business}】。"
    switch_kept: str = "好的，我们继续办理【{current}】。"

    @model_validator(mode="after")
    def _known_placeholders(self) -> AssistantTexts:
        problems = [f"{key}: {message}" for key, message in placeholder_errors(self.model_dump())]
        if problems:
            raise ValueError("; ".join(problems))
        return self


def load_schema() -> dict[str, Any]:
    """The assistant-texts JSON Schema shipped in this package."""
    text = resources.files("si_agent.config").joinpath("assistant.schema.json").read_text("utf-8")
    return json.loads(text)


def load_assistant_texts(business_dir: str | Path) -> AssistantTexts:
    """The texts of ``business_dir/_assistant.yaml`` over the defaults (the defaults if absent).

    Raises ``ConfigErrors`` listing every problem of the file.
    """
    texts, errors = check_assistant_texts(business_dir)
    if errors:
        raise ConfigErrors(errors)
    return texts


def check_assistant_texts(business_dir: str | Path) -> tuple[AssistantTexts, list[ConfigError]]:
    """The texts and every problem of the file (what ``si-agent validate`` prints).

    With problems, the texts returned are the defaults.
    """
    directory = Path(business_dir)
    path = directory / ASSISTANT_FILE
    misnamed = directory / (Path(ASSISTANT_FILE).stem + ".yml")
    if misnamed.is_file():
        return AssistantTexts(), [ConfigError(
            str(misnamed), None, "", f"the assistant texts file must be named {ASSISTANT_FILE}; "
            "this file is ignored")]
    if not path.is_file():
        return AssistantTexts(), []
    doc, errors = read_document(path)
    if doc is None:
        return AssistantTexts(), errors

    def error(where: tuple[str | int, ...], message: str) -> ConfigError:
        return ConfigError(str(path), doc.line_of(where), format_path(where), message)

    validator = jsonschema.Draft202012Validator(load_schema())
    errors = [error(where, msg) for where, msg in schema_errors(validator, doc.data)]
    if not errors:
        errors = [error((key,), msg) for key, msg in placeholder_errors(doc.data)]
    if errors:
        return AssistantTexts(), sorted(errors, key=lambda e: e.line or 0)
    return AssistantTexts(**doc.data), []


def placeholder_errors(texts: Mapping[str, str]) -> Iterator[tuple[str, str]]:
    """(key, message) for each text using a placeholder not allowed for its key."""
    for key, text in texts.items():
        for message in template_errors(text, PLACEHOLDERS[key]):
            yield key, message
