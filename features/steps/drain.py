"""Sentences about draining a Machine's Node: the Pods it runs (and who owns them), PodDisruptionBudgets,
Namespaces and the Node's health in the workload cluster, MachineDrainRules in the management cluster,
and what the drain did -- cordon, evictions (read from the audit trail), Pods gone.

Pods, Nodes, PodDisruptionBudgets and Namespaces named here live in the scenario's workload cluster. A
Pod "is evicted" when the eviction API gave it the DisruptionTarget condition (the status write that
precedes the eviction's deletion); an eviction the API refused writes nothing.
"""

from __future__ import annotations

from typing import Any

from pytest_bdd import (
    given,
    then,
    when,
)

from features.steps.context import (
    ScenarioContext,
    labels_of,
    sentence,
)
from features.steps.machines import (
    AUDIT_RESOURCES,
    CapiScene,
    await_state,
    condition,
    eviction_records,
    find_in,
    machine_records,
    node_of,
    records_of,
    stage_time,
    workload,
)
from features.steps.pdb import budget
from features.steps.pods import pod_manifest
from harness.kube.client import (
    MERGE,
    Client,
)
from harness.kube.names.apps import DAEMON_SET, REPLICA_SET, STATEFUL_SET
from harness.kube.names.capi import (
    CLUSTER_API_VERSION,
    DRAINING_NODE_REASON,
    DRAINING_SUCCEEDED,
    MACHINE_DRAIN_RULE_KIND,
    MACHINE_KIND,
)
from harness.kube.names.core import HOSTNAME_LABEL, NO_SCHEDULE, PAUSE_IMAGE, UNSCHEDULABLE_TAINT
from harness.kube.names.knobs import EXIT_CODE_ANNOTATION, NODE_HEALTH_ANNOTATION, RUN_SECONDS_ANNOTATION
from harness.kube.time import parse_rfc3339
from harness.spec.drain import RETRY_SECONDS

# The kubelet simulator's knobs (harness/world/kubelet.py).
UNREACHABLE = "Unknown"
OWNER_KINDS = (DAEMON_SET, STATEFUL_SET)
DELETED_OWNER = "(deleted)"
SETUP_SECONDS = 120.0


# -- Pods on a Machine's Node ---------------------------------------------------------------------------


def _phase(pod: dict[str, Any] | None) -> str | None:
    return None if pod is None else (pod.get("status") or {}).get("phase")


def _running(pod: dict[str, Any] | None) -> bool:
    ready = condition(pod, "Ready")
    return (_phase(pod) == "Running" and ready is not None and ready.get("status") == "True"
            and not (pod or {}).get("metadata", {}).get("deletionTimestamp"))


def ensure_namespace(client: Client, name: str, labels: dict[str, str] | None = None) -> None:
    """Create the Namespace in the workload cluster unless it exists."""
    if find_in(client, "v1", "Namespace", name, None) is None:
        meta: dict[str, Any] = {"name": name}
        if labels:
            meta["labels"] = dict(labels)
        client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": meta})


def _owner(ctx: ScenarioContext, capi: CapiScene, text: str, namespace: str) -> tuple[dict[str, Any] | None, bool]:
    """``DaemonSet logs``, ``DaemonSet logs (deleted)`` or ``StatefulSet db``: the owner (created if
    needed) as a controller reference, and whether it is to be deleted once its Pod runs."""
    if not text.strip():
        return None, False
    deleted = text.strip().endswith(DELETED_OWNER)
    kind, _, name = text.replace(DELETED_OWNER, "").strip().partition(" ")
    assert kind in OWNER_KINDS, f"an owner is a DaemonSet or a StatefulSet, not {text!r}"
    client = workload(ctx, capi)
    owner = find_in(client, "apps/v1", kind, name, namespace)
    if owner is None:
        labels = {"app": name}
        spec: dict[str, Any] = {"selector": {"matchLabels": labels},
                                "template": {"metadata": {"labels": labels},
                                             "spec": {"containers": [{"name": "app", "image": PAUSE_IMAGE}]}}}
        if kind == STATEFUL_SET:
            spec.update(replicas=1, serviceName=name)
        owner = ctx.setup(lambda: client.create({"apiVersion": "apps/v1", "kind": kind,
                                                 "metadata": {"name": name, "namespace": namespace}, "spec": spec}))
    reference = {"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": owner["metadata"]["uid"],
                 "controller": True, "blockOwnerDeletion": True}
    return reference, deleted


