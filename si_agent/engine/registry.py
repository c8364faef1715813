"""Intent engines by name: ``auto``, ``rules``, ``llm``, ``hybrid``.

``auto`` (the default) is ``hybrid`` when a model is configured
(``SI_LLM_BASE_URL``) and ``rules`` otherwise. The rule engine reads idle
messages with the knowledge base's typo and dialect table (``typo_normaliser``).
"""

from __future__ import annotations

from collections.abc import Mapping

from si_agent.config.model import Business
from si_agent.config.settings import Settings
from si_agent.core.decision import IntentEngine
from si_agent.engine.rules import RuleEngine
from si_agent.errors import SettingsError, UnknownBackendError
from si_agent.knowledge import typo_normaliser

ENGINES = ("auto", "rules", "llm", "hybrid")


def create_engine(
    name: str, catalog: Mapping[str, Business], settings: Settings | None = None
) -> IntentEngine:
    """The engine called ``name``; unknown names raise, listing the valid ones."""
    settings = settings or Settings()
    if name not in ENGINES:
        raise UnknownBackendError("engine", name, ENGINES)
    if name == "auto":
        name = "hybrid" if settings.llm_base_url else "rules"
    rules = RuleEngine(catalog, normalise=typo_normaliser(settings, catalog))
    if name == "rules":
        return rules
    if not settings.llm_base_url:
        raise SettingsError(f"the {name!r} engine needs SI_LLM_BASE_URL (an OpenAI-compatible "
                            "endpoint); without a model use the 'rules' engine")
    from si_agent.engine.llm import HybridEngine, LLMEngine

    model = LLMEngine(catalog, settings, fallback=rules)
    return model if name == "llm" else HybridEngine(rules, model)
