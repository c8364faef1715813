"""Building the curated answers of a deployment from its settings (``si_agent.app``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from si_agent.curated.book import CuratedBook
from si_agent.curated.matching import Matcher
from si_agent.curated.store import create_curated_store
from si_agent.errors import ConfigError

if TYPE_CHECKING:
    from si_agent.config.model import Business
    from si_agent.config.settings import Settings
    from si_agent.session.base import SessionStore


def create_curated_book(settings: Settings, catalog: Mapping[str, Business],
                        sessions: SessionStore) -> CuratedBook:
    """The curated answers, kept where the sessions are, matched with the knowledge
    channel's normalisation (the term table of ``settings.kb_dir``, the businesses'
    words); a broken term table raises ``ConfigError``."""
    from rag.errors import TermsError
    from rag.query import understanding_for
    from si_agent.knowledge import business_terms

    try:
        understanding = understanding_for(settings.kb_dir, business_terms(catalog))
    except TermsError as exc:
        raise ConfigError(exc.file, exc.line, "", exc.message) from None
    return CuratedBook(create_curated_store(settings, sessions), Matcher(understanding),
                       businesses=catalog.keys())
