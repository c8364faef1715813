"""What each of the twelve demo businesses does with a submitted body.

Each service is a function ``(Ctx, body) -> dict`` registered in ``SERVICES``
under a business id declared in ``endpoints.ENDPOINTS`` (with the fields it
requires, what it answers and whether it is a handle-type business, which
creates an application and needs an ``Idempotency-Key``); importing this module
fails if the two disagree. Problems are raised as ``DemoError`` and become
``{"error": {"message", "fields"}}`` responses.
"""

from __future__ import annotations

import base64
import io
import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from PIL import Image

from si_agent.demo_backend import texts
from si_agent.demo_backend.clock import add_months
from si_agent.demo_backend.endpoints import ENDPOINTS, Endpoint
from si_agent.errors import ExecutorError
from si_agent.pension import pension_estimate as _pension_estimate

DEMO_AVERAGE_WAGE = Decimal("7500")  # yuan/month, the base of flexible-employment grades
FLEXIBLE_RATE = Decimal("0.20")
CENT = Decimal("0.01")


class DemoError(Exception):
    """A request the demo backend refuses; becomes an ``{"error": ...}`` response."""

    def __init__(self, status: int, message: str, fields: dict[str, str] | None = None) -> None:
        self.status = status
        self.message = message
        self.fields = dict(fields or {})
        super().__init__(message)


def field_error(status: int, key: str, message: str) -> DemoError:
    """A ``DemoError`` about one field, whose message is also the overall message."""
    return DemoError(status, message, {key: message})


@dataclass
class Ctx:
    """What a service may use: the request's connection (inside its transaction) and time."""

    conn: sqlite3.Connection
    now: datetime

    @property
    def today(self) -> date:
        return self.now.date()

    def person(self, id_number: str) -> sqlite3.Row | None:
        return self.conn.execute(
            "SELECT * FROM persons WHERE id_number = ?", (id_number,)
        ).fetchone()

    def new_application(
        self,
        business_id: str,
        body: dict,
        id_number: str | None,
        detail: str = texts.ACCEPTED_DETAIL,
    ) -> str:
        """Store an application with status 已受理 and return its number ``SI+YYYYMMDD+serial``."""
        day = self.now.strftime("%Y%m%d")
        rows = self.conn.execute(
            "INSERT INTO serials (day, last) VALUES (?, 1)"
            " ON CONFLICT (day) DO UPDATE SET last = last + 1 RETURNING last",
            (day,),
        ).fetchall()
        application_no = f"SI{day}{rows[0]['last']:06d}"
        stamp = self.now.strftime("%Y-%m-%d %H:%M")
        self.conn.execute(
            "INSERT INTO applications (application_no, business_id, business_name, id_number,"
            " status, detail, payload, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (application_no, business_id, texts.BUSINESS_NAMES[business_id], id_number,
             texts.ACCEPTED, detail, json.dumps(body, ensure_ascii=False, default=str),
             stamp, stamp),
        )
        return application_no


@dataclass(frozen=True)
class Service:
    """One demo business: its handler and its declared endpoint."""

    run: Callable[[Ctx, dict], dict]
    endpoint: Endpoint

    @property
    def handle(self) -> bool:
        return self.endpoint.handle

    @property
    def required(self) -> tuple[str, ...]:
        return self.endpoint.required

    def missing(self, body: dict) -> list[str]:
        return [key for key in self.required if _blank(body.get(key))]

    def undeclared(self, result: dict) -> set[str]:
        """The keys by which ``result`` differs from the declared answer."""
        return set(result) ^ set(self.endpoint.returns)


SERVICES: dict[str, Service] = {}


def _service(business_id: str):
    endpoint = ENDPOINTS[business_id]  # a KeyError here: declare the endpoint first

    def register(fn: Callable[[Ctx, dict], dict]) -> Callable[[Ctx, dict], dict]:
        SERVICES[business_id] = Service(fn, endpoint)
        return fn

    return register


# ---- queries -----------------------------------------------------------------


@_service("pension_query")
def pension_query(ctx: Ctx, body: dict) -> dict:
    person = ctx.person(_id_number(body))
    row = None if person is None else ctx.conn.execute(
        "SELECT * FROM pension_payments WHERE id_number = ? ORDER BY month DESC LIMIT 1",
        (person["id_number"],),
    ).fetchone()
    if row is None:
        raise field_error(404, "id_number", texts.NO_PENSION)
    year, month = row["month"].split("-")
    return {
        "name": person["name"],
        "month": texts.PENSION_MONTH.format(year=year, month=int(month)),
        "amount": _yuan(row["amount_cents"]),
        "paid_on": row["paid_on"],
        "bank": texts.BANK_WITH_TAIL.format(bank=person["bank"], tail=person["bank_card"][-4:]),
    }


