"""The reference Runtime Extension's HTTP API (FastAPI), served over HTTPS by
:class:`~harness.world.extension.server.ExtensionServer`:

- ``POST /hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery``: the DiscoveryResponse.
- ``POST /hooks.runtime.cluster.x-k8s.io/v1alpha1/<lowercase hook>/<handler>`` for the six lifecycle
  hooks: the scripted, ConfigMap or default answer (``harness.world.extension.responses``); a request
  that is not a JSON object is answered 400.
- Admin, under ``/admin/`` (a typed FastAPI app: OpenAPI at ``/admin/openapi.json``, docs at
  ``/admin/docs``; errors are Kubernetes ``Status`` bodies; only ``application/json`` bodies (415) and
  no foreign ``Origin`` (403), as the served world's admin API): ``GET calls[?hook=<Hook>]``
  (``{"items": [...]}``, oldest first), ``POST answers`` with ``{"hook", "cluster"?, "response"? |
  "behaviour"?}`` (neither: forget), ``POST discovery`` with a DiscoveryResponse body (``{}``: back to
  the default; ``"behaviour": "hang"`` makes discovery hang), ``POST reset``. ``calls?hook=Discovery``
  lists the discovery calls.

A hang (scripted) lasts ``hang_seconds`` (``discovery_hang_seconds``) of wall time, unless the app is given
a :class:`VirtualHangs`: then a call that asks for a deadline (``?timeout=``) is held on the world's
virtual clock instead. The world's clock moves past the deadline and the call is cancelled (its connection
dropped, with no answer), so the caller, which measures its deadline on that clock too
(controllers/runtime/transport.py), fails it with ``context deadline exceeded`` at once; nobody waits.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any, Protocol

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from harness.apiserver import parsing
from harness.apiserver.http.admin import JSONBodyRoute, typed_app
from harness.kube import errors
from harness.kube.duration import duration_seconds
from harness.kube.names.runtime_sdk import CATALOG, DISCOVERY, HOOKS_GROUP, HOOKS_VERSION
from harness.world.extension.responses import (
    ANY_CLUSTER,
    ERROR,
    GARBAGE,
    HANG,
    NO_STATUS,
    REDIRECT,
    HookResponder,
)

HOOKS_PREFIX = f"/{HOOKS_GROUP}/{HOOKS_VERSION}"
ADMIN_PREFIX = "/admin"
REDIRECT_TARGET = "/elsewhere"
GARBAGE_BODY = "this is not JSON {"
ERROR_BODY = "internal error: the extension failed"
BAD_REQUEST = "the request body is not a JSON object"
# As the apiserver's: a hook request is a small object, never megabytes.
MAX_BODY_BYTES = 3 * 1024 * 1024
# The query parameter a Runtime SDK call carries its deadline in (``?timeout=10s``).
TIMEOUT_PARAMETER = "timeout"
_HOOKS_BY_PATH = {hook.lower(): hook for hook in CATALOG}
# The status of the answer a cancelled call is given after its connection is gone (never sent; nginx's
# "client closed request", for whoever reads the server's own records).
CANCELLED_STATUS = 499


class VirtualClockLike(Protocol):
    """What :class:`VirtualHangs` needs of the world's clock (``harness.clock.VirtualClock``)."""

    def now(self) -> float: ...

    def advance_to(self, instant: float) -> None: ...


class VirtualHangs:
    """Hangs measured on ``clock``, the virtual clock of the world whose controllers call this extension.

    Only for the harness's own extension in a world that waits for its calls (lockstep: while a
    controller's call is out, the world's thread is blocked in it, so moving the clock from the
    extension's thread cannot race anything). ``cancel`` is given the caller's address and drops that
    connection (the server sets it once it runs)."""

    def __init__(self, clock: VirtualClockLike) -> None:
        self.clock = clock
        self.cancel: Callable[[tuple[str, int] | None], bool] | None = None
        self.cancelled = 0

    def hold(self, timeout: str, peer: tuple[str, int] | None) -> bool:
        """Pass the call's deadline (``timeout``, a Go duration) on the clock and cancel the call; False
        when the call has no deadline or cannot be cancelled (then it hangs in wall time)."""
        try:
            seconds = duration_seconds(timeout) if timeout else 0.0
        except ValueError:
            return False
        if seconds <= 0 or self.cancel is None:
            return False
        self.clock.advance_to(self.clock.now() + seconds)
        if not self.cancel(peer):
            return False
        self.cancelled += 1
        return True


async def _hang(seconds: float, hangs: VirtualHangs | None, request: Request) -> bool:
    """Hang: on the virtual clock when ``hangs`` can (True: the call was cancelled, answer nothing),
    else ``seconds`` of wall time (False)."""
    if hangs is not None and hangs.hold(request.query_params.get(TIMEOUT_PARAMETER, ""), request.client and (
            request.client.host, request.client.port)):
        await asyncio.sleep(0)  # let the event loop see the connection gone before the handler returns
        return True
    await asyncio.sleep(seconds)
    return False


# The endpoints are module-level functions that find the responder (and the hangs) on the app
# (``app.state``): FastAPI caches what it learns of each endpoint function in process-wide caches keyed by
# the function, so an endpoint that closed over them would keep them, and the world whose clock the hangs
# move, alive long after the extension stopped.


