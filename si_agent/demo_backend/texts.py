"""Every Chinese text the demo backend answers with, in one place.

Business names match the ``name`` of the files in ``businesses/``.
"""

from __future__ import annotations

BUSINESS_NAMES: dict[str, str] = {
    "pension_query": "养老金查询",
    "insurance_record": "参保缴费记录查询",
    "progress_query": "办理进度查询",
    "pension_estimate": "养老金测算",
    "social_transfer": "社保关系转移",
    "card_apply": "社保卡申领",
    "card_loss": "社保卡挂失",
    "unemployment_benefit": "失业保险金申领",
    "medical_filing": "异地就医备案",
    "pension_certification": "养老金资格认证",
    "flexible_employment": "灵活就业人员参保登记",
    "phone_change": "联系电话变更",
}

# Request problems
UNKNOWN_BUSINESS = "业务系统不支持该业务：{business_id}。"
NOT_JSON_OBJECT = "请求内容必须是JSON对象。"
MISSING_FIELDS = "缺少必填信息：{keys}。"
MISSING_IDEMPOTENCY_KEY = "办理类业务的请求必须携带 Idempotency-Key 请求头。"
IDEMPOTENCY_KEY_REUSED = "该请求编号已用于其他业务，请重新提交。"
INVALID_DATA = "提交的信息未通过业务系统校验，请核对后重新提交。"
BUSY = "业务系统繁忙，请稍后再试。"
INTERNAL = "业务系统内部错误，请稍后再试。"
NOT_FOUND = "未找到请求的资源。"
METHOD_NOT_ALLOWED = "不支持该请求方法。"

# Field-level problems (error.fields)
NAME_MISMATCH = "姓名与身份证号码不一致。"
SAME_PHONE = "新手机号与原手机号相同。"
LOST = "已挂失"
ALREADY_LOST = "该社保卡已处于挂失状态，不能重复挂失。"
FACE_MISMATCH = "人脸照片与身份证照片不是同一人，请本人重新拍摄。"
BAD_CARD_PHOTO = "证件照不符合制卡要求（应为358×441像素的JPEG照片）。"
NO_PENSION = "未查询到该身份证号的养老金发放记录。"
NO_RECORD = "未查询到该身份证号的参保记录。"
NO_APPLICATION = "未查询到该受理编号，请核对后重新输入。"
BAD_YEAR = "年份格式不正确，请输入四位年份，例如2019。"
YEAR_ORDER = "结束年份不能早于开始年份。"
BAD_DATE = "日期格式不正确，请按“2026-10-08”的格式输入。"
FUTURE_DATE = "日期不能晚于今天。"
SAME_CITY_TRANSFER = "转入城市不能与转出城市相同。"
SAME_CITY_MEDICAL = "就医地不能与参保地相同。"
BAD_GRADE = "缴费档次应在60%到300%之间。"
EMPTY_STEP = "未收到该步骤的材料，请重新提交。"

# Success texts
NO_RECORDS_IN_RANGE = "该期间没有缴费记录。"
YEAR_LINE = "{year}年：缴费{months}个月，缴费基数{base}元，个人缴纳{personal}元"
PENSION_MONTH = "{year}年{month}月"
BANK_WITH_TAIL = "{bank}（尾号{tail}）"
ACCEPTED = "已受理"
ACCEPTED_DETAIL = "您的申请已受理，经办机构将在规定时限内办理，办理结果将短信通知您。"
CARD_LOSS_EFFECTIVE = "立即生效"
TEMPORARY_MEDICAL = "临时外出就医"
