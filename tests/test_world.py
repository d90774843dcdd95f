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


def _without_uids(value: object, uids: dict[str, str]) -> object:
    """``value`` with each uid replaced by the order in which it was first met (uids are random)."""
    if isinstance(value, dict):
        return {k: (uids.setdefault(v, f"uid-{len(uids)}") if k == "uid" and isinstance(v, str)
                    else _without_uids(v, uids)) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_uids(v, uids) for v in value]
    return value


def _visible_state(world: World) -> dict[str, object]:
    """What a scenario can see of a world: objects, watch history, audit trail, served kinds, admission."""
    uids: dict[str, str] = {}
    server = world.management
    store = server.store
    return {
        "rv": store.resource_version,
        "objects": _without_uids({f"{skey}": store.items(skey) for skey in sorted(store.resources())}, uids),
        "history": _without_uids([[rv, list(skey), kind, obj, old] for rv, skey, kind, obj, old in store._history],
                                 uids),
        "audit": _without_uids([r.to_dict(with_diff=False) | {"old": r.old, "new": r.new}
                                for r in world.audit.records], uids),
        "kinds": sorted((rt.group, rt.version, rt.kind) for rt in server.registry.all()),
        "admission": [(group, kind) for group, kind, _ in server._admission],
        "steps": world.settle(),
        "after_settle": _without_uids([r.to_dict(with_diff=False) for r in world.audit.records], uids),
        "watchers": store.watcher_count(),
    }


def test_a_world_from_the_crd_snapshot_is_the_world_the_api_would_build(monkeypatch) -> None:
    """The packaged CRDs' writes are made once per process and replayed into each world: what a scenario
    sees (objects, resourceVersions, watch history, audit trail, served kinds, what the controllers do at
    the first settle) is what applying them through the API gives; only the uids differ, fresh per world."""
    from harness.world import crd_snapshot

    replays: list[object] = []
    replay = crd_snapshot.CrdSnapshot.replay
    monkeypatch.setattr(crd_snapshot.CrdSnapshot, "replay",
                        lambda self, server: (replays.append(server), replay(self, server))[1])
    replayed, other = World(), World()
    assert replays == [replayed.management, other.management]
    assert replayed.audit.records[-1].new["metadata"]["uid"] != other.audit.records[-1].new["metadata"]["uid"]
    monkeypatch.setattr(crd_snapshot.CrdSnapshot, "fits", lambda *_args: False)
    through_the_api = World()
    assert _visible_state(replayed) == _visible_state(through_the_api)
    # The stored version, the history's and the audit trail's are one object, as after a real write.
    last = replayed.audit.records[-1].new
    name = last["metadata"]["name"]
    assert replayed.management.store.get(("apiextensions.k8s.io", "customresourcedefinitions"), ("", name)) is last


def test_a_world_that_is_not_fresh_applies_the_crds_through_the_api() -> None:
    """A management cluster unlike the snapshot's (another start time) gets the CRDs through the API."""
    later = World(start=1_900_000_000.0)
    crds = later.client().list("apiextensions.k8s.io/v1", "CustomResourceDefinition")["items"]
    assert crds and all(c["metadata"]["creationTimestamp"].startswith("2030-") for c in crds)


def test_the_kubeconfig_secret_follows_where_the_clusters_are_served() -> None:
    import base64

    import yaml

    world = World()
    client = world.client()
    client.create({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
                   "metadata": {"name": "wl1", "namespace": "default"}, "spec": {}})
    world.settle()

    def server() -> str:
        secret = client.get("v1", "Secret", "wl1-kubeconfig", "default")
        config = yaml.safe_load(base64.b64decode(secret["data"]["value"]))
        return str(config["clusters"][0]["cluster"]["server"])

    first = server()
    world.set_base_url("http://127.0.0.1:1")
    assert server() == "http://127.0.0.1:1/clusters/default/wl1" != first
    world.set_base_url("http://127.0.0.1:2", token="t")
    assert server() == "http://127.0.0.1:2/clusters/default/wl1"
