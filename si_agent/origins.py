"""The portal's origins: where the rpa executor and the browser agent may go.

A job's browser context may talk only to the configured portal origin(s): the
origin of ``api.options.url`` plus the business's ``allowed_origins``
(``scheme://host[:port]``, no path). ``guard(context, policy)`` pauses every
request of the context's pages before it leaves the browser (Chromium's
``Fetch`` domain over a CDP session per page: unlike Playwright's ``route``, it
pauses each redirect hop too, so an open redirect is caught) and decides:

- a request to an allowed origin goes on;
- a ``data:`` or ``blob:`` sub-resource goes on (it makes no network request);
- anything else is aborted (``BlockedByClient``) and recorded.

``Fetch`` pauses navigations and what scripts send (XHR, fetch, beacons, event
streams), so the browser does not wait on Python for every image. Two Playwright
routes complete it: ``context.route`` with a pattern matching only URLs off the
allowed origins (Playwright asks about nothing else) aborts any other request
going elsewhere, including the first requests of a page the page itself opens
(a pop-up: Playwright routes it before it starts, the CDP session comes with its
``page`` event); ``context.route_web_socket`` takes the WebSocket handshakes,
which ``Fetch`` does not pause. A sub-resource that an allowed origin redirects
elsewhere (an image, a script) is followed by the browser unasked: only the
portal itself can send it there.

``Guard.fatal`` lists the blocked navigations (any frame) and data-carrying
requests (a body, or a method other than GET/HEAD): a page that tried to leave
the portal. The executor ends its job on one (and never reads a result from,
types a credential into, or resumes a draft on a page outside the policy); the
agent stops acting on such a page. ``about:blank`` makes no request, so it is
never paused; ``allows`` is False for it, which keeps a result off a page a
script wrote there.

A module of its own, importing nothing of si_agent: the rpa executor (its
options and its job) and the browser agent both use it, and the agent sits
below the executor, so neither package may be its home.
"""

from __future__ import annotations

import logging
import re
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

log = logging.getLogger(__name__)

_DEFAULT_PORTS = {"http": 80, "https": 443}
# Paused over CDP, redirect hops included: navigations and what scripts send. Other
# sub-resources (images, stylesheets, scripts, fonts) reach Playwright's route only
# when they go off the allowed origins (``OriginPolicy.elsewhere``).
_PAUSED_TYPES = ("Document", "XHR", "Fetch", "Ping", "EventSource", "Other")
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
            or not re.fullmatch(r"[a-z0-9.\-\[\]:]+", parts.hostname)  # no wildcard
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

    def elsewhere(self) -> re.Pattern[str]:
        """A pattern matching every URL not on the origins (nor ``data:``/``blob:``),
        for Playwright's route: the browser asks about those requests only."""
        def written(origin: str) -> str:  # with its default port spelled out, or not
            scheme, _, rest = origin.partition("://")
            default = "" if ":" in rest.rsplit("]", 1)[-1] else f"(?::{_DEFAULT_PORTS[scheme]})?"
            return re.escape(origin) + default

        alternatives = "|".join(written(o) for o in sorted(self.origins))
        return re.compile(rf"^(?!(?:{alternatives})(?:[/?#]|$)|data:|blob:)", re.IGNORECASE)

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

    @property
    def fatal(self) -> bool:
        """A navigation or data leaving the portal: the page is not to be trusted."""
        return self.navigation or self.carries_data

    def describe(self) -> str:
        what = "navigation" if self.navigation else self.resource_type
        return f"blocked {self.method} {self.url} [{what}]"


