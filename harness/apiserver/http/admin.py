"""The admin API under ``/harness/v1/``: the world's clock, audit trail, simulators and clusters.

* ``GET clock`` → ``{"now": RFC 3339, "unix": seconds, "followsWallTime": bool, "nextDue": seconds|null,
  "retryDue": seconds|null}`` (``nextDue``: when the world's own work next falls due; ``retryDue``: when
  a controller next retries something that failed, null when nothing is failing)
* ``POST clock/advance`` with ``{"seconds": N}`` (a number ≥ 0) or ``{"to": unix seconds}`` → moves
  virtual time, runs what falls due in time order, settles, then answers like ``GET clock`` plus
  ``"wrote"``: whether anything was written on the way. With ``"stopAfterWrite": true`` it stops at
  the first instant at which something was written (the answer's ``unix`` says where), so
  controllers in another process can react at that instant.
* ``GET audit[?since=N&cluster=..&resource=..&verb=..&namespace=..&name=..&diff=false&objects=true]``
  → ``{"items": [record, ...], "total": N}`` (``since`` skips the first N records; a filter given
  empty matches the empty value, so ``namespace=`` selects cluster-scoped objects; ``diff=false``
  omits diffs; ``objects=true`` adds each record's ``old`` and ``new`` objects; ``total`` is the
  size of the whole trail)
* ``POST simulators/<name>`` with ``{"enabled": bool, "cluster": name}`` → switches the simulator
  off (its events wait) or on, in ``cluster`` or, without one, in every cluster; with
  ``{"knobs": {...}, "cluster": name}`` → sets the knobs (attributes the simulator has) of the
  simulator of ``cluster`` (default: management). Both may be given at once.
* ``POST simulators/<name>/call`` with ``{"method": name, "args": [...], "cluster": name}`` → calls
  a public method of the simulator and answers ``{"result": ...}``
* ``POST compact`` with ``{"cluster": name}`` (default: management) → forgets the cluster's
  storage history up to now, as an etcd compaction does; answers ``{"cluster", "resourceVersion"}``
* ``POST clusters`` with ``{"name": "<namespace>/<name>"}`` → creates the workload cluster (with its
  own simulators) unless it exists; answers ``{"name", "path"}``
* ``POST controllers/restart`` with ``{"names": [name, ...]}`` (or ``{}``: every reference controller
  the world runs) → the named reference controllers stop as a crash would (watches end, queues and
  timers are lost) and fresh instances with nothing in memory take over from a fresh list+watch;
  answers ``{"restarted": [names]}``. Names must be a list of strings (400); a controller the world
  does not run is 404.
* ``POST faults`` with a fault rule (harness/apiserver/faults.py: which requests, which fault,
  by rate or count) → 201 with the rule (its ``id`` and ``fired`` count); a bad rule is 400 saying why.
  ``GET faults`` → ``{"items": [rule...], "injected": [{rule, fault, cluster, verb, resource,
  namespace, name, user}, ...]}``; ``DELETE faults`` → clears rules and records, answers like ``GET``.
  Faults never hit the admin API, health, version, discovery or OpenAPI paths.
* ``GET watches`` → ``{"items": [{"auditID", "events", "written", "ended", "user", "resource"}, ...]}``:
  who watches what (``resource`` as plural.group) and what each watch
  stream was given (its ``Audit-Id`` response header names it) and how much of it was written out, so
  a client can tell it has read it all, and a harness that the server has nothing left to send

None of these settle the world except ``clock/advance``: they change what happens next, as the
in-process scene's calls do. Unknown simulators and clusters are 404; unknown knobs or methods, and
arguments a method refuses (TypeError, ValueError), are 400.
"""

from __future__ import annotations

import math
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from harness.apiserver import faults
from harness.apiserver.clusters import MANAGEMENT, cluster_path
from harness.apiserver.http import bodies, options
from harness.apiserver.http.protocol import ServedWorld
from harness.apiserver.http.responses import json_response, method_not_allowed, path_not_found
from harness.apiserver.http.watchstream import WatchHub
from harness.clock import rfc3339
from harness.kube import errors

