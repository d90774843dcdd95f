"""The reference DaemonSet controller (controllers/rollout/daemonset.py) in a world of its own: one pod per
eligible Node, node affinity and tolerations, status counts, and the rolling update's arithmetic."""

from __future__ import annotations

from typing import Any

import pytest

from harness.client import JSON_PATCH, MERGE
from harness.world.world import World


def _ds(surge: Any = 0, unavailable: Any = 1, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "selector": {"matchLabels": {"app": "agent"}},
        "updateStrategy": {"type": "RollingUpdate",
                           "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}},
        "template": {"metadata": {"labels": {"app": "agent"}, "annotations": {"harness.test/ready-delay": "5s"}},
                     "spec": {"containers": [{"name": "agent", "image": "registry.k8s.io/pause:3.10"}]}},
    }
    body.update(spec)
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "default"},
            "spec": body}


def _node(world: World, name: str, **labels: str) -> None:
    world.client().create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}})
    world.settle()


@pytest.fixture
def world() -> World:
    world = World(controllers=["daemonset"])
    for i in range(3):
        _node(world, f"n{i}")
    return world


def _pods(world: World) -> list[dict[str, Any]]:
    return [p for p in world.client().list("v1", "Pod", "default")["items"]
            if not p["metadata"].get("deletionTimestamp")]


def _status(world: World) -> dict[str, Any]:
    return world.client().get("apps/v1", "DaemonSet", "agent", "default").get("status") or {}


def _set_image(world: World, image: str) -> None:
    world.client().patch("apps/v1", "DaemonSet", "agent",
                         [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": image}],
                         namespace="default", patch_type=JSON_PATCH)
    world.settle()


def test_one_pod_runs_on_every_node_pinned_by_node_affinity(world: World) -> None:
    world.client().create(_ds())
    world.advance(30)
    pods = _pods(world)
    assert sorted(p["spec"]["nodeName"] for p in pods) == ["n0", "n1", "n2"]
    pod = pods[0]
    term = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"][0]["matchFields"][0]
    assert term["key"] == "metadata.name" and term["values"] == [pod["spec"]["nodeName"]]
    assert {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"} in pod[
        "spec"]["tolerations"]
    assert pod["metadata"]["labels"]["pod-template-generation"] == "1"
    assert pod["metadata"]["labels"]["controller-revision-hash"]


def test_the_node_selector_decides_which_nodes_are_eligible_as_nodes_come_and_change(world: World) -> None:
    template = _ds()["spec"]["template"]
    template["spec"]["nodeSelector"] = {"edge": "yes"}
    world.client().create(_ds(template=template))
    world.advance(30)
    assert _pods(world) == [] and _status(world)["desiredNumberScheduled"] == 0
    _node(world, "e1", edge="yes")
    world.advance(30)
    assert [p["spec"]["nodeName"] for p in _pods(world)] == ["e1"]
    world.client().patch("v1", "Node", "e1", {"metadata": {"labels": {"edge": "no"}}}, patch_type=MERGE)
    world.advance(30)
    assert _pods(world) == []


def test_a_node_tainted_without_a_toleration_gets_no_pod(world: World) -> None:
    world.client().create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu"},
                           "spec": {"taints": [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]}})
    world.client().create(_ds())
    world.advance(30)
    assert _status(world)["desiredNumberScheduled"] == 3
    assert "gpu" not in {p["spec"].get("nodeName") for p in _pods(world)}


def test_status_counts_the_nodes(world: World) -> None:
    world.client().create(_ds())
    world.advance(30)
    status = _status(world)
    assert (status["desiredNumberScheduled"], status["currentNumberScheduled"], status["numberReady"],
            status["updatedNumberScheduled"], status["numberAvailable"], status["numberMisscheduled"],
            status["observedGeneration"]) == (3, 3, 3, 3, 3, 0, 1)
    assert "numberUnavailable" not in status


@pytest.mark.parametrize(("surge", "unavailable", "deleted", "created"), [
    (0, "50%", 2, 0),  # 50% of 3 rounds UP to 2 (a Deployment would floor it to 1)
    (0, 1, 1, 0),
    ("34%", 0, 0, 2),  # surge 34% of 3 rounds up to 2: two new pods beside the old ones
])
def test_the_first_step_of_a_rolling_update_uses_budgets_rounded_up(world: World, surge: Any, unavailable: Any,
                                                                     deleted: int, created: int) -> None:
    world.client().create(_ds(surge, unavailable))
    world.advance(30)
    before = {p["metadata"]["name"] for p in _pods(world)}
    _set_image(world, "registry.k8s.io/pause:3.11")
    after = {p["metadata"]["name"] for p in _pods(world)}
    assert len(before - after) == deleted
    assert len(after - before) == (created if surge else deleted)  # the manage loop refills emptied nodes


def test_a_rolling_update_ends_with_every_node_updated(world: World) -> None:
    world.client().create(_ds())
    world.advance(30)
    _set_image(world, "registry.k8s.io/pause:3.11")
    world.advance(300)
    status = _status(world)
    assert status["updatedNumberScheduled"] == status["numberAvailable"] == 3
    assert all(p["spec"]["containers"][0]["image"] == "registry.k8s.io/pause:3.11" for p in _pods(world))
    assert sorted(cr["revision"] for cr in world.client().list("apps/v1", "ControllerRevision", "default")["items"]) \
        == [1, 2]


def test_while_a_hook_runs_at_one_node_exactly_one_node_is_updated(world: World) -> None:
    ds = _ds()
    ds["spec"]["lifecycleHooks"] = [{
        "name": "check", "trigger": {"progressAvailableParams": {"progressPoint": 1}},
        "jobSpec": {"template": {"metadata": {"annotations": {"harness.test/job-duration": "10m"}},
                                 "spec": {"restartPolicy": "Never",
                                          "containers": [{"name": "c", "image": "busybox"}]}}}}]
    world.client().create(ds)
    world.advance(700)
    _set_image(world, "registry.k8s.io/pause:3.11")
    world.advance(120)
    job = world.client().get("batch/v1", "Job", "agent-2-check", "default")
    assert job["metadata"]["ownerReferences"][0]["kind"] == "ControllerRevision"
    assert _status(world)["updatedNumberScheduled"] == 1
    world.advance(600)
    assert _status(world)["updatedNumberScheduled"] == 3
