"""The photo steps end to end on the real engines: rapidocr reads the card, YuNet +
SFace compare the selfie with the card's portrait, the 证件照 is cropped, and the
demo backend receives the submission. Photos go in as ``Controller.upload`` does it
for ``POST /api/upload``: checked and cleaned first."""

from __future__ import annotations

import base64
import io
import json
import sqlite3
from pathlib import Path

import pytest
from PIL import Image, ImageEnhance

from si_agent import replies
from si_agent.app import build_controller
from si_agent.config.settings import Settings
from si_agent.photo import messages
from si_agent.testing import cards, faces
from si_agent.uploads import clean_image
from tests.photo.conftest import ZHANG_WEI

ROOT = Path(__file__).resolve().parents[2]


def image(data: bytes):
    return clean_image(data, max_bytes=8 * 2**20, max_pixels=40_000_000)


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(business_dir=ROOT / "businesses", knowledge="none", data_dir=tmp_path,
                    session_store="sqlite")


@pytest.fixture
def ctl(settings):
    controller = build_controller(settings, engine="rules")
    assert {"id_card_ocr", "face_match", "id_photo"} <= set(controller.step_handlers)
    assert not controller.unavailable
    return controller


def submitted(settings, turn) -> dict:
    """What the demo backend stored for the application ``turn`` reports."""
    assert turn.state == "done", turn.reply
    with sqlite3.connect(settings.demo_backend_db) as db:
        (payload,) = db.execute("SELECT payload FROM applications WHERE application_no = ?",
                                (turn.result["application_no"],)).fetchone()
    return json.loads(payload)


def certification_read(ctl, card_photo, user="u"):
    turn = ctl.handle(user, "我要做养老金资格认证")
    assert (turn.state, turn.step.id) == ("step_executing", "id_card_photo")
    return ctl.upload(user, image(card_photo))


def test_a_card_and_the_same_persons_selfie_reach_done(ctl, settings, card_photo, selfie):
    turn = certification_read(ctl, card_photo)
    assert (turn.state, turn.awaiting) == ("step_executing", "face_photo")
    fields = {f.key: f.value for f in turn.fields}
    assert fields["name"] == "张伟" and fields["id_number"] == "3301**********0178"
    assert "已记录：姓名 张伟" in turn.reply and turn.step.capture == "user"
    turn = ctl.upload("u", image(selfie))
    assert (turn.state, turn.awaiting) == ("collecting", "phone"), turn.reply
    assert "人脸照片已完成" in turn.reply
    ctl.handle("u", "13800138001")
    payload = submitted(settings, ctl.handle("u", "确认"))
    assert payload["id_number"] == "330122196303150178"
    assert payload["face_photo"] == {"same_person": True}
    assert payload["id_card_photo"] == {"sex": "男", "ethnicity": "汉", "birth": "1963-03-15"}
    # The portrait was for this flow only: gone once it is done.
    session = ctl.store.load("u")
    assert session.step_files == {}
    assert ctl.files.get(f"u:{session.flow_nonce}", "id_card_photo/portrait") is None


def read_fields(turn) -> dict:
    return {f.key: (f.status, f.value) for f in turn.fields if f.key in ("name", "id_number")}


def test_another_person_is_asked_again(ctl, card_photo, stranger, selfie):
    read = read_fields(certification_read(ctl, card_photo))
    assert read == {"name": ("collected", "张伟"), "id_number": ("collected", "3301**********0178")}
    # However often the face differs, only the selfie is asked again: the card stays read.
    for _ in range(4):
        turn = ctl.upload("u", image(stranger))
        assert (turn.state, turn.awaiting, turn.step.id) == ("step_executing", "face_photo",
                                                            "face_photo")
        assert replies.FACE_NOT_SAME in turn.reply and "身份证人像面" not in turn.reply
        assert read_fields(turn) == read
        assert ctl.files.get(f"u:{ctl.store.load('u').flow_nonce}",
                             "id_card_photo/portrait") is not None
    turn = ctl.upload("u", image(selfie))
    assert (turn.state, turn.awaiting) == ("collecting", "phone"), turn.reply
    assert read_fields(turn) == read


def test_an_unusable_selfie_is_asked_again_keeping_the_card(ctl, card_photo, cat, selfie):
    read = read_fields(certification_read(ctl, card_photo))
    dark = faces.jpeg(ImageEnhance.Brightness(faces.astronaut()).enhance(0.08))
    for photo, text in ((cat, replies.FACE_NONE), (dark, replies.FACE_TOO_DARK)):
        turn = ctl.upload("u", image(photo))
        assert text in turn.reply and turn.awaiting == "face_photo"
        assert read_fields(turn) == read
    assert ctl.upload("u", image(selfie)).awaiting == "phone"


