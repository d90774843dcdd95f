"""The eviction subresource finds a pod's PodDisruptionBudgets through the store's index of keys by
namespace, not by scanning every stored budget: the index must answer
what the scan answered after any sequence of budget creates, selector changes, deletions (with and
without finalizers) and evictions, in any namespace."""

from __future__ import annotations

import random
from typing import Any

import pytest

from harness.apiserver import builtins
from harness.apiserver.pdb import pdb_selects
from harness.apiserver.server import APIServer
from harness.apiserver.subresources import eviction
from harness.client import ApiError, InProcessClient
from harness.world.world import World

NAMESPACES = ("ns-a", "ns-b", "ns-c")
LABELS = ({"app": "web"}, {"app": "db"}, {"app": "web", "tier": "front"}, {})
SELECTORS = ({"matchLabels": {"app": "web"}}, {"matchLabels": {"app": "db"}}, {},
             {"matchExpressions": [{"key": "tier", "operator": "Exists"}]}, None)


def _scan(server: APIServer, pod: dict[str, Any]) -> list[dict[str, Any]]:
    """The look-up as it was: every stored budget of the pod's namespace, in key order."""
    labels = pod["metadata"].get("labels") or {}
    return server.select(builtins.POD_DISRUPTION_BUDGET, pod["metadata"].get("namespace"),
                         lambda pdb: pdb_selects(pdb, labels), copy=False)


def _budget(namespace: str, name: str, selector: dict[str, Any] | None, finalizer: bool) -> dict[str, Any]:
    spec: dict[str, Any] = {"minAvailable": 1}
    if selector is not None:
        spec["selector"] = selector
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if finalizer:
        meta["finalizers"] = ["example.com/hold"]
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": meta, "spec": spec}


def _step(rng: random.Random, client: InProcessClient) -> None:
    namespace, name = rng.choice(NAMESPACES), f"b{rng.randrange(4)}"
    action = rng.randrange(5)
    try:
        if action <= 1:
            client.create(_budget(namespace, name, rng.choice(SELECTORS), rng.random() < 0.3))
        elif action == 2:
            pdb = client.get("policy/v1", "PodDisruptionBudget", name, namespace)
            selector = rng.choice(SELECTORS)
            if selector is None:
                pdb["spec"].pop("selector", None)
            else:
                pdb["spec"]["selector"] = selector
            client.update(pdb)
        elif action == 3:
            client.delete("policy/v1", "PodDisruptionBudget", name, namespace)
        else:
            pdb = client.get("policy/v1", "PodDisruptionBudget", name, namespace)
            pdb["metadata"]["finalizers"] = []
            client.update(pdb)
    except ApiError as err:
        assert err.code in (404, 409, 422), err.status


@pytest.mark.parametrize("seed", range(6))
def test_the_budget_index_finds_what_a_scan_of_every_budget_finds(seed: int) -> None:
    rng = random.Random(seed)
    world = World(simulators=[])
    client = world.client()
    server = client._server  # noqa: SLF001 - the look-up under test reads the server directly
    pods = []
    for namespace in NAMESPACES:
        client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        for i, labels in enumerate(LABELS):
            pods.append(client.create({
                "apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": namespace,
                                                                "labels": labels},
                "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]},
            }))
    # Budgets that exist before the first look-up are found too (the index starts from the store).
    for _ in range(8):
        _step(rng, client)
    compared = 0
    for _ in range(150):
        _step(rng, client)
        pod = server.stored_view(builtins.POD, *rng.choice(
            [(p["metadata"]["namespace"], p["metadata"]["name"]) for p in pods]))
        expected = _scan(server, pod)
        found = eviction._matching_pdbs(server, pod)  # noqa: SLF001
        assert found == expected
        assert [p["metadata"]["name"] for p in found] == [p["metadata"]["name"] for p in expected]
        compared += bool(expected)
    assert compared > 10  # the sequences do reach pods with budgets


def test_a_budget_created_after_the_first_eviction_refuses_the_next_one() -> None:
    world = World(simulators=["disruption"])
    client = world.client()
    for name in ("p0", "p1"):
        client.create({"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
                       "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}})
    world.settle()
    for name in ("p0", "p1"):
        pod = client.get("v1", "Pod", name, "default")
        pod["status"]["phase"] = "Running"
        pod["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
        client.update_status(pod)
    client.evict("p0", "default")  # no budget yet: deleted
    client.create(_budget("default", "web", {"matchLabels": {"app": "web"}}, False))
    world.settle()
    with pytest.raises(ApiError) as refused:
        client.evict("p1", "default")
    assert refused.value.code == 429
