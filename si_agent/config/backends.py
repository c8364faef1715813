"""What a business's backend needs and answers, as far as it is known before a submission.

Part of step 3 of loading a business (``meaning``): a business its backend
cannot serve fails at load (and in ``si-agent validate``), not in front of a
citizen who has just given every value ("业务系统不支持该业务").

    http, url on the demo host    the id in ``/api/<id>`` is one the demo backend
    (``http://demo.si-agent``)    implements (``si_agent.demo_backend.endpoints``);
                                  the business's fields and steps give every key it
                                  requires; its answer has the declared keys
    http, any other url           nothing more is known: a result template may name
                                  any plain name
    rpa                           ``options.fields`` maps fields of the business; the
                                  answer's keys are the named groups of ``success``
    builtin                       the handler exists (checked by its Options model)

URLs are read with the environment of the process that loads them
(``${SI_BACKEND_URL:-http://demo.si-agent}`` is the demo backend when
``SI_BACKEND_URL`` is not set), as the executor reads them when it submits.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from si_agent.config.envsubst import expand_env
from si_agent.config.model import Business
from si_agent.demo_backend.endpoints import DEMO_ORIGIN, ENDPOINTS, demo_business
from si_agent.labels import RESULT_PATTERN


def result_keys(b: Business) -> frozenset[str] | None:
    """The keys of a successful answer of ``b``'s backend, or None when not declared."""
    if b.api is None:
        return None
    options = b.api.options
    if b.api.kind == "http" and isinstance(options.get("url"), str):
        endpoint = ENDPOINTS.get(demo_business(expand_env(options["url"])) or "")
        return frozenset(endpoint.returns) if endpoint is not None else None
    if b.api.kind == "rpa":
        success = options.get("success", RESULT_PATTERN)
        try:
            return frozenset(re.compile(success).groupindex) if isinstance(success, str) else None
        except re.error:  # reported by the rpa options model
            return None
    return None


def backend_errors(b: Business, raw_api: Mapping[str, Any]) -> Iterator[tuple[tuple, str]]:
    """What ``b``'s backend cannot serve; yields (path, message)."""
    assert b.api is not None
    options = b.api.options
    where = ("api", "options") if isinstance(raw_api.get("options"), Mapping) else ("api",)
    if b.api.kind == "http" and isinstance(options.get("url"), str):
        yield from _demo_errors(b, where, options["url"])
    elif b.api.kind == "rpa" and not b.discover and isinstance(options.get("fields"), Mapping):
        keys = set(b.field_keys)
        for key in options["fields"]:
            if key not in keys:
                yield where + ("fields", key), (
                    f"unknown field {key!r}; options.fields maps fields of this business "
                    f"to form labels ({', '.join(b.field_keys) or 'none'})")


def _demo_errors(b: Business, where: tuple, url: str) -> Iterator[tuple[tuple, str]]:
    expanded = expand_env(url)
    named = demo_business(expanded)
    if named is None:
        return
    at = where + ("url",)
    implemented = ", ".join(sorted(ENDPOINTS))
    if not named:
        yield at, (f"{expanded} is on the demo backend, which serves {DEMO_ORIGIN}/api/"
                   f"<business_id> only; implemented: {implemented}")
        return
    endpoint = ENDPOINTS.get(named)
    if endpoint is None:
        yield at, (f"the demo backend does not implement {named!r} ({expanded}); a citizen "
                   f"would be told 业务系统不支持该业务 on submitting. It implements: "
                   f"{implemented}. Point the url at the backend that serves this business "
                   f"(e.g. set SI_BACKEND_URL)")
        return
    given = set(b.field_keys) | {s.id for s in b.steps}
    missing = [key for key in endpoint.required if key not in given]
    if missing:
        yield ("fields",), (f"the demo backend's {named} needs {', '.join(missing)} in the "
                            f"submission, and no field or step of this business has that key")
