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
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response

from controllers.runtime.api import CATALOG, DISCOVERY, HOOKS_GROUP, HOOKS_VERSION
from harness.apiserver import decoding
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
# As the apiserver's: a hook request is a small object, never megabytes.
MAX_BODY_BYTES = 3 * 1024 * 1024
# The query parameter a Runtime SDK call carries its deadline in (``?timeout=10s``).
TIMEOUT_PARAMETER = "timeout"
_HOOKS_BY_PATH = {hook.lower(): hook for hook in CATALOG}


def create_app(responder: HookResponder) -> FastAPI:
    """The extension's app, answering from ``responder``."""
    app = FastAPI(title="lifecycle-tck reference Runtime Extension", docs_url=None, redoc_url=None,
                  openapi_url=None)

    async def _body(request: Request) -> dict[str, Any] | None:
        raw = await request.body()
        if len(raw) > MAX_BODY_BYTES:
            return None
        try:
            body = decoding.loads_json(raw)
        except decoding.DecodeError:
            return None
        return body if isinstance(body, dict) else None

    @app.post(f"{HOOKS_PREFIX}/{DISCOVERY.lower()}")
    async def discovery(request: Request) -> JSONResponse:
        response = responder.discovery_response(request.query_params.get(TIMEOUT_PARAMETER, ""))
        if responder.discovery_behaviour == HANG:
            await asyncio.sleep(responder.discovery_hang_seconds)
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
            await asyncio.sleep(responder.hang_seconds)
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
