"""Sentences about Nodes, Pods and the workloads that own them, and about a Pod's life: running,
Ready or not, finished, terminating, gone.

Pods are started by the world's simulators (scheduler, kubelet, ReplicaSet controller); their
states are asked for with the kubelet's ``harness.test/`` annotations. "A Deployment with N replicas"
relies on the Deployment controller where one runs (the reference one runs on the management cluster);
where none made a ReplicaSet for it once the world settled, the step creates the ReplicaSet a Deployment
controller would have made.
"""

from __future__ import annotations

import hashlib
from typing import Any

from pytest_bdd import given, then, when

from features.steps.context import ScenarioContext, labels_of, sentence
from features.steps.objects import PAUSE_IMAGE
from harness.kube.names.apps import POD_TEMPLATE_HASH_LABEL
from harness.kube.names.knobs import (
    EXIT_CODE_ANNOTATION,
    IGNORE_TERMINATION_ANNOTATION,
    NEVER_READY_ANNOTATION,
    RUN_SECONDS_ANNOTATION,
)
from harness.kube.time import parse_rfc3339

# The kubelet simulator's knobs (harness/world/kubelet.py).
# A node selector no Node satisfies keeps a Pod unscheduled (Pending, without a node).
NOWHERE = {"kubernetes.io/hostname": "harness-test-nowhere"}
# How long a Given waits for the world to bring Pods to the state it describes.
SETUP_SECONDS = 60.0
STATES = ("Pending", "Ready", "not Ready", "Succeeded", "Failed", "terminating")


def pod_manifest(
    ctx: ScenarioContext,
    ref: str,
    *,
    labels: dict[str, str] | None = None,
    node: str | None = None,
    grace: int | None = None,
    annotations: dict[str, str] | None = None,
    restart_policy: str | None = None,
) -> dict[str, Any]:
    """A Pod with one pause container."""
    target = ctx.ref("Pod", ref)
    meta: dict[str, Any] = {"name": target.name, "namespace": target.namespace}
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    spec: dict[str, Any] = {"containers": [{"name": "app", "image": PAUSE_IMAGE}]}
    if node is not None:
        spec["nodeName"] = node
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    if restart_policy is not None:
        spec["restartPolicy"] = restart_policy
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def is_ready(pod: dict[str, Any] | None) -> bool:
    if pod is None:
        return False
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def is_running(pod: dict[str, Any] | None) -> bool:
    """Running, Ready and not being deleted."""
    return (pod is not None and (pod.get("status") or {}).get("phase") == "Running" and is_ready(pod)
            and not pod["metadata"].get("deletionTimestamp"))


def _phase(pod: dict[str, Any] | None) -> str | None:
    return None if pod is None else (pod.get("status") or {}).get("phase")


def _await(ctx: ScenarioContext, what: str, check: Any) -> None:
    assert ctx.wait_until(check, SETUP_SECONDS), f"the world did not bring about {what} in {SETUP_SECONDS} s"


def _first_ready_node(ctx: ScenarioContext) -> str:
    for node in ctx.client.list("v1", "Node")["items"]:
        if is_ready(node):
            return str(node["metadata"]["name"])
    raise AssertionError("no Node is Ready")


def _pods_labelled(ctx: ScenarioContext, labels: str, namespace: str = "default") -> list[dict[str, Any]]:
    selector = ",".join(f"{k}={v}" for k, v in labels_of(labels).items())
    return list(ctx.client.list("v1", "Pod", namespace, label_selector=selector)["items"])


def start_running_pod(ctx: ScenarioContext, manifest: dict[str, Any]) -> None:
    """Create a Pod and wait until the kubelet runs it (Ready unless it is told never to be)."""
    ctx.setup(lambda: ctx.client.create(manifest))
    target = ctx.ref("Pod", f"{manifest['metadata']['namespace']}/{manifest['metadata']['name']}")
    never_ready = (manifest["metadata"].get("annotations") or {}).get(NEVER_READY_ANNOTATION) == "true"
    if never_ready:
        _await(ctx, f"{target} Running", lambda: _phase(ctx.find(target)) == "Running")
    else:
        _await(ctx, f"{target} Running and Ready", lambda: is_running(ctx.find(target)))


