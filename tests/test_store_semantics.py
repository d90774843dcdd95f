"""Object metadata as the apiserver stores it."""

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
