"""Machine deletion with the reference machine controller: draining one Node with 1,000, 10,000 and 100,000
Pods, and deleting 1,000 Machines at once.

Drain: the Pods belong to ReplicaSets of 100 (one per namespace), each covered by a PodDisruptionBudget
with ``minAvailable: 90``, so a pass evicts at most 10 Pods of each set; evicted Pods are replaced on a spare
Node and the drain repeats every 20 s (virtual) until the Node is empty. The figure is the wall time from
the Machine's deletion to ``DrainingSucceeded``, and its ratio to the previous size (linear growth: ~10).

Mass deletion: 1,000 Machines with 10 Pods each and a pre-drain hook each, which a simulated hook
implementing controller removes as soon as it sees the Machine deleting; the figure is the wall time until
every Machine is gone.
"""

from __future__ import annotations

import gc
import sys
import time
from typing import Any

from benchmarks.timing import report
from harness.client import MERGE, ApiError, Client, Controller, Request, Result
from harness.kube.names.capi import CLUSTER_API_VERSION
from harness.kube.names.core import DEFAULT_NAMESPACE
from harness.world.providers.objects import fake_cluster, fake_machine
from harness.world.world import World

CLUSTER = "bench"
WORKLOAD = f"{DEFAULT_NAMESPACE}/{CLUSTER}"
SET_SIZE = 100
MIN_AVAILABLE = 90
HOOK = "pre-drain.delete.hook.machine.cluster.x-k8s.io/bench-hic"
# Long enough for any of the runs below; the benchmark stops as soon as its condition holds.
VIRTUAL_LIMIT = 3600.0
STEP = 5.0


def _capi_world() -> tuple[World, Client]:
    world = World(audit=False)
    client = world.client()
    for obj in fake_cluster(CLUSTER):
        client.create(obj)
    world.settle()
    return world, client


def _machine(client: Client, name: str, *, control_plane: bool = False, annotations: dict[str, str] | None = None,
             ) -> None:
    for obj in fake_machine(name, CLUSTER, control_plane=control_plane, annotations=annotations):
        client.create(obj)


def _pod(name: str, namespace: str, node: str, labels: dict[str, str], owner: dict[str, Any] | None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels}
    if owner is not None:
        metadata["ownerReferences"] = [owner]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
            "spec": {"nodeName": node, "terminationGracePeriodSeconds": 1,
                     "containers": [{"name": "app", "image": "registry.example/app:1.0"}]}}


def _protected_sets(remote: Client, pods: int, node: str) -> None:
    """``pods`` Pods on ``node``, in ReplicaSets of SET_SIZE, one namespace and one PDB per set."""
    for s in range(pods // SET_SIZE):
        namespace = f"set-{s}"
        labels = {"app": namespace}
        remote.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        remote.create({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                       "metadata": {"name": "web", "namespace": namespace},
                       "spec": {"minAvailable": MIN_AVAILABLE, "selector": {"matchLabels": labels}}})
        rs = remote.create({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                            "metadata": {"name": "web", "namespace": namespace},
                            "spec": {"replicas": SET_SIZE, "selector": {"matchLabels": labels},
                                     "template": {"metadata": {"labels": labels},
                                                  "spec": {"terminationGracePeriodSeconds": 1,
                                                           "containers": [{"name": "app", "image": "app:1"}]}}}})
        owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": rs["metadata"]["uid"],
                 "controller": True, "blockOwnerDeletion": True}
        for i in range(SET_SIZE):
            remote.create(_pod(f"web-{i}", namespace, node, labels, owner))


def _advance_until(world: World, done: Any) -> float:
    """Advance the virtual clock in steps until ``done()``; the virtual seconds it took."""
    start = world.now()
    while not done():
        if world.now() - start > VIRTUAL_LIMIT:
            raise RuntimeError("the benchmark did not finish within its virtual time limit")
        world.advance(STEP)
    return world.now() - start


class CollectorTime:
    """The cyclic garbage collector's passes and CPU seconds per generation (2: a full pass, which scans
    every tracked object, so its cost grows with the heap: the one part of the drain that is not linear in
    the Pods, as a full pass comes every million or so net allocations of containers: none in a 1,000-Pod
    drain, one or two in a 10,000-Pod one)."""

    def __init__(self) -> None:
        self.passes = [0, 0, 0]
        self.seconds = [0.0, 0.0, 0.0]
        self._started = 0.0

    def callback(self, phase: str, info: dict[str, int]) -> None:
        """A ``gc.callbacks`` entry: times each pass from its start to its stop."""
        if phase == "start":
            self._started = time.process_time()
        else:
            generation = info["generation"]
            self.passes[generation] += 1
            self.seconds[generation] += time.process_time() - self._started


