"""The portal's origins: where the rpa executor and the browser agent may go.

A job's browser context may talk only to the configured portal origin(s): the
origin of ``api.options.url`` plus the business's ``allowed_origins``
(``scheme://host[:port]``, no path). ``guard(context, policy)`` installs
Playwright request routing on the context, so every request is decided before
it leaves the browser:

- a request to any other origin is aborted (``blockedbyclient``) and recorded;
- a navigation or a request carrying data (a body, or a method other than
  GET/HEAD) to an allowed origin is fetched by Playwright without following
  redirects, so a redirect to another origin is aborted too (Chromium follows
  redirects of a routed request without asking the route again); an allowed
  response, redirects to allowed origins included, is handed to the page as it
  came;
- other requests to allowed origins (a stylesheet, an image) go out unchanged.

``Guard.fatal`` lists the blocked navigations and data-carrying requests: a page
that tried to leave the portal. The executor ends its job on one (and never
reads a result from, types a credential into, or resumes a draft on a page
outside the policy); the agent stops acting on such a page. ``data:`` and
``about:`` pages make no request, so routing never sees them; ``allows`` is
False for them, which is what keeps a result off a page the portal wrote there.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

log = logging.getLogger(__name__)

_DEFAULT_PORTS = {"http": 80, "https": 443}
_PASSIVE_METHODS = frozenset({"GET", "HEAD"})


def origin_of(url: str) -> str | None:
    """``scheme://host[:port]`` of an http(s) URL (default port left out, host in
    lower case), or None for any other URL (``data:``, ``about:blank``, a typo)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    host = parts.hostname.lower()
    if ":" in host:  # IPv6
        host = f"[{host}]"
    if port is None or port == _DEFAULT_PORTS[scheme]:
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def check_origin(value: str) -> str:
    """``value`` if it is an http(s) origin with no path, query, fragment or user;
    else ``ValueError`` saying so (for option validators: staff see it at load)."""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018  (a bad port raises here)
    except ValueError as exc:
        raise ValueError(f"allowed_origins: {value!r} is not a URL ({exc})") from None
    if (parts.scheme not in _DEFAULT_PORTS or not parts.hostname or parts.path
            or parts.query or parts.fragment or "@" in parts.netloc or value.endswith("?")
            or value.endswith("#")):
        raise ValueError(f"allowed_origins: {value!r} must be an origin such as "
                         "https://portal.example.cn or http://127.0.0.1:8100 "
                         "(http or https, a host and optionally a port, no path)")
    return value


class OriginPolicy:
    """The origins a job may visit (an immutable set of ``origin_of`` strings)."""

    def __init__(self, origins: Iterable[str]) -> None:
        found = set()
        for value in origins:
            origin = origin_of(value)
            if origin is None:
                raise ValueError(f"not an http(s) origin: {value!r}")
            found.add(origin)
        if not found:
            raise ValueError("an origin policy needs at least one origin")
        self.origins = frozenset(found)

    def allows(self, url: str) -> bool:
        """True when ``url`` is an http(s) URL on one of the origins."""
        return origin_of(url) in self.origins

    def __repr__(self) -> str:
        return f"OriginPolicy({sorted(self.origins)})"


@dataclass(frozen=True)
class Blocked:
    """One request the guard aborted, as staff read it (no query: it may carry data)."""

    method: str
    url: str  # origin and path only
    resource_type: str
    navigation: bool
    carries_data: bool
    redirect_from: str | None = None  # the allowed URL whose redirect pointed here

    @property
    def fatal(self) -> bool:
        """A navigation or data leaving the portal: the page is not to be trusted."""
        return self.navigation or self.carries_data

    def describe(self) -> str:
        what = "navigation" if self.navigation else self.resource_type
        via = f" (redirected from {self.redirect_from})" if self.redirect_from else ""
        return f"blocked {self.method} {self.url} [{what}]{via}"


@dataclass
class Guard:
    """The routing installed on one browser context, and what it blocked."""

    policy: OriginPolicy
    blocked: list[Blocked] = field(default_factory=list)

    @property
    def fatal(self) -> list[Blocked]:
        return [b for b in self.blocked if b.fatal]

    def handle(self, route: Any) -> None:
        """Playwright's route handler (runs on the thread driving the browser)."""
        request = route.request
        navigation = request.is_navigation_request()
        carries_data = request.method not in _PASSIVE_METHODS or bool(request.post_data_buffer)
        try:
            if not self.policy.allows(request.url):
                self._block(route, request, navigation, carries_data, request.url)
                return
            if not (navigation or carries_data):
                route.continue_()
                return
            response = route.fetch(max_redirects=0)
            location = response.headers.get("location")
            if 300 <= response.status < 400 and location:
                target = urljoin(request.url, location)
                if not self.policy.allows(target):
                    self._block(route, request, navigation, carries_data, target,
                                redirect_from=_strip(request.url))
                    return
            route.fulfill(response=response)
        except Exception as exc:  # the page or context closed meanwhile
            log.debug("origin guard: a route was not settled (%s)", type(exc).__name__)

    def _block(self, route: Any, request: Any, navigation: bool, carries_data: bool,
               url: str, redirect_from: str | None = None) -> None:
        blocked = Blocked(method=request.method, url=_strip(url),
                          resource_type=request.resource_type, navigation=navigation,
                          carries_data=carries_data, redirect_from=redirect_from)
        self.blocked.append(blocked)
        log.warning("origin guard: %s", blocked.describe())
        route.abort("blockedbyclient")


_guards: weakref.WeakKeyDictionary[Any, Guard] = weakref.WeakKeyDictionary()


def guard(context: Any, policy: OriginPolicy) -> Guard:
    """Route every request of ``context`` (a Playwright browser context) through
    ``policy``; the context's guard if one is installed already (its policy kept)."""
    existing = _guards.get(context)
    if existing is not None:
        return existing
    installed = Guard(policy)
    context.route("**/*", installed.handle)
    _guards[context] = installed
    return installed


def guard_of(context: Any) -> Guard | None:
    """The guard installed on ``context``, if any."""
    return _guards.get(context)


def _strip(url: str) -> str:
    """A URL without its query and fragment (which may carry personal data)."""
    return url.split("?", 1)[0].split("#", 1)[0]


# Where activating an element would send the page: a link's href, or the action of
# the form a submit button posts (its formaction first); null when it goes nowhere.
DESTINATION_JS = """
(el) => {
  const link = el.closest("a[href]");
  if (link) return link.href;
  const button = el.closest("button, input[type=submit], input[type=image]");
  if (button && button.form && (button.type === "submit" || button.type === "image")) {
    return button.formAction || button.form.action || null;
  }
  return null;
}
"""


def destination(locator: Any) -> str | None:
    """Where clicking ``locator``'s element would navigate (see ``DESTINATION_JS``);
    None for a script link (``javascript:``) or an element that goes nowhere."""
    target = locator.evaluate(DESTINATION_JS)
    if not target or target.lower().startswith("javascript:"):
        return None
    return str(target)
