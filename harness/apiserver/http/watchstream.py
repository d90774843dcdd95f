"""Watch streams: a :class:`Watch` as chunked, newline-delimited compact JSON events.

One ``{"type": ..., "object": ...}`` per line (the Python clients split on newlines). The stream
ends when the watch closes (an in-stream 410 ``Expired`` closes it), when ``timeoutSeconds`` pass,
when the client goes away, or at shutdown; in every case the watch is detached from the store.
Events are the store's shared objects: they are serialised, never changed.

Each stream answers with an ``Audit-Id`` header (the request's own ``Audit-ID`` when it sent one,
as the apiserver does), and the hub keeps, per audit ID, how many events the stream has been
given and whether it has ended (``GET /harness/v1/watches``), so a client in another thread can
tell when it has read everything the server sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from harness.apiserver.http.responses import encode
from harness.apiserver.watch import Watch
from harness.kube.names.meta import AUDIT_ID_HEADER
from harness.kube.names.meta import JSON_CONTENT_TYPE as JSON

# Without timeoutSeconds the apiserver picks 30-60 minutes; we take the lower bound.
DEFAULT_TIMEOUT = 1800.0
INITIAL_EVENTS_END = "k8s.io/initial-events-end"
# Ended streams the hub still reports (the newest ones), so a client can see that its stream ended.
ENDED_STREAMS_KEPT = 1000

EventEncoder = Callable[[str, dict[str, Any]], bytes]


def json_line(event_type: str, obj: dict[str, Any]) -> bytes:
    """One watch event as a compact JSON line."""
    return encode({"type": event_type, "object": obj}) + b"\n"


def audit_id(requested: str | None) -> str:
    """The audit ID of a request: the one it sent, else a new UUID."""
    return requested or str(uuid.uuid4())


class StreamRecord:
    """What one watch stream has been given: events written, events still queued, whether it ended."""

    def __init__(self, watch: Watch, user: str = "", resource: str = "") -> None:
        self.watch = watch
        self.written = 0
        self.ended = False
        # Who watches what (plural.group), so a harness can tell a watcher is ready.
        self.user = user
        self.resource = resource

    def to_dict(self, audit_id: str) -> dict[str, Any]:
        """``{auditID, events, written, ended, user, resource}``: events written or queued to be written, and of those
        the ones handed to the connection; ended once the watch is closed (the stream ends after its
        queued events)."""
        queued = 0 if self.ended else len(self.watch.events)
        return {"auditID": audit_id, "events": self.written + queued, "written": self.written,
                "ended": self.ended or self.watch.closed, "user": self.user, "resource": self.resource}


class WatchHub:
    """The watches being streamed, so that shutdown can end them all, and what each stream sent."""

    def __init__(self) -> None:
        self._watches: set[Watch] = set()
        self._streams: OrderedDict[str, StreamRecord] = OrderedDict()

    def add(self, watch: Watch) -> None:
        self._watches.add(watch)

    def discard(self, watch: Watch) -> None:
        self._watches.discard(watch)

    def track(self, audit_id: str, watch: Watch, *, user: str = "", resource: str = "") -> StreamRecord:
        """Start counting what the stream ``audit_id`` of ``watch`` (``user`` watching ``resource``) is given."""
        record = self._streams[audit_id] = StreamRecord(watch, user, resource)
        ended = [key for key, r in self._streams.items() if r.ended]
        for key in ended[: max(0, len(ended) - ENDED_STREAMS_KEPT)]:
            del self._streams[key]
        return record

    def streams(self) -> list[dict[str, Any]]:
        """Every tracked stream as :meth:`StreamRecord.to_dict`, oldest first."""
        return [record.to_dict(key) for key, record in self._streams.items()]

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
    record: StreamRecord | None = None,
    limit: int | None = None,
) -> AsyncIterator[bytes]:
    """The encoded events of ``watch`` until it closes or ``timeout`` seconds pass.

    Watchers that allow bookmarks get one at ``current_rv()`` before the timeout closes the
    stream (the periodic ones come from the world, on its clock). ``record`` counts what is written.
    ``limit``: end the stream after that many events (an injected dropped watch)."""
    record = record if record is not None else StreamRecord(watch)
    loop = asyncio.get_running_loop()
    wake = asyncio.Event()
    watch.on_event = wake.set  # the store notifies on this thread, so setting the event is enough
    hub.add(watch)
    deadline = loop.time() + timeout
    sent = 0
    try:
        while True:
            wake.clear()
            if limit is not None and sent >= limit:
                return
            for event_type, obj in watch.drain():
                record.written += 1
                sent += 1
                yield encoder(event_type, obj)
                if limit is not None and sent >= limit:
                    return
            if watch.closed:
                if watch.events:
                    continue
                return
            now = loop.time()
            if now >= deadline:
                watch.bookmark(current_rv())
                for event_type, obj in watch.drain():
                    record.written += 1
                    yield encoder(event_type, obj)
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), deadline - now)
    finally:
        end_stream(watch, hub, record)


def end_stream(watch: Watch, hub: WatchHub, record: StreamRecord) -> None:
    """Detach a stream's watch from the store and the hub, and record the stream as ended (twice is once)."""
    watch.on_event = None
    watch.stop()
    hub.discard(watch)
    record.ended = True


class WatchResponse(StreamingResponse):
    """A streaming response that always closes its event generator (detaching the watch), also
    when the client disconnects while the generator is suspended."""

    def __init__(
        self, body: AsyncIterator[bytes], *, audit_id: str | None = None, on_close: Callable[[], None] | None = None
    ) -> None:
        headers = {AUDIT_ID_HEADER: audit_id} if audit_id else None
        super().__init__(body, status_code=200, media_type=JSON, headers=headers)
        self._body = body
        self._on_close = on_close

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            aclose = getattr(self._body, "aclose", None)
            if aclose is not None:
                await aclose()
            # A generator closed before it first ran skips its own cleanup (a client that hung up
            # at once): ``on_close`` detaches the watch regardless.
            if self._on_close is not None:
                self._on_close()
