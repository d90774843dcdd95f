"""Rolling out a Deployment with four lifecycle hooks (0%, 25%, 75%, 100%) with the reference Deployment
controller, in one process: 1,000 replicas (the baseline measured in the same run) and 10,000 replicas by
default; pass sizes to run others (``python -m benchmarks.rollout 1000 10000 100000``). One more figure: a
DaemonSet with the same four hooks rolled out over the 100 Nodes (maxUnavailable 10%, so 10 Nodes at a time).

Pods run on 100 Nodes and are Ready at once; the rollout uses the default 25% maxSurge / maxUnavailable and
each hook Job takes 10 s (virtual). The figure is the wall time from the template change until the
Deployment reports the rollout complete and
every hook finished, and its ratio to the previous size (linear growth: ~10).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from benchmarks.timing import report
from harness.client import JSON_PATCH
from harness.kube.names.core import DEFAULT_NAMESPACE
from harness.world.world import World

NODES = 100
STEP = 5.0
VIRTUAL_LIMIT = 3600.0
POINTS = ("0%", "25%", "75%", "100%")


def _hook(point: str) -> dict[str, Any]:
    name = f"at-{point.rstrip('%')}"
    return {"name": name, "trigger": {"type": "ProgressAvailable", "progressAvailableParams": {"progressPoint": point}},
            "jobSpec": {"template": {"metadata": {"annotations": {"harness.test/job-duration": "10s"}},
                                     "spec": {"restartPolicy": "Never",
                                              "containers": [{"name": "hook", "image": "busybox"}]}}}}


def _complete(deployment: dict[str, Any]) -> bool:
    want = deployment["spec"]["replicas"]
    status = deployment.get("status") or {}
    hooks = {c["type"]: c for c in status.get("conditions") or []}.get("LifecycleHooks") or {}
    return (status.get("observedGeneration", 0) >= deployment["metadata"]["generation"]
            and [status.get(k, 0) for k in ("updatedReplicas", "replicas", "availableReplicas")] == [want] * 3
            and hooks.get("reason") in (None, "LifecycleHooksCompleted"))


def _timed_rollout(world: World, kind: str, name: str, image: str, done: Callable[[], bool]) -> tuple[float, float]:
    """Once the workload is rolled out: add the four hooks, change its image, and advance until
    ``done()``; wall and virtual seconds from the image change (every hook Job must have run)."""
    client = world.client()
    while not done():
        world.advance(STEP)
    client.patch(
        "apps/v1", kind, name, {"spec": {"lifecycleHooks": [_hook(p) for p in POINTS]}}, namespace=DEFAULT_NAMESPACE
    )
    world.settle()
    start_virtual = world.now()
    start = time.perf_counter()
    client.patch("apps/v1", kind, name,
                 [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": image}],
                 namespace=DEFAULT_NAMESPACE, patch_type=JSON_PATCH)
    world.settle()
    while not done() and world.now() - start_virtual < VIRTUAL_LIMIT:
        world.advance(STEP)
    jobs = len(client.list("batch/v1", "Job", DEFAULT_NAMESPACE)["items"])
    assert jobs == len(POINTS), f"{jobs} hook Jobs ran"
    return time.perf_counter() - start, world.now() - start_virtual


def rollout(replicas: int) -> tuple[float, float]:
    """Wall and virtual seconds to roll out a new template of a ``replicas`` Deployment with four hooks."""
    world = World(audit=False)
    client = world.client()
    for n in range(NODES):
        client.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{n}"}})
    client.create({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": DEFAULT_NAMESPACE},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}},
    })

    def done() -> bool:
        return _complete(client.get("apps/v1", "Deployment", "web", DEFAULT_NAMESPACE))

    return _timed_rollout(world, "Deployment", "web", "nginx:1.28", done)


def daemon_set_rollout() -> tuple[float, float]:
    """Wall and virtual seconds to roll out a new template of a DaemonSet on every Node with four hooks."""
    world = World(audit=False)
    client = world.client()
    for n in range(NODES):
        client.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{n}"}})
    client.create({
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": DEFAULT_NAMESPACE},
        "spec": {"selector": {"matchLabels": {"app": "agent"}},
                 "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%"}},
                 "template": {"metadata": {"labels": {"app": "agent"}},
                              "spec": {"terminationGracePeriodSeconds": 0,
                                       "containers": [{"name": "agent", "image": "fluent-bit:3.0"}]}}},
    })

    def done() -> bool:
        ds = client.get("apps/v1", "DaemonSet", "agent", DEFAULT_NAMESPACE)
        status = ds.get("status") or {}
        hooks = {c["type"]: c for c in status.get("conditions") or []}.get("LifecycleHooks") or {}
        return (status.get("observedGeneration", 0) >= ds["metadata"]["generation"]
                and status.get("updatedNumberScheduled") == status.get("numberAvailable") == NODES
                and hooks.get("reason") in (None, "LifecycleHooksCompleted"))

    return _timed_rollout(world, "DaemonSet", "agent", "fluent-bit:3.1", done)


def main(sizes: tuple[int, ...] = (1_000, 10_000)) -> None:
    print("== rollout with lifecycle hooks (reference Deployment controller) ==")
    previous = None
    previous_name = ""
    for replicas in sizes:
        wall, virtual = rollout(replicas)
        report(f"roll out {replicas:,} replicas with 4 hooks ({virtual:.0f} s virtual)", wall, "s", previous,
               previous_name)
        previous, previous_name = wall, f"{replicas:,} replicas"
    wall, virtual = daemon_set_rollout()
    report(f"roll out a DaemonSet on {NODES} Nodes with 4 hooks ({virtual:.0f} s virtual)", wall, "s")


if __name__ == "__main__":
    main(tuple(int(a) for a in sys.argv[1:]) or (1_000, 10_000))
