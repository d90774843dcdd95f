"""The Machine's Node: found by ``spec.providerID`` in the workload cluster, referenced from
``status.nodeRef``, annotated with the Machine it belongs to, and summarised in ``NodeHealthy``."""

from __future__ import annotations

from typing import Any

from controllers.machine.api import (
    NODE_CLUSTER_NAMESPACE_ANNOTATION,
    NODE_MACHINE_ANNOTATION,
    NODE_OWNER_KIND_ANNOTATION,
    NODE_OWNER_NAME_ANNOTATION,
    annotations,
    meta,
)
from controllers.machine.errors import ReconcileError
from harness.client import ApiError, Client
from harness.client.interface import shared_reads
from harness.kube.names.capi import CLUSTER_NAME_ANNOTATION
from harness.kube.names.core import NODE_READY
from harness.kube.ownerrefs import controller_of

MORE_THAN_ONE_NODE_ERROR = "unexpectedly found more than one Node matching the providerID {provider_id}"
NODE_CONDITION_MESSAGE = "Node condition {type} is {status}"
PRESSURE_CONDITIONS = ("MemoryPressure", "DiskPressure", "PIDPressure")


def node_by_provider_id(remote: Client, provider_id: str, hint: str = "") -> dict[str, Any] | None:
    """The Node whose ``spec.providerID`` is ``provider_id`` (None when there is none), a view where the client
    offers one (shared_reads): read it, never change it. Two such Nodes are an error. ``hint`` names the Node
    expected to carry it (from a watch cache): it is read first, and only when it does not carry the providerID
    are all Nodes listed."""
    if hint:
        try:
            node = remote.get("v1", "Node", hint, **shared_reads(remote))
        except ApiError as err:
            if err.code != 404:
                raise
        else:
            if (node.get("spec") or {}).get("providerID") == provider_id:
                return node
    found = [n for n in remote.list("v1", "Node", **shared_reads(remote))["items"]
             if (n.get("spec") or {}).get("providerID") == provider_id]
    if len(found) > 1:
        raise ReconcileError(MORE_THAN_ONE_NODE_ERROR.format(provider_id=provider_id))
    return found[0] if found else None


def node_reference(node: dict[str, Any]) -> dict[str, Any]:
    """The ``corev1.ObjectReference`` to a Node, as ``status.nodeRef`` holds it."""
    return {"apiVersion": "v1", "kind": "Node", "name": meta(node)["name"], "uid": meta(node).get("uid", "")}


def managed_annotations(machine: dict[str, Any]) -> dict[str, str]:
    """``GetManagedAnnotations`` (the bookkeeping part): the Cluster, namespace, Machine and its owner."""
    out = {
        CLUSTER_NAME_ANNOTATION: str((machine.get("spec") or {}).get("clusterName", "")),
        NODE_CLUSTER_NAMESPACE_ANNOTATION: str(meta(machine).get("namespace", "")),
        NODE_MACHINE_ANNOTATION: str(meta(machine).get("name", "")),
    }
    owner = controller_of(machine)
    if owner is not None:
        out[NODE_OWNER_KIND_ANNOTATION] = str(owner.get("kind", ""))
        out[NODE_OWNER_NAME_ANNOTATION] = str(owner.get("name", ""))
    return out


def missing_annotations(node: dict[str, Any], wanted: dict[str, str]) -> dict[str, str]:
    """The entries of ``wanted`` the Node lacks or has with another value."""
    current = annotations(node)
    return {k: v for k, v in wanted.items() if current.get(k) != v}


def summarize_node_conditions(node: dict[str, Any]) -> tuple[str, str]:
    """``summarizeNodeConditions``: ("False"|"Unknown"|"True", message naming the bad conditions)."""
    false_count = 0
    unknown_count = 0
    parts = []
    for condition in (node.get("status") or {}).get("conditions") or []:
        kind, status = condition.get("type"), condition.get("status")
        healthy = "False" if kind in PRESSURE_CONDITIONS else "True" if kind == NODE_READY else None
        if healthy is None or status == healthy:
            continue
        parts.append(NODE_CONDITION_MESSAGE.format(type=kind, status=status))
        if status == "Unknown":
            unknown_count += 1
        else:
            false_count += 1
    message = ". ".join(parts)
    if false_count:
        return "False", message
    if false_count + unknown_count < 4:
        return "True", message
    return "Unknown", message
