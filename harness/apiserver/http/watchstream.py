"""Watch streams: a :class:`Watch` as chunked, newline-delimited compact JSON events.

One ``{"type": ..., "object": ...}`` per line (the Python clients split on newlines). The stream
ends when the watch closes (an in-stream 410 ``Expired`` closes it), when ``timeoutSeconds`` pass,
when the client goes away, or at shutdown; in every case the watch is detached from the store.
Events are the store's shared objects: they are serialised, never changed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from harness.apiserver.http.negotiation import JSON
from harness.apiserver.http.responses import encode
from harness.apiserver.watch import Watch

# Without timeoutSeconds the apiserver picks 30-60 minutes; we take the lower bound.
DEFAULT_TIMEOUT = 1800.0
INITIAL_EVENTS_END = "k8s.io/initial-events-end"

EventEncoder = Callable[[str, dict[str, Any]], bytes]


def json_line(event_type: str, obj: dict[str, Any]) -> bytes:
    """One watch event as a compact JSON line."""
    return encode({"type": event_type, "object": obj}) + b"\n"


class WatchHub:
    """The watches being streamed, so that shutdown can end them all."""

    def __init__(self) -> None:
        self._watches: set[Watch] = set()

    def add(self, watch: Watch) -> None:
        self._watches.add(watch)

    def discard(self, watch: Watch) -> None:
        self._watches.discard(watch)

    def close_all(self) -> None:
        """Stop every open watch; their streams end after sending what is queued."""
        for watch in list(self._watches):
            watch.stop()

    def __len__(self) -> int:
        return len(self._watches)

    def __iter__(self) -> Iterator[Watch]:
        return iter(list(self._watches))


async def events(
    watch: Watch,
    *,
    hub: WatchHub,
    timeout: float,
    encoder: EventEncoder,
    current_rv: Callable[[], str],
) -> AsyncIterator[bytes]:
    """The encoded events of ``watch`` until it closes or ``timeout`` seconds pass.

    Watchers that allow bookmarks get one at ``current_rv()`` before the timeout closes the
    stream (the periodic ones come from the world, on its clock)."""
    loop = asyncio.get_running_loop()
    wake = asyncio.Event()
    watch.on_event = wake.set  # the store notifies on this thread, so setting the event is enough
    hub.add(watch)
    deadline = loop.time() + timeout
    try:
        while True:
            wake.clear()
            for event_type, obj in watch.drain():
                yield encoder(event_type, obj)
            if watch.closed:
                if watch.events:
                    continue
                return
            now = loop.time()
            if now >= deadline:
                watch.bookmark(current_rv())
                for event_type, obj in watch.drain():
                    yield encoder(event_type, obj)
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), deadline - now)
    finally:
        watch.on_event = None
        watch.stop()
        hub.discard(watch)


class WatchResponse(StreamingResponse):
    """A streaming response that always closes its event generator (detaching the watch), also
    when the client disconnects while the generator is suspended."""

    def __init__(self, body: AsyncIterator[bytes]) -> None:
        super().__init__(body, status_code=200, media_type=JSON)
        self._body = body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            aclose = getattr(self._body, "aclose", None)
            if aclose is not None:
                await aclose()