# -- Given -------------------------------------------------------------------------------------------


@given(sentence('a Node "{name:Q}" that is Ready'))
def given_ready_node(ctx: ScenarioContext, name: str) -> None:
    target = ctx.ref("Node", name)
    ctx.setup(lambda: ctx.client.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}))
    _await(ctx, f"{target} Ready", lambda: is_ready(ctx.find(target)))


@given(sentence('a running Pod "{ref:Q}" on Node "{node:Q}"'))
def given_running_pod(ctx: ScenarioContext, ref: str, node: str) -> None:
    start_running_pod(ctx, pod_manifest(ctx, ref, node=node))


@given(sentence('a running Pod "{ref:Q}" on Node "{node:Q}" with a termination grace period of {grace:Int} seconds'))
def given_running_pod_with_grace(ctx: ScenarioContext, ref: str, node: str, grace: int) -> None:
    start_running_pod(ctx, pod_manifest(ctx, ref, node=node, grace=grace))


@given(sentence('{count:Int} running Pods labelled "{labels:Q}" on Node "{node:Q}"'))
def given_running_pods(ctx: ScenarioContext, count: int, labels: str, node: str) -> None:
    parsed = labels_of(labels)
    prefix = next(iter(parsed.values()))
    for i in range(count):
        start_running_pod(ctx, pod_manifest(ctx, f"{prefix}-{i}", labels=parsed, node=node))


@given(sentence('a Pod "{ref:Q}" labelled "{labels:Q}" that is {state}'))
def given_pod_in_state(ctx: ScenarioContext, ref: str, labels: str, state: str) -> None:
    assert state in STATES, f"a Pod state is one of {STATES}, not {state!r}"
    target = ctx.ref("Pod", ref)
    parsed = labels_of(labels)
    if state == "Pending":
        manifest = pod_manifest(ctx, ref, labels=parsed)
        manifest["spec"]["nodeSelector"] = dict(NOWHERE)
        ctx.setup(lambda: ctx.client.create(manifest))
        assert _phase(ctx.find(target)) == "Pending", f"{target} is not Pending"
        return
    node = _first_ready_node(ctx)
    if state == "Ready":
        start_running_pod(ctx, pod_manifest(ctx, ref, labels=parsed, node=node))
    elif state == "not Ready":
        start_running_pod(
            ctx, pod_manifest(ctx, ref, labels=parsed, node=node, annotations={NEVER_READY_ANNOTATION: "true"})
        )
    elif state in ("Succeeded", "Failed"):
        knobs = {RUN_SECONDS_ANNOTATION: "0s", EXIT_CODE_ANNOTATION: "0" if state == "Succeeded" else "1"}
        manifest = pod_manifest(ctx, ref, labels=parsed, node=node, annotations=knobs, restart_policy="Never")
        ctx.setup(lambda: ctx.client.create(manifest))
        _await(ctx, f"{target} {state}", lambda: _phase(ctx.find(target)) == state)
    else:  # terminating: its containers ignore the signal, so it stays terminating
        start_running_pod(ctx, pod_manifest(ctx, ref, labels=parsed, node=node,
                                            annotations={IGNORE_TERMINATION_ANNOTATION: "true"}))
        ctx.setup(lambda: ctx.client.delete("v1", "Pod", target.name, target.namespace))
        found = ctx.find(target)
        assert found is not None and found["metadata"].get("deletionTimestamp"), f"{target} is not terminating"


@given(sentence('the Pod "{ref:Q}" is not Ready'))
def given_pod_not_ready(ctx: ScenarioContext, ref: str) -> None:
    target = ctx.ref("Pod", ref)
    ctx.setup(
        lambda: ctx.client.patch(
            "v1",
            "Pod",
            target.name,
            {"metadata": {"annotations": {NEVER_READY_ANNOTATION: "true"}}},
            namespace=target.namespace,
        )
    )
    _await(ctx, f"{target} not Ready", lambda: not is_ready(ctx.find(target)))


