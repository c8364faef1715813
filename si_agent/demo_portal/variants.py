"""Generated variants of the portal's forms, to measure the rpa executor on many sites.

``/forms/<business_id>?variant=<seed>`` serves ``variant_form(form, seed)``: the
same business drawn the way another real portal might draw it. The seed fixes
every choice, so a variant is the same page on every run and in every process:

- labels taken from wordings real portals use (姓名 → 申请人姓名 / 参保人姓名,
  身份证号 → 证件号码 / 公民身份号码, 转出地 → 原参保地 …);
- opaque control ids on some seeds (markup that tells nothing about the field);
- field order shuffled within a page (the commitment stays last);
- option labels reworded (中国工商银行 → 工商银行, 杭州市 → 浙江省杭州市), and on
  some seeds coded option values (ICBC, 330100); the application still stores
  the option itself (中国工商银行, 杭州市);
- up to two optional extra fields (邮政编码, 电子邮箱, 备注 …);
- one page 申请信息, or two: 基本信息 (who applies) → 办理信息, with 下一步.

证件类型 and the commitment keep their labels: businesses set them as fixed
controls by label. ``&inject=<business key>`` (kept in the draft like the seed)
refuses that field once, after it passed its own checks, with the message
``injected_message`` gives (``texts.INJECTED``): the benchmark expects exactly
that field, with that reason, back from the executor.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterable, Mapping
from dataclasses import replace

from si_agent.demo_portal import texts
from si_agent.demo_portal.forms import Field, Form, Page, check_form, find_form

# Field key -> labels real portals give it (the first is the base form's, or close).
LABELS: dict[str, tuple[str, ...]] = {
    "name": ("姓名", "申请人姓名", "参保人姓名", "申请人"),
    "id_number": ("身份证号", "身份证号码", "证件号码", "公民身份号码", "社会保障号码"),
    "phone": ("手机号码", "联系电话", "手机号", "联系手机", "移动电话"),
    "from_city": ("转出地", "原参保地", "转出城市", "转出统筹区"),
    "to_city": ("转入地", "新参保地", "转入城市", "转入统筹区"),
    "bank": ("合作银行", "开户银行", "发卡银行", "社保卡服务银行"),
    "mailing_address": ("邮寄地址", "收件地址", "通讯地址", "卡片邮寄地址"),
    "separation_date": ("离职日期", "解除劳动合同日期", "终止劳动关系日期", "失业日期",
                        "解除（终止）劳动合同日期"),
    "separation_reason": ("离职原因", "失业原因", "解除原因", "中断就业原因"),
    "bank_card": ("银行卡号", "社保卡银行账号", "收款账号", "银行账号", "社会保障卡金融账号"),
    "insured_city": ("参保城市", "参保地", "参保统筹区"),
    "destination_city": ("就医城市", "就医地", "异地就医地"),
    "filing_type": ("备案类型", "人员类型", "备案人员类型"),
    "start_date": ("备案开始日期", "开始日期", "生效日期", "备案生效日期"),
    "remarks": ("备注", "备注说明", "其他说明"),
}

# Optional fields a portal adds that the businesses do not collect.
EXTRAS: tuple[Field, ...] = (
    Field("postcode", "postcode", "邮政编码", "text", required=False, rule="postcode"),
    Field("email", "email", "电子邮箱", "text", required=False, rule="email"),
    Field("remarks", "remarks", "备注", "textarea", required=False, rule="remarks"),
    Field("employer", "employer", "工作单位", "text", required=False),
)
EXTRA_LABELS: dict[str, tuple[str, ...]] = {
    "postcode": ("邮政编码", "邮编"), "email": ("电子邮箱", "电子邮件"),
    "employer": ("工作单位", "工作单位名称"),
}

# Option -> (code a portal posts, short wording, long wording).
_PROVINCES = {"杭州市": "浙江省", "宁波市": "浙江省", "苏州市": "江苏省", "南京市": "江苏省",
              "广州市": "广东省", "深圳市": "广东省", "成都市": "四川省", "武汉市": "湖北省",
              "西安市": "陕西省", "拉萨市": "西藏自治区", "西宁市": "青海省"}
_CITY_CODES = {"北京市": "110000", "天津市": "120000", "上海市": "310000", "重庆市": "500000",
               "杭州市": "330100", "宁波市": "330200", "苏州市": "320500", "南京市": "320100",
               "广州市": "440100", "深圳市": "440300", "成都市": "510100", "武汉市": "420100",
               "西安市": "610100", "拉萨市": "540100", "西宁市": "630100"}
OPTION_WORDINGS: dict[str, tuple[str, str, str]] = {
    **{city: (code, city.removesuffix("市"), _PROVINCES.get(city, "") + city)
       for city, code in _CITY_CODES.items()},
    "居民身份证": ("01", "居民身份证", "居民身份证（户口簿）"),
    "中国工商银行": ("ICBC", "工商银行", "中国工商银行股份有限公司"),
    "中国农业银行": ("ABC", "农业银行", "中国农业银行股份有限公司"),
    "中国银行": ("BOC", "中国银行", "中国银行股份有限公司"),
    "中国建设银行": ("CCB", "建设银行", "中国建设银行股份有限公司"),
    "交通银行": ("BOCOM", "交通银行", "交通银行股份有限公司"),
    "中国邮政储蓄银行": ("PSBC", "邮储银行", "中国邮政储蓄银行股份有限公司"),
    "劳动合同期满终止": ("01", "劳动合同期满", "劳动合同期满终止"),
    "用人单位解除劳动合同": ("02", "单位解除劳动合同", "由用人单位解除劳动合同"),
    "被用人单位辞退": ("03", "被单位辞退", "被用人单位辞退"),
    "协商一致解除": ("04", "协商一致解除", "协商一致解除劳动合同"),
    "用人单位破产或关闭": ("05", "单位破产或关闭", "用人单位破产、关闭"),
    "异地长期居住": ("1", "异地长期居住人员", "异地长期居住"),
    "常驻异地工作": ("2", "常驻异地工作人员", "常驻异地工作"),
    "异地转诊就医": ("3", "异地转诊人员", "异地转诊就医"),
    "临时外出就医": ("4", "其他临时外出就医人员", "临时外出就医"),
}

FIXED_LABELS = frozenset({"id_type", "agree"})  # businesses fill these by their label
WHO = frozenset({"name", "id_type", "id_number", "phone", "email", "postcode"})  # 基本信息


def form_for(business_id: str, version: int, variant: int | None) -> Form | None:
    """The form a draft shows: the business's form in ``version``, varied by the seed."""
    form = find_form(business_id, version)
    if form is None or variant is None:
        return form
    return variant_form(form, variant)