def start_pod_on_node(ctx: ScenarioContext, capi: CapiScene, machine: str, ref: str, *,
                      labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None,
                      owner: str = "", grace: int | None = None, runs_for: int | None = None,
                      volumes: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Create a Pod bound to the Machine's Node and wait until the kubelet runs it (or it finished)."""
    client = workload(ctx, capi)
    annotations = dict(annotations or {})
    restart_policy = None
    if runs_for is not None:
        annotations.update({RUN_SECONDS_ANNOTATION: f"{runs_for}s", EXIT_CODE_ANNOTATION: "0"})
        restart_policy = "Never"
    pod = pod_manifest(ctx, ref, labels=labels, node=node_of(capi, machine), grace=grace, annotations=annotations,
                       restart_policy=restart_policy)
    namespace, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
    ensure_namespace(client, namespace)
    reference, delete_owner = _owner(ctx, capi, owner, namespace)
    if reference is not None:
        pod["metadata"]["ownerReferences"] = [reference]
    if volumes:
        pod["spec"]["volumes"] = volumes
        pod["spec"]["containers"][0]["volumeMounts"] = [{"name": v["name"], "mountPath": f"/{v['name']}"}
                                                        for v in volumes]
    ctx.setup(lambda: client.create(pod))

    def started() -> bool:
        found = find_in(client, "v1", "Pod", name, namespace)
        return _phase(found) == "Succeeded" if runs_for == 0 else _running(found)

    await_state(ctx, f"the Pod {namespace}/{name} running on the Node of {machine}", started, SETUP_SECONDS)
    if delete_owner and reference is not None:
        ctx.setup(lambda: client.delete("apps/v1", reference["kind"], reference["name"], namespace))
        assert find_in(client, "v1", "Pod", name, namespace) is not None, (
            f"the Pod {namespace}/{name} went with its {reference['kind']}: switch the garbage collector off"
        )
    return pod


def _pod_rows(datatable: list[list[str]]) -> list[dict[str, str]]:
    header = [cell.strip() for cell in datatable[0]]
    allowed = {"pod", "labels", "annotations", "owner", "grace"}
    assert set(header) <= allowed and "pod" in header, f"the Pods table has the columns {sorted(allowed)}"
    return [dict(zip(header, (cell.strip() for cell in row))) for row in datatable[1:]]


def _start_rows(ctx: ScenarioContext, capi: CapiScene, machine: str, datatable: list[list[str]]) -> None:
    for row in _pod_rows(datatable):
        start_pod_on_node(ctx, capi, machine, row["pod"], labels=labels_of(row.get("labels", "")),
                          annotations=labels_of(row.get("annotations", "")), owner=row.get("owner", ""),
                          grace=int(row["grace"]) if row.get("grace") else None)


def _numbered(pattern: str, count: int) -> list[str]:
    assert "<n>" in pattern, f"the names of several Pods are written with <n>, not {pattern!r}"
    return [pattern.replace("<n>", str(i)) for i in range(count)]


def create_pdb(ctx: ScenarioContext, capi: CapiScene, ref: str, spec: dict[str, Any]) -> None:
    """Create a PodDisruptionBudget in the workload cluster and wait until the disruption controller has
    observed it."""
    client = workload(ctx, capi)
    target = ctx.ref("PodDisruptionBudget", ref)
    ensure_namespace(client, str(target.namespace))
    ctx.setup(lambda: client.create({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                                     "metadata": {"name": target.name, "namespace": target.namespace},
                                     "spec": spec}))

    def observed() -> bool:
        pdb = find_in(client, "policy/v1", "PodDisruptionBudget", target.name, target.namespace) or {}
        return (pdb.get("status") or {}).get("observedGeneration") == pdb.get("metadata", {}).get("generation")

    await_state(ctx, f"the PodDisruptionBudget {ref} observed", observed, 60)


@given(sentence('the Node of "{machine:Q}" runs a Pod "{ref:Q}"'))
def given_pod(ctx: ScenarioContext, capi: CapiScene, machine: str, ref: str) -> None:
    start_pod_on_node(ctx, capi, machine, ref)


@given(sentence('the Node of "{machine:Q}" runs a Pod "{ref:Q}" labelled "{labels:Q}"'))
def given_labelled_pod(ctx: ScenarioContext, capi: CapiScene, machine: str, ref: str, labels: str) -> None:
    start_pod_on_node(ctx, capi, machine, ref, labels=labels_of(labels))


@given(sentence('the Node of "{machine:Q}" runs a Pod "{ref:Q}" with a termination grace period of {grace:Int} '
                'seconds'))
def given_pod_with_grace(ctx: ScenarioContext, capi: CapiScene, machine: str, ref: str, grace: int) -> None:
    start_pod_on_node(ctx, capi, machine, ref, grace=grace)


@given(sentence('the Node of "{machine:Q}" runs a Pod "{ref:Q}" labelled "{labels:Q}" that finishes after '
                '{seconds:Int} seconds'))
def given_finishing_pod(ctx: ScenarioContext, capi: CapiScene, machine: str, ref: str, labels: str,
                        seconds: int) -> None:
    start_pod_on_node(ctx, capi, machine, ref, labels=labels_of(labels), runs_for=seconds)


@given(sentence('the Node of "{machine:Q}" runs the Pods:'))
def given_pods(ctx: ScenarioContext, capi: CapiScene, machine: str, datatable: list[list[str]]) -> None:
    _start_rows(ctx, capi, machine, datatable)


@given(sentence('the Node of "{machine:Q}" runs {count:Int} Pods "{pattern:Q}" labelled "{labels:Q}"'))
def given_numbered_pods(ctx: ScenarioContext, capi: CapiScene, machine: str, count: int, pattern: str,
                        labels: str) -> None:
    for ref in _numbered(pattern, count):
        start_pod_on_node(ctx, capi, machine, ref, labels=labels_of(labels))


@given(sentence('the Node of "{machine:Q}" runs {count:Int} Pods "{pattern:Q}" each under its own '
                'PodDisruptionBudget "{pdb:Q}" with minAvailable {minimum:Int}'))
def given_pods_with_own_budgets(ctx: ScenarioContext, capi: CapiScene, machine: str, count: int, pattern: str,
                                pdb: str, minimum: int) -> None:
    for i, ref in enumerate(_numbered(pattern, count)):
        pod = start_pod_on_node(ctx, capi, machine, ref, labels={"pod": f"p{i}"})
        create_pdb(ctx, capi, f"{pod['metadata']['namespace']}/{pdb.replace('<n>', str(i))}",
                   {"minAvailable": minimum, "selector": {"matchLabels": {"pod": f"p{i}"}}})


def _replica_set(ctx: ScenarioContext, capi: CapiScene, ref: str, count: int, machine: str, *,
                 tolerate_cordon: bool) -> None:
    """A ReplicaSet whose Pods start on the Machine's Node (its template pins them there; the pin is
    lifted afterwards unless the Pods are to come back to the Node)."""
    client = workload(ctx, capi)
    target = ctx.ref(REPLICA_SET, ref)
    namespace = str(target.namespace)
    labels = {"app": target.name}
    node = node_of(capi, machine)
    pod_spec: dict[str, Any] = {"containers": [{"name": "app", "image": PAUSE_IMAGE}],
                                "nodeSelector": {HOSTNAME_LABEL: node}}
    if tolerate_cordon:
        pod_spec["tolerations"] = [{"key": UNSCHEDULABLE_TAINT, "operator": "Exists", "effect": NO_SCHEDULE}]
    ensure_namespace(client, namespace)
    ctx.setup(lambda: client.create({
        "apiVersion": "apps/v1", "kind": REPLICA_SET, "metadata": {"name": target.name, "namespace": namespace},
        "spec": {"replicas": count, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels}, "spec": pod_spec}},
    }))

    def running_on_node() -> bool:
        pods = _pods_of(client, namespace, labels)
        return sum(_running(p) and p["spec"].get("nodeName") == node for p in pods) == count

    await_state(ctx, f"{count} Pods of the ReplicaSet {ref} running on the Node {node}", running_on_node,
                SETUP_SECONDS)
    if not tolerate_cordon:
        ctx.setup(lambda: client.patch("apps/v1", REPLICA_SET, target.name,
                                       {"spec": {"template": {"spec": {"nodeSelector": None}}}},
                                       namespace=namespace, patch_type=MERGE))


