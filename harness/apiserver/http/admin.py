"""The admin API under ``/harness/v1/``: the world's clock, audit trail, simulators and clusters.

A typed FastAPI app mounted into the facade (its OpenAPI document at ``/harness/v1/openapi.json``,
browsable docs at ``/harness/v1/docs``, served without the network). Every error, request
validation included, is a Kubernetes ``Status``; bodies are decoded with the facade's bounded JSON
decoder. The endpoints:

* ``GET clock`` → ``{"now": RFC 3339, "unix": seconds, "followsWallTime": bool, "nextDue": seconds|null,
  "retryDue": seconds|null}`` (``nextDue``: when the world's own work next falls due; ``retryDue``: when
  a controller next retries something that failed, null when nothing is failing)
* ``POST clock/advance`` with ``{"seconds": N}`` (0 ≤ N ≤ :data:`MAX_ADVANCE_SECONDS`) or ``{"to": unix
  seconds}`` (not before now, at most :data:`MAX_ADVANCE_SECONDS` ahead) → moves virtual time, runs
  what falls due in time order, settles, then answers like ``GET clock`` plus ``"wrote"``: whether
  anything was written on the way. With ``"stopAfterWrite": true`` it stops at the first instant at
  which something was written (the answer's ``unix`` says where), so controllers in another process
  can react at that instant. The work runs in slices of about :data:`SLICE_SECONDS` wall time, the
  server answering other requests (health, reads) between them; one advance runs at a time.
* ``GET audit[?since=N&cluster=..&resource=..&verb=..&namespace=..&name=..&diff=false&objects=true]``
  → ``{"items": [record, ...], "total": N}`` (``since`` skips the first N records; a filter given
  empty matches the empty value, so ``namespace=`` selects cluster-scoped objects; ``diff=false``
  omits diffs; ``objects=true`` adds each record's ``old`` and ``new`` objects; ``total`` is the
  size of the whole trail)
* ``POST simulators/<name>`` with ``{"enabled": bool, "cluster": name}`` → switches the simulator
  off (its events wait) or on, in ``cluster`` or, without one, in every cluster; with
  ``{"knobs": {...}, "cluster": name}`` → sets the knobs of the simulator of ``cluster`` (default:
  management). A knob is a public setting the simulator has, a boolean, number or string; a value of
  another type is refused. Both may be given at once.
* ``POST simulators/<name>/call`` with ``{"method": name, "args": [...], "cluster": name}`` → calls
  a public method of the simulator and answers ``{"result": ...}``
* ``POST compact`` with ``{"cluster": name}`` (default: management) → forgets the cluster's
  storage history up to now, as an etcd compaction does; answers ``{"cluster", "resourceVersion"}``
* ``POST clusters`` with ``{"name": "<namespace>/<name>"}`` (two DNS-1123 labels) → creates the
  workload cluster (with its own simulators) unless it exists; answers ``{"name", "path"}``
* ``POST controllers/restart`` with ``{"names": [name, ...]}`` (or ``{}``: every reference controller
  the world runs) → the named reference controllers stop as a crash would (watches end, queues and
  timers are lost) and fresh instances with nothing in memory take over from a fresh list+watch;
  answers ``{"restarted": [names]}``. A controller the world does not run is 404.
* ``POST faults`` with a fault rule (harness/apiserver/http/faults.py: which requests, which fault,
  by rate or count) → 201 with the rule (its ``id`` and ``fired`` count); a bad rule is 400 saying why.
  ``GET faults`` → ``{"items": [rule...], "injected": [{rule, fault, cluster, verb, resource,
  namespace, name, user}, ...]}``; ``DELETE faults`` → clears rules and records, answers like ``GET``.
  Faults never hit the admin API, health, version, discovery or OpenAPI paths.
* ``GET watches`` → ``{"items": [{"auditID", "events", "written", "ended", "user", "resource"}, ...]}``:
  who watches what (``resource`` as plural.group) and what each watch
  stream was given (its ``Audit-Id`` response header names it) and how much of it was written out, so
  a client can tell it has read it all, and a harness that the server has nothing left to send

None of these settle the world except ``clock/advance``: they change what happens next, as the
in-process scene's calls do. Unknown simulators and clusters are 404; malformed bodies, unknown
fields, unknown knobs or methods, and arguments a method refuses (TypeError, ValueError) are 400.
The browser checks of harness/apiserver/http/guard.py apply (415 for a body that is not JSON, 403
for a foreign ``Origin``), and with a token every path but the docs needs it (401).
"""

