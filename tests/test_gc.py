"""Behaviour of the garbage collector simulator (harness/world/gc.py): background, foreground and
orphan propagation over ownerReferences, as kube-controller-manager's garbage collector does it."""

from __future__ import annotations

from typing import Any

import pytest

from harness.client import ApiError, InProcessClient
from harness.world.gc import GarbageCollector
from harness.world.world import World
from tests.manifests import crd

CM = ("v1", "ConfigMap")


@pytest.fixture
def world() -> World:
    return World(simulators=["garbage-collector"])


@pytest.fixture
def client(world: World) -> InProcessClient:
    return world.client()


def ref(owner: dict[str, Any], *, block: bool = False, controller: bool = False) -> dict[str, Any]:
    out = {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
           "uid": owner["metadata"]["uid"]}
    if block:
        out["blockOwnerDeletion"] = True
    if controller:
        out["controller"] = True
    return out


def config_map(client: InProcessClient, name: str, namespace: str = "default", *owners: dict[str, Any],
               finalizers: list[str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if owners:
        meta["ownerReferences"] = list(owners)
    if finalizers:
        meta["finalizers"] = finalizers
    return client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta})


def exists(client: InProcessClient, api_version: str, kind: str, name: str, namespace: str | None = None) -> bool:
    try:
        client.get(api_version, kind, name, namespace)
    except ApiError as err:
        assert err.code == 404
        return False
    return True


def get_cm(client: InProcessClient, name: str, namespace: str = "default") -> dict[str, Any]:
    return client.get(*CM, name, namespace)


def drop_finalizers(client: InProcessClient, name: str, namespace: str = "default") -> None:
    client.patch(*CM, name, {"metadata": {"finalizers": None}}, namespace=namespace)


def test_background_deletion_removes_dependents_after_the_owner_is_gone(world: World, client: InProcessClient) -> None:
    owner = config_map(client, "owner")
    config_map(client, "child-1", "default", ref(owner))
    config_map(client, "child-2", "default", ref(owner, block=True))
    world.settle()
    assert exists(client, *CM, "child-1", "default")

    client.delete(*CM, "owner", "default")
    assert not exists(client, *CM, "owner", "default")
    world.settle()

    assert not exists(client, *CM, "child-1", "default")
    assert not exists(client, *CM, "child-2", "default")
    assert world.errors() == []


def test_dependents_of_a_live_owner_are_left_alone(world: World, client: InProcessClient) -> None:
    owner = config_map(client, "owner")
    config_map(client, "child", "default", ref(owner))
    world.settle()
    world.advance(3600)
    assert exists(client, *CM, "child", "default")