def _pods_of(client: Client, namespace: str, labels: dict[str, str]) -> list[dict[str, Any]]:
    selector = ",".join(f"{k}={v}" for k, v in labels.items())
    return list(client.list("v1", "Pod", namespace, label_selector=selector)["items"])


@given(sentence('a ReplicaSet "{ref:Q}" runs {count:Int} Pods on the Node of "{machine:Q}"'))
@given(sentence('a ReplicaSet "{ref:Q}" runs {count:Int} Pod on the Node of "{machine:Q}"'))
def given_replica_set(ctx: ScenarioContext, capi: CapiScene, ref: str, count: int, machine: str) -> None:
    _replica_set(ctx, capi, ref, count, machine, tolerate_cordon=False)


@given(sentence('a ReplicaSet "{ref:Q}" runs {count:Int} Pod pinned to the Node of "{machine:Q}" and tolerating '
                'its cordon'))
@given(sentence('a ReplicaSet "{ref:Q}" runs {count:Int} Pods pinned to the Node of "{machine:Q}" and tolerating '
                'its cordon'))
def given_sticky_replica_set(ctx: ScenarioContext, capi: CapiScene, ref: str, count: int, machine: str) -> None:
    _replica_set(ctx, capi, ref, count, machine, tolerate_cordon=True)