ADMIN_PREFIX = "/harness/v1"
SECONDS_INVALID = 'body must be a JSON object with "seconds": a number >= 0, or "to": a time in Unix seconds'
SINCE_INVALID = "since must be an integer >= 0"
BODY_NOT_OBJECT = "body must be a JSON object"
FIELD_INVALID = '"{}" must be {}'
SIMULATOR_NOT_FOUND = 'simulator "{}" not found in cluster "{}"'
CLUSTER_NOT_FOUND = 'cluster "{}" not found'
NO_SUCH_KNOB = 'simulator "{}" has no knob "{}"'
NO_SUCH_METHOD = 'simulator "{}" has no method "{}"'
NOTHING_TO_DO = 'body must carry "enabled" or "knobs"'
CALL_REFUSED = 'simulator "{}" refused the call of "{}": {}'
CONTROLLER_NOT_FOUND = 'reference controller "{}" does not run in this world (it runs: {})'
_AUDIT_FILTERS = ("cluster", "resource", "verb", "namespace", "name")
_SIMULATORS = "/simulators/"
_CALL = "/call"


def is_admin(path: str) -> bool:
    """True for paths of the admin API."""
    return path == ADMIN_PREFIX or path.startswith(ADMIN_PREFIX + "/")


def _clock(world: ServedWorld) -> dict[str, Any]:
    now = world.now()
    return {"now": rfc3339(now), "unix": now, "followsWallTime": world.follows_wall_time, "nextDue": world.next_due(),
            "retryDue": world.retry_due()}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _advance(world: ServedWorld, body: Any) -> dict[str, Any]:
    """Move the clock as an advance request's body says (``seconds`` or ``to``); the answer."""
    if not isinstance(body, dict) or ("seconds" in body) == ("to" in body):
        raise errors.bad_request(SECONDS_INVALID)
    stop_after_write = _field(body, "stopAfterWrite", bool, "true or false", default=False)
    if "to" in body:
        target = _number(body["to"])
        if target is None:
            raise errors.bad_request(SECONDS_INVALID)
    else:
        seconds = _number(body["seconds"])
        if seconds is None or seconds < 0:
            raise errors.bad_request(SECONDS_INVALID)
        target = world.now() + seconds
    _, wrote = world.advance_until(target, stop_after_write=stop_after_write)
    return {**_clock(world), "wrote": wrote}


def _audit(world: ServedWorld, request: Request) -> dict[str, Any]:
    query = request.query_params
    since = options.parse_int("since", query.get("since")) or 0
    if since < 0:
        raise errors.bad_request(SINCE_INVALID)
    # Present means filter, even when empty: cluster-scoped objects have the namespace "".
    filters = {key: query[key] for key in _AUDIT_FILTERS if key in query}
    with_diff = options.parse_bool("diff", query.get("diff"), default=True)
    with_objects = options.parse_bool("objects", query.get("objects"))
    items = []
    for record in world.audit.query(since=since, **filters):
        item = record.to_dict(with_diff=with_diff)
        if with_objects:
            item["old"], item["new"] = record.old, record.new
        items.append(item)
    return {"items": items, "total": len(world.audit)}


async def _object(request: Request) -> dict[str, Any]:
    body = bodies.parse_json(await bodies.read_body(request))
    if not isinstance(body, dict):
        raise errors.bad_request(BODY_NOT_OBJECT)
    return body


def _field(body: dict[str, Any], key: str, kind: type, what: str, default: Any = None) -> Any:
    value = body.get(key, default)
    if value is not default and not isinstance(value, kind):
        raise errors.bad_request(FIELD_INVALID.format(key, what))
    return value


def _cluster(world: ServedWorld, body: dict[str, Any], default: str | None = MANAGEMENT) -> str | None:
    cluster = _field(body, "cluster", str, "a cluster name", default)
    if cluster is not None and world.clusters.get(cluster) is None:
        raise errors.StatusError(errors.status(404, "NotFound", CLUSTER_NOT_FOUND.format(cluster)))
    return cluster  # type: ignore[no-any-return]


def _simulator(world: ServedWorld, name: str, cluster: str | None) -> Any:
    if name not in world.simulator_names:
        raise errors.StatusError(
            errors.status(404, "NotFound", SIMULATOR_NOT_FOUND.format(name, cluster or MANAGEMENT))
        )
    return world.simulator(name, cluster or MANAGEMENT)


def _configure(world: ServedWorld, name: str, body: dict[str, Any]) -> dict[str, Any]:
    enabled = _field(body, "enabled", bool, "true or false")
    knobs = _field(body, "knobs", dict, "an object of knob values")
    if enabled is None and knobs is None:
        raise errors.bad_request(NOTHING_TO_DO)
    # Switching applies to every cluster unless one is named; knobs belong to one simulator.
    cluster = _cluster(world, body, default=None if knobs is None else MANAGEMENT)
    target = _simulator(world, name, cluster)
    for knob in knobs or {}:
        # Only what the simulator already has: a misspelt knob must not pass silently.
        if knob.startswith("_") or not hasattr(target, knob) or callable(getattr(target, knob)):
            raise errors.bad_request(NO_SUCH_KNOB.format(name, knob))
    for knob, value in (knobs or {}).items():
        setattr(target, knob, value)
    if enabled is not None:
        world.set_enabled(name, enabled, cluster)
    return {"name": name, "cluster": cluster}


