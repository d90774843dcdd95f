"""Behaviour of the kubelet simulator: pod start, readiness, completion, termination, node health, volumes."""

from __future__ import annotations

from typing import Any

import pytest

from harness.client import InProcessClient
from harness.kube.errors import StatusError
from harness.kube.names.core import DEFAULT_NAMESPACE, UNSCHEDULABLE_TAINT
from harness.kube.names.storage import CSI_UNIQUE_NAME
from harness.world.kubelet import (
    NOT_READY_TAINT,
    UNREACHABLE_TAINT,
    Kubelet,
    pod_condition,
    pod_csi_volumes,
    pod_is_ready,
)
from harness.world.world import World


def make_world() -> tuple[World, InProcessClient, Kubelet]:
    world = World(simulators=["kubelet"])
    client = world.client()
    client.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    world.settle()
    return world, client, world.simulator("kubelet")


def run_pod(
    client: InProcessClient, name: str = "p", *, node: str = "n1", annotations: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": DEFAULT_NAMESPACE, "annotations": annotations or {}},
        "spec": {"nodeName": node, "containers": [{"name": "app", "image": "nginx:1.27"}], **spec},
    }
    return client.create(body)


def get_pod(client: InProcessClient, name: str = "p") -> dict[str, Any]:
    return client.get("v1", "Pod", name, DEFAULT_NAMESPACE)


def exists(client: InProcessClient, name: str = "p") -> bool:
    try:
        get_pod(client, name)
    except StatusError as err:
        assert err.code == 404
        return False
    return True


def node_condition(client: InProcessClient, node: str, condition_type: str) -> dict[str, Any]:
    conditions = client.get("v1", "Node", node)["status"]["conditions"]
    return next(c for c in conditions if c["type"] == condition_type)


def taint_keys(client: InProcessClient, node: str) -> list[str]:
    return [t["key"] for t in client.get("v1", "Node", node)["spec"].get("taints") or []]


# -- starting and readiness --------------------------------------------------------------------------


def test_bound_pod_runs_with_the_status_a_kubelet_writes() -> None:
    world, client, _ = make_world()
    run_pod(client)
    world.settle()
    status = get_pod(client)["status"]
    assert status["phase"] == "Running"
    assert status["podIP"].startswith("10.244.") and status["podIPs"] == [{"ip": status["podIP"]}]
    assert status["hostIP"] == "172.18.0.2"
    assert status["startTime"] == "2026-01-01T00:00:00Z"
    assert [c["type"] for c in status["conditions"]] == [
        "PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"]
    assert all(c["status"] == "True" for c in status["conditions"])
    (container,) = status["containerStatuses"]
    assert container["name"] == "app" and container["image"] == "docker.io/library/nginx:1.27"
    assert container["ready"] is True and container["started"] is True and container["restartCount"] == 0
    assert container["state"] == {"running": {"startedAt": "2026-01-01T00:00:00Z"}}
    assert container["containerID"].startswith("containerd://")


def test_pod_becomes_ready_after_the_annotated_delay_and_not_before() -> None:
    world, client, _ = make_world()
    run_pod(client, annotations={"harness.test/ready-delay": "30s"})
    world.settle()
    assert get_pod(client)["status"]["phase"] == "Running"
    world.advance(29)
    assert not pod_is_ready(get_pod(client))
    world.advance(1)
    pod = get_pod(client)
    assert pod_is_ready(pod)
    assert pod_condition(pod, "Ready")["lastTransitionTime"] == "2026-01-01T00:00:30Z"


def test_ready_delay_knob_applies_to_pods_without_the_annotation() -> None:
    world, client, kubelet = make_world()
    kubelet.ready_delay = 10.0
    run_pod(client)
    world.advance(9)
    assert not pod_is_ready(get_pod(client))
    world.advance(1)
    assert pod_is_ready(get_pod(client))


def test_never_ready_pod_keeps_running_without_becoming_ready() -> None:
    world, client, _ = make_world()
    run_pod(client, annotations={"harness.test/never-ready": "true"})
    world.advance(3600)
    pod = get_pod(client)
    assert pod["status"]["phase"] == "Running"
    assert pod_condition(pod, "Ready")["reason"] == "ContainersNotReady"
    assert pod_condition(pod, "Ready")["message"] == "containers with unready status: [app]"


