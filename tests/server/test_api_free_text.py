"""Free text through the API: invisible and control characters never reach the backend."""

from __future__ import annotations

from si_agent.validators import messages as M

START = "办社保卡，孙小美，33010619900101123X，13912345678，建行"
ADDRESS = "浙江省杭州市西湖区文三路100号"


def chat(client, headers, message):
    res = client.post("/api/chat", json={"message": message}, headers=headers)
    assert res.status_code == 200, res.get_data(as_text=True)
    return res.get_json()


def test_free_text_with_hidden_characters_is_refused_or_cleaned_before_the_backend(client, login):
    headers = login("free-text")
    turn = chat(client, headers, START)
    assert turn["state"] == "collecting" and turn["awaiting"] == "mailing_address"
    before = {f["key"]: f["value"] for f in turn["fields"]}
    # A direction override ("号001路三文区湖西" shown reversed) and an ESC sequence: refused,
    # in Chinese, and nothing else in the session changes.
    for hostile, message in (("浙江省杭州市\u202e号001路三文区湖西", M.TEXT_BIDI),
                             (f"{ADDRESS}\x1b[2J\x00", M.TEXT_CONTROL)):
        turn = chat(client, headers, hostile)
        assert message in turn["reply"], turn["reply"]
        fields = {f["key"]: f for f in turn["fields"]}
        assert turn["state"] == "collecting" and turn["awaiting"] == "mailing_address"
        assert fields["mailing_address"]["status"] == "invalid"
        assert fields["mailing_address"]["value"] is None
        assert {k: f["value"] for k, f in fields.items()} == before
    # Zero-width characters copied along with an address are dropped.
    turn = chat(client, headers, "\u200b浙江省杭州市\u2060西湖区文三路\ufeff100号")
    fields = {f["key"]: f["value"] for f in turn["fields"]}
    assert fields["mailing_address"] == ADDRESS
    while turn["state"] != "confirming":  # skip the optional photo step, if asked
        assert turn["state"] == "collecting", turn
        turn = chat(client, headers, "跳过")
    turn = chat(client, headers, "确认")
    assert turn["state"] == "done", turn["reply"]
    number = turn["result"]["application_no"]
    apps = client.get("/demo/api/_admin/applications").get_json()["applications"]
    [sent] = [a for a in apps if a["application_no"] == number]
    assert sent["payload"]["mailing_address"] == ADDRESS