@dataclass
class Guard:
    """The interception installed on one browser context's pages, and what it blocked."""

    policy: OriginPolicy
    blocked: list[Blocked] = field(default_factory=list)
    sessions: list[Any] = field(default_factory=list, repr=False)
    pages: weakref.WeakSet[Any] = field(default_factory=weakref.WeakSet, repr=False)

    @property
    def fatal(self) -> list[Blocked]:
        return [b for b in self.blocked if b.fatal]

    def attach(self, page: Any) -> None:
        """Pause ``page``'s navigations and script sends (redirect hops included) for
        ``decide``; once per page (call it before the page's first navigation)."""
        if page in self.pages:
            return
        self.pages.add(page)
        session = page.context.new_cdp_session(page)
        session.on("Fetch.requestPaused", lambda event: self.decide(session, event))
        session.send("Fetch.enable", {"patterns": [
            {"urlPattern": "*", "resourceType": kind, "requestStage": "Request"}
            for kind in _PAUSED_TYPES]})
        self.sessions.append(session)

    def decide(self, session: Any, event: dict[str, Any]) -> None:
        """Let a paused request go on, or abort it (runs on the thread driving the browser)."""
        request = event["request"]
        url = str(request.get("url", ""))
        navigation = event.get("resourceType") == "Document"
        method = str(request.get("method", "GET"))
        carries_data = method not in _PASSIVE_METHODS or bool(request.get("hasPostData"))
        allowed = self.policy.allows(url) or (
            not navigation and url.split(":", 1)[0].lower() in ("data", "blob"))
        try:
            if allowed:
                session.send("Fetch.continueRequest", {"requestId": event["requestId"]})
                return
            self._record(method, url, str(event.get("resourceType", "")), navigation,
                         carries_data)
            session.send("Fetch.failRequest", {"requestId": event["requestId"],
                                               "errorReason": "BlockedByClient"})
        except Exception as exc:  # the page or context closed meanwhile
            log.debug("origin guard: a request was not settled (%s)", type(exc).__name__)

    def route(self, route: Any) -> None:
        """Playwright's route handler, for requests off the origins (see
        ``OriginPolicy.elsewhere``): a sub-resource ``decide`` does not pause, and the
        first requests of a page opened by the page itself (a pop-up), before
        ``attach`` reaches it."""
        request = route.request
        try:
            if self.policy.allows(request.url) or request.url.split(":", 1)[0].lower() in (
                    "data", "blob"):
                route.continue_()
                return
            self._record(request.method, request.url, request.resource_type,
                         request.is_navigation_request(),
                         request.method not in _PASSIVE_METHODS or bool(request.post_data_buffer))
            route.abort("blockedbyclient")
        except Exception as exc:  # the page or context closed meanwhile
            log.debug("origin guard: a route was not settled (%s)", type(exc).__name__)

    def web_socket(self, socket: Any) -> None:
        """Playwright's WebSocket route handler (the ``Fetch`` domain does not pause
        WebSocket handshakes): connect only to an allowed origin."""
        url = str(socket.url)
        as_http = "http" + url[2:] if url.lower().startswith(("ws:", "wss:")) else url
        if self.policy.allows(as_http):
            socket.connect_to_server()
            return
        self._record("GET", url, "websocket", False, True)
        socket.close()

    def _record(self, method: str, url: str, resource_type: str, navigation: bool,
                carries_data: bool) -> None:
        blocked = Blocked(method=method, url=_strip(url), resource_type=resource_type.lower(),
                          navigation=navigation, carries_data=carries_data)
        self.blocked.append(blocked)
        log.warning("origin guard: %s", blocked.describe())


_guards: weakref.WeakKeyDictionary[Any, Guard] = weakref.WeakKeyDictionary()


def guard(context: Any, policy: OriginPolicy) -> Guard:
    """Guard every page of ``context`` (a Playwright browser context), those open now
    and those to come, with ``policy``; the context's guard if one is installed
    already (its policy kept). Open the job's page first: a page opened later is
    guarded from its ``page`` event, after its first request may have left."""
    existing = _guards.get(context)
    if existing is not None:
        for page in context.pages:
            existing.attach(page)
        return existing
    installed = Guard(policy)
    for page in context.pages:
        installed.attach(page)
    context.route(policy.elsewhere(), installed.route)
    context.route_web_socket("**/*", installed.web_socket)
    context.on("page", installed.attach)
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
  // Attributes read through Element.prototype: a form's own properties (form.action,
  // form.getAttribute) are shadowed by controls of that name.
  const attr = (node, name) => Element.prototype.getAttribute.call(node, name);
  const resolve = (url) => new URL(url || "", document.baseURI).href;
  const link = el.closest("a[href]");
  if (link) return resolve(attr(link, "href"));
  const button = el.closest("button, input[type=submit], input[type=image]");
  if (button && button.form && (button.type === "submit" || button.type === "image")) {
    const own = attr(button, "formaction");
    return resolve(own !== null ? own : attr(button.form, "action"));
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
