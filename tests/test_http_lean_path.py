"""The facade's lean path (FacadeApp) answers every request exactly as Starlette's full middleware
and routing stack answers it, and reads the request path as ``request.url.path`` reads it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request

from harness.apiserver.http import create_app
from harness.apiserver.http.app import FacadeApp, _path
from harness.apiserver.http.guard import HostCheck
from harness.world.world import World

Message = dict[str, Any]


def _scope(method: str, path: str, *, headers: list[tuple[bytes, bytes]] | None = None,
           query: bytes = b"") -> dict[str, Any]:
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
            "path": path, "raw_path": path.encode("utf-8", "surrogateescape"), "query_string": query,
            "root_path": "", "headers": headers if headers is not None else [(b"host", b"127.0.0.1:8080")],
            "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8080), "state": {}}


async def _call(app: Any, scope: dict[str, Any], body: bytes = b"") -> list[Message]:
    sent: list[Message] = []
    delivered = False

    async def receive() -> Message:
        nonlocal delivered
        if delivered:
            return {"type": "http.disconnect"}
        delivered = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent


def _both(app: FacadeApp, scope: dict[str, Any], body: bytes = b"") -> tuple[list[Message], list[Message]]:
    """(the lean path's messages, Starlette's full stack's messages) for the same request."""
    lean = asyncio.run(_call(app, dict(scope), body))
    full = asyncio.run(_call(lambda *args: Starlette.__call__(app, *args), dict(scope), body))
    return lean, full


POD = b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},"spec":{"containers":[]}}'
REQUESTS = [
    ("GET", "/api", b"", b""),
    ("GET", "/api/v1/namespaces/default/pods", b"", b""),
    ("GET", "/api/v1/namespaces/default/pods/missing", b"", b""),
    ("GET", "/version", b"", b""),
    ("GET", "/healthz", b"", b""),
    ("HEAD", "/healthz", b"", b""),
    ("OPTIONS", "/api/v1", b"", b""),
    ("GET", "/no/such/path", b"", b""),
    ("GET", "/clusters/x", b"", b""),
    ("PUT", "/api/v1/namespaces/default/pods", POD, b""),
    ("POST", "/api/v1/namespaces/default/pods", b"{", b""),
    ("POST", "/api/v1/namespaces/default/pods", POD, b"dryRun=All&fieldValidation=Bogus"),
    ("DELETE", "/api/v1/namespaces/default/pods/missing", b"", b""),
    ("GET", "/api/v1/namespaces/default/pods", b"", b"limit=x"),
]


@pytest.mark.parametrize(("method", "path", "body", "query"), REQUESTS)
def test_the_lean_path_answers_as_starlettes_stack(method: str, path: str, body: bytes, query: bytes) -> None:
    app = create_app(World(simulators=[]))
    assert isinstance(app, FacadeApp)
    lean, full = _both(app, _scope(method, path, query=query), body)
    assert lean == full
    assert lean[0]["type"] == "http.response.start"


@pytest.mark.parametrize("host", [b"127.0.0.1:8080", b"localhost", b"evil.example:80"])
def test_the_lean_path_checks_the_host_as_the_host_guard_does(host: bytes) -> None:
    app = create_app(World(simulators=[]), hosts=HostCheck("127.0.0.1"))
    lean, full = _both(app, _scope("GET", "/api", headers=[(b"host", host)]))
    assert lean == full
    assert lean[0]["status"] == (400 if host.startswith(b"evil") else 200)


def test_a_failure_while_answering_is_a_500_status_and_raised_as_starlette_does() -> None:
    class Broken(Exception):
        pass

    class BrokenResponse:
        async def __call__(self, *args: Any) -> None:
            raise Broken("the response could not be sent")

    app = create_app(World(simulators=[]))

    async def broken(request: Request) -> BrokenResponse:
        return BrokenResponse()

    app.facade._handle = broken  # type: ignore[method-assign,assignment]  # what both paths call
    outcomes = []
    for caller in (app, lambda *args: Starlette.__call__(app, *args)):
        sent: list[Message] = []

        async def call(caller: Any = caller, sent: list[Message] = sent) -> None:
            async def receive() -> Message:
                return {"type": "http.request", "body": b"", "more_body": False}

            async def send(message: Message) -> None:
                sent.append(message)

            await caller(_scope("GET", "/api"), receive, send)

        with pytest.raises(Broken):
            asyncio.run(call())
        outcomes.append(sent)
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0]["status"] == 500


@pytest.mark.parametrize("path", [
    "/api/v1/namespaces/default/pods", "/", "/a?b", "/a#b", "/a\\b", "/a\tb", "/a\nb", "/a\rb", "//x/y",
    "/%3F", "/clusters/ns/name/api", "/a b", "/é", "*",
])
def test_the_path_read_is_request_url_path(path: str) -> None:
    request = Request(_scope("GET", path))
    assert _path(request) == Request(_scope("GET", path)).url.path
