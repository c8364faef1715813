"""Server-side checks of a posted page: one message per failed control.

``check_fields`` reads the raw posted values of some fields and returns the
values to store (normalised, keyed by business key) and the errors (keyed by
control id). Field rules (``RULES``) see one value; form checks
(``FORM_CHECKS``) compare fields once each involved field passed on its own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from datetime import date
from typing import Any

from si_agent import validators
from si_agent.demo_backend import clock
from si_agent.demo_backend.seed import PERSONS
from si_agent.demo_portal import texts
from si_agent.demo_portal.forms import FORMS, Field, Form
from si_agent.validators import bank_card, idcard

CLOSED_TRANSFER_CITIES = frozenset({"拉萨市", "西宁市"})
UNSUPPORTED_CARD_PREFIXES = ("6214",)  # e.g. 招商银行 cards: not a partner bank of the portal
_PHONE = re.compile(r"1[3-9]\d{9}")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_POSTCODE = re.compile(r"\d{6}")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_NAME = re.compile(r"[\u4e00-\u9fff·]{2,20}|[A-Za-z][A-Za-z .]{1,39}")
_NAMES_BY_ID = {p.id_number: p.name for p in PERSONS}

# A rule: (field, stripped non-empty value) -> (stored value, error or None).
Rule = Callable[[Field, str], tuple[Any, str | None]]


def _name(field: Field, value: str) -> tuple[Any, str | None]:
    return value, None if _NAME.fullmatch(value) else texts.NAME_FORMAT


def _idcard(field: Field, value: str) -> tuple[Any, str | None]:
    number = value.upper()
    if len(number) != 18 or idcard.problem(number, clock.today()):
        return value, texts.IDCARD_FORMAT
    return number, None


def _phone(field: Field, value: str) -> tuple[Any, str | None]:
    return value, None if _PHONE.fullmatch(value) else texts.PHONE_FORMAT


def _bank_card(field: Field, value: str) -> tuple[Any, str | None]:
    digits = value.replace(" ", "")
    if not (digits.isascii() and digits.isdigit() and 16 <= len(digits) <= 19
            and bank_card.luhn_ok(digits)):
        return value, texts.BANK_CARD_FORMAT
    if digits.startswith(UNSUPPORTED_CARD_PREFIXES):
        return digits, texts.BANK_CARD_UNSUPPORTED
    return digits, None


def _date(field: Field, value: str) -> tuple[Any, str | None]:
    try:
        if not _ISO_DATE.fullmatch(value):
            raise ValueError
        return date.fromisoformat(value).isoformat(), None
    except ValueError:
        return value, texts.DATE_FORMAT.format(label=field.label)


def _past_date(field: Field, value: str) -> tuple[Any, str | None]:
    stored, error = _date(field, value)
    if error is None and stored > clock.today().isoformat():
        error = texts.DATE_FUTURE.format(label=field.label)
    return stored, error


def _city(field: Field, value: str) -> tuple[Any, str | None]:
    result = validators.check("city", value)
    return (result.value, None) if result.ok else (value, texts.CITY_UNKNOWN)


def _transfer_city(field: Field, value: str) -> tuple[Any, str | None]:
    return value, texts.CITY_CLOSED if value in CLOSED_TRANSFER_CITIES else None


def _address(field: Field, value: str) -> tuple[Any, str | None]:
    return value, None if 5 <= len(value) <= 100 else texts.ADDRESS_LENGTH


def _remarks(field: Field, value: str) -> tuple[Any, str | None]:
    return value, None if len(value) <= 200 else texts.REMARKS_LENGTH


def _postcode(field: Field, value: str) -> tuple[Any, str | None]:
    return value, None if _POSTCODE.fullmatch(value) else texts.POSTCODE_FORMAT


def _email(field: Field, value: str) -> tuple[Any, str | None]:
    return value, None if _EMAIL.fullmatch(value) else texts.EMAIL_FORMAT


RULES: dict[str, Rule] = {
    "name": _name, "idcard": _idcard, "phone": _phone, "bank_card": _bank_card,
    "date": _date, "past_date": _past_date, "city": _city, "transfer_city": _transfer_city,
    "address": _address, "remarks": _remarks, "postcode": _postcode, "email": _email,
}

# A form check: (form, stored values by key) -> {field key: error}; it runs only
# when every field it names passed its own checks.
FormCheck = tuple[tuple[str, ...], Callable[[Form, Mapping[str, Any]], dict[str, str]]]


def _person(form: Form, values: Mapping[str, Any]) -> dict[str, str]:
    if _NAMES_BY_ID.get(values["id_number"]) != values["name"]:
        return {"name": texts.NAME_ID_MISMATCH}
    return {}


def _differ(left: str, right: str, message: str):
    def check(form: Form, values: Mapping[str, Any]) -> dict[str, str]:
        if values[left] != values[right]:
            return {}
        return {right: message.format(left=form.field(left).label,
                                      right=form.field(right).label)}

    return (left, right), check


FORM_CHECKS: dict[str, FormCheck] = {
    "person": (("name", "id_number"), _person),
    "transfer_cities_differ": _differ("from_city", "to_city", texts.SAME_CITY),
    "medical_cities_differ": _differ("insured_city", "destination_city",
                                     texts.SAME_MEDICAL_CITY),
}


def check_fields(form: Form, fields: Iterable[Field],
                 raw: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """Check ``fields`` of ``form`` on the raw values ``raw`` (by control id).

    Returns the values to store by business key and the errors by control id,
    in the fields' order.
    """
    fields = tuple(fields)
    values: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for field in fields:
        value, error = _check_one(field, raw.get(field.id, ""))
        values[field.key] = value
        if error:
            errors[field.id] = error
    passed = {f.key for f in fields if f.id not in errors and values[f.key] not in ("", None)}
    for name in form.checks:
        keys, check = FORM_CHECKS[name]
        if set(keys) <= passed:
            for key, error in check(form, values).items():
                errors[form.field(key).id] = error
    order = [f.id for f in fields]
    return values, dict(sorted(errors.items(), key=lambda item: order.index(item[0])))


def _check_one(field: Field, raw: str) -> tuple[Any, str | None]:
    if field.kind == "checkbox":
        ticked = bool(raw)
        return ticked, texts.TICK_COMMITMENT if field.required and not ticked else None
    value = raw.strip()
    if not value:
        if not field.required:
            return "", None
        wording = texts.CHOOSE if field.kind in ("select", "radio") else texts.FILL
        return "", wording.format(label=field.label)
    if field.options:
        option = field.option_for(value)
        if option is None:
            return value, field.unknown_option or texts.UNKNOWN_OPTION.format(label=field.label)
        value = option
    if field.rule is None:
        return value, None
    return RULES[field.rule](field, value)


def _check_names() -> None:
    for form in FORMS.values():
        for name in form.checks:
            if name not in FORM_CHECKS:
                raise ValueError(f"{form.business_id}: unknown form check {name!r}; "
                                 f"valid: {', '.join(FORM_CHECKS)}")
        for f in form.fields:
            if f.rule is not None and f.rule not in RULES:
                raise ValueError(f"{form.business_id}.{f.id}: unknown rule {f.rule!r}; "
                                 f"valid: {', '.join(RULES)}")


_check_names()
