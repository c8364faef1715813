"""Transport failures: exactly one retry, with the same Idempotency-Key."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from si_agent.errors import ExecutorError
from si_agent.executor import Executors, texts


class CountingTransport(httpx.HTTPTransport):
    """A real network transport that counts the requests it is asked to send."""

    def __init__(self) -> None:
        super().__init__()
        self.attempts = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.attempts += 1
        return super().handle_request(request)


class RawServer:
    """A TCP server whose N-th request is handled by ``behaviours[N]``: "drop" closes
    the connection without answering, "hang" never answers, anything else (the
    default) answers 200 with the Idempotency-Key it received."""

    def __init__(self, behaviours: dict[int, str]) -> None:
        self.behaviours = behaviours
        self.keys: list[str | None] = []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def connections(self) -> int:
        return len(self.keys)

    def _serve(self) -> None:
        self.sock.settimeout(0.1)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            request = self._read(conn)
            key = next((line.split(":", 1)[1].strip() for line in request.split("\r\n")
                        if line.lower().startswith("idempotency-key:")), None)
            with self.lock:
                self.keys.append(key)
                behaviour = self.behaviours.get(len(self.keys), "answer")
            if behaviour == "drop":
                return  # close without a response
            if behaviour == "hang":
                self.stop.wait(5)
                return
            body = json.dumps({"ok": True, "key": key}).encode()
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Connection: close\r\nContent-Length: %d\r\n\r\n%s"
                         % (len(body), body))

    @staticmethod
    def _read(conn: socket.socket) -> str:
        conn.settimeout(2)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
        return data.decode("latin-1")

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        self.sock.close()


@pytest.fixture
def raw_server() -> Iterator[type[RawServer]]:
    servers: list[RawServer] = []

    def start(behaviours: dict[int, str]) -> RawServer:
        servers.append(RawServer(behaviours))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_nothing_listening_fails_after_exactly_two_attempts(settings, monkeypatch, make_business):
    monkeypatch.setenv("SI_BACKEND_URL", f"http://127.0.0.1:{free_port()}")
    transport = CountingTransport()
    biz = make_business("social_transfer", ["name"])
    with Executors(settings, transport=transport) as ex, pytest.raises(ExecutorError) as err:
        ex.run(biz, {"name": "张伟"}, idempotency_key="k")
    assert transport.attempts == 2
    assert err.value.message == texts.UNREACHABLE == "业务系统暂时无法连接，请稍后再试。"
    assert err.value.retryable is True
    assert err.value.status is None
    assert isinstance(err.value.__cause__, httpx.ConnectError)


def test_a_dropped_connection_is_retried_with_the_same_key(
    settings, monkeypatch, raw_server, make_business
):
    server = raw_server({1: "drop"})
    monkeypatch.setenv("SI_BACKEND_URL", f"http://127.0.0.1:{server.port}")
    with Executors(settings) as ex:
        result = ex.run(make_business("social_transfer"), {}, idempotency_key="same-key")
    assert result == {"ok": True, "key": "same-key"}
    assert server.keys == ["same-key", "same-key"]


def test_two_dropped_connections_give_up(settings, monkeypatch, raw_server, make_business):
    server = raw_server({1: "drop", 2: "drop"})
    monkeypatch.setenv("SI_BACKEND_URL", f"http://127.0.0.1:{server.port}")
    with Executors(settings) as ex, pytest.raises(ExecutorError) as err:
        ex.run(make_business("social_transfer"), {}, idempotency_key="k")
    assert err.value.retryable is True
    time.sleep(0.2)  # let the server thread record a (wrong) third connection, if any
    assert server.connections == 2


def test_a_read_timeout_is_retried_once(settings, monkeypatch, raw_server, make_business):
    server = raw_server({1: "hang", 2: "hang"})
    monkeypatch.setenv("SI_BACKEND_URL", f"http://127.0.0.1:{server.port}")
    started = time.monotonic()
    with Executors(settings) as ex, pytest.raises(ExecutorError) as err:
        ex.run(make_business("social_transfer", timeout=0.3), {}, idempotency_key="k")
    assert isinstance(err.value.__cause__, httpx.ReadTimeout)
    assert 0.6 <= time.monotonic() - started < 3
    server.stop.set()
    time.sleep(0.2)
    assert server.connections == 2