@_service("insurance_record")
def insurance_record(ctx: Ctx, body: dict) -> dict:
    start, end = _year(body, "start_year"), _year(body, "end_year")
    if end < start:
        raise field_error(422, "end_year", texts.YEAR_ORDER)
    person = ctx.person(_id_number(body))
    if person is None:
        raise field_error(404, "id_number", texts.NO_RECORD)
    rows = ctx.conn.execute(
        "SELECT * FROM contributions WHERE id_number = ? AND year BETWEEN ? AND ? ORDER BY year",
        (person["id_number"], start, end),
    ).fetchall()
    lines = [
        texts.YEAR_LINE.format(year=r["year"], months=r["months"], base=_yuan(r["base_cents"]),
                               personal=_yuan(r["personal_cents"]))
        for r in rows
    ]
    return {
        "name": person["name"],
        "start_year": start,
        "end_year": end,
        "total_months": sum(r["months"] for r in rows),
        "personal_total": _yuan(sum(r["personal_cents"] for r in rows)),
        "summary": "\n".join(lines) if lines else texts.NO_RECORDS_IN_RANGE,
    }


@_service("progress_query")
def progress_query(ctx: Ctx, body: dict) -> dict:
    number = str(body["application_no"]).strip().upper()
    row = ctx.conn.execute(
        "SELECT * FROM applications WHERE application_no = ?", (number,)
    ).fetchone()
    if row is None:
        raise field_error(404, "application_no", texts.NO_APPLICATION)
    return {
        "application_no": row["application_no"],
        "business_name": row["business_name"],
        "status": row["status"],
        "updated_at": row["updated_at"],
        "detail": row["detail"],
    }


@_service("pension_estimate")
def pension_estimate(ctx: Ctx, body: dict) -> dict:
    try:
        return _pension_estimate(body)
    except ExecutorError as exc:
        raise DemoError(422, exc.message, exc.field_errors) from exc


# ---- handle-type businesses -------------------------------------------------------


@_service("social_transfer")
def social_transfer(ctx: Ctx, body: dict) -> dict:
    id_number = _check_person(ctx, body)
    if str(body["from_city"]).strip() == str(body["to_city"]).strip():
        raise field_error(422, "to_city", texts.SAME_CITY_TRANSFER)
    return {"application_no": ctx.new_application("social_transfer", body, id_number),
            "eta_days": 15}


@_service("card_apply")
def card_apply(ctx: Ctx, body: dict) -> dict:
    id_number = _check_person(ctx, body)
    if not _blank(body.get("id_photo")) and not _is_card_photo(body["id_photo"]):
        raise field_error(422, "id_photo", texts.BAD_CARD_PHOTO)
    return {"application_no": ctx.new_application("card_apply", body, id_number), "eta_days": 20}


@_service("card_loss")
def card_loss(ctx: Ctx, body: dict) -> dict:
    id_number = _check_person(ctx, body)
    lost = ctx.conn.execute(
        "SELECT 1 FROM applications WHERE business_id = 'card_loss' AND id_number = ?"
        " AND status = ?", (id_number, texts.LOST)).fetchall()
    if lost:  # nothing about the request to correct: resubmitting cannot help
        raise DemoError(409, texts.ALREADY_LOST)
    return {
        "application_no": ctx.new_application("card_loss", body, id_number),
        "loss_type": str(body["loss_type"]),
        "effective_at": texts.CARD_LOSS_EFFECTIVE,
    }


@_service("unemployment_benefit")
def unemployment_benefit(ctx: Ctx, body: dict) -> dict:
    id_number = _check_person(ctx, body)
    if _date(body, "separation_date") > ctx.today:
        raise field_error(422, "separation_date", texts.FUTURE_DATE)
    return {"application_no": ctx.new_application("unemployment_benefit", body, id_number),
            "eta_days": 10}


@_service("medical_filing")
def medical_filing(ctx: Ctx, body: dict) -> dict:
    id_number = _check_person(ctx, body)
    if str(body["insured_city"]).strip() == str(body["destination_city"]).strip():
        raise field_error(422, "destination_city", texts.SAME_CITY_MEDICAL)
    start = _date(body, "start_date")
    months = 6 if str(body["filing_type"]).strip() == texts.TEMPORARY_MEDICAL else 12
    return {
        "application_no": ctx.new_application("medical_filing", body, id_number),
        "valid_until": add_months(start, months).isoformat(),
    }


