"""The foreign-form suite itself: its manifest is as varied as issue 30 asks, its site
serves every page and records what is posted, and the checker judges it right.

No browser: the site is driven through Flask's test client.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from tests.forms_foreign.manifest import Form, check, load_forms, received_right
from tests.forms_foreign.runner import business_doc
from tests.forms_foreign.server import create_app

FORMS = load_forms()


def test_the_manifest_is_varied():
    assert len(FORMS) >= 40
    sourced = [f for f in FORMS if f.source != "original"]
    assert len(sourced) * 2 >= len(FORMS)
    assert all(re.match(r"^https?://", f.source) for f in sourced)
    assert {f.lang for f in FORMS} == {"zh", "en"}
    kinds = Counter(k for f in FORMS for k in f.kinds)
    for kind in (
        "text",
        "select",
        "multiselect",
        "radio",
        "checkboxes",
        "checkbox",
        "date",
        "time",
        "month",
        "datetime-local",
        "number",
        "textarea",
        "date-parts",
        "consent",
    ):
        assert kinds[kind], kind
    assert {f.layout for f in FORMS} >= {"table", "bootstrap", "plain", "govuk", "dl", "grid"}
    modes = {c.labels or f.labels for f in FORMS for c in f.controls}
    assert modes >= {"for", "wrap", "text", "placeholder", "aria", "labelledby", "fieldset"}
    assert {f.js for f in FORMS} == {"none", "load", "delay", "fetch"}
    assert any(not f.required for f in FORMS) and any(len(f.pages) > 2 for f in FORMS)
    assert any(not f.novalidate for f in FORMS)  # the browser's own validation
    submits = {f.buttons.submit for f in FORMS}
    assert submits >= {"Submit", "Apply", "Send", "Register", "提交", "确定", "保存并提交"}
    assert {f.buttons.submit_tag for f in FORMS} >= {"button", "input", "input-novalue", "div"}
    nexts = {f.buttons.next for f in FORMS if len(f.pages) > 1}
    assert nexts >= {"Next", "Continue", "下一步"}
    # option values that are not their labels, as real sites code them
    assert sum(any(o.value != o.label for c in f.controls for o in c.options) for f in FORMS) > 30
    # lists for checkbox groups and multi-selects
    assert any(isinstance(v, list) for f in FORMS for v in f.gold.values())


def test_business_labels_are_not_the_pages_labels():
    """The business is written independently: most of its labels differ from the page's."""
    same = total = 0
    for form in FORMS:
        for field in form.business.fields:
            for control in form.controls_of(field.key):
                total += 1
                same += field.label == control.label
    assert same * 2 < total, (same, total)


@pytest.mark.parametrize("form", FORMS, ids=[f.id for f in FORMS])
def test_every_page_is_served_and_the_gold_posted_is_right(form: Form):
    client = create_app(FORMS).test_client()
    start = client.get(f"/f/{form.id}?run=t")
    assert start.status_code == 302
    url = start.headers["Location"]
    for n, page in enumerate(form.pages, 1):
        shown = client.get(url)
        assert shown.status_code == 200
        html = shown.get_data(as_text=True)
        assert form.title in html
        data: dict[str, list[str]] = {}
        for c in page.controls:
            for name in c.names:
                want = form.expect.get(name, "")
                data[name] = (
                    want
                    if isinstance(want, list)
                    else [want["any"][0] if isinstance(want, dict) else want]
                )
        if form.consent is not None and n == len(form.pages):
            data[form.consent.name] = [form.consent.value]
        posted = client.post(url, data=data)
        assert posted.status_code == 302
        url = posted.headers["Location"]
    done = client.get(url).get_data(as_text=True)
    assert re.search(form.success or r"受理编号[:：]\s*(?P<application_no>SI\d{14})", done), done
    [app] = client.get("/_admin/runs/t").get_json()
    assert app["submitted"]
    assert all(f.right for f in check(form, app["received"]))


def test_a_snapshot_records_what_the_controls_hold_without_a_submit():
    form = next(f for f in FORMS if f.id == "zh_card_apply_table")
    client = create_app(FORMS).test_client()
    url = client.get(f"/f/{form.id}?run=s").headers["Location"]
    client.post(url + "/snapshot", data={"xm": "张伟", "hzyh": "ICBC"})
    [app] = client.get("/_admin/runs/s").get_json()
    assert not app["submitted"] and app["received"] == {}
    results = {r.key: r for r in check(form, app["current"])}
    assert results["name"].right and not results["bank"].right and not results["bank"].empty
    assert results["phone"].empty and not results["phone"].right


def test_the_checker():
    assert received_right("张伟", [" 张伟 "])
    assert not received_right("张伟", [])
    assert received_right("", []) and received_right("", [""]) and not received_right("", ["x"])
    assert received_right(["a", "b"], ["b", "a"]) and not received_right(["a", "b"], ["a"])
    assert received_right({"any": ["3", "03"]}, ["03"]) and not received_right({"any": ["3"]}, [])


def test_back_and_save_do_not_submit():
    form = next(f for f in FORMS if f.id == "zh_personal_si_register")
    client = create_app(FORMS).test_client()
    url = client.get(f"/f/{form.id}?run=b").headers["Location"]
    page2 = client.post(url, data={"xm": "张伟"}).headers["Location"]
    assert page2.endswith("/2")
    back = client.post(page2, data={"action": "back"}).headers["Location"]
    assert back.endswith("/1")
    [app] = client.get("/_admin/runs/b").get_json()
    assert not app["submitted"] and app["received"]["xm"] == ["张伟"]


def test_each_business_loads_with_the_projects_loader(tmp_path):
    from tests.forms_foreign.runner import businesses

    catalog = businesses(FORMS, "http://127.0.0.1:18500", tmp_path)
    assert set(catalog) == {f.id for f in FORMS}
    doc = business_doc(FORMS[0], "http://127.0.0.1:18500")
    assert doc["api"]["kind"] == "rpa" and doc["api"]["options"]["url"].endswith(FORMS[0].id)


def test_a_success_with_a_value_left_out_unreported_is_a_silent_loss():
    from tests.forms_foreign.runner import Run

    form = next(f for f in FORMS if f.id == "zh_card_apply_table")
    fields = check(form, {"xm": ["张伟"], "zjlx": ["01"], "hzyh": ["ICBC"]})
    ran = Run(
        form_id=form.id,
        filler="rpa",
        reported_success=True,
        submitted=True,
        fields=fields,
        reported=["phone"],
    )
    assert ran.silent == ["id_number", "address"]  # phone was reported, bank is wrong
    assert ran.wrong == ["bank"] and not ran.fully_right
    failed = ran.model_copy(update={"reported_success": False})
    assert failed.silent == []  # a failure tells the citizen nothing went through
