"""``lifecycle-tck serve`` as a process: it looks like a fresh cluster (HTTPS with its own CA, a
Ready Node, the per-namespace defaults), takes its token from a file or the environment, checks
the Host header, and stops within a second even in the middle of a month-long clock advance."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from test_http_fixtures import ServeProcess, eventually, kubeconfig_ca, serve_process

from harness.apiserver.http.admin import MAX_ADVANCE_SECONDS

STOP_WITHIN_SECONDS = 2.0
REQUEST_TIMEOUT = 30.0


@pytest.fixture
def served(tmp_path: Path) -> Iterator[ServeProcess]:
    yield from serve_process(tmp_path)


def test_a_fresh_serve_speaks_https_with_its_ca_in_the_kubeconfig(served: ServeProcess) -> None:
    assert served.base_url.startswith("https://127.0.0.1:")
    assert kubeconfig_ca(served.kubeconfig) is not True
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{served.base_url}/version", timeout=5)  # not a CA the system trusts
    assert "namespace/kube-node-lease" in served.kubectl("get", "ns", "-o", "name").stdout.split()


def test_a_fresh_serve_has_a_ready_node_and_the_defaults_of_every_namespace(served: ServeProcess) -> None:
    nodes = served.kubectl_json("get", "nodes")["items"]
    assert [n["metadata"]["name"] for n in nodes] == ["lifecycle-tck-node-1"]
    ready = [c for c in nodes[0]["status"]["conditions"] if c["type"] == "Ready"]
    assert ready and ready[0]["status"] == "True"
    served.kubectl("create", "namespace", "shop")
    ca = served.kubectl_json("get", "configmap", "kube-root-ca.crt", "-n", "shop")
    assert eventually(lambda: served.kubectl("get", "serviceaccount", "default", "-n", "shop",
                                             check=False).returncode == 0)
    assert ca["data"]["ca.crt"].startswith("-----BEGIN CERTIFICATE-----")
    for namespace in ("default", "kube-system", "kube-public", "kube-node-lease"):
        served.kubectl("get", "serviceaccount", "default", "-n", namespace)
        served.kubectl("get", "configmap", "kube-root-ca.crt", "-n", namespace)


def test_serve_with_no_nodes_and_plain_http_when_asked(tmp_path: Path) -> None:
    for running in serve_process(tmp_path, "--nodes", "0", "--insecure-http"):
        assert running.base_url.startswith("http://127.0.0.1:")
        with running.http() as http:
            assert http.get("/api/v1/nodes").json()["items"] == []


def test_a_host_header_naming_another_server_is_refused(served: ServeProcess) -> None:
    with served.http() as http:
        rebound = http.get("/api/v1/namespaces", headers={"Host": "attacker.example"})
        local = http.get("/api/v1/namespaces", headers={"Host": "localhost"})
    assert rebound.status_code == 400 and rebound.json()["kind"] == "Status"
    assert local.status_code == 200


def test_a_websocket_handshake_naming_another_server_is_refused_too(served: ServeProcess) -> None:
    handshake = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
                 "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
    # One connection per handshake: the server may close a connection whose upgrade it answered over HTTP,
    # and a second request on it would race that close.
    with served.http() as http:
        rebound = http.get("/api/v1/namespaces/default/pods/p/exec", headers={**handshake, "Host": "attacker.example"})
    with served.http() as http:
        local = http.get("/api/v1/namespaces/default/pods/p/exec", headers=handshake)
    assert rebound.status_code == 400 and rebound.json()["kind"] == "Status"
    assert local.status_code == 404 and local.json()["reason"] == "NotFound"  # the pod, past the Host check


@pytest.mark.parametrize("source", ["file", "environment"])
def test_the_token_comes_from_a_file_or_the_environment_not_the_command_line(tmp_path: Path, source: str) -> None:
    secret = "t0ken-from-" + source
    token_file = tmp_path / "token"
    token_file.write_text(secret + "\n")
    args = ["--token-file", str(token_file)] if source == "file" else []
    previous = os.environ.get("LIFECYCLE_TCK_TOKEN")
    if source == "environment":
        os.environ["LIFECYCLE_TCK_TOKEN"] = secret
    try:
        for running in serve_process(tmp_path, "--controllers", "none", *args):
            command_line = Path(f"/proc/{running.process.pid}/cmdline").read_bytes()
            with running.http() as anonymous:
                refused = anonymous.get("/api/v1/namespaces")
            with running.http(headers={"Authorization": f"Bearer {secret}"}) as http:
                allowed = http.get("/api/v1/namespaces")
            namespaces = running.kubectl("get", "ns", "-o", "name").stdout.split()
    finally:
        if source == "environment":
            if previous is None:
                os.environ.pop("LIFECYCLE_TCK_TOKEN", None)
            else:
                os.environ["LIFECYCLE_TCK_TOKEN"] = previous
    assert secret.encode() not in command_line
    assert refused.status_code == 401 and allowed.status_code == 200
    assert "namespace/default" in namespaces  # kubectl gets the token from the kubeconfig, over TLS


def test_sigterm_stops_serve_within_a_second_in_the_middle_of_a_month_long_advance(served: ServeProcess) -> None:
    with served.http() as http:
        start = http.get("/harness/v1/clock").json()["unix"]
    outcome: list[object] = []

    def advance() -> None:
        try:
            with served.http(timeout=REQUEST_TIMEOUT) as http:
                outcome.append(http.post("/harness/v1/clock/advance", json={"seconds": MAX_ADVANCE_SECONDS}))
        except httpx.HTTPError as err:  # the server went away mid-request: as good as a 503
            outcome.append(err)

    runner = threading.Thread(target=advance)
    runner.start()
    try:
        with served.http() as http:
            # The advance has begun once the clock has moved well beyond wall time.
            assert eventually(lambda: http.get("/harness/v1/clock").json()["unix"] > start + 3600,
                              timeout=REQUEST_TIMEOUT)
            assert runner.is_alive(), "the advance ended before the signal could interrupt it"
            health = http.get("/healthz", timeout=1.0)
        began = time.monotonic()
        served.process.send_signal(signal.SIGTERM)
        code = served.process.wait(REQUEST_TIMEOUT)
        took = time.monotonic() - began
    finally:
        runner.join(REQUEST_TIMEOUT)
    assert health.status_code == 200
    assert code == 0 and took < STOP_WITHIN_SECONDS, f"serve took {took:.2f}s to stop"
    answer = outcome[0]
    assert not isinstance(answer, httpx.Response) or answer.status_code == 503


def test_the_python_clients_reach_a_fresh_serve_over_https_with_the_kubeconfig_alone(served: ServeProcess) -> None:
    from kubernetes import client, config
    from lightkube import Client, KubeConfig
    from lightkube.resources.core_v1 import ServiceAccount

    api = client.CoreV1Api(config.new_client_from_config(str(served.kubeconfig)))
    try:
        node = api.read_node("lifecycle-tck-node-1")
        created = api.create_namespace({"metadata": {"name": "team-a"}})
    finally:
        api.api_client.close()
    lightkube = Client(config=KubeConfig.from_file(served.kubeconfig))
    assert [c.status for c in node.status.conditions if c.type == "Ready"] == ["True"]
    assert created.metadata.name == "team-a"
    assert eventually(lambda: any(sa.metadata.name == "default" for sa in lightkube.list(ServiceAccount,
                                                                                         namespace="team-a")))
