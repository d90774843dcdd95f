"""Running the facade with uvicorn: on a chosen or free port, in a background thread (tests) or
in the foreground (the CLI), with a clean shutdown that ends open watch streams.

uvicorn waits for open connections at shutdown, and a watch is an open connection: when the
server is asked to exit, the app's watches (``app.state.watches``) are closed first, so their
streams end and the shutdown completes promptly.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import uvicorn

from harness.apiserver.clusters import ClusterSet
from harness.apiserver.http import onewrite

STARTUP_TIMEOUT = 10.0
# Backstop for connections that do not end when their watches close.
GRACEFUL_SHUTDOWN_SECONDS = 3
# How long an idle keep-alive connection stays open: kube-apiserver's IdleTimeout (90 s, the Go
# transport's idle timeout). uvicorn's default of 5 s races clients that reuse a connection after
# waiting 5 s (kubectl drain retries a refused eviction after 5 s): the POST meets a closing socket
# and fails with EOF or a reset, which Go does not retry for a POST.
KEEP_ALIVE_SECONDS = 90
HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# uvicorn looks at ``should_exit`` every 0.1 s and, at shutdown, gives the connections it asked to close a
# fixed 0.1 s: some 0.2 s of wall time per stop, for nothing, which a suite that starts a server per
# scenario (the reference Runtime Extension, the HTTP transport's facade) pays hundreds of times
# (issue 16). :meth:`Server.stop` wakes the loop at once, and the shutdown looks at the connections in
# slices of this many seconds, for at most uvicorn's 0.1 s.
TICK_SECONDS = 0.1
CLOSE_SLICE_SECONDS = 0.002


def _available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


# httptools (llhttp, C) parses a request in a fraction of h11's pure-Python time, and uvloop's event
# loop (libuv) costs less per callback than asyncio's: together they take about a fifth off the
# server's CPU per request (benchmarks/README.md). Both are declared dependencies; the fallbacks
# keep a machine where a wheel is missing (uvloop has none for Windows) serving.
HTTP_IMPLEMENTATION = "httptools" if _available("httptools") else "h11"
LOOP_IMPLEMENTATION = "uvloop" if _available("uvloop") else "asyncio"
# uvicorn's protocol for it, writing each response's status line, headers and body in one socket write
# (harness/apiserver/http/onewrite.py).
HTTP_PROTOCOL = onewrite.protocol_class(HTTP_IMPLEMENTATION)


def bind(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: a free port the OS picks)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP, and without
    # it every keep-alive response waits ~40 ms for a delayed ACK (Nagle).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


class Server(uvicorn.Server):
    """A uvicorn server that reports when it has started, closes the app's watch streams as soon
    as it is asked to exit, and returns normally after SIGINT/SIGTERM (uvicorn would re-raise)."""

    def __init__(
        self,
        app: Any,
        *,
        log_level: str = "warning",
        on_started: Callable[[], None] | None = None,
        tls: tuple[str, str] | None = None,
    ) -> None:
        certfile, keyfile = tls if tls is not None else (None, None)
        config = uvicorn.Config(
            app, log_level=log_level, lifespan="on", timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
            timeout_keep_alive=KEEP_ALIVE_SECONDS, http=HTTP_PROTOCOL, loop=LOOP_IMPLEMENTATION,
            access_log=log_level == "debug", ssl_certfile=certfile, ssl_keyfile=keyfile,
        )
        super().__init__(config)
        self._app = app
        self._on_started = on_started
        self._streams_closed = False
        self.port = 0
        self.thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop, self._wake = asyncio.get_running_loop(), asyncio.Event()
        await super().startup(sockets=sockets)
        if self.started and self._on_started is not None:
            self._on_started()

    async def on_tick(self, counter: int) -> bool:
        should_exit = await super().on_tick(counter)
        if should_exit and not self._streams_closed:
            self._streams_closed = True
            state = getattr(self._app, "state", None)
            stopping = getattr(state, "stopping", None)
            if stopping is not None:
                stopping.set()  # a clock advance in progress stops at its next slice
            watches = getattr(state, "watches", None)
            if watches is not None:
                watches.close_all()
        return should_exit

    async def main_loop(self) -> None:
        # uvicorn's loop, but its 0.1 s sleep ends early when :meth:`stop` wakes it (a signal handler
        # only sets ``should_exit``, which is still seen at the next tick).
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + 1) % 864000
            wake = self._wake
            if wake is None:
                await asyncio.sleep(TICK_SECONDS)
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), TICK_SECONDS)
            should_exit = await self.on_tick(counter)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        # uvicorn's shutdown (stop accepting, ask each connection to close, wait for them and the tasks
        # within the graceful timeout, then the lifespan's shutdown), with its fixed 0.1 s pause for the
        # connections to close replaced by looking at them every few milliseconds for as long.
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        loop = asyncio.get_running_loop()
        give_up = loop.time() + TICK_SECONDS
        await asyncio.sleep(0)
        while self.server_state.connections and loop.time() < give_up:
            await asyncio.sleep(CLOSE_SLICE_SECONDS)
        try:
            await asyncio.wait_for(self._drain(), timeout=self.config.timeout_graceful_shutdown)
        except TimeoutError:
            for task in self.server_state.tasks:
                task.cancel(msg="Task cancelled, timeout graceful shutdown exceeded")
        if not self.force_exit:
            await self.lifespan.shutdown()

    async def _drain(self) -> None:
        """Wait for the connections still answering and the app's tasks to end (uvicorn's graceful wait)."""
        while (self.server_state.connections or self.server_state.tasks) and not self.force_exit:
            await asyncio.sleep(CLOSE_SLICE_SECONDS if self.server_state.connections else TICK_SECONDS)
        for server in self.servers:
            await server.wait_closed()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # uvicorn re-raises the signal after a graceful shutdown (so the process dies of it); a
        # serve command wants to return normally instead, and exit 0.
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        original = {sig: signal.signal(sig, self.handle_exit) for sig in HANDLED_SIGNALS}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)

    def stop(self, timeout: float = 10.0) -> None:
        """Ask the server to exit and wait for its thread (when it runs in one)."""
        self.should_exit = True
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None:
            with contextlib.suppress(RuntimeError):  # the loop has already closed
                loop.call_soon_threadsafe(wake.set)
        if self.thread is not None:
            self.thread.join(timeout)


def run_server(
    app: Any,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    sock: socket.socket | None = None,
    timeout: float = STARTUP_TIMEOUT,
    log_level: str = "warning",
    tls: tuple[str, str] | None = None,
    server_class: type[Server] = Server,
    name: str = "uvicorn",
) -> tuple[Server, int]:
    """Serve ``app`` from a background thread; returns once it accepts connections, with the
    port it is bound to. ``sock``: an already bound socket (see :func:`bind`) to serve instead of
    binding ``host:port``, so the port can be known before serving starts. Stop it with
    ``server.stop()``. Raises RuntimeError if it does not start within ``timeout`` seconds.
    ``server_class`` (a :class:`Server`) and ``name`` (the thread is ``<name>-<port>``) let other
    servers of the kit, such as the reference Runtime Extension, start the same way."""
    sock = sock if sock is not None else bind(host, port)
    actual_port = sock.getsockname()[1]
    started = threading.Event()
    server = server_class(app, log_level=log_level, on_started=started.set, tls=tls)
    server.port = actual_port

    def run() -> None:
        try:
            server.run(sockets=[sock])
        finally:
            started.set()
            sock.close()

    server.thread = threading.Thread(target=run, name=f"{name}-{actual_port}", daemon=True)
    server.thread.start()
    if not started.wait(timeout) or not server.started:
        server.stop(timeout)
        raise RuntimeError(f"the {name} server did not start on {host}:{actual_port} within {timeout}s")
    return server, actual_port


def serve_forever(
    app: Any,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    on_ready: Callable[[int], None] | None = None,
    log_level: str = "info",
    tls: tuple[str, str] | None = None,
) -> None:
    """Serve ``app`` in this thread until SIGINT or SIGTERM, then shut down (open watches end)
    and return normally; ``on_ready(port)`` is called once the server accepts connections. A
    second SIGINT during shutdown forces it."""
    sock = bind(host, port)
    actual_port = sock.getsockname()[1]
    server = Server(
        app, log_level=log_level, on_started=(lambda: on_ready(actual_port)) if on_ready is not None else None,
        tls=tls,
    )
    server.port = actual_port
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()


def url(host: str, port: int, *, tls: bool = False) -> str:
    """The base URL of a server bound to ``host:port``."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else f"[{host}]" if ":" in host else host
    return f"{'https' if tls else 'http'}://{shown}:{port}"


def write_kubeconfig(
    clusters: ClusterSet, path: str | os.PathLike[str], *, base_url: str | None = None, token: str | None = None
) -> Path:
    """Write a kubeconfig for every cluster (contexts ``management`` and ``<ns>/<name>``) to
    ``path``, readable only by the owner. ``base_url``/``token``, when given, are recorded on
    ``clusters`` first (call this before the server starts serving requests)."""
    if base_url is not None:
        clusters.base_url = base_url
    if token is not None:
        clusters.token = token
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        target.unlink()
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(clusters.kubeconfig())
    return target