def test_pod_on_a_missing_node_is_left_alone() -> None:
    world, client, _ = make_world()
    run_pod(client, node="ghost")
    world.advance(60)
    assert get_pod(client)["status"] == {"phase": "Pending", "qosClass": "BestEffort"}


# -- pods that finish --------------------------------------------------------------------------------


def test_pod_with_run_seconds_succeeds_after_running_that_long() -> None:
    world, client, _ = make_world()
    run_pod(client, restartPolicy="Never", annotations={"harness.test/run-seconds": "1m"})
    world.advance(59)
    assert get_pod(client)["status"]["phase"] == "Running"
    world.advance(1)
    status = get_pod(client)["status"]
    assert status["phase"] == "Succeeded"
    terminated = status["containerStatuses"][0]["state"]["terminated"]
    assert terminated["exitCode"] == 0 and terminated["reason"] == "Completed"
    assert terminated["finishedAt"] == "2026-01-01T00:01:00Z"
    assert pod_condition(get_pod(client), "Ready")["reason"] == "PodCompleted"


def test_pod_with_a_non_zero_exit_code_fails() -> None:
    world, client, _ = make_world()
    run_pod(client, restartPolicy="Never",
            annotations={"harness.test/run-seconds": "5s", "harness.test/exit-code": "3"})
    world.advance(5)
    status = get_pod(client)["status"]
    assert status["phase"] == "Failed"
    assert status["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 3


def test_always_restarted_container_crash_loops_with_back_off() -> None:
    world, client, _ = make_world()
    run_pod(client, annotations={"harness.test/run-seconds": "5s", "harness.test/exit-code": "1"})
    world.advance(5)
    status = get_pod(client)["status"]
    assert status["phase"] == "Running"
    assert status["containerStatuses"][0]["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    world.advance(10)
    container = get_pod(client)["status"]["containerStatuses"][0]
    assert container["restartCount"] == 1 and "running" in container["state"]
    assert container["lastState"]["terminated"]["exitCode"] == 1


# -- termination -------------------------------------------------------------------------------------


def test_graceful_deletion_ends_when_the_grace_period_does() -> None:
    world, client, _ = make_world()
    run_pod(client, terminationGracePeriodSeconds=45)
    world.settle()
    client.delete("v1", "Pod", "p", DEFAULT_NAMESPACE)
    world.advance(44)
    assert exists(client)
    world.advance(1)
    assert not exists(client)


def test_final_delete_is_the_kubelets_with_grace_zero_after_a_terminal_status() -> None:
    world, client, _ = make_world()
    run_pod(client, terminationGracePeriodSeconds=10)
    world.settle()
    client.delete("v1", "Pod", "p", DEFAULT_NAMESPACE)
    world.advance(10)
    writes = world.audit.query(resource="pods", name="p", since=0)
    status_write, final_delete = writes[-2:]
    assert (status_write.subresource, status_write.new["status"]["phase"]) == ("status", "Failed")
    assert status_write.new["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 137
    assert (final_delete.verb, final_delete.user, final_delete.new) == (
        "delete", "system:serviceaccount:kube-system:kubelet", None)


def test_shutdown_seconds_ends_termination_before_the_grace_period() -> None:
    world, client, _ = make_world()
    run_pod(client, annotations={"harness.test/shutdown-seconds": "5s"})
    world.settle()
    client.delete("v1", "Pod", "p", DEFAULT_NAMESPACE)
    world.advance(4)
    assert exists(client)
    world.advance(1)
    assert not exists(client)


def test_ignore_termination_keeps_the_pod_forever() -> None:
    world, client, _ = make_world()
    run_pod(client, terminationGracePeriodSeconds=5, annotations={"harness.test/ignore-termination": "true"})
    world.settle()
    client.delete("v1", "Pod", "p", DEFAULT_NAMESPACE)
    world.advance(3600)
    pod = get_pod(client)
    assert pod["metadata"]["deletionTimestamp"] == "2026-01-01T00:00:05Z"
    assert pod["status"]["phase"] == "Running"


def test_terminal_pod_held_by_a_finalizer_is_deleted_at_once_when_released() -> None:
    world, client, _ = make_world()
    run_pod(client, restartPolicy="Never", annotations={"harness.test/run-seconds": "1s"})
    client.patch("v1", "Pod", "p", {"metadata": {"finalizers": ["example.com/hold"]}}, namespace=DEFAULT_NAMESPACE)
    world.advance(1)
    client.delete("v1", "Pod", "p", DEFAULT_NAMESPACE)
    world.settle()
    assert get_pod(client)["metadata"]["deletionGracePeriodSeconds"] == 0
    client.patch("v1", "Pod", "p", {"metadata": {"finalizers": None}}, namespace=DEFAULT_NAMESPACE)
    world.settle()
    assert not exists(client)


# -- node health -------------------------------------------------------------------------------------


def test_node_gets_the_status_a_kubelet_posts() -> None:
    _, client, _ = make_world()
    node = client.get("v1", "Node", "n1")
    status = node["status"]
    assert status["nodeInfo"]["kubeletVersion"] == "v1.32.0"
    assert status["capacity"]["pods"] == "110" and status["allocatable"]["cpu"] == "4"
    assert {"type": "InternalIP", "address": "172.18.0.2"} in status["addresses"]
    ready = node_condition(client, "n1", "Ready")
    assert (ready["status"], ready["reason"], ready["message"]) == (
        "True", "KubeletReady", "kubelet is posting ready status")
    assert node["metadata"]["labels"]["kubernetes.io/hostname"] == "n1"


def test_node_status_fields_given_at_creation_are_kept() -> None:
    world = World(simulators=["kubelet"])
    client = world.client()
    client.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                   "status": {"addresses": [{"type": "InternalIP", "address": "10.9.9.9"}]}})
    client.patch("v1", "Node", "n1", {"status": {"addresses": [{"type": "InternalIP", "address": "10.9.9.9"}]}},
                 subresource="status")
    world.settle()
    assert client.get("v1", "Node", "n1")["status"]["addresses"] == [{"type": "InternalIP", "address": "10.9.9.9"}]


def test_unknown_node_gets_unreachable_taint_and_its_pods_never_finish() -> None:
    world, client, kubelet = make_world()
    run_pod(client, terminationGracePeriodSeconds=10)
    world.settle()
    kubelet.set_node_health("n1", "Unknown")
    world.settle()
    ready = node_condition(client, "n1", "Ready")
    assert (ready["status"], ready["reason"], ready["message"]) == (
        "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.")
    assert UNREACHABLE_TAINT in taint_keys(client, "n1")
    assert not pod_is_ready(get_pod(client))
    client.delete("v1", "Pod", "p", DEFAULT_NAMESPACE)
    world.advance(600)
    assert exists(client)


def test_pod_bound_to_an_unknown_node_never_becomes_ready() -> None:
    world, client, kubelet = make_world()
    kubelet.set_node_health("n1", "Unknown")
    world.settle()
    run_pod(client)
    world.advance(600)
    assert get_pod(client)["status"]["phase"] == "Pending"


def test_node_health_annotation_makes_a_node_not_ready() -> None:
    world, client, _ = make_world()
    client.patch("v1", "Node", "n1", {"metadata": {"annotations": {"harness.test/node-health": "False"}}})
    world.settle()
    ready = node_condition(client, "n1", "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "KubeletNotReady")
    assert NOT_READY_TAINT in taint_keys(client, "n1")


def test_recovered_node_loses_its_taint_and_its_pods_are_ready_again() -> None:
    world, client, kubelet = make_world()
    run_pod(client)
    world.settle()
    kubelet.set_node_health("n1", "False")
    world.settle()
    assert not pod_is_ready(get_pod(client))
    kubelet.set_node_health("n1", "True")
    world.settle()
    assert taint_keys(client, "n1") == []
    assert node_condition(client, "n1", "Ready")["status"] == "True"
    assert pod_is_ready(get_pod(client))


def test_cordoned_node_gets_the_unschedulable_taint() -> None:
    world, client, _ = make_world()
    client.patch("v1", "Node", "n1", {"spec": {"unschedulable": True}})
    world.settle()
    assert taint_keys(client, "n1") == [UNSCHEDULABLE_TAINT]


def test_unknown_health_value_is_refused() -> None:
    _, _, kubelet = make_world()
    with pytest.raises(ValueError):
        kubelet.set_node_health("n1", "Maybe")


# -- volumes -----------------------------------------------------------------------------------------


def make_volume(client: InProcessClient, name: str = "data", driver: str = "ebs.csi.aws.com",
                handle: str = "vol-1") -> None:
    client.create({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": f"pv-{name}"},
                   "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                            "csi": {"driver": driver, "volumeHandle": handle}}})
    client.create(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": DEFAULT_NAMESPACE},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "volumeName": f"pv-{name}",
                "resources": {"requests": {"storage": "1Gi"}},
            },
        }
    )


def pvc_pod(client: InProcessClient, **kwargs: Any) -> dict[str, Any]:
    return run_pod(client, volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}], **kwargs)


