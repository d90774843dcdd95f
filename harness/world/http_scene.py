"""A :class:`~harness.world.scene.Scene` over HTTP: the same steps, with a real wire in between.

A :class:`WorldServer` is one uvicorn server on ``127.0.0.1`` (a free port) in a background
thread. It serves one world at a time: :meth:`WorldServer.serve` puts a fresh world behind it
between scenarios, so a test session pays for one server start, not one per scenario. The world
is touched from the caller's thread only before it is served; from then on everything goes through
HTTP: :class:`HttpScene` hands out :class:`~harness.client.http.HttpClient` instances (one per
cluster and user; the user travels as the bearer token, which the facade takes as the user name
when it requires no token of its own) and drives the clock, the audit trail, the simulators and
storage compaction through the admin API (``/harness/v1/``, harness/apiserver/http/admin.py).

Watches are read on background threads, so a step that looks at a watch right after a write could
look before the events have crossed the wire. The scene's watches therefore catch up first: before
``drain()`` or ``closed`` answers, a watch asks the admin API how many events the server has given
its stream (named by the stream's ``Audit-Id``) and waits, bounded by :data:`SYNC_SECONDS` of wall
time, until it has read that many (and, if the server ended the stream, until it has seen the end).

For looking at the wire itself, :meth:`HttpScene.http` gives a plain HTTP client and
:meth:`HttpScene.raw_watch` a watch that keeps its status line, headers and raw lines.

``HttpScene.now()`` answers from the time the last advance returned: the world's virtual clock
moves only when the scene advances it (unless the world follows wall time; then it asks).
"""

from __future__ import annotations

import functools
import json
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable
from types import TracebackType
from typing import Any, Protocol

import httpx
from starlette.types import Receive, Scope, Send

from harness.apiserver.clusters import MANAGEMENT, cluster_path
from harness.apiserver.http import bind, create_app, run_server, url
from harness.client.http import HttpClient, WatchStream
from harness.kube.errors import StatusError, status
from harness.world.world import World

ADMIN_PATH = "/harness/v1"
HOST = "127.0.0.1"
STARTUP_SECONDS = 10.0
STOP_SECONDS = 10.0
# Wall-clock bounds: how long a watch may take to deliver what the server sent it, how long the
# server may take to end a stream whose client hung up, and how often either is looked at again.
SYNC_SECONDS = 10.0
HANGUP_SECONDS = 5.0
POLL_SECONDS = 0.002
REQUEST_TIMEOUT = 30.0
NO_WORLD_MESSAGE = "no world is being served"
# The event a raw watch records for a line that is not a JSON watch event.
MALFORMED = "MALFORMED"
# The admin API's fault rules, relative to ADMIN_PATH.
FAULTS_PATH = "/faults"
# Audit records as the in-process scene gives them: without diffs, with the objects.
AUDIT_QUERY = {"diff": "false", "objects": "true"}


@functools.cache
def _shared_ssl_context() -> ssl.SSLContext:
    """One default SSL context for every client the scenes make: building one per client (which
    httpx does unless given one) reads the CA bundle each time, and costs more than the requests."""
    return ssl.create_default_context()


def _checked(response: httpx.Response) -> Any:
    """The JSON body of an admin answer; an error answer raises its ``Status`` as an API error."""
    if response.status_code >= 400:
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict) or body.get("kind") != "Status":
            body = status(response.status_code, "", response.text[:500])
        raise StatusError(body)
    return response.json()


class _Switch:
    """The ASGI app uvicorn runs: it hands each request to the app of the world being served.

    It answers the lifespan protocol itself (the apps it switches between have nothing to start),
    and exposes the current app's ``state`` so the server's shutdown ends that app's watches."""

    def __init__(self) -> None:
        self.app: Any = None

    @property
    def state(self) -> Any:
        return getattr(self.app, "state", None)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        app = self.app
        if app is None:
            raise RuntimeError(NO_WORLD_MESSAGE)
        await app(scope, receive, send)