from __future__ import annotations

import asyncio
import functools
import math
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any

import fastapi_offline
from fastapi import APIRouter, Body, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, model_validator
from starlette.exceptions import HTTPException
from starlette.responses import HTMLResponse, Response

from harness.apiserver import faults
from harness.apiserver.clusters import MANAGEMENT, cluster_path
from harness.apiserver.http import auth, bodies, guard, options
from harness.apiserver.http.protocol import ServedWorld
from harness.apiserver.http.responses import (
    internal_error,
    json_response,
    method_not_allowed,
    path_not_found,
    status_response,
)
from harness.apiserver.http.watchstream import WatchHub
from harness.clock import rfc3339
from harness.kube import errors
from harness.kube.validation import is_dns1123_label

ADMIN_PREFIX = "/harness/v1"
OPENAPI_PATH = "/openapi.json"
DOCS_PATH = "/docs"
# Where the docs page's Swagger UI files are served from (bundled by fastapi-offline, no CDN).
DOCS_ASSETS_PATH = "/docs-assets"
OPEN_PATHS = (OPENAPI_PATH, DOCS_PATH, DOCS_ASSETS_PATH)
# The most one advance may move the clock: a month of virtual time (a long soak is several requests).
MAX_ADVANCE_SECONDS = 31 * 24 * 3600
# Wall time one slice of an advance may hold the event loop before other requests get their turn.
SLICE_SECONDS = 0.02
ADVANCE_TOO_FAR = "seconds: the clock may move at most {} seconds (31 days) per request, not {}"
TO_TOO_FAR = "to: {} is more than {} seconds (31 days) after the current time {}"
SECONDS_OR_TO = 'give exactly one of "seconds" (a number >= 0) or "to" (a time in Unix seconds)'
SHUTTING_DOWN = "the server is shutting down; the clock stopped at {}"
INVALID_BODY = "invalid request body: {}"
BODY_NOT_OBJECT = "body must be a JSON object"
_NOT_AN_OBJECT = ("missing", "dict_type", "model_type", "model_attributes_type")
INVALID_QUERY = "invalid query: {}"
SIMULATOR_NOT_FOUND = 'simulator "{}" not found in cluster "{}"'
CLUSTER_NOT_FOUND = 'cluster "{}" not found'
CLUSTER_NAME_INVALID = (
    'cluster: "{}" is not a cluster name: "management", or "<namespace>/<name>" where both are DNS-1123 labels ({})'
)
NO_SUCH_KNOB = 'knobs.{1}: simulator "{0}" has no knob "{1}"'
KNOB_TYPE = 'knobs.{1}: simulator "{0}" knob "{1}" must be {2}, not {3}'
NO_SUCH_METHOD = 'simulator "{}" has no method "{}"'
NOTHING_TO_DO = 'body must carry "enabled" or "knobs"'
CALL_REFUSED = 'simulator "{}" refused the call of "{}": {}'
CONTROLLER_NOT_FOUND = 'reference controller "{}" does not run in this world (it runs: {})'
_AUDIT_FILTERS = ("cluster", "resource", "verb", "namespace", "name")
# Attributes every controller has (its runtime's state, its client): never knobs.
_NOT_KNOBS = frozenset({"client", "manager", "enabled", "errors", "reconciles", "name", "recorder", "events"})


def is_admin(path: str) -> bool:
    """True for paths of the admin API."""
    return path == ADMIN_PREFIX or path.startswith(ADMIN_PREFIX + "/")


# -- models ---------------------------------------------------------------------------------------


