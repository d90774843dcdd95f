"""The world's Cluster API providers (harness/world/providers/): fake infrastructure and bootstrap with their
knobs, and the minimal KubeadmControlPlane with its ``kcp-cleanup`` pre-terminate hook (seed 000, Story 1)."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from harness.kube.names.capi import (
    BOOTSTRAP_API_VERSION,
    CLUSTER_API_VERSION,
    CONTROL_PLANE_API_VERSION,
    INFRASTRUCTURE_API_VERSION,
)
from harness.kube.names.core import DEFAULT_NAMESPACE
from tests.test_machine_deletion import CLUSTER, WORKLOAD, CapiWorld

KCP_CLEANUP = "pre-terminate.delete.hook.machine.cluster.x-k8s.io/kcp-cleanup"


@pytest.fixture
def capi() -> CapiWorld:
    return CapiWorld()


def test_a_fake_cluster_gets_an_endpoint_and_is_ready(capi: CapiWorld) -> None:
    fake = capi.client.get(INFRASTRUCTURE_API_VERSION, "FakeCluster", CLUSTER, DEFAULT_NAMESPACE)
    assert fake["status"]["ready"] is True
    assert fake["spec"]["controlPlaneEndpoint"] == {"host": "c1.default.fake.invalid", "port": 6443}


def test_a_bootstrap_config_gets_its_data_secret(capi: CapiWorld) -> None:
    config = capi.client.get(BOOTSTRAP_API_VERSION, "FakeBootstrapConfig", "cp", DEFAULT_NAMESPACE)
    assert (config["status"]["ready"], config["status"]["dataSecretName"]) == (True, "cp")
    secret = capi.client.get("v1", "Secret", "cp", DEFAULT_NAMESPACE)
    assert secret["type"] == "cluster.x-k8s.io/secret"
    assert base64.b64decode(secret["data"]["format"]) == b"cloud-config"
    assert capi.get("cp")["spec"]["bootstrap"]["dataSecretName"] == "cp"


def test_the_provision_delay_holds_the_instance_and_its_node(capi: CapiWorld) -> None:
    capi.machine("m1", infra_annotations={"harness.test/provision-delay": "2m"})
    assert capi.get("m1")["status"]["phase"] == "Provisioning"
    assert not capi.node_exists("m1")
    capi.world.advance(120)
    machine = capi.get("m1")
    assert (machine["status"]["phase"], machine["status"]["nodeRef"]["name"]) == ("Running", "m1")
    node = capi.remote.get("v1", "Node", "m1")
    assert node["spec"]["providerID"] == "fake://default/m1"
    assert next(c for c in node["status"]["conditions"] if c["type"] == "Ready")["status"] == "True"


def test_an_existing_node_with_the_provider_id_is_adopted(capi: CapiWorld) -> None:
    capi.remote.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-a"},
                        "spec": {"providerID": "fake://default/m1"}})
    capi.world.settle()
    machine = capi.machine("m1")
    assert machine["status"]["nodeRef"]["name"] == "worker-a"
    assert not capi.node_exists("m1")


def test_a_control_plane_node_gets_the_control_plane_role(capi: CapiWorld) -> None:
    assert "node-role.kubernetes.io/control-plane" in capi.remote.get("v1", "Node", "cp")["metadata"]["labels"]


def test_the_node_is_deleted_by_the_machine_controller_not_the_provider(capi: CapiWorld) -> None:
    capi.machine("m1", infra_annotations={"harness.test/deletion-delay": "10s"})
    since = capi.delete("m1")
    capi.world.advance(10)
    assert not capi.client.list(
        INFRASTRUCTURE_API_VERSION, "FakeMachine", DEFAULT_NAMESPACE, field_selector="metadata.name=m1"
    )["items"]
    assert capi.node_exists("m1")  # the instance is gone; the bootstrap config goes next, then the Node
    capi.world.advance(5)
    deletes = [r.user for r in capi.world.audit.query(since=since, verb="delete", resource="nodes")]
    assert deletes == ["system:serviceaccount:kube-system:machine"]


def test_a_stuck_bootstrap_config_holds_the_machine(capi: CapiWorld) -> None:
    capi.machine("m1", bootstrap_annotations={"harness.test/deletion-stuck": "true"})
    capi.delete("m1")
    capi.world.advance(600)
    assert capi.deleting("m1")["message"] == "Waiting for FakeBootstrapConfig to be deleted"
    capi.client.patch(BOOTSTRAP_API_VERSION, "FakeBootstrapConfig", "m1",
                      {"metadata": {"annotations": {"harness.test/deletion-stuck": None}}}, namespace=DEFAULT_NAMESPACE)
    capi.world.advance(5)
    assert not capi.exists("m1")


# -- KubeadmControlPlane -----------------------------------------------------------------------------------


def _kcp_world(replicas: int = 1, version: str = "v1.31.0") -> CapiWorld:
    capi = CapiWorld(control_plane=False)
    capi.client.create({"apiVersion": INFRASTRUCTURE_API_VERSION, "kind": "FakeMachineTemplate",
                        "metadata": {"name": "cp-1", "namespace": DEFAULT_NAMESPACE},
                        "spec": {"template": {"spec": {}}}})
    capi.client.patch(
        CLUSTER_API_VERSION,
        "Cluster",
        CLUSTER,
        {
            "spec": {
                "controlPlaneRef": {
                    "apiVersion": CONTROL_PLANE_API_VERSION,
                    "kind": "KubeadmControlPlane",
                    "name": "cp",
                    "namespace": DEFAULT_NAMESPACE,
                }
            }
        },
        namespace=DEFAULT_NAMESPACE,
    )
    capi.client.create({"apiVersion": CONTROL_PLANE_API_VERSION, "kind": "KubeadmControlPlane",
                        "metadata": {"name": "cp", "namespace": DEFAULT_NAMESPACE,
                                     "labels": {"cluster.x-k8s.io/cluster-name": CLUSTER}},
                        "spec": {"replicas": replicas, "version": version, "kubeadmConfigSpec": {},
                                 "machineTemplate": {"infrastructureRef": {"apiVersion": INFRASTRUCTURE_API_VERSION,
                                                                           "kind": "FakeMachineTemplate",
                                                                           "name": "cp-1"}}}})
    capi.world.settle()
    return capi


def _machines(capi: CapiWorld) -> list[dict[str, Any]]:
    return capi.client.list(CLUSTER_API_VERSION, "Machine", DEFAULT_NAMESPACE)["items"]


def test_kcp_machines_carry_the_cleanup_hook_and_join_etcd() -> None:
    kcp = _kcp_world(replicas=1)
    machines = _machines(kcp)
    assert len(machines) == 1
    machine = machines[0]
    assert machine["metadata"]["annotations"] == {KCP_CLEANUP: ""}
    assert machine["metadata"]["labels"]["cluster.x-k8s.io/control-plane-name"] == "cp"
    assert machine["status"]["phase"] == "Running"
    name = machine["metadata"]["name"]
    assert kcp.world.simulator("kubeadm-control-plane").etcd_members(DEFAULT_NAMESPACE, CLUSTER) == [name]
    status = kcp.client.get(CONTROL_PLANE_API_VERSION, "KubeadmControlPlane", "cp", DEFAULT_NAMESPACE)["status"]
    assert (status["replicas"], status["readyReplicas"], status["ready"]) == (1, 1, True)


def test_story_1_a_replacement_joins_before_the_old_instance_is_removed() -> None:
    kcp = _kcp_world(replicas=1)
    old = _machines(kcp)[0]["metadata"]["name"]
    since = len(kcp.world.audit)
    kcp.client.patch(
        CONTROL_PLANE_API_VERSION,
        "KubeadmControlPlane",
        "cp",
        {"spec": {"version": "v1.32.0"}},
        namespace=DEFAULT_NAMESPACE,
    )
    kcp.world.advance(30)
    names = [m["metadata"]["name"] for m in _machines(kcp)]
    assert old not in names and len(names) == 1
    new = names[0]
    records = kcp.world.audit.query(since=since)

    def position(cluster: str, verb: str, resource: str, name: str, subresource: str = "") -> int:
        return next(i for i, r in enumerate(records) if (r.cluster, r.verb, r.resource, r.subresource, r.name) == (
            cluster, verb, resource, subresource, name))

    joined = next(i for i, r in enumerate(records) if r.cluster == WORKLOAD and r.resource == "nodes"
                  and r.subresource == "status" and r.name == new)
    hook_removed = next(i for i, r in enumerate(records) if r.resource == "machines.cluster.x-k8s.io"
                        and r.verb == "patch" and r.name == old and r.user.endswith(":kubeadm-control-plane"))
    assert joined < position("management", "delete", "machines.cluster.x-k8s.io", old)
    assert hook_removed < position("management", "delete", "fakemachines.infrastructure.cluster.x-k8s.io", old)
    assert kcp.world.simulator("kubeadm-control-plane").etcd_members(DEFAULT_NAMESPACE, CLUSTER) == [new]
    assert _machines(kcp)[0]["spec"]["version"] == "v1.32.0"


def test_kcp_removes_its_hook_only_after_the_other_pre_terminate_hooks() -> None:
    kcp = _kcp_world(replicas=2)
    machines = _machines(kcp)
    victim = machines[0]["metadata"]["name"]
    kcp.annotate(victim, {"pre-terminate.delete.hook.machine.cluster.x-k8s.io/backup": ""})
    kcp.client.patch(
        CONTROL_PLANE_API_VERSION, "KubeadmControlPlane", "cp", {"spec": {"replicas": 1}}, namespace=DEFAULT_NAMESPACE
    )
    kcp.world.advance(120)
    deleting = [m for m in _machines(kcp) if m["metadata"].get("deletionTimestamp")]
    assert [m["metadata"]["name"] for m in deleting] == [victim]
    assert KCP_CLEANUP in deleting[0]["metadata"]["annotations"]
    assert kcp.deleting(victim)["reason"] == "WaitingForPreTerminateHook"
    kcp.annotate(victim, {"pre-terminate.delete.hook.machine.cluster.x-k8s.io/backup": None})
    kcp.world.advance(40)
    assert not kcp.exists(victim)