@given(sentence('the workload cluster has a PodDisruptionBudget "{ref:Q}" with {spec} selecting "{selector:Q}"'))
def given_workload_pdb(ctx: ScenarioContext, capi: CapiScene, ref: str, spec: str, selector: str) -> None:
    create_pdb(ctx, capi, ref, {**budget(spec), "selector": {"matchLabels": labels_of(selector)}})


@given(sentence('the workload cluster has a Namespace "{name:Q}" labelled "{labels:Q}"'))
def given_workload_namespace(ctx: ScenarioContext, capi: CapiScene, name: str, labels: str) -> None:
    client = workload(ctx, capi)
    ctx.setup(lambda: ensure_namespace(client, name, labels_of(labels)))


@given(sentence('the Namespace "{name:Q}" of the workload cluster is being deleted'))
def given_namespace_deleting(ctx: ScenarioContext, capi: CapiScene, name: str) -> None:
    client = workload(ctx, capi)
    ctx.setup(lambda: client.delete("v1", "Namespace", name))
    namespace = find_in(client, "v1", "Namespace", name, None)
    assert namespace is not None and namespace["metadata"].get("deletionTimestamp"), (
        f"the Namespace {name} is not terminating: {namespace}"
    )


@given(sentence('the Node of "{machine:Q}" has become unreachable'))
def given_node_unreachable(ctx: ScenarioContext, capi: CapiScene, machine: str) -> None:
    client = workload(ctx, capi)
    node = node_of(capi, machine)
    unreachable = {"metadata": {"annotations": {NODE_HEALTH_ANNOTATION: UNREACHABLE}}}
    ctx.setup(lambda: client.patch("v1", "Node", node, unreachable,
                                   patch_type=MERGE))

    def unknown() -> bool:
        ready = condition(find_in(client, "v1", "Node", node, None), "Ready")
        return ready is not None and ready.get("status") == UNREACHABLE

    await_state(ctx, f"the Node {node} unreachable (Ready Unknown)", unknown, 120)


@given(sentence('the Node of "{machine:Q}" has been removed from the workload cluster'))
def given_node_removed(ctx: ScenarioContext, capi: CapiScene, machine: str) -> None:
    client = workload(ctx, capi)
    node = node_of(capi, machine)
    ctx.setup(lambda: client.delete("v1", "Node", node))
    await_state(ctx, f"the Node {node} gone", lambda: find_in(client, "v1", "Node", node, None) is None, 60)


@given(sentence('the Pod "{ref:Q}" of the workload cluster was deleted {seconds:Int} seconds ago'))
def given_pod_deleted_earlier(ctx: ScenarioContext, capi: CapiScene, ref: str, seconds: int) -> None:
    target = ctx.ref("Pod", ref)
    ctx.setup(lambda: workload(ctx, capi).delete("v1", "Pod", target.name, target.namespace))
    ctx.scene.advance(seconds)


def _selector(text: str) -> dict[str, Any] | None:
    return {"matchLabels": labels_of(text)} if text.strip() else None


