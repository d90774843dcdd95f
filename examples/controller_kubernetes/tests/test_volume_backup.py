"""The volume-backup controller against the Lifecycle TCK's fake API server, through its pytest
plugin: ``kube_server`` serves a world with Cluster API's Machine kind, the controller runs in a
thread with the ``kubernetes`` client on ``kube_server.kubeconfig``; the audit trail shows the order
of its writes. ``kube_world`` checks one reconcile without any HTTP."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import volume_backup  # noqa: E402  (the controller under test, beside this folder)

GROUP, VERSION, PLURAL = "cluster.x-k8s.io", "v1beta1", "machines"
OTHER_HOOK = "pre-terminate.delete.hook.machine.cluster.x-k8s.io/someone-else"
WAIT_SECONDS = 30
STOP_SECONDS = 40

pytestmark = pytest.mark.kube_controllers("none")  # only the API server: no reference controller


def machine(name: str, annotations: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "Machine",
        "metadata": {"name": name, "namespace": "default", "annotations": annotations,
                     "finalizers": ["machine.cluster.x-k8s.io"]},
        "spec": {"clusterName": "c1", "bootstrap": {"dataSecretName": "bootstrap"},
                 "infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                                       "kind": "FakeMachine", "name": name}},
    }


@pytest.fixture
def api(kube_server: Any) -> Iterator[kubernetes.client.CustomObjectsApi]:
    """The kube_server's API, with the controller running against it."""
    api_client = kubernetes.config.new_client_from_config(config_file=str(kube_server.kubeconfig))
    stop = threading.Event()
    runner = threading.Thread(target=volume_backup.run, args=(stop, api_client), daemon=True)
    runner.start()
    yield kubernetes.client.CustomObjectsApi(api_client)
    stop.set()
    kube_server.client().create(machine("wake-up", {}))  # an event on its watch lets the controller see stop
    runner.join(STOP_SECONDS)


def wait_released(api: kubernetes.client.CustomObjectsApi, name: str) -> dict[str, Any]:
    """The Machine once its volume-backup hook is gone: read on a watch, no polling."""
    current = api.get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, name)
    if volume_backup.HOOK not in current["metadata"].get("annotations", {}):
        return current
    stream = kubernetes.watch.Watch()
    for event in stream.stream(api.list_namespaced_custom_object, GROUP, VERSION, "default", PLURAL,
                               field_selector=f"metadata.name={name}", timeout_seconds=WAIT_SECONDS,
                               resource_version=current["metadata"]["resourceVersion"]):
        if volume_backup.HOOK not in event["object"]["metadata"].get("annotations", {}):
            stream.stop()
            return event["object"]
    raise AssertionError(f"Machine {name} kept its hook for {WAIT_SECONDS} s")


def test_the_hook_goes_only_after_the_backup(api: kubernetes.client.CustomObjectsApi, kube_server: Any) -> None:
    hooks = {volume_backup.HOOK: volume_backup.OWNER, OTHER_HOOK: "someone-else"}
    api.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, machine("m1", hooks))
    api.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "m1")
    released = wait_released(api, "m1")
    assert released["metadata"]["annotations"] == {OTHER_HOOK: "someone-else"}
    writes = [(r["verb"], r["resource"].split(".")[0], r["name"]) for r in kube_server.audit(namespace="default")]
    assert writes.index(("create", "configmaps", "backup-m1")) < writes.index(("patch", "machines", "m1"))


def test_a_machine_that_is_not_deleting_keeps_its_hook(kube_world: Any) -> None:
    """One reconcile in-process: kube_world's client speaks the same API, on a virtual clock."""
    client = kube_world.client()
    client.create(machine("m2", {volume_backup.HOOK: volume_backup.OWNER}))
    kube_world.advance(600)
    assert client.get(f"{GROUP}/{VERSION}", "Machine", "m2", "default")["metadata"]["annotations"] == {
        volume_backup.HOOK: volume_backup.OWNER}
    assert not kube_world.audit(verb="create", resource="configmaps")
