"""The HTTP facade: a Starlette app serving every cluster of a world as kube-apiserver 1.32 does.

The management cluster is served at the root, each workload cluster under
``/clusters/<namespace>/<name>`` (looked up per request, so clusters come and go). Each request
is handled on the event loop's thread, as every other piece of the world runs; a write settles
the world before its response leaves, so clients observe what controllers made of it (PDB status,
garbage collection). Every error leaves as a Kubernetes ``Status``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import threading
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from harness.apiserver import faults
from harness.apiserver.clusters import cluster_path
from harness.apiserver.http import admin, auth, discovery, openapi, requestinfo
from harness.apiserver.http.guard import HostCheck
from harness.apiserver.http.leanrequest import LeanRequest
from harness.apiserver.http.negotiation import parse_accept
from harness.apiserver.http.protocol import ServedWorld
from harness.apiserver.http.responses import (
    internal_error,
    json_response,
    method_not_allowed,
    path_not_found,
    status_response,
)
from harness.apiserver.http.routes import Call, serve_api
from harness.apiserver.http.version import HEALTH_PATHS, HEALTHY, VERSION_INFO
from harness.apiserver.http.watchstream import WatchHub
from harness.apiserver.server import APIServer
from harness.kube import errors
from harness.kube.names.meta import JSON_CONTENT_TYPE as JSON

log = logging.getLogger("lifecycle_tck.http")

METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
MUTATING = ("POST", "PUT", "PATCH", "DELETE")
OPENAPI_V3 = "/openapi/v3"
OPENAPI_V2 = "/openapi/v2"
_ROOT_EXTRA = (*HEALTH_PATHS, "/version", OPENAPI_V3)


def _settle(world: ServedWorld) -> None:
    try:
        world.settle()
    except Exception:  # a controller bug must not turn an accepted write into an error
        log.exception("the world did not settle after a write")


class Facade:
    """Request handling for one world (kept apart from Starlette so each step reads plainly)."""

    def __init__(self, world: ServedWorld, token: str | None) -> None:
        self.world = world
        self.token = token
        self.watches = WatchHub()

    async def handle(self, request: Request) -> Response:
        """The response to any request (never an exception)."""
        try:
            return await self._handle(request)
        except errors.StatusError as err:
            return status_response(err)
        except Exception as exc:  # noqa: BLE001 - any bug becomes a 500 Status, never a traceback
            return internal_error(exc)

    async def _handle(self, request: Request) -> Response:
        split = requestinfo.split_cluster(_path(request))
        if split is None:
            raise path_not_found()
        cluster, path = split
        path = path.rstrip("/") or "/"
        user = auth.ADMIN if auth.is_open(path) else auth.identify(request.headers, self.token)
        if admin.is_admin(path):  # the management cluster's admin API is mounted; nothing else has one
            raise path_not_found()
        server = self.world.clusters.get(cluster)
        if server is None:
            raise path_not_found()
        if path in HEALTH_PATHS:
            return PlainTextResponse(HEALTHY)
        if path == "/version":
            return json_response(VERSION_INFO)
        if path == OPENAPI_V3 or path.startswith(OPENAPI_V3 + "/"):
            document = openapi.resolve(server.registry, cluster_path(cluster), path[len(OPENAPI_V3):])
            return Response(document, media_type=JSON)
        if path == OPENAPI_V2:
            return _swagger(request, server)
        if path == "/":
            return json_response(discovery.root_paths(server.registry, _ROOT_EXTRA))
        info = requestinfo.parse(path)
        if info is None:
            raise path_not_found()
        if request.method not in ("GET", *MUTATING):
            raise method_not_allowed()
        call = Call(request, self.world, server, user, self.watches)
        try:
            return await serve_api(call, info)
        finally:
            if request.method in MUTATING:
                _settle(self.world)


# Characters of a request path that Starlette's ``request.url`` escapes or that ``urlsplit`` drops.
_URL_ALTERED = re.compile(r"[?#\\\t\r\n]")


def _path(request: Request) -> str:
    """``request.url.path``, without building and re-parsing the URL for the plain paths clients send
    (some 15 µs a request): the ASGI path is that already unless it holds a character the URL
    escapes or drops, or starts with ``//``."""
    path: str = request.scope["path"]
    if path.startswith("/") and not path.startswith("//") and not _URL_ALTERED.search(path):
        return path
    return request.url.path


def _swagger(request: Request, server: APIServer) -> Response:
    """``/openapi/v2`` as JSON; 406 for a client that accepts only the protobuf encoding."""
    accept = request.headers.get("accept")
    if accept and not any(media.accepts_json() for media in parse_accept(accept)):
        raise errors.StatusError(errors.status(406, "NotAcceptable", f"only the following media types are accepted: "
                                                                      f"{JSON}"))
    return Response(openapi.swagger(server.registry), media_type=JSON)


async def _error_handler(request: Request, exc: Exception) -> Response:
    """Errors raised outside the facade (routing, middleware) as ``Status`` objects too."""
    if isinstance(exc, HTTPException):
        if exc.status_code == 405:
            return status_response(method_not_allowed())
        if exc.status_code == 404:
            return status_response(path_not_found())
        return status_response(errors.StatusError(errors.status(exc.status_code, "", str(exc.detail))))
    return internal_error(exc)


async def _tick(world: ServedWorld, seconds: float) -> None:
    # A world whose clock follows wall time has work falling due between requests.
    while True:
        await asyncio.sleep(seconds)
        _settle(world)


class HostGuard:
    """ASGI middleware: requests whose ``Host`` header names another server are refused (400
    ``Status``) before anything else runs, so a web page cannot reach the server through DNS
    rebinding (harness/apiserver/http/guard.py)."""

    def __init__(self, app: ASGIApp, hosts: HostCheck) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refusal = host_refusal(self.hosts, scope)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)


