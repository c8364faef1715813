"""Every Chinese text the pension estimate puts in front of a citizen, in one place."""

from __future__ import annotations

ESTIMATE_INVALID = "测算信息有误，请核对后重新输入。"
RETIRE_AGE_INVALID = "退休年龄应为50到70之间的整数。"
CONTRIBUTION_YEARS_INVALID = "累计缴费年限应为1到50之间的整数。"
AVG_WAGE_INVALID = "当地上年度职工月平均工资应为大于0的金额（元）。"
CONTRIBUTION_INDEX_INVALID = "平均缴费指数应在0.6到3.0之间。"
ACCOUNT_BALANCE_INVALID = "个人账户储存额应为不小于0的金额（元）。"
UNDER_15_YEARS = "提示：累计缴费不满15年的，一般不能按月领取基本养老金，可延长缴费或补缴至满15年。"
