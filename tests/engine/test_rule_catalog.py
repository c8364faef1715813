"""The rule engine reads the shared ``Catalog``: it keeps no copy of its own and
re-indexes the businesses when the catalog's version changes."""

from __future__ import annotations

from si_agent.core import actions as T
from si_agent.core.catalog import Catalog
from si_agent.core.decision import SessionView
from si_agent.engine.rules import RuleEngine


def idle_view(catalog) -> SessionView:
    return SessionView(state="idle", business=None, fields={}, awaiting=None, suggestion=None,
                       step=None, history=(), catalog=catalog)


def decide(engine: RuleEngine, catalog, message: str) -> list[tuple[str, dict]]:
    tools = T.toolset("idle", None, None, catalog)
    return [(c.name, c.arguments) for c in engine.decide(idle_view(catalog), message, tools).calls]


def test_a_plain_mapping_is_wrapped_in_a_catalog(catalog):
    engine = RuleEngine(dict(catalog))
    assert isinstance(engine.catalog, Catalog)
    assert dict(engine.catalog) == dict(catalog)
    assert engine.match("我的社保卡丢了")[0] == "card_loss"


def test_the_shared_catalog_is_read_not_copied(catalog):
    shared = Catalog(catalog)
    assert RuleEngine(shared).catalog is shared


def test_a_replaced_business_is_matched_by_its_new_keyword(catalog):
    shared = Catalog(catalog)
    engine = RuleEngine(shared)
    assert engine.match("紫薇花开")[1] < 1.0
    card_loss = shared["card_loss"]
    shared.replace(card_loss.model_copy(update={"keywords": (*card_loss.keywords, "紫薇花开")}))
    found, score, _, _ = engine.match("紫薇花开")
    assert (found, score) == ("card_loss", 1.0)


def test_the_index_is_rebuilt_only_when_the_version_changes(catalog):
    shared = Catalog(catalog)
    engine = RuleEngine(shared)
    first = engine._current()
    engine.match("我的社保卡丢了")
    assert engine._current() is first
    shared.replace(shared["card_loss"])
    assert engine._current() is not first
    assert engine._current().version == shared.version == 2


def test_values_follow_a_business_whose_fields_were_discovered(catalog):
    """A ``fields: discover`` business has no fields until discovery replaces it in
    the catalog; the values of the first message are read with the new fields."""
    shared = Catalog(catalog)
    full = shared["social_transfer"]
    shared.replace(full.model_copy(update={"fields": ()}))
    engine = RuleEngine(shared)
    message = "我要网上转移社保，从杭州转到苏州"
    assert decide(engine, shared, message) == [
        (T.MATCH_BUSINESS, {"business_id": "social_transfer"})]
    shared.replace(full)
    calls = decide(engine, shared, message)
    assert calls[0] == (T.MATCH_BUSINESS, {"business_id": "social_transfer"})
    assert calls[1][0] == T.PROVIDE_FIELD
    assert calls[1][1]["values"] == {"from_city": "杭州", "to_city": "苏州"}
