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
SAME_CITY = "{right}不能与{left}相同"
SAME_MEDICAL_CITY = "{right}不能与{left}相同，在参保地就医无需备案"

# -- pages -------------------------------------------------------------------------
ERROR_SUMMARY = "提交未成功，请修改以下{count}处问题："
LOGIN_FAILED = "用户名或密码错误"
LOGIN_REQUIRED = "请先登录后再办理业务"
SERVER_ERROR = "系统繁忙，请稍后再试"
NOT_FOUND = "您访问的页面不存在"
COMMITMENT_TEXT = ("本人承诺所填写的信息真实、准确、完整，如有虚假，愿意承担相应的法律责任，"
                   "并同意经办机构核验本人的相关信息。")