class _Body(BaseModel):
    """A request body: a JSON object, unknown fields refused, no type coercion."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


ClusterName = Annotated[str, Field(description='"management" or "<namespace>/<name>" of a workload cluster')]


class Advance(_Body):
    """How far to move the clock: ``seconds`` from now, or ``to`` an instant (exactly one)."""

    seconds: float | None = Field(None, ge=0, description="how far to move, at most 31 days")
    to: float | None = Field(None, ge=0, description="the instant (Unix seconds) to move to, not before now")
    stopAfterWrite: bool = Field(False, description="stop at the first instant at which something is written")  # noqa: N815

    @model_validator(mode="after")
    def _one_of(self) -> Advance:
        if (self.seconds is None) == (self.to is None):
            raise ValueError(SECONDS_OR_TO)
        return self


class Clock(BaseModel):
    """The world's virtual time."""

    now: str = Field(description="RFC 3339")
    unix: float
    followsWallTime: bool  # noqa: N815
    nextDue: float | None = Field(description="when the world's own work next falls due")  # noqa: N815
    retryDue: float | None = Field(description="when a controller next retries something that failed")  # noqa: N815


class Advanced(Clock):
    """The clock after an advance, and whether anything was written on the way."""

    wrote: bool


class AuditList(BaseModel):
    """Audit records, oldest first, and the size of the whole trail."""

    items: list[dict[str, Any]]
    total: int


class SimulatorSettings(_Body):
    """Switch a simulator on or off and/or set its knobs."""

    enabled: bool | None = None
    knobs: dict[str, Any] | None = Field(None, description="knob name → boolean, number or string")
    cluster: ClusterName | None = Field(None, description="default: every cluster (enabled), management (knobs)")


class SimulatorConfigured(BaseModel):
    """Which simulator was configured, and in which cluster (null: every cluster)."""

    name: str
    cluster: str | None


class SimulatorCall(_Body):
    """A call of a public method of a simulator."""

    method: str
    args: list[Any] = Field(default_factory=list)
    cluster: ClusterName = MANAGEMENT


class CallResult(BaseModel):
    """What the method returned."""

    result: Any


class ClusterRef(_Body):
    """A cluster of the world."""

    cluster: ClusterName = MANAGEMENT


class Compacted(BaseModel):
    """The cluster whose history was compacted, and the resourceVersion it was compacted at."""

    cluster: str
    resourceVersion: str  # noqa: N815


class NewCluster(_Body):
    """A workload cluster to create."""

    name: str = Field(description="<namespace>/<name>, both DNS-1123 labels")


class ClusterCreated(BaseModel):
    """The workload cluster and the path it is served under."""

    name: str
    path: str


class Restart(_Body):
    """Reference controllers to restart (none given: every one the world runs)."""

    names: list[str] | None = None


class Restarted(BaseModel):
    """The reference controllers restarted."""

    restarted: list[str]


class FaultList(BaseModel):
    """The fault rules and the faults they injected."""

    items: list[dict[str, Any]]
    injected: list[dict[str, Any]]


class WatchList(BaseModel):
    """The watch streams the server has served or serves."""

    items: list[dict[str, Any]]


# -- checks ---------------------------------------------------------------------------------------


def check_cluster_name(name: str) -> None:
    """400 unless ``name`` is ``management`` or ``<namespace>/<name>`` made of DNS-1123 labels."""
    if name == MANAGEMENT:
        return
    namespace, slash, short = name.partition("/")
    problems = [*is_dns1123_label(namespace), *is_dns1123_label(short)] if slash else ["no '/'"]
    if problems:
        raise errors.bad_request(CLUSTER_NAME_INVALID.format(name, "; ".join(problems)))


def _cluster(world: ServedWorld, cluster: str | None) -> str | None:
    if cluster is not None:
        check_cluster_name(cluster)
        if world.clusters.get(cluster) is None:
            raise errors.StatusError(errors.status(404, "NotFound", CLUSTER_NOT_FOUND.format(cluster)))
    return cluster