@functools.lru_cache(maxsize=512)
def variant_form(form: Form, seed: int) -> Form:
    """``form`` as variant ``seed`` draws it (the same for the same seed)."""
    rng = random.Random(f"{form.business_id}:{form.version}:{seed}")
    opaque = rng.random() < 0.4
    option_style = rng.randrange(3)  # 0: the option as is, 1: short, 2: long wording
    coded = rng.random() < 0.4
    have = {f.key for f in form.fields}
    extras = rng.sample([f for f in EXTRAS if f.key not in have], rng.randrange(3))
    fields = [_relabel(f, rng, option_style, coded) for f in (*form.fields, *extras)]
    agree = [f for f in fields if f.key == "agree"]
    rest = [f for f in fields if f.key != "agree"]
    if rng.random() < 0.5:
        pages = [("基本信息", [f for f in rest if f.key in WHO]),
                 ("办理信息", [f for f in rest if f.key not in WHO])]
    else:
        pages = [("申请信息", rest)]
    for _, page_fields in pages:
        rng.shuffle(page_fields)
    pages[-1][1].extend(agree)
    if opaque:
        order = [f for _, page_fields in pages for f in page_fields]
        ids = {f.key: f"f{n:02d}" for n, f in enumerate(order, start=1)}
        pages = [(title, [replace(f, id=ids[f.key]) for f in page_fields])
                 for title, page_fields in pages]
    return check_form(replace(form, pages=tuple(Page(title, tuple(page_fields))
                                                 for title, page_fields in pages)))


def _relabel(field: Field, rng: random.Random, option_style: int, coded: bool) -> Field:
    if field.key not in FIXED_LABELS:
        labels = LABELS.get(field.key) or EXTRA_LABELS.get(field.key) or (field.label,)
        field = replace(field, label=rng.choice(labels))
    if not field.options:
        return field
    wording = []
    for option in field.options:
        code, *words = OPTION_WORDINGS.get(option, (option, option, option))
        shown = (option, *words)[option_style]
        wording.append((code if coded else option, shown))
    return replace(field, wording=tuple(wording))


def injected_message(form: Form, key: str) -> str:
    """The refusal ``?inject=<key>`` shows on ``key``'s control of ``form``."""
    label = form.field(key).label
    return texts.INJECTED.get(key, texts.INJECTED_OTHER).format(label=label)


def with_injection(form: Form, key: str, checked: Iterable[Field],
                   errors: Mapping[str, str]) -> dict[str, str] | None:
    """``errors`` plus the injected refusal of ``key``, in page order; None when
    ``key``'s control was not checked this time or failed on its own."""
    checked = tuple(checked)
    field = next((f for f in checked if f.key == key), None)
    if field is None or field.id in errors:
        return None
    refused = {**errors, field.id: injected_message(form, key)}
    order = [f.id for f in checked]
    return dict(sorted(refused.items(), key=lambda item: order.index(item[0])))
