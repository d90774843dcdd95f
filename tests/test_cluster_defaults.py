"""What kube-controller-manager and admission give a fresh cluster, as ``serve`` runs them
(harness/world/cluster_defaults.py): the ``default`` ServiceAccount and ``kube-root-ca.crt`` in
every namespace, the storage protection finalizers and their release, Ready Nodes; and scenario
worlds that start without any of it."""

from __future__ import annotations

from typing import Any

import pytest

from harness.client import ApiError, find_in
from harness.world.cluster_defaults import (
    DEFAULT_SERVICE_ACCOUNT,
    PV_PROTECTION,
    PVC_PROTECTION,
    ROOT_CA_CONFIGMAP,
    add_nodes,
)
from harness.world.world import CLUSTER_DEFAULT_SIMULATORS, World

CA = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


@pytest.fixture
def world() -> World:
    made = World(simulators=[*CLUSTER_DEFAULT_SIMULATORS, "namespace"], controllers=[], crds=False)
    made.clusters.ca_pem = CA
    made.settle()
    return made


def _claim(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}


def _pod(name: str, claim: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "app", "image": "nginx"}],
                     "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]}}


def test_every_namespace_gets_the_default_service_account_and_the_root_ca(world: World) -> None:
    client = world.client()
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}})
    world.settle()
    for namespace in (*SYSTEM_NAMESPACES, "shop"):
        assert find_in(client, "v1", "ServiceAccount", DEFAULT_SERVICE_ACCOUNT, namespace) is not None, namespace
        ca = client.get("v1", "ConfigMap", ROOT_CA_CONFIGMAP, namespace)
        assert ca["data"] == {"ca.crt": CA.decode()}
        assert "kube-apiserver" in ca["metadata"]["annotations"]["kubernetes.io/description"]


def test_a_deleted_service_account_comes_back_and_an_edited_root_ca_is_reverted(world: World) -> None:
    client = world.client()
    client.delete("v1", "ServiceAccount", DEFAULT_SERVICE_ACCOUNT, "default")
    edited = client.get("v1", "ConfigMap", ROOT_CA_CONFIGMAP, "default")
    edited["data"] = {"ca.crt": "tampered"}
    client.update(edited)
    world.settle()
    assert find_in(client, "v1", "ServiceAccount", DEFAULT_SERVICE_ACCOUNT, "default") is not None
    assert client.get("v1", "ConfigMap", ROOT_CA_CONFIGMAP, "default")["data"]["ca.crt"] == CA.decode()


def test_a_claim_in_use_keeps_its_finalizer_until_its_pod_goes(world: World) -> None:
    client = world.client()
    created = client.create(_claim("data"))
    assert created["metadata"]["finalizers"] == [PVC_PROTECTION]
    client.create(_pod("app", "data"))
    client.delete("v1", "PersistentVolumeClaim", "data", "default")
    world.settle()
    held = client.get("v1", "PersistentVolumeClaim", "data", "default")
    assert held["metadata"]["deletionTimestamp"] and held["metadata"]["finalizers"] == [PVC_PROTECTION]
    client.delete("v1", "Pod", "app", "default", grace_period_seconds=0)
    world.settle()
    assert find_in(client, "v1", "PersistentVolumeClaim", "data", "default") is None


def test_a_claim_used_only_by_a_finished_pod_is_released(world: World) -> None:
    client = world.client()
    client.create(_claim("data"))
    pod = client.create(_pod("done", "data"))
    pod["status"] = {"phase": "Succeeded"}
    client.update_status(pod)
    client.delete("v1", "PersistentVolumeClaim", "data", "default")
    world.settle()
    assert find_in(client, "v1", "PersistentVolumeClaim", "data", "default") is None


def test_a_bound_volume_keeps_its_finalizer_until_it_is_released(world: World) -> None:
    client = world.client()
    volume = client.create({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
                            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                                     "hostPath": {"path": "/data"}}})
    assert volume["metadata"]["finalizers"] == [PV_PROTECTION]
    volume["status"] = {"phase": "Bound"}
    client.update_status(volume)
    client.delete("v1", "PersistentVolume", "pv1")
    world.settle()
    held = client.get("v1", "PersistentVolume", "pv1")
    assert held["metadata"]["finalizers"] == [PV_PROTECTION]
    held["status"] = {"phase": "Released"}
    client.update_status(held)
    world.settle()
    assert find_in(client, "v1", "PersistentVolume", "pv1") is None


def test_switched_off_protection_adds_no_finalizer(world: World) -> None:
    world.set_enabled("pvc-protection", False)
    assert "finalizers" not in world.client().create(_claim("data"))["metadata"]


def test_added_nodes_are_ready() -> None:
    world = World(simulators=[], controllers=[], crds=False)
    names = add_nodes(world.client(), 2, world.now())
    nodes = [world.client().get("v1", "Node", name) for name in names]
    assert names == ["lifecycle-tck-node-1", "lifecycle-tck-node-2"]
    for node in nodes:
        [ready] = [c for c in node["status"]["conditions"] if c["type"] == "Ready"]
        assert ready["status"] == "True" and node["status"]["allocatable"]["pods"] == "110"


def test_a_scenario_world_starts_without_the_cluster_defaults() -> None:
    world = World()
    world.settle()
    client = world.client()
    assert client.list("v1", "ServiceAccount", "default")["items"] == []
    assert client.list("v1", "Node")["items"] == []
    with pytest.raises(ApiError):
        client.get("v1", "ConfigMap", ROOT_CA_CONFIGMAP, "default")
    assert "finalizers" not in client.create(_claim("data"))["metadata"]
