"""The in-memory API server: store writes, world start-up, evictions under PDBs, watch fan-out."""

from __future__ import annotations

import copy
import time
from typing import Any

from benchmarks.timing import best_of, report
from harness.world.world import World


def _pod(name: str, labels: dict[str, str], node: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "app", "image": "registry.example/app:1.0",
                                            "env": [{"name": f"E{i}", "value": str(i)} for i in range(8)]}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": labels,
                         "annotations": {"example.com/a": "x" * 64}},
            "spec": spec}


def store_write() -> None:
    """Cost of one create through the API semantics, as a ratio to copy.deepcopy of the same object."""
    world = World(simulators=[], audit=False)
    client = world.client()
    template = _pod("p", {"app": "bench"})
    deepcopy_cost = best_of(lambda: copy.deepcopy(template), repeat=5, number=2000)
    counter = iter(range(10**9))

    def create() -> None:
        obj = dict(template)
        obj["metadata"] = {**template["metadata"], "name": f"p-{next(counter)}"}
        client.create(obj)

    write_cost = best_of(create, repeat=5, number=2000)
    report("store write (create Pod, in-process)", write_cost * 1e6, "µs", deepcopy_cost * 1e6,
           "copy.deepcopy of the Pod")


def startup() -> None:
    """Start-up of an in-process world with every simulator, against one with none (the bare API)."""
    bare = best_of(lambda: World(simulators=[]), repeat=5)
    cost = best_of(lambda: World(), repeat=5)
    report("start-up of an in-process world (all simulators)", cost * 1e3, "ms", bare * 1e3,
           "a world with no simulator")


def evictions(pods: int = 10_000) -> None:
    """Evictions per second of Ready pods, each in a ReplicaSet-free group covered by a PDB that allows one."""
    world = World(simulators=["disruption"], audit=False)
    client = world.client()
    groups = pods // 10
    for g in range(groups):
        client.create({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                       "metadata": {"name": f"pdb-{g}", "namespace": "default"},
                       "spec": {"minAvailable": 9, "selector": {"matchLabels": {"group": str(g)}}}})
    for i in range(pods):
        created = client.create(_pod(f"p-{i}", {"group": str(i % groups)}, node="node-1"))
        created["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
        client.update_status(created)
    world.settle()
    start = time.perf_counter()
    for g in range(groups):
        client.evict(f"p-{g}", "default")  # one per group: each budget allows exactly one
    elapsed = time.perf_counter() - start
    report(f"evictions/s against PDB-protected pods ({pods} pods, {groups} PDBs)", groups / elapsed, "ev/s")


def watch_fanout(watchers: int = 100, writes: int = 500) -> None:
    """Events delivered per second to 100 watchers, against the same writes with no watcher."""
    def run(n: int) -> float:
        world = World(simulators=[], audit=False)
        client = world.client()
        streams = [client.watch("v1", "ConfigMap", "default") for _ in range(n)]
        start = time.perf_counter()
        for i in range(writes):
            client.create({"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": f"cm-{i}", "namespace": "default"}, "data": {"k": "v"}})
        for s in streams:
            s.drain()
        return time.perf_counter() - start

    bare = min(run(0) for _ in range(3))
    fanned = min(run(watchers) for _ in range(3))
    report(f"watch fan-out: {writes} writes to {watchers} watchers (per write)", fanned / writes * 1e6, "µs",
           bare / writes * 1e6, "the same write with no watcher")


def main() -> None:
    print("== in-memory API server ==")
    store_write()
    startup()
    evictions()
    watch_fanout()
