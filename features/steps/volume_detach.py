"""Sentences about the volumes of a Machine's Node, for the machine controller's wait for volume detach:
Pods using CSI volumes (attached by the world's CSI attacher), volumes that detach slowly or never,
VolumeAttachments and ``status.volumesAttached`` entries nobody uses, and when the deletion moved on
relative to the detach (from the audit trail).

Volumes are CSI volumes of the driver ``ebs.csi.aws.com`` with the volume handle ``vol-<pv>``; the
PersistentVolumes, claims and VolumeAttachments live in the scenario's workload cluster.
"""

from __future__ import annotations

from typing import Any

from pytest_bdd import given, then

from features.steps.context import ScenarioContext, labels_of, sentence
from features.steps.drain import start_pod_on_node
from features.steps.machines import (
    AUDIT_RESOURCES,
    CapiScene,
    await_state,
    detachments_from_node,
    find_in,
    first_deletion_seq,
    node_of,
    records_of,
    stage_time,
    workload,
)
from harness.kube.client import MERGE
from harness.kube.names.knobs import DETACH_DELAY_ANNOTATION, DETACH_STUCK_ANNOTATION
from harness.kube.names.storage import STORAGE_V1, VOLUME_ATTACHMENT

CSI_DRIVER = "ebs.csi.aws.com"
STORAGE = "1Gi"
# The CSI attacher's knobs (harness/world/csi_attacher.py).


def _handle(pv: str) -> str:
    return f"vol-{pv}"


