"""Node drain of the reference machine controller (controllers/machine/drain.py, drain_rules.py): the released
condition message format and its truncation rules, the filter chain, MachineDrainRules, eviction results
(PodDisruptionBudget, terminating namespace), unreachable Nodes, and bad input (a Node that vanishes, a
Pod whose Namespace is missing, an invalid MachineDrainRule)."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.machine import webhooks
from controllers.machine.drain import EvictionResult, pod_list_text
from harness.kube.names.capi import CLUSTER_API_VERSION
from harness.kube.names.core import DEFAULT_NAMESPACE
from tests.test_machine_deletion import CapiWorld

START = "2026-01-01T00:00:00Z"
HEADER = "Drain not completed yet (started at 2026-01-01T00:00:00Z):"
PDB_FAILURE = ("Cannot evict pod as it would violate the pod's disruption budget. The disruption budget web needs 1 "
               "healthy pods and has 1 currently")


def pods(*names: str) -> list[dict[str, Any]]:
    out = []
    for name in names:
        namespace, _, pod_name = name.partition("/")
        out.append({"metadata": {"namespace": namespace, "name": pod_name}})
    return out


# -- ConditionMessage (pure) -------------------------------------------------------------------------------


def test_a_completed_drain_has_an_empty_message() -> None:
    assert EvictionResult(not_found=pods("a/p"), ignored=pods("a/q")).condition_message(START) == ""


def test_pod_lists_are_cut_at_three_with_a_count_of_the_rest() -> None:
    assert pod_list_text(pods("a/p1", "a/p2", "a/p3", "a/p4", "a/p5"), 3) == "a/p1, a/p2, a/p3, ... (2 more)"
    assert pod_list_text(pods("a/p1", "a/p2", "a/p3"), 3) == "a/p1, a/p2, a/p3"


def test_the_message_lists_each_kind_of_blocker_in_upstream_order() -> None:
    result = EvictionResult(
        deletion_timestamp_set=pods("a/term"),
        failed_eviction={PDB_FAILURE: pods("a/w1", "a/w2"), "connection refused": pods("a/x")},
        to_wait_completed_now=pods("a/job1", "a/job2"),
        to_trigger_eviction_later=pods("a/db-0", "a/db-1", "a/db-2", "a/db-3"),
        to_wait_completed_later=pods("a/late"),
    )
    assert result.condition_message(START) == "\n".join([
        HEADER,
        "* Pod a/term: deletionTimestamp set, but still not removed from the Node",
        "* Pods a/w1, a/w2: cannot evict pod as it would violate the pod's disruption budget. The disruption budget "
        "web needs 1 healthy pods and has 1 currently",
        "* Pod a/x: failed to evict Pod, connection refused",
        "* Pods a/job1, a/job2: waiting for completion",
        "After above Pods have been removed from the Node, the following Pods will be evicted: a/db-0, a/db-1, a/db-2, "
        "... (1 more)",
        "After above Pods have been removed from the Node, waiting for the following Pods to complete without "
        "eviction: a/late",
    ])


def test_failures_beyond_the_first_five_keys_are_counted_as_other_issues() -> None:
    failed = {f"error {c}": pods(f"a/{c}") for c in "abcdef"}
    failed["error g"] = pods("a/g1", "a/g2")
    lines = EvictionResult(failed_eviction=failed).condition_message(START).split("\n")
    assert lines[1:6] == [f"* Pod a/{c}: failed to evict Pod, error {c}" for c in "abcde"]
    assert lines[6] == "* 3 Pods with other issues"
    one_more = {f"error {c}": pods(f"a/{c}") for c in "abcdef"}
    assert EvictionResult(failed_eviction=one_more).condition_message(START).endswith("\n* 1 Pod with other issues")


def test_failure_keys_are_sorted_byte_wise() -> None:
    failed = {"b failure": pods("a/b"), "B failure": pods("a/B"), "a failure": pods("a/a")}
    lines = EvictionResult(failed_eviction=failed).condition_message(START).split("\n")
    assert [line.rsplit(", ", 1)[1] for line in lines[1:]] == ["B failure", "a failure", "b failure"]


# -- drain through the world -------------------------------------------------------------------------------


@pytest.fixture
def capi() -> CapiWorld:
    return CapiWorld()


def _message(capi: CapiWorld, name: str = "m1") -> str:
    return str(capi.deleting(name)["message"])


def test_the_drain_cordons_evicts_and_requeues_every_20_seconds(capi: CapiWorld) -> None:
    capi.machine("m1")
    capi.pod("slow", "m1", annotations={"harness.test/shutdown-seconds": "45"}, grace=60)
    capi.world.settle()
    capi.delete("m1")
    start = capi.get("m1")["status"]["deletion"]["nodeDrainStartTime"]
    assert capi.remote.get("v1", "Node", "m1")["spec"]["unschedulable"] is True
    expected = (f"Drain not completed yet (started at {start}):\n"
                "* Pod default/slow: deletionTimestamp set, but still not removed from the Node")
    assert _message(capi) == expected
    drained = capi.condition("m1", "DrainingSucceeded")
    assert (drained["status"], drained["reason"], drained["severity"], drained["message"]) == (
        "False", "Draining", "Info", expected)
    capi.world.advance(40)
    assert capi.deleting("m1")["reason"] == "DrainingNode"  # the Pod went at 45 s; the next pass is at 60 s
    capi.world.advance(19)
    assert capi.deleting("m1")["reason"] == "DrainingNode"
    capi.world.advance(2)
    assert capi.condition("m1", "DrainingSucceeded")["status"] == "True"


def test_a_pod_protected_by_its_disruption_budget_is_reported_and_retried(capi: CapiWorld) -> None:
    capi.machine("m1")
    capi.pod("web-0", "m1", labels={"app": "web"})
    capi.remote.create({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                        "metadata": {"name": "web", "namespace": DEFAULT_NAMESPACE},
                        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}})
    capi.world.settle()
    capi.delete("m1")
    line = ("* Pod default/web-0: cannot evict pod as it would violate the pod's disruption budget. The disruption "
            "budget web needs 1 healthy pods and has 1 currently")
    assert _message(capi).split("\n")[1] == line
    capi.world.advance(200)
    assert _message(capi).split("\n")[1] == line
    assert capi.remote.get("v1", "Pod", "web-0", DEFAULT_NAMESPACE)


def test_an_eviction_in_a_terminating_namespace_is_reported(capi: CapiWorld) -> None:
    capi.machine("m1")
    capi.remote.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "going"}})
    capi.pod("p", "m1", namespace="going")
    capi.world.settle()
    capi.world.set_enabled("namespace", False, cluster="default/c1")
    capi.remote.delete("v1", "Namespace", "going")
    capi.world.settle()
    capi.delete("m1")
    assert _message(capi).split("\n")[1] == (
        "* Pod going/p: failed to evict Pod, Cannot evict pod from terminating namespace: unable to create eviction "
        "(kube-controller-manager should set deletionTimestamp)")


def test_daemonset_mirror_and_skip_labelled_pods_are_not_drained(capi: CapiWorld) -> None:
    capi.machine("m1", annotations={"pre-terminate.delete.hook.machine.cluster.x-k8s.io/hold": ""})
    ds = capi.remote.create({"apiVersion": "apps/v1", "kind": "DaemonSet",
                             "metadata": {"name": "agent", "namespace": DEFAULT_NAMESPACE},
                             "spec": {"selector": {"matchLabels": {"app": "agent"}},
                                      "template": {"metadata": {"labels": {"app": "agent"}},
                                                   "spec": {"containers": [{"name": "a", "image": "a"}]}}}})
    capi.pod("agent-m1", "m1", labels={"app": "agent"},
             owner={"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "uid": ds["metadata"]["uid"],
                    "controller": True})
    capi.pod("static", "m1", annotations={"kubernetes.io/config.mirror": "abc"})
    capi.pod("keep", "m1", labels={"cluster.x-k8s.io/drain": "SKIP"})
    capi.world.settle()
    capi.delete("m1")
    assert capi.deleting("m1")["reason"] == "WaitingForPreTerminateHook"
    names = {p["metadata"]["name"] for p in capi.remote.list("v1", "Pod", DEFAULT_NAMESPACE)["items"]}
    assert {"agent-m1", "static", "keep"} <= names


def test_wait_completed_pods_are_waited_for_and_never_evicted(capi: CapiWorld) -> None:
    capi.machine("m1")
    capi.pod("job", "m1", labels={"cluster.x-k8s.io/drain": "Wait-Completed"})
    capi.world.settle()
    capi.delete("m1")
    capi.world.advance(100)
    assert _message(capi).split("\n")[1] == "* Pod default/job: waiting for completion"
    assert not capi.remote.get("v1", "Pod", "job", DEFAULT_NAMESPACE)["metadata"].get("deletionTimestamp")
    capi.remote.delete("v1", "Pod", "job", DEFAULT_NAMESPACE, grace_period_seconds=0)
    capi.world.advance(20)
    assert capi.condition("m1", "DrainingSucceeded")["status"] == "True"


def _rule(capi: CapiWorld, name: str, behavior: str, order: int | None = None,
          pods: list[dict[str, Any]] | None = None) -> None:
    drain: dict[str, Any] = {"behavior": behavior}
    if order is not None:
        drain["order"] = order
    spec: dict[str, Any] = {"drain": drain}
    if pods is not None:
        spec["pods"] = pods
    capi.client.create(
        {
            "apiVersion": CLUSTER_API_VERSION,
            "kind": "MachineDrainRule",
            "metadata": {"name": name, "namespace": DEFAULT_NAMESPACE},
            "spec": spec,
        }
    )


def test_pods_with_a_lower_drain_order_are_evicted_first(capi: CapiWorld) -> None:
    capi.machine("m1")
    _rule(capi, "db", "Drain", 10, [{"selector": {"matchLabels": {"app": "db"}}}])
    capi.pod("db-0", "m1", labels={"app": "db"})
    capi.pod("web-1", "m1", labels={"app": "web"})
    capi.world.settle()
    capi.delete("m1")
    assert _message(capi).split("\n")[1:] == [
        "* Pod default/web-1: deletionTimestamp set, but still not removed from the Node",
        "After above Pods have been removed from the Node, the following Pods will be evicted: default/db-0",
    ]
    assert not capi.remote.get("v1", "Pod", "db-0", DEFAULT_NAMESPACE)["metadata"].get("deletionTimestamp")
    capi.world.advance(40)
    assert capi.remote.get("v1", "Pod", "db-0", DEFAULT_NAMESPACE)["metadata"].get("deletionTimestamp")


def test_the_first_matching_rule_by_name_decides(capi: CapiWorld) -> None:
    capi.machine("m1", annotations={"pre-terminate.delete.hook.machine.cluster.x-k8s.io/hold": ""})
    _rule(capi, "b-drain", "Drain", 5)
    _rule(capi, "a-skip", "Skip", None, [{"selector": {"matchLabels": {"app": "cache"}}}])
    capi.pod("cache", "m1", labels={"app": "cache"})
    capi.world.settle()
    capi.delete("m1")
    assert capi.deleting("m1")["reason"] == "WaitingForPreTerminateHook"
    assert not capi.remote.get("v1", "Pod", "cache", DEFAULT_NAMESPACE)["metadata"].get("deletionTimestamp")


def test_an_invalid_rule_fails_the_drain_of_every_machine_in_the_namespace(
    capi: CapiWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    capi.machine("m1")
    capi.pod("p", "m1")
    capi.world.settle()
    monkeypatch.setattr(webhooks, "validate_machine_drain_rule", lambda _rule: [])  # as if created before the webhook
    _rule(capi, "broken", "Drain", None, [{"selector": {"matchExpressions": [{"key": "app", "operator": "In"}]}}])
    capi.delete("m1")
    expected = (
        "failed to get Pods for eviction: failed to get matching MachineDrainRules: invalid selectors in "
        "MachineDrainRule broken: spec.pods[0].selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]"
        "string(nil), MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:\"app\", "
        "Operator:\"In\", Values:[]string(nil)}}}: values: Invalid value: []string(nil): for 'in', 'notin' "
        "operators, values set can't be empty")
    drained = capi.condition("m1", "DrainingSucceeded")
    assert (drained["status"], drained["reason"], drained["severity"], drained["message"]) == (
        "False", "DrainingFailed", "Warning", expected)
    assert _message(capi) == "Error draining Node, please check controller logs for errors"
    event = capi.events("FailedDrainNode")[0]
    assert (event["type"], event["message"]) == ("Warning", f'error draining Machine\'s node "m1": {expected}')


def test_a_pod_whose_namespace_is_missing_fails_the_drain_visibly(capi: CapiWorld) -> None:
    capi.machine("m1")
    capi.remote.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ghost"}})
    capi.pod("p", "m1", namespace="ghost")
    capi.world.settle()
    capi.world.set_enabled("namespace", False, cluster="default/c1")
    capi.remote.delete("v1", "Namespace", "ghost")
    capi.remote.finalize_namespace("ghost", [])
    capi.world.settle()
    capi.delete("m1")
    capi.world.advance(30)
    drained = capi.condition("m1", "DrainingSucceeded")
    assert drained["message"] == (
        'failed to get Pods for eviction: Pods with error "Pod Namespace does not exist": ghost/p')
    assert drained["reason"] == "DrainingFailed"
    assert capi.exists("m1")


def test_a_node_that_vanishes_mid_drain_counts_as_drained(capi: CapiWorld) -> None:
    capi.machine("m1")
    capi.pod("stuck", "m1", annotations={"harness.test/ignore-termination": "true"})
    capi.world.settle()
    capi.delete("m1")
    assert capi.deleting("m1")["reason"] == "DrainingNode"
    capi.remote.delete("v1", "Node", "m1")
    capi.world.advance(21)
    assert capi.condition("m1", "DrainingSucceeded")["status"] == "True"
    assert capi.events("SuccessfulDrainNode")
    capi.world.advance(5)
    assert not capi.exists("m1")


def test_an_unreachable_node_ignores_pods_deleted_more_than_a_second_ago(capi: CapiWorld) -> None:
    capi.machine("m1", annotations={"pre-terminate.delete.hook.machine.cluster.x-k8s.io/hold": ""})
    capi.pod("p", "m1")
    capi.world.settle()
    capi.world.simulator("kubelet", "default/c1").set_node_health("m1", "Unknown")
    capi.world.settle()
    capi.delete("m1")
    pod = capi.remote.get("v1", "Pod", "p", DEFAULT_NAMESPACE)
    assert pod["metadata"]["deletionGracePeriodSeconds"] == 1
    assert capi.deleting("m1")["reason"] == "DrainingNode"
    capi.world.advance(20)
    assert capi.condition("m1", "DrainingSucceeded")["status"] == "True"
    assert capi.condition("m1", "VolumeDetachSucceeded")["status"] == "True"
    assert capi.remote.get("v1", "Pod", "p", DEFAULT_NAMESPACE)  # the kubelet is away: the Pod stays


def test_each_pod_gets_a_filter_status_of_its_own() -> None:
    # The filters answer shared constants for plain outcomes; the status a Pod ends with is its own, so
    # one Pod's warning text never shows on another's and the constants stay as they were.
    from controllers.machine import drain

    okay_before = (drain._OKAY.pod, drain._OKAY.reason, drain._OKAY.message)  # noqa: SLF001
    warns = [lambda pod: drain._warning("Drain", "no controller") if pod["metadata"]["name"] == "b"  # noqa: SLF001
             else drain._OKAY]  # noqa: SLF001
    pods = [{"metadata": {"name": name}} for name in ("a", "b", "c")]
    statuses = [drain.Drainer._filter(pod, warns) for pod in pods]  # noqa: SLF001
    assert [s.pod["metadata"]["name"] for s in statuses] == ["a", "b", "c"]
    assert [(s.reason, s.message) for s in statuses] == [
        (drain.REASON_OKAY, ""), (drain.REASON_WARNING, "no controller"), (drain.REASON_OKAY, "")]
    assert len({id(s) for s in statuses} | {id(drain._OKAY)}) == 4  # noqa: SLF001
    assert (drain._OKAY.pod, drain._OKAY.reason, drain._OKAY.message) == okay_before  # noqa: SLF001
