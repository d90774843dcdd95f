"""Running the facade: a foreground server that stops cleanly on SIGINT/SIGTERM even with an
open watch, a background server on a free port, and the kubeconfig it is reached through."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import yaml
from test_http_fixtures import eventually, serving

from harness.apiserver.http import create_app, run_server, serve, url, write_kubeconfig
from harness.world.world import World

ROOT = Path(__file__).resolve().parent.parent
FOREGROUND = """
from harness.apiserver.http import create_app, serve_forever
from harness.world.world import World
serve_forever(create_app(World(simulators=[])), "127.0.0.1", 0,
              on_ready=lambda port: print(port, flush=True), log_level="warning")
print("stopped", flush=True)
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
def test_foreground_server_stops_on_a_signal_while_a_watch_is_open(sig: signal.Signals) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with subprocess.Popen([sys.executable, "-c", FOREGROUND], stdout=subprocess.PIPE, text=True, env=env) as proc:
        try:
            port = int(proc.stdout.readline())
            with httpx.Client(base_url=url("127.0.0.1", port), timeout=10) as http, \
                    http.stream("GET", "/api/v1/namespaces", params={"watch": "1"}) as watch:
                lines = watch.iter_lines()
                next(lines)  # the watch is open and streaming
                proc.send_signal(sig)
                rest = list(lines)  # ends when the server closes the stream
            output, _ = proc.communicate(timeout=15)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert len(rest) == 3  # the remaining synthetic ADDED events, then the end of the stream
    assert "stopped" in output


def test_background_server_binds_a_free_port_and_stops(tmp_path: Path) -> None:
    server, port = run_server(create_app(World(simulators=[])), "127.0.0.1", 0)
    try:
        assert port > 0 and server.started
        assert httpx.get(f"{url('127.0.0.1', port)}/readyz", timeout=10).text == "ok"
    finally:
        server.stop()
    assert not server.thread.is_alive()


def test_a_server_asked_to_stop_ends_without_waiting_for_its_tick(monkeypatch: pytest.MonkeyPatch) -> None:
    # With uvicorn's tick made 30 s long, a stop that waited for the next tick to see ``should_exit``, or
    # paused a tick for the connections to close, would outlast the 10 s join: stop wakes the loop, and
    # an idle keep-alive connection is closed as soon as it is asked to (issue 16: no real-time waits).
    monkeypatch.setattr(serve, "TICK_SECONDS", 30.0)
    server, port = run_server(create_app(World(simulators=[])), "127.0.0.1", 0)
    with httpx.Client(timeout=10) as client:
        try:
            assert client.get(f"{url('127.0.0.1', port)}/readyz").text == "ok"  # the connection stays open
        finally:
            server.stop(timeout=10)
    assert not server.thread.is_alive()


def test_kubeconfig_names_every_cluster_and_is_private(tmp_path: Path) -> None:
    world = World(simulators=[])
    world.add_cluster("ns1/wc")
    path = write_kubeconfig(world.clusters, tmp_path / "kube" / "config", base_url="http://127.0.0.1:8001",
                            token="t0k")
    config = yaml.safe_load(path.read_text())
    servers = {c["name"]: c["cluster"]["server"] for c in config["clusters"]}
    assert servers == {"management": "http://127.0.0.1:8001", "ns1/wc": "http://127.0.0.1:8001/clusters/ns1/wc"}
    assert config["current-context"] == "management"
    assert config["users"][0]["user"] == {"token": "t0k"}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_world_on_wall_time_runs_due_work_between_requests(tmp_path: Path) -> None:
    # Work falls due as wall time passes; the app's ticker settles the world without any request.
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "later", "namespace": "default"}}

    def schedule(world: World) -> None:
        world.scheduler.call_later(0.2, lambda: world.client().create(config_map))

    for running in serving(tmp_path, simulators=[], prepare=schedule, follow_wall_time=True, tick_seconds=0.05):
        with running.http() as http:
            assert eventually(lambda: http.get("/api/v1/namespaces/default/configmaps/later").status_code == 200)
