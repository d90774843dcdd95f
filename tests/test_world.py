"""The world as a whole: object metadata as the apiserver stores it, clusters coming and going."""

from __future__ import annotations

from harness.client import STRATEGIC
from harness.world.world import World


def test_removing_the_last_finalizer_leaves_no_empty_list() -> None:
    world = World(simulators=[])
    client = world.client()
    client.create({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "cm", "namespace": "default", "finalizers": ["example.com/keep"],
                                "labels": {}}})
    patched = client.patch("v1", "ConfigMap", "cm", {"metadata": {"$deleteFromPrimitiveList/finalizers":
                                                                   ["example.com/keep"]}},
                           namespace="default", patch_type=STRATEGIC)
    assert "finalizers" not in patched["metadata"]
    assert "labels" not in patched["metadata"]


def test_a_deleted_cluster_leaves_no_controllers_behind() -> None:
    world = World()
    client = world.client()
    before = len(world.manager.controllers)
    client.create({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
                   "metadata": {"name": "wl1", "namespace": "default"}, "spec": {}})
    world.settle()
    assert world.clusters.get("default/wl1") is not None
    assert len(world.manager.controllers) > before
    client.delete("cluster.x-k8s.io/v1beta1", "Cluster", "wl1", "default")
    world.advance(60)
    assert world.clusters.get("default/wl1") is None
    assert len(world.manager.controllers) == before