@_service("pension_certification")
def pension_certification(ctx: Ctx, body: dict) -> dict:
    id_number = None
    face = body["face_photo"]
    if isinstance(face, dict) and face.get("same_person") is False:
        raise field_error(422, "face_photo", texts.FACE_MISMATCH)
    photo = body["id_card_photo"]
    if not _blank(body.get("id_number")) or (isinstance(photo, dict) and photo.get("id_number")):
        source = body if not _blank(body.get("id_number")) else photo
        id_number = _check_person(ctx, source)
    return {
        "application_no": ctx.new_application("pension_certification", body, id_number),
        "valid_until": add_months(ctx.today, 12).isoformat(),
    }


@_service("flexible_employment")
def flexible_employment(ctx: Ctx, body: dict) -> dict:
    id_number = _check_person(ctx, body)
    base = (DEMO_AVERAGE_WAGE * _grade(body["contribution_grade"])).quantize(CENT, ROUND_HALF_UP)
    monthly = (base * FLEXIBLE_RATE).quantize(CENT, ROUND_HALF_UP)
    return {
        "application_no": ctx.new_application("flexible_employment", body, id_number),
        "base": f"{base:.2f}",
        "monthly_contribution": f"{monthly:.2f}",
    }


@_service("phone_change")
def phone_change(ctx: Ctx, body: dict) -> dict:
    id_number = _check_person(ctx, body)
    person = ctx.person(id_number)
    if person is not None and person["phone"] == str(body["new_phone"]).strip():
        raise field_error(422, "new_phone", texts.SAME_PHONE)
    return {"application_no": ctx.new_application("phone_change", body, id_number)}


if set(SERVICES) != set(ENDPOINTS):
    raise RuntimeError(f"demo backend: endpoints declared without a service: "
                       f"{sorted(set(ENDPOINTS) - set(SERVICES))}")


# ---- helpers -------------------------------------------------------------------------

# The portal's own rule for an ID photo (width, height in pixels; the national standard
# that ``si_agent.photo.idphoto.SIZE`` checks before upload, and a test keeps the two
# equal). Written here, not imported: the demo backend stands for a remote government
# system and imports nothing of the assistant but its errors and the pension formula.
ID_PHOTO_SIZE = (358, 441)


def _is_card_photo(step: Any) -> bool:
    """A 358x441 JPEG, base64 under ``photo`` (the id_photo step's submission)."""
    if not isinstance(step, dict) or not isinstance(step.get("photo"), str):
        return False
    try:
        data = base64.b64decode(step["photo"], validate=True)
        with Image.open(io.BytesIO(data)) as image:
            return image.format == "JPEG" and image.size == ID_PHOTO_SIZE
    except (ValueError, OSError, Image.DecompressionBombError):
        return False


def _blank(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, (dict, list, tuple)):
        return not value
    return False


def _id_number(body: dict) -> str:
    return str(body["id_number"]).strip().upper()


def _check_person(ctx: Ctx, body: dict) -> str:
    """The normalised ID number; refuses a name that differs from a known person's."""
    id_number = _id_number(body)
    person = ctx.person(id_number)
    name = body.get("name")
    if person is not None and not _blank(name) and str(name).strip() != person["name"]:
        raise field_error(422, "name", texts.NAME_MISMATCH)
    return id_number


def _yuan(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


def _year(body: dict, key: str) -> int:
    try:
        year = int(str(body[key]).strip())
    except ValueError:
        raise field_error(422, key, texts.BAD_YEAR) from None
    if not 1900 <= year <= 2100:
        raise field_error(422, key, texts.BAD_YEAR)
    return year


def _date(body: dict, key: str) -> date:
    try:
        return date.fromisoformat(str(body[key]).strip())
    except ValueError:
        raise field_error(422, key, texts.BAD_DATE) from None


def _grade(raw: Any) -> Decimal:
    """A contribution grade as a fraction: accepts 0.6, "0.6", 60, "60%"."""
    text = str(raw).strip()
    percent = text.endswith("%")
    try:
        value = Decimal(text.rstrip("%").strip())
    except InvalidOperation:
        raise field_error(422, "contribution_grade", texts.BAD_GRADE) from None
    if not value.is_finite():
        raise field_error(422, "contribution_grade", texts.BAD_GRADE)
    if percent or value > 3:
        value /= 100
    if not Decimal("0.6") <= value <= Decimal("3"):
        raise field_error(422, "contribution_grade", texts.BAD_GRADE)
    return value