def _call(world: ServedWorld, name: str, body: dict[str, Any]) -> dict[str, Any]:
    method = _field(body, "method", str, "a method name")
    args = _field(body, "args", list, "a list of arguments", default=[])
    cluster = _cluster(world, body) or MANAGEMENT
    target = _simulator(world, name, cluster)
    function = getattr(target, method, None) if method and not method.startswith("_") else None
    if not callable(function):
        raise errors.bad_request(NO_SUCH_METHOD.format(name, method))
    try:
        result = function(*args)
    except (TypeError, ValueError) as err:  # arguments the method refuses are the caller's error
        raise errors.bad_request(CALL_REFUSED.format(name, method, err)) from None
    return {"result": result}


def _compact(world: ServedWorld, body: dict[str, Any]) -> dict[str, Any]:
    cluster = _cluster(world, body) or MANAGEMENT
    server = world.clusters.get(cluster)
    assert server is not None  # _cluster checked it
    server.store.compact()
    return {"cluster": cluster, "resourceVersion": str(server.store.resource_version)}


def _restart_controllers(world: ServedWorld, body: dict[str, Any]) -> dict[str, Any]:
    names = _field(body, "names", list, "a list of reference controller names")
    if names is not None and not all(isinstance(name, str) for name in names):
        raise errors.bad_request(FIELD_INVALID.format("names", "a list of reference controller names"))
    for name in names or []:
        if name not in world.controller_names:
            running = ", ".join(world.controller_names) or "none"
            raise errors.StatusError(errors.status(404, "NotFound", CONTROLLER_NOT_FOUND.format(name, running)))
    return {"restarted": world.restart_controllers(names)}


def _add_cluster(world: ServedWorld, body: dict[str, Any]) -> dict[str, Any]:
    name = _field(body, "name", str, "a workload cluster name (<namespace>/<name>)")
    namespace, _, short = (name or "").partition("/")
    if not namespace or not short or "/" in short:
        raise errors.bad_request(FIELD_INVALID.format("name", "a workload cluster name (<namespace>/<name>)"))
    world.add_cluster(name)
    return {"name": name, "path": cluster_path(name)}


async def _faults(world: ServedWorld, request: Request) -> Response:
    injector = faults.injector_of(world.clusters)
    if request.method == "POST":
        try:
            rule = injector.add(bodies.parse_json(await bodies.read_body(request)))
        except faults.FaultRuleError as err:
            raise errors.bad_request(str(err)) from None
        return json_response(rule.to_dict(), 201)
    if request.method == "DELETE":
        injector.clear()
    elif request.method != "GET":
        raise method_not_allowed()
    return json_response(injector.to_dict())


def _require(request: Request, method: str) -> None:
    if request.method != method:
        raise method_not_allowed()


async def serve_admin(world: ServedWorld, request: Request, path: str, watches: WatchHub | None = None) -> Response:
    """The response to an admin API request (``path`` starts with :data:`ADMIN_PREFIX`);
    ``watches``: the facade's open watch streams (``GET watches``)."""
    rest = path[len(ADMIN_PREFIX):].rstrip("/")
    if rest == "/clock":
        _require(request, "GET")
        return json_response(_clock(world))
    if rest == "/clock/advance":
        _require(request, "POST")
        return json_response(_advance(world, bodies.parse_json(await bodies.read_body(request))))
    if rest == "/audit":
        _require(request, "GET")
        return json_response(_audit(world, request))
    if rest == "/watches":
        _require(request, "GET")
        return json_response({"items": watches.streams() if watches is not None else []})
    if rest == "/faults":
        return await _faults(world, request)
    if rest == "/compact":
        _require(request, "POST")
        return json_response(_compact(world, await _object(request)))
    if rest == "/controllers/restart":
        _require(request, "POST")
        return json_response(_restart_controllers(world, await _object(request)))
    if rest == "/clusters":
        _require(request, "POST")
        return json_response(_add_cluster(world, await _object(request)))
    if rest.startswith(_SIMULATORS):
        name = rest[len(_SIMULATORS):]
        call = name.endswith(_CALL)
        name = name.removesuffix(_CALL) if call else name
        if not name or "/" in name:
            raise path_not_found()
        _require(request, "POST")
        body = await _object(request)
        return json_response(_call(world, name, body) if call else _configure(world, name, body))
    raise path_not_found()
