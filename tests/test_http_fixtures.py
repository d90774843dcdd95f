"""Shared fixtures for the HTTP facade tests: a World served by uvicorn on 127.0.0.1, port 0.

The server runs in its own thread with its own event loop; tests talk to it over HTTP only (the
world is touched from the test thread only before the server starts).
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from starlette.applications import Starlette

from harness.apiserver.http import Server, bind, create_app, run_server, url, write_kubeconfig
from harness.world.world import World

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"
KUBECTL_TIMEOUT = 60
TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

class Reachable:
    """kubectl and httpx aimed at a server: ``base_url``, ``token``, ``kubeconfig`` and ``cache_dir``."""

    base_url: str
    token: str | None
    kubeconfig: Path
    cache_dir: Path

    def http(self, headers: dict[str, str] | None = None, **kwargs: Any) -> httpx.Client:
        """An HTTP client of the server (with the token, if any; ``headers`` add to or override it)."""
        merged = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        merged.update(headers or {})
        kwargs.setdefault("timeout", 10.0)
        return httpx.Client(base_url=self.base_url, headers=merged, **kwargs)

    def kubectl_command(self) -> list[str]:
        """kubectl with this server's kubeconfig and its own discovery cache."""
        return [KUBECTL, "--kubeconfig", str(self.kubeconfig), "--cache-dir", str(self.cache_dir)]

    def kubectl(self, *args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run kubectl against this server, bounded by a timeout."""
        command = [*self.kubectl_command(), *args]
        result = subprocess.run(
            command, input=stdin, capture_output=True, text=True, timeout=KUBECTL_TIMEOUT, check=False
        )
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({result.returncode}):\n{result.stderr}")
        return result

    def kubectl_json(self, *args: str) -> Any:
        return json.loads(self.kubectl(*args, "-o", "json").stdout)


@dataclass
class Served(Reachable):
    """A running server (in a thread of the test process) and what a test needs to reach it."""

    world: World
    app: Starlette
    server: Server
    port: int
    base_url: str
    token: str | None
    kubeconfig: Path
    cache_dir: Path


def serve(
    tmp_path: Path,
    *,
    token: str | None = None,
    prepare: Callable[[World], None] | None = None,
    simulators: list[str] | None = None,
    tick_seconds: float | None = None,
    **world_options: Any,
) -> tuple[Served, Callable[[], None]]:
    """Start a server for a fresh world (``prepare`` runs before it serves); returns it and a stop function.
    ``simulators``: the world's simulators (None: all of them, the World's default)."""
    world = World(simulators=simulators, **world_options)
    if prepare is not None:
        prepare(world)
    sock = bind("127.0.0.1", 0)
    base = url("127.0.0.1", sock.getsockname()[1])
    kubeconfig = write_kubeconfig(world.clusters, tmp_path / "kubeconfig", base_url=base, token=token)
    app = create_app(world, token=token, tick_seconds=tick_seconds)
    server, port = run_server(app, sock=sock, timeout=10.0)
    served = Served(world, app, server, port, base, token, kubeconfig, tmp_path / "kube-cache")
    return served, lambda: server.stop(10.0)


def kubernetes_api(reachable: Reachable) -> Iterator[Any]:
    """For a fixture: the official Python client's ``ApiClient`` for the server (from its kubeconfig),
    closed afterwards."""
    from kubernetes import config  # only the tests that drive the official client need it

    api_client = config.new_client_from_config(config_file=str(reachable.kubeconfig))
    try:
        yield api_client
    finally:
        api_client.close()


def eventually(predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
    """Whether ``predicate`` becomes true within ``timeout`` wall seconds. Only for what another
    thread (the server's) or process (``serve``, kubectl, an operator) does on its own; everything
    else is awaited by its HTTP answer."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        threading.Event().wait(0.02)
    return True


def serving(tmp_path: Path, **kwargs: Any) -> Iterator[Served]:
    """For a fixture: yields a served world (see :func:`serve`), then stops the server and checks
    that its thread ended."""
    running, stop = serve(tmp_path, **kwargs)
    try:
        yield running
    finally:
        stop()
        assert not running.server.thread or not running.server.thread.is_alive(), "server thread did not stop"


SERVE_START_TIMEOUT = 20.0
SERVE_STOP_TIMEOUT = 15.0


def kubeconfig_ca(kubeconfig: Path) -> ssl.SSLContext | bool:
    """An SSL context trusting the CA a kubeconfig carries (``certificate-authority-data`` of its
    first cluster), or True (the system's CAs) when it carries none."""
    import yaml

    cluster = yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]
    data = cluster.get("certificate-authority-data")
    if not data:
        return True
    return ssl.create_default_context(cadata=base64.b64decode(data).decode())


@dataclass
class ServeProcess(Reachable):
    """A ``python -m harness serve`` process (its own world, clock following wall time), served
    over HTTPS with the CA its kubeconfig carries."""

    process: subprocess.Popen[bytes]
    base_url: str
    token: str | None
    kubeconfig: Path
    cache_dir: Path
    log: Path

    def http(self, headers: dict[str, str] | None = None, **kwargs: Any) -> httpx.Client:
        """An HTTP client of the server that trusts its CA."""
        kwargs.setdefault("verify", kubeconfig_ca(self.kubeconfig))
        return super().http(headers, **kwargs)

    def advance(self, seconds: float) -> None:
        """Move the served world's clock forward (``POST /harness/v1/clock/advance``)."""
        with self.http() as http:
            http.post("/harness/v1/clock/advance", json={"seconds": seconds}).raise_for_status()


def stop_process(process: subprocess.Popen[Any], timeout: float) -> None:
    """Ask a child process to stop (SIGTERM), and kill it if it has not ended within ``timeout`` seconds."""
    process.terminate()
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout)


def serve_process(tmp_path: Path, *args: str) -> Iterator[ServeProcess]:
    """For a fixture: starts ``python -m harness serve --port 0`` (plus ``args``) writing its
    kubeconfig under ``tmp_path``, yields once it has printed where it serves, then stops it
    (SIGTERM, killed if it does not exit in time). Its output goes to ``tmp_path/serve.log``."""
    log = tmp_path / "serve.log"
    kubeconfig = tmp_path / "serve-kubeconfig"
    command = [sys.executable, "-m", "harness", "serve", "--port", "0", "--kubeconfig", str(kubeconfig), *args]
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    try:
        printed = eventually(lambda: "Kubeconfig:" in log.read_text() or process.poll() is not None,
                             timeout=SERVE_START_TIMEOUT)
        found = re.search(r"Serving the fake Kubernetes API at (\S+)", log.read_text())
        if not printed or found is None or process.poll() is not None:
            raise AssertionError(f"serve did not start:\n{log.read_text()}")
        yield ServeProcess(process, found.group(1), None, kubeconfig, tmp_path / "kube-cache", log)
    finally:
        stop_process(process, SERVE_STOP_TIMEOUT)
