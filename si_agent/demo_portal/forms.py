"""The portal's web forms: which controls each business page shows, in which order.

A ``Form`` is a business in one version, split into ``Page``s of ``Field``s. A
field's ``id`` is its control's HTML id and name (it changes between versions,
like a real site's markup); its ``key`` is the business field the value is
stored under in an application (stable across versions). ``rule`` names a check
in ``checks.RULES``; ``Form.checks`` names cross-field checks in
``checks.FORM_CHECKS``. Definitions are checked when this module is imported.
"""

from __future__ import annotations

from dataclasses import dataclass

KINDS = ("text", "tel", "select", "radio", "date", "checkbox", "textarea")
VERSIONS = (1, 2)

ID_TYPES = ("居民身份证",)
TRANSFER_CITIES = ("北京市", "上海市", "天津市", "重庆市", "杭州市", "宁波市", "苏州市", "南京市",
                   "广州市", "深圳市", "成都市", "武汉市", "西安市", "拉萨市", "西宁市")
CARD_BANKS = ("中国工商银行", "中国农业银行", "中国银行", "中国建设银行", "交通银行",
              "中国邮政储蓄银行")
SEPARATION_REASONS = ("劳动合同期满终止", "用人单位解除劳动合同", "被用人单位辞退", "协商一致解除",
                      "用人单位破产或关闭")
FILING_TYPES = ("异地长期居住", "常驻异地工作", "异地转诊就医", "临时外出就医")
COMMITMENT_LABEL = "我已阅读并同意承诺书"


@dataclass(frozen=True)
class Field:
    """One control (a radio group counts as one)."""

    id: str
    key: str
    label: str
    kind: str
    required: bool = True
    options: tuple[str, ...] = ()
    rule: str | None = None
    unknown_option: str | None = None  # message for a posted value outside ``options``
    # (posted value, shown label) per option, in the order of ``options``; empty:
    # each option is posted and shown as itself. The stored value is the option.
    wording: tuple[tuple[str, str], ...] = ()

    @property
    def choices(self) -> tuple[tuple[str, str], ...]:
        """(posted value, shown label) of each option, as the page lists them."""
        return self.wording or tuple((o, o) for o in self.options)

    def option_for(self, posted: str) -> str | None:
        """The option a posted value stands for, or None when it is none of them."""
        return next((o for o, (value, _) in zip(self.options, self.choices, strict=True)
                     if value == posted), None)


@dataclass(frozen=True)
class Page:
    title: str
    fields: tuple[Field, ...]


@dataclass(frozen=True)
class Form:
    business_id: str
    title: str
    version: int
    pages: tuple[Page, ...]
    checks: tuple[str, ...] = ()

    @property
    def fields(self) -> tuple[Field, ...]:
        return tuple(f for page in self.pages for f in page.fields)

    def field(self, key: str) -> Field:
        """The field stored under business key ``key``."""
        return next(f for f in self.fields if f.key == key)


def _id_type(id: str = "id_type") -> Field:
    return Field(id, "id_type", "证件类型", "select", options=ID_TYPES,
                 unknown_option="证件类型不存在")


def _agree(id: str = "agree") -> Field:
    return Field(id, "agree", COMMITMENT_LABEL, "checkbox")


def _remarks(id: str = "remarks") -> Field:
    return Field(id, "remarks", "备注", "textarea", required=False, rule="remarks")


_SOCIAL_TRANSFER_V1 = Form("social_transfer", "社保关系转移", 1, (Page("申请信息", (
    Field("name", "name", "姓名", "text", rule="name"),
    _id_type(),
    Field("id_number", "id_number", "身份证号", "text", rule="idcard"),
    Field("from_city", "from_city", "转出地", "select", options=TRANSFER_CITIES,
          rule="transfer_city"),
    Field("to_city", "to_city", "转入地", "select", options=TRANSFER_CITIES,
          rule="transfer_city"),
    _remarks(),
    _agree(),
)),), checks=("person", "transfer_cities_differ"))

