"""The disruption controller keeps which PDBs select each cached pod (its informer's index), re-selecting
only when a pod's labels or a PDB's selector change: after any sequence of pod relabels, status writes,
deletions and PDB creates, selector changes and deletions, the index must be what selecting from
scratch gives."""

from __future__ import annotations

import random
from typing import Any

import pytest

from harness.apiserver.pdb import pdb_selects
from harness.client import ApiError, InProcessClient
from harness.world.world import World

NAMESPACES = ("ns-a", "ns-b")
LABELS = ({"app": "web"}, {"app": "db"}, {"app": "web", "tier": "front"}, {})
SELECTORS = ({"matchLabels": {"app": "web"}}, {"matchLabels": {"app": "db"}}, {},
             {"matchExpressions": [{"key": "tier", "operator": "Exists"}]}, None)


def _pdb(namespace: str, name: str, selector: dict[str, Any] | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"minAvailable": 1}
    if selector is not None:
        spec["selector"] = selector
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def _step(rng: random.Random, client: InProcessClient) -> None:
    namespace = rng.choice(NAMESPACES)
    pod_name, pdb_name = f"p{rng.randrange(5)}", f"b{rng.randrange(3)}"
    action = rng.randrange(7)
    try:
        if action == 0:
            client.create({"apiVersion": "v1", "kind": "Pod",
                           "metadata": {"name": pod_name, "namespace": namespace, "labels": rng.choice(LABELS)},
                           "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}})
        elif action == 1:
            pod = client.get("v1", "Pod", pod_name, namespace)
            pod["metadata"]["labels"] = dict(rng.choice(LABELS))
            client.update(pod)
        elif action == 2:
            pod = client.get("v1", "Pod", pod_name, namespace)
            pod["status"]["phase"] = "Running"
            pod["status"]["conditions"] = [{"type": "Ready", "status": rng.choice(["True", "False"])}]
            client.update_status(pod)
        elif action == 3:
            client.delete("v1", "Pod", pod_name, namespace, grace_period_seconds=0)
        elif action == 4:
            client.create(_pdb(namespace, pdb_name, rng.choice(SELECTORS)))
        elif action == 5:
            pdb = client.get("policy/v1", "PodDisruptionBudget", pdb_name, namespace)
            selector = rng.choice(SELECTORS)
            if selector is None:
                pdb["spec"].pop("selector", None)
            else:
                pdb["spec"]["selector"] = selector
            client.update(pdb)
        else:
            client.delete("policy/v1", "PodDisruptionBudget", pdb_name, namespace)
    except ApiError as err:
        assert err.code in (404, 409, 422), err.status


@pytest.mark.parametrize("seed", range(5))
def test_the_selection_index_is_what_selecting_from_scratch_gives(seed: int) -> None:
    rng = random.Random(seed)
    world = World(simulators=["disruption"], controllers=[])
    client = world.client()
    for namespace in NAMESPACES:
        client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    controller = world.simulator("disruption")
    selected_somewhere = 0
    for _ in range(40):
        for _ in range(rng.randrange(1, 6)):
            _step(rng, client)
        world.settle()
        expected: dict[tuple[str, str], set[str]] = {}
        for namespace in NAMESPACES:
            pdbs = client.list("policy/v1", "PodDisruptionBudget", namespace)["items"]
            for pod in client.list("v1", "Pod", namespace)["items"]:
                names = {p["metadata"]["name"] for p in pdbs if pdb_selects(p, pod["metadata"].get("labels"))}
                if names:
                    expected[(namespace, pod["metadata"]["name"])] = names
        index = {key: set(names) for key, names in controller._selected_by.items() if names}  # noqa: SLF001
        assert index == expected
        selected_somewhere += bool(expected)
    assert selected_somewhere > 5
