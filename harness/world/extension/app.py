"""The reference Runtime Extension's HTTP API (FastAPI), served over HTTPS by
:class:`~harness.world.extension.server.ExtensionServer`:

- ``POST /hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery``: the DiscoveryResponse.
- ``POST /hooks.runtime.cluster.x-k8s.io/v1alpha1/<lowercase hook>/<handler>`` for the six lifecycle
  hooks: the scripted, ConfigMap or default answer (``harness.world.extension.responses``); a request
  that is not a JSON object is answered 400.
- Admin, under ``/admin/``: ``GET calls[?hook=<Hook>]`` (``{"items": [...]}``, oldest first),
  ``POST answers`` with ``{"hook", "cluster"?, "response"? | "behaviour"?}`` (neither: forget),
  ``POST discovery`` with a DiscoveryResponse body (``{}``: back to the default; ``"behaviour": "hang"``
  makes discovery hang), ``POST reset``. ``calls?hook=Discovery`` lists the discovery calls.

A hang (scripted) lasts ``hang_seconds`` (``discovery_hang_seconds``) of wall time, unless the app is given
a :class:`VirtualHangs`: then a call that asks for a deadline (``?timeout=``) is held on the world's
virtual clock instead. The world's clock moves past the deadline and the call is cancelled (its connection
dropped, with no answer), so the caller, which measures its deadline on that clock too
(controllers/runtime/transport.py), fails it with ``context deadline exceeded`` at once; nobody waits.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any, Protocol

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response

from controllers.runtime.api import CATALOG, DISCOVERY, HOOKS_GROUP, HOOKS_VERSION
from harness.clock import parse_duration
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
REDIRECT_TARGET = "/elsewhere"
GARBAGE_BODY = "this is not JSON {"
ERROR_BODY = "internal error: the extension failed"
BAD_REQUEST = "the request body is not a JSON object"
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
            seconds = parse_duration(timeout) if timeout else 0.0
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


def create_app(responder: HookResponder, hangs: VirtualHangs | None = None) -> FastAPI:
    """The extension's app, answering from ``responder``; hangs on ``hangs``'s clock when given."""
    app = FastAPI(title="lifecycle-tck reference Runtime Extension", docs_url=None, redoc_url=None,
                  openapi_url=None)

    async def _body(request: Request) -> dict[str, Any] | None:
        try:
            body = json.loads(await request.body())
        except ValueError:
            return None
        return body if isinstance(body, dict) else None

    @app.post(f"{HOOKS_PREFIX}/{DISCOVERY.lower()}")
    async def discovery(request: Request) -> JSONResponse:
        response = responder.discovery_response(request.query_params.get(TIMEOUT_PARAMETER, ""))
        if responder.discovery_behaviour == HANG and await _hang(responder.discovery_hang_seconds, hangs, request):
            return Response(status_code=CANCELLED_STATUS)
        return JSONResponse(response)

    @app.post(HOOKS_PREFIX + "/{hook}/{handler}")
    async def hook_call(hook: str, handler: str, request: Request) -> Response:
        name = _HOOKS_BY_PATH.get(hook)
        if name is None:
            return PlainTextResponse(f"unknown hook {hook}", status_code=404)
        body = await _body(request)
        if body is None:
            return PlainTextResponse(BAD_REQUEST, status_code=400)
        answer = responder.answer(name, handler, body, request.query_params.get(TIMEOUT_PARAMETER, ""))
        if answer.behaviour == HANG:
            if await _hang(responder.hang_seconds, hangs, request):
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

    @app.get("/admin/calls")
    async def calls(hook: str | None = None) -> JSONResponse:
        return JSONResponse({"items": [c.to_dict() for c in responder.calls_of(hook)]})

    @app.post("/admin/answers")
    async def answers(request: Request) -> Response:
        body = await _body(request)
        if body is None:
            return PlainTextResponse(BAD_REQUEST, status_code=400)
        try:
            responder.script(str(body.get("hook", "")), response=body.get("response"),
                             behaviour=body.get("behaviour"), cluster=str(body.get("cluster") or ANY_CLUSTER))
        except ValueError as err:
            return PlainTextResponse(str(err), status_code=400)
        return JSONResponse({"ok": True})

    @app.post("/admin/discovery")
    async def set_discovery(request: Request) -> Response:
        body = await _body(request)
        if body is None:
            return PlainTextResponse(BAD_REQUEST, status_code=400)
        behaviour = body.pop("behaviour", None)
        try:
            responder.set_discovery_behaviour(behaviour)
        except ValueError as err:
            return PlainTextResponse(str(err), status_code=400)
        responder.set_discovery(body or None)
        return JSONResponse({"ok": True})

    @app.post("/admin/reset")
    async def reset() -> JSONResponse:
        responder.reset()
        return JSONResponse({"ok": True})

    return app
