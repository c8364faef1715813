"""Every message the portal shows a citizen, in Simplified Chinese, in one place."""

from __future__ import annotations

SITE_NAME = "人力资源和社会保障网上办事大厅（演示）"

# -- field errors ------------------------------------------------------------------
FILL = "请填写{label}"
CHOOSE = "请选择{label}"
TICK_COMMITMENT = "请勾选承诺书"
UNKNOWN_OPTION = "请从列表中选择{label}"
IDCARD_FORMAT = "身份证号码格式不正确"
NAME_FORMAT = "姓名格式不正确"
NAME_ID_MISMATCH = "姓名与身份证号不一致"
PHONE_FORMAT = "手机号码格式不正确"
BANK_CARD_FORMAT = "银行卡号格式不正确"
BANK_CARD_UNSUPPORTED = "银行卡不支持"
DATE_FORMAT = "{label}格式不正确，请按年-月-日填写"
DATE_FUTURE = "{label}不能晚于今天"
CITY_UNKNOWN = "未找到该城市，请填写地级市名称"
CITY_CLOSED = "该城市暂未开通线上转移"
ADDRESS_LENGTH = "邮寄地址应为5到100个字"
REMARKS_LENGTH = "备注不能超过200个字"
POSTCODE_FORMAT = "邮政编码应为6位数字"
EMAIL_FORMAT = "电子邮箱格式不正确"
SAME_CITY = "{right}不能与{left}相同"
SAME_MEDICAL_CITY = "{right}不能与{left}相同，在参保地就医无需备案"

# A refusal a form variant injects (``?inject=<field key>``): what a real portal
# answers once its back office disagrees with a value that passed the format checks.
INJECTED: dict[str, str] = {
    "name": "姓名与公安部门登记的信息不一致，请核对",
    "id_number": "未查询到该证件号码的参保信息",
    "phone": "该手机号码未通过实名认证，请更换本人实名登记的手机号码",
    "from_city": "{label}未查询到您的参保缴费记录",
    "to_city": "您尚未在{label}参保登记，请先在{label}参保后再申请转入",
    "bank": "该银行暂不受理您所在地区的社保卡申领",
    "mailing_address": "该地址暂不在邮寄配送范围内，请填写其他地址",
    "separation_date": "{label}与单位申报的解除劳动合同日期不一致",
    "separation_reason": "{label}与单位申报的信息不一致",
    "bank_card": "该银行卡户名与申请人姓名不一致",
    "insured_city": "{label}未查询到您的基本医疗保险参保信息",
    "destination_city": "{label}暂未开通异地就医直接结算",
    "filing_type": "您的参保身份不能办理该{label}",
    "start_date": "{label}不能早于已有备案的结束日期",
}
INJECTED_OTHER = "{label}核验未通过，请核对后重新填写"

# -- pages -------------------------------------------------------------------------
ERROR_SUMMARY = "提交未成功，请修改以下{count}处问题："
LOGIN_FAILED = "用户名或密码错误"
LOGIN_REQUIRED = "请先登录后再办理业务"
SERVER_ERROR = "系统繁忙，请稍后再试"
NOT_FOUND = "您访问的页面不存在"
PAGE_OUT_OF_DATE = "此页面已过期：申请已在其他窗口更新，本次提交未保存。以下是最新内容，请核对后继续。"
COMMITMENT_TEXT = ("本人承诺所填写的信息真实、准确、完整，如有虚假，愿意承担相应的法律责任，"
                   "并同意经办机构核验本人的相关信息。")
