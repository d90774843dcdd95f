"""The deletion of a Cluster (``reconcileDelete`` of Cluster API v1.10), run from the top on every
reconcile of a deleting Cluster:

1. a Cluster with a managed topology (``spec.topology``) waits, deleting nothing and keeping its
   finalizer, until it carries ``runtime.cluster.x-k8s.io/ok-to-delete`` (set by the topology
   controller once the BeforeClusterDelete hook passed); Deleting reason ``WaitingForBeforeDeleteHook``,
   message ``Waiting for BeforeClusterDelete hook``. A Cluster without a topology skips this gate;
2. the descendants the Cluster owns directly are deleted: MachineDeployments, MachineSets and worker
   Machines with an owner reference to the Cluster, and, when the Cluster has no control plane object,
   its control plane Machines too (after the others);
3. while any MachineDeployment, MachineSet or worker Machine (or, without a control plane object, any
   control plane Machine) labelled with the Cluster's name exists, the Cluster looks again every 5 s;
   Deleting reason ``WaitingForWorkersDeletion`` with the list of what is left;
4. the control plane object is deleted and waited for (``WaitingForControlPlaneDeletion``);
5. the infrastructure cluster is deleted and waited for (``WaitingForInfrastructureDeletion``);
6. the ``cluster.cluster.x-k8s.io`` finalizer is removed (``DeletionCompleted``) and a Normal event
   ``Deleted`` says ``Cluster <name> has been deleted``.
"""

from __future__ import annotations

from typing import Any

from controllers.cluster import conditions as ccond
from controllers.cluster.api import (
    CLUSTER_FINALIZER,
    DELETE_REQUEUE_AFTER,
    has_topology,
    is_owned_by,
    list_to_string,
)
from controllers.cluster.phases import Descendants, Scope
from controllers.machine import conditions as cond
from controllers.machine.api import annotations, is_deleting, meta
from controllers.machine.errors import ReconcileError, aggregate, go_quote
from harness.client import NORMAL, ApiError
from harness.kube.names.capi import (
    DELETED_REASON,
    DELETION_COMPLETED_MESSAGE,
    INTERNAL_ERROR_MESSAGE,
    INTERNAL_ERROR_REASON,
    WAITING_FOR_BEFORE_DELETE_HOOK_MESSAGE,
    WAITING_FOR_DELETION_MESSAGE,
    WAITING_FOR_INFRASTRUCTURE_DELETION_REASON,
)
from harness.kube.names.runtime_sdk import OK_TO_DELETE_ANNOTATION

DELETED_EVENT = "Deleted"
DELETED_EVENT_MESSAGE = "Cluster {name} has been deleted"
DELETE_CHILD_ERROR = "error deleting cluster {namespace}/{name}: failed to delete {gvk} {child}"
DELETE_REFERENCED_ERROR = "failed to delete {kind} {name} for Cluster {cluster} in namespace {namespace}"


def owned_descendants(d: Descendants, cluster: dict[str, Any]) -> list[dict[str, Any]]:
    """``filterOwnedDescendants``: what the Cluster deletes itself, in order -- MachineDeployments,
    MachineSets, worker Machines and (without a control plane object) control plane Machines, each kind
    by name, keeping only objects with an owner reference to the Cluster."""
    lists = [d.machine_deployments, d.machine_sets, sorted(d.worker_machines, key=lambda m: meta(m)["name"])]
    if not (cluster.get("spec") or {}).get("controlPlaneRef"):
        lists.append(sorted(d.control_plane_machines, key=lambda m: meta(m)["name"]))
    return [obj for items in lists for obj in items if is_owned_by(obj, cluster)]


def pending_names(d: Descendants, cluster: dict[str, Any]) -> list[str]:
    """``objectsPendingDeleteNames``: one line per kind still there (control plane Machines only without
    a control plane object), names sorted, at most five per line."""
    groups: list[tuple[str, list[dict[str, Any]]]] = []
    if not (cluster.get("spec") or {}).get("controlPlaneRef"):
        groups.append(("Control plane Machines", d.control_plane_machines))
    groups += [("MachineDeployments", d.machine_deployments), ("MachineSets", d.machine_sets),
               ("Worker Machines", d.worker_machines)]
    return [f"{title}: {list_to_string(sorted(meta(o)['name'] for o in items))}" for title, items in groups if items]