def _simulator(world: ServedWorld, name: str, cluster: str | None) -> Any:
    if name not in world.simulator_names:
        raise errors.StatusError(
            errors.status(404, "NotFound", SIMULATOR_NOT_FOUND.format(name, cluster or MANAGEMENT))
        )
    return world.simulator(name, cluster or MANAGEMENT)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def check_knob(simulator: str, target: Any, knob: str, value: Any) -> None:
    """400 unless ``knob`` is a setting of ``target`` (a public boolean, number or string
    attribute, not its runtime state) and ``value`` is of that setting's type."""
    current = getattr(target, knob, None) if not knob.startswith("_") and knob not in _NOT_KNOBS else None
    if isinstance(current, bool):
        expected, fits = "a boolean", isinstance(value, bool)
    elif isinstance(current, (int, float)):
        expected = "a finite number"
        fits = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    elif isinstance(current, str):
        expected, fits = "a string", isinstance(value, str)
    else:
        raise errors.bad_request(NO_SUCH_KNOB.format(simulator, knob))
    if not fits:
        raise errors.bad_request(KNOB_TYPE.format(simulator, knob, expected, _json_type(value)))


# -- handlers -------------------------------------------------------------------------------------


def _clock(world: ServedWorld) -> dict[str, Any]:
    now = world.now()
    return {"now": rfc3339(now), "unix": now, "followsWallTime": world.follows_wall_time, "nextDue": world.next_due(),
            "retryDue": world.retry_due()}


def advance_target(now: float, seconds: float | None, to: float | None) -> float:
    """The instant an advance request moves the clock to; 400 beyond :data:`MAX_ADVANCE_SECONDS`
    or (``to``) before ``now``."""
    if seconds is not None:
        if seconds > MAX_ADVANCE_SECONDS:
            raise errors.bad_request(ADVANCE_TOO_FAR.format(MAX_ADVANCE_SECONDS, seconds))
        return now + seconds
    assert to is not None
    if to < now:
        # Virtual time never goes back, and a "to" already passed asks for nothing: the world's own work
        # (the harness's Runtime Extension passing a hung call's deadline) may have moved the clock past
        # the instant a lockstep driver aimed at. The answer's "unix" says where the clock is.
        return now
    if to - now > MAX_ADVANCE_SECONDS:
        raise errors.bad_request(TO_TOO_FAR.format(to, MAX_ADVANCE_SECONDS, now))
    return to


async def advance_in_slices(
    world: ServedWorld, target: float, *, stop_after_write: bool, stopping: threading.Event
) -> bool:
    """Move ``world``'s clock to ``target`` in slices of about :data:`SLICE_SECONDS` wall time,
    yielding to the event loop between them (so health checks and reads are served, and a
    shutdown is noticed); whether anything was written. 503 when the server starts shutting down
    before the clock reached ``target``."""
    wrote = False
    while True:
        slice_ends = time.monotonic() + SLICE_SECONDS
        out_of_time = lambda end=slice_ends: time.monotonic() > end  # noqa: E731 - asked per instant
        reached, wrote_now = world.advance_until(target, stop_after_write=stop_after_write, pause=out_of_time)
        wrote = wrote or wrote_now
        if reached >= target or (stop_after_write and wrote):
            return wrote
        if stopping.is_set():
            raise errors.StatusError(errors.status(503, "ServiceUnavailable", SHUTTING_DOWN.format(reached)))
        await asyncio.sleep(0)


def _audit(world: ServedWorld, request: Request, since: int) -> dict[str, Any]:
    query = request.query_params
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


def _configure(world: ServedWorld, name: str, body: SimulatorSettings) -> dict[str, Any]:
    if body.enabled is None and body.knobs is None:
        raise errors.bad_request(NOTHING_TO_DO)
    # Switching applies to every cluster unless one is named; knobs belong to one simulator.
    cluster = _cluster(world, body.cluster if body.cluster is not None or body.knobs is None else MANAGEMENT)
    target = _simulator(world, name, cluster)
    knobs = body.knobs or {}
    for knob, value in knobs.items():  # every knob checked before the first is set
        check_knob(name, target, knob, value)
    for knob, value in knobs.items():
        setattr(target, knob, value)
    if body.enabled is not None:
        world.set_enabled(name, body.enabled, cluster)
    return {"name": name, "cluster": cluster}


