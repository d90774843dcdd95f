"""A request body read from its ASGI messages as Starlette's Request.stream() reads it, bounded at
the apiserver's 3 MiB (harness/apiserver/http/bodies.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from starlette.requests import ClientDisconnect, Request

from harness.apiserver.http import bodies
from harness.kube import errors


def _read(messages: list[dict[str, Any]], headers: list[tuple[bytes, bytes]] | None = None) -> bytes:
    queue = list(messages)

    async def receive() -> dict[str, Any]:
        return queue.pop(0)

    scope = {"type": "http", "method": "POST", "path": "/", "query_string": b"", "headers": headers or []}
    return asyncio.run(bodies.read_body(Request(scope, receive)))


def _stream(messages: list[dict[str, Any]]) -> bytes:
    queue = list(messages)

    async def receive() -> dict[str, Any]:
        return queue.pop(0)

    async def read() -> bytes:
        return b"".join([chunk async for chunk in Request({"type": "http", "headers": []}, receive).stream()])

    return asyncio.run(read())


CHUNKED = [
    [{"type": "http.request", "body": b"{}", "more_body": False}],
    [{"type": "http.request", "body": b"", "more_body": False}],
    [{"type": "http.request"}],
    [{"type": "http.request", "body": b'{"a"', "more_body": True},
     {"type": "http.request", "body": b"", "more_body": True}, {"type": "http.request", "body": b":1}"}],
]


@pytest.mark.parametrize("messages", CHUNKED)
def test_the_body_is_what_starlettes_stream_reads(messages: list[dict[str, Any]]) -> None:
    assert _read(messages) == _stream(messages)


def test_a_disconnect_is_starlettes_client_disconnect() -> None:
    with pytest.raises(ClientDisconnect):
        _read([{"type": "http.request", "body": b"{", "more_body": True}, {"type": "http.disconnect"}])


def test_past_the_limit_the_upload_is_read_and_answered_413() -> None:
    half = b"x" * (bodies.MAX_BODY_BYTES // 2 + 1)
    with pytest.raises(errors.StatusError) as raised:
        _read([{"type": "http.request", "body": half, "more_body": True}, {"type": "http.request", "body": half}])
    assert raised.value.code == 413


def test_a_declared_length_past_the_drain_limit_is_413_before_reading() -> None:
    with pytest.raises(errors.StatusError) as raised:
        _read([], headers=[(b"content-length", str(bodies.DRAIN_LIMIT_BYTES + 1).encode())])
    assert raised.value.code == 413