def _gvk(obj: dict[str, Any]) -> str:
    return f"{obj.get('apiVersion', '')}, Kind={obj.get('kind', '')}"


def _delete_referenced(s: Scope, obj: dict[str, Any]) -> None:
    if is_deleting(obj):
        return
    try:
        s.client.delete(obj["apiVersion"], obj["kind"], meta(obj)["name"], meta(obj).get("namespace"))
    except ApiError as err:
        if err.code == 404:
            return
        s.deleting_reason = INTERNAL_ERROR_REASON
        s.deleting_message = INTERNAL_ERROR_MESSAGE
        raise ReconcileError(DELETE_REFERENCED_ERROR.format(
            kind=obj["kind"], name=go_quote(meta(obj)["name"]), cluster=go_quote(s.name),
            namespace=go_quote(s.namespace)) + f": {err.message}") from err


def reconcile_delete(s: Scope) -> float | None:
    """Run the deletion once; the seconds after which to look again (None: the watches bring it back)."""
    cluster = s.cluster
    if has_topology(cluster) and OK_TO_DELETE_ANNOTATION not in annotations(cluster):
        s.deleting_reason = ccond.WAITING_FOR_BEFORE_DELETE_HOOK_REASON
        s.deleting_message = WAITING_FOR_BEFORE_DELETE_HOOK_MESSAGE
        return None
    if not s.descendants_found:
        s.deleting_reason = INTERNAL_ERROR_REASON
        s.deleting_message = INTERNAL_ERROR_MESSAGE
        return None

    children = owned_descendants(s.descendants, cluster)
    errors = []
    for child in children:
        if is_deleting(child):
            continue
        try:
            s.client.delete(child["apiVersion"], child["kind"], meta(child)["name"], meta(child).get("namespace"))
        except ApiError as err:
            if err.code == 404:
                continue
            errors.append(DELETE_CHILD_ERROR.format(namespace=s.namespace, name=s.name, gvk=_gvk(child),
                                                    child=meta(child)["name"]) + f": {err.message}")
    if errors:
        s.deleting_reason = INTERNAL_ERROR_REASON
        s.deleting_message = INTERNAL_ERROR_MESSAGE
        raise ReconcileError(aggregate(errors))

    names = pending_names(s.descendants, cluster)
    if names:
        s.deleting_reason = ccond.WAITING_FOR_WORKERS_DELETION_REASON
        s.deleting_message = "\n".join(f"* {line}" for line in names)
        return DELETE_REQUEUE_AFTER

    spec = cluster.get("spec") or {}
    for ref, obj, not_found, ready_condition, reason in (
        (spec.get("controlPlaneRef"), s.control_plane, s.control_plane_not_found, ccond.CONTROL_PLANE_READY,
         ccond.WAITING_FOR_CONTROL_PLANE_DELETION_REASON),
        (spec.get("infrastructureRef"), s.infra_cluster, s.infra_cluster_not_found, cond.INFRASTRUCTURE_READY,
         WAITING_FOR_INFRASTRUCTURE_DELETION_REASON),
    ):
        if not ref:
            continue
        if obj is None:
            if not not_found:
                # A failure other than NotFound reading it: reported by its phase; do not go on.
                s.deleting_reason = INTERNAL_ERROR_REASON
                s.deleting_message = INTERNAL_ERROR_MESSAGE
                return None
            cond.mark_false(cluster, ready_condition, DELETED_REASON, cond.SEVERITY_INFO, "", s.now)
            continue
        _delete_referenced(s, obj)
        s.deleting_reason = reason
        s.deleting_message = WAITING_FOR_DELETION_MESSAGE.format(kind=ref.get("kind", ""))
        return None

    s.deleting_reason = cond.DELETION_COMPLETED_REASON
    s.deleting_message = DELETION_COMPLETED_MESSAGE
    meta(cluster)["finalizers"] = [f for f in meta(cluster).get("finalizers") or [] if f != CLUSTER_FINALIZER]
    s.event(NORMAL, DELETED_EVENT, DELETED_EVENT_MESSAGE.format(name=s.name))
    return None
