"""ID card, mobile phone and bank card numbers."""

from __future__ import annotations

from datetime import date

import pytest
from validators_support import TODAY, luhn_complete, make_id, make_id_ending_in_x

from si_agent.validators import Result, check, extract


class TestIdcard:
    def test_valid_number(self):
        number = make_id("330106", "19900101", "123")
        assert check("idcard", number, today=TODAY) == Result(True, number, None)

    def test_lower_case_x_is_accepted_and_upper_cased(self):
        number = make_id_ending_in_x()
        result = check("idcard", number.lower(), today=TODAY)
        assert result.ok and result.value == number

    def test_spaces_inside_are_ignored(self):
        number = make_id()
        spaced = f"{number[:6]} {number[6:14]} {number[14:]}"
        assert check("idcard", spaced, today=TODAY).value == number

    def test_wrong_check_character(self):
        number = make_id()
        wrong = number[:17] + ("0" if number[17] != "0" else "1")
        assert check("idcard", wrong, today=TODAY).error == "身份证号码校验位不正确。"

    def test_old_fifteen_digit_number_has_its_own_message(self):
        result = check("idcard", "330106900101123")
        assert result.error == "这是15位旧身份证号码，请提供18位新号码。"

    @pytest.mark.parametrize("raw,n", [("33010619900101123", 17), ("3301061990010112345", 19)])
    def test_wrong_length(self, raw, n):
        assert check("idcard", raw).error == f"身份证号码应为18位，这里是{n}位。"

    @pytest.mark.parametrize("raw", ["张伟", "我不知道", "身份证在家里没带", "社 保 卡 挂 失"])
    def test_words_are_not_a_number_of_the_wrong_length(self, raw):
        # They were "身份证号码应为18位，这里是2位。": as if the citizen had typed 2 digits.
        assert check("idcard", raw).error == "这里需要填写18位身份证号码（数字，最后一位可以是X）。"

    def test_letters_other_than_a_final_x(self):
        assert check("idcard", "33010619900101X234").error == "身份证号码只有最后一位可以是X，其余应为数字。"
        assert check("idcard", "33010619900101123A").error == "身份证号码只有最后一位可以是X，其余应为数字。"

    @pytest.mark.parametrize("birth", ["19900230", "19901301", "19900001", "20230229"])
    def test_birth_date_that_does_not_exist(self, birth):
        result = check("idcard", make_id(birth=birth), today=TODAY)
        assert result.error == "身份证号码中的出生日期不存在。"

    def test_leap_day_exists_in_a_leap_year(self):
        assert check("idcard", make_id(birth="20000229"), today=TODAY).ok

    def test_birth_date_in_the_future(self):
        result = check("idcard", make_id(birth="20250602"), today=TODAY)
        assert result.error == "身份证号码中的出生日期晚于今天。"
        assert check("idcard", make_id(birth="20250601"), today=TODAY).ok
        assert check("idcard", make_id(birth="20250602"), today=date(2025, 6, 2)).ok

    def test_birth_before_1900(self):
        result = check("idcard", make_id(birth="18991231"), today=TODAY)
        assert result.error == "身份证号码中的出生日期早于1900年。"

    @pytest.mark.parametrize("region", [
        "000000", "100101", "160101", "550101", "990101", "330000", "810101", "830100",
    ])
    def test_implausible_region(self, region):
        result = check("idcard", make_id(region=region), today=TODAY)
        assert result.error == "身份证号码的前6位不是有效的地区代码。"

    @pytest.mark.parametrize("region", ["110101", "540102", "650102", "460200", "500101"])
    def test_real_regions(self, region):
        assert check("idcard", make_id(region=region), today=TODAY).ok

    @pytest.mark.parametrize("region", ["810000", "820000", "830000", "710000"])
    def test_hong_kong_macau_taiwan_residence_permits(self, region):
        assert check("idcard", make_id(region=region, birth="19850315"), today=TODAY).ok

    def test_extract_from_a_sentence(self):
        number = make_id("330106", "19900101", "123")
        text = f"我的身份证号是{number}，谢谢"
        assert [(f.value, f.start, f.end) for f in extract("idcard", text, today=TODAY)] == [
            (number, 7, 25)
        ]

    def test_extract_skips_invalid_and_embedded_numbers(self):
        number = make_id()
        bad = number[:17] + ("0" if number[17] != "0" else "1")
        assert extract("idcard", f"号码{bad}", today=TODAY) == []
        assert extract("idcard", f"号码9{number}", today=TODAY) == []
        assert extract("idcard", f"号码{number}7", today=TODAY) == []
        assert extract("idcard", f"号码A{number}", today=TODAY) == []

    def test_extract_lower_case_x(self):
        number = make_id_ending_in_x()
        (found,) = extract("idcard", f"身份证{number.lower()}。", today=TODAY)
        assert found.value == number and found.raw == number.lower()