def drain(pods: int, collector: CollectorTime | None = None) -> tuple[float, float, float]:
    """Wall, CPU and virtual seconds to drain a Node running ``pods`` PDB-protected Pods (CPU: of
    this process, which does not grow when other jobs share the machine's cores as wall time does);
    ``collector``, when given, counts the collector's passes during the drain alone."""
    world, client = _capi_world()
    _machine(client, "cp", control_plane=True)
    _machine(client, "spare")
    _machine(client, "m1")
    world.settle()
    remote = world.client(WORKLOAD)
    _protected_sets(remote, pods, "m1")
    world.settle()

    def drained() -> bool:
        for condition in (
            client.get(CLUSTER_API_VERSION, "Machine", "m1", DEFAULT_NAMESPACE)["status"].get("conditions") or []
        ):
            if condition["type"] == "DrainingSucceeded":
                return bool(condition["status"] == "True")
        return False

    if collector is not None:
        gc.callbacks.append(collector.callback)
    try:
        start, cpu = time.perf_counter(), time.process_time()
        client.delete(CLUSTER_API_VERSION, "Machine", "m1", DEFAULT_NAMESPACE)
        world.settle()
        virtual = _advance_until(world, drained)
        return time.perf_counter() - start, time.process_time() - cpu, virtual
    finally:
        if collector is not None:
            gc.callbacks.remove(collector.callback)


class _HookRemover(Controller):
    """A hook implementing controller: removes its pre-drain hook from every deleting Machine."""

    name = "bench-hic"

    def __init__(self, client: Client) -> None:
        super().__init__()
        self.client = client

    def setup(self) -> None:
        self.watch(self.client, CLUSTER_API_VERSION, "Machine")

    def reconcile(self, request: Request) -> Result | None:
        try:
            machine = self.client.get(CLUSTER_API_VERSION, "Machine", request.name, request.namespace)
        except ApiError:
            return None
        meta = machine["metadata"]
        if meta.get("deletionTimestamp") and HOOK in (meta.get("annotations") or {}):
            self.client.patch(CLUSTER_API_VERSION, "Machine", request.name, {"metadata": {"annotations": {HOOK: None}}},
                              namespace=request.namespace, patch_type=MERGE)
        return None


def mass_deletion(machines: int = 1000, pods_per_machine: int = 10) -> tuple[float, float]:
    """Wall and virtual seconds to delete ``machines`` Machines at once."""
    world, client = _capi_world()
    _machine(client, "cp", control_plane=True)
    for m in range(machines):
        _machine(client, f"w-{m}", annotations={HOOK: ""})
    world.settle()
    remote = world.client(WORKLOAD)
    for m in range(machines):
        for p in range(pods_per_machine):
            remote.create(_pod(f"p-{m}-{p}", DEFAULT_NAMESPACE, f"w-{m}", {"machine": str(m)}, None))
    world.add_controller(_HookRemover(world.client(user="system:serviceaccount:bench:hic")))
    world.settle()
    names = [f"w-{m}" for m in range(machines)]

    def gone() -> bool:
        return not any(
            i["metadata"]["name"] != "cp"
            for i in client.list(CLUSTER_API_VERSION, "Machine", DEFAULT_NAMESPACE)["items"]
        )

    start = time.perf_counter()
    for name in names:
        client.delete(CLUSTER_API_VERSION, "Machine", name, DEFAULT_NAMESPACE)
    world.settle()
    virtual = _advance_until(world, gone)
    return time.perf_counter() - start, virtual


def main(sizes: tuple[int, ...] = (1_000, 10_000, 100_000)) -> None:
    print("== machine deletion (reference machine controller) ==")
    previous: tuple[float, float, float] | None = None
    previous_name = ""
    for pods in sizes:
        spent = CollectorTime()
        wall, cpu, virtual = drain(pods, spent)
        name = f"drain one Node with {pods:,} PDB-protected Pods ({virtual:.0f} s virtual)"
        report(name, wall, "s", previous[0] if previous else None, previous_name)
        report("  the same, CPU time", cpu, "s", previous[1] if previous else None, previous_name)
        besides = cpu - sum(spent.seconds)
        report("  the same, CPU time besides the cyclic collector", besides, "s",
               previous[2] if previous else None, previous_name)
        report(f"  the cyclic collector's full passes ({spent.passes[2]})", spent.seconds[2], "s")
        previous, previous_name = (wall, cpu, besides), f"{pods:,} Pods"
    wall, virtual = mass_deletion()
    report(f"delete 1,000 Machines at once, 10 Pods and a pre-drain hook each ({virtual:.0f} s virtual)", wall, "s")


if __name__ == "__main__":
    main(tuple(int(a) for a in sys.argv[1:]) or (1_000, 10_000, 100_000))