def _call(world: ServedWorld, name: str, body: SimulatorCall) -> dict[str, Any]:
    cluster = _cluster(world, body.cluster) or MANAGEMENT
    target = _simulator(world, name, cluster)
    function = getattr(target, body.method, None) if body.method and not body.method.startswith("_") else None
    if not callable(function):
        raise errors.bad_request(NO_SUCH_METHOD.format(name, body.method))
    try:
        result = function(*body.args)
    except (TypeError, ValueError) as err:  # arguments the method refuses are the caller's error
        raise errors.bad_request(CALL_REFUSED.format(name, body.method, err)) from None
    return {"result": result}


def _restart_controllers(world: ServedWorld, names: list[str] | None) -> dict[str, Any]:
    for name in names or []:
        if name not in world.controller_names:
            running = ", ".join(world.controller_names) or "none"
            raise errors.StatusError(errors.status(404, "NotFound", CONTROLLER_NOT_FOUND.format(name, running)))
    return {"restarted": world.restart_controllers(names)}


# -- the app --------------------------------------------------------------------------------------


class JSONBodyRoute(APIRoute):
    """A route whose JSON body is read with the facade's bounded reader and decoder (size limit,
    the decoder's refusals as a ``Status``) before FastAPI validates it against the model."""

    def get_route_handler(self) -> Callable[[Request], Awaitable[Response]]:
        handler = super().get_route_handler()

        async def bounded(request: Request) -> Response:
            if self.body_field is not None:
                raw = await bodies.read_body(request)
                # Starlette caches both; FastAPI reads them back instead of the (consumed) stream.
                request._body = raw
                if raw:
                    request._json = bodies.parse_json(raw)
            return await handler(request)

        return bounded


def _field_path(loc: tuple[Any, ...]) -> str:
    parts = [str(part) for part in loc if part not in ("body", "query")]
    return ".".join(parts) or "body"


def validation_message(exc: RequestValidationError) -> str:
    """One line naming each field a request got wrong, and why."""
    problems = []
    for error in exc.errors():
        loc = tuple(error.get("loc", ()))
        if loc == ("body",) and error.get("type") in _NOT_AN_OBJECT:
            return BODY_NOT_OBJECT
        message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
        problems.append(message if message == SECONDS_OR_TO else f"{_field_path(loc)}: {message}")
    template = INVALID_QUERY if any(tuple(e.get("loc", ()))[:1] == ("query",) for e in exc.errors()) else INVALID_BODY
    return template.format("; ".join(problems))