def test_foreground_deletion_keeps_the_owner_until_blocking_dependents_are_gone(
    world: World, client: InProcessClient
) -> None:
    owner = config_map(client, "owner")
    config_map(client, "child", "default", ref(owner, block=True), finalizers=["example.com/hold"])
    config_map(client, "free", "default", ref(owner))
    world.settle()

    client.delete(*CM, "owner", "default", propagation_policy="Foreground")
    world.settle()

    held = get_cm(client, "owner")
    assert held["metadata"]["deletionTimestamp"]
    assert held["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert get_cm(client, "child")["metadata"]["deletionTimestamp"]
    assert not exists(client, *CM, "free", "default")  # every dependent is deleted, not only blocking ones

    drop_finalizers(client, "child")
    world.settle()
    assert not exists(client, *CM, "child", "default")
    assert not exists(client, *CM, "owner", "default")


def test_foreground_deletion_removes_blocking_dependents_before_the_owner(
    world: World, client: InProcessClient
) -> None:
    owner = config_map(client, "owner")
    config_map(client, "child-1", "default", ref(owner, block=True))
    config_map(client, "child-2", "default", ref(owner, block=True))
    world.settle()

    client.delete(*CM, "owner", "default", propagation_policy="Foreground")
    world.settle()

    removed = [e.name for e in world.audit if e.new is None]
    assert removed.index("child-1") < removed.index("owner")
    assert removed.index("child-2") < removed.index("owner")


def test_foreground_deletion_cascades_in_the_foreground_through_dependents_with_dependents(
    world: World, client: InProcessClient
) -> None:
    owner = config_map(client, "owner")
    middle = config_map(client, "middle", "default", ref(owner, block=True))
    config_map(client, "leaf", "default", ref(middle, block=True), finalizers=["example.com/hold"])
    world.settle()

    client.delete(*CM, "owner", "default", propagation_policy="Foreground")
    world.settle()

    assert get_cm(client, "middle")["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert exists(client, *CM, "owner", "default")
    drop_finalizers(client, "leaf")
    world.settle()
    assert not exists(client, *CM, "middle", "default")
    assert not exists(client, *CM, "owner", "default")


def test_orphan_deletion_strips_owner_references_and_keeps_dependents(world: World, client: InProcessClient) -> None:
    owner = config_map(client, "owner")
    other = config_map(client, "other")
    config_map(client, "child", "default", ref(owner, controller=True))
    config_map(client, "shared", "default", ref(owner), ref(other))
    world.settle()

    client.delete(*CM, "owner", "default", propagation_policy="Orphan")
    world.settle()

    assert not exists(client, *CM, "owner", "default")
    assert "ownerReferences" not in get_cm(client, "child")["metadata"]
    assert [r["name"] for r in get_cm(client, "shared")["metadata"]["ownerReferences"]] == ["other"]
    marked = [e for e in world.audit if e.name == "owner" and e.new is not None and e.verb == "delete"]
    assert marked and "orphan" in marked[0].new["metadata"]["finalizers"]


def test_dependent_with_two_owners_survives_one_and_loses_the_dangling_reference(
    world: World, client: InProcessClient
) -> None:
    owner_a = config_map(client, "owner-a")
    owner_b = config_map(client, "owner-b")
    config_map(client, "shared", "default", ref(owner_a), ref(owner_b))
    world.settle()

    client.delete(*CM, "owner-a", "default")
    world.settle()

    shared = get_cm(client, "shared")
    assert [r["name"] for r in shared["metadata"]["ownerReferences"]] == ["owner-b"]

    client.delete(*CM, "owner-b", "default")
    world.settle()
    assert not exists(client, *CM, "shared", "default")


def test_owner_reference_to_another_namespace_counts_as_absent(world: World, client: InProcessClient) -> None:
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    owner = config_map(client, "owner", "other")
    config_map(client, "child", "default", ref(owner))
    config_map(client, "sibling", "other", ref(owner))
    world.settle()

    assert not exists(client, *CM, "child", "default")
    assert exists(client, *CM, "sibling", "other")
    assert exists(client, *CM, "owner", "other")


def test_owner_recreated_under_the_same_name_does_not_keep_dependents(world: World, client: InProcessClient) -> None:
    owner = config_map(client, "owner")
    world.settle()
    client.delete(*CM, "owner", "default")
    config_map(client, "owner")  # a namesake with a new uid
    config_map(client, "child", "default", ref(owner))
    world.settle()
    assert not exists(client, *CM, "child", "default")


def test_cluster_scoped_owner_of_a_namespaced_dependent_is_looked_up_cluster_wide(
    world: World, client: InProcessClient
) -> None:
    node = client.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    config_map(client, "lease", "default", ref(node))
    world.settle()
    world.advance(60)
    assert exists(client, *CM, "lease", "default")

    client.delete("v1", "Node", "n1")
    world.settle()
    assert not exists(client, *CM, "lease", "default")


def test_cluster_scoped_dependent_of_a_namespaced_owner_is_left_alone(world: World, client: InProcessClient) -> None:
    owner = config_map(client, "owner")
    client.create({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv", "ownerReferences": [
        ref(owner)]}, "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                               "hostPath": {"path": "/tmp"}}})
    client.delete(*CM, "owner", "default")
    world.settle()
    assert exists(client, "v1", "PersistentVolume", "pv")


def test_custom_resources_of_a_new_kind_are_collected(world: World, client: InProcessClient) -> None:
    client.create(crd("Widget"))
    world.settle()
    widget = client.create({"apiVersion": "example.com/v1", "kind": "Widget",
                            "metadata": {"name": "w", "namespace": "default"}})
    config_map(client, "child", "default", ref(widget))
    owned = client.create({"apiVersion": "example.com/v1", "kind": "Widget",
                           "metadata": {"name": "owned", "namespace": "default", "ownerReferences": [ref(widget)]}})
    world.settle()
    assert owned["metadata"]["uid"]

    client.delete("example.com/v1", "Widget", "w", "default", propagation_policy="Foreground")
    world.settle()
    assert not exists(client, *CM, "child", "default")
    assert not exists(client, "example.com/v1", "Widget", "owned", "default")
    assert not exists(client, "example.com/v1", "Widget", "w", "default")
    assert world.errors() == []


def test_graph_indexes_dependents_by_owner_uid(world: World, client: InProcessClient) -> None:
    owner = config_map(client, "owner")
    config_map(client, "child", "default", ref(owner))
    world.settle()
    gc: GarbageCollector = world.simulator("garbage-collector")
    assert gc.dependents_of(owner["metadata"]["uid"]) == [("v1", "ConfigMap", "default", "child")]


def test_background_collection_of_ten_thousand_pods(world: World, client: InProcessClient) -> None:
    rs = client.create({
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs", "namespace": "default"},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "x"}},
                 "template": {"metadata": {"labels": {"app": "x"}},
                              "spec": {"containers": [{"name": "c", "image": "i"}]}}},
    })
    owner = ref(rs, block=True, controller=True)
    for i in range(10_000):
        client.create({"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"name": f"p{i}", "namespace": "default", "ownerReferences": [owner]},
                       "spec": {"containers": [{"name": "c", "image": "i"}]}})
    world.settle()

    gets = 0
    real_get = client.get

    def counting_get(*args: Any, **kwargs: Any) -> dict[str, Any]:
        nonlocal gets
        gets += 1
        return real_get(*args, **kwargs)

    gc: GarbageCollector = world.simulator("garbage-collector")
    gc.client.get = counting_get  # type: ignore[method-assign]
    client.delete("apps/v1", "ReplicaSet", "rs", "default")
    world.settle()

    assert client.list("v1", "Pod", "default", limit=1)["items"] == []
    # One read per pod (the live dependent) plus one owner lookup: the absence is cached.
    assert gets <= 10_000 + 2
