"""Every diagnosis a validator returns, in one place.

These are the texts a citizen reads when a value is refused: short Simplified
Chinese sentences ending with "。" that say what is wrong with the value. A
business may replace them per field with ``error_msg`` in its YAML. Texts with
``{placeholders}`` are filled with ``str.format``.
"""

from __future__ import annotations

EMPTY = "没有填写内容。"

# idcard
IDCARD_OLD_15 = "这是15位旧身份证号码，请提供18位新号码。"
IDCARD_LENGTH = "身份证号码应为18位，这里是{n}位。"
IDCARD_NO_DIGITS = "这里需要填写18位身份证号码（数字，最后一位可以是X）。"  # "张伟", "我不知道"
IDCARD_CHARS = "身份证号码只有最后一位可以是X，其余应为数字。"
IDCARD_REGION = "身份证号码的前6位不是有效的地区代码。"
IDCARD_BIRTH_INVALID = "身份证号码中的出生日期不存在。"
IDCARD_BIRTH_TOO_EARLY = "身份证号码中的出生日期早于1900年。"
IDCARD_BIRTH_FUTURE = "身份证号码中的出生日期晚于今天。"
IDCARD_CHECKSUM = "身份证号码校验位不正确。"

# phone
PHONE_CHARS = "手机号码中有不是数字的字符。"
PHONE_LENGTH = "手机号码应为11位数字。"
PHONE_LANDLINE = "这是固定电话号码，不是手机号码。"
PHONE_PREFIX = "手机号码应以13到19开头。"

# bank_card
BANK_CARD_CHARS = "银行卡号中有不是数字的字符。"
BANK_CARD_LENGTH = "银行卡号应为16到19位数字，这里是{n}位。"
BANK_CARD_CHECKSUM = "银行卡号校验位不正确，可能有数字输错。"

# year
YEAR_UNREADABLE = "无法识别这个年份。"
YEAR_RANGE = "年份应在{min}到{max}之间。"
YEAR_TOO_EARLY = "年份不能早于{min}年。"
YEAR_TOO_LATE = "年份不能晚于{max}年。"
YEAR_FUTURE = "年份不能晚于今年。"

# date
DATE_UNREADABLE = "无法识别这个日期。"
DATE_NO_DAY = "日期缺少具体是哪一天。"
DATE_YEAR_RANGE = "日期中的年份应在1900到2100之间。"
DATE_MONTH = "日期中的月份应在1到12之间。"
DATE_DAY = "{year}年{month}月没有{day}日。"
DATE_FUTURE = "日期不能晚于今天。"
DATE_SPAN_ASK = "“{raw}”是指{first}至{last}之间，请告诉我具体是哪一天，例如“{example}”。"

# integer / number
NUMBER_UNREADABLE = "无法识别这个数字。"
NUMBER_OTHER_UNIT = "这里要的不是以“{unit}”为单位的数。"
BUCKET_UNREADABLE = "没有识别出金额，请说一个大概的数，例如15万，或选择：{options}。"
NUMBER_NOT_INTEGER = "这里应为整数，不能有小数。"
NUMBER_RANGE = "数值应在{min}到{max}之间。"
NUMBER_TOO_SMALL = "数值不能小于{min}。"
NUMBER_TOO_LARGE = "数值不能大于{max}。"

# enum
ENUM_NO_MATCH = "没有这个选项，请从以下选项中选择：{options}。"
ENUM_AMBIGUOUS = "可能是多个选项中的一个，请从以下选项中选择：{options}。"

# city
CITY_NOT_FOUND = "没有找到这个城市，请输入地级市名称。"
CITY_IS_PROVINCE = "“{province}”是省份，不是地级市。"

# name
NAME_DIGITS = "姓名中有数字。"
NAME_LATIN = "姓名中有英文字母。"
NAME_CHARS = "姓名中有不是汉字的字符。"
NAME_DOT = "姓名中的间隔号“·”位置不对。"
NAME_TOO_SHORT = "姓名至少应有{n}个汉字。"
NAME_TOO_LONG = "姓名不能超过{n}个汉字。"
NAME_NOT_A_NAME = "“{text}”不像是姓名。"
NAME_NUMERALS = "“{text}”是一串数字，不像是姓名。"

# text
TEXT_TOO_SHORT = "内容不足{n}个字。"
TEXT_TOO_LONG = "内容超过了{n}个字。"
TEXT_PATTERN = "内容格式不符合要求。"
TEXT_BIDI = "内容里有改变文字显示方向的隐藏字符（多见于复制来的文字），请直接输入文字后再发送。"
TEXT_CONTROL = "内容里有无法显示的控制字符（多见于复制来的文字），请直接输入文字后再发送。"
