"""The demo data: six people, their contributions and pensions, four applications.

ID numbers carry correct GB 11643 check digits and bank cards correct Luhn
digits, both computed here, so they pass the dialogue's validators.
``docs/demo-data.md`` lists the same data for people trying the assistant.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

from si_agent.demo_backend.clock import add_months, now
from si_agent.demo_backend.texts import BUSINESS_NAMES

_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"


def id_check_digit(first17: str) -> str:
    """The GB 11643 check character for the first 17 digits of an ID number."""
    if len(first17) != 17 or not first17.isdigit():
        raise ValueError(f"expected 17 digits, got {first17!r}")
    return _ID_CHECK[sum(int(d) * w for d, w in zip(first17, _ID_WEIGHTS, strict=True)) % 11]


def luhn_digit(partial: str) -> str:
    """The Luhn check digit to append to ``partial`` (a bank card number without it)."""
    total = 0
    for i, ch in enumerate(reversed(partial)):
        d = int(ch)
        if i % 2 == 0:
            d = d * 2 - 9 if d * 2 > 9 else d * 2
        total += d
    return str((10 - total % 10) % 10)


@dataclass(frozen=True)
class Person:
    """A demo citizen; ``id17``/``card`` lack their check digits, added by properties."""

    id17: str
    name: str
    gender: str
    phone: str
    city: str
    bank: str
    card: str
    # (first year, months in first year, last year, months in last year) of contributions
    contributions: tuple[int, int, int, int]
    base_2015: int  # yuan; the monthly base rises by 300 yuan a year
    retired_on: str | None = None
    pension_cents: int = 0

    @property
    def id_number(self) -> str:
        return self.id17 + id_check_digit(self.id17)

    @property
    def bank_card(self) -> str:
        return self.card + luhn_digit(self.card)


PERSONS: tuple[Person, ...] = (
    Person("33012219630315017", "张伟", "男", "13800138001", "杭州市", "中国工商银行",
           "622202120200456882", (2015, 12, 2023, 2), 5400, "2023-03-15", 325680),
    Person("31010419680612028", "李秀英", "女", "13800138002", "上海市", "中国建设银行",
           "621700121001234567", (2015, 12, 2018, 5), 6600, "2018-06-12", 289050),
    Person("32058319900823046", "王芳", "女", "13800138003", "苏州市", "中国农业银行",
           "622848040256489001", (2015, 12, 2025, 12), 4800),
    Person("33010219950308013", "刘洋", "男", "13800138004", "杭州市", "招商银行",
           "621483057123456789", (2018, 6, 2025, 12), 5000),
    Person("32010219880915062", "陈静", "女", "13800138005", "南京市", "中国银行",
           "601382080001234567", (2015, 12, 2025, 6), 5600),
    Person("11010520000110035", "赵磊", "男", "13800138006", "北京市", "交通银行",
           "622260011001234567", (2021, 12, 2025, 12), 4500),
)

PERSONAL_RATE_PERCENT = 8  # the employee's share to the personal pension account

# (application_no, business_id, index in PERSONS, status, detail, updated_at)
APPLICATIONS: tuple[tuple[str, str, int, str, str, str], ...] = (
    ("SI20260915000001", "social_transfer", 2, "办理中",
     "转出地（苏州市）已审核通过并出具参保缴费凭证，等待转入地（杭州市）接收。", "2026-09-22 10:30"),
    ("SI20261020000001", "card_apply", 3, "已制卡",
     "社保卡已制作完成，已通过邮政EMS寄出，运单号 1100223344556。", "2026-11-06 15:12"),
    ("SI20261105000001", "unemployment_benefit", 4, "已办结",
     "审核通过，核定领取失业保险金12个月，每月20日前发放至您的中国银行账户。", "2026-11-18 09:05"),
    ("SI20261110000001", "card_loss", 4, "已挂失",
     "社保卡已正式挂失，卡片的社保和金融功能已冻结。如需新卡请办理补卡。", "2026-11-10 14:20"),
)


def seed(conn: sqlite3.Connection) -> None:
    """Insert all demo data; the caller runs this once, inside a transaction."""
    for p in PERSONS:
        conn.execute(
            "INSERT INTO persons (id_number, name, gender, phone, city, bank, bank_card,"
            " retired_on) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (p.id_number, p.name, p.gender, p.phone, p.city, p.bank, p.bank_card, p.retired_on),
        )
        first, first_months, last, last_months = p.contributions
        for year in range(first, last + 1):
            months = first_months if year == first else last_months if year == last else 12
            base_cents = (p.base_2015 + 300 * (year - 2015)) * 100
            personal = base_cents * months * PERSONAL_RATE_PERCENT // 100
            conn.execute(
                "INSERT INTO contributions (id_number, year, months, base_cents,"
                " personal_cents) VALUES (?, ?, ?, ?, ?)",
                (p.id_number, year, months, base_cents, personal),
            )
        if p.retired_on:
            _seed_payments(conn, p)
    for app_no, business_id, who, status, detail, updated in APPLICATIONS:
        person = PERSONS[who]
        created = f"{app_no[2:6]}-{app_no[6:8]}-{app_no[8:10]} 09:00"
        conn.execute(
            "INSERT INTO applications (application_no, business_id, business_name, id_number,"
            " status, detail, payload, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (app_no, business_id, BUSINESS_NAMES[business_id], person.id_number, status, detail,
             json.dumps({"id_number": person.id_number, "name": person.name},
                        ensure_ascii=False), created, updated),
        )
        conn.execute(
            "INSERT INTO serials (day, last) VALUES (?, ?)"
            " ON CONFLICT (day) DO UPDATE SET last = max(last, excluded.last)",
            (app_no[2:10], int(app_no[10:])),
        )


def _seed_payments(conn: sqlite3.Connection, p: Person) -> None:
    """Twelve monthly payments, on the 15th, ending with the latest one already paid."""
    today = now().date()
    latest = today.replace(day=15) if today.day >= 15 else add_months(today.replace(day=15), -1)
    for back in range(12):
        paid_on = add_months(latest, -back)
        conn.execute(
            "INSERT INTO pension_payments (id_number, month, amount_cents, paid_on)"
            " VALUES (?, ?, ?, ?)",
            (p.id_number, paid_on.strftime("%Y-%m"), p.pension_cents, paid_on.isoformat()),
        )
