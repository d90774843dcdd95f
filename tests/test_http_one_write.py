"""A response leaves in one socket write: the transport uvicorn writes through joins the writes of one
event-loop turn (harness/apiserver/http/onewrite.py), with the same bytes in the same order."""

from __future__ import annotations

import asyncio
import os
import socket
from typing import Any

import pytest

from harness.apiserver.http import create_app, onewrite, run_server, serve
from harness.world.world import World

SOCKET_TIMEOUT = 10.0
PROC_IO = "/proc/self/io"


class RecordingTransport(asyncio.Transport):
    """A transport that keeps what it is given, in order (writes and closes)."""

    def __init__(self) -> None:
        super().__init__(extra={"peername": ("127.0.0.1", 1234)})
        self.calls: list[Any] = []
        self.closing = False

    def write(self, data: Any) -> None:
        self.calls.append(bytes(data))

    def close(self) -> None:
        self.calls.append("close")
        self.closing = True

    def abort(self) -> None:
        self.calls.append("abort")
        self.closing = True

    def is_closing(self) -> bool:
        return self.closing

    def write_eof(self) -> None:
        self.calls.append("eof")

    def get_write_buffer_size(self) -> int:
        return 0


def _run(body: Any) -> Any:
    async def main() -> Any:
        return await body(asyncio.get_running_loop())

    return asyncio.run(main())


def test_the_writes_of_one_turn_reach_the_socket_as_one_write_after_the_turn() -> None:
    async def body(loop: asyncio.AbstractEventLoop) -> tuple[list[Any], list[Any]]:
        inner = RecordingTransport()
        writer = onewrite.TurnWriter(inner, loop)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\n")
        writer.write(memoryview(b"ok\n"))
        during = list(inner.calls)
        await asyncio.sleep(0)
        return during, inner.calls

    during, after = _run(body)
    assert during == []
    assert after == [b"HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\nok\n"]


def test_writes_of_different_turns_stay_apart_and_in_order() -> None:
    async def body(loop: asyncio.AbstractEventLoop) -> list[Any]:
        inner = RecordingTransport()
        writer = onewrite.TurnWriter(inner, loop)
        writer.write(b"a")
        await asyncio.sleep(0)
        writer.writelines([b"b", b"c"])
        writer.write(b"")
        await asyncio.sleep(0)
        return inner.calls

    assert _run(body) == [b"a", b"bc"]


def test_a_close_writes_what_is_held_first() -> None:
    async def body(loop: asyncio.AbstractEventLoop) -> list[Any]:
        inner = RecordingTransport()
        writer = onewrite.TurnWriter(inner, loop)
        writer.write(b"last words")
        writer.close()
        writer.write(b"after the close")
        await asyncio.sleep(0)
        return inner.calls

    assert _run(body) == [b"last words", "close"]


def test_an_end_of_writing_writes_what_is_held_first() -> None:
    async def body(loop: asyncio.AbstractEventLoop) -> list[Any]:
        inner = RecordingTransport()
        writer = onewrite.TurnWriter(inner, loop)
        writer.write(b"0\r\n\r\n")
        writer.write_eof()
        return inner.calls

    assert _run(body) == [b"0\r\n\r\n", "eof"]


def test_an_abort_drops_what_is_held() -> None:
    async def body(loop: asyncio.AbstractEventLoop) -> list[Any]:
        inner = RecordingTransport()
        writer = onewrite.TurnWriter(inner, loop)
        writer.write(b"never sent")
        writer.abort()
        await asyncio.sleep(0)
        return inner.calls

    assert _run(body) == ["abort"]


def test_past_the_flush_size_the_writes_go_out_at_once_so_flow_control_applies() -> None:
    async def body(loop: asyncio.AbstractEventLoop) -> tuple[list[Any], int]:
        inner = RecordingTransport()
        writer = onewrite.TurnWriter(inner, loop)
        chunk = b"x" * (onewrite.FLUSH_BYTES // 2)
        writer.write(chunk)
        writer.write(chunk)
        at_once = list(inner.calls)
        writer.write(b"tail")
        held = writer.get_write_buffer_size()
        await asyncio.sleep(0)
        assert inner.calls == [chunk + chunk, b"tail"]
        return at_once, held

    at_once, held = _run(body)
    assert at_once == [b"x" * onewrite.FLUSH_BYTES]
    assert held == 4


def test_everything_else_is_the_socket_transports() -> None:
    async def body(loop: asyncio.AbstractEventLoop) -> Any:
        writer = onewrite.TurnWriter(RecordingTransport(), loop)
        return writer.get_extra_info("peername"), writer.is_closing()

    assert _run(body) == (("127.0.0.1", 1234), False)


@pytest.mark.parametrize("implementation", ["httptools", "h11"])
def test_the_protocol_classes_are_uvicorns_own(implementation: str) -> None:
    cls = onewrite.protocol_class(implementation)
    base = cls.__mro__[2]
    assert base.__module__.startswith("uvicorn.protocols.http.")
    assert issubclass(serve.HTTP_PROTOCOL, asyncio.Protocol)


def _write_calls() -> int:
    """The write system calls (write, writev: how libuv and asyncio send on a socket) this process made."""
    with open(PROC_IO) as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith("syscw:"))


def _read_response(sock: socket.socket) -> bytes:
    """One HTTP response (Content-Length framing) read whole."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(1 << 16)
    head, _, rest = data.partition(b"\r\n\r\n")
    length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    while len(rest) < length:
        rest += sock.recv(1 << 16)
    return head + b"\r\n\r\n" + rest


@pytest.mark.skipif(not os.path.exists(PROC_IO), reason="counts system calls through Linux's /proc/self/io")
def test_a_served_response_takes_one_socket_write_and_arrives_whole() -> None:
    server, port = run_server(create_app(World(simulators=[])))
    paths = ["/version", "/api/v1/namespaces/default/pods", "/api/v1/namespaces/default/pods/missing"] * 10
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=SOCKET_TIMEOUT) as sock:
            before = _write_calls()
            for path in paths:
                # send() on the client's side is no write system call: only the server's writes count.
                sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
                response = _read_response(sock)
                assert response.startswith(b"HTTP/1.1 ") and response.endswith(b"\n")
            writes = _write_calls() - before
    finally:
        server.stop()
    # Two writes a response (status line and headers, then the body) would be 60; a stray write of
    # another thread is allowed for.
    assert len(paths) <= writes < len(paths) * 3 // 2