class TestPhone:
    @pytest.mark.parametrize("raw", [
        "13812345678", "138 1234 5678", "138-1234-5678", "+86 138 1234 5678",
        "+8613812345678", "008613812345678", "8613812345678", "(+86) 13812345678",
        "１３８１２３４５６７８",
    ])
    def test_accepted_forms(self, raw):
        assert check("phone", raw) == check("phone", "13812345678")
        assert check("phone", raw).value == "13812345678"

    @pytest.mark.parametrize("prefix", ["13", "14", "15", "16", "17", "18", "19"])
    def test_every_mobile_prefix(self, prefix):
        assert check("phone", prefix + "912345678").ok

    @pytest.mark.parametrize("raw", ["1381234567", "138123456789", "138"])
    def test_wrong_length(self, raw):
        assert check("phone", raw).error == "手机号码应为11位数字。"

    @pytest.mark.parametrize("raw", ["10012345678", "12812345678", "23812345678"])
    def test_not_a_mobile_prefix(self, raw):
        assert check("phone", raw).error == "手机号码应以13到19开头。"

    @pytest.mark.parametrize("raw", ["0571-88888888", "010-12345678", "0755 8888 8888"])
    def test_landline(self, raw):
        assert check("phone", raw).error == "这是固定电话号码，不是手机号码。"

    def test_letters(self):
        assert check("phone", "138abcd5678").error == "手机号码中有不是数字的字符。"

    def test_extract_with_separators_and_prefix(self):
        text = "手机 138 1234 5678，备用+86-139-8765-4321，座机0571-88888888"
        assert [(f.value, f.raw) for f in extract("phone", text)] == [
            ("13812345678", "138 1234 5678"),
            ("13987654321", "+86-139-8765-4321"),
        ]

    def test_never_found_inside_an_id_or_bank_card_number(self):
        number = make_id("110105", "19381203", "567")  # contains 1381203567
        card = luhn_complete("621700138123456789")
        assert extract("phone", f"身份证{number}") == []
        assert extract("phone", f"卡号{card}") == []
        assert extract("phone", "编号213812345678") == []


class TestBankCard:
    def test_valid_card(self):
        card = luhn_complete("622202123456789012")
        assert check("bank_card", card).value == card

    def test_grouped_input(self):
        card = luhn_complete("621700123456789")
        grouped = " ".join(card[i:i + 4] for i in range(0, len(card), 4))
        assert check("bank_card", grouped).value == card
        assert check("bank_card", card[:8] + "-" + card[8:]).value == card

    @pytest.mark.parametrize("length", [16, 17, 18, 19])
    def test_lengths_16_to_19(self, length):
        assert check("bank_card", luhn_complete("6" * (length - 1))).ok

    @pytest.mark.parametrize("length", [15, 20])
    def test_wrong_length(self, length):
        result = check("bank_card", luhn_complete("6" * (length - 1)))
        assert result.error == f"银行卡号应为16到19位数字，这里是{length}位。"

    def test_luhn_failure(self):
        card = luhn_complete("622202123456789012")
        wrong = card[:-1] + str((int(card[-1]) + 1) % 10)
        assert check("bank_card", wrong).error == "银行卡号校验位不正确，可能有数字输错。"

    def test_letters(self):
        assert check("bank_card", "6222O21234567890").error == "银行卡号中有不是数字的字符。"

    def test_extract_contiguous_and_grouped(self):
        a = luhn_complete("622202123456789012")
        b = luhn_complete("621700123456789")
        grouped = " ".join(b[i:i + 4] for i in range(0, 16, 4))
        found = extract("bank_card", f"工资卡{a}，社保卡{grouped}。")
        assert [f.value for f in found] == [a, b]
        assert found[1].raw == grouped

    def test_extract_leaves_valid_id_numbers_to_idcard(self):
        seq = 0
        while True:  # an ID number that happens to pass the Luhn check
            number = make_id("330106", "19900101", f"{seq:03d}")
            if number.isdigit() and luhn_complete(number[:-1]) == number:
                break
            seq += 1
        assert check("bank_card", number).ok  # asked for a card, it is one
        assert extract("bank_card", f"身份证{number}") == []
