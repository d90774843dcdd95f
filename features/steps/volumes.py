"""Sentences about CSI volumes: claims bound to PersistentVolumes, Pods that use them, the
VolumeAttachments that attach them to Nodes, and what the Nodes report."""

from __future__ import annotations

from typing import Any

from pytest_bdd import given, then, when

from features.steps.context import POLL_SECONDS, ScenarioContext, sentence
from features.steps.pods import pod_manifest, start_running_pod
from harness.kube.names.storage import STORAGE_V1, VOLUME_ATTACHMENT

VA_RESOURCE = "volumeattachments.storage.k8s.io"
STORAGE = "1Gi"


def _pod_with_claim(ctx: ScenarioContext, ref: str, claim: str, node: str | None) -> dict[str, Any]:
    pod = pod_manifest(ctx, ref, node=node)
    pod["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
    pod["spec"]["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    return pod


def _matches(va: dict[str, Any] | None, pv: str, node: str) -> bool:
    spec = (va or {}).get("spec") or {}
    return spec.get("nodeName") == node and (spec.get("source") or {}).get("persistentVolumeName") == pv


def _attachment(ctx: ScenarioContext, pv: str, node: str) -> dict[str, Any] | None:
    for va in ctx.client.list(STORAGE_V1, VOLUME_ATTACHMENT)["items"]:
        if _matches(va, pv, node):
            return va  # type: ignore[no-any-return]
    return None


def _attached(ctx: ScenarioContext, pv: str, node: str) -> bool:
    va = _attachment(ctx, pv, node)
    return va is not None and bool((va.get("status") or {}).get("attached"))


def _existing(ctx: ScenarioContext, pv: str, node: str) -> dict[str, Any]:
    va = _attachment(ctx, pv, node)
    assert va is not None, f"no VolumeAttachment of {pv} on Node {node}"
    return va


def _attachment_name(ctx: ScenarioContext, pv: str, node: str) -> str:
    """The name of the VolumeAttachment of ``pv`` on ``node``, from the audit trail (it may be gone)."""
    for record in ctx.scene.audit(resource=VA_RESOURCE):
        if _matches(record["new"], pv, node) or _matches(record["old"], pv, node):
            return str(record["name"])
    raise AssertionError(f"no VolumeAttachment of {pv} on Node {node} was ever written")


def _deletion_seq(ctx: ScenarioContext, pv: str, node: str) -> int:
    name = _attachment_name(ctx, pv, node)
    for record in ctx.scene.audit(resource=VA_RESOURCE, name=name, verb="delete"):
        return int(record["seq"])
    raise AssertionError(f"the VolumeAttachment {name} was never deleted")


# -- Given -------------------------------------------------------------------------------------------


@given(sentence(
    'a PersistentVolumeClaim "{ref:Q}" bound to a PersistentVolume "{pv:Q}" of the CSI driver "{driver:Q}" '
    'with the volume handle "{handle:Q}"'
))
def given_bound_claim(ctx: ScenarioContext, ref: str, pv: str, driver: str, handle: str) -> None:
    claim = ctx.ref("PersistentVolumeClaim", ref)
    ctx.setup(lambda: ctx.client.create({
        "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": pv},
        "spec": {"capacity": {"storage": STORAGE}, "accessModes": ["ReadWriteOnce"],
                 "csi": {"driver": driver, "volumeHandle": handle},
                 "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": claim.namespace,
                              "name": claim.name}},
    }))
    created = ctx.setup(lambda: ctx.client.create({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": claim.name, "namespace": claim.namespace},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": STORAGE}}, "volumeName": pv},
    }))
    created["status"] = {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": STORAGE}}
    ctx.setup(lambda: ctx.client.update_status(created))


@given(sentence('a Pod "{ref:Q}" using the claim "{claim:Q}" running on Node "{node:Q}"'))
def given_pod_with_claim(ctx: ScenarioContext, ref: str, claim: str, node: str) -> None:
    start_running_pod(ctx, _pod_with_claim(ctx, ref, claim, node))


# -- When --------------------------------------------------------------------------------------------


@when(sentence('a Pod "{ref:Q}" using the claim "{claim:Q}" is scheduled to Node "{node:Q}"'))
def when_pod_scheduled(ctx: ScenarioContext, ref: str, claim: str, node: str) -> None:
    pod = _pod_with_claim(ctx, ref, claim, None)

    def schedule() -> Any:
        created = ctx.client.create(pod)
        return ctx.client.bind(created["metadata"]["name"], created["metadata"]["namespace"], node)

    ctx.act(schedule)


@when(sentence('the VolumeAttachment of "{pv:Q}" on Node "{node:Q}" is moved to Node "{other:Q}"'))
def when_attachment_moved(ctx: ScenarioContext, pv: str, node: str, other: str) -> None:
    va = _existing(ctx, pv, node)
    va["spec"]["nodeName"] = other
    ctx.act(lambda: ctx.client.update(va))


@when(sentence(
    'a VolumeAttachment "{name:Q}" without a source on Node "{node:Q}" for the CSI driver "{driver:Q}" is created'
))
def when_sourceless_attachment_created(ctx: ScenarioContext, name: str, node: str, driver: str) -> None:
    ctx.act(lambda: ctx.client.create({
        "apiVersion": STORAGE_V1, "kind": VOLUME_ATTACHMENT, "metadata": {"name": name},
        "spec": {"attacher": driver, "nodeName": node, "source": {}},
    }))


# -- Then --------------------------------------------------------------------------------------------


@then(sentence('within {seconds:Int} seconds the volume "{pv:Q}" is attached to Node "{node:Q}"'))
def then_attached_within(ctx: ScenarioContext, seconds: int, pv: str, node: str) -> None:
    assert ctx.wait_until(lambda: _attached(ctx, pv, node), seconds), (
        f"{pv} is not attached to {node} after {seconds} s: {_attachment(ctx, pv, node)}"
    )


@then(sentence('the VolumeAttachment of "{pv:Q}" on Node "{node:Q}" is for the CSI driver "{driver:Q}"'))
def then_attachment_driver(ctx: ScenarioContext, pv: str, node: str, driver: str) -> None:
    va = _existing(ctx, pv, node)
    assert va["spec"].get("attacher") == driver, f"the attacher is {va['spec'].get('attacher')!r}"


@then(sentence('the VolumeAttachment of "{pv:Q}" on Node "{node:Q}" has the finalizer "{finalizer:Q}"'))
def then_attachment_finalizer(ctx: ScenarioContext, pv: str, node: str, finalizer: str) -> None:
    finalizers = _existing(ctx, pv, node)["metadata"].get("finalizers") or []
    assert finalizer in finalizers, f"the VolumeAttachment has finalizers {finalizers}"


@then(sentence('the Node "{node:Q}" lists the volume "{volume:Q}" as attached'))
def then_node_lists_attached(ctx: ScenarioContext, node: str, volume: str) -> None:
    status = ctx.get(ctx.ref("Node", node)).get("status") or {}
    attached = [v.get("name") for v in status.get("volumesAttached") or []]
    assert volume in attached, f"the Node {node} lists {attached} as attached"


@then(sentence('the Node "{node:Q}" lists the volume "{volume:Q}" as in use'))
def then_node_lists_in_use(ctx: ScenarioContext, node: str, volume: str) -> None:
    in_use = (ctx.get(ctx.ref("Node", node)).get("status") or {}).get("volumesInUse") or []
    assert volume in in_use, f"the Node {node} lists {in_use} in use"


@then(sentence('within {seconds:Int} seconds the VolumeAttachment of "{pv:Q}" on Node "{node:Q}" is gone'))
def then_attachment_gone_within(ctx: ScenarioContext, seconds: int, pv: str, node: str) -> None:
    assert ctx.wait_until(lambda: _attachment(ctx, pv, node) is None, seconds), (
        f"the VolumeAttachment of {pv} on {node} still exists after {seconds} s: {_attachment(ctx, pv, node)}"
    )


@then(sentence('the VolumeAttachment of "{pv:Q}" on Node "{node:Q}" was deleted after the Pod "{ref:Q}" was gone'))
def then_detached_after_pod(ctx: ScenarioContext, pv: str, node: str, ref: str) -> None:
    pod = ctx.ref("Pod", ref)
    removed = [r["seq"] for r in ctx.scene.audit(resource="pods", name=pod.name, namespace=str(pod.namespace))
               if r["new"] is None]
    assert removed, f"{pod} was never removed"
    deleted = _deletion_seq(ctx, pv, node)
    assert deleted > removed[0], f"the VolumeAttachment was deleted (#{deleted}) before {pod} was gone (#{removed[0]})"


@then(sentence(
    'the VolumeAttachment of "{pv:Q}" on Node "{node:Q}" was deleted after the Node "{other:Q}" stopped listing '
    '"{volume:Q}" in use'
))
def then_detached_after_unmount(ctx: ScenarioContext, pv: str, node: str, other: str, volume: str) -> None:
    deleted = _deletion_seq(ctx, pv, node)
    states = [(r["seq"], (r["new"] or {}).get("status") or {}) for r in ctx.scene.audit(resource="nodes", name=other)]
    assert any(volume in s.get("volumesInUse", []) for _, s in states), f"the Node {other} never listed {volume} in use"
    before = [s for seq, s in states if seq < deleted]
    in_use = before[-1].get("volumesInUse", []) if before else []
    assert volume not in in_use, (
        f"the VolumeAttachment was deleted (#{deleted}) while the Node {other} listed {in_use} in use"
    )


@then(sentence('the volume "{pv:Q}" stays attached to Node "{node:Q}" for {seconds:Int} seconds'))
def then_stays_attached(ctx: ScenarioContext, pv: str, node: str, seconds: int) -> None:
    end = ctx.scene.now() + seconds
    while True:
        assert _attached(ctx, pv, node), f"{pv} was detached from {node} at {ctx.scene.now()}"
        if ctx.scene.now() >= end:
            return
        ctx.scene.advance(min(POLL_SECONDS, end - ctx.scene.now()))

