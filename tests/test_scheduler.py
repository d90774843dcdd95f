"""Behaviour of the scheduler simulator: filters, deterministic placement, upstream's FitError message."""

from __future__ import annotations

from typing import Any

from harness.client import InProcessClient
from harness.kube.names.core import DEFAULT_NAMESPACE
from harness.world.kubelet import pod_condition
from harness.world.scheduler import fit_error_message, tolerates
from harness.world.world import World


def make_world(*nodes: str) -> tuple[World, InProcessClient]:
    world = World(simulators=["scheduler", "kubelet"])
    client = world.client()
    for name in nodes:
        client.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"zone": name}}})
    world.settle()
    return world, client


def make_pod(client: InProcessClient, name: str, **spec: Any) -> None:
    client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": DEFAULT_NAMESPACE},
                   "spec": {"containers": [{"name": "app", "image": "nginx"}], **spec}})


def node_of(client: InProcessClient, name: str) -> str | None:
    return client.get("v1", "Pod", name, DEFAULT_NAMESPACE)["spec"].get("nodeName")


def scheduled_condition(client: InProcessClient, name: str) -> dict[str, Any]:
    condition = pod_condition(client.get("v1", "Pod", name, DEFAULT_NAMESPACE), "PodScheduled")
    assert condition is not None
    return condition


def test_pods_spread_to_the_node_with_fewest_pods_then_by_name() -> None:
    world, client = make_world("b", "a", "c")
    for i in range(4):
        make_pod(client, f"p{i}")
        world.settle()
    assert [node_of(client, f"p{i}") for i in range(4)] == ["a", "b", "c", "a"]
    assert client.get("v1", "Pod", "p0", DEFAULT_NAMESPACE)["status"]["phase"] == "Running"


def test_scheduled_event_names_the_node() -> None:
    world, client = make_world("a")
    make_pod(client, "p")
    world.settle()
    events = [e for e in client.list("v1", "Event", DEFAULT_NAMESPACE)["items"] if e["reason"] == "Scheduled"]
    assert [e["message"] for e in events] == ["Successfully assigned default/p to a"]


def test_cordoned_nodes_get_no_pods() -> None:
    world, client = make_world("a", "b")
    client.patch("v1", "Node", "a", {"spec": {"unschedulable": True}})
    world.settle()
    for i in range(3):
        make_pod(client, f"p{i}")
    world.settle()
    assert {node_of(client, f"p{i}") for i in range(3)} == {"b"}


def test_unschedulable_pod_gets_upstreams_fit_error_and_waits() -> None:
    world, client = make_world("a", "b", "c")
    client.patch("v1", "Node", "a", {"spec": {"unschedulable": True}})
    world.settle()
    make_pod(client, "p", nodeSelector={"zone": "nowhere"})
    world.settle()
    condition = scheduled_condition(client, "p")
    assert (condition["status"], condition["reason"]) == ("False", "Unschedulable")
    assert condition["message"] == (
        "0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) didn't match Pod's node "
        "affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    assert node_of(client, "p") is None
    failed = [e for e in client.list("v1", "Event", DEFAULT_NAMESPACE)["items"] if e["reason"] == "FailedScheduling"]
    assert [e["type"] for e in failed] == ["Warning"]


def test_unschedulable_pod_is_retried_when_a_node_changes() -> None:
    world, client = make_world("a")
    client.patch("v1", "Node", "a", {"spec": {"unschedulable": True}})
    world.settle()
    make_pod(client, "p")
    world.settle()
    assert node_of(client, "p") is None
    client.patch("v1", "Node", "a", {"spec": {"unschedulable": None}})
    world.settle()
    assert node_of(client, "p") == "a"
    assert scheduled_condition(client, "p")["status"] == "True"


def test_untolerated_taint_is_named_in_the_message() -> None:
    world, client = make_world("a")
    taint = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    client.patch("v1", "Node", "a", {"spec": {"taints": [taint]}})
    world.settle()
    make_pod(client, "p")
    make_pod(client, "q", tolerations=[{"key": "dedicated", "operator": "Equal", "value": "gpu",
                                        "effect": "NoSchedule"}])
    world.settle()
    assert scheduled_condition(client, "p")["message"].startswith(
        "0/1 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}.")
    assert node_of(client, "q") == "a"


def test_not_ready_node_gets_no_pods() -> None:
    world, client = make_world("a", "b")
    world.simulator("kubelet").set_node_health("a", "False")
    world.settle()
    for i in range(2):
        make_pod(client, f"p{i}")
    world.settle()
    assert {node_of(client, "p0"), node_of(client, "p1")} == {"b"}


def test_node_without_a_ready_condition_is_treated_as_unreachable() -> None:
    world = World(simulators=["scheduler"])
    client = world.client()
    client.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}})
    make_pod(client, "p")
    world.settle()
    assert "1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }" in scheduled_condition(
        client, "p")["message"]


def test_no_nodes_at_all() -> None:
    world, client = make_world()
    make_pod(client, "p")
    world.settle()
    assert scheduled_condition(client, "p")["message"] == "no nodes available to schedule pods"


def test_required_node_affinity_on_the_node_name() -> None:
    world, client = make_world("a", "b")
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b"]}]}]}}}
    make_pod(client, "p", affinity=affinity)
    world.settle()
    assert node_of(client, "p") == "b"


def test_other_schedulers_pods_and_gated_pods_are_left_alone() -> None:
    world, client = make_world("a")
    make_pod(client, "p", schedulerName="my-scheduler")
    make_pod(client, "q", schedulingGates=[{"name": "example.com/wait"}])
    world.settle()
    assert node_of(client, "p") is None and node_of(client, "q") is None


def test_disabled_scheduler_binds_nothing_until_enabled() -> None:
    world, client = make_world("a")
    world.set_enabled("scheduler", False)
    make_pod(client, "p")
    world.settle()
    assert node_of(client, "p") is None
    world.set_enabled("scheduler", True)
    world.settle()
    assert node_of(client, "p") == "a"


def test_toleration_matching_rules() -> None:
    taint = {"key": "k", "value": "v", "effect": "NoExecute"}
    assert tolerates([{"operator": "Exists"}], taint)
    assert tolerates([{"key": "k", "operator": "Exists", "effect": "NoExecute"}], taint)
    assert not tolerates([{"key": "k", "operator": "Equal", "value": "w"}], taint)
    assert not tolerates([{"key": "k", "operator": "Exists", "effect": "NoSchedule"}], taint)


def test_fit_error_reasons_are_sorted_as_strings() -> None:
    reasons = {"node(s) were unschedulable": 2, "node(s) didn't match Pod's node affinity/selector": 10}
    message = fit_error_message(12, reasons)
    assert message.startswith("0/12 nodes are available: 10 node(s) didn't match Pod's node affinity/selector, "
                              "2 node(s) were unschedulable. ")