def attach(client: InProcessClient, *names: str) -> None:
    body = {"status": {"volumesAttached": [{"name": n, "devicePath": ""} for n in names]}}
    client.patch("v1", "Node", "n1", body, subresource="status")


def test_pod_csi_volumes_resolves_claims_to_bound_csi_volumes() -> None:
    _, client, _ = make_world()
    make_volume(client)
    pod = pvc_pod(client, node="nowhere")
    assert pod_csi_volumes(client, pod) == [("ebs.csi.aws.com", "vol-1", "pv-data")]


def test_pod_waits_in_container_creating_until_its_volume_is_attached() -> None:
    world, client, _ = make_world()
    make_volume(client)
    pvc_pod(client)
    world.advance(60)
    volume = CSI_UNIQUE_NAME.format(driver="ebs.csi.aws.com", handle="vol-1")
    status = get_pod(client)["status"]
    assert status["phase"] == "Pending"
    assert status["containerStatuses"][0]["state"] == {"waiting": {"reason": "ContainerCreating"}}
    # Reported in use as soon as the pod needs it, as the kubelet's volume manager does.
    assert client.get("v1", "Node", "n1")["status"]["volumesInUse"] == [volume]
    attach(client, volume)
    world.settle()
    assert get_pod(client)["status"]["phase"] == "Running"


