"""Waiting for the Node's volumes to be detached before the instance goes (``shouldWaitForNodeVolumes``).

What counts as attached: the names in ``Node.status.volumesAttached`` and the PersistentVolumes of
VolumeAttachments with ``status.attached: true`` for the Node (a VolumeAttachment without
``spec.source.persistentVolumeName`` is an error). Each is matched to a PersistentVolume (a CSI volume
by ``kubernetes.io/csi/<driver>^<volumeHandle>``, a VolumeAttachment by PV name) and reported by its
claim ``namespace/name``; claims of Pods the drain skips are ignored. PVs without a PVC claimRef and
names that match no PV always block. A Node that is gone or unreachable has nothing to wait for.
Lists in the message are sorted and cut at 5 entries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from controllers.machine import logs
from controllers.machine.api import key, meta
from controllers.machine.drain import Drainer, is_node_unreachable
from controllers.machine.errors import ReconcileError
from harness.client import ApiError, Client
from harness.client.interface import shared_reads
from harness.clock import parse_rfc3339, rfc3339
from harness.kube.names.capi import VOLUME_WAIT_MESSAGE
from harness.kube.names.storage import CSI_UNIQUE_NAME

# waitForVolumeDetachRetryInterval.
VOLUME_DETACH_RETRY_INTERVAL = 20.0

PVC_KIND = "PersistentVolumeClaim"

LINE_PVCS = "* PersistentVolumeClaims: {items}"
LINE_PVS_WITHOUT_CLAIM = "* PersistentVolumes without a .spec.claimRef to a PersistentVolumeClaim: {items}"
LINE_NODE_NAMES = "* Node with .status.volumesAttached entries not matching a PersistentVolume: {items}"
LINE_VA_NAMES = "* VolumeAttachment with .spec.source.persistentVolumeName not matching a PersistentVolume: {items}"
LIST_LIMIT = 5

VA_WITHOUT_PV_ERROR = "spec.source.persistentVolumeName for VolumeAttachment {name} is not set"
LIST_VA_ERROR = "failed to list VolumeAttachments"
LIST_PV_ERROR = "failed to list PersistentVolumes"
PVC_IGNORE_ERROR = "failed to find PersistentVolumeClaims from Pods ignored during drain"

LOG_NODE_GONE = "Could not find Node from Machine.status.nodeRef, skip waiting for volume detachment."
LOG_UNREACHABLE = "Node is unreachable, skip waiting for volume detachment."
LOG_WAITING = "Waiting for Node volumes to be detached"


def string_list_text(items: list[str]) -> str:
    """``clog.StringListToString``: the first 5 entries, then ``... (N more)``."""
    shown = list(items[:LIST_LIMIT])
    if len(items) > LIST_LIMIT:
        shown.append(f"... ({len(items) - LIST_LIMIT} more)")
    return ", ".join(shown)


@dataclass
class AttachedVolumes:
    """What still blocks (``attachedVolumeInformation``); every list sorted."""

    claims: list[str] = field(default_factory=list)
    volumes_without_claim: list[str] = field(default_factory=list)
    node_names_without_volume: list[str] = field(default_factory=list)
    attachment_names_without_volume: list[str] = field(default_factory=list)

    def empty(self) -> bool:
        """Nothing blocks."""
        return not (self.claims or self.volumes_without_claim or self.node_names_without_volume
                    or self.attachment_names_without_volume)

    def condition_message(self, start: str) -> str:
        """The Deleting message: a header without a trailing colon, then one line per kind of blocker."""
        if self.empty():
            return ""
        lines = [VOLUME_WAIT_MESSAGE.format(start=rfc3339(parse_rfc3339(start)) if start else "")]
        for template, items in ((LINE_PVCS, self.claims), (LINE_PVS_WITHOUT_CLAIM, self.volumes_without_claim),
                                (LINE_NODE_NAMES, self.node_names_without_volume),
                                (LINE_VA_NAMES, self.attachment_names_without_volume)):
            if items:
                lines.append(template.format(items=string_list_text(items)))
        return "\n".join(lines)

    def log_values(self) -> dict[str, str]:
        """The key/value pairs of the waiting log line."""
        out = {}
        for name, items in (("PersistentVolumeClaims", self.claims),
                            ("PersistentVolumesWithoutPVCClaimRef", self.volumes_without_claim),
                            ("NodeStatusVolumeNamesWithoutPV", self.node_names_without_volume),
                            ("PersistentVolumeNamesWithoutPV", self.attachment_names_without_volume)):
            if items:
                out[name] = string_list_text(items)
        return out


@dataclass
class VolumeWait:
    """The outcome of one check: done, or still waiting (with the Deleting message)."""

    done: bool
    message: str = ""


def _text(err: BaseException) -> str:
    return err.message if isinstance(err, ApiError) else str(err)


def _attached_pv_names(remote: Client, node_name: str) -> set[str]:
    names: set[str] = set()
    try:
        attachments = remote.list("storage.k8s.io/v1", "VolumeAttachment")["items"]
    except (ApiError, ConnectionError) as err:
        raise ReconcileError(f"{LIST_VA_ERROR}: {LIST_VA_ERROR}: {_text(err)}") from err
    for attachment in attachments:
        if not (attachment.get("status") or {}).get("attached"):
            continue
        spec = attachment.get("spec") or {}
        if spec.get("nodeName") != node_name:
            continue
        pv_name = (spec.get("source") or {}).get("persistentVolumeName")
        if not pv_name:
            raise ReconcileError(VA_WITHOUT_PV_ERROR.format(name=meta(attachment).get("name", "")))
        names.add(str(pv_name))
    return names


def _claims_to_ignore(
    management: Client, remote: Client, cluster: dict[str, Any], machine: dict[str, Any], node_name: str, now: float
) -> set[str]:
    drainer = Drainer(management, remote, now=now)
    try:
        pods = drainer.pods_for_eviction(cluster, machine, node_name).skipped_pods()
    except ReconcileError as err:
        raise ReconcileError(f"{PVC_IGNORE_ERROR}: {err}") from err
    out = set()
    for pod in pods:
        for volume in (pod.get("spec") or {}).get("volumes") or []:
            claim = volume.get("persistentVolumeClaim")
            if claim:
                out.add(f"{meta(pod).get('namespace', '')}/{claim.get('claimName', '')}")
    return out


def _waiting_for(
    remote: Client, node_names: set[str], pv_names: set[str], ignored_claims: set[str]
) -> AttachedVolumes:
    claims: set[str] = set()
    without_claim: list[str] = []
    found_node_names: set[str] = set()
    found_pv_names: set[str] = set()
    try:
        volumes = remote.list("v1", "PersistentVolume")["items"]
    except (ApiError, ConnectionError) as err:
        raise ReconcileError(f"{LIST_PV_ERROR}: {_text(err)}") from err
    for volume in volumes:
        spec = volume.get("spec") or {}
        name = str(meta(volume).get("name", ""))
        found = False
        csi = spec.get("csi")
        if csi:
            unique = CSI_UNIQUE_NAME.format(driver=csi.get("driver", ""), handle=csi.get("volumeHandle", ""))
            if unique in node_names:
                found_node_names.add(unique)
                found = True
        if name in pv_names:
            found_pv_names.add(name)
            found = True
        if not found:
            continue
        claim_ref = spec.get("claimRef")
        if not claim_ref or claim_ref.get("kind") != PVC_KIND:
            without_claim.append(name)
            continue
        claims.add(f"{claim_ref.get('namespace', '')}/{claim_ref.get('name', '')}")
    return AttachedVolumes(
        claims=sorted(claims - ignored_claims),
        volumes_without_claim=sorted(without_claim),
        node_names_without_volume=sorted(node_names - found_node_names),
        attachment_names_without_volume=sorted(pv_names - found_pv_names),
    )


def wait_for_node_volumes(
    management: Client,
    remote: Client,
    cluster: dict[str, Any],
    machine: dict[str, Any],
    node_name: str,
    start: str,
    now: float,
) -> VolumeWait:
    """One check of the volumes still attached to the Node. Raises :class:`ReconcileError` when it
    cannot tell (a VolumeAttachment without a PV name, invalid MachineDrainRules, a failing list)."""
    log_values = {"Machine": key(machine), "Node": node_name}
    try:
        node = remote.get("v1", "Node", node_name, **shared_reads(remote))  # read only
    except ApiError as err:
        if err.code == 404:
            logs.info(LOG_NODE_GONE, **log_values)
            return VolumeWait(True)
        raise ReconcileError(err.message) from err
    except ConnectionError as err:
        raise ReconcileError(str(err)) from err
    if is_node_unreachable(node):
        logs.info(LOG_UNREACHABLE, **log_values)
        return VolumeWait(True)
    node_names = {str(v.get("name", "")) for v in (node.get("status") or {}).get("volumesAttached") or []}
    pv_names = _attached_pv_names(remote, node_name)
    if not node_names and not pv_names:
        return VolumeWait(True)
    ignored = _claims_to_ignore(management, remote, cluster, machine, node_name, now)
    attached = _waiting_for(remote, node_names, pv_names, ignored)
    if attached.empty():
        return VolumeWait(True)
    logs.info(LOG_WAITING, **log_values, **attached.log_values())
    return VolumeWait(False, attached.condition_message(start))