async def _body(request: Request) -> dict[str, Any] | None:
    raw = await request.body()
    if len(raw) > MAX_BODY_BYTES:
        return None
    try:
        body = parsing.loads_json(raw)
    except parsing.DecodeError:
        return None
    return body if isinstance(body, dict) else None


def _responder(request: Request) -> HookResponder:
    responder: HookResponder = request.app.state.responder
    return responder


async def _discovery(request: Request) -> Response:
    responder = _responder(request)
    response = responder.discovery_response(request.query_params.get(TIMEOUT_PARAMETER, ""))
    if responder.discovery_behaviour == HANG and await _hang(
            responder.discovery_hang_seconds, request.app.state.hangs, request):
        return Response(status_code=CANCELLED_STATUS)
    return JSONResponse(response)


async def _hook_call(hook: str, handler: str, request: Request) -> Response:
    responder = _responder(request)
    name = _HOOKS_BY_PATH.get(hook)
    if name is None:
        return PlainTextResponse(f"unknown hook {hook}", status_code=404)
    body = await _body(request)
    if body is None:
        return PlainTextResponse(BAD_REQUEST, status_code=400)
    answer = responder.answer(name, handler, body, request.query_params.get(TIMEOUT_PARAMETER, ""))
    if answer.behaviour == HANG:
        if await _hang(responder.hang_seconds, request.app.state.hangs, request):
            return Response(status_code=CANCELLED_STATUS)
        return JSONResponse({"status": "Success"})
    if answer.behaviour == REDIRECT:
        return RedirectResponse(REDIRECT_TARGET, status_code=307)
    if answer.behaviour == GARBAGE:
        return PlainTextResponse(GARBAGE_BODY)
    if answer.behaviour == ERROR:
        return PlainTextResponse(ERROR_BODY, status_code=500)
    if answer.behaviour == NO_STATUS:
        return JSONResponse({})
    return JSONResponse(answer.response)


def create_app(responder: HookResponder, hangs: VirtualHangs | None = None) -> FastAPI:
    """The extension's app, answering from ``responder``; hangs on ``hangs``'s clock when given
    (``app.state.responder``, ``app.state.hangs``; the admin app mounted at ``/admin`` has the responder too)."""
    app = FastAPI(title="lifecycle-tck reference Runtime Extension", docs_url=None, redoc_url=None,
                  openapi_url=None)
    app.state.responder = responder
    app.state.hangs = hangs
    app.post(f"{HOOKS_PREFIX}/{DISCOVERY.lower()}", name="discovery")(_discovery)
    app.post(HOOKS_PREFIX + "/{hook}/{handler}", name="hook_call")(_hook_call)
    app.mount(ADMIN_PREFIX, _admin_app(responder))
    return app


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


class Answer(_Body):
    """How to answer a hook: a response, a misbehaviour, or (neither) what was scripted is forgotten."""

    hook: str = Field(description="one of the six lifecycle hooks, e.g. BeforeClusterUpgrade")
    cluster: str | None = Field(None, description="<namespace>/<name> of the Cluster; default: every Cluster")
    response: dict[str, Any] | None = None
    behaviour: str | None = Field(None, description="hang, redirect, garbage, error or no-status")


class Discovery(BaseModel):
    """A DiscoveryResponse to answer with (``{}``: the default), or ``behaviour: hang``."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)
    behaviour: str | None = None


class Done(BaseModel):
    """The change was made."""

    ok: bool = True


class Calls(BaseModel):
    """The calls received, oldest first."""

    items: list[dict[str, Any]]


async def _calls(request: Request, hook: str | None = None) -> dict[str, Any]:
    return {"items": [c.to_dict() for c in _responder(request).calls_of(hook)]}


async def _answers(request: Request, body: Answer) -> dict[str, Any]:
    try:
        _responder(request).script(body.hook, response=body.response, behaviour=body.behaviour,
                                   cluster=body.cluster or ANY_CLUSTER)
    except ValueError as err:
        raise errors.bad_request(str(err)) from None
    return {"ok": True}


async def _set_discovery(request: Request, body: Discovery) -> dict[str, Any]:
    responder = _responder(request)
    try:
        responder.set_discovery_behaviour(body.behaviour)
    except ValueError as err:
        raise errors.bad_request(str(err)) from None
    response = body.model_dump(exclude={"behaviour"})
    responder.set_discovery(response or None)
    return {"ok": True}


async def _reset(request: Request) -> dict[str, Any]:
    _responder(request).reset()
    return {"ok": True}


@functools.cache
def _admin_router() -> APIRouter:
    # Built once (it holds nothing of any responder); the routes keep the names their endpoints had as
    # closures, so the OpenAPI document's operationIds stay the same.
    router = APIRouter(route_class=JSONBodyRoute)
    router.get("/calls", response_model=Calls, summary="the calls received", name="calls")(_calls)
    router.post("/answers", response_model=Done, summary="script a hook's answer", name="answers")(_answers)
    router.post("/discovery", response_model=Done, summary="set the discovery answer",
                name="set_discovery")(_set_discovery)
    router.post("/reset", response_model=Done, summary="forget answers, discovery and calls", name="reset")(_reset)
    return router


def _admin_app(responder: HookResponder) -> FastAPI:
    app = typed_app("lifecycle-tck reference Runtime Extension admin API",
                    "Script the extension's answers and read the calls it received. Errors are Kubernetes Status "
                    "objects.", prefix=ADMIN_PREFIX)
    app.state.responder = responder
    app.include_router(_admin_router())
    return app
