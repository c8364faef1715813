"""``api.options`` of an rpa business (``RpaOptions``), apart from the executor.

Loading businesses validates these options without importing the executor, the
browser agent or Playwright (the registry names this model by import path).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from si_agent import origins
from si_agent.config.envsubst import check_url, expand_env
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
    allowed_origins: tuple[str, ...] = ()  # origins besides url's the browser may visit
    # The form's hidden input that takes the attempt number (a fencing token), where
    # the site has one (the demo portal: _attempt); the site refuses older attempts.
    attempt_field: str | None = None

    @field_validator("url")
    @classmethod
    def _check_url(cls, url: str) -> str:
        return check_url(url)

    @field_validator("allowed_origins")
    @classmethod
    def _check_origins(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        for value in values:
            if "${" in value:  # checked again once expanded, when a job starts
                check_url(value)
            else:
                origins.check_origin(value)
        return values

    @model_validator(mode="after")
    def _login_on_the_portal(self) -> RpaOptions:
        """The login page must be on an allowed origin (checked here when no
        ``${VAR}`` is involved, else when a job starts)."""
        configured = [self.url, *self.allowed_origins]
        if self.login is None or not self.login.url or any(
                "${" in x for x in (self.login.url, *configured)):
            return self
        if not origins.OriginPolicy(configured).allows(self.login.url):
            raise ValueError(f"login.url {self.login.url!r} is not on the portal's origin "
                             f"{origins.origin_of(self.url)}; add its origin to allowed_origins")
        return self

    def policy(self) -> origins.OriginPolicy:
        """The origins a job may visit, environment references expanded; ``ValueError``
        when one is not an origin or the login page is on none of them."""
        extra = [origins.check_origin(expand_env(o)) for o in self.allowed_origins]
        policy = origins.OriginPolicy([expand_env(self.url), *extra])
        if self.login is not None and self.login.url and not policy.allows(
                expand_env(self.login.url)):
            raise ValueError("login.url is on none of the allowed origins")
        return policy

    @field_validator("success")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"success is not a regular expression: {exc}") from None
        return value
