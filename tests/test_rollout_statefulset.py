"""The reference StatefulSet controller (controllers/rollout/statefulset.py) in a world of its own: pods
by ordinal, ordered and parallel management, partitions, OnDelete, ControllerRevisions, availability on
the virtual clock and hook Jobs owned by the update revision."""

from __future__ import annotations

from typing import Any

import pytest

from harness.client import JSON_PATCH, MERGE
from harness.world.world import World

READY_DELAY = "5s"


def _sts(replicas: int = 3, policy: str = "OrderedReady", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "replicas": replicas, "serviceName": "db", "podManagementPolicy": policy,
        "selector": {"matchLabels": {"app": "db"}},
        "template": {"metadata": {"labels": {"app": "db"}, "annotations": {"harness.test/ready-delay": READY_DELAY}},
                     "spec": {"containers": [{"name": "db", "image": "registry.k8s.io/pause:3.10"}]}},
    }
    body.update(spec)
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "default"},
            "spec": body}


@pytest.fixture
def world() -> World:
    world = World(controllers=["statefulset"])
    world.client().create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    world.settle()
    return world


def _pods(world: World) -> dict[str, dict[str, Any]]:
    return {p["metadata"]["name"]: p for p in world.client().list("v1", "Pod", "default")["items"]}


def _status(world: World) -> dict[str, Any]:
    return world.client().get("apps/v1", "StatefulSet", "db", "default").get("status") or {}


