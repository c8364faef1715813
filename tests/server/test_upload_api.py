"""``POST /api/upload``: a checked, cleaned photo reaches the awaited step's handler;
everything else is a clean 4xx in Chinese and the session does not change."""

from __future__ import annotations

import io
import zlib
from struct import pack

import pytest
from cryptography.fernet import Fernet
from PIL import Image

from si_agent.app import build_controller
from si_agent.flow.steps import StepResult
from si_agent.server import create_app

ID = "330122196303150178"  # demo person 张伟


class RecordingCardReader:
    """An ``id_card_ocr`` stand-in that looks at the bytes it gets."""

    def __init__(self) -> None:
        self.seen: list[tuple[bytes, str]] = []

    def run(self, step, upload, context):
        self.seen.append((upload.data, upload.media_type))
        return StepResult(fields={"name": "张伟", "id_number": ID}, data={"side": "portrait"})


class SameFace:
    def run(self, step, upload, context):
        return StepResult(data={"same_person": True})


@pytest.fixture
def reader():
    return RecordingCardReader()


@pytest.fixture
def upload_app(settings, reader):
    controller = build_controller(settings)
    controller = type(controller)(
        controller.catalog, controller.store, controller.engine, controller.executor,
        step_handlers={"id_card_ocr": reader, "face_match": SameFace()})
    return create_app(settings, controller=controller)


def jpeg(width=120, height=80, exif_orientation: int | None = None, gps: bool = False) -> bytes:
    image = Image.new("RGB", (width, height), (200, 30, 30))
    exif = Image.Exif()
    if exif_orientation:
        exif[0x0112] = exif_orientation
    if gps:
        exif[0x8825] = {1: "N", 2: (30.0, 15.0, 0.0)}
    out = io.BytesIO()
    image.save(out, "JPEG", exif=exif.tobytes())
    return out.getvalue()


def png_bomb(side: int = 10_000) -> bytes:
    """A tiny PNG that claims side×side pixels (100 megapixels): refused before decoding."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return pack(">I", len(data)) + kind + data + pack(">I", zlib.crc32(kind + data))
    header = pack(">IIBBBBB", side, side, 8, 0, 0, 0, 0)
    rows = zlib.compress(b"\x00" * (side + 1) * 16)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", rows) + chunk(b"IEND", b"")


def post(client, headers, data: bytes, name="photo.jpg", **form):
    return client.post("/api/upload", headers=headers, content_type="multipart/form-data",
                       data={"file": (io.BytesIO(data), name), **form})


def start_certification(client, headers):
    turn = client.post("/api/chat", headers=headers, json={"message": "我要做养老金资格认证"})
    assert turn.get_json()["awaiting"] == "id_card_photo"


def test_a_photo_goes_to_the_awaited_step_cleaned(upload_app, reader, login):
    client, headers = upload_app.test_client(), login()
    start_certification(client, headers)
    raw = jpeg(120, 80, exif_orientation=6, gps=True)
    response = post(client, headers, raw)
    assert response.status_code == 200, response.get_json()
    turn = response.get_json()
    assert turn["awaiting"] == "face_photo"
    data, media_type = reader.seen[-1]
    assert media_type == "image/jpeg" and data != raw
    with Image.open(io.BytesIO(data)) as seen:
        assert seen.size == (80, 120)  # orientation 6: turned upright
        assert not seen.getexif()  # no EXIF, no GPS
    # The history says a photo was sent, never its bytes.
    session = upload_app.config["SI_CONTROLLER"].store.load("alice")
    assert session.history[-2].text == "[上传照片]"
    settings = upload_app.config["SI_SETTINGS"]
    assert not settings.uploads_dir.exists()  # retention 0 (default): nothing kept


@pytest.mark.parametrize("body,name,status,code", [
    (b"%PDF-1.4\n1 0 obj\n<<>>\nendobj\n", "scan.jpg", 415, "not_an_image"),
    (jpeg()[:200], "cut.jpg", 415, "broken_image"),
    (png_bomb(), "bomb.png", 413, "too_many_pixels"),
    (b"\xff\xd8\xff" + b"\x00" * (9 * 2**20), "big.jpg", 413, "upload_too_large"),
])
def test_bad_uploads_are_refused_and_change_nothing(upload_app, reader, login, body, name,
                                                    status, code):
    client, headers = upload_app.test_client(), login()
    start_certification(client, headers)
    before = client.get("/api/session", headers=headers).get_json()
    response = post(client, headers, body, name)
    assert response.status_code == status
    error = response.get_json()["error"]
    assert error["code"] == code and error["message"].endswith("。")
    assert client.get("/api/session", headers=headers).get_json() == before
    assert reader.seen == []


def test_no_step_awaited_wrong_step_and_no_file(upload_app, login):
    client, headers = upload_app.test_client(), login()
    assert post(client, headers, jpeg()).get_json()["error"]["code"] == "no_step_awaited"
    start_certification(client, headers)
    wrong = post(client, headers, jpeg(), step="face_photo")
    assert (wrong.status_code, wrong.get_json()["error"]["code"]) == (400, "no_step_awaited")
    empty = client.post("/api/upload", headers=headers, content_type="multipart/form-data",
                        data={"step": "id_card_photo"})
    assert (empty.status_code, empty.get_json()["error"]["code"]) == (400, "missing_file")
    as_json = client.post("/api/upload", headers=headers, json={"file": "x"})
    assert as_json.status_code == 415
    assert client.post("/api/upload", content_type="multipart/form-data").status_code == 401


def test_the_whole_certification_by_upload(upload_app, login):
    client, headers = upload_app.test_client(), login()
    start_certification(client, headers)
    assert post(client, headers, jpeg()).status_code == 200
    turn = post(client, headers, jpeg(), step="face_photo").get_json()
    assert turn["state"] == "collecting" and turn["awaiting"] == "phone"


def test_photos_are_kept_encrypted_only_when_configured(settings, reader, login, tmp_path):
    key = Fernet.generate_key().decode()
    kept = settings.replace(upload_retention_days=7, upload_key=key)
    controller = build_controller(kept)
    controller = type(controller)(
        controller.catalog, controller.store, controller.engine, controller.executor,
        step_handlers={"id_card_ocr": reader, "face_match": SameFace()})
    app = create_app(kept, controller=controller)
    client = app.test_client()
    headers = {"Authorization": "Bearer " + client.post(
        "/api/token", json={"user_id": "bob"}).get_json()["access_token"]}
    start_certification(client, headers)
    assert post(client, headers, jpeg()).status_code == 200
    files = list(kept.uploads_dir.glob("*.bin"))
    assert len(files) == 1
    blob = files[0].read_bytes()
    assert not blob.startswith(b"\xff\xd8") and reader.seen[-1][0][:16] not in blob  # ciphertext
    assert Fernet(key.encode()).decrypt(blob) == reader.seen[-1][0]
