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
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from controllers.runtime.api import CATALOG, DISCOVERY, HOOKS_GROUP, HOOKS_VERSION
from harness.apiserver import parsing
from harness.apiserver.http.admin import JSONBodyRoute, typed_app
from harness.kube import errors
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


def create_app(responder: HookResponder) -> FastAPI:
    """The extension's app, answering from ``responder``."""
    app = FastAPI(title="lifecycle-tck reference Runtime Extension", docs_url=None, redoc_url=None,
                  openapi_url=None)

    async def _body(request: Request) -> dict[str, Any] | None:
        raw = await request.body()
        if len(raw) > MAX_BODY_BYTES:
            return None
        try:
            body = parsing.loads_json(raw)
        except parsing.DecodeError:
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


def _admin_app(responder: HookResponder) -> FastAPI:
    app = typed_app("lifecycle-tck reference Runtime Extension admin API",
                    "Script the extension's answers and read the calls it received. Errors are Kubernetes Status "
                    "objects.", prefix=ADMIN_PREFIX)
    router = APIRouter(route_class=JSONBodyRoute)

    @router.get("/calls", response_model=Calls, summary="the calls received")
    async def calls(hook: str | None = None) -> dict[str, Any]:
        return {"items": [c.to_dict() for c in responder.calls_of(hook)]}

    @router.post("/answers", response_model=Done, summary="script a hook's answer")
    async def answers(body: Answer) -> dict[str, Any]:
        try:
            responder.script(body.hook, response=body.response, behaviour=body.behaviour,
                             cluster=body.cluster or ANY_CLUSTER)
        except ValueError as err:
            raise errors.bad_request(str(err)) from None
        return {"ok": True}

    @router.post("/discovery", response_model=Done, summary="set the discovery answer")
    async def set_discovery(body: Discovery) -> dict[str, Any]:
        try:
            responder.set_discovery_behaviour(body.behaviour)
        except ValueError as err:
            raise errors.bad_request(str(err)) from None
        response = body.model_dump(exclude={"behaviour"})
        responder.set_discovery(response or None)
        return {"ok": True}

    @router.post("/reset", response_model=Done, summary="forget answers, discovery and calls")
    async def reset() -> dict[str, Any]:
        responder.reset()
        return {"ok": True}

    app.include_router(router)
    return app