def _workload(api_version: str, kind: str, name: str, namespace: str, replicas: int,
              labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": dict(labels)},
            "template": {"metadata": {"labels": dict(labels)},
                         "spec": {"containers": [{"name": "app", "image": PAUSE_IMAGE}]}},
        },
    }


def _await_ready_pods(ctx: ScenarioContext, labels: str, namespace: str, count: int) -> None:
    _await(ctx, f"{count} running Pods labelled {labels}",
           lambda: sum(is_running(p) for p in _pods_labelled(ctx, labels, namespace)) == count)


@given(sentence('a Deployment "{ref:Q}" with {replicas:Int} replicas labelled "{labels:Q}"'))
def given_deployment(ctx: ScenarioContext, ref: str, replicas: int, labels: str) -> None:
    target = ctx.ref("Deployment", ref)
    parsed = labels_of(labels)
    deployment = ctx.setup(lambda: ctx.client.create(
        _workload("apps/v1", "Deployment", target.name, str(target.namespace), replicas, parsed)))
    uid = deployment["metadata"]["uid"]
    if any(ref.get("uid") == uid for rs in ctx.client.list("apps/v1", "ReplicaSet", target.namespace)["items"]
           for ref in rs["metadata"].get("ownerReferences") or []):
        _await_ready_pods(ctx, labels, str(target.namespace), replicas)
        return
    # No Deployment controller runs here: create the ReplicaSet one would, named and labelled by template hash.
    template_hash = hashlib.sha256(deployment["metadata"]["uid"].encode()).hexdigest()[:10]
    hashed = {**parsed, POD_TEMPLATE_HASH_LABEL: template_hash}
    replica_set = _workload("apps/v1", "ReplicaSet", f"{target.name}-{template_hash}", str(target.namespace),
                            replicas, hashed)
    replica_set["metadata"]["labels"] = dict(hashed)
    replica_set["metadata"]["ownerReferences"] = [{
        "apiVersion": "apps/v1", "kind": "Deployment", "name": target.name,
        "uid": deployment["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True,
    }]
    ctx.setup(lambda: ctx.client.create(replica_set))
    _await_ready_pods(ctx, labels, str(target.namespace), replicas)


@given(sentence('a ReplicaSet "{ref:Q}" with {replicas:Int} replicas labelled "{labels:Q}"'))
def given_replica_set(ctx: ScenarioContext, ref: str, replicas: int, labels: str) -> None:
    target = ctx.ref("ReplicaSet", ref)
    ctx.setup(lambda: ctx.client.create(
        _workload("apps/v1", "ReplicaSet", target.name, str(target.namespace), replicas, labels_of(labels))))
    _await_ready_pods(ctx, labels, str(target.namespace), replicas)


@given(sentence('a DaemonSet "{ref:Q}" with {count:Int} running Pods labelled "{labels:Q}" on Node "{node:Q}"'))
def given_daemon_set(ctx: ScenarioContext, ref: str, count: int, labels: str, node: str) -> None:
    target = ctx.ref("DaemonSet", ref)
    parsed = labels_of(labels)
    manifest = _workload("apps/v1", "DaemonSet", target.name, str(target.namespace), 0, parsed)
    del manifest["spec"]["replicas"]
    daemon_set = ctx.setup(lambda: ctx.client.create(manifest))
    owner = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": target.name,
             "uid": daemon_set["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
    for i in range(count):
        pod = pod_manifest(ctx, f"{target.namespace}/{target.name}-{i}", labels=parsed, node=node)
        pod["metadata"]["ownerReferences"] = [dict(owner)]
        start_running_pod(ctx, pod)


# -- When --------------------------------------------------------------------------------------------


@when(sentence('the Pod "{ref:Q}" is deleted with a grace period of {grace:Int} seconds'))
def when_pod_deleted_with_grace(ctx: ScenarioContext, ref: str, grace: int) -> None:
    target = ctx.ref("Pod", ref)
    ctx.act(lambda: ctx.client.delete("v1", "Pod", target.name, target.namespace, grace_period_seconds=grace))


# -- Then --------------------------------------------------------------------------------------------


@then(sentence('the Pod "{ref:Q}" is running'))
def then_pod_running(ctx: ScenarioContext, ref: str) -> None:
    target = ctx.ref("Pod", ref)
    pod = ctx.find(target)
    assert is_running(pod), f"{target} is not running: {pod and (pod['metadata'], pod.get('status', {}).get('phase'))}"


@then(sentence('within {seconds:Int} seconds the Pod "{ref:Q}" is running'))
def then_pod_running_within(ctx: ScenarioContext, seconds: int, ref: str) -> None:
    target = ctx.ref("Pod", ref)
    assert ctx.wait_until(lambda: is_running(ctx.find(target)), seconds), (
        f"{target} is not running after {seconds} s: {ctx.find(target)}"
    )


def _terminating(ctx: ScenarioContext, ref: str) -> dict[str, Any]:
    target = ctx.ref("Pod", ref)
    pod = ctx.find(target)
    assert pod is not None, f"{target} is gone, not terminating"
    assert pod["metadata"].get("deletionTimestamp"), f"{target} is not terminating: {pod['metadata']}"
    return pod


@then(sentence('the Pod "{ref:Q}" is terminating'))
def then_pod_terminating(ctx: ScenarioContext, ref: str) -> None:
    _terminating(ctx, ref)


@then(sentence('the Pod "{ref:Q}" is terminating with a grace period of {grace:Int} seconds'))
@then(sentence('the Pod "{ref:Q}" is terminating with a grace period of {grace:Int} second'))
def then_pod_terminating_with_grace(ctx: ScenarioContext, ref: str, grace: int) -> None:
    meta = _terminating(ctx, ref)["metadata"]
    assert meta.get("deletionGracePeriodSeconds") == grace, (
        f"deletionGracePeriodSeconds is {meta.get('deletionGracePeriodSeconds')!r}, expected {grace}"
    )


@then(sentence('the Pod "{ref:Q}" is due to be removed in {seconds:Int} seconds'))
def then_pod_due_in(ctx: ScenarioContext, ref: str, seconds: int) -> None:
    meta = _terminating(ctx, ref)["metadata"]
    due = parse_rfc3339(meta["deletionTimestamp"]) - ctx.scene.now()
    # deletionTimestamp has seconds precision.
    assert abs(due - seconds) < 1, (
        f"deletionTimestamp {meta['deletionTimestamp']} is {due:.3f} s away, expected {seconds}"
    )


@then(sentence('the deletion answers with the Pod "{ref:Q}" marked for deletion'))
def then_deletion_answers_pod(ctx: ScenarioContext, ref: str) -> None:
    target = ctx.ref("Pod", ref)
    assert ctx.error is None, f"the deletion was refused: {ctx.error}"
    result = ctx.result or {}
    meta = result.get("metadata") or {}
    assert (result.get("kind"), meta.get("name"), meta.get("namespace")) == ("Pod", target.name, target.namespace), (
        f"the deletion answered {result.get('kind')} {meta.get('namespace')}/{meta.get('name')}"
    )
    assert meta.get("deletionTimestamp"), f"the Pod in the answer has no deletionTimestamp: {meta}"


@then(sentence('every Pod labelled "{labels:Q}" is terminating'))
def then_every_pod_terminating(ctx: ScenarioContext, labels: str) -> None:
    pods = _pods_labelled(ctx, labels)
    assert pods, f"no Pod labelled {labels} exists"
    live = [p["metadata"]["name"] for p in pods if not p["metadata"].get("deletionTimestamp")]
    assert not live, f"Pods not terminating: {live}"


@then(sentence('every Pod labelled "{labels:Q}" is running and owned by nothing'))
def then_every_pod_orphaned(ctx: ScenarioContext, labels: str) -> None:
    pods = _pods_labelled(ctx, labels)
    assert pods, f"no Pod labelled {labels} exists"
    for pod in pods:
        name = pod["metadata"]["name"]
        assert is_running(pod), f"Pod {name} is not running: {pod['metadata']}"
        assert not pod["metadata"].get("ownerReferences"), (
            f"Pod {name} is owned by {pod['metadata']['ownerReferences']}"
        )
