"""Businesses with steps and fields: steps produce fields, are redone, and are checked.

The step handlers (``si_agent.testing.steps``) stand in for the outside world (an
OCR engine and a face matcher): they "read" an ID card named by the uploaded file. Everything else
is the real controller, rule engine, job store and demo backend.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from si_agent.testing import FakeCardReader, fake_step_handlers

ID = "330122196303150178"  # demo person 张伟


@pytest.fixture
def handlers():
    return fake_step_handlers()


@pytest.fixture
def ctl(make_controller, handlers):
    return make_controller(step_handlers=handlers)


def applications(settings) -> int:
    from si_agent.demo_backend import ensure_db

    ensure_db(settings.demo_backend_db)
    with sqlite3.connect(settings.demo_backend_db) as db:
        return db.execute("SELECT COUNT(*) FROM applications "
                          "WHERE business_id = 'pension_certification'").fetchone()[0]


def test_two_steps_and_three_fields_reach_done_with_all_five(ctl, handlers, settings):
    turn = ctl.handle("u", "我要做养老金资格认证")
    assert (turn.state, turn.awaiting) == ("step_executing", "id_card_photo")
    turn = ctl.handle("u", "/tmp/blurry.jpg")
    assert (turn.state, turn.awaiting) == ("step_executing", "id_card_photo")
    assert "照片不清晰，无法识别" in turn.reply
    turn = ctl.handle("u", "/photos/zhangwei.jpg")
    assert (turn.state, turn.awaiting) == ("step_executing", "face_photo")
    assert "已记录：姓名 张伟、身份证号 3301**********0178" in turn.reply
    turn = ctl.handle("u", "/photos/me.png")
    assert (turn.state, turn.awaiting) == ("collecting", "phone")
    assert handlers["face_match"].saw_card == [True]
    turn = ctl.handle("u", "13812345678")
    assert turn.state == "confirming"
    for line in ("· 姓名：张伟", "· 手机号码：138****5678", "· 身份证照片：已完成",
                 "· 人脸照片：已完成"):
        assert line in turn.reply
    before = applications(settings)
    turn = ctl.handle("u", "确认")
    assert turn.state == "done" and turn.result["application_no"].startswith("SI")
    job = ctl.jobs.load(turn.job.id)
    assert job.status == "succeeded" and job.attempts == 1
    assert job.values == {}  # a finished job keeps no personal data
    assert applications(settings) == before + 1
    with sqlite3.connect(settings.demo_backend_db) as db:
        [(payload,)] = db.execute("SELECT payload FROM applications WHERE application_no = ?",
                                  (turn.result["application_no"],)).fetchall()
    submitted = json.loads(payload)
    assert set(submitted) == {"name", "id_number", "phone", "id_card_photo", "face_photo"}
    assert (submitted["name"], submitted["id_number"]) == ("张伟", ID)


def test_redo_a_step_while_confirming(ctl, handlers):
    for text in ("养老金资格认证", "/p/zhangwei.jpg", "/p/face1.png", "13812345678"):
        turn = ctl.handle("u", text)
    assert turn.state == "confirming"
    turn = ctl.handle("u", "修改人脸照片")
    assert (turn.state, turn.awaiting) == ("step_executing", "face_photo")
    assert "请重新完成【人脸照片】" in turn.reply and "正面免冠" in turn.reply
    turn = ctl.handle("u", "/p/face2.png")
    assert turn.state == "confirming"
    assert handlers["face_match"].calls == ["/p/face1.png", "/p/face2.png"]
    assert handlers["id_card_ocr"].calls == ["/p/zhangwei.jpg"]
    assert ctl.handle("u", "确认").state == "done"


def test_a_step_value_that_contradicts_a_typed_one_is_a_field_error(ctl):
    turn = ctl.handle("u", "我要做资格认证，我叫李四")
    assert turn.state == "step_executing"
    assert [f.value for f in turn.fields if f.key == "name"] == ["李四"]
    turn = ctl.handle("u", "/p/zhangwei.jpg")
    assert "身份证照片上的姓名与您填写的不一致" in turn.reply
    name = next(f for f in turn.fields if f.key == "name")
    assert (name.status, name.value) == ("invalid", None)
    turn = ctl.handle("u", "/p/face.png")
    assert (turn.state, turn.awaiting) == ("collecting", "name")
    turn = ctl.handle("u", "李四")
    assert "您填写的姓名与身份证照片上的不一致" in turn.reply
    assert turn.awaiting == "name"
    turn = ctl.handle("u", "张伟")
    assert (turn.state, turn.awaiting) == ("collecting", "phone")


def test_a_backend_error_on_a_step_sends_the_citizen_back_to_it(ctl, settings):
    for text in ("资格认证", "/p/zhangwei.jpg", "/p/stranger.png", "13812345678"):
        turn = ctl.handle("u", text)
    before = applications(settings)
    turn = ctl.handle("u", "确认")
    assert (turn.state, turn.awaiting) == ("step_executing", "face_photo")
    assert "人脸照片与身份证照片不是同一人" in turn.reply
    turn = ctl.handle("u", "/p/me.png")
    assert turn.state == "confirming"
    assert ctl.handle("u", "确认").state == "done"
    assert applications(settings) == before + 1


def test_a_business_whose_handler_is_missing_is_not_started(make_controller, caplog):
    ctl = make_controller(step_handlers={"id_card_ocr": FakeCardReader()})
    assert ctl.unavailable == {"pension_certification": ["face_match"]}
    assert "pension_certification is not available online" in caplog.text
    turn = ctl.handle("u", "我要做养老金资格认证")
    assert turn.state == "idle" and turn.business is None
    assert "【养老金资格认证】暂时无法在线办理" in turn.reply
    assert ctl.store.load("u").memory[-1].calls[0].reason == "unavailable_business"


def test_redoing_the_card_reads_the_fields_again_and_redoes_the_later_steps(ctl, handlers):
    for text in ("养老金资格认证", "/p/zhangwei.jpg", "/p/face1.png", "13812345678"):
        turn = ctl.handle("u", text)
    assert turn.state == "confirming"
    turn = ctl.handle("u", "修改身份证照片")
    assert (turn.state, turn.awaiting) == ("step_executing", "id_card_photo")
    fields = {f.key: (f.status, f.value) for f in turn.fields}
    assert fields["name"] == ("pending", None) and fields["id_number"] == ("pending", None)
    assert fields["phone"][0] == "collected"  # typed, not read from the card: kept
    turn = ctl.handle("u", "/p/lixiuying.jpg")
    assert "不一致" not in turn.reply
    assert "已记录：姓名 李秀英" in turn.reply
    assert (turn.state, turn.awaiting) == ("step_executing", "face_photo")  # done again
    turn = ctl.handle("u", "/p/face2.png")
    assert turn.state == "confirming" and "· 姓名：李秀英" in turn.reply
    assert handlers["face_match"].calls == ["/p/face1.png", "/p/face2.png"]


class Exploding:
    def run(self, step, upload, context):
        raise RuntimeError("model file missing")


def test_a_step_handler_that_crashes_is_a_step_failure_not_a_500(make_controller):
    ctl = make_controller(step_handlers={"id_card_ocr": Exploding(),
                                         "face_match": FakeCardReader()})
    ctl.handle("u", "资格认证")
    before = ctl.store.load("u").version
    turn = ctl.handle("u", "/p/zhangwei.jpg")
    assert (turn.state, turn.awaiting) == ("step_executing", "id_card_photo")
    assert "身份证照片未通过：照片暂时无法处理" in turn.reply
    assert ctl.store.load("u").version == before + 1  # the turn was saved normally


def test_skipping_an_optional_step_never_skips_a_required_one(catalog, settings):
    from si_agent.config.model import Business
    from si_agent.engine.rules import RuleEngine
    from si_agent.executor import Executors
    from si_agent.flow.controller import Controller
    from si_agent.session import MemoryStore
    from si_agent.testing import FakeIdPhoto

    cert = catalog["pension_certification"].model_dump()
    photo = {"id": "id_photo", "label": "证件照", "prompt": "可选：上传证件照，不需要请回复“跳过”。",
             "handler": "id_photo", "optional": True}
    business = Business.model_validate({**cert, "steps": [photo, *cert["steps"]]})
    handlers = {**fake_step_handlers(), "id_photo": FakeIdPhoto()}
    ctl = Controller({"pension_certification": business}, MemoryStore(),
                     RuleEngine({"pension_certification": business}), Executors(settings),
                     step_handlers=handlers)
    for text in ("资格认证", "/p/zhangwei.jpg", "/p/face.png", "13812345678"):
        turn = ctl.handle("u", text)
    assert turn.state == "confirming"
    turn = ctl.handle("u", "修改证件照")  # redoing the optional step forgets only itself
    assert (turn.state, turn.awaiting) == ("step_executing", "id_photo")
    turn = ctl.handle("u", "跳过")
    assert turn.state == "confirming", turn.reply
    session = ctl.store.load("u")
    assert set(session.step_data) == {"id_card_photo", "face_photo"}


def test_the_turn_lists_the_steps_and_says_whether_the_photo_passed(ctl):
    def statuses(turn):
        return [(st.id, st.status) for st in turn.steps]

    turn = ctl.handle("u", "我要做养老金资格认证")
    assert statuses(turn) == [("id_card_photo", "current"), ("face_photo", "pending")]
    assert turn.photo is None
    turn = ctl.handle("u", "/tmp/blurry.jpg")
    assert statuses(turn) == [("id_card_photo", "failed"), ("face_photo", "pending")]
    assert (turn.photo.step, turn.photo.passed) == ("id_card_photo", False)
    assert turn.photo.error and turn.photo.error in turn.reply
    turn = ctl.handle("u", "/photos/zhangwei.jpg")
    assert statuses(turn) == [("id_card_photo", "done"), ("face_photo", "current")]
    assert (turn.photo.step, turn.photo.passed, turn.photo.error) == ("id_card_photo", True, None)
    turn = ctl.handle("u", "/photos/me.png")
    assert statuses(turn) == [("id_card_photo", "done"), ("face_photo", "done")]
    turn = ctl.handle("u", "13812345678")
    assert turn.photo is None and turn.state == "confirming"
    assert statuses(turn) == [("id_card_photo", "done"), ("face_photo", "done")]