# Version 2: the same business after a site redesign: new labels, new ids, new
# order and one more required field (联系电话) the assistant does not collect.
_SOCIAL_TRANSFER_V2 = Form("social_transfer", "社保关系转移", 2, (Page("申请信息", (
    Field("applicant_name", "name", "申请人姓名", "text", rule="name"),
    _id_type("cert_type"),
    Field("cert_no", "id_number", "证件号码", "text", rule="idcard"),
    Field("contact_phone", "phone", "联系电话", "tel", rule="phone"),
    Field("origin_city", "from_city", "原参保地", "select", options=TRANSFER_CITIES,
          rule="transfer_city"),
    Field("target_city", "to_city", "新参保地", "select", options=TRANSFER_CITIES,
          rule="transfer_city"),
    _remarks("memo"),
    _agree("commitment"),
)),), checks=("person", "transfer_cities_differ"))

_CARD_APPLY = Form("card_apply", "社保卡申领", 1, (Page("申请信息", (
    Field("name", "name", "姓名", "text", rule="name"),
    _id_type(),
    Field("id_number", "id_number", "身份证号", "text", rule="idcard"),
    Field("phone", "phone", "手机号码", "tel", rule="phone"),
    Field("bank", "bank", "合作银行", "select", options=CARD_BANKS),
    Field("mailing_address", "mailing_address", "邮寄地址", "textarea", rule="address"),
    _agree(),
)),), checks=("person",))

_UNEMPLOYMENT_BENEFIT = Form("unemployment_benefit", "失业保险金申领", 1, (
    Page("基本信息", (
        Field("name", "name", "姓名", "text", rule="name"),
        _id_type(),
        Field("id_number", "id_number", "身份证号", "text", rule="idcard"),
        Field("phone", "phone", "手机号码", "tel", rule="phone"),
    )),
    Page("办理信息", (
        Field("separation_date", "separation_date", "离职日期", "date", rule="past_date"),
        Field("separation_reason", "separation_reason", "离职原因", "radio",
              options=SEPARATION_REASONS),
        Field("bank_card", "bank_card", "银行卡号", "text", rule="bank_card"),
        _agree(),
    )),
), checks=("person",))

_MEDICAL_FILING = Form("medical_filing", "异地就医备案", 1, (Page("申请信息", (
    Field("name", "name", "姓名", "text", rule="name"),
    _id_type(),
    Field("id_number", "id_number", "身份证号", "text", rule="idcard"),
    Field("insured_city", "insured_city", "参保城市", "text", rule="city"),
    Field("destination_city", "destination_city", "就医城市", "text", rule="city"),
    Field("filing_type", "filing_type", "备案类型", "radio", options=FILING_TYPES),
    Field("start_date", "start_date", "备案开始日期", "date", rule="date"),
    _remarks(),
    _agree(),
)),), checks=("person", "medical_cities_differ"))

FORMS: dict[tuple[str, int], Form] = {
    (f.business_id, f.version): f
    for f in (_SOCIAL_TRANSFER_V1, _SOCIAL_TRANSFER_V2, _CARD_APPLY, _UNEMPLOYMENT_BENEFIT,
              _MEDICAL_FILING)
}
BUSINESSES: dict[str, str] = {f.business_id: f.title for f in FORMS.values()}


def find_form(business_id: str, version: int) -> Form | None:
    """The form of ``business_id`` in ``version``, or None when the portal has none."""
    return FORMS.get((business_id, version))


def check_form(form: Form) -> Form:
    """``form`` if its definition holds together; raises ValueError otherwise."""
    ids = [f.id for f in form.fields]
    keys = [f.key for f in form.fields]
    if len(set(ids)) != len(ids) or len(set(keys)) != len(keys):
        raise ValueError(f"{form.business_id} v{form.version}: duplicate field id or key")
    for f in form.fields:
        if f.kind not in KINDS:
            raise ValueError(f"{form.business_id}.{f.id}: unknown kind {f.kind!r}")
        if (f.kind in ("select", "radio")) != bool(f.options):
            raise ValueError(f"{form.business_id}.{f.id}: options go with select/radio only")
        posted = [value for value, _ in f.choices]
        if len(f.choices) != len(f.options) or len(set(posted)) != len(posted):
            raise ValueError(f"{form.business_id}.{f.id}: one distinct wording per option")
    return form


for _form in FORMS.values():
    check_form(_form)
