"""``api.options`` of an rpa business (``RpaOptions``), apart from the executor.

Loading businesses validates these options without importing the executor, the
browser agent or Playwright (the registry names this model by import path).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, field_validator

from si_agent.config.envsubst import check_url
from si_agent.executor.base import ExecutorOptions
from si_agent.labels import RESULT_PATTERN


class LoginOptions(BaseModel):
    """The portal's login page, and the environment variables holding the credentials."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str | None = None  # without it, a page asking for a password is the login page
    user_env: str
    password_env: str

    @field_validator("url")
    @classmethod
    def _check_url(cls, url: str | None) -> str | None:
        return None if url is None else check_url(url)


class RpaOptions(ExecutorOptions):
    url: str
    login: LoginOptions | None = None
    fields: dict[str, str] = {}
    fixed: dict[str, str | bool] = {}
    submit: str = "提交申请"
    next: str = "下一步"
    success: str = RESULT_PATTERN
    action_timeout: float = 10.0
    job_timeout: float = 300.0
    max_pages: int = 6
    agent_steps: int = 30  # steps the browser agent may take when it finishes a form

    @field_validator("url")
    @classmethod
    def _check_url(cls, url: str) -> str:
        return check_url(url)

    @field_validator("success")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"success is not a regular expression: {exc}") from None
        return value
