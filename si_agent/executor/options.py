"""The ``Options`` models of the built-in ``http`` and ``builtin`` kinds.

They live apart from the executors so that loading businesses validates
``api.options`` without importing the implementations (the registry names each
built-in kind's options model and class by import path; see ``registry``). The
``rpa`` kind's model is ``si_agent.executor.rpa.options``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field, field_validator

from si_agent.config.envsubst import check_url
from si_agent.executor.base import ExecutorOptions
from si_agent.executor.handlers import HANDLERS


class HttpOptions(ExecutorOptions):
    """``api.options`` of an http business (usually written directly under ``api``)."""

    model_config = ConfigDict(strict=True)

    url: str = Field(min_length=1, description="Backend URL; ${VAR} and ${VAR:-default} "
                     "are read from the environment at call time.")
    method: Literal["GET", "POST"] = "POST"
    timeout: float = Field(default=10.0, gt=0, description="Seconds to wait for the backend.")

    @field_validator("url")
    @classmethod
    def _check_url(cls, url: str) -> str:
        return check_url(url)


class BuiltinOptions(ExecutorOptions):
    """``api.options`` of a builtin business (usually written directly under ``api``)."""

    model_config = ConfigDict(strict=True)

    handler: str = Field(min_length=1, description="Name of the handler in HANDLERS, "
                         "e.g. pension_estimate.")

    @field_validator("handler")
    @classmethod
    def _known(cls, name: str) -> str:
        if name not in HANDLERS:
            raise ValueError(f"unknown builtin handler {name!r}; "
                             f"valid handlers: {', '.join(sorted(HANDLERS))}")
        return name
