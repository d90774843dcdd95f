"""``python -m controllers`` beside ``python -m harness serve``: the machine controller as a process of its own,
over HTTP, drives a Machine through its deletion; bad usage and signals end it cleanly."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.client import ApiError
from harness.client.http import HttpClient
from harness.kube.names.capi import CLUSTER_API_VERSION, INFRASTRUCTURE_API_VERSION
from harness.kube.names.core import DEFAULT_NAMESPACE
from harness.world.providers.objects import fake_cluster, fake_machine
from harness.world.world import MANAGEMENT_SIMULATORS, SIMULATORS
from tests.test_serve_cli import _start, _stop

HOOK = "pre-drain.delete.hook.machine.cluster.x-k8s.io/hic"
WAIT_SECONDS = 30.0


def _wait_for(client: HttpClient, condition: Callable[[], bool]) -> None:
    """Block until ``condition`` holds, woken by Machine events (or every 0.2 s), at most WAIT_SECONDS."""
    woke = threading.Event()
    stream = client.watch(CLUSTER_API_VERSION, "Machine", DEFAULT_NAMESPACE)
    stream.on_event = woke.set
    deadline = time.monotonic() + WAIT_SECONDS
    try:
        while time.monotonic() < deadline:
            stream.drain()
            if condition():
                return
            woke.wait(0.2)
            woke.clear()
    finally:
        stream.stop()
    raise AssertionError("condition not reached in time")


def _machine(client: HttpClient) -> dict | None:  # type: ignore[type-arg]
    try:
        return client.get(CLUSTER_API_VERSION, "Machine", "m1", DEFAULT_NAMESPACE)
    except ApiError as err:
        assert err.code == 404
        return None


def test_the_machine_controller_runs_as_a_process_against_a_served_world(tmp_path: Path) -> None:
    others = [n for n in list(SIMULATORS) + list(MANAGEMENT_SIMULATORS)]
    server, _url, kubeconfig = _start(["--kubeconfig", str(tmp_path / "kc"), "--controllers", ",".join(others)])
    controllers = subprocess.Popen([sys.executable, "-m", "controllers", "--kubeconfig", str(kubeconfig),
                                    "--only", "machine"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert controllers.stdout is not None
        assert controllers.stdout.readline().strip() == "Controllers: machine"
        client = HttpClient.from_kubeconfig(kubeconfig.read_text())
        for obj in fake_cluster("c1"):
            client.create(obj)
        for name, control_plane, annotations in (("cp", True, {}), ("m1", False, {HOOK: ""})):
            for obj in fake_machine(name, "c1", control_plane=control_plane, annotations=annotations):
                client.create(obj)
        _wait_for(client, lambda: ((_machine(client) or {}).get("status") or {}).get("nodeRef") is not None)
        client.delete(CLUSTER_API_VERSION, "Machine", "m1", DEFAULT_NAMESPACE)

        def deleting_reason() -> str:
            conditions = (((_machine(client) or {}).get("status") or {}).get("v1beta2") or {}).get("conditions") or []
            return next((c["reason"] for c in conditions if c["type"] == "Deleting"), "")

        _wait_for(client, lambda: deleting_reason() == "WaitingForPreDrainHook")
        client.patch(
            CLUSTER_API_VERSION,
            "Machine",
            "m1",
            {"metadata": {"annotations": {HOOK: None}}},
            namespace=DEFAULT_NAMESPACE,
        )
        _wait_for(client, lambda: _machine(client) is None)
        workload = client.for_kubeconfig(kubeconfig.read_text().replace("current-context: management",
                                                                         "current-context: default/c1"))
        assert [n["metadata"]["name"] for n in workload.list("v1", "Node")["items"]] == ["cp"]
    finally:
        controllers.send_signal(signal.SIGTERM)
        try:
            code = controllers.wait(15)
        finally:
            if controllers.poll() is None:
                controllers.kill()
        _stop(server)
    assert code == 0


@pytest.mark.parametrize("args,code,message", [
    (["--kubeconfig", "/nonexistent/kubeconfig"], 1, "cannot use /nonexistent/kubeconfig"),
    (["--kubeconfig", "/nonexistent/kubeconfig", "--only", "machine,nosuch"], 2, "unknown controller(s) nosuch"),
], ids=["missing-kubeconfig", "unknown-controller"])
def test_controllers_refuse_bad_arguments_with_a_clear_message(args: list[str], code: int, message: str) -> None:
    result = subprocess.run([sys.executable, "-m", "controllers", *args], capture_output=True, text=True, timeout=30)
    assert result.returncode == code
    assert message in result.stderr


def test_serve_knows_the_reference_controllers_by_name(tmp_path: Path) -> None:
    server, _url, kubeconfig = _start(["--kubeconfig", str(tmp_path / "kc"), "--controllers", "machine,fake-bootstrap"])
    try:
        client = HttpClient.from_kubeconfig(kubeconfig.read_text())
        client.create(
            {
                "apiVersion": CLUSTER_API_VERSION,
                "kind": "Cluster",
                "metadata": {"name": "c1", "namespace": DEFAULT_NAMESPACE},
            }
        )
        client.create(
            {
                "apiVersion": CLUSTER_API_VERSION,
                "kind": "Machine",
                "metadata": {"name": "m1", "namespace": DEFAULT_NAMESPACE},
                "spec": {
                    "clusterName": "c1",
                    "bootstrap": {"dataSecretName": "x"},
                    "infrastructureRef": {
                        "apiVersion": INFRASTRUCTURE_API_VERSION,
                        "kind": "FakeMachine",
                        "name": "m1",
                    },
                },
            }
        )
        _wait_for(client, lambda: "machine.cluster.x-k8s.io" in ((_machine(client) or {}).get("metadata") or {}).get(
            "finalizers", []))
    finally:
        assert _stop(server) == 0
