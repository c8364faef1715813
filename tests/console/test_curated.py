"""The curated answers screen: roles, CSRF, add/edit/disable/delete, import, audit; and
the answer citizens then get, from the same app, with its source, date and hit count."""

from __future__ import annotations

import io
import uuid

import pytest

from tests.console.conftest import csrf, token

FORM = {"question": "失业金怎么领", "paraphrases": "失业金咋领\n怎么申请失业金",
        "answer": "请带身份证到就近的社保经办窗口申请。", "source": "市人社局常见问题",
        "as_of": "2025-06-01", "businesses": "unemployment_benefit"}


def _staff(client):
    client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {token('li', ['staff'])}"
    return client


def _entries(app, action=None):
    entries = app.config["SI_CONTROLLER"].audit.query(limit=100)
    return [e for e in entries if e.event == "staff" and (action is None or e.action == action)]


def _book(app):
    return app.config["SI_CONTROLLER"].knowledge.book


def _add(client, **changes):
    data = {**FORM, **changes, "csrf_token": csrf(client, "/console/curated/new")}
    return client.post("/console/curated/new", data=data)


def _ask(client, message: str) -> dict:
    user = f"citizen-{uuid.uuid4().hex[:8]}"  # a new conversation each time
    access = client.post("/api/token", json={"user_id": user}).get_json()["access_token"]
    return client.post("/api/chat", json={"message": message},
                       headers={"Authorization": f"Bearer {access}"}).get_json()


@pytest.mark.parametrize(("method", "path"), [
    ("get", "/console/curated"), ("get", "/console/curated/new"),
    ("post", "/console/curated/new"), ("post", "/console/curated/import"),
    ("post", "/console/curated/abc/delete"), ("post", "/console/curated/abc/enabled"),
    ("get", "/console/curated/abc"),
])
def test_a_citizen_token_is_refused_and_no_sign_in_goes_to_sign_in(client, method, path):
    anonymous = getattr(client, method)(path)
    assert anonymous.status_code in ((303,) if method == "get" else (400, 401))
    client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {token('citizen', [])}"
    if method == "post":  # past the CSRF check, the role check refuses
        headers = {"X-CSRFToken": csrf(client, "/console/login")}
        assert client.post(path, headers=headers).status_code == 403
    else:
        assert client.get(path).status_code == 403


def test_a_post_without_the_csrf_token_changes_nothing(app, client):
    _staff(client)
    assert client.post("/console/curated/new", data=FORM).status_code == 400
    assert _book(app).all() == []


def test_add_edit_disable_delete_each_audited_and_citizens_get_it(app, client):
    _staff(client)
    assert _add(client).status_code == 303
    [answer] = _book(app).all()
    assert answer.author == "li" and answer.paraphrases == ["失业金咋领", "怎么申请失业金"]
    page = client.get("/console/curated?done=added").get_data(as_text=True)
    assert "已添加常用答案。" in page and "失业金怎么领" in page and "来源：《市人社局常见问题》（2025年6月1日）" in page

    reply = _ask(client, "请问，失业金咋领？")
    assert "请带身份证到就近的社保经办窗口申请。" in reply["reply"]
    assert "来源：《市人社局常见问题》（2025年6月1日）" in reply["reply"]
    assert _book(app).get(answer.id).hits == 1

    again = _add(client, question="请问失业金怎么领？")  # the same question
    assert again.status_code == 400 and "重复" in again.get_data(as_text=True)
    bad_date = _add(client, question="医保怎么交", as_of="明天")
    assert bad_date.status_code == 400 and "日期无法识别" in bad_date.get_data(as_text=True)

    edit = f"/console/curated/{answer.id}"
    data = {**FORM, "answer": "新答案：网上也可以申请。", "csrf_token": csrf(client, edit)}
    assert client.post(edit, data=data).status_code == 303
    assert "新答案" in _ask(client, "失业金怎么领")["reply"]
    assert "第 1 版" in client.get(edit).get_data(as_text=True)  # the history

    token_ = csrf(client, "/console/curated")
    client.post(f"/console/curated/{answer.id}/enabled", data={"csrf_token": token_, "enabled": "0"})
    assert "新答案" not in _ask(client, "失业金怎么领")["reply"]
    client.post(f"/console/curated/{answer.id}/delete", data={"csrf_token": token_})
    assert _book(app).all() == []
    assert [e.action for e in reversed(_entries(app))] == [
        "curated_added", "curated_updated", "curated_disabled", "curated_deleted"]
    assert all(e.actor == "li" and e.target == answer.id for e in _entries(app))


def test_a_form_at_its_limits_is_accepted(app, client):
    _staff(client)
    paraphrases = "\n".join(f"{i}号" + "问" * 196 for i in range(50))
    page = _add(client, answer="答" * 4000, paraphrases=paraphrases)
    assert page.status_code == 303
    [answer] = _book(app).all()
    assert len(answer.paraphrases) == 50 and len(answer.answer) == 4000