def bound_claim(ctx: ScenarioContext, capi: CapiScene, claim: str, pv: str) -> tuple[str, str]:
    """A CSI PersistentVolume ``pv`` and the claim bound to it; returns the claim's (namespace, name)."""
    client = workload(ctx, capi)
    target = ctx.ref("PersistentVolumeClaim", claim)
    ctx.setup(lambda: client.create({
        "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": pv},
        "spec": {"capacity": {"storage": STORAGE}, "accessModes": ["ReadWriteOnce"],
                 "csi": {"driver": CSI_DRIVER, "volumeHandle": _handle(pv)},
                 "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": target.namespace,
                              "name": target.name}},
    }))
    created = ctx.setup(lambda: client.create({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": target.name, "namespace": target.namespace},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": STORAGE}}, "volumeName": pv},
    }))
    created["status"] = {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": STORAGE}}
    ctx.setup(lambda: client.update_status(created))
    return str(target.namespace), target.name


def _attachments(ctx: ScenarioContext, capi: CapiScene, pv: str, node: str) -> list[dict[str, Any]]:
    """Audited writes of VolumeAttachments of ``pv`` to ``node``, oldest first."""
    def matches(obj: dict[str, Any] | None) -> bool:
        spec = (obj or {}).get("spec") or {}
        return spec.get("nodeName") == node and (spec.get("source") or {}).get("persistentVolumeName") == pv

    return [r for r in ctx.scene.audit(cluster=capi.workload, resource=AUDIT_RESOURCES[VOLUME_ATTACHMENT])
            if matches(r["new"]) or matches(r["old"])]


def _use_claim(ctx: ScenarioContext, capi: CapiScene, machine: str, ref: str, claim: str, pv: str,
               labels: dict[str, str] | None = None) -> None:
    pod = ctx.ref("Pod", ref)
    namespace, name = bound_claim(ctx, capi, f"{pod.namespace}/{claim}", pv)
    assert namespace == pod.namespace, "a Pod uses a claim of its own namespace"
    start_pod_on_node(ctx, capi, machine, ref, labels=labels,
                      volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": name}}])


# -- Given -------------------------------------------------------------------------------------------


@given(sentence('the Node of "{machine:Q}" runs a Pod "{ref:Q}" using the claim "{claim:Q}" of the CSI volume '
                '"{pv:Q}"'))
def given_pod_with_volume(ctx: ScenarioContext, capi: CapiScene, machine: str, ref: str, claim: str, pv: str) -> None:
    _use_claim(ctx, capi, machine, ref, claim, pv)


@given(sentence('the Node of "{machine:Q}" runs a Pod "{ref:Q}" labelled "{labels:Q}" using the claim "{claim:Q}" of '
                'the CSI volume "{pv:Q}"'))
def given_labelled_pod_with_volume(ctx: ScenarioContext, capi: CapiScene, machine: str, ref: str, labels: str,
                                   claim: str, pv: str) -> None:
    _use_claim(ctx, capi, machine, ref, claim, pv, labels_of(labels))


@given(sentence('the volume "{pv:Q}" cannot be detached'))
def given_volume_stuck(ctx: ScenarioContext, capi: CapiScene, pv: str) -> None:
    client = workload(ctx, capi)
    ctx.setup(
        lambda: client.patch(
            "v1",
            "PersistentVolume",
            pv,
            {"metadata": {"annotations": {DETACH_STUCK_ANNOTATION: "true"}}},
            patch_type=MERGE,
        )
    )


@given(sentence('the volume "{pv:Q}" takes {seconds:Int} seconds to detach'))
def given_volume_slow(ctx: ScenarioContext, capi: CapiScene, pv: str, seconds: int) -> None:
    client = workload(ctx, capi)
    ctx.setup(
        lambda: client.patch(
            "v1",
            "PersistentVolume",
            pv,
            {"metadata": {"annotations": {DETACH_DELAY_ANNOTATION: f"{seconds}s"}}},
            patch_type=MERGE,
        )
    )


@given(sentence('a VolumeAttachment attaches the CSI volume "{pv:Q}" of the claim "{claim:Q}" to the Node of '
                '"{machine:Q}" without any Pod'))
def given_lone_attachment(ctx: ScenarioContext, capi: CapiScene, pv: str, claim: str, machine: str) -> None:
    client = workload(ctx, capi)
    node = node_of(capi, machine)
    bound_claim(ctx, capi, claim, pv)
    name = f"csi-manual-{pv}"
    ctx.setup(lambda: client.create({"apiVersion": STORAGE_V1, "kind": VOLUME_ATTACHMENT, "metadata": {"name": name},
                                     "spec": {"attacher": CSI_DRIVER, "nodeName": node,
                                              "source": {"persistentVolumeName": pv}}}))

    def attached() -> bool:
        va = find_in(client, STORAGE_V1, VOLUME_ATTACHMENT, name, None)
        return bool(((va or {}).get("status") or {}).get("attached"))

    await_state(ctx, f"the VolumeAttachment {name} attached", attached, 60)


@given(sentence('the Node of "{machine:Q}" reports the volume "{volume:Q}" as attached'))
def given_node_reports_volume(ctx: ScenarioContext, capi: CapiScene, machine: str, volume: str) -> None:
    client = workload(ctx, capi)
    node = client.get("v1", "Node", node_of(capi, machine))
    status = node.setdefault("status", {})
    status["volumesAttached"] = [*(status.get("volumesAttached") or []), {"name": volume, "devicePath": ""}]
    ctx.setup(lambda: client.update_status(node))


# -- Then --------------------------------------------------------------------------------------------


@then(sentence('the Node of "{machine:Q}" lists no attached volume'))
def then_no_attached_volume(ctx: ScenarioContext, capi: CapiScene, machine: str) -> None:
    node = find_in(workload(ctx, capi), "v1", "Node", node_of(capi, machine), None)
    attached = ((node or {}).get("status") or {}).get("volumesAttached") or []
    assert not attached, f"the Node lists {attached} as attached"


@then(sentence('the Machine "{name:Q}" reached "{reason:Q}" only after the volume "{pv:Q}" was detached from the Node '
               'of "{machine:Q}"'))
def then_stage_after_detach(ctx: ScenarioContext, capi: CapiScene, name: str, reason: str, pv: str,
                            machine: str) -> None:
    reached, _ = stage_time(ctx, capi, name, reason)
    detached = detachments_from_node(ctx, capi, node_of(capi, machine), pv)
    assert detached, f"the volume {pv} was never detached from the Node of {machine}"
    assert detached[0]["seq"] < reached, (
        f"the Machine {name} reached {reason!r} (#{reached}) before the volume {pv} was detached "
        f"(#{detached[0]['seq']})"
    )


@then(sentence('the {kind:Kind} "{ref:Q}" was deleted while the volume "{pv:Q}" was still attached to the Node of '
               '"{machine:Q}"'))
def then_deleted_while_attached(ctx: ScenarioContext, capi: CapiScene, kind: str, ref: str, pv: str,
                                machine: str) -> None:
    target = ctx.ref(kind, ref)
    deleted = first_deletion_seq(records_of(ctx, kind, target.name, target.namespace or ""))
    assert deleted is not None, f"{target} was never deleted"
    before = [r for r in _attachments(ctx, capi, pv, node_of(capi, machine)) if r["seq"] < deleted]
    assert before, f"the volume {pv} was never attached to the Node of {machine} before {target} was deleted"
    last = before[-1]["new"]
    assert last is not None and ((last.get("status") or {}).get("attached")), (
        f"the volume {pv} was no longer attached when {target} was deleted (#{deleted})"
    )
