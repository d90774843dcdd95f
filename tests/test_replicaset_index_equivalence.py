"""The ReplicaSet simulator keeps each set's Pods in an index (harness/world/replicaset_pods.py) instead of
ranking and counting every Pod of the set at every sync: it writes exactly what the per-sync computation
wrote (tests/replicaset_reference.py, the controller before the index).

Two levels, both randomized: the ranking and the counts against the old functions over random sets of
Pods changed between syncs (phases, readiness and its time, deletion costs, Nodes, restarts, creation
times, unscheduled Pods, Pods joining and leaving); and whole worlds, one running the simulator and one
the reference, given the same random workload (sets scaled, relabelled, deleted while finalized; bare Pods
adopted and released; Pod statuses, costs and deletions; Pods of another namespace naming a set as
controller; ReplicationControllers whose selector changes), whose audit trails must be the same, write for
write.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from harness.apiserver import server as server_module
from harness.client import ApiError
from harness.clock import rfc3339
from harness.kube.names.core import DEFAULT_NAMESPACE
from harness.world import replicaset
from harness.world import world as world_module
from harness.world.replicaset import POD_DELETION_COST_ANNOTATION, own_rank
from harness.world.replicaset_pods import PodFacts, Ranking, SetPods
from harness.world.world import World
from tests import replicaset_reference as reference

EPOCH = 1_800_000_000.0
NODES = ("", "n1", "n2", "n3", "n4")
PHASES = ("Pending", "Running", "Unknown", None, "Running", "Running")


# -- the ranking and the counts against the old functions ------------------------------------------------------


def _random_pod(rng: random.Random, name: str) -> dict[str, Any]:
    labels = rng.choice(({"app": "a"}, {"app": "a", "x": "1"}))
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "labels": labels}
    if rng.random() < 0.8:
        meta["creationTimestamp"] = rfc3339(EPOCH + rng.randrange(6))
    if rng.random() < 0.5:
        meta["annotations"] = {POD_DELETION_COST_ANNOTATION: rng.choice(("0", "5", "-3", "100", "x", "7"))}
    status: dict[str, Any] = {}
    phase = rng.choice(PHASES)
    if phase is not None:
        status["phase"] = phase
    if rng.random() < 0.7:
        ready = rng.choice(("True", "True", "False"))
        condition = {"type": "Ready", "status": ready}
        if rng.random() < 0.9:
            condition["lastTransitionTime"] = rfc3339(EPOCH + rng.randrange(8))
        status["conditions"] = [condition]
    if rng.random() < 0.6:
        status["containerStatuses"] = [{"name": f"c{i}", "restartCount": rng.randrange(3)}
                                       for i in range(rng.randint(1, 2))]
    spec = {"nodeName": rng.choice(NODES)} if rng.random() < 0.9 else {}
    return {"metadata": meta, "spec": spec, "status": status}


def _facts(pod: dict[str, Any]) -> PodFacts:
    return PodFacts(reference.is_pod_active(pod), reference.pod_ready_since(pod), pod["metadata"]["labels"])


def _file(ranking: Ranking, name: str, pod: dict[str, Any]) -> None:
    ranking.add(("ns", name), pod["spec"].get("nodeName") or "", own_rank(pod, _facts(pod)))


def _old_order(pods: dict[str, dict[str, Any]], order: list[str]) -> list[str]:
    """The old ranking: every active pod sorted (a reference controller's method, its caches bypassed)."""
    old = reference.ReplicaSetController.__new__(reference.ReplicaSetController)
    old._facts = {}
    old._pods = {("ns", n): pods[n] for n in order}
    ranked = old._deletion_order([pods[n] for n in order])
    return [p["metadata"]["name"] for p in ranked]


@pytest.mark.parametrize("seed", range(40))
def test_the_ranking_gives_the_first_pods_of_the_full_sort_in_order(seed: int) -> None:
    rng = random.Random(seed)
    ranking = Ranking()
    pods: dict[str, dict[str, Any]] = {}
    # Insertion order of the live pods (the old sort's input; names tie never within a namespace).
    for step in range(rng.randint(5, 120)):
        roll = rng.random()
        if roll < 0.55 or not pods:
            name = f"p{step}"
            pods[name] = _random_pod(rng, name)
            _file(ranking, name, pods[name])
        elif roll < 0.8:
            name = rng.choice(list(pods))
            del pods[name]
            ranking.remove(("ns", name))
        else:
            # A pod changes (a new version): unfiled and filed again.
            name = rng.choice(list(pods))
            ranking.remove(("ns", name))
            pods[name] = _random_pod(rng, name)
            _file(ranking, name, pods[name])
        if rng.random() < 0.3:
            count = rng.randint(1, len(pods) + 2) if pods else 1
            want = _old_order(pods, list(pods))[:count]
            assert [k[1] for k in ranking.first(count)] == want
            # The first pods of a scale-down leave first: the next sync goes on after them.
            for name in want[: rng.randint(0, len(want))]:
                del pods[name]
                ranking.remove(("ns", name))
    full = _old_order(pods, list(pods))
    assert [k[1] for k in ranking.first(len(pods))] == full
    assert sorted(pods, key=lambda n: ranking.rank(("ns", n))) == full


def _old_counts(pods: list[dict[str, Any]], template: dict[str, Any], min_ready: float, now: float
                ) -> tuple[int, int, int, float | None]:
    """fullyLabeled, ready, available and the requeue as the old status computation worked them out."""
    facts = [_facts(p) for p in pods]
    template_labels = list(template.items())
    ready_since = [f.ready_since for f in facts if f.ready_since is not None]
    available = sum(1 for since in ready_since if min_ready <= 0 or since + min_ready <= now)
    fully = sum(1 for f in facts if all(f.labels.get(k) == v for k, v in template_labels))
    waits = [since + min_ready - now for since in ready_since if since + min_ready > now]
    return fully, len(ready_since), available, (min(waits) if waits else None)


@pytest.mark.parametrize("seed", range(40))
def test_the_status_counts_are_those_of_every_pod_counted(seed: int) -> None:
    rng = random.Random(seed)
    state = SetPods("ns", set())
    pods: dict[str, dict[str, Any]] = {}
    for step in range(rng.randint(5, 80)):
        if rng.random() < 0.6 or not pods:
            name = f"p{step}"
            pods[name] = _random_pod(rng, name)
            state.count(("ns", name), _facts(pods[name]), "", None)
        else:
            name = rng.choice(list(pods))
            del pods[name]
            state.uncount(("ns", name))
        template = rng.choice(({"app": "a"}, {"app": "a", "x": "1"}, {}, {"x": "1"}))
        min_ready = rng.choice((0.0, 0.0, 1.0, 3.0, 5.0))
        now = EPOCH + rng.choice((0.0, 2.0, 4.0, 7.0, 9.0, 12.0))
        fully, ready, available, wait = _old_counts(list(pods.values()), template, min_ready, now)
        assert state.fully_labeled(list(template.items())) == fully
        assert state.ready_total == ready
        assert state.availability(min_ready, now) == (available, wait)


# -- whole worlds: the simulator against the reference ------------------------------------------------------------


def _world(oracle: bool, monkeypatch: pytest.MonkeyPatch, seed: int) -> World:
    if oracle:
        monkeypatch.setitem(world_module.SIMULATORS, "replicaset", "tests.replicaset_reference:ReplicaSetController")
        monkeypatch.setitem(world_module.SIMULATORS, "replicationcontroller",
                            "tests.replicaset_reference:ReplicationControllerController")
    server_module._UID_RANDOM.seed(seed)
    random.seed(seed)
    return World(simulators=["replicaset", "replicationcontroller"], crds=False)


def _pod_status(rng: random.Random, now: float) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": rng.choice(("Pending", "Running", "Running", "Unknown", "Failed"))}
    if rng.random() < 0.8:
        status["conditions"] = [{"type": "Ready", "status": rng.choice(("True", "True", "False")),
                                 "lastTransitionTime": rfc3339(now - rng.choice((0, 0, 1, 2, 4)))}]
    if rng.random() < 0.5:
        status["containerStatuses"] = [{"name": "app", "image": "nginx", "imageID": "", "ready": True,
                                        "restartCount": rng.randrange(4), "state": {"running": {}}}]
    return status


def _set(kind: str, name: str, replicas: int, selector: dict[str, str], extra: dict[str, str],
         min_ready: int) -> dict[str, Any]:
    template = {"metadata": {"labels": {**selector, **extra},
                             "annotations": {POD_DELETION_COST_ANNOTATION: str(len(name))}},
                "spec": {"containers": [{"name": "app", "image": "nginx"}]}}
    if kind == "ReplicationController":
        return {"apiVersion": "v1", "kind": kind, "metadata": {"name": name, "namespace": DEFAULT_NAMESPACE},
                "spec": {"replicas": replicas, "selector": selector, "template": template,
                         "minReadySeconds": min_ready}}
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name, "namespace": DEFAULT_NAMESPACE},
            "spec": {"replicas": replicas, "selector": {"matchLabels": selector}, "template": template,
                     "minReadySeconds": min_ready}}


