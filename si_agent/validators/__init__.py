"""Field validators: judge a citizen's answer, find values in a sentence, mask them.

    check("phone", "138 1234 5678")        -> Result(ok=True, value="13812345678")
    check("idcard", "33010619900101123")   -> Result(ok=False, error="身份证号码应为18位，这里是17位。")
    extract("city", "从杭州转到苏州")        -> [Found("杭州市", 1, 3, "杭州"), Found("苏州市", 4, 6, "苏州")]
    mask("phone", "13812345678")           -> "138****5678"

One module per type family (``idcard``, ``phone``, ``bank_card``, ``dates``,
``numbers``, ``choices``, ``city``, ``name``, ``text``); every type is a
:class:`~si_agent.validators.base.Validator` in the table below. More types
come from ``register_validator`` and the ``si_agent.validators`` entry points
(a ``Validator`` object, or a factory returning one); a business YAML may use
any registered type, and an unknown one is a located error at load. Options are
keywords, all optional, ignored by types that do not use them (see
``FieldDef.validator_options``): ``pattern``, ``options``, ``min``, ``max``,
``min_length``, ``max_length``, ``not_future``, ``today``, ``date_span`` and
``buckets``.
Diagnoses are in ``messages``.
"""

from __future__ import annotations

import logging
import threading
from importlib.metadata import entry_points
from typing import Any

from ..errors import DefinitionError, UnknownBackendError
from . import (
    bank_card,
    choices,
    city,
    dates,
    idcard,
    messages,
    name,
    numbers,
    phone,
    ranges,
    spoken,
    text,
)
from .base import Found, Result, Validator, fold_width, invalid, normalize
from .masking import mask as _mask

__all__ = ["TYPES", "Found", "Result", "Validator", "check", "extract", "field_types", "mask",
           "register_validator"]

log = logging.getLogger(__name__)
ENTRY_POINT_GROUP = "si_agent.validators"

_VALIDATORS: dict[str, Validator] = {
    "idcard": Validator(idcard.check, idcard.extract),
    "phone": Validator(phone.check, phone.extract),
    "year": Validator(dates.check_year, dates.extract_year),
    "date": Validator(dates.check_date, dates.extract_date),
    "integer": Validator(numbers.check_integer, numbers.extract_integer),
    "number": Validator(numbers.check_number, numbers.extract_number),
    "enum": Validator(choices.check, choices.extract),
    "city": Validator(city.check, city.extract),
    "name": Validator(name.check, name.extract),
    "bank_card": Validator(bank_card.check, bank_card.extract),
    "text": Validator(text.check, text.extract),
    "multi_enum": Validator(choices.check_many, choices.extract_many),
    "bucket": Validator(ranges.check, ranges.extract),
}

TYPES: tuple[str, ...] = tuple(_VALIDATORS)  # the built-in types
_IDENTIFIERS = frozenset({"idcard", "phone", "bank_card"})
_lock = threading.Lock()
_plugins_loaded = False


def register_validator(type: str, validator: Validator) -> None:
    """Make ``type`` usable in business YAML; built-in types cannot be replaced."""
    if type in TYPES:
        raise DefinitionError(f"field type {type!r} is built in and cannot be replaced")
    if not isinstance(validator, Validator):
        raise DefinitionError(f"field type {type!r}: expected a Validator(check, extract)")
    with _lock:
        _VALIDATORS[type] = validator


def field_types() -> tuple[str, ...]:
    """Every usable field type: built-ins, registered ones and entry points."""
    _load_plugins()
    return tuple(_VALIDATORS)


def _load_plugins() -> None:
    global _plugins_loaded
    if _plugins_loaded:
        return
    with _lock:
        if _plugins_loaded:
            return
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if ep.name in _VALIDATORS:
                log.error("field type entry point %r is built in (or already registered); "
                          "ignored", ep.name)
                continue
            try:
                obj = ep.load()
                validator = obj if isinstance(obj, Validator) else obj()
            except Exception as exc:  # a broken plug-in must not take the others down
                log.error("field type entry point %r cannot be loaded: %s", ep.name, exc)
                continue
            if isinstance(validator, Validator):
                _VALIDATORS[ep.name] = validator
            else:
                log.error("field type entry point %r is not a Validator", ep.name)
        _plugins_loaded = True


def _validator(type: str) -> Validator:
    found = _VALIDATORS.get(type) if isinstance(type, str) else None
    if found is None:
        _load_plugins()
        found = _VALIDATORS.get(type) if isinstance(type, str) else None
    if found is None:
        raise UnknownBackendError("field type", str(type), field_types())
    return found


def check(type: str, raw: str, **options: Any) -> Result:
    """Judge a whole answer as a value of ``type``.

    The answer is stripped and NFKC-normalised first; the result holds the
    normalised value or a Chinese diagnosis. Raises ``UnknownBackendError``
    for an unknown type.
    """
    validator = _validator(type)
    value = normalize("" if raw is None else str(raw))
    if not value:
        return invalid(messages.EMPTY)
    result = validator.check(value, **options)
    if result.ok or not _reads_spoken(type, options):
        return result
    reading = spoken.read(value, min_run=1).text
    if reading == value:
        return result
    # A number said digit by digit ("三三零一…"): judged as digits, so a wrong
    # check digit gets the field's own diagnosis.
    spoken_result = validator.check(reading, **options)
    return spoken_result if spoken_result.ok or type in _IDENTIFIERS else result


def extract(type: str, text: str, **options: Any) -> list[Found]:
    """Every valid value of ``type`` in a sentence, in order, not overlapping.

    Spans index the original ``text``, and ``raw`` is the original slice.
    """
    validator = _validator(type)
    if not text:
        return []
    folded = fold_width(text)
    if type in _IDENTIFIERS:
        found = _read_back(type, spoken.extract_read(validator.extract, folded, **options),
                           text, options)
    else:
        found = validator.extract(folded, **options)
        if not found and _reads_spoken(type, options):
            found = _read_back(type, spoken.extract_read(validator.extract, folded, **options),
                               text, options)
    return [
        f if f.raw == text[f.start:f.end] else Found(f.value, f.start, f.end, text[f.start:f.end])
        for f in found
    ]


def _read_back(type: str, found: list[Found], text: str, options: dict[str, Any]) -> list[Found]:
    """Of values found in the spoken reading of a sentence, those whose own words, read
    alone, are that value: the reading of a whole sentence can join digits across a
    separator next to a spoken number ("X00-0二〇二四" reads "X0002024"), which the
    answer "X00-0" alone does not say."""
    return [f for f in found if check(type, text[f.start:f.end], **options).ok]


def _reads_spoken(type: str, options: dict[str, Any]) -> bool:
    """Whether values of ``type`` may be said digit by digit: identifiers and
    codes with a pattern (an application number "SI二零二六…")."""
    return type in _IDENTIFIERS or (type == "text" and bool(options.get("pattern")))


def mask(type: str, value: Any) -> str:
    """``value`` as it may be displayed: ID, phone and bank card numbers starred."""
    _validator(type)
    return _mask(type, value)
