"""What the demo backend implements, declared once: one endpoint per business.

    GET|POST  http://demo.si-agent/api/<business_id>

``ENDPOINTS`` says, for each business id it serves, whether it is a handle-type
business (it creates an application and needs an ``Idempotency-Key``), the
body keys it refuses to run without, and the keys of a successful answer. The
routes serve from it and nothing else: ``services`` registers one handler per
declared id (and refuses any other at import), and ``app`` answers 500 if a
handler's answer has other keys than declared. ``si-agent validate`` reads the
same declaration (``si_agent.config.backends``) to check a business whose
``api.url`` points here: the id is implemented, its fields and steps give every
required key, and its ``result_template`` names only what comes back.

This module is plain data: importing it imports neither Flask nor the services.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

DEMO_HOST = "demo.si-agent"
DEMO_ORIGIN = f"http://{DEMO_HOST}"
API_PREFIX = "/api/"


@dataclass(frozen=True)
class Endpoint:
    """One demo business: what it needs and what it answers."""

    handle: bool
    required: tuple[str, ...]
    returns: tuple[str, ...]


_APPLICATION = ("application_no",)

ENDPOINTS: dict[str, Endpoint] = {
    # queries
    "pension_query": Endpoint(False, ("id_number",),
                              ("name", "month", "amount", "paid_on", "bank")),
    "insurance_record": Endpoint(False, ("id_number", "start_year", "end_year"),
                                 ("name", "start_year", "end_year", "total_months",
                                  "personal_total", "summary")),
    "progress_query": Endpoint(False, ("application_no",),
                               ("application_no", "business_name", "status", "updated_at",
                                "detail")),
    "pension_estimate": Endpoint(False, ("retire_age", "contribution_years", "avg_wage",
                                         "contribution_index", "account_balance"),
                                 ("basic_pension", "account_pension", "total", "payout_months",
                                  "note")),
    # handle-type businesses
    "social_transfer": Endpoint(True, ("from_city", "to_city", "id_number", "name"),
                                (*_APPLICATION, "eta_days")),
    "card_apply": Endpoint(True, ("name", "id_number", "phone", "bank", "mailing_address"),
                           (*_APPLICATION, "eta_days")),
    "card_loss": Endpoint(True, ("id_number", "name", "phone", "loss_type"),
                          (*_APPLICATION, "loss_type", "effective_at")),
    "unemployment_benefit": Endpoint(True, ("id_number", "name", "phone", "separation_date",
                                            "separation_reason", "bank_card"),
                                     (*_APPLICATION, "eta_days")),
    "medical_filing": Endpoint(True, ("id_number", "name", "insured_city", "destination_city",
                                      "filing_type", "start_date"),
                               (*_APPLICATION, "valid_until")),
    "pension_certification": Endpoint(True, ("id_card_photo", "face_photo"),
                                      (*_APPLICATION, "valid_until")),
    "flexible_employment": Endpoint(True, ("name", "id_number", "phone", "hukou_type",
                                           "contribution_grade"),
                                    (*_APPLICATION, "base", "monthly_contribution")),
    "phone_change": Endpoint(True, ("id_number", "name", "new_phone"), _APPLICATION),
}


def demo_business(url: str) -> str | None:
    """The business id a URL on the demo host names (``""`` for a path outside
    ``/api/<id>``); None for a URL on any other host."""
    parts = urlsplit(url)
    if parts.scheme != "http" or (parts.hostname or "").lower() != DEMO_HOST:
        return None
    path = parts.path
    if not path.startswith(API_PREFIX) or "/" in path[len(API_PREFIX):]:
        return ""
    return path[len(API_PREFIX):]