@given(sentence("the MachineDrainRules:"))
def given_drain_rules(ctx: ScenarioContext, capi: CapiScene, datatable: list[list[str]]) -> None:
    """Columns: rule (``[namespace/]name``), behavior, order, pods, namespaces, machines, clusters (label
    selectors; empty means no selector). Rows with the same rule add entries to it."""
    header = [cell.strip() for cell in datatable[0]]
    rules: dict[str, dict[str, Any]] = {}
    for cells in datatable[1:]:
        row = dict(zip(header, (cell.strip() for cell in cells)))
        target = ctx.ref(MACHINE_DRAIN_RULE_KIND, row["rule"])
        key = f"{target.namespace}/{target.name}"
        rule = rules.setdefault(key, {
            "apiVersion": CLUSTER_API_VERSION, "kind": MACHINE_DRAIN_RULE_KIND,
            "metadata": {"name": target.name, "namespace": target.namespace},
            "spec": {"drain": {"behavior": row["behavior"]}},
        })
        if row.get("order"):
            rule["spec"]["drain"]["order"] = int(row["order"])
        pods = {k: v for k, v in (("selector", _selector(row.get("pods", ""))),
                                  ("namespaceSelector", _selector(row.get("namespaces", "")))) if v}
        if pods:
            rule["spec"].setdefault("pods", []).append(pods)
        machines = {k: v for k, v in (("selector", _selector(row.get("machines", ""))),
                                      ("clusterSelector", _selector(row.get("clusters", "")))) if v}
        if machines:
            rule["spec"].setdefault("machines", []).append(machines)
    for rule in rules.values():
        namespace = rule["metadata"]["namespace"]
        if find_in(ctx.client, "v1", "Namespace", namespace, None) is None:
            ctx.setup(lambda namespace=namespace: ctx.client.create(
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}))
        ctx.setup(lambda rule=rule: ctx.client.create(rule))


# -- When --------------------------------------------------------------------------------------------


@when(sentence('the Node of "{machine:Q}" starts the Pods:'))
def when_pods_start(ctx: ScenarioContext, capi: CapiScene, machine: str, datatable: list[list[str]]) -> None:
    ctx.mark = ctx.scene.audit_size()
    _start_rows(ctx, capi, machine, datatable)


@when(sentence('the Pod "{ref:Q}" finishes and is removed by its owner'))
def when_pod_finishes(ctx: ScenarioContext, capi: CapiScene, ref: str) -> None:
    target = ctx.ref("Pod", ref)
    ctx.act(lambda: workload(ctx, capi).delete("v1", "Pod", target.name, target.namespace, grace_period_seconds=0))


@when(sentence('the PodDisruptionBudget "{ref:Q}" of the workload cluster is deleted'))
def when_pdb_deleted(ctx: ScenarioContext, capi: CapiScene, ref: str) -> None:
    target = ctx.ref("PodDisruptionBudget", ref)
    ctx.act(lambda: workload(ctx, capi).delete("policy/v1", "PodDisruptionBudget", target.name, target.namespace))


@when(sentence('the hook owner "{owner:Q}" drains the Node of "{machine:Q}" itself'))
def when_owner_drains(ctx: ScenarioContext, capi: CapiScene, owner: str, machine: str) -> None:
    """The owner's own drain: cordon, then evict every Pod of the Node."""
    client = workload(ctx, capi, user=owner)
    node = node_of(capi, machine)

    def drain() -> None:
        client.patch("v1", "Node", node, {"spec": {"unschedulable": True}}, patch_type=MERGE)
        for pod in client.list("v1", "Pod", field_selector=f"spec.nodeName={node}")["items"]:
            client.evict(pod["metadata"]["name"], pod["metadata"]["namespace"])

    ctx.act(drain)


@when(sentence('a MachineDrainRule "{ref:Q}" with behavior {behavior:Word} and order {order:Int} is created'))
def when_drain_rule_created(ctx: ScenarioContext, ref: str, behavior: str, order: int) -> None:
    target = ctx.ref(MACHINE_DRAIN_RULE_KIND, ref)
    ctx.act(lambda: ctx.client.create({
        "apiVersion": CLUSTER_API_VERSION, "kind": MACHINE_DRAIN_RULE_KIND,
        "metadata": {"name": target.name, "namespace": target.namespace},
        "spec": {"drain": {"behavior": behavior, "order": order}},
    }))


# -- Then: the Node ----------------------------------------------------------------------------------------


