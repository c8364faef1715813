"""``POST /api/upload`` decides before it decodes: no step awaited, a wrong step or a
declared size above the pixel cap is refused without decoding a pixel, and at most
``SI_UPLOAD_DECODES`` photos are decoded at once per process (others: 503)."""

from __future__ import annotations

import io
import threading
import zlib
from struct import pack

import pytest
from PIL import Image

from si_agent.app import build_controller
from si_agent.config.settings import Settings
from si_agent.server import create_app
from tests.server.test_upload_api import RecordingCardReader, SameFace, jpeg, post

ID_STEP = "id_card_photo"


def declared_png(width: int, height: int) -> bytes:
    """A small valid-looking PNG whose header declares width×height pixels."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return pack(">I", len(data)) + kind + data + pack(">I", zlib.crc32(kind + data))
    header = pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = zlib.compress(b"\x00" * (width * 3 + 1) * 4)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", rows) + chunk(b"IEND", b"")


def noisy_png(side: int) -> bytes:
    """A real photo-sized PNG that takes a while to decode and re-encode."""
    image = Image.effect_noise((side, side), 64).convert("RGB")
    out = io.BytesIO()
    image.save(out, "PNG", compress_level=1)
    return out.getvalue()


def make_app(settings: Settings):
    controller = build_controller(settings)
    controller = type(controller)(
        controller.catalog, controller.store, controller.engine, controller.executor,
        step_handlers={"id_card_ocr": RecordingCardReader(), "face_match": SameFace()})
    return create_app(settings, controller=controller)


def login(client, user: str) -> dict[str, str]:
    token = client.post("/api/token", json={"user_id": user}).get_json()["access_token"]
    return {"Authorization": f"Bearer {token}"}


def start(client, headers) -> dict:
    turn = client.post("/api/chat", headers=headers, json={"message": "我要做养老金资格认证"})
    assert turn.get_json()["awaiting"] == ID_STEP
    return client.get("/api/session", headers=headers).get_json()


def test_the_default_pixel_cap_fits_a_phone_photo_not_more():
    cap = Settings().upload_max_pixels
    assert 4032 * 3024 <= cap <= 13_000_000  # a 12 MP phone camera; ~40 MP is refused


def test_a_tiny_file_declaring_40_megapixels_is_refused_from_its_header(settings):
    app = make_app(settings)
    client = app.test_client()
    headers = login(client, "alice")
    before = start(client, headers)
    bomb = declared_png(7300, 5475)  # 40 MP in a file of a few hundred bytes
    assert len(bomb) < 150_000
    response = post(client, headers, bomb, "bomb.png")
    assert response.status_code == 413
    error = response.get_json()["error"]
    assert error["code"] == "too_many_pixels" and "12百万像素" in error["message"]
    assert app.config["SI_DECODE_SLOTS"].decodes == 0  # nothing was decoded
    assert client.get("/api/session", headers=headers).get_json() == before


@pytest.mark.parametrize("step", [None, "face_photo", "no_such_step"])
def test_no_step_awaited_is_refused_before_decoding(settings, step):
    app = make_app(settings)
    client = app.test_client()
    headers = login(client, "alice")
    form = {"step": step} if step else {}
    if step is not None:  # a photo step awaits, but not the one named
        start(client, headers)
    for photo, name in ((jpeg(), "a.jpg"), (declared_png(7300, 5475), "bomb.png")):
        response = post(client, headers, photo, name, **form)
        assert response.status_code == 400, response.get_json()
        assert response.get_json()["error"]["code"] == "no_step_awaited"
    assert app.config["SI_DECODE_SLOTS"].decodes == 0


def test_all_decode_slots_busy_is_503_with_retry_after_and_changes_nothing(settings):
    app = make_app(settings.replace(upload_decodes=1))
    slots = app.config["SI_DECODE_SLOTS"]
    slots.wait = 0.05
    client = app.test_client()
    headers = login(client, "alice")
    before = start(client, headers)
    assert slots.acquire()  # another upload is being decoded
    try:
        busy = post(client, headers, jpeg())
    finally:
        slots.release()
    assert busy.status_code == 503 and int(busy.headers["Retry-After"]) > 0
    error = busy.get_json()["error"]
    assert error["code"] == "uploads_busy" and "请稍等" in error["message"]
    assert client.get("/api/session", headers=headers).get_json() == before
    done = post(client, headers, jpeg())
    assert done.status_code == 200 and done.get_json()["awaiting"] == "face_photo"


def test_concurrent_uploads_never_decode_more_than_the_slots(settings):
    app = make_app(settings.replace(upload_decodes=2))
    slots = app.config["SI_DECODE_SLOTS"]
    slots.wait = 30.0  # under load the test waits rather than refuses
    photo = noisy_png(1200)
    users = [f"user{i}" for i in range(5)]
    clients = {user: app.test_client() for user in users}
    headers = {user: login(clients[user], user) for user in users}
    for user in users:
        start(clients[user], headers[user])
    answers: dict[str, int] = {}
    go = threading.Barrier(len(users))

    def send(user: str) -> None:
        go.wait(timeout=30)
        answers[user] = post(clients[user], headers[user], photo, "p.png").status_code

    threads = [threading.Thread(target=send, args=(user,)) for user in users]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert answers == {user: 200 for user in users}
    assert slots.decodes == len(users) and 1 <= slots.peak <= 2 and slots.held == 0
