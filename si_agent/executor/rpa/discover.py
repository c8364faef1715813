"""Field discovery: a business declared with ``fields: discover`` gets its fields from
the web form itself, the first time it is used.

The required controls of the form's first page become fields, except those the
business always sets (``fixed``). For each:

- **key**: a key whose synonyms (``rpa_synonyms.yaml``) include the label, else the
  label in pinyin (``联系电话`` → ``lian_xi_dian_hua``);
- **type**: from the control (date input → ``date``, select or radio → ``enum`` with
  its options, each also accepted without 市 or a leading 中国), then from the label
  (身份证/证件号码 → ``idcard``, 手机/电话 → ``phone``, 银行卡 → ``bank_card``,
  姓名 → ``name``, 日期 → ``date``), else ``text``;
- **prompt**: 请提供… / 请选择…：options.

Staff pin anything by the form's label in ``field_overrides``. The result is cached
with a hash of the controls (label, kind, required, options) under
``$SI_DATA_DIR/rpa/forms/<business id>.json``; every job compares the form it sees
with it and discovers again when the form changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from si_agent.config.model import Business, FieldDef
from si_agent.executor.rpa.form import Control, fold, normalize, synonyms

_TYPES_BY_LABEL = (
    (re.compile(r"身份证|证件号|身份号码|社会保障号"), "idcard"),
    (re.compile(r"手机|电话"), "phone"),
    (re.compile(r"银行卡|银行账号|收款账号|金融账号|账号"), "bank_card"),
    (re.compile(r"姓名|申请人$"), "name"),
    (re.compile(r"日期"), "date"),
)
# A key known from the synonym table has a known type, whatever the label says.
_TYPES_BY_KEY = {"id_number": "idcard", "bank_card": "bank_card", "phone": "phone",
                 "new_phone": "phone", "name": "name"}


class DiscoveredForm(BaseModel):
    """What a form asks for, as business fields, and the hash of what was seen."""

    url: str
    hash: str
    fields: list[dict[str, Any]]

    def business(self, business: Business) -> Business:
        """``business`` with these fields, and what staff pinned by label on top."""
        pinned = {normalize(label): o for label, o in business.field_overrides.items()}
        fields = tuple(FieldDef.model_validate({**f, **pinned.get(normalize(f["label"]), {})})
                       for f in self.fields)
        return business.model_copy(update={"fields": fields})


def form_hash(controls: list[Control]) -> str:
    seen = [(c.name, c.kind, c.required, [o.label for o in c.options]) for c in controls]
    return hashlib.sha256(json.dumps(seen, ensure_ascii=False).encode()).hexdigest()[:16]


def infer_fields(controls: list[Control], fixed: Mapping[str, Any],
                 overrides: Mapping[str, Mapping[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Business fields (as YAML would write them) for the form's required controls;
    ``overrides`` (staff's, by label) on top, as ``DiscoveredForm.business`` does."""
    pinned = {normalize(label): dict(o) for label, o in (overrides or {}).items()}
    keys_by_label = {label: key for key, labels in synonyms().items() for label in labels}
    fields: list[dict[str, Any]] = []
    taken: set[str] = set()
    always = {fold(k) for k in fixed}
    for control in controls:
        name = control.name
        if not control.required or control.folded in always or control.kind in (
                "checkbox", "checkboxes"):
            continue
        field = _infer(control, keys_by_label.get(name) or _pinyin_key(name))
        field.update(pinned.get(name, {}))
        if field["key"] in taken:  # two controls read as one key: keep both apart
            field["key"] = f"{field['key']}_{len(fields) + 1}"
        taken.add(field["key"])
        fields.append(field)
    return fields


def _infer(control: Control, key: str) -> dict[str, Any]:
    label = control.name
    field: dict[str, Any] = {"key": key, "label": label}
    if control.kind in ("select", "radio") and control.options:
        field["type"] = "enum"
        field["options"] = [_option(o.label) for o in control.options]
        names = "、".join(o.label for o in control.options)
        field["prompt"] = f"请选择{label}：{names}。"
        return field
    kind = "date" if control.kind == "date" else _TYPES_BY_KEY.get(key) or (
        "date" if key.endswith("_date") else None) or next(
        (t for pattern, t in _TYPES_BY_LABEL if pattern.search(label)), "text")
    field["type"] = kind
    example = "（例如“2026-01-31”）" if kind == "date" else ""
    field["prompt"] = f"请提供{label}{example}。"
    return field


def _option(label: str) -> dict[str, Any]:
    aliases = {label.removesuffix("市"), label.removeprefix("中国")} - {label, ""}
    return {"value": label, "aliases": sorted(aliases)} if aliases else {"value": label}


def _pinyin_key(label: str) -> str:
    from pypinyin import lazy_pinyin

    key = "_".join(p for p in lazy_pinyin(label) if p.isascii() and p.isalnum()).lower()
    key = re.sub(r"[^a-z0-9_]", "", key) or "field"
    return key if key[0].isalpha() else f"f_{key}"


def cache_path(root: Path, business_id: str) -> Path:
    return root / "forms" / f"{business_id}.json"


def load_cached(root: Path, business_id: str) -> DiscoveredForm | None:
    """The cached discovery, or None (none yet, or unreadable: read the form again)."""
    path = cache_path(root, business_id)
    try:
        return DiscoveredForm.model_validate_json(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None


def save(root: Path, business_id: str, form: DiscoveredForm) -> None:
    """Write the cache whole or not at all (another process may be reading it)."""
    path = cache_path(root, business_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_suffix(f".{os.getpid()}.tmp")
    scratch.write_text(form.model_dump_json(indent=1), "utf-8")
    os.replace(scratch, path)


def as_yaml(fields: list[dict[str, Any]]) -> str:
    """The ``fields:`` block staff would write for these fields."""
    import yaml

    return yaml.safe_dump({"fields": fields}, allow_unicode=True, sort_keys=False)