def _node(ctx: ScenarioContext, capi: CapiScene, machine: str) -> dict[str, Any]:
    node = find_in(workload(ctx, capi), "v1", "Node", node_of(capi, machine), None)
    assert node is not None, f"the Node {node_of(capi, machine)} does not exist"
    return node


@then(sentence('the Node of "{machine:Q}" is cordoned'))
def then_cordoned(ctx: ScenarioContext, capi: CapiScene, machine: str) -> None:
    node = _node(ctx, capi, machine)
    assert (node.get("spec") or {}).get("unschedulable") is True, (
        f"the Node {node['metadata']['name']} is not cordoned: {node.get('spec')}"
    )


@then(sentence('the Node of "{machine:Q}" was never cordoned'))
def then_never_cordoned(ctx: ScenarioContext, capi: CapiScene, machine: str) -> None:
    node = node_of(capi, machine)
    cordons = [r for r in records_of(ctx, "Node", node) if ((r["new"] or {}).get("spec") or {}).get("unschedulable")]
    assert not cordons, f"the Node {node} was cordoned by {cordons[0]['user']} at {cordons[0]['time']}"


@then(sentence('the Node of "{machine:Q}" has the taint "{taint:Q}"'))
def then_tainted(ctx: ScenarioContext, capi: CapiScene, machine: str, taint: str) -> None:
    key, _, effect = taint.partition(":")
    taints = (_node(ctx, capi, machine).get("spec") or {}).get("taints") or []
    assert any(t.get("key") == key and t.get("effect") == effect for t in taints), f"the Node's taints are {taints}"


def _drained(ctx: ScenarioContext, capi: CapiScene, machine: str) -> bool:
    """Whether the Machine's DrainingSucceeded condition has been True (its writes say; it may be gone)."""
    return any((condition(r["new"], DRAINING_SUCCEEDED) or {}).get("status") == "True"
               for r in machine_records(ctx, capi, machine))


def _drain_state(ctx: ScenarioContext, capi: CapiScene, machine: str) -> Any:
    current = find_in(ctx.client, CLUSTER_API_VERSION, MACHINE_KIND, machine, capi.namespace)
    return condition(current, DRAINING_SUCCEEDED) if current is not None else "the Machine is gone"


@then(sentence('the Node of "{machine:Q}" is drained'))
def then_drained(ctx: ScenarioContext, capi: CapiScene, machine: str) -> None:
    assert _drained(ctx, capi, machine), f"the drain of {machine} is not complete: {_drain_state(ctx, capi, machine)}"


@then(sentence('within {seconds:Int} seconds the Node of "{machine:Q}" is drained'))
def then_drained_within(ctx: ScenarioContext, capi: CapiScene, seconds: int, machine: str) -> None:
    assert ctx.wait_until(lambda: _drained(ctx, capi, machine), seconds), (
        f"the drain of {machine} is not complete after {seconds} s: {_drain_state(ctx, capi, machine)}"
    )


# -- Then: Pods ----------------------------------------------------------------------------------------


def _evictions(ctx: ScenarioContext, capi: CapiScene, ref: str) -> list[dict[str, Any]]:
    target = ctx.ref("Pod", ref)
    return eviction_records(ctx, capi, pod=(str(target.namespace), target.name))


def _pod(ctx: ScenarioContext, capi: CapiScene, ref: str) -> dict[str, Any] | None:
    target = ctx.ref("Pod", ref)
    return find_in(workload(ctx, capi), "v1", "Pod", target.name, target.namespace)


@then(sentence('the Pod "{ref:Q}" is evicted'))
def then_evicted(ctx: ScenarioContext, capi: CapiScene, ref: str) -> None:
    assert _evictions(ctx, capi, ref), f"the Pod {ref} was not evicted; it is {_phase(_pod(ctx, capi, ref))!r}"


@then(sentence('within {seconds:Int} seconds the Pod "{ref:Q}" is evicted'))
def then_evicted_within(ctx: ScenarioContext, capi: CapiScene, seconds: int, ref: str) -> None:
    assert ctx.wait_until(lambda: bool(_evictions(ctx, capi, ref)), seconds), (
        f"the Pod {ref} was not evicted within {seconds} s"
    )


@then(sentence('the Pod "{ref:Q}" was evicted no sooner than {seconds:Int} seconds after the drain of "{machine:Q}" '
               'started'))