def test_a_card_whose_photo_holds_no_face_is_asked_again_at_the_card(ctl, card_photo, selfie):
    ctl.handle("u", "我要做养老金资格认证")
    placeholder = faces.jpeg(cards.portrait_photo(ZHANG_WEI))  # every field, a drawn head
    turn = ctl.upload("u", image(placeholder))
    assert (turn.state, turn.awaiting) == ("step_executing", "id_card_photo")
    assert messages.PORTRAIT_NOT_FOUND in turn.reply
    assert read_fields(turn) == {"name": ("pending", None), "id_number": ("pending", None)}
    assert ctl.upload("u", image(card_photo)).awaiting == "face_photo"
    assert ctl.upload("u", image(selfie)).awaiting == "phone"


def test_an_unusable_kept_portrait_sends_the_citizen_back_to_the_card(ctl, card_photo, selfie):
    certification_read(ctl, card_photo)
    owner = f"u:{ctl.store.load('u').flow_nonce}"
    ctl.files.put(owner, "id_card_photo/portrait", faces.jpeg(faces.cat()))  # no face on it
    turn = ctl.upload("u", image(selfie))
    assert replies.FACE_BAD_REFERENCE in turn.reply
    assert (turn.state, turn.step.id) == ("step_executing", "id_card_photo")
    assert read_fields(turn)["name"] == ("pending", None)
    certification_read(ctl, card_photo)
    assert ctl.upload("u", image(selfie)).state == "collecting"


def test_the_back_side_or_a_cat_is_asked_again(ctl, back_photo, card_photo, cat):
    ctl.handle("u", "养老金资格认证")
    turn = ctl.upload("u", image(back_photo))
    assert (turn.state, turn.awaiting) == ("step_executing", "id_card_photo")
    assert messages.BACK_SIDE in turn.reply
    turn = ctl.upload("u", image(cat))  # a cat is no ID card
    assert messages.NO_CARD in turn.reply and turn.awaiting == "id_card_photo"
    ctl.upload("u", image(card_photo))
    turn = ctl.upload("u", image(cat))  # nor a face
    assert replies.FACE_NONE in turn.reply and turn.awaiting == "face_photo"


def test_a_typed_name_that_differs_from_the_card_is_a_field_error(ctl, card_photo, selfie):
    turn = ctl.handle("u", "我要做资格认证，我叫李四")
    assert [f.value for f in turn.fields if f.key == "name"] == ["李四"]
    turn = ctl.upload("u", image(card_photo))
    assert "身份证照片上的姓名与您填写的不一致" in turn.reply
    name = next(f for f in turn.fields if f.key == "name")
    assert (name.status, name.value) == ("invalid", None)
    turn = ctl.upload("u", image(selfie))
    assert (turn.state, turn.awaiting) == ("collecting", "name")


def test_modifying_the_face_photo_while_confirming_redoes_that_step(ctl, settings, card_photo,
                                                                   selfie, stranger):
    certification_read(ctl, card_photo)
    ctl.upload("u", image(selfie))
    turn = ctl.handle("u", "13800138001")
    assert turn.state == "confirming" and "· 人脸照片：已完成" in turn.reply
    turn = ctl.handle("u", "修改人脸照片")
    assert (turn.state, turn.step.id) == ("step_executing", "face_photo")
    turn = ctl.upload("u", image(stranger))  # the portrait is still there to compare with
    assert replies.FACE_NOT_SAME in turn.reply
    turn = ctl.upload("u", image(selfie))
    assert turn.state == "confirming"
    assert ctl.handle("u", "确认").state == "done"


def test_a_second_worker_finds_the_portrait_the_first_one_read(settings, card_photo, selfie):
    first, second = build_controller(settings, engine="rules"), build_controller(settings,
                                                                                 engine="rules")
    certification_read(first, card_photo)
    turn = second.upload("u", image(selfie))
    assert turn.state == "collecting", turn.reply


def test_a_lost_portrait_sends_the_citizen_back_to_the_card(ctl, card_photo, selfie):
    certification_read(ctl, card_photo)
    session = ctl.store.load("u")
    ctl.files.drop(f"u:{session.flow_nonce}")  # expired, or kept by a restarted process
    turn = ctl.upload("u", image(selfie))
    assert replies.FACE_NO_REFERENCE in turn.reply
    assert (turn.state, turn.step.id) == ("step_executing", "id_card_photo")
    assert {f.key: f.value for f in turn.fields}["name"] is None
    certification_read(ctl, card_photo)
    assert ctl.upload("u", image(selfie)).state == "collecting"