def _workload(world: World, seed: int, steps: int) -> None:  # noqa: C901, PLR0912, PLR0915 - one random step each
    rng = random.Random(seed)
    client = world.client()
    for node in NODES[1:]:
        client.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}})
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    sets = [("apps/v1", "ReplicaSet", "web"), ("apps/v1", "ReplicaSet", "db"),
            ("v1", "ReplicationController", "legacy")]
    for _api_version, kind, name in sets:
        client.create(_set(kind, name, rng.randint(0, 6), {"app": name}, {}, rng.choice((0, 0, 2))))
    world.settle()
    for step in range(steps):
        roll = rng.random()
        pods = client.list("v1", "Pod", DEFAULT_NAMESPACE)["items"]
        pod = rng.choice(pods) if pods else None
        api_version, kind, name = rng.choice(sets)
        try:
            if roll < 0.2:
                client.patch(api_version, kind, name, {"spec": {"replicas": rng.randint(0, 24)}},
                             namespace=DEFAULT_NAMESPACE)
            elif roll < 0.4 and pod is not None:
                client.patch("v1", "Pod", pod["metadata"]["name"], {"status": _pod_status(rng, world.now())},
                             namespace=DEFAULT_NAMESPACE, subresource="status")
            elif roll < 0.47 and pod is not None:
                labels = rng.choice(({"app": "web"}, {"app": "db"}, {"app": "legacy"}, {"app": "x"},
                                     {"app": "web", "tier": "1"}))
                client.patch("v1", "Pod", pod["metadata"]["name"], {"metadata": {"labels": labels}},
                             namespace=DEFAULT_NAMESPACE)
            elif roll < 0.53 and pod is not None:
                cost = rng.choice(("-5", "0", "3", "1000", "bad"))
                client.patch("v1", "Pod", pod["metadata"]["name"],
                             {"metadata": {"annotations": {POD_DELETION_COST_ANNOTATION: cost}}},
                             namespace=DEFAULT_NAMESPACE)
            elif roll < 0.6 and pod is not None:
                grace = rng.choice((None, 0, 30))
                client.delete("v1", "Pod", pod["metadata"]["name"], DEFAULT_NAMESPACE, grace_period_seconds=grace)
            elif roll < 0.68:
                meta: dict[str, Any] = {"name": f"bare-{step}", "namespace": DEFAULT_NAMESPACE,
                                        "labels": rng.choice(({"app": "web"}, {"app": "db"}, {"app": "legacy"},
                                                              {"app": "x"}))}
                spec: dict[str, Any] = {"containers": [{"name": "app", "image": "nginx"}]}
                if rng.random() < 0.6:
                    spec["nodeName"] = rng.choice(NODES[1:])
                client.create({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})
            elif roll < 0.715:
                # Twins: a bare Pod the set adopts, and a Pod of another namespace with the same name, labels,
                # cost and Node that names the set as controller: their ranks tie.
                owner = client.get(api_version, kind, name, DEFAULT_NAMESPACE)
                ref = {"apiVersion": api_version, "kind": kind, "name": name, "uid": owner["metadata"]["uid"],
                       "controller": True}
                node = rng.choice(NODES[1:])
                for namespace in ("other", DEFAULT_NAMESPACE):
                    client.create({"apiVersion": "v1", "kind": "Pod",
                                   "metadata": {"name": f"twin-{step}", "namespace": namespace,
                                                "labels": dict(owner["spec"]["template"]["metadata"]["labels"]),
                                                "annotations": {POD_DELETION_COST_ANNOTATION: "-9"},
                                                "ownerReferences": [ref] if namespace == "other" else []},
                                   "spec": {"containers": [{"name": "app", "image": "nginx"}], "nodeName": node}})
            elif roll < 0.73:
                for foreign in client.list("v1", "Pod", "other")["items"]:
                    client.delete("v1", "Pod", foreign["metadata"]["name"], "other", grace_period_seconds=0)
            elif roll < 0.76:
                extra = rng.choice(({}, {"tier": "1"}, {"tier": "2"}))
                current = client.get(api_version, kind, name, DEFAULT_NAMESPACE)
                labels = {**(current["spec"]["template"]["metadata"].get("labels") or {}), **extra}
                if not extra:
                    labels.pop("tier", None)
                client.patch(api_version, kind, name, {"spec": {"template": {"metadata": {"labels": labels}},
                                                                "minReadySeconds": rng.choice((0, 1, 3))}},
                             namespace=DEFAULT_NAMESPACE)
            elif roll < 0.78 and kind == "ReplicationController":
                # A ReplicationController's selector may change (a ReplicaSet's may not).
                selector = rng.choice(({"app": "legacy"}, {"app": "legacy", "tier": "1"}))
                current = client.get(api_version, kind, name, DEFAULT_NAMESPACE)
                labels = {**(current["spec"]["template"]["metadata"].get("labels") or {}), **selector}
                client.patch(api_version, kind, name, {"spec": {"selector": selector,
                                                                "template": {"metadata": {"labels": labels}}}},
                             namespace=DEFAULT_NAMESPACE, patch_type="application/merge-patch+json")
            elif roll < 0.8:
                # Deleted while a finalizer holds it: a deleting set manages nothing, and counts still.
                client.patch(api_version, kind, name, {"metadata": {"finalizers": ["test/hold"]}},
                             namespace=DEFAULT_NAMESPACE)
                client.delete(api_version, kind, name, DEFAULT_NAMESPACE)
            elif roll < 0.82:
                current = client.get(api_version, kind, name, DEFAULT_NAMESPACE)
                if current["metadata"].get("deletionTimestamp"):
                    client.patch(api_version, kind, name, {"metadata": {"finalizers": None}},
                                 namespace=DEFAULT_NAMESPACE)
                    world.settle()
                    client.create(_set(kind, name, rng.randint(0, 8), {"app": name}, {}, 0))
        except ApiError:
            pass  # a write the server refuses (gone, invalid): the same in both worlds
        # Now and then the next change comes before the sets sync: several pods relabelled, adopted or
        # deleted between two syncs.
        wait = rng.random()
        if wait < 0.35:
            world.advance(rng.choice((0.5, 1.0, 2.0, 3.0)))
        elif wait < 0.75:
            world.settle()
    world.advance(10.0)


