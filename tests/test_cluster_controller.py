"""The reference Cluster controller: finalizer, conditions, owner references, the deletion cascade and
the BeforeClusterDelete gate of a Cluster with a managed topology (controllers/cluster)."""

from __future__ import annotations

from typing import Any

from controllers.cluster import conditions as ccond
from controllers.machine import conditions as cond
from harness.client import MERGE, find_in
from harness.kube.names.capi import (
    BOOTSTRAP_API_VERSION,
    CLUSTER_API_VERSION,
    CONTROL_PLANE_API_VERSION,
    CONTROL_PLANE_INITIALIZED,
    DELETING,
    INFRASTRUCTURE_API_VERSION,
    PAUSED,
)
from harness.kube.names.core import DEFAULT_NAMESPACE
from harness.kube.names.runtime_sdk import OK_TO_DELETE_ANNOTATION
from harness.world.world import World


def _world() -> World:
    # Without the topology controller nobody sets ok-to-delete: the gate's waiting state is observable.
    return World(controllers=["machine", "cluster", "machineset", "machinedeployment"])


def _machine(world: World, name: str, cluster: str, *, control_plane: bool = False) -> None:
    client = world.client()
    labels = {"cluster.x-k8s.io/cluster-name": cluster}
    for api_version, kind in (
        (BOOTSTRAP_API_VERSION, "FakeBootstrapConfig"),
        (INFRASTRUCTURE_API_VERSION, "FakeMachine"),
    ):
        client.create({"apiVersion": api_version, "kind": kind,
                       "metadata": {"name": name, "namespace": DEFAULT_NAMESPACE, "labels": labels}, "spec": {}})
    if control_plane:
        labels = {**labels, "cluster.x-k8s.io/control-plane": ""}
    client.create(
        {
            "apiVersion": CLUSTER_API_VERSION,
            "kind": "Machine",
            "metadata": {"name": name, "namespace": DEFAULT_NAMESPACE, "labels": labels},
            "spec": {
                "clusterName": cluster,
                "version": "v1.32.0",
                "bootstrap": {
                    "configRef": {"apiVersion": BOOTSTRAP_API_VERSION, "kind": "FakeBootstrapConfig", "name": name}
                },
                "infrastructureRef": {"apiVersion": INFRASTRUCTURE_API_VERSION, "kind": "FakeMachine", "name": name},
            },
        }
    )


def _cluster(world: World, name: str, spec: dict[str, Any] | None = None) -> dict[str, Any]:
    return world.client().create(
        {
            "apiVersion": CLUSTER_API_VERSION,
            "kind": "Cluster",
            "metadata": {"name": name, "namespace": DEFAULT_NAMESPACE},
            "spec": spec or {},
        }
    )


def _get(world: World, kind: str, name: str, api_version: str = CLUSTER_API_VERSION) -> dict[str, Any] | None:
    return find_in(world.client(), api_version, kind, name, DEFAULT_NAMESPACE)


def _deleting(obj: dict[str, Any] | None) -> dict[str, Any] | None:
    return cond.get_v1beta2(obj or {}, DELETING)


def test_cluster_gets_its_finalizer_phase_and_ready_summary() -> None:
    world = _world()
    _cluster(world, "c1")
    world.advance(5)
    cluster = _get(world, "Cluster", "c1")
    assert cluster is not None
    assert "cluster.cluster.x-k8s.io" in cluster["metadata"]["finalizers"]
    assert cluster["status"]["infrastructureReady"] is True
    assert cluster["status"]["phase"] == "Pending"
    assert cond.get(cluster, CONTROL_PLANE_INITIALIZED)["reason"] == ccond.MISSING_NODE_REF_REASON


def test_a_control_plane_machine_with_a_node_initializes_a_cluster_without_control_plane_object() -> None:
    world = _world()
    _cluster(world, "c1")
    world.advance(5)
    _machine(world, "cp-0", "c1", control_plane=True)
    world.advance(60)
    cluster = _get(world, "Cluster", "c1")
    assert cond.is_true(cluster or {}, CONTROL_PLANE_INITIALIZED)
    assert (cond.get_v1beta2(cluster or {}, CONTROL_PLANE_INITIALIZED) or {}).get("reason") == "Initialized"