def then_evicted_not_sooner(ctx: ScenarioContext, capi: CapiScene, ref: str, seconds: int, machine: str) -> None:
    """Seed 001: a drain that is not complete is tried again every 20 s (harness/spec/drain.py): an eviction
    refused at the drain's first pass comes back at a later pass, not at once when the refusal's cause goes
    away. The drain start is when the Machine first reported the DrainingNode stage."""
    evictions = _evictions(ctx, capi, ref)
    assert evictions, f"the Pod {ref} was not evicted"
    started = parse_rfc3339(stage_time(ctx, capi, machine, DRAINING_NODE_REASON)[1])
    after = parse_rfc3339(str(evictions[0]["time"])) - started
    assert after >= seconds, (f"the Pod {ref} was evicted {after:.0f} s after the drain of {machine} started: a "
                              f"refused drain is retried every {RETRY_SECONDS} s, not sooner")


@then(sentence('the Pod "{ref:Q}" is not evicted'))
def then_not_evicted(ctx: ScenarioContext, capi: CapiScene, ref: str) -> None:
    evictions = _evictions(ctx, capi, ref)
    assert not evictions, f"the Pod {ref} was evicted by {evictions[0]['user']} at {evictions[0]['time']}"


@then(sentence('the Pod "{ref:Q}" is still running'))
def then_still_running(ctx: ScenarioContext, capi: CapiScene, ref: str) -> None:
    pod = _pod(ctx, capi, ref)
    assert _running(pod), f"the Pod {ref} is not running: {pod and (pod['metadata'], _phase(pod))}"


@then(sentence('the Pod "{ref:Q}" has finished'))
def then_finished(ctx: ScenarioContext, capi: CapiScene, ref: str) -> None:
    pod = _pod(ctx, capi, ref)
    assert _phase(pod) == "Succeeded", f"the Pod {ref} is {_phase(pod)!r}, not Succeeded"


@then(sentence('the Pod "{ref:Q}" still exists in the workload cluster'))
def then_pod_exists(ctx: ScenarioContext, capi: CapiScene, ref: str) -> None:
    assert _pod(ctx, capi, ref) is not None, f"the Pod {ref} is gone"


@then(sentence('the Pod "{ref:Q}" is gone from the workload cluster'))
def then_pod_gone(ctx: ScenarioContext, capi: CapiScene, ref: str) -> None:
    assert _pod(ctx, capi, ref) is None, f"the Pod {ref} still exists"


@then(sentence('within {seconds:Int} seconds the Pod "{ref:Q}" is gone from the workload cluster'))
def then_pod_gone_within(ctx: ScenarioContext, capi: CapiScene, seconds: int, ref: str) -> None:
    assert ctx.wait_until(lambda: _pod(ctx, capi, ref) is None, seconds), f"the Pod {ref} still exists"


@then(sentence('the Pod "{ref:Q}" was evicted with a grace period of {grace:Int} second'))
@then(sentence('the Pod "{ref:Q}" was evicted with a grace period of {grace:Int} seconds'))
def then_evicted_with_grace(ctx: ScenarioContext, capi: CapiScene, ref: str, grace: int) -> None:
    target = ctx.ref("Pod", ref)
    assert _evictions(ctx, capi, ref), f"the Pod {ref} was not evicted"
    deletions = [r for r in ctx.scene.audit(cluster=capi.workload, resource=AUDIT_RESOURCES["Pod"],
                                            namespace=str(target.namespace), name=target.name)
                 if r["verb"] == "delete"]
    assert deletions, f"the Pod {ref} was never deleted"
    meta = (deletions[0]["new"] or deletions[0]["old"] or {}).get("metadata") or {}
    assert meta.get("deletionGracePeriodSeconds") == grace, (
        f"the eviction deleted the Pod {ref} with a grace period of {meta.get('deletionGracePeriodSeconds')!r}"
    )


@then(sentence('the Pod "{ref:Q}" was evicted only after the Pod "{other:Q}" was gone'))
def then_evicted_after_gone(ctx: ScenarioContext, capi: CapiScene, ref: str, other: str) -> None:
    evictions = _evictions(ctx, capi, ref)
    assert evictions, f"the Pod {ref} was not evicted"
    before = ctx.ref("Pod", other)
    removed = [r["seq"] for r in ctx.scene.audit(cluster=capi.workload, resource=AUDIT_RESOURCES["Pod"],
                                                 namespace=str(before.namespace), name=before.name)
               if r["new"] is None]
    assert removed and removed[0] < evictions[0]["seq"], (
        f"the Pod {ref} was evicted (#{evictions[0]['seq']}) while the Pod {other} still existed"
    )