def _trail(world: World) -> list[Any]:
    return [(r.verb, r.resource, r.subresource, r.namespace, r.name, r.time, r.user, r.code, r.old, r.new)
            for r in world.audit.records]


@pytest.mark.parametrize(("seed", "burst"), [(seed, 500) for seed in range(8)] + [(seed, 3) for seed in range(8, 14)])
def test_the_simulator_writes_what_the_reference_writes(seed: int, burst: int, monkeypatch: pytest.MonkeyPatch) -> None:
    steps = 200
    # A small burst: scale-downs take several syncs, each going on from the last one's ranking.
    monkeypatch.setattr(replicaset, "BURST_REPLICAS", burst)
    monkeypatch.setattr(reference, "BURST_REPLICAS", burst)
    world = _world(False, monkeypatch, seed)
    _workload(world, seed, steps)
    mine = _trail(world)
    with monkeypatch.context() as patched:
        reference_world = _world(True, patched, seed)
        assert type(reference_world.simulator("replicaset")) is reference.ReplicaSetController
        _workload(reference_world, seed, steps)
    theirs = _trail(reference_world)
    assert type(world.simulator("replicaset")) is not reference.ReplicaSetController
    first = next((i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b), None)
    assert first is None, f"record {first}: {mine[first][:4]} differs from the reference's {theirs[first][:4]}"
    assert len(mine) == len(theirs)
    # The workload did what it is for: pods deleted by the sets, adopted, released and counted.
    by_sets = [r for r in mine if r[1] == "pods" and r[6].split(":")[-1] in ("replicaset", "replicationcontroller")]
    assert {r[0] for r in by_sets} >= {"create", "delete", "patch"}, {r[0] for r in by_sets}