class WorldServer:
    """A uvicorn server on ``127.0.0.1`` serving one world at a time (see the module docstring)."""

    def __init__(self, *, timeout: float = STARTUP_SECONDS) -> None:
        self._switch = _Switch()
        sock = bind(HOST, 0)
        self.base_url = url(HOST, sock.getsockname()[1])
        self.server, self.port = run_server(self._switch, sock=sock, timeout=timeout)

    def serve(self, world: World) -> None:
        """Serve ``world`` from now on, instead of the world before it. Call it only while no
        request is in flight; ``world`` must not be touched from this thread afterwards."""
        world.set_base_url(self.base_url)
        self._switch.app = create_app(world)

    def stop(self, timeout: float = STOP_SECONDS) -> None:
        """Stop serving and wait for the server's thread; RuntimeError if it does not end. The world
        served last is let go (a stopped server keeps none alive)."""
        try:
            self.server.stop(timeout)
        finally:
            self._switch.app = None
        if self.server.thread is not None and self.server.thread.is_alive():
            raise RuntimeError(f"the server on {self.base_url} did not stop within {timeout} s")


class RawWatch(WatchStream):
    """A watch request that keeps what crossed the wire: the status code, the headers and every line
    exactly as sent (with its newline; a last piece without one too), so framing can be checked. Each
    line is also an event ``(type, object)``; a line that is not a JSON event is the event
    ``("MALFORMED", {"line": text})``. An error answer (status ≥ 400) keeps its ``body`` and is one
    ``ERROR`` event carrying it."""

    def __init__(self, http: httpx.Client, path: str, params: dict[str, str]) -> None:
        super().__init__(http, path, params, thread_name=f"raw watch {path}",
                         timeout=httpx.Timeout(REQUEST_TIMEOUT, read=None))
        self.status_code: int | None = None
        self.headers: httpx.Headers | None = None
        self.lines: list[bytes] = []
        self.body = b""
        self._start()

    def _line(self, line: bytes) -> None:
        self.lines.append(line)
        try:
            event = json.loads(line)
            self._queue((str(event["type"]), event["object"]))
        except (ValueError, KeyError, TypeError):
            self._queue((MALFORMED, {"line": line.decode(errors="replace")}))

    def _read(self, response: httpx.Response) -> None:
        self.status_code, self.headers = response.status_code, response.headers
        if response.status_code >= 400:
            self.body = response.read()
            self._queue(("ERROR", json.loads(self.body)))
            return
        pending = b""
        for chunk in response.iter_raw():
            pending += chunk
            while b"\n" in pending:
                line, _, pending = pending.partition(b"\n")
                self._line(line + b"\n")
        if pending:
            self._line(pending)

    def _broken(self, err: Exception) -> tuple[str, dict[str, Any]]:
        return (MALFORMED, {"line": f"the stream broke: {err}"})


class _Stream(Protocol):
    """What :class:`SyncedWatch` needs of the watch it wraps (``harness.client.http.HttpWatch``, :class:`RawWatch`)."""

    audit_id: str | None
    on_event: Callable[[], None] | None

    @property
    def closed(self) -> bool: ...

    def drain(self) -> list[tuple[str, dict[str, Any]]]: ...

    def stop(self) -> None: ...


class SyncedWatch:
    """A watch that catches up with the server before it answers ``drain`` or ``closed``;
    ``stream`` is the watch it wraps."""

    def __init__(self, inner: _Stream, streams: Callable[[], dict[str, dict[str, Any]]]) -> None:
        self.stream = inner
        self._streams = streams
        self._buffer: deque[tuple[str, dict[str, Any]]] = deque()
        self._read = 0
        self._arrived = threading.Event()
        self.on_event: Callable[[], None] | None = None
        inner.on_event = self._on_arrival

    def _on_arrival(self) -> None:
        self._arrived.set()
        if self.on_event is not None:
            self.on_event()

    def _take(self) -> None:
        events = self.stream.drain()
        self._read += len(events)
        self._buffer.extend(events)

    def _caught_up(self) -> bool:
        if self.stream.closed:
            return True  # the stream ended: everything it carried is here
        if self.stream.audit_id is None:
            return False  # the server has not answered yet
        stream = self._streams().get(self.stream.audit_id)
        return stream is not None and self._read >= stream["events"] and not stream["ended"]

    def sync(self) -> None:
        """Wait until every event the server has given this stream has been read (and its end,
        if the server ended it); AssertionError after :data:`SYNC_SECONDS`."""
        deadline = time.monotonic() + SYNC_SECONDS
        while True:
            self._arrived.clear()
            self._take()
            if self._caught_up():
                return
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"the watch stream {self.stream.audit_id} did not deliver what the server sent within "
                    f"{SYNC_SECONDS} s (read {self._read}; server: {self._streams().get(self.stream.audit_id or '')})"
                )
            self._arrived.wait(POLL_SECONDS)

    @property
    def closed(self) -> bool:
        self.sync()
        return not self._buffer and self.stream.closed

    def drain(self) -> list[tuple[str, dict[str, Any]]]:
        self.sync()
        out = list(self._buffer)
        self._buffer.clear()
        return out

    def stop(self) -> None:
        self.stream.stop()