async def _validation_failed(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    return status_response(errors.bad_request(validation_message(exc)))


async def _status_failed(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, errors.StatusError)
    return status_response(exc)


async def _http_failed(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        return status_response(path_not_found())
    if exc.status_code == 405:
        return status_response(method_not_allowed())
    return status_response(errors.StatusError(errors.status(exc.status_code, "", str(exc.detail))))


async def _bug(request: Request, exc: Exception) -> Response:
    return internal_error(exc)


# The Swagger UI files fastapi-offline bundles (its own pages' endpoints close over their app).
_SWAGGER_UI_FILES = (Path(fastapi_offline.__file__).parent / "static").as_posix()


async def _docs_page(request: Request) -> HTMLResponse:
    app: FastAPI = request.app
    root = request.scope.get("root_path")
    return get_swagger_ui_html(
        openapi_url=f"{root}{app.openapi_url}", title=app.title + " - Swagger UI",
        oauth2_redirect_url=app.swagger_ui_oauth2_redirect_url,
        swagger_js_url=f"{root}{DOCS_ASSETS_PATH}/swagger-ui-bundle.js",
        swagger_css_url=f"{root}{DOCS_ASSETS_PATH}/swagger-ui.css",
        swagger_favicon_url=f"{root}{DOCS_ASSETS_PATH}/favicon.png", swagger_ui_parameters=app.swagger_ui_parameters,
    )


async def _docs_oauth2_redirect() -> HTMLResponse:
    return get_swagger_ui_oauth2_redirect_html()


def typed_app(title: str, description: str, *, prefix: str, token: str | None = None) -> FastAPI:
    """A FastAPI app for an admin API mounted at ``prefix``: OpenAPI at ``openapi.json``, docs
    (Swagger UI from files bundled by fastapi-offline, no CDN) at ``docs``; JSON bodies read by
    the facade's bounded decoder; every error a Kubernetes ``Status``; the browser checks of
    :mod:`~harness.apiserver.http.guard`, and ``token`` (when given) required everywhere but
    the docs."""
    app = FastAPI(title=title, version="v1", description=description, openapi_url=OPENAPI_PATH, docs_url=None,
                  redoc_url=None)
    # The docs page as fastapi-offline serves it (Swagger UI from its bundled files, no CDN), with
    # endpoints defined once (see AdminState: FastAPI's caches would keep a per-app closure's app alive).
    app.mount(DOCS_ASSETS_PATH, StaticFiles(directory=_SWAGGER_UI_FILES), name="static-offline-docs")
    app.add_api_route(DOCS_PATH, _docs_page, methods=["GET"], include_in_schema=False,
                      name="custom_swagger_ui_html")
    assert app.swagger_ui_oauth2_redirect_url is not None
    app.add_api_route(app.swagger_ui_oauth2_redirect_url, _docs_oauth2_redirect, methods=["GET"],
                      include_in_schema=False, name="swagger_ui_redirect")
    app.router.route_class = JSONBodyRoute
    app.exception_handlers.update({
        RequestValidationError: _validation_failed, errors.StatusError: _status_failed,
        HTTPException: _http_failed, Exception: _bug,
    })

    @app.middleware("http")
    async def guarded(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        # Before routing, so that a browser's request changes nothing and learns nothing.
        rest = request.url.path.removeprefix(prefix)
        try:
            if token is not None and not any(rest == p or rest.startswith(p + "/") for p in OPEN_PATHS):
                auth.identify(request.headers, token)
            guard.check_admin_request(request.method, request.headers, request.url.scheme)
        except errors.StatusError as err:
            return status_response(err)
        return await call_next(request)

    return app


class AdminState:
    """What the admin API's endpoints serve, kept on the app (``app.state.admin``): the endpoints are
    module-level functions that read it from the request. FastAPI caches what it learns of each
    endpoint function in process-wide caches (fastapi/dependencies/models.py, thousands of entries)
    keyed by the function, so an endpoint that closed over its world would keep the world, its
    stores and its audit trail alive long after its server stopped."""

    def __init__(self, world: ServedWorld, watches: WatchHub | None, stopping: threading.Event) -> None:
        self.world = world
        self.watches = watches
        self.stopping = stopping
        # One advance at a time.
        self.advancing = asyncio.Lock()


def _state(request: Request) -> AdminState:
    state: AdminState = request.app.state.admin
    return state


def _world(request: Request) -> ServedWorld:
    return _state(request).world


# Every handler is ``async``: the world is only ever touched from the event loop's thread. Each is
# defined once, here, and finds its world through the request (see AdminState).


async def _api_get_clock(request: Request) -> dict[str, Any]:
    return _clock(_world(request))


async def _api_advance(request: Request, body: Advance) -> dict[str, Any]:
    state = _state(request)
    async with state.advancing:
        target = advance_target(state.world.now(), body.seconds, body.to)
        wrote = await advance_in_slices(state.world, target, stop_after_write=body.stopAfterWrite,
                                        stopping=state.stopping)
    return {**_clock(state.world), "wrote": wrote}


async def _api_audit(
    request: Request,
    since: Annotated[int, Query(ge=0, description="skip the first N records")] = 0,
    cluster: str | None = None, resource: str | None = None, verb: str | None = None,
    namespace: str | None = None, name: str | None = None,
    diff: Annotated[str | None, Query(description="false: leave the diffs out")] = None,
    objects: Annotated[str | None, Query(description="true: add each record's old and new object")] = None,
) -> dict[str, Any]:
    return _audit(_world(request), request, since)


async def _api_get_watches(request: Request) -> dict[str, Any]:
    watches = _state(request).watches
    return {"items": watches.streams() if watches is not None else []}


async def _api_get_faults(request: Request) -> dict[str, Any]:
    return faults.injector_of(_world(request).clusters).to_dict()


async def _api_add_fault(
    request: Request, rule: Annotated[dict[str, Any], Body(description="a fault rule (faults.py)")]
) -> Response:
    try:
        added = faults.injector_of(_world(request).clusters).add(rule)
    except faults.FaultRuleError as err:
        raise errors.bad_request(str(err)) from None
    return json_response(added.to_dict(), 201)


async def _api_clear_faults(request: Request) -> dict[str, Any]:
    injector = faults.injector_of(_world(request).clusters)
    injector.clear()
    return injector.to_dict()


async def _api_compact(request: Request, body: ClusterRef) -> dict[str, Any]:
    world = _world(request)
    cluster = _cluster(world, body.cluster) or MANAGEMENT
    server = world.clusters.get(cluster)
    assert server is not None  # _cluster checked it
    server.store.compact()
    return {"cluster": cluster, "resourceVersion": str(server.store.resource_version)}


async def _api_restart(request: Request, body: Restart) -> dict[str, Any]:
    return _restart_controllers(_world(request), body.names)


async def _api_add_cluster(request: Request, body: NewCluster) -> dict[str, Any]:
    check_cluster_name(body.name)
    if body.name == MANAGEMENT:
        raise errors.bad_request(CLUSTER_NAME_INVALID.format(body.name, "the management cluster always exists"))
    _world(request).add_cluster(body.name)
    return {"name": body.name, "path": cluster_path(body.name)}


async def _api_configure(request: Request, name: str, body: SimulatorSettings) -> dict[str, Any]:
    return _configure(_world(request), name, body)


async def _api_call(request: Request, name: str, body: SimulatorCall) -> dict[str, Any]:
    return _call(_world(request), name, body)


@functools.cache
def _admin_router() -> APIRouter:
    # Built once: it holds nothing of any world, and every app copies its routes. Each route keeps the
    # name its endpoint had when it was a closure, so the OpenAPI document's operationIds stay the same.
    router = APIRouter(route_class=JSONBodyRoute)
    router.get("/clock", response_model=Clock, summary="the virtual clock", name="get_clock")(_api_get_clock)
    router.post("/clock/advance", response_model=Advanced, summary="move the clock forward and settle",
                name="advance")(_api_advance)
    router.get("/audit", response_model=AuditList, summary="the audit trail of every write",
               name="audit")(_api_audit)
    router.get("/watches", response_model=WatchList, summary="the watch streams served",
               name="get_watches")(_api_get_watches)
    router.get("/faults", response_model=FaultList, summary="fault rules and the faults they injected",
               name="get_faults")(_api_get_faults)
    router.post("/faults", status_code=201, summary="add a fault rule", name="add_fault")(_api_add_fault)
    router.delete("/faults", response_model=FaultList, summary="clear fault rules and records",
                  name="clear_faults")(_api_clear_faults)
    router.post("/compact", response_model=Compacted, summary="compact a cluster's storage history",
                name="compact")(_api_compact)
    router.post("/controllers/restart", response_model=Restarted, summary="restart reference controllers",
                name="restart")(_api_restart)
    router.post("/clusters", response_model=ClusterCreated, summary="create a workload cluster",
                name="add_cluster")(_api_add_cluster)
    router.post("/simulators/{name}", response_model=SimulatorConfigured, summary="switch or tune a simulator",
                name="configure")(_api_configure)
    router.post("/simulators/{name}/call", response_model=CallResult, summary="call a simulator's method",
                name="call")(_api_call)
    return router


def create_admin_app(
    world: ServedWorld,
    watches: WatchHub | None = None,
    *,
    token: str | None = None,
    stopping: threading.Event | None = None,
) -> FastAPI:
    """The admin API as a FastAPI app, to mount at :data:`ADMIN_PREFIX`. ``token``: every request
    but the docs must carry it; ``stopping``: set when the server shuts down (an advance then
    stops between slices). ``app.state.admin`` holds what the endpoints serve (:class:`AdminState`)."""
    app = typed_app(
        "lifecycle-tck admin API",
        "The world's clock, audit trail, simulators, clusters and faults. Errors are Kubernetes Status objects.",
        prefix=ADMIN_PREFIX, token=token,
    )
    app.state.admin = AdminState(world, watches, stopping if stopping is not None else threading.Event())
    app.include_router(_admin_router())
    return app
