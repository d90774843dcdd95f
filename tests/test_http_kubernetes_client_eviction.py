"""The official ``kubernetes`` Python client evicting pods under a PodDisruptionBudget: 201 while
the budget allows it, then 429 (with the budget's cause, and a Retry-After only while the budget
is still being processed)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from test_http_fixtures import Served, kubernetes_api, serve

from harness.kube.names.policy import PDB_VIOLATION_MESSAGE
from harness.world.world import World

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}


def _pod(name: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx"}]}}


def _world(world: World) -> None:
    # Two Ready pods on n1 (the kubelet runs them) under a budget that lets one go.
    api = world.client()
    api.create(NODE)
    for name in ("p1", "p2"):
        api.create(_pod(name))
    api.create({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                "metadata": {"name": "web", "namespace": "default"},
                "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}})
    world.settle()


def _api(served: Served) -> Iterator[client.CoreV1Api]:
    for api_client in kubernetes_api(served):
        yield client.CoreV1Api(api_client)


@pytest.fixture
def core(tmp_path: Path) -> Iterator[client.CoreV1Api]:
    served, stop = serve(tmp_path, simulators=["kubelet", "disruption"], prepare=_world)
    try:
        yield from _api(served)
    finally:
        stop()


@pytest.fixture
def core_without_disruption_controller(tmp_path: Path) -> Iterator[client.CoreV1Api]:
    served, stop = serve(tmp_path, simulators=["kubelet"], prepare=_world)
    try:
        yield from _api(served)
    finally:
        stop()


def _evict(core: client.CoreV1Api, name: str) -> tuple[object, int, dict[str, str]]:
    body = client.V1Eviction(metadata=client.V1ObjectMeta(name=name, namespace="default"))
    return core.create_namespaced_pod_eviction_with_http_info(name, "default", body)  # type: ignore[no-any-return]


def test_eviction_is_201_while_the_budget_allows_it_then_429(core: client.CoreV1Api) -> None:
    _, code, _ = _evict(core, "p1")
    evicted = core.read_namespaced_pod("p1", "default")
    with pytest.raises(ApiException) as raised:
        _evict(core, "p2")
    assert code == 201
    assert evicted.metadata.deletion_timestamp is not None
    assert [c.type for c in evicted.status.conditions if c.type == "DisruptionTarget"] == ["DisruptionTarget"]
    assert raised.value.status == 429
    assert "Retry-After" not in raised.value.headers
    status = json.loads(raised.value.body)
    assert (status["reason"], status["message"]) == ("TooManyRequests", PDB_VIOLATION_MESSAGE)
    assert status["details"]["causes"] == [
        {"reason": "DisruptionBudget", "message": "The disruption budget web needs 1 healthy pods and has 1 currently"}
    ]
    assert core.read_namespaced_pod("p2", "default").metadata.deletion_timestamp is None


def test_eviction_is_429_with_retry_after_while_the_budget_is_unprocessed(
    core_without_disruption_controller: client.CoreV1Api,
) -> None:
    with pytest.raises(ApiException) as raised:
        _evict(core_without_disruption_controller, "p1")
    assert raised.value.status == 429
    assert raised.value.headers["Retry-After"] == "10"
    status = json.loads(raised.value.body)
    assert status["details"]["retryAfterSeconds"] == 10
    assert status["details"]["causes"] == [
        {"reason": "DisruptionBudget", "message": "The disruption budget web is still being processed by the server."}
    ]