# -- 社保卡申领: fields and an optional photo step -----------------------------------


CARD_APPLY = ["我要申请社保卡", "张伟", "330122196303150178", "13800138001", "工行",
              "浙江省杭州市西湖区文三路100号"]


def test_card_apply_without_the_photo_is_submitted_as_before(ctl, settings):
    for text in CARD_APPLY:
        turn = ctl.handle("u", text)
    assert turn.state == "confirming"
    assert "· 证件照：未上传（可选）" in turn.reply and "上传一张本人近期正面免冠照片" in turn.reply
    assert turn.step.id == "id_photo" and turn.step.optional
    assert "id_photo" not in submitted(settings, ctl.handle("u", "确认"))


def test_card_apply_with_a_photo_sends_a_358x441_jpeg(ctl, settings):
    ctl.handle("u", CARD_APPLY[0])
    turn = ctl.upload("u", image(faces.jpeg(faces.astronaut())))  # while collecting
    assert (turn.state, turn.awaiting) == ("collecting", "name"), turn.reply
    assert "证件照已完成" in turn.reply and turn.step is None
    for text in CARD_APPLY[1:]:
        turn = ctl.handle("u", text)
    assert turn.state == "confirming" and "· 证件照：已完成" in turn.reply
    payload = submitted(settings, ctl.handle("u", "确认"))
    photo = Image.open(io.BytesIO(base64.b64decode(payload["id_photo"]["photo"])))
    assert (photo.format, photo.size) == ("JPEG", (358, 441))


def test_a_bad_card_photo_is_asked_again_or_skipped(ctl, settings):
    for text in CARD_APPLY:
        ctl.handle("u", text)
    turn = ctl.upload("u", image(faces.jpeg(faces.hopper())))  # a dark background
    # Taken up in passing: the confirmation stands, the photo may be sent again.
    assert (turn.state, turn.awaiting, turn.step.id) == ("confirming", "confirm", "id_photo")
    assert replies.ID_PHOTO_BACKGROUND in turn.reply and "跳过" in turn.reply
    turn = ctl.upload("u", image(faces.jpeg(faces.two_people())))
    assert replies.FACE_MULTIPLE in turn.reply and turn.state == "confirming"
    turn = ctl.handle("u", "不上传了")
    assert (turn.state, turn.awaiting) == ("confirming", "confirm"), turn.reply
    assert "· 证件照：不上传" in turn.reply and turn.step is None
    assert "id_photo" not in submitted(settings, ctl.handle("u", "确认"))


def test_changing_the_card_photo_while_confirming(ctl, settings):
    for text in CARD_APPLY:
        ctl.handle("u", text)
    ctl.upload("u", image(faces.jpeg(faces.astronaut())))
    turn = ctl.handle("u", "修改证件照")
    assert (turn.state, turn.step.id) == ("step_executing", "id_photo")
    assert "跳过" in turn.reply
    turn = ctl.handle("u", "跳过")
    assert turn.state == "confirming" and "· 证件照：不上传" in turn.reply
    session = ctl.store.load("u")
    assert session.step_files == {}  # the old photo was dropped with the step
    assert ctl.files.get(f"u:{session.flow_nonce}", "id_photo/photo") is None
    assert "id_photo" not in submitted(settings, ctl.handle("u", "确认"))


def test_a_tilted_head_is_asked_again():
    from si_agent.photo.idphoto import make_id_photo
    head = faces.astronaut().crop((100, 0, 350, 250)).resize((500, 500))
    assert make_id_photo(faces.jpeg(head)).ok
    tilted = make_id_photo(faces.jpeg(faces.tilted(head, 25)))
    assert (tilted.problem, tilted.error) == ("not_frontal", replies.ID_PHOTO_NOT_FRONTAL)