class SceneClient(HttpClient):
    """An :class:`HttpClient` whose watches catch up with the server (:class:`SyncedWatch`)."""

    def __init__(self, server: str, *, user: str, streams: Callable[[], dict[str, dict[str, Any]]]) -> None:
        # The user name as the bearer token: the facade without a token of its own takes it as the user.
        super().__init__(server, token=user, user=user, timeout=REQUEST_TIMEOUT, verify=_shared_ssl_context())
        self._streams = streams
        self.watches: list[SyncedWatch] = []

    def watch(self, *args: Any, **kwargs: Any) -> SyncedWatch:  # type: ignore[override]
        watch = SyncedWatch(super().watch(*args, **kwargs), self._streams)
        self.watches.append(watch)
        return watch


class HttpScene:
    """A :class:`~harness.world.scene.Scene` whose world is served over HTTP.

    ``world``: the world to serve (default: a fresh one with every simulator); it must not be
    touched once the scene exists. ``server``: a :class:`WorldServer` to serve it on (the scene
    starts and stops its own when none is given). Use it as a context manager, or call
    :meth:`close`: it stops the scene's watches, waits for the server to end their streams,
    closes its clients, and stops the server if it started it."""

    def __init__(self, world: World | None = None, *, server: WorldServer | None = None) -> None:
        world = world if world is not None else World()
        # A clock that follows wall time moves between requests: its time is always asked for.
        self._clock_moves_alone = world.clock.follows_wall_time
        self._own_server = server is None
        self.server = server if server is not None else WorldServer()
        self.server.serve(world)
        self._admin = httpx.Client(base_url=self.server.base_url + ADMIN_PATH, timeout=REQUEST_TIMEOUT,
                                   verify=_shared_ssl_context())
        self._clients: dict[tuple[str, str], SceneClient] = {}
        self._raw: dict[tuple[str, str], httpx.Client] = {}
        self._raw_watches: list[SyncedWatch] = []
        self._audit_total = 0
        self._now: float | None = None
        # The served world runs in this process: the harness's own Runtime Extension holds hangs on its
        # clock (harness/world/extension/app.py) while the world waits for the call.
        self.clock = world.clock

    # -- admin API plumbing ------------------------------------------------------------------------

    def _get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        return _checked(self._admin.get(path, params=params))

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        return _checked(self._admin.post(path, json=body))

    def _streams(self) -> dict[str, dict[str, Any]]:
        return {s["auditID"]: s for s in self._get("/watches")["items"]}

    def _cluster_url(self, cluster: str) -> str:
        return self.server.base_url + cluster_path(cluster)

    # -- the Scene protocol ------------------------------------------------------------------------

    def client(self, cluster: str = MANAGEMENT, user: str = "admin") -> SceneClient:
        """The client of ``cluster`` acting as ``user`` (the same one each time it is asked for)."""
        key = (cluster, user)
        if key not in self._clients:
            self._clients[key] = SceneClient(self._cluster_url(cluster), user=user, streams=self._streams)
        return self._clients[key]

    def settle(self) -> None:
        """Let the world run what is due now (an advance by 0 seconds)."""
        self.advance(0)

    def advance(self, seconds: float) -> None:
        self._now = float(self._post("/clock/advance", {"seconds": seconds})["unix"])

    def now(self) -> float:
        # The world's clock moves only when this scene advances it, and every advance answers
        # with the time: asking again each time would double the requests of a waiting step.
        if self._now is None or self._clock_moves_alone:
            self._now = float(self._get("/clock")["unix"])
        return self._now

    def audit(self, since: int = 0, **filters: Any) -> list[dict[str, Any]]:
        """Audit records as dicts with their ``old`` and ``new`` objects (no diffs); filters as
        :meth:`AuditLog.query` (None: no filter)."""
        params = {**AUDIT_QUERY, "since": str(since)}
        params.update({key: str(value) for key, value in filters.items() if value is not None})
        return list(self._get("/audit", params)["items"])

    def audit_size(self) -> int:
        # Ask only for what was written since the last look: the answer carries the total anyway.
        answer = self._get("/audit", {"since": str(self._audit_total), "diff": "false"})
        self._audit_total = int(answer["total"])
        return self._audit_total

    def configure(self, simulator: str, cluster: str = MANAGEMENT, **knobs: Any) -> None:
        self._post(f"/simulators/{simulator}", {"cluster": cluster, "knobs": knobs})

    def call(self, simulator: str, method: str, *args: Any, cluster: str = MANAGEMENT) -> Any:
        return self._post(f"/simulators/{simulator}/call", {"method": method, "args": list(args), "cluster": cluster})[
            "result"
        ]

    def set_enabled(self, simulator: str, enabled: bool, cluster: str | None = None) -> None:
        body: dict[str, Any] = {"enabled": enabled}
        if cluster is not None:
            body["cluster"] = cluster
        self._post(f"/simulators/{simulator}", body)

    def compact(self, cluster: str = MANAGEMENT) -> None:
        self._post("/compact", {"cluster": cluster})

    def add_cluster(self, name: str) -> None:
        self._post("/clusters", {"name": name})

    def add_fault(self, rule: dict[str, Any]) -> None:
        self._post(FAULTS_PATH, rule)

    def faults(self) -> dict[str, Any]:
        return self._get(FAULTS_PATH)

    def clear_faults(self) -> None:
        _checked(self._admin.delete(FAULTS_PATH))

    def retry_due(self) -> float | None:
        """When a controller of the served world next retries something that failed (``GET clock``)."""
        due = self._get("/clock").get("retryDue")
        return None if due is None else float(due)

    def restart_controllers(self, names: list[str] | None = None) -> None:
        """Restart the served world's reference controllers (``POST controllers/restart``)."""
        self._post("/controllers/restart", {} if names is None else {"names": list(names)})

    # -- beyond the protocol -------------------------------------------------------------------------

    def http(self, cluster: str = MANAGEMENT, user: str = "admin") -> httpx.Client:
        """A plain HTTP client of ``cluster``'s URL acting as ``user``, for looking at the wire
        itself (status lines, headers, framing); closed with the scene."""
        key = (cluster, user)
        if key not in self._raw:
            self._raw[key] = httpx.Client(base_url=self._cluster_url(cluster), timeout=REQUEST_TIMEOUT,
                                          headers={"Authorization": f"Bearer {user}"}, verify=_shared_ssl_context())
        return self._raw[key]

    def raw_watch(
        self, path: str, params: dict[str, str], cluster: str = MANAGEMENT, user: str = "admin"
    ) -> SyncedWatch:
        """A watch request to ``path`` (relative to ``cluster``'s URL) whose wire is kept
        (``.stream`` is its :class:`RawWatch`); it catches up with the server as the clients' do."""
        watch = SyncedWatch(RawWatch(self.http(cluster, user), path, params), self._streams)
        self._raw_watches.append(watch)
        return watch

    def close(self) -> None:
        """Stop the scene's watches, wait until the server has ended their streams, close the
        clients, and stop the server if the scene started it. RuntimeError if a stream outlives
        its client by :data:`HANGUP_SECONDS`."""
        try:
            for client in self._clients.values():
                for watch in client.watches:
                    watch.stop()
            for watch in self._raw_watches:
                watch.stop()
            for raw in self._raw.values():
                raw.close()
            self._await_hangups()
        finally:
            for client in self._clients.values():
                client.close()
            self._admin.close()
            if self._own_server:
                self.server.stop()

    def _await_hangups(self) -> None:
        deadline = time.monotonic() + HANGUP_SECONDS
        while True:
            open_streams = [s for s in self._streams().values() if not s["ended"]]
            if not open_streams:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"watch streams still open after their clients hung up: {open_streams}")
            threading.Event().wait(POLL_SECONDS)

    def __enter__(self) -> HttpScene:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()
