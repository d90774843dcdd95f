"""A fixed, seeded workload for the simulators, recorded as the audit trail it produces (every write:
verb, object, body before and after): tests/test_simulator_trail.py compares it with the trail recorded
on main before the simulators' per-event work was cut (tests/fixtures/simulator_trail.json), so a faster
mapper, kubelet or scheduler that wrote anything differently (another body, order or count) shows.

Run as a script (``python tests/audit_trail_scenario.py [--write]``) in a process of its own, with
``PYTHONHASHSEED=0``: uids and generated names are seeded, and set iteration order is then fixed too.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).parent / "fixtures" / "simulator_trail.json"

# Kubelet knobs the random pods use (harness.kube.names.knobs).
_KNOBS = (
    {},
    {"harness.test/ready-delay": "3s"},
    {"harness.test/never-ready": "true"},
    {"harness.test/run-seconds": "4", "harness.test/exit-code": "0"},
    {"harness.test/run-seconds": "2", "harness.test/exit-code": "3"},
    {"harness.test/shutdown-seconds": "1"},
)


def _digest(record: Any) -> str:
    """A short digest of everything a record says (the objects before and after in full)."""
    old, new = record.old, record.new
    if record.resource.startswith("customresourcedefinitions."):
        # A World's CRDs come from a snapshot built once per process, with uids drawn before the seed.
        old, new = _without_uid(old), _without_uid(new)
    body = {**record.to_dict(with_diff=False), "old": old, "new": new}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _without_uid(obj: dict[str, Any] | None) -> dict[str, Any] | None:
    if obj is None:
        return None
    return {**obj, "metadata": {k: v for k, v in obj["metadata"].items() if k != "uid"}}


def _drain(pods: int) -> Any:
    """benchmarks.machine.drain with the audit trail on: a Node of PDB-protected ReplicaSet Pods drained."""
    from benchmarks import machine
    from harness.kube.names.capi import CLUSTER_API_VERSION
    from harness.kube.names.core import DEFAULT_NAMESPACE
    from harness.world.providers.objects import fake_cluster
    from harness.world.world import World

    world = World(audit=True)
    client = world.client()
    for obj in fake_cluster(machine.CLUSTER):
        client.create(obj)
    world.settle()
    machine._machine(client, "cp", control_plane=True)
    machine._machine(client, "spare")
    machine._machine(client, "m1")
    world.settle()
    remote = world.client(machine.WORKLOAD)
    machine._protected_sets(remote, pods, "m1")
    world.settle()
    client.delete(CLUSTER_API_VERSION, "Machine", "m1", DEFAULT_NAMESPACE)
    world.settle()

    def drained() -> bool:
        machine_obj = client.get(CLUSTER_API_VERSION, "Machine", "m1", DEFAULT_NAMESPACE)
        return any(c["type"] == "DrainingSucceeded" and c["status"] == "True"
                   for c in machine_obj["status"].get("conditions") or [])

    machine._advance_until(world, drained)
    return world


def _random_pods(steps: int, seed: int) -> Any:
    """Random pod creates, deletes, relabels and scalings with two Nodes, a ReplicaSet, a PDB and a Job."""
    from harness.client import ApiError
    from harness.world.world import World

    rng = random.Random(seed)
    world = World(audit=True)
    client = world.client()
    for node in ("n1", "n2"):
        client.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}})
    client.create({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web", "namespace": "default"},
                   "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                            "template": {"metadata": {"labels": {"app": "web"}},
                                         "spec": {"containers": [{"name": "app", "image": "app:1"}]}}}})
    client.create({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                   "metadata": {"name": "web", "namespace": "default"},
                   "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}}})
    client.create({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "once", "namespace": "default"},
                   "spec": {"completions": 2, "parallelism": 2, "template": {"spec": {
                       "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}})
    world.settle()
    names: list[str] = []
    for step in range(steps):
        action = rng.random()
        if action < 0.5 or not names:
            name = f"p-{step}"
            labels = rng.choice(({}, {"app": "web"}, {"app": "other"}))
            spec: dict[str, Any] = {"containers": [{"name": f"c{i}", "image": rng.choice(("nginx", "app:2"))}
                                                   for i in range(rng.randint(1, 2))],
                                    "terminationGracePeriodSeconds": rng.choice((0, 1, 5))}
            if rng.random() < 0.3:
                spec["nodeName"] = rng.choice(("n1", "n2"))
            if rng.random() < 0.3:
                spec["restartPolicy"] = rng.choice(("Never", "OnFailure", "Always"))
            if rng.random() < 0.1:
                spec["initContainers"] = [{"name": "init", "image": "busybox"}]
            meta: dict[str, Any] = {"name": name, "namespace": "default", "labels": labels,
                                    "annotations": dict(rng.choice(_KNOBS))}
            client.create({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})
            names.append(name)
        elif action < 0.75:
            name = names.pop(rng.randrange(len(names)))
            try:
                client.delete("v1", "Pod", name, "default")
            except ApiError:
                pass  # already gone (finished and deleted by its controller)
        elif action < 0.85:
            pods = client.list("v1", "Pod", "default")["items"]
            if pods:
                pod = rng.choice(pods)
                try:
                    client.patch("v1", "Pod", pod["metadata"]["name"],
                                 {"metadata": {"labels": {"app": rng.choice(("web", "other", "x"))}}},
                                 namespace="default")
                except ApiError:
                    pass
        elif action < 0.92:
            client.patch("apps/v1", "ReplicaSet", "web", {"spec": {"replicas": rng.randint(0, 5)}},
                         namespace="default")
        else:
            node = rng.choice(("n1", "n2"))
            world.simulator("kubelet").set_node_health(node, rng.choice(("True", "True", "False")))
        if rng.random() < 0.4:
            world.advance(rng.choice((0.5, 1.0, 3.0, 7.0)))
        else:
            world.settle()
    world.advance(30.0)
    return world


def trail(drain_pods: int = 300, steps: int = 300, seed: int = 16) -> dict[str, Any]:
    """The digests of both worlds' audit trails, in order."""
    from harness.apiserver import server

    out: dict[str, Any] = {}
    for label, build in (("drain", lambda: _drain(drain_pods)), ("random", lambda: _random_pods(steps, seed))):
        server._UID_RANDOM.seed(seed)
        random.seed(seed)
        world = build()
        records = world.audit.records
        out[label] = {"records": len(records), "digests": [_digest(r) for r in records]}
    return out


def main() -> None:
    result = trail()
    if "--write" in sys.argv:
        FIXTURE.parent.mkdir(exist_ok=True)
        FIXTURE.write_text(json.dumps(result, separators=(",", ":")) + "\n")
    else:
        json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
