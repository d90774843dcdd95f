"""Behaviour of the ReplicaSet controller simulator: replicas, replacement, scale-down order, adoption, status."""

from __future__ import annotations

from typing import Any

from harness.apiserver.subresources.scale import get_scale
from harness.client import InProcessClient
from harness.kube.errors import FieldError, invalid
from harness.kube.names.core import DEFAULT_NAMESPACE
from harness.world.replicaset import ReplicaSetController, ReplicationControllerController
from harness.world.world import World

TEMPLATE = {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "nginx"}], "terminationGracePeriodSeconds": 30}}


def make_world(simulators: tuple[str, ...] = ("scheduler", "kubelet", "replicaset"),
               nodes: tuple[str, ...] = ("n1", "n2")) -> tuple[World, InProcessClient]:
    world = World(simulators=list(simulators))
    client = world.client()
    for name in nodes:
        client.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
    world.settle()
    return world, client


def make_rs(client: InProcessClient, replicas: int = 2, **spec: Any) -> dict[str, Any]:
    return client.create(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": "web", "namespace": DEFAULT_NAMESPACE},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE, **spec},
        }
    )


def pods(client: InProcessClient) -> list[dict[str, Any]]:
    return client.list("v1", "Pod", DEFAULT_NAMESPACE)["items"]


def live(client: InProcessClient) -> list[dict[str, Any]]:
    return [p for p in pods(client) if not p["metadata"].get("deletionTimestamp")]


def rs_status(client: InProcessClient) -> dict[str, Any]:
    return client.get("apps/v1", "ReplicaSet", "web", DEFAULT_NAMESPACE)["status"]


def test_creates_replicas_from_the_template_owned_by_the_set() -> None:
    world, client = make_world()
    rs = make_rs(client, 3)
    world.settle()
    created = pods(client)
    assert len(created) == 3
    for pod in created:
        meta = pod["metadata"]
        assert meta["generateName"] == "web-" and meta["name"].startswith("web-")
        assert meta["labels"] == {"app": "web"}
        assert meta["ownerReferences"] == [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                                            "uid": rs["metadata"]["uid"], "controller": True,
                                            "blockOwnerDeletion": True}]
    assert rs_status(client) == {"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 3,
                                 "availableReplicas": 3, "observedGeneration": 1}


def test_deleted_pod_is_replaced_while_it_is_still_terminating() -> None:
    world, client = make_world()
    make_rs(client, 2)
    world.settle()
    victim = pods(client)[0]["metadata"]["name"]
    client.delete("v1", "Pod", victim, DEFAULT_NAMESPACE)
    world.settle()
    assert len(pods(client)) == 3  # the victim terminates for its grace period
    assert len(live(client)) == 2 and victim not in {p["metadata"]["name"] for p in live(client)}
    assert rs_status(client)["replicas"] == 2
    world.advance(30)
    assert len(pods(client)) == 2


def test_evicted_pod_is_replaced() -> None:
    world, client = make_world()
    make_rs(client, 1)
    world.settle()
    victim = pods(client)[0]["metadata"]["name"]
    client.evict(victim, DEFAULT_NAMESPACE)
    world.advance(30)
    remaining = pods(client)
    assert len(remaining) == 1 and remaining[0]["metadata"]["name"] != victim
    assert remaining[0]["status"]["phase"] == "Running"


def test_scale_down_deletes_unscheduled_and_not_ready_pods_first() -> None:
    world, client = make_world(simulators=("kubelet", "replicaset"))
    make_rs(client, 3)
    world.settle()
    names = sorted(p["metadata"]["name"] for p in pods(client))
    # Bind two by hand (no scheduler here); the third stays unscheduled; one bound pod is never Ready.
    client.patch("v1", "Pod", names[0], {"metadata": {"annotations": {"harness.test/never-ready": "true"}}},
                 namespace=DEFAULT_NAMESPACE)
    client.bind(names[0], DEFAULT_NAMESPACE, "n1")
    client.bind(names[1], DEFAULT_NAMESPACE, "n2")
    world.settle()
    client.patch("apps/v1", "ReplicaSet", "web", {"spec": {"replicas": 1}}, namespace=DEFAULT_NAMESPACE)
    world.settle()
    assert [p["metadata"]["name"] for p in live(client)] == [names[1]]


def test_pod_deletion_cost_protects_a_pod() -> None:
    world, client = make_world()
    make_rs(client, 2)
    world.settle()
    keep = pods(client)[0]["metadata"]["name"]
    cost = {"controller.kubernetes.io/pod-deletion-cost": "100"}
    client.patch("v1", "Pod", keep, {"metadata": {"annotations": cost}}, namespace=DEFAULT_NAMESPACE)
    client.patch("apps/v1", "ReplicaSet", "web", {"spec": {"replicas": 1}}, namespace=DEFAULT_NAMESPACE)
    world.settle()
    assert [p["metadata"]["name"] for p in live(client)] == [keep]


def test_orphan_pods_matching_the_selector_are_adopted() -> None:
    world, client = make_world()
    client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "stray", "namespace": DEFAULT_NAMESPACE,
                                                                   "labels": {"app": "web"}},
                   "spec": TEMPLATE["spec"]})
    rs = make_rs(client, 2)
    world.settle()
    stray = client.get("v1", "Pod", "stray", DEFAULT_NAMESPACE)
    assert stray["metadata"]["ownerReferences"][0]["uid"] == rs["metadata"]["uid"]
    assert len(pods(client)) == 2


