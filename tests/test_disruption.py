"""The disruption controller: PodDisruptionBudget status arithmetic, controller lookups, sync failures,
disruptedPods expiry and the events kube-controller-manager records."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from harness.client import InProcessClient
from harness.clock import rfc3339
from harness.kube.errors import StatusError
from harness.kube.names.core import DEFAULT_NAMESPACE
from harness.world.disruption import go_label_selector
from harness.world.world import World

PDB = ("policy/v1", "PodDisruptionBudget")
LABELS = {"app": "web"}
TEMPLATE = {"metadata": {"labels": LABELS}, "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}}


@pytest.fixture
def world() -> World:
    # The disruption controller alone: reference workload controllers would manage the hand-made pods.
    return World(simulators=["disruption"], controllers=[])


@pytest.fixture
def client(world: World) -> InProcessClient:
    return world.client()


def make_workload(client: InProcessClient, kind: str, name: str, replicas: int | None = None,
                  owner: dict[str, Any] | None = None) -> dict[str, Any]:
    api_version = "batch/v1" if kind == "Job" else "apps/v1"
    spec: dict[str, Any] = {"selector": {"matchLabels": LABELS}, "template": TEMPLATE}
    if kind == "Job":
        spec = {"template": {**TEMPLATE, "spec": {**TEMPLATE["spec"], "restartPolicy": "Never"}}}
    if replicas is not None:
        spec["replicas"] = replicas
    meta: dict[str, Any] = {"name": name, "namespace": DEFAULT_NAMESPACE}
    if owner:
        meta["ownerReferences"] = [ref(owner)]
    return client.create({"apiVersion": api_version, "kind": kind, "metadata": meta, "spec": spec})


def ref(owner: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"], "controller": True}


def make_pod(client: InProcessClient, name: str, *, ready: bool = True, owner: dict[str, Any] | None = None,
             labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": DEFAULT_NAMESPACE, "labels": labels or LABELS}
    if owner:
        meta["ownerReferences"] = [ref(owner)]
    pod = client.create({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": TEMPLATE["spec"]})
    pod["status"]["phase"] = "Running"
    pod["status"]["conditions"] = [{"type": "Ready", "status": "True" if ready else "False"}]
    return client.update_status(pod)


def make_pdb(client: InProcessClient, spec: dict[str, Any], name: str = "budget") -> dict[str, Any]:
    return client.create({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                          "metadata": {"name": name, "namespace": DEFAULT_NAMESPACE},
                          "spec": {"selector": {"matchLabels": LABELS}, **spec}})


def status(client: InProcessClient, name: str = "budget") -> dict[str, Any]:
    return client.get(*PDB, name, DEFAULT_NAMESPACE)["status"]


def counts(client: InProcessClient, name: str = "budget") -> tuple[int, int, int, int]:
    s = status(client, name)
    return s["expectedPods"], s["desiredHealthy"], s["currentHealthy"], s["disruptionsAllowed"]


def events(client: InProcessClient, reason: str) -> list[dict[str, Any]]:
    return [e for e in client.list("v1", "Event", DEFAULT_NAMESPACE)["items"] if e["reason"] == reason]


def condition(client: InProcessClient, name: str = "budget") -> dict[str, Any]:
    (found,) = [c for c in status(client, name).get("conditions", []) if c["type"] == "DisruptionAllowed"]
    return found


# -- arithmetic ---------------------------------------------------------------------------------------


@dataclass
class Case:
    """Pods (ready flags) under one owner kind, a PDB spec, and the expected status numbers."""

    spec: dict[str, Any]
    ready: list[bool]
    owner: str | None  # None: bare pods; "ReplicaSet", "Deployment", "StatefulSet"
    replicas: int = 0
    expected: tuple[int, int, int, int] = (0, 0, 0, 0)  # expectedPods, desiredHealthy, currentHealthy, allowed
    rs_replicas: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


CASES = {
    "min-int-counts-pods": Case({"minAvailable": 2}, [True, True, True], None, expected=(3, 2, 3, 1)),
    "min-int-unready-not-healthy": Case({"minAvailable": 2}, [True, True, False], "ReplicaSet", 3,
                                        expected=(3, 2, 2, 0)),
    "min-int-uses-pod-count-not-scale": Case({"minAvailable": 1}, [True, True], "ReplicaSet", 5,
                                             expected=(2, 1, 2, 1)),
    "min-int-above-healthy-is-zero": Case({"minAvailable": 5}, [True, True], None, expected=(2, 5, 2, 0)),
    "min-percent-rounds-up": Case({"minAvailable": "50%"}, [True, True, True], "ReplicaSet", 3,
                                  expected=(3, 2, 3, 1)),
    "min-percent-of-scale": Case({"minAvailable": "50%"}, [True, True], "StatefulSet", 5, expected=(5, 3, 2, 0)),
    "max-int": Case({"maxUnavailable": 1}, [True, True, True], "ReplicaSet", 3, expected=(3, 2, 3, 1)),
    "max-int-above-scale-floors-at-zero": Case({"maxUnavailable": 7}, [True], "ReplicaSet", 2,
                                               expected=(2, 0, 1, 1)),
    "max-percent-rounds-up": Case({"maxUnavailable": "34%"}, [True, True, True], "ReplicaSet", 3,
                                  expected=(3, 1, 3, 2)),
    "max-percent-ten-of-five-rounds-up": Case({"maxUnavailable": "10%"}, [True] * 5, "StatefulSet", 5,
                                              expected=(5, 4, 5, 1)),
    "max-unavailable-bare-pods-allow-nothing": Case({"maxUnavailable": 1}, [True, True, True], None,
                                                    expected=(0, 0, 3, 0)),
    "min-percent-bare-pods-allow-nothing": Case({"minAvailable": "10%"}, [True, True], None, expected=(0, 0, 2, 0)),
    "deployment-replicas-win-over-replicaset": Case({"maxUnavailable": 1}, [True, True], "Deployment", 4,
                                                    expected=(4, 3, 2, 0), rs_replicas=2),
    "neither-field-set": Case({}, [True, True], None, expected=(0, 0, 2, 0)),
}


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_pdb_status_arithmetic(world: World, client: InProcessClient, case: Case) -> None:
    owner = None
    if case.owner == "Deployment":
        deployment = make_workload(client, "Deployment", "web", case.replicas)
        owner = make_workload(client, "ReplicaSet", "web-1", case.rs_replicas, owner=deployment)
    elif case.owner:
        owner = make_workload(client, case.owner, "web", case.replicas)
    for i, ready in enumerate(case.ready):
        make_pod(client, f"p{i}", ready=ready, owner=owner)
    make_pdb(client, case.spec)
    world.settle()
    assert counts(client) == case.expected
    allowed = case.expected[3]
    cond = condition(client)
    expected = ("True", "SufficientPods") if allowed else ("False", "InsufficientPods")
    assert (cond["status"], cond["reason"]) == expected
    assert cond["observedGeneration"] == 1
    assert status(client)["observedGeneration"] == 1


def test_bare_pods_under_a_scale_based_budget_raise_unmanaged_pods(world: World, client: InProcessClient) -> None:
    make_pod(client, "p0")
    make_pdb(client, {"maxUnavailable": 1})
    world.settle()
    (event,) = events(client, "UnmanagedPods")
    assert event["type"] == "Warning"
    assert event["involvedObject"]["kind"] == "PodDisruptionBudget"
    assert event["message"] == (
        "Pods selected by this PodDisruptionBudget (selector: &LabelSelector{MatchLabels:map[string]string{app: web,},"
        "MatchExpressions:[]LabelSelectorRequirement{},}) were found to be unmanaged. As a result, the status of the "
        "PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please "
        'set ".spec.minAvailable" field of the PDB to an integer value.'
    )


def test_go_label_selector_prints_expressions_as_go_does() -> None:
    selector = {"matchLabels": {"b": "2", "a": "1"},
                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["x", "y"]},
                                     {"key": "gone", "operator": "DoesNotExist"}]}
    assert go_label_selector(selector) == (
        "&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},MatchExpressions:[]LabelSelectorRequirement{"
        "LabelSelectorRequirement{Key:tier,Operator:In,Values:[x y],},"
        "LabelSelectorRequirement{Key:gone,Operator:DoesNotExist,Values:[],},},}"
    )


# -- sync failures ------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind,message", [
    ("DaemonSet", "daemonsets.apps does not implement the scale subresource"),
    ("Job", "jobs.batch does not implement the scale subresource"),
])
def test_owner_without_scale_fails_the_sync(world: World, client: InProcessClient, kind: str, message: str) -> None:
    owner = make_workload(client, kind, "agent")
    make_pod(client, "p0", owner=owner)
    make_pod(client, "p1", owner=owner)
    make_pdb(client, {"maxUnavailable": 1})
    world.settle()
    s = status(client)
    assert s["disruptionsAllowed"] == 0
    assert condition(client) == {"type": "DisruptionAllowed", "status": "False",
                                 "lastTransitionTime": rfc3339(world.now()), "reason": "SyncFailed", "message": message}
    # failSafe does not record the generation: evictions answer "still being processed".
    assert s.get("observedGeneration", 0) == 0
    (event,) = events(client, "CalculateExpectedPodCountFailed")
    assert event["message"] == f"Failed to calculate the number of expected pods: {message}"
    with pytest.raises(StatusError) as info:
        client.evict("p0", DEFAULT_NAMESPACE)
    assert info.value.code == 429


def test_integer_min_available_needs_no_scale_even_for_daemonset_pods(world: World, client: InProcessClient) -> None:
    owner = make_workload(client, "DaemonSet", "agent")
    make_pod(client, "p0", owner=owner)
    make_pod(client, "p1", owner=owner)
    make_pdb(client, {"minAvailable": 1})
    world.settle()
    assert counts(client) == (2, 1, 2, 1)


def test_missing_owner_fails_the_sync_with_found_no_controllers(world: World, client: InProcessClient) -> None:
    owner = make_workload(client, "ReplicaSet", "web", 2)
    make_pod(client, "p0", owner=owner)
    client.delete("apps/v1", "ReplicaSet", "web", DEFAULT_NAMESPACE)
    make_pdb(client, {"minAvailable": "50%"})
    world.settle()
    cond = condition(client)
    assert (cond["reason"], cond["message"]) == ("SyncFailed", 'found no controllers for pod "p0"')


def test_recovery_from_sync_failure_sets_sufficient_pods(world: World, client: InProcessClient) -> None:
    owner = make_workload(client, "ReplicaSet", "web", 2)
    make_pod(client, "p0", owner=owner)
    make_pod(client, "p1")
    make_pdb(client, {"minAvailable": "50%"})
    world.settle()
    assert counts(client)[0] == 2  # the bare pod does not count
    assert condition(client)["reason"] == "SufficientPods"


# -- disruptedPods ------------------------------------------------------------------------------------


def test_disrupted_pod_stops_counting_until_two_minutes_pass(world: World, client: InProcessClient) -> None:
    make_pod(client, "p0")
    make_pod(client, "p1")
    make_pdb(client, {"minAvailable": 1})
    world.settle()
    pdb = client.get(*PDB, "budget", DEFAULT_NAMESPACE)
    pdb["status"]["disruptedPods"] = {"p0": rfc3339(world.now())}
    client.update_status(pdb)
    world.settle()
    assert counts(client) == (2, 1, 1, 0)
    assert status(client)["disruptedPods"] == {"p0": rfc3339(world.now())}

    world.advance(119)
    assert "p0" in status(client)["disruptedPods"]
    assert not events(client, "NotDeleted")

    world.advance(2)
    assert "disruptedPods" not in status(client)
    assert counts(client) == (2, 1, 2, 1)
    (event,) = events(client, "NotDeleted")
    assert event["type"] == "Warning"
    assert event["involvedObject"]["kind"] == "Pod"
    assert event["involvedObject"]["name"] == "p0"
    assert event["message"] == "Pod was expected by PDB default/default to be deleted but it wasn't"


def test_disrupted_entry_of_a_deleted_pod_is_dropped(world: World, client: InProcessClient) -> None:
    make_pod(client, "p0")
    make_pod(client, "p1")
    make_pdb(client, {"minAvailable": 1})
    world.settle()
    client.evict("p0", DEFAULT_NAMESPACE)
    assert status(client)["disruptedPods"] == {"p0": rfc3339(world.now())}
    world.settle()
    assert "disruptedPods" not in status(client)
    assert counts(client) == (1, 1, 1, 0)
    assert not events(client, "NotDeleted")


# -- writes, generations and watches ---------------------------------------------------------------------


def test_unchanged_status_is_not_written_again(world: World, client: InProcessClient) -> None:
    make_pod(client, "p0")
    make_pdb(client, {"minAvailable": 1})
    world.settle()
    mark = len(world.audit)
    pod = client.get("v1", "Pod", "p0", DEFAULT_NAMESPACE)
    pod["metadata"]["annotations"] = {"touched": "yes"}
    client.update(pod)
    world.settle()
    assert [r for r in world.audit.records[mark:] if r.resource == "poddisruptionbudgets.policy"] == []


def test_spec_change_is_observed_with_the_new_generation(world: World, client: InProcessClient) -> None:
    make_pod(client, "p0")
    make_pod(client, "p1")
    make_pdb(client, {"minAvailable": 2})
    world.settle()
    client.patch(*PDB, "budget", {"spec": {"minAvailable": 1}}, namespace=DEFAULT_NAMESPACE)
    world.settle()
    assert status(client)["observedGeneration"] == 2
    assert condition(client)["observedGeneration"] == 2
    assert counts(client) == (2, 1, 2, 1)


def test_scaling_the_owner_resyncs_the_budget(world: World, client: InProcessClient) -> None:
    owner = make_workload(client, "StatefulSet", "db", 2)
    make_pod(client, "db-0", owner=owner)
    make_pod(client, "db-1", owner=owner)
    make_pdb(client, {"maxUnavailable": 1})
    world.settle()
    assert counts(client) == (2, 1, 2, 1)
    sts = client.get("apps/v1", "StatefulSet", "db", DEFAULT_NAMESPACE)
    sts["spec"]["replicas"] = 3
    client.update(sts)
    world.settle()
    assert counts(client) == (3, 2, 2, 0)


def test_relabelled_pod_leaves_the_budget_it_used_to_match(world: World, client: InProcessClient) -> None:
    make_pod(client, "p0")
    make_pod(client, "p1")
    make_pdb(client, {"minAvailable": 1})
    world.settle()
    pod = client.get("v1", "Pod", "p1", DEFAULT_NAMESPACE)
    pod["metadata"]["labels"] = {"app": "elsewhere"}
    client.update(pod)
    world.settle()
    assert counts(client) == (1, 1, 1, 0)


def test_pod_readiness_change_resyncs_the_budget(world: World, client: InProcessClient) -> None:
    make_pod(client, "p0")
    make_pod(client, "p1", ready=False)
    make_pdb(client, {"minAvailable": 1})
    world.settle()
    assert counts(client) == (2, 1, 1, 0)
    pod = client.get("v1", "Pod", "p1", DEFAULT_NAMESPACE)
    pod["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    client.update_status(pod)
    world.settle()
    assert counts(client) == (2, 1, 2, 1)
    assert condition(client)["status"] == "True"


def test_disabled_controller_leaves_a_new_budget_unobserved(world: World, client: InProcessClient) -> None:
    world.set_enabled("disruption", False)
    make_pod(client, "p0")
    make_pdb(client, {"minAvailable": 0})
    world.settle()
    assert status(client) == {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}


# -- events -------------------------------------------------------------------------------------------


def test_budget_without_pods_records_no_pods(world: World, client: InProcessClient) -> None:
    make_pdb(client, {"minAvailable": 1})
    world.settle()
    (event,) = events(client, "NoPods")
    assert (event["type"], event["message"]) == ("Normal", "No matching pods found")
    assert event["source"] == {"component": "controllermanager"}
    assert counts(client) == (0, 1, 0, 0)


def test_pod_under_two_budgets_records_multiple_budgets(world: World, client: InProcessClient) -> None:
    make_pdb(client, {"minAvailable": 1}, name="a")
    make_pdb(client, {"maxUnavailable": 1}, name="b")
    world.settle()
    make_pod(client, "p0")
    world.settle()
    found = events(client, "MultiplePodDisruptionBudgets")
    assert found
    assert found[0]["type"] == "Warning"
    assert found[0]["involvedObject"]["name"] == "p0"
    assert found[0]["message"] == 'Pod "default"/"p0" matches multiple PodDisruptionBudgets.  Chose "a" arbitrarily.'
    assert counts(client, "a") == (1, 1, 1, 0)
