"""The pods/eviction subresource: every branch of kube-apiserver 1.32's decision flow, with its exact
code, reason, message, causes and Retry-After."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.apiserver.subresources import eviction
from harness.client import InProcessClient
from harness.clock import rfc3339
from harness.kube.errors import StatusError
from harness.kube.names.core import DEFAULT_NAMESPACE
from harness.kube.names.policy import PDB_VIOLATION_MESSAGE
from harness.world.world import World

PDB = ("policy/v1", "PodDisruptionBudget")


@pytest.fixture
def world() -> World:
    return World(simulators=["disruption"])


@pytest.fixture
def client(world: World) -> InProcessClient:
    return world.client()


def make_pod(client: InProcessClient, name: str, labels: dict[str, str] | None = None, *, ready: bool = True,
             phase: str = "Running", namespace: str = DEFAULT_NAMESPACE, node: str | None = None) -> dict[str, Any]:
    pod = client.create({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]},
    })
    if node:
        client.bind(name, namespace, node)
        pod = client.get("v1", "Pod", name, namespace)
    pod["status"]["phase"] = phase
    pod["status"]["conditions"] = [{"type": "Ready", "status": "True" if ready else "False"}]
    return client.update_status(pod)


def make_pdb(client: InProcessClient, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    body = {"selector": {"matchLabels": {"app": "web"}}, **spec}
    return client.create({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                          "metadata": {"name": name, "namespace": DEFAULT_NAMESPACE}, "spec": body})


def pdb_status(client: InProcessClient, name: str = "budget") -> dict[str, Any]:
    return client.get(*PDB, name, DEFAULT_NAMESPACE)["status"]


def pod_exists(client: InProcessClient, name: str) -> bool:
    try:
        client.get("v1", "Pod", name, DEFAULT_NAMESPACE)
    except StatusError as err:
        assert err.code == 404
        return False
    return True


def evict_error(client: InProcessClient, name: str, namespace: str = DEFAULT_NAMESPACE, **kwargs: Any) -> StatusError:
    with pytest.raises(StatusError) as info:
        client.evict(name, namespace, **kwargs)
    return info.value


def budget_refusal(err: StatusError) -> str:
    """The cause of a 429 from a PodDisruptionBudget (anything else fails the test)."""
    assert err.code == 429
    return str(err.details["causes"][0]["message"])


def force_status(world: World, client: InProcessClient, name: str, **fields: Any) -> None:
    """Write a PDB status by hand, with the disruption controller off so it stays as written."""
    world.set_enabled("disruption", False)
    pdb = client.get(*PDB, name, DEFAULT_NAMESPACE)
    pdb["status"] = {"observedGeneration": pdb["metadata"]["generation"], "disruptionsAllowed": 0,
                     "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0, **fields}
    client.update_status(pdb)


SUCCESS = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


# -- no budget and bypasses ---------------------------------------------------------------------------


def test_eviction_without_a_budget_deletes_the_pod_and_answers_201(world: World, client: InProcessClient) -> None:
    make_pod(client, "p0")
    assert client.evict("p0", DEFAULT_NAMESPACE) == SUCCESS
    assert not pod_exists(client, "p0")


@pytest.mark.parametrize("phase", ["Pending", "Succeeded", "Failed"])
def test_eviction_of_a_pod_in_phase_skips_the_budget(world: World, client: InProcessClient, phase: str) -> None:
    make_pod(client, "p0", phase=phase, ready=False)
    make_pdb(client, "budget", {"minAvailable": 5})
    world.settle()
    before = pdb_status(client)
    assert client.evict("p0", DEFAULT_NAMESPACE) == SUCCESS
    assert not pod_exists(client, "p0")
    assert pdb_status(client) == before


def test_eviction_of_a_deleting_pod_skips_the_budget(world: World, client: InProcessClient) -> None:
    make_pod(client, "p0", node="n1")
    make_pdb(client, "budget", {"minAvailable": 5})
    client.delete("v1", "Pod", "p0", DEFAULT_NAMESPACE)
    world.settle()
    assert client.evict("p0", DEFAULT_NAMESPACE) == SUCCESS
    assert pdb_status(client)["disruptionsAllowed"] == 0
    assert not client.get(*PDB, "budget", DEFAULT_NAMESPACE)["status"].get("disruptedPods")


def test_eviction_bypass_with_a_stale_resource_version_precondition_conflicts(
    world: World, client: InProcessClient
) -> None:
    pod = make_pod(client, "p0", phase="Pending", ready=False)
    stale = str(int(pod["metadata"]["resourceVersion"]) - 1)
    err = evict_error(client, "p0", delete_options={"preconditions": {"resourceVersion": stale}})
    assert err.code == 409
    assert err.message == (
        f'Operation cannot be fulfilled on Pod "p0": the ResourceVersion in the precondition ({stale}) does not match '
        f"the ResourceVersion in record ({pod['metadata']['resourceVersion']}). The object might have been modified"
    )
    assert pod_exists(client, "p0")


# -- request checks -----------------------------------------------------------------------------------


def test_eviction_rejects_a_name_that_differs_from_the_url(world: World, client: InProcessClient) -> None:
    make_pod(client, "p0")
    with pytest.raises(StatusError) as info:
        eviction.evict(world.management, DEFAULT_NAMESPACE, "p0", {"metadata": {"name": "other"}})
    assert info.value.status == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                 "message": "name in URL does not match name in Eviction object",
                                 "reason": "BadRequest", "code": 400}


def test_eviction_rejects_a_namespace_that_differs_from_the_url(world: World, client: InProcessClient) -> None:
    make_pod(client, "p0")
    with pytest.raises(StatusError) as info:
        eviction.evict(
            world.management, DEFAULT_NAMESPACE, "p0", {"metadata": {"name": "p0", "namespace": "kube-system"}}
        )
    assert info.value.code == 400
    assert info.value.message == (
        "the namespace of the provided object does not match the namespace sent on the request"
    )


def test_eviction_rejects_disagreeing_dry_run_options_with_a_reasonless_500(
    world: World, client: InProcessClient
) -> None:
    make_pod(client, "p0")
    body = {"metadata": {"name": "p0"}, "deleteOptions": {"dryRun": ["All", "All"]}}
    with pytest.raises(StatusError) as info:
        eviction.evict(world.management, DEFAULT_NAMESPACE, "p0", body, dry_run=True)
    assert info.value.status == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "Non-matching dry-run options in request and content: [All] and [All All]", "code": 500,
    }
    assert pod_exists(client, "p0")


@pytest.mark.parametrize("body", [
    {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p0", "namespace": DEFAULT_NAMESPACE}},
    {"apiVersion": "policy/v1beta1", "kind": "Eviction", "metadata": {"name": "p0"}},
    {"metadata": {"name": "p0"}},
], ids=["v1", "v1beta1", "no-type-meta"])
def test_eviction_accepts_v1_v1beta1_and_untyped_bodies(world: World, client: InProcessClient,
                                                        body: dict[str, Any]) -> None:
    make_pod(client, "p0")
    assert eviction.evict(world.management, DEFAULT_NAMESPACE, "p0", body) == SUCCESS
    assert not pod_exists(client, "p0")


def test_eviction_rejects_a_foreign_api_version(world: World, client: InProcessClient) -> None:
    make_pod(client, "p0")
    with pytest.raises(StatusError) as info:
        eviction.evict(world.management, DEFAULT_NAMESPACE, "p0", {"apiVersion": "apps/v1", "kind": "Eviction",
                                                    "metadata": {"name": "p0"}})
    assert info.value.code == 400
    assert info.value.message == (
        "the API version in the data (apps/v1) does not match the expected API version (policy/v1)"
    )


def test_eviction_in_a_terminating_namespace_is_forbidden_with_the_namespace_cause(
    world: World, client: InProcessClient
) -> None:
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "doomed"}})
    make_pod(client, "p0", namespace="doomed")
    client.delete("v1", "Namespace", "doomed")
    with pytest.raises(StatusError) as info:
        client.evict("p0", "doomed")
    assert info.value.status == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'pods "p0" is forbidden: unable to create new content in namespace doomed because it is being '
                   "terminated",
        "reason": "Forbidden",
        "details": {"name": "p0", "kind": "pods", "causes": [
            {"reason": "NamespaceTerminating", "message": "namespace doomed is being terminated",
             "field": "metadata.namespace"}]},
        "code": 403,
    }


def test_eviction_in_a_missing_namespace_is_not_found(world: World, client: InProcessClient) -> None:
    err = evict_error(client, "p0", "nowhere")
    assert (err.code, err.reason, err.message) == (404, "NotFound", 'namespaces "nowhere" not found')


def test_eviction_of_a_missing_pod_is_not_found(world: World, client: InProcessClient) -> None:
    err = evict_error(client, "ghost")
    assert (err.code, err.reason, err.message) == (404, "NotFound", 'pods "ghost" not found')
    assert err.details == {"name": "ghost", "kind": "pods"}


# -- matching budgets ---------------------------------------------------------------------------------


def test_eviction_of_a_pod_under_two_budgets_is_a_500_without_reason(world: World, client: InProcessClient) -> None:
    make_pod(client, "p0")
    make_pdb(client, "a", {"minAvailable": 0})
    make_pdb(client, "b", {"maxUnavailable": 1})
    world.settle()
    err = evict_error(client, "p0")
    assert err.status == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
        "code": 500,
    }
    assert err.headers == {}
    assert pod_exists(client, "p0")


def test_an_empty_selector_covers_every_pod_and_a_missing_one_none(world: World, client: InProcessClient) -> None:
    make_pod(client, "p0", {"app": "other"})
    client.create(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "everything", "namespace": DEFAULT_NAMESPACE},
            "spec": {"minAvailable": 1, "selector": {}},
        }
    )
    client.create({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                   "metadata": {"name": "nothing", "namespace": DEFAULT_NAMESPACE}, "spec": {"minAvailable": 1}})
    world.settle()
    assert budget_refusal(evict_error(client, "p0")) == (
        "The disruption budget everything needs 1 healthy pods and has 1 currently")


# -- checkAndDecrement ----------------------------------------------------------------------------------


def test_eviction_is_429_with_retry_after_while_the_budget_is_unobserved(world: World, client: InProcessClient) -> None:
    world.set_enabled("disruption", False)
    make_pod(client, "p0")
    make_pdb(client, "budget", {"maxUnavailable": 1})
    world.settle()
    err = evict_error(client, "p0")
    assert err.status == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": PDB_VIOLATION_MESSAGE,
        "reason": "TooManyRequests",
        "details": {"causes": [{"reason": "DisruptionBudget",
                                "message": "The disruption budget budget is still being processed by the server."}],
                    "retryAfterSeconds": 10},
        "code": 429,
    }
    assert err.headers == {"Retry-After": "10"}
    assert pod_exists(client, "p0")


def test_eviction_is_forbidden_when_the_budget_is_negative(world: World, client: InProcessClient) -> None:
    make_pod(client, "p0")
    make_pdb(client, "budget", {"minAvailable": 0})
    force_status(world, client, "budget", disruptionsAllowed=-1)
    err = evict_error(client, "p0")
    assert err.status == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'poddisruptionbudget.policy "budget" is forbidden: pdb disruptions allowed is negative',
        "reason": "Forbidden", "details": {"name": "budget", "group": "policy", "kind": "poddisruptionbudget"},
        "code": 403,
    }


def test_eviction_is_forbidden_when_disrupted_pods_overflow(world: World, client: InProcessClient) -> None:
    make_pod(client, "p0")
    make_pdb(client, "budget", {"minAvailable": 0})
    stamp = rfc3339(world.now())
    force_status(world, client, "budget", disruptionsAllowed=5,
                 disruptedPods={f"gone-{i}": stamp for i in range(2001)})
    err = evict_error(client, "p0")
    assert err.code == 403
    assert err.message == (
        'poddisruptionbudget.policy "budget" is forbidden: DisruptedPods map too big - too many evictions not '
        "confirmed by PDB controller"
    )


def test_eviction_rejects_when_budget_is_exhausted(world: World, client: InProcessClient) -> None:
    make_pod(client, "p0")
    make_pod(client, "p1")
    make_pdb(client, "budget", {"minAvailable": 2})
    world.settle()
    err = evict_error(client, "p0")
    assert err.status == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": PDB_VIOLATION_MESSAGE,
        "reason": "TooManyRequests",
        "details": {"causes": [{"reason": "DisruptionBudget",
                                "message": "The disruption budget budget needs 2 healthy pods and has 2 currently"}]},
        "code": 429,
    }
    assert err.headers == {}
    assert pod_exists(client, "p0")


def test_eviction_spends_one_disruption_in_a_status_only_write(world: World, client: InProcessClient) -> None:
    make_pod(client, "p0", node="n1")
    make_pod(client, "p1", node="n1")
    make_pdb(client, "budget", {"minAvailable": 0})
    world.settle()
    before = client.get(*PDB, "budget", DEFAULT_NAMESPACE)
    assert before["status"]["disruptionsAllowed"] == 2
    mark = len(world.audit)

    assert client.evict("p0", DEFAULT_NAMESPACE) == SUCCESS

    after = client.get(*PDB, "budget", DEFAULT_NAMESPACE)
    assert after["metadata"]["generation"] == before["metadata"]["generation"]
    assert after["metadata"]["resourceVersion"] != before["metadata"]["resourceVersion"]
    assert after["status"]["disruptionsAllowed"] == 1
    assert after["status"]["disruptedPods"] == {"p0": rfc3339(world.now())}
    assert after["status"]["conditions"] == before["status"]["conditions"]  # still allowed: untouched
    writes = [(r.verb, r.resource, r.subresource, r.user) for r in world.audit.records[mark:]]
    assert writes[0] == ("update", "poddisruptionbudgets.policy", "status", "system:apiserver")


def test_eviction_that_exhausts_the_budget_sets_insufficient_pods(world: World, client: InProcessClient) -> None:
    make_pod(client, "p0", node="n1")
    make_pod(client, "p1", node="n1")
    make_pdb(client, "budget", {"minAvailable": 1})
    world.settle()
    assert pdb_status(client)["conditions"][0]["reason"] == "SufficientPods"
    world.set_enabled("disruption", False)
    client.evict("p0", DEFAULT_NAMESPACE)
    status = pdb_status(client)
    assert status["disruptionsAllowed"] == 0
    condition = status["conditions"][0]
    assert (condition["type"], condition["status"], condition["reason"], condition["message"]) == (
        "DisruptionAllowed", "False", "InsufficientPods", ""
    )
    assert condition["observedGeneration"] == 1


def test_dry_run_eviction_leaves_the_budget_and_the_pod_alone(world: World, client: InProcessClient) -> None:
    make_pod(client, "p0")
    make_pod(client, "p1")
    make_pdb(client, "budget", {"minAvailable": 1})
    world.settle()
    before = client.get(*PDB, "budget", DEFAULT_NAMESPACE)
    mark = len(world.audit)
    assert client.evict("p0", DEFAULT_NAMESPACE, dry_run=True) == SUCCESS
    assert client.evict("p0", DEFAULT_NAMESPACE, delete_options={"dryRun": ["All"]}) == SUCCESS
    assert client.get(*PDB, "budget", DEFAULT_NAMESPACE) == before
    assert pod_exists(client, "p0")
    assert world.audit.records[mark:] == []


def test_dry_run_eviction_still_refuses_an_exhausted_budget(world: World, client: InProcessClient) -> None:
    make_pod(client, "p0")
    make_pdb(client, "budget", {"minAvailable": 1})
    world.settle()
    assert evict_error(client, "p0", dry_run=True).code == 429


# -- unready pods -------------------------------------------------------------------------------------


def test_unready_pod_is_evicted_under_always_allow_without_spending(world: World, client: InProcessClient) -> None:
    make_pod(client, "p0", ready=False)
    make_pdb(client, "budget", {"minAvailable": 3, "unhealthyPodEvictionPolicy": "AlwaysAllow"})
    world.settle()
    assert pdb_status(client)["disruptionsAllowed"] == 0
    mark = len(world.audit)
    assert client.evict("p0", DEFAULT_NAMESPACE) == SUCCESS
    assert not pod_exists(client, "p0")
    assert not [r for r in world.audit.records[mark:] if r.resource == "poddisruptionbudgets.policy"
                and r.user == "system:apiserver"]


@pytest.mark.parametrize("policy", [None, "IfHealthyBudget"])
def test_unready_pod_is_evicted_when_the_budget_is_met(world: World, client: InProcessClient,
                                                       policy: str | None) -> None:
    make_pod(client, "p0", ready=False)
    make_pod(client, "p1")
    make_pod(client, "p2")
    spec: dict[str, Any] = {"minAvailable": 2}
    if policy:
        spec["unhealthyPodEvictionPolicy"] = policy
    make_pdb(client, "budget", spec)
    world.settle()
    assert pdb_status(client)["disruptionsAllowed"] == 0  # healthy 2, desired 2
    world.set_enabled("disruption", False)
    assert client.evict("p0", DEFAULT_NAMESPACE) == SUCCESS
    assert pdb_status(client)["disruptionsAllowed"] == 0
    assert not pdb_status(client).get("disruptedPods")


def test_unready_pod_under_an_unmet_budget_is_refused(world: World, client: InProcessClient) -> None:
    make_pod(client, "p0", ready=False)
    make_pod(client, "p1")
    make_pdb(client, "budget", {"minAvailable": 2, "unhealthyPodEvictionPolicy": "IfHealthyBudget"})
    world.settle()
    assert budget_refusal(evict_error(client, "p0")) == (
        "The disruption budget budget needs 2 healthy pods and has 1 currently")


# -- the pod writes -----------------------------------------------------------------------------------


def test_disruption_target_is_written_before_the_pod_is_deleted(world: World, client: InProcessClient) -> None:
    make_pod(client, "p0", node="n1")
    mark = len(world.audit)
    client.evict("p0", DEFAULT_NAMESPACE, delete_options={"gracePeriodSeconds": 30})
    pod_writes = [r for r in world.audit.records[mark:] if r.resource == "pods"]
    assert [(r.verb, r.subresource) for r in pod_writes] == [("update", "status"), ("delete", "")]
    assert pod_writes[0].new is not None
    condition = pod_writes[0].new["status"]["conditions"][-1]
    assert condition == {"type": "DisruptionTarget", "status": "True", "lastProbeTime": None,
                         "lastTransitionTime": rfc3339(world.now()), "reason": "EvictionByEvictionAPI",
                         "message": "Eviction API: evicting"}
    # Graceful deletion is the server's: the pod on a node stays, marked.
    pod = client.get("v1", "Pod", "p0", DEFAULT_NAMESPACE)
    assert pod["metadata"]["deletionGracePeriodSeconds"] == 30


def test_disruption_target_is_written_on_the_bypass_path_too(world: World, client: InProcessClient) -> None:
    make_pod(client, "p0", phase="Pending", ready=False)
    mark = len(world.audit)
    client.evict("p0", DEFAULT_NAMESPACE)
    pod_writes = [(r.verb, r.subresource) for r in world.audit.records[mark:] if r.resource == "pods"]
    assert pod_writes == [("update", "status"), ("delete", "")]


def test_eviction_response_carries_no_retry_after_except_while_processing(
    world: World, client: InProcessClient
) -> None:
    make_pod(client, "p0")
    make_pdb(client, "budget", {"minAvailable": 1})
    world.settle()
    assert evict_error(client, "p0").headers == {}
    world.set_enabled("disruption", False)
    client.patch(*PDB, "budget", {"spec": {"minAvailable": 0}}, namespace=DEFAULT_NAMESPACE)
    assert evict_error(client, "p0").headers == {"Retry-After": "10"}


def test_an_eviction_leaves_the_versions_it_replaces_as_they_were(world: World, client: InProcessClient) -> None:
    # The subresource reads the stored budget and pod without copying them: the versions it
    # replaces (still in the watch history) must not change, whether the budget refuses or is spent.
    make_pod(client, "a", node="node-1")
    make_pod(client, "b", node="node-1")
    make_pdb(client, "budget", {"minAvailable": 1})
    world.settle()
    store = world.management.store
    pdb_before = store.get(("policy", "poddisruptionbudgets"), (DEFAULT_NAMESPACE, "budget"))
    pod_before = store.get(("", "pods"), (DEFAULT_NAMESPACE, "a"))
    snapshots = json.dumps([pdb_before, pod_before])
    assert client.evict("a", DEFAULT_NAMESPACE) == SUCCESS
    assert budget_refusal(evict_error(client, "b"))
    assert json.dumps([pdb_before, pod_before]) == snapshots
    assert "a" in pdb_status(client).get("disruptedPods", {})