def test_available_replicas_wait_for_min_ready_seconds() -> None:
    world, client = make_world()
    make_rs(client, 2, minReadySeconds=20)
    world.settle()
    assert rs_status(client)["readyReplicas"] == 2
    assert "availableReplicas" not in rs_status(client)
    world.advance(19)
    assert "availableReplicas" not in rs_status(client)
    world.advance(1)
    assert rs_status(client)["availableReplicas"] == 2


def test_deleting_replica_set_creates_nothing() -> None:
    world, client = make_world()
    make_rs(client, 2)
    world.settle()
    client.delete("apps/v1", "ReplicaSet", "web", DEFAULT_NAMESPACE, propagation_policy="Orphan")
    client.delete("v1", "Pod", pods(client)[0]["metadata"]["name"], DEFAULT_NAMESPACE)
    world.settle()
    assert len(live(client)) == 1


def test_failed_creation_sets_replica_failure() -> None:
    world, client = make_world(simulators=("replicaset",))

    def refuse_pods(operation: str, rt: Any, new: Any, old: Any) -> list[FieldError]:
        # A ReplicaSet whose template the apiserver accepts, but whose Pods an admission plugin
        # (a validating webhook, say) refuses.
        return [invalid("spec", "x", "denied by policy")] if operation == "CREATE" else []

    world.management.add_admission("", "Pod", refuse_pods)
    make_rs(client, 1)
    world.settle()
    (condition,) = rs_status(client)["conditions"]
    assert (condition["type"], condition["status"], condition["reason"]) == ("ReplicaFailure", "True", "FailedCreate")


def test_controller_is_registered_under_its_fixed_name() -> None:
    world, _ = make_world(simulators=("replicaset",), nodes=())
    assert isinstance(world.simulator("replicaset"), ReplicaSetController)


def test_a_replication_controller_keeps_its_replicas_like_a_replica_set() -> None:
    world, client = make_world(simulators=("scheduler", "kubelet", "replicationcontroller"))
    rc = client.create({"apiVersion": "v1", "kind": "ReplicationController",
                        "metadata": {"name": "web", "namespace": DEFAULT_NAMESPACE},
                        "spec": {"replicas": 2, "template": TEMPLATE}})
    # The selector and the object's labels default to the template's labels.
    assert rc["spec"]["selector"] == TEMPLATE["metadata"]["labels"]
    assert rc["metadata"]["labels"] == TEMPLATE["metadata"]["labels"]
    world.settle()
    owned = [p for p in pods(client) if p["metadata"]["ownerReferences"][0]["kind"] == "ReplicationController"]
    assert len(owned) == 2
    client.delete("v1", "Pod", owned[0]["metadata"]["name"], DEFAULT_NAMESPACE)
    world.settle()
    assert len(live(client)) == 2
    status = client.get("v1", "ReplicationController", "web", DEFAULT_NAMESPACE)["status"]
    assert (status["replicas"], status["observedGeneration"]) == (2, 1)
    rc = world.management.registry.by_plural("", "v1", "replicationcontrollers")
    scale = get_scale(world.management, rc, DEFAULT_NAMESPACE, "web")
    assert scale["status"]["selector"] == "app=web"


def test_the_replication_controller_simulator_is_registered_under_its_name() -> None:
    world, _ = make_world(simulators=("replicationcontroller",), nodes=())
    assert isinstance(world.simulator("replicationcontroller"), ReplicationControllerController)


def test_a_replication_controller_whose_selector_changes_releases_the_pods_it_no_longer_selects() -> None:
    # Upstream claims the pods with the current selector at each sync: the old pods are released (their
    # controller reference removed, left running) and the new template's pods are created in their place.
    world, client = make_world(simulators=("scheduler", "kubelet", "replicationcontroller"))
    client.create({"apiVersion": "v1", "kind": "ReplicationController",
                   "metadata": {"name": "web", "namespace": DEFAULT_NAMESPACE},
                   "spec": {"replicas": 2, "template": TEMPLATE}})
    world.settle()
    before = {p["metadata"]["name"] for p in pods(client)}
    labels = {"app": "web", "tier": "front"}
    client.patch("v1", "ReplicationController", "web",
                 {"spec": {"selector": labels, "template": {"metadata": {"labels": labels}}}},
                 namespace=DEFAULT_NAMESPACE, patch_type="application/merge-patch+json")
    world.settle()
    released = [p for p in pods(client) if p["metadata"]["name"] in before]
    assert len(released) == 2 and not any(p["metadata"].get("ownerReferences") for p in released)
    owned = [p for p in pods(client) if p["metadata"]["name"] not in before]
    assert len(owned) == 2
    assert all(p["metadata"]["labels"] == labels and p["metadata"]["ownerReferences"][0]["name"] == "web"
               for p in owned)
    status = client.get("v1", "ReplicationController", "web", DEFAULT_NAMESPACE)["status"]
    assert (status["replicas"], status["fullyLabeledReplicas"]) == (2, 2)