def _set_image(world: World, image: str) -> None:
    world.client().patch("apps/v1", "StatefulSet", "db",
                         [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": image}],
                         namespace="default", patch_type=JSON_PATCH)
    world.settle()


def _revisions(world: World) -> dict[str, int]:
    return {cr["metadata"]["name"]: cr["revision"]
            for cr in world.client().list("apps/v1", "ControllerRevision", "default")["items"]}


def test_pods_are_named_by_ordinal_labelled_with_their_revision_and_owned(world: World) -> None:
    world.client().create(_sts(2))
    world.advance(60)
    pods = _pods(world)
    assert sorted(pods) == ["db-0", "db-1"]
    revision = _status(world)["updateRevision"]
    labels = pods["db-1"]["metadata"]["labels"]
    assert labels["controller-revision-hash"] == revision
    assert labels["statefulset.kubernetes.io/pod-name"] == "db-1"
    assert labels["apps.kubernetes.io/pod-index"] == "1"
    assert pods["db-1"]["spec"]["hostname"] == "db-1" and pods["db-1"]["spec"]["subdomain"] == "db"
    assert pods["db-1"]["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"
    assert _revisions(world) == {revision: 1}


def test_ordered_ready_creates_the_next_pod_only_once_the_previous_one_is_ready(world: World) -> None:
    world.client().create(_sts(3))
    world.settle()
    assert sorted(_pods(world)) == ["db-0"]
    world.advance(5)
    assert sorted(_pods(world)) == ["db-0", "db-1"]
    world.advance(10)
    assert sorted(_pods(world)) == ["db-0", "db-1", "db-2"]


def test_parallel_creates_every_pod_at_once(world: World) -> None:
    world.client().create(_sts(3, "Parallel"))
    world.settle()
    assert sorted(_pods(world)) == ["db-0", "db-1", "db-2"]


def test_a_finished_rollout_reports_every_count_and_one_revision(world: World) -> None:
    world.client().create(_sts(3))
    world.advance(60)
    _set_image(world, "registry.k8s.io/pause:3.11")
    world.advance(600)
    status = _status(world)
    assert status["currentRevision"] == status["updateRevision"]
    assert (status["replicas"], status["readyReplicas"], status["availableReplicas"], status["currentReplicas"],
            status["updatedReplicas"], status["observedGeneration"]) == (3, 3, 3, 3, 3, 2)
    assert sorted(_revisions(world).values()) == [1, 2]
    assert {p["metadata"]["labels"]["controller-revision-hash"] for p in _pods(world).values()} == {
        status["updateRevision"]}


def test_a_partition_keeps_the_lower_ordinals_at_the_current_revision(world: World) -> None:
    world.client().create(_sts(4, updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}))
    world.advance(60)
    before = _status(world)["currentRevision"]
    _set_image(world, "registry.k8s.io/pause:3.11")
    world.advance(600)
    status = _status(world)
    revisions = {n: p["metadata"]["labels"]["controller-revision-hash"] for n, p in _pods(world).items()}
    assert revisions == {"db-0": before, "db-1": before, "db-2": status["updateRevision"],
                         "db-3": status["updateRevision"]}
    assert status["currentRevision"] == before and status["updatedReplicas"] == 2


def test_scaling_down_removes_the_highest_ordinal_first(world: World) -> None:
    world.client().create(_sts(3))
    world.advance(60)
    world.client().patch("apps/v1", "StatefulSet", "db", {"spec": {"replicas": 2}}, namespace="default",
                         patch_type=MERGE)
    world.settle()
    assert _pods(world)["db-2"]["metadata"].get("deletionTimestamp")
    assert not _pods(world)["db-1"]["metadata"].get("deletionTimestamp")


def test_on_delete_replaces_nothing_until_a_pod_is_deleted(world: World) -> None:
    world.client().create(_sts(2, updateStrategy={"type": "OnDelete"}))
    world.advance(60)
    old = _status(world)["updateRevision"]
    _set_image(world, "registry.k8s.io/pause:3.11")
    world.advance(120)
    assert {p["metadata"]["labels"]["controller-revision-hash"] for p in _pods(world).values()} == {old}
    world.client().delete("v1", "Pod", "db-1", "default")
    world.advance(120)
    assert _pods(world)["db-1"]["metadata"]["labels"]["controller-revision-hash"] == _status(world)["updateRevision"]
    assert _pods(world)["db-0"]["metadata"]["labels"]["controller-revision-hash"] == old


def test_min_ready_seconds_delays_availability_on_the_virtual_clock(world: World) -> None:
    world.client().create(_sts(1, minReadySeconds=30))
    world.advance(5)  # Ready now
    assert _status(world).get("readyReplicas") == 1 and _status(world).get("availableReplicas") == 0
    world.advance(29)
    assert _status(world).get("availableReplicas") == 0
    world.advance(1)  # exactly minReadySeconds after Ready: available (recent upstream's <=)
    assert _status(world).get("availableReplicas") == 1


def test_going_back_to_an_older_template_renumbers_its_controller_revision(world: World) -> None:
    world.client().create(_sts(1))
    world.advance(60)
    first = _status(world)["updateRevision"]
    _set_image(world, "registry.k8s.io/pause:3.11")
    world.advance(120)
    _set_image(world, "registry.k8s.io/pause:3.10")
    world.advance(120)
    assert _status(world)["updateRevision"] == first
    assert _revisions(world)[first] == 3 and sorted(_revisions(world).values()) == [2, 3]


def test_hook_jobs_belong_to_the_update_revision_and_carry_the_rollout_environment(world: World) -> None:
    sts = _sts(2)
    sts["spec"]["lifecycleHooks"] = [{
        "name": "check", "trigger": {"progressAvailableParams": {"progressPoint": "50%"}},
        "jobSpec": {"template": {"metadata": {"annotations": {"harness.test/job-duration": "10m"}},
                                 "spec": {"restartPolicy": "Never",
                                          "containers": [{"name": "c", "image": "busybox"}]}}}}]
    world.client().create(sts)
    world.advance(120)
    world.advance(700)  # the first revision's hook finishes
    _set_image(world, "registry.k8s.io/pause:3.11")
    world.advance(120)
    job = world.client().get("batch/v1", "Job", "db-2-check", "default")
    update = _status(world)["updateRevision"]
    assert job["metadata"]["ownerReferences"][0]["kind"] == "ControllerRevision"
    assert job["metadata"]["ownerReferences"][0]["name"] == update
    env = {e["name"]: e["value"] for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["K8S_ROLLOUT_TO_OBJECT"] == f"default/{update}" and env["K8S_ROLLOUT_TYPE"] == "ROLLOUT"
    # Paused at the point: one of two Pods updated while the hook runs.
    assert _status(world)["updatedReplicas"] == 1
    world.advance(60)
    assert _status(world)["updatedReplicas"] == 1
