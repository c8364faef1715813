"""Field validators: judge a citizen's answer, find values in a sentence, mask them.

    check("phone", "138 1234 5678")        -> Result(ok=True, value="13812345678")
    check("idcard", "33010619900101123")   -> Result(ok=False, error="身份证号码应为18位，这里是17位。")
    extract("city", "从杭州转到苏州")        -> [Found("杭州市", 1, 3, "杭州"), Found("苏州市", 4, 6, "苏州")]
    mask("phone", "13812345678")           -> "138****5678"

One module per type family (``idcard``, ``phone``, ``bank_card``, ``dates``,
``numbers``, ``choices``, ``city``, ``name``, ``text``); every type is a
:class:`~si_agent.validators.base.Validator` in the table below. Options are
keywords, all optional, ignored by types that do not use them (see
``FieldDef.validator_options``): ``pattern``, ``options``, ``min``, ``max``,
``min_length``, ``max_length``, ``not_future`` and ``today``. Diagnoses are
in ``messages``.
"""

from __future__ import annotations

from typing import Any

from ..errors import UnknownBackendError
from . import bank_card, choices, city, dates, idcard, messages, name, numbers, phone, text
from .base import Found, Result, Validator, fold_width, invalid, normalize
from .masking import mask as _mask

__all__ = ["TYPES", "Found", "Result", "check", "extract", "mask"]

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
}

TYPES: tuple[str, ...] = tuple(_VALIDATORS)


def _validator(type: str) -> Validator:
    try:
        return _VALIDATORS[type]
    except (KeyError, TypeError):
        raise UnknownBackendError("field type", type, TYPES) from None


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
    return validator.check(value, **options)


def extract(type: str, text: str, **options: Any) -> list[Found]:
    """Every valid value of ``type`` in a sentence, in order, not overlapping.

    Spans index the original ``text``, and ``raw`` is the original slice.
    """
    validator = _validator(type)
    if not text:
        return []
    found = validator.extract(fold_width(text), **options)
    return [
        f if f.raw == text[f.start:f.end] else Found(f.value, f.start, f.end, text[f.start:f.end])
        for f in found
    ]


def mask(type: str, value: Any) -> str:
    """``value`` as it may be displayed: ID, phone and bank card numbers starred."""
    _validator(type)
    return _mask(type, value)
