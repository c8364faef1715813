"""Generated form variants (``?variant=<seed>``) and injected refusals (``&inject=<key>``)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from si_agent.demo_portal import texts
from si_agent.demo_portal.forms import Form, find_form
from si_agent.demo_portal.variants import (
    EXTRA_LABELS,
    LABELS,
    OPTION_WORDINGS,
    injected_message,
    variant_form,
)
from tests.portal.page import Page

SEEDS = range(40)
BUSINESS_IDS = ("social_transfer", "card_apply", "unemployment_benefit", "medical_filing")
ZHANG = {"name": "张伟", "id_type": "居民身份证", "id_number": "330122196303150178",
         "phone": "13800138001", "agree": "yes"}
# What the citizen means, by business key (options as the base form names them).
VALUES: dict[str, dict[str, str]] = {
    "social_transfer": {**ZHANG, "from_city": "杭州市", "to_city": "苏州市"},
    "card_apply": {**ZHANG, "bank": "中国建设银行", "mailing_address": "浙江省杭州市西湖区文三路100号"},
    "unemployment_benefit": {**ZHANG, "separation_date": "2026-10-31",
                             "separation_reason": "协商一致解除",
                             "bank_card": "6222021202004568821"},
    "medical_filing": {**ZHANG, "insured_city": "杭州", "destination_city": "北京",
                       "filing_type": "临时外出就医", "start_date": "2026-12-10"},
}
STORED = {"insured_city": "杭州市", "destination_city": "北京市", "agree": True}


def page_data(form: Form, index: int, values: dict[str, str]) -> dict[str, str]:
    """What a citizen posts on page ``index``: each option by the value the page gives it."""
    data = {}
    for field in form.pages[index].fields:
        value = values.get(field.key, "")
        if field.options and value:
            value = dict(zip(field.options, (v for v, _ in field.choices), strict=True))[value]
        data[field.id] = value
    return data


def fill(post, url: str, form: Form, values: dict[str, str], first: int = 0) -> Page:
    """Post pages ``first``… with ``values``; the page shown after the last one."""
    for index in range(first, len(form.pages) - 1):
        page = post(url, page_data(form, index, values), action="next")
        if page.text("h2") != [form.pages[index + 1].title]:
            return page
    return post(url, page_data(form, len(form.pages) - 1, values))


def variants(business_id: str) -> list[Form]:
    return [variant_form(find_form(business_id, 1), seed) for seed in SEEDS]


def test_a_seed_always_draws_the_same_form_and_seeds_differ():
    base = find_form("card_apply", 1)
    variant_form.cache_clear()
    assert variant_form(base, 7) == variant_form(base, 7)
    assert len({variant_form(base, seed) for seed in SEEDS}) == len(SEEDS)


@pytest.mark.parametrize("business_id", BUSINESS_IDS)
def test_variants_keep_the_business_and_vary_its_drawing(business_id):
    base = find_form(business_id, 1)
    forms = variants(business_id)
    real = {label for labels in (*LABELS.values(), *EXTRA_LABELS.values()) for label in labels}
    for form in forms:
        assert {f.key for f in base.fields} <= {f.key for f in form.fields}
        extra = [f for f in form.fields if f.key not in {b.key for b in base.fields}]
        assert len(extra) <= 2 and not any(f.required for f in extra)
        assert form.fields[-1].key == "agree" and form.fields[-1].label == "我已阅读并同意承诺书"
        assert form.field("id_type").label == "证件类型"
        assert all(f.label in real for f in form.fields if f.key not in ("id_type", "agree"))
        assert [p.title for p in form.pages] in (["申请信息"], ["基本信息", "办理信息"])
        for field in form.fields:  # each option shown in a known wording
            for option, (_, shown) in zip(field.options, field.choices, strict=True):
                assert shown in (option, *OPTION_WORDINGS.get(option, ()))
    # Over the seeds: relabelled, reordered, re-worded, coded, opaque ids, both layouts.
    assert len({f.field("name").label for f in forms}) > 2
    assert len({tuple(f.key for f in form.fields) for form in forms}) > 10
    assert Counter(len(f.pages) for f in forms).keys() == {1, 2}
    assert any(f.fields[0].id == "f01" for f in forms)
    assert any(field.choices[0][0] != field.options[0] for form in forms for field in form.fields
               if field.options)


@pytest.mark.parametrize("business_id", BUSINESS_IDS)
def test_a_variant_is_filled_and_stored_by_business_key(portal, start, post, applications,
                                                        business_id):
    for seed in (3, 11, 26):
        url = start(business_id, f"?variant={seed}")
        form = variant_form(find_form(business_id, 1), seed)
        shown = Page(portal.get(url))
        assert shown.labels() == {f.id: f.label for f in form.pages[0].fields}
        done = fill(post, url, form, VALUES[business_id])
        assert done.text("h1") == ["提交成功"], done.field_errors()
        stored = applications()[0]["values"]
        assert {k for k, v in stored.items() if v not in ("", None)} == {
            f.key for f in form.fields if f.key in VALUES[business_id]}
        for key in stored.keys() & VALUES[business_id].keys():
            assert stored[key] == STORED.get(key, VALUES[business_id][key]), key


def test_option_wording_and_codes_are_what_the_page_shows(portal, start):
    form, seed = next((variant_form(find_form("card_apply", 1), s), s) for s in SEEDS
                      if variant_form(find_form("card_apply", 1), s).field("bank").choices[0]
                      == ("ICBC", "工商银行"))
    page = Page(portal.get(start("card_apply", f"?variant={seed}")))
    bank = form.field("bank")
    options = [e for e in page.elements if e["tag"] == "option"
               and e["attrs"].get("value") in {v for v, _ in bank.choices}]
    assert [(o["attrs"]["value"], o["text"]) for o in options][:2] == [
        ("ICBC", "工商银行"), ("ABC", "农业银行")]


def test_a_two_page_variant_goes_on_with_next(portal, start, post, applications):
    seed = next(s for s in SEEDS if len(variant_form(find_form("social_transfer", 1), s).pages) == 2)
    form = variant_form(find_form("social_transfer", 1), seed)
    url = start("social_transfer", f"?variant={seed}")
    first = Page(portal.get(url))
    assert first.text("h2") == ["基本信息"] and "下一步" in first.text("button")
    assert {f.key for f in form.pages[0].fields} >= {"name", "id_type", "id_number"}
    assert fill(post, url, form, VALUES["social_transfer"]).application_no
    assert len(applications()) == 1


@pytest.mark.parametrize("key", ["name", "to_city", "bank_card", "filing_type"])
def test_an_injected_field_is_refused_once_with_a_realistic_reason(portal, start, post,
                                                                   applications, key):
    business_id = next(b for b in BUSINESS_IDS if key in VALUES[b])
    seed = 5
    form = variant_form(find_form(business_id, 1), seed)
    url = start(business_id, f"?variant={seed}&inject={key}")
    refused = fill(post, url, form, VALUES[business_id])
    field = form.field(key)
    assert refused.field_errors() == {field.id: injected_message(form, key)}
    assert field.label in refused.alert()
    shown = next(i for i, p in enumerate(form.pages) if field in p.fields)
    assert refused.text("h2") == [form.pages[shown].title]
    assert applications() == []
    again = fill(post, url, form, VALUES[business_id], first=shown)  # the same value passes
    assert again.application_no and len(applications()) == 1


def test_the_injected_message_names_the_variant_label():
    form = variant_form(find_form("social_transfer", 1), 0)
    label = form.field("to_city").label
    assert injected_message(form, "to_city") == texts.INJECTED["to_city"].format(label=label)
    assert label in injected_message(form, "to_city")


def test_a_later_page_field_is_not_used_up_on_the_first_page(portal, start, post):
    form = find_form("unemployment_benefit", 1)
    url = start("unemployment_benefit", "?inject=bank_card")  # works without a variant
    assert post(url, page_data(form, 0, VALUES["unemployment_benefit"]),
                action="next").text("h2") == ["办理信息"]
    page = post(url, page_data(form, 1, VALUES["unemployment_benefit"]))
    assert page.field_errors() == {"bank_card": texts.INJECTED["bank_card"]}


def test_a_field_failing_on_its_own_keeps_the_injection_for_later(portal, start, post):
    form = find_form("social_transfer", 1)
    url = start("social_transfer", "?inject=name")
    page = post(url, {**page_data(form, 0, VALUES["social_transfer"]), "name": "王芳"})
    assert page.field_errors() == {"name": "姓名与身份证号不一致"}
    page = post(url, page_data(form, 0, VALUES["social_transfer"]))
    assert page.field_errors() == {"name": texts.INJECTED["name"]}


@pytest.mark.parametrize("query", ["?variant=x", "?variant=-1", "?inject=phone",
                                   "?variant=2&inject=nothing"])
def test_bad_variant_queries_are_not_found(portal, query):
    assert portal.get(f"/forms/social_transfer{query}").status_code == 404


def test_a_database_from_before_variants_gains_their_columns(tmp_path):
    import sqlite3

    from si_agent.demo_portal.store import PortalStore

    with sqlite3.connect(tmp_path / "old.db") as conn:
        conn.execute("CREATE TABLE drafts (draft_id TEXT PRIMARY KEY, business_id TEXT NOT NULL,"
                     " version INTEGER NOT NULL, page INTEGER NOT NULL DEFAULT 0,"
                     " raw TEXT NOT NULL DEFAULT '{}', application_no TEXT,"
                     " created_at TEXT NOT NULL)")
    store = PortalStore(tmp_path / "old.db")
    draft = store.draft(store.create_draft("card_apply", 1, variant=4, inject="bank"))
    assert (draft.variant, draft.inject) == (4, "bank")
    assert store.take_injection(draft.draft_id) and not store.take_injection(draft.draft_id)
    assert store.draft(draft.draft_id).inject is None


def test_the_rpa_executor_knows_every_label_the_variants_use():
    # The variants draw real portals' labels; the executor's synonym table
    # (si_agent/data/rpa_synonyms.yaml) is where staff add them.
    from si_agent.config.loader import load_businesses
    from si_agent.executor.rpa.form import normalize, synonyms

    businesses = Path(__file__).resolve().parents[2] / "examples" / "portal" / "businesses"
    business_labels = {f.key: f.label for b in load_businesses(businesses).values()
                       for f in b.fields}
    for key, labels in LABELS.items():
        if key in business_labels:
            known = {normalize(business_labels[key]), *synonyms().get(key, ())}
            assert {normalize(label) for label in labels} <= known, key