def host_refusal(hosts: HostCheck, scope: Scope) -> Response | None:
    """The 400 ``Status`` for an HTTP request whose ``Host`` header names another server, else None."""
    headers = {key.decode("latin-1"): value.decode("latin-1") for key, value in scope["headers"]}
    try:
        hosts.check(headers)
    except errors.StatusError as err:
        return status_response(err)
    return None


WEBSOCKET_HTTP_RESPONSE = "websocket.http.response"


class WebSocketAnsweredOverHttp:
    """ASGI middleware: a WebSocket handshake (``exec``, ``attach``, ``portforward`` as the
    ``kubernetes`` Python client and lightkube open them, or anything else) is served as the HTTP
    request it is, and its answer sent as the handshake's HTTP response (the ASGI
    ``websocket.http.response`` extension), so the client reads a ``Status`` with upstream's code
    and message instead of the bare 403 an unrouted WebSocket gets. Nothing here ever accepts a
    WebSocket: no container runtime is behind the server (harness/apiserver/http/streaming.py)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        if WEBSOCKET_HTTP_RESPONSE not in (scope.get("extensions") or {}):
            await send({"type": "websocket.close", "code": 1008})  # the server cannot say why
            return
        request_scope = {**scope, "type": "http", "method": "GET", "http_version": scope.get("http_version", "1.1"),
                         "scheme": "https" if scope.get("scheme") == "wss" else "http"}

        async def request_body() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def handshake_answer(message: dict[str, Any]) -> None:
            kind = message["type"]
            if kind in ("http.response.start", "http.response.body"):
                await send({**message, "type": kind.replace("http.", "websocket.http.", 1)})

        await self.app(request_scope, request_body, handshake_answer)


class FacadeApp(Starlette):
    """The facade's Starlette app, with a lean path for the requests that are neither the admin API's
    nor the lifespan's nor a WebSocket handshake: they go straight to :meth:`Facade.handle`.

    Starlette would take each of them through its error middleware, the user middleware, its
    exception middleware, the router's matching and the endpoint wrapper, some 25 µs of CPU a
    request (issue 16) that change nothing for them: the one route they match is the catch-all,
    :meth:`Facade.handle` answers every error itself, and the ``Host`` check is applied here as
    :class:`HostGuard` would. A plain :class:`Response` (every answer but a stream's) is sent as the
    two ASGI messages its ``__call__`` would send, without the call. An exception while the response
    is sent is answered as Starlette's error middleware answers it (a 500 ``Status`` if nothing was
    sent yet) and raised again."""

    facade: Facade
    hosts: HostCheck | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (scope["type"] != "http" or scope["method"] not in _LEAN_METHODS or scope.get("root_path")
                or scope["path"].startswith(admin.ADMIN_PREFIX)):
            await super().__call__(scope, receive, send)
            return
        scope["app"] = self
        started = False

        async def sending(message: dict[str, Any]) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            refusal = host_refusal(self.hosts, scope) if self.hosts is not None else None
            if refusal is not None:
                await refusal(scope, receive, sending)
                return
            response = await self.facade.handle(LeanRequest(scope, receive, sending))
            if type(response) is Response and response.background is None:
                # The two messages Response.__call__ sends for an HTTP request, sent here directly.
                started = True
                await send({"type": "http.response.start", "status": response.status_code,
                            "headers": response.raw_headers})
                await send({"type": "http.response.body", "body": response.body})
            else:
                await response(scope, receive, sending)
        except Exception as exc:
            if not started:
                await internal_error(exc)(scope, receive, send)
            raise


_LEAN_METHODS = frozenset(METHODS)


def create_app(
    world: ServedWorld,
    *,
    token: str | None = None,
    tick_seconds: float | None = None,
    hosts: HostCheck | None = None,
) -> Starlette:
    """A Starlette app serving ``world``'s clusters, the admin API (a FastAPI app mounted at
    ``/harness/v1``), discovery, OpenAPI and health.

    ``token``: require ``Authorization: Bearer <token>`` (health and version stay open).
    ``tick_seconds``: settle the world this often between requests (for worlds whose clock
    follows wall time). ``hosts``: the host names the ``Host`` header may give (None: any).
    ``app.state.watches`` holds the open watch streams (closed at shutdown);
    ``app.state.faults`` the world's fault injector (harness/apiserver/faults.py);
    ``app.state.stopping`` is set when the server starts shutting down (a clock advance stops)."""
    facade = Facade(world, token)
    stopping = threading.Event()
    admin_app = admin.create_admin_app(world, facade.watches, token=token, stopping=stopping)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        ticker = asyncio.create_task(_tick(world, tick_seconds)) if tick_seconds else None
        try:
            yield
        finally:
            facade.watches.close_all()
            if ticker is not None:
                ticker.cancel()

    app = FacadeApp(
        routes=[Mount(admin.ADMIN_PREFIX, app=admin_app), Route("/{path:path}", facade.handle, methods=METHODS)],
        exception_handlers={HTTPException: _error_handler, Exception: _error_handler},
        lifespan=lifespan,
    )
    app.facade = facade
    app.hosts = hosts
    if hosts is not None:
        app.add_middleware(HostGuard, hosts=hosts)
    # Outermost, so the Host check and everything else see a WebSocket handshake as a GET.
    app.add_middleware(WebSocketAnsweredOverHttp)
    app.state.world = world
    app.state.stopping = stopping
    app.state.watches = facade.watches
    # Shared with the world's in-process clients; rules come through POST /harness/v1/faults.
    app.state.faults = faults.injector_of(world.clusters)
    return app
