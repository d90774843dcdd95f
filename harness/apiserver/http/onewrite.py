"""One socket write per response: uvicorn's HTTP protocols with their writes of one loop turn joined.

uvicorn writes a response's status line and headers when the app sends ``http.response.start``,
and its body when the app sends ``http.response.body``: two ``send`` system calls, two TCP
segments (``TCP_NODELAY`` is set) and, over loopback, the receiving side's work done twice in
the sending system call. Answering one request, the app sends both in the same turn of the event
loop, so the transport uvicorn is given here keeps what is written during a turn and hands it to
the socket's transport as one write at the end of the turn (a callback queued by the first write
of the turn). The bytes on the wire are the same, in the same order; only the segments differ.

This is done through the hooks uvicorn and asyncio publish, not by patching uvicorn: the
protocol class is uvicorn's own, given as ``uvicorn.Config(http=...)`` (a protocol class is
accepted there), and it differs only in the transport it passes on from asyncio's
``connection_made``.
"""

from __future__ import annotations

import asyncio
from typing import Any

# Past this many bytes held in one turn (a watch stream writing many queued events without
# yielding), the writes go out at once: the socket's transport then applies its flow control
# (pausing the protocol's writes) as it would have.
FLUSH_BYTES = 64 * 1024


class TurnWriter:
    """An ``asyncio.Transport`` stand-in whose writes during one event-loop turn reach ``transport``
    as a single write at the end of the turn (or at once past :data:`FLUSH_BYTES`, and before a
    close or an end of writing). Everything else is ``transport``'s own."""

    __slots__ = ("_transport", "_loop", "_held", "_size")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: list[bytes] | None = None
        self._size = 0

    def write(self, data: bytes | bytearray | memoryview) -> None:
        """Hold ``data`` until the end of this turn of the event loop."""
        if not data:
            return
        held = self._held
        if held is None:
            self._held = [bytes(data)]
            self._size = len(data)
            self._loop.call_soon(self.flush)
        else:
            held.append(bytes(data))
            self._size += len(data)
        if self._size >= FLUSH_BYTES:
            self.flush()

    def writelines(self, lines: Any) -> None:
        """Hold each of ``lines`` as :meth:`write` does."""
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        """Write what is held now, as one write (nothing if the transport is already closing: what
        it was still given before closing is written, what comes after a close is not)."""
        held = self._held
        if held is None:
            return
        self._held = None
        self._size = 0
        if self._transport.is_closing():
            return
        self._transport.write(held[0] if len(held) == 1 else b"".join(held))

    def close(self) -> None:
        """Write what is held, then close."""
        self.flush()
        self._transport.close()

    def write_eof(self) -> None:
        """Write what is held, then end writing."""
        self.flush()
        self._transport.write_eof()

    def abort(self) -> None:
        """Drop what is held and close at once."""
        self._held = None
        self._size = 0
        self._transport.abort()

    def get_write_buffer_size(self) -> int:
        """The bytes held here and in the socket's transport."""
        return self._size + self._transport.get_write_buffer_size()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class _OneWrite:
    """Mixed into one of uvicorn's HTTP protocol classes: the protocol writes through a :class:`TurnWriter`."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # the asyncio.Protocol hook
        super().connection_made(TurnWriter(transport, asyncio.get_running_loop()))  # type: ignore[misc]


def protocol_class(implementation: str) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol ``implementation`` (``httptools`` or ``h11``) writing each response
    in one socket write (the class to pass as ``uvicorn.Config(http=...)``)."""
    if implementation == "httptools":
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as Base
    else:
        from uvicorn.protocols.http.h11_impl import H11Protocol as Base  # type: ignore[assignment]
    return type(f"OneWrite{Base.__name__}", (_OneWrite, Base), {"__doc__": _OneWrite.__doc__})