def test_infrastructure_cluster_and_control_plane_are_owned_and_labelled_and_report_ready() -> None:
    world = _world()
    client = world.client()
    client.create(
        {
            "apiVersion": INFRASTRUCTURE_API_VERSION,
            "kind": "FakeMachineTemplate",
            "metadata": {"name": "t", "namespace": DEFAULT_NAMESPACE},
            "spec": {"template": {"spec": {}}},
        }
    )
    client.create(
        {
            "apiVersion": INFRASTRUCTURE_API_VERSION,
            "kind": "FakeCluster",
            "metadata": {"name": "c1-infra", "namespace": DEFAULT_NAMESPACE},
            "spec": {},
        }
    )
    client.create(
        {
            "apiVersion": CONTROL_PLANE_API_VERSION,
            "kind": "KubeadmControlPlane",
            "metadata": {"name": "c1-cp", "namespace": DEFAULT_NAMESPACE},
            "spec": {
                "replicas": 1,
                "version": "v1.32.0",
                "kubeadmConfigSpec": {},
                "machineTemplate": {
                    "infrastructureRef": {
                        "apiVersion": INFRASTRUCTURE_API_VERSION,
                        "kind": "FakeMachineTemplate",
                        "name": "t",
                    }
                },
            },
        }
    )
    _cluster(
        world,
        "c1",
        {
            "infrastructureRef": {"apiVersion": INFRASTRUCTURE_API_VERSION, "kind": "FakeCluster", "name": "c1-infra"},
            "controlPlaneRef": {
                "apiVersion": CONTROL_PLANE_API_VERSION,
                "kind": "KubeadmControlPlane",
                "name": "c1-cp",
            },
        },
    )
    world.advance(120)
    cluster = _get(world, "Cluster", "c1") or {}
    for api_version, kind, name in (
        (INFRASTRUCTURE_API_VERSION, "FakeCluster", "c1-infra"),
        (CONTROL_PLANE_API_VERSION, "KubeadmControlPlane", "c1-cp"),
    ):
        obj = _get(world, kind, name, api_version) or {}
        refs = obj["metadata"]["ownerReferences"]
        assert any(r["kind"] == "Cluster" and r["name"] == "c1" and r.get("controller") for r in refs)
        assert obj["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"] == "c1"
    assert cluster["status"]["phase"] == "Provisioned"
    assert cluster["status"]["controlPlaneReady"] is True
    assert cluster["spec"]["controlPlaneEndpoint"]["port"] == 6443
    assert cond.is_true(cluster, cond.READY) and cond.is_true(cluster, CONTROL_PLANE_INITIALIZED)


def test_topology_cluster_without_ok_to_delete_deletes_nothing_and_keeps_its_finalizer() -> None:
    world = _world()
    _cluster(world, "c1", {"topology": {"class": "cc", "version": "v1.32.0"}})
    world.advance(5)
    _machine(world, "m1", "c1")
    world.advance(60)
    world.client().delete(CLUSTER_API_VERSION, "Cluster", "c1", DEFAULT_NAMESPACE)
    world.advance(120)
    cluster = _get(world, "Cluster", "c1")
    assert cluster is not None and "cluster.cluster.x-k8s.io" in cluster["metadata"]["finalizers"]
    deleting = _deleting(cluster) or {}
    assert (deleting.get("status"), deleting.get("reason"), deleting.get("message")) == (
        "True", "WaitingForBeforeDeleteHook", "Waiting for BeforeClusterDelete hook")
    assert not (_get(world, "Machine", "m1") or {})["metadata"].get("deletionTimestamp")
    world.client().patch(
        CLUSTER_API_VERSION,
        "Cluster",
        "c1",
        {"metadata": {"annotations": {OK_TO_DELETE_ANNOTATION: ""}}},
        namespace=DEFAULT_NAMESPACE,
        patch_type=MERGE,
    )
    world.advance(300)
    assert _get(world, "Cluster", "c1") is None and _get(world, "Machine", "m1") is None


def test_deleting_cluster_lists_the_workers_it_waits_for() -> None:
    world = _world()
    _cluster(world, "c1")
    world.advance(5)
    _machine(world, "cp-0", "c1", control_plane=True)
    _machine(world, "m1", "c1")
    world.advance(60)
    world.client().patch(
        CLUSTER_API_VERSION,
        "Machine",
        "m1",
        {"metadata": {"finalizers": ["example.com/hold"]}},
        namespace=DEFAULT_NAMESPACE,
        patch_type=MERGE,
    )
    world.client().delete(CLUSTER_API_VERSION, "Cluster", "c1", DEFAULT_NAMESPACE)
    world.advance(60)
    deleting = _deleting(_get(world, "Cluster", "c1")) or {}
    assert deleting.get("reason") == "WaitingForWorkersDeletion"
    assert deleting.get("message") == "* Worker Machines: m1"
    world.client().patch(
        CLUSTER_API_VERSION,
        "Machine",
        "m1",
        {"metadata": {"finalizers": None}},
        namespace=DEFAULT_NAMESPACE,
        patch_type=MERGE,
    )
    world.advance(60)
    assert _get(world, "Cluster", "c1") is None


def test_paused_cluster_gets_only_its_finalizer_and_paused_condition() -> None:
    world = _world()
    _cluster(world, "c1", {"paused": True})
    world.advance(5)
    cluster = _get(world, "Cluster", "c1") or {}
    assert "cluster.cluster.x-k8s.io" in cluster["metadata"]["finalizers"]
    paused = cond.get_v1beta2(cluster, PAUSED) or {}
    assert (paused.get("status"), paused.get("message")) == ("True", "Cluster spec.paused is set to true")
    assert "phase" not in cluster["status"]


def test_ready_summary_takes_the_most_severe_condition_in_the_listed_order() -> None:
    obj: dict[str, Any] = {"metadata": {}, "status": {}}
    cond.mark_false(obj, "A", "Slow", cond.SEVERITY_INFO, "info", 0)
    cond.mark_false(obj, "B", "Broken", cond.SEVERITY_WARNING, "warn", 0)
    cond.mark_true(obj, "C", 0)
    ccond.summarize(obj, ("A", "B", "C"), 0)
    ready = cond.get(obj, cond.READY) or {}
    assert (ready["status"], ready["reason"], ready["severity"], ready["message"]) == ("False", "Broken", "Warning",
                                                                                      "warn")
    true_beats_unknown: dict[str, Any] = {"metadata": {}, "status": {}}
    cond.mark_unknown(true_beats_unknown, "A", "Unsure", "", 0)
    cond.mark_true(true_beats_unknown, "B", 0)
    ccond.summarize(true_beats_unknown, ("A", "B"), 0)
    assert cond.is_true(true_beats_unknown, cond.READY)