def _replica_set_evictions(ctx: ScenarioContext, capi: CapiScene, ref: str) -> list[dict[str, Any]]:
    target = ctx.ref(REPLICA_SET, ref)

    def owned(record: dict[str, Any]) -> bool:
        refs = ((record["new"] or {}).get("metadata") or {}).get("ownerReferences") or []
        return any(r.get("kind") == REPLICA_SET and r.get("name") == target.name for r in refs)

    return [r for r in eviction_records(ctx, capi) if r["namespace"] == target.namespace and owned(r)]


@then(sentence('the Pods of the ReplicaSet "{ref:Q}" on the Node of "{machine:Q}" are evicted'))
def then_replica_set_evicted(ctx: ScenarioContext, capi: CapiScene, ref: str, machine: str) -> None:
    target = ctx.ref(REPLICA_SET, ref)
    node = node_of(capi, machine)
    evicted = {r["name"] for r in _replica_set_evictions(ctx, capi, ref)}
    pods = {r["name"] for r in ctx.scene.audit(cluster=capi.workload, resource=AUDIT_RESOURCES["Pod"],
                                               namespace=str(target.namespace))
            if ((r["new"] or {}).get("spec") or {}).get("nodeName") == node
            and any(o.get("name") == target.name for o in (r["new"]["metadata"].get("ownerReferences") or []))}
    assert pods, f"no Pod of the ReplicaSet {ref} ran on the Node {node}"
    assert pods <= evicted, f"Pods of the ReplicaSet {ref} not evicted: {sorted(pods - evicted)}"


@then(sentence('within {seconds:Int} seconds the Pods of the ReplicaSet "{ref:Q}" have been evicted {count:Int} '
               'times'))
def then_replica_set_evicted_times(ctx: ScenarioContext, capi: CapiScene, seconds: int, ref: str, count: int) -> None:
    assert ctx.wait_until(lambda: len(_replica_set_evictions(ctx, capi, ref)) >= count, seconds), (
        f"the Pods of the ReplicaSet {ref} were evicted {len(_replica_set_evictions(ctx, capi, ref))} times"
    )


@then(sentence('within {seconds:Int} seconds the ReplicaSet "{ref:Q}" has {count:Int} running Pods, none of them on '
               'the Node of "{machine:Q}"'))
def then_replica_set_elsewhere(ctx: ScenarioContext, capi: CapiScene, seconds: int, ref: str, count: int,
                               machine: str) -> None:
    target = ctx.ref(REPLICA_SET, ref)
    client = workload(ctx, capi)
    node = node_of(capi, machine)

    def placed() -> list[tuple[str, str | None]]:
        return [(p["metadata"]["name"], p["spec"].get("nodeName"))
                for p in _pods_of(client, str(target.namespace), {"app": target.name}) if _running(p)]

    def elsewhere() -> bool:
        pods = placed()
        return len(pods) == count and all(n != node for _, n in pods)

    assert ctx.wait_until(elsewhere, seconds), f"the running Pods of the ReplicaSet {ref} are {placed()}"


@then(sentence('every eviction from the Node of "{machine:Q}" was made by the hook owner "{owner:Q}"'))
def then_evictions_by(ctx: ScenarioContext, capi: CapiScene, machine: str, owner: str) -> None:
    evictions = eviction_records(ctx, capi, node=node_of(capi, machine))
    assert evictions, f"no Pod was evicted from the Node of {machine}"
    others = sorted({(r["namespace"] + "/" + r["name"], r["user"]) for r in evictions if r["user"] != owner})
    assert not others, f"evictions by others than {owner}: {others}"


@then(sentence('the refusal names the field "{field:Q}" with the message:'))
def then_refusal_field_message(ctx: ScenarioContext, field: str, docstring: str) -> None:
    assert ctx.error is not None, "the write was accepted"
    causes = list(ctx.error.details.get("causes") or [])
    assert {"field": field, "message": docstring} in [{"field": c.get("field"), "message": c.get("message")}
                                                      for c in causes], f"the causes are {causes}"
