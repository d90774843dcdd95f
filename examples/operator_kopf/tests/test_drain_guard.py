"""The drain-guard operator against the Lifecycle TCK's fake API server, through its pytest plugin:
``kube_server`` (no conftest needed) serves a world with Cluster API's Machine kind; the marker
``kube_export_kubeconfig`` points KUBECONFIG at it, so kopf and the client find it as on a real cluster."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes
import pytest
from kopf.testing import KopfRunner

OPERATOR = Path(__file__).resolve().parent.parent / "drain_guard.py"
GROUP, VERSION, PLURAL = "cluster.x-k8s.io", "v1beta1", "machines"
HOOK = "pre-drain.delete.hook.machine.cluster.x-k8s.io/drain-guard"
OTHER_HOOK = "pre-drain.delete.hook.machine.cluster.x-k8s.io/someone-else"
WAIT_SECONDS = 30

# Only the API server (with its CRDs): no reference machine controller acts on these Machines.
pytestmark = [pytest.mark.kube_controllers("none"), pytest.mark.kube_export_kubeconfig]


def machine(name: str, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "Machine",
        "metadata": {"name": name, "namespace": "default", "labels": {"app.example.com/drain-guard": "true"},
                     "annotations": annotations or {}, "finalizers": ["machine.cluster.x-k8s.io"]},
        "spec": {"clusterName": "c1", "bootstrap": {"dataSecretName": "bootstrap"},
                 "infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                                       "kind": "FakeMachine", "name": name}},
    }


def wait_for(api: kubernetes.client.CustomObjectsApi, name: str, condition: Any) -> dict[str, Any]:
    """The Machine once ``condition`` holds for it: read on a watch, so no polling and no sleeps."""
    current = api.get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, name)
    if condition(current):
        return current
    stream = kubernetes.watch.Watch()
    for event in stream.stream(api.list_namespaced_custom_object, GROUP, VERSION, "default", PLURAL,
                               field_selector=f"metadata.name={name}", timeout_seconds=WAIT_SECONDS,
                               resource_version=current["metadata"]["resourceVersion"]):
        if condition(event["object"]):
            stream.stop()
            return event["object"]
    raise AssertionError(f"Machine {name}: the condition did not hold within {WAIT_SECONDS} s")


@pytest.fixture
def api(kube_server: Any) -> Iterator[kubernetes.client.CustomObjectsApi]:
    kubernetes.config.load_kube_config(config_file=str(kube_server.kubeconfig))
    with KopfRunner(["run", "--standalone", "--namespace", "default", str(OPERATOR)]) as runner:
        yield kubernetes.client.CustomObjectsApi()
    assert runner.exit_code == 0, runner.output


def annotations(obj: dict[str, Any]) -> dict[str, str]:
    return obj["metadata"].get("annotations") or {}


def test_the_operator_adds_its_hook_to_a_selected_machine(api: kubernetes.client.CustomObjectsApi) -> None:
    api.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, machine("m1"))
    assert wait_for(api, "m1", lambda m: HOOK in annotations(m))


def test_a_deleting_machine_loses_only_the_operators_hook(
    api: kubernetes.client.CustomObjectsApi, kube_server: Any
) -> None:
    api.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL,
                                        machine("m1", {HOOK: "drain-guard", OTHER_HOOK: "someone-else"}))
    api.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "m1")
    released = wait_for(api, "m1", lambda m: HOOK not in annotations(m))
    assert annotations(released)[OTHER_HOOK] == "someone-else"
    # The operator did its work before it let the Machine go: the audit trail has both writes, in order.
    writes = [(r["verb"], r["resource"].split(".")[0]) for r in kube_server.audit(namespace="default")]
    last_patch = max(i for i, write in enumerate(writes) if write == ("patch", "machines"))
    assert ("create", "configmaps") in writes[:last_patch]