def test_volume_stays_in_use_until_the_pod_is_gone() -> None:
    world, client, _ = make_world()
    make_volume(client)
    volume = CSI_UNIQUE_NAME.format(driver="ebs.csi.aws.com", handle="vol-1")
    attach(client, volume)
    pvc_pod(client, terminationGracePeriodSeconds=10)
    world.settle()
    assert get_pod(client)["status"]["phase"] == "Running"
    client.delete("v1", "Pod", "p", DEFAULT_NAMESPACE)
    world.advance(9)
    assert client.get("v1", "Node", "n1")["status"]["volumesInUse"] == [volume]
    world.advance(1)
    assert "volumesInUse" not in client.get("v1", "Node", "n1")["status"]


def test_volume_is_released_when_the_pod_completes() -> None:
    world, client, _ = make_world()
    make_volume(client)
    attach(client, CSI_UNIQUE_NAME.format(driver="ebs.csi.aws.com", handle="vol-1"))
    pvc_pod(client, restartPolicy="Never", annotations={"harness.test/run-seconds": "30s"})
    world.advance(30)
    assert get_pod(client)["status"]["phase"] == "Succeeded"
    assert "volumesInUse" not in client.get("v1", "Node", "n1")["status"]


# -- scale -------------------------------------------------------------------------------------------


def test_many_pods_start_without_listing_every_pod() -> None:
    world, client, _ = make_world()
    for i in range(300):
        run_pod(client, f"p{i}")
    world.settle()
    assert all(p["status"]["phase"] == "Running" for p in client.list("v1", "Pod", DEFAULT_NAMESPACE)["items"])
    assert not world.errors()
