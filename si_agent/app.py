"""Assembling a working assistant from settings: catalog, store, engine, executor."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from si_agent.audit import create_audit_log
from si_agent.config.assistant import AssistantTexts, check_assistant_texts, load_assistant_texts
from si_agent.config.dev_secret import with_dev_secret
from si_agent.config.loader import check_directory, load_businesses
from si_agent.config.model import Business
from si_agent.config.settings import Settings
from si_agent.core.catalog import Catalog
from si_agent.curated import CuratedKnowledge
from si_agent.curated.assembly import create_curated_book
from si_agent.engine.registry import create_engine
from si_agent.engine.rules.collisions import keyword_errors, keyword_warnings
from si_agent.errors import ConfigError, ConfigErrors, ConfigWarning
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.flow.steps import registered_step_handlers
from si_agent.handoff import Desk, create_ticket_store
from si_agent.jobs.celery import CeleryRunner
from si_agent.knowledge import create_knowledge
from si_agent.moderation import WordList, create_moderation
from si_agent.moderation.words import check_moderation
from si_agent.photo.steps import builtin_step_handlers
from si_agent.session import create_store
from si_agent.session.files import create_step_files, file_key
from si_agent.turns import create_turn_log

if TYPE_CHECKING:
    from si_agent.engine.llm import GroundedAnswerer

log = logging.getLogger(__name__)


@dataclass
class FolderCheck:
    """What ``si-agent validate`` finds in a business folder (the console shows it too):
    the businesses whose file has no problem, the assistant texts, the word list, and
    every error (each stops the server) and warning (each does not)."""

    catalog: dict[str, Business]
    texts: AssistantTexts | None
    words: WordList | None
    errors: list[ConfigError] = field(default_factory=list)
    warnings: list[ConfigWarning] = field(default_factory=list)


def check_folder(directory: Path) -> FolderCheck:
    """Every check ``si-agent validate`` runs on ``directory``."""
    catalog, errors = check_directory(directory)
    texts, text_errors = check_assistant_texts(directory) if directory.is_dir() else (None, [])
    errors += text_errors
    errors += keyword_errors(catalog)
    warnings: list[ConfigWarning] = list(keyword_warnings(catalog))
    words, word_errors, word_warnings = check_moderation(directory, catalog, texts)
    return FolderCheck(catalog, texts, words, errors + word_errors, warnings + word_warnings)


def build_controller(settings: Settings | None = None, *, engine: str | None = None) -> Controller:
    """A controller over the configured businesses; raises ``ConfigErrors`` on bad YAML."""
    settings = with_dev_secret(settings or Settings.from_env())
    catalog = Catalog(load_businesses(settings.business_dir))  # one, shared by the engines
    if errors := keyword_errors(catalog):  # a reply word as a keyword breaks every dialogue
        raise ConfigErrors(errors)
    log.info("loaded %d businesses from %s", len(catalog), settings.business_dir)
    texts = load_assistant_texts(settings.business_dir)
    moderation = create_moderation(settings, catalog, texts)  # a bad word list stops the start
    store = create_store(settings)
    # Curated answers come first, whatever the knowledge channel (si_agent/curated).
    knowledge = CuratedKnowledge(create_knowledge(settings, catalog, answerer=grounded_answerer),
                                 create_curated_book(settings, catalog, store))
    audit = create_audit_log(settings, store)
    controller = Controller(
        catalog,
        store,
        create_engine(engine or settings.engine, catalog, settings),
        Executors(settings),
        knowledge=knowledge,
        step_handlers={**builtin_step_handlers(settings), **registered_step_handlers()},
        files=create_step_files(store, file_key(settings.upload_key or settings.jwt_secret)),
        runner=CeleryRunner(settings) if settings.job_backend == "celery" else None,
        max_message_chars=settings.max_message_chars,
        texts=texts,
        handoff_text=settings.handoff_text,
        audit=audit,
        moderation=moderation,
        turns=create_turn_log(settings, store, audit),
        handoff=Desk(create_ticket_store(store), hours=settings.handoff_hours,
                     capacity=settings.handoff_capacity, timezone=settings.handoff_timezone),
    )
    controller.driver.takeover_grace = settings.job_takeover_grace
    return controller


def grounded_answerer(settings: Settings) -> GroundedAnswerer:
    """The model that writes knowledge answers (``create_knowledge`` calls this only
    with a model configured; imported then, like the engine registry's model engines,
    so a rules-only start does not import the OpenAI client)."""
    from si_agent.engine.llm import GroundedAnswerer

    return GroundedAnswerer(settings)