def test_the_certification_over_http_with_real_photos(settings, card_photo, selfie, stranger):
    from si_agent.server import create_app

    app = create_app(settings.replace(session_store="memory", rate_limit="1000 per minute"))
    client = app.test_client()
    token = client.post("/api/token", json={"user_id": "alice"}).get_json()["access_token"]
    headers = {"Authorization": f"Bearer {token}"}

    def post(data: bytes, name: str = "photo.jpg"):
        response = client.post("/api/upload", headers=headers,
                               content_type="multipart/form-data",
                               data={"file": (io.BytesIO(data), name)})
        assert response.status_code == 200, response.get_json()
        return response.get_json()

    client.post("/api/chat", headers=headers, json={"message": "我要做养老金资格认证"})
    assert post(card_photo)["step"]["id"] == "face_photo"
    turn = post(stranger)
    assert turn["step"]["id"] == "face_photo" and replies.FACE_NOT_SAME in turn["reply"]
    assert post(selfie)["awaiting"] == "phone"
    client.post("/api/chat", headers=headers, json={"message": "13800138001"})
    turn = client.post("/api/chat", headers=headers, json={"message": "确认"}).get_json()
    assert turn["state"] == "done", turn["reply"]
    assert turn["reply"].startswith("养老金资格认证已提交")


def test_declining_the_photo_in_words_while_collecting_or_confirming(ctl, settings):
    ctl.handle("u", CARD_APPLY[0])
    turn = ctl.handle("u", "跳过")  # not a name
    assert (turn.state, turn.awaiting) == ("collecting", "name")
    assert {f.key: f.value for f in turn.fields}["name"] is None
    assert "不上传证件照" in turn.reply and turn.step is None
    for text in CARD_APPLY[1:]:
        turn = ctl.handle("u", text)
    assert "· 证件照：不上传" in turn.reply
    assert "上传一张本人近期正面免冠照片" not in turn.reply  # no longer offered
    turn = ctl.handle("u", "修改证件照")  # changed their mind
    assert (turn.state, turn.step.id) == ("step_executing", "id_photo")
    assert "请上传【证件照】" in turn.reply  # never done: not "again"
    turn = ctl.handle("u", "确认，不用照片")
    assert turn.state == "done", turn.reply


def test_a_photo_kept_longer_than_the_session_is_asked_again(ctl, settings):
    for text in CARD_APPLY:
        ctl.handle("u", text)
    assert ctl.upload("u", image(faces.jpeg(faces.astronaut()))).state == "confirming"
    session = ctl.store.load("u")
    ctl.files.drop(f"u:{session.flow_nonce}")  # expired
    turn = ctl.handle("u", "确认")
    assert (turn.state, turn.step.id) == ("step_executing", "id_photo"), turn.reply
    assert replies.STEP_FILE_GONE in turn.reply and "跳过" in turn.reply
    turn = ctl.handle("u", "跳过")
    assert turn.state == "confirming"
    assert "id_photo" not in submitted(settings, ctl.handle("u", "确认"))


def test_the_job_record_never_holds_the_photo(ctl, settings):
    for text in CARD_APPLY:
        ctl.handle("u", text)
    ctl.upload("u", image(faces.jpeg(faces.astronaut())))
    turn = ctl.handle("u", "确认")
    assert turn.state == "done"
    job = ctl.jobs.load(ctl.store.load("u").job_id)
    assert job.values == {}  # dropped when the job finished
    with sqlite3.connect(settings.sessions_db) as db:
        stored = " ".join(str(row) for row in db.execute("SELECT * FROM jobs"))
        sessions = " ".join(str(row) for row in db.execute("SELECT data FROM sessions"))
    photo = submitted(settings, turn)["id_photo"]["photo"]
    assert photo[:40] not in stored and photo[:40] not in sessions


def test_photos_stay_out_of_logs_records_and_replies(ctl, settings, card_photo, selfie, caplog):
    import base64 as b64
    import logging

    caplog.set_level(logging.DEBUG)
    certification_read(ctl, card_photo)
    turn = ctl.upload("u", image(selfie))
    ctl.handle("u", "13800138001")
    done = ctl.handle("u", "确认")
    assert done.state == "done"
    session = ctl.store.load("u")
    blobs = [card_photo, selfie]
    texts = [caplog.text, session.model_dump_json(), turn.model_dump_json(),
             done.model_dump_json()]
    for blob in blobs:
        for encoded in (b64.b64encode(blob[100:160]).decode(), blob[100:160].hex()):
            assert not any(encoded in t for t in texts)
    assert "330122196303150178" not in caplog.text


def test_resetting_drops_the_photos(ctl, card_photo):
    certification_read(ctl, card_photo)
    owner = f"u:{ctl.store.load('u').flow_nonce}"
    assert ctl.files.get(owner, "id_card_photo/portrait") is not None
    ctl.reset("u")
    assert ctl.files.get(owner, "id_card_photo/portrait") is None
