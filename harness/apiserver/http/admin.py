"""The admin API under ``/harness/v1/``: read and move the world's clock, read the audit trail.

* ``GET clock`` → ``{"now": RFC 3339, "unix": seconds}``
* ``POST clock/advance`` with ``{"seconds": N}`` (a number ≥ 0) → moves virtual time, runs what
  falls due, settles, then answers like ``GET clock``
* ``GET audit[?since=N&cluster=..&resource=..&verb=..&namespace=..&name=..&diff=false]`` →
  ``{"items": [record, ...]}`` (``since`` skips the first N records; ``diff=false`` omits diffs)
"""

from __future__ import annotations

import math
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from harness.apiserver import errors
from harness.apiserver.http import bodies, options
from harness.apiserver.http.protocol import ServedWorld
from harness.apiserver.http.responses import json_response, method_not_allowed, path_not_found
from harness.clock import rfc3339

ADMIN_PREFIX = "/harness/v1"
SECONDS_INVALID = 'body must be a JSON object with "seconds": a number >= 0'
SINCE_INVALID = "since must be an integer >= 0"
_AUDIT_FILTERS = ("cluster", "resource", "verb", "namespace", "name")


def is_admin(path: str) -> bool:
    """True for paths of the admin API."""
    return path == ADMIN_PREFIX or path.startswith(ADMIN_PREFIX + "/")


def _clock(world: ServedWorld) -> dict[str, Any]:
    now = world.now()
    return {"now": rfc3339(now), "unix": now}


def _seconds(body: Any) -> float:
    seconds = body.get("seconds") if isinstance(body, dict) else None
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise errors.bad_request(SECONDS_INVALID)
    if not math.isfinite(seconds) or seconds < 0:
        raise errors.bad_request(SECONDS_INVALID)
    return float(seconds)


def _audit(world: ServedWorld, request: Request) -> dict[str, Any]:
    query = request.query_params
    since = options.parse_int("since", query.get("since")) or 0
    if since < 0:
        raise errors.bad_request(SINCE_INVALID)
    filters = {key: query[key] for key in _AUDIT_FILTERS if query.get(key)}
    with_diff = options.parse_bool("diff", query.get("diff"), default=True)
    records = world.audit.query(since=since, **filters)
    return {"items": [record.to_dict(with_diff=with_diff) for record in records]}


async def serve_admin(world: ServedWorld, request: Request, path: str) -> Response:
    """The response to an admin API request (``path`` starts with :data:`ADMIN_PREFIX`)."""
    rest = path[len(ADMIN_PREFIX):].rstrip("/")
    method = request.method
    if rest == "/clock":
        if method != "GET":
            raise method_not_allowed()
        return json_response(_clock(world))
    if rest == "/clock/advance":
        if method != "POST":
            raise method_not_allowed()
        seconds = _seconds(bodies.parse_json(await bodies.read_body(request)))
        world.advance(seconds)
        return json_response(_clock(world))
    if rest == "/audit":
        if method != "GET":
            raise method_not_allowed()
        return json_response(_audit(world, request))
    raise path_not_found()
