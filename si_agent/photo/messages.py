"""Every Chinese re-ask a photo reader returns, in one place.

Each text tells the citizen what to do next with the photo. Texts with
``{placeholders}`` are filled with ``str.format``.
"""

from __future__ import annotations

BACK_SIDE = "这是身份证国徽面，请上传人像面。"
NO_CARD = "照片中没有识别到身份证，请拍摄身份证人像面，确保四角完整、文字清晰。"
PARTIAL = "照片中的身份证不完整，没有识别到{missing}，请拍摄完整的身份证人像面，确保四角完整、文字清晰。"
GLARE = "照片反光，请避开灯光重新拍摄。"
ID_INVALID = "{diagnosis}请确认上传的是有效的居民身份证，并重新拍摄清晰的人像面。"
BIRTH_MISMATCH = "身份证上的出生日期与身份证号码不一致，请重新拍摄清晰的身份证人像面。"
SEX_MISMATCH = "身份证上的性别与身份证号码不一致，请重新拍摄清晰的身份证人像面。"
# The card was read, but the photo printed on it cannot be used to compare faces.
PORTRAIT_NOT_FOUND = "没有看清身份证上的人像照片，请拍摄身份证人像面，不要遮挡人像，确保人像清晰后重新拍摄。"
PORTRAIT_MULTIPLE = "照片中有不止一张人脸，请只拍摄身份证人像面，不要拍到其他人或其他照片。"
PORTRAIT_TOO_SMALL = "身份证上的人像太小，请靠近一些，让身份证占满画面的大部分后重新拍摄。"
PORTRAIT_BLURRY = "身份证上的人像不够清晰，请保持手机稳定、对焦后重新拍摄。"
PORTRAIT_TOO_DARK = "照片太暗，看不清身份证上的人像，请到光线充足的地方重新拍摄。"

# What each field is called when it is missing.
FIELD_LABELS = {
    "name": "姓名",
    "sex": "性别",
    "ethnicity": "民族",
    "birth": "出生日期",
    "address": "住址",
    "id_number": "公民身份号码",
}