def test_an_unknown_answer_is_404(client):
    _staff(client)
    assert client.get("/console/curated/nope").status_code == 404
    token_ = csrf(client, "/console/curated")
    assert client.post("/console/curated/nope/delete", data={"csrf_token": token_}).status_code == 404


def _upload(client, data: bytes, name: str):
    token_ = csrf(client, "/console/curated")
    return client.post("/console/curated/import", content_type="multipart/form-data",
                       data={"csrf_token": token_, "file": (io.BytesIO(data), name)})


def test_an_import_with_bad_rows_imports_nothing_and_names_them(app, client):
    _staff(client)
    text = "问题,答案,来源,日期\n失业金怎么领,答。,市人社局,2025-06\n社保卡,,市人社局,2025-06\n"
    page = _upload(client, text.encode(), "faq.csv")
    assert page.status_code == 400
    assert "第3行：“答案”为空" in page.get_data(as_text=True) and _book(app).all() == []
    page = _upload(client, b"MZ\x90\x00" + b"\0" * 100, "faq.xlsx")
    assert page.status_code == 400 and "无法读取该文件" in page.get_data(as_text=True)
    assert _entries(app, "curated_imported") == []


def test_an_import_adds_and_updates_and_is_audited(app, client):
    _staff(client)
    _add(client)
    text = ("问题,答案,来源,日期,相似问法,业务\n"
            "失业金怎么领,导入的新答案。,市人社局,2025-07,,失业保险金申领\n"
            "社保卡丢了怎么办,先挂失再补办。,社保卡指南,2025-06,社保卡掉了|社保卡丢失,\n")
    page = _upload(client, text.encode("gb18030"), "常见问题.csv")
    assert page.status_code == 303
    done = client.get(page.headers["Location"]).get_data(as_text=True)
    assert "导入完成：新增 1 条，更新 1 条。" in done
    assert "先挂失再补办。" in _ask(client, "社保卡丢了怎么办？")["reply"]
    assert "导入的新答案" in _ask(client, "失业金咋领")["reply"]
    [entry] = _entries(app, "curated_imported")
    assert entry.detail == "1 added, 1 updated"


def test_an_import_row_repeating_another_row_is_named(app, client):
    _staff(client)
    text = ("问题,答案,来源,日期,相似问法\n社保卡丢了怎么办,答。,来源,2025-06,社保卡掉了\n"
            "社保卡掉了,答。,来源,2025-06,\n")
    page = _upload(client, text.encode(), "faq.csv").get_data(as_text=True)
    assert "第3行：问题“社保卡掉了”与表中第2行重复" in page


def test_hit_testing_shows_the_curated_answer_winning_and_counts_no_hit(kb_app, kb_client):
    from si_agent.curated import Draft

    book = _book(kb_app)
    answer = book.add(Draft(question="失业金怎么领", answer="常用答案：带身份证申请。",
                            source="市人社局常见问题", as_of="2025-06"), "li")
    try:
        headers = {"X-CSRFToken": csrf(kb_client, "/console/hits")}
        test = kb_client.post("/console/api/hits", json={"question": "失叶金咋领"},
                              headers=headers).get_json()
        assert test["curated"] == {"id": answer.id, "question": "失业金怎么领",
                                   "matched": "失业金怎么领", "how": "exact", "score": 100.0}
        assert test["chunks"]  # the search is still shown
        assert test["answer"] == "常用答案：带身份证申请。\n来源：《市人社局常见问题》（2025年6月）"
        assert test["answer"] in test["turn"]["reply"]
        page = kb_client.post("/console/hits", data={"question": "失业金怎么领？",
                                                     "csrf_token": headers["X-CSRFToken"]})
        assert 'data-testid="curated-won" data-how="exact"' in page.get_data(as_text=True)
        assert book.get(answer.id).hits == 0  # staff testing is no citizen's question
    finally:
        book.delete(answer)


def test_a_large_sheet_imports_and_a_huge_one_is_refused_with_a_reason(app, client):
    _staff(client)
    rows = "".join(f"社保问题第{i}号怎么办,答案{i}。" + "说明" * 100 + ",来源,2025-06\n"
                   for i in range(300))
    data = ("问题,答案,来源,日期\n" + rows).encode()
    assert len(data) > 64 * 1024  # more than the API's request limit
    page = _upload(client, data, "faq.csv")
    assert page.status_code == 303, page.get_data(as_text=True)[:300]
    assert len(_book(app).all()) == 300
    page = _upload(client, b"a" * (6 * 1024 * 1024), "faq.csv")
    assert page.status_code == 413
    assert "文件过大（超过 5 MB）" in page.get_data(as_text=True)
