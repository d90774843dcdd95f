"""The Machine's conditions: v1beta1 ``status.conditions`` and v1beta2 ``status.v1beta2.conditions``.

Types, reasons and severities are Cluster API v1.10's (``api/v1beta1/condition_consts.go`` and
``machine_types.go``). v1beta1 conditions follow ``util/conditions``: the transition time changes
whenever status, reason, severity or message change, and the list is sorted with ``Ready`` first, then
by type. v1beta2 conditions follow ``meta.SetStatusCondition``: the transition time changes only with
the status; ``observedGeneration`` is the Machine's generation; ``Deleting`` and ``Paused`` sort last.
"""

from __future__ import annotations

from typing import Any

from harness.clock import rfc3339
from harness.kube.conditions import condition_of, set_status_condition
from harness.kube.names.capi import WAITING_FOR_VOLUME_DETACH_REASON
from harness.kube.names.core import CONDITION_FALSE, CONDITION_TRUE, CONDITION_UNKNOWN

# Severities.
SEVERITY_ERROR = "Error"
SEVERITY_WARNING = "Warning"
SEVERITY_INFO = "Info"

# v1beta1 condition types.
READY = "Ready"
INFRASTRUCTURE_READY = "InfrastructureReady"
BOOTSTRAP_READY = "BootstrapReady"
PRE_DRAIN_DELETE_HOOK_SUCCEEDED = "PreDrainDeleteHookSucceeded"
VOLUME_DETACH_SUCCEEDED = "VolumeDetachSucceeded"

# v1beta1 reasons.
DELETION_FAILED_REASON = "DeletionFailed"
DRAINING_REASON = "Draining"
DRAINING_FAILED_REASON = "DrainingFailed"
WAITING_FOR_DATA_SECRET_REASON = "WaitingForDataSecret"
WAITING_FOR_INFRASTRUCTURE_REASON = "WaitingForInfrastructure"
WAITING_FOR_NODE_REF_REASON = "WaitingForNodeRef"
NODE_PROVISIONING_REASON = "NodeProvisioning"
NODE_NOT_FOUND_REASON = "NodeNotFound"
NODE_CONDITIONS_FAILED_REASON = "NodeConditionsFailed"
NODE_INSPECTION_FAILED_REASON = "NodeInspectionFailed"

# v1beta1 messages.
DRAINING_MESSAGE = "Draining the node before deletion"
WAITING_FOR_VOLUME_DETACH_MESSAGE = "Waiting for node volumes to be detached"
NODE_PROVISIONING_MESSAGE = "Waiting for a node with matching ProviderID to exist"
NODE_INSPECTION_FAILED_MESSAGE = "Failed to get the Node for this Machine by ProviderID"

# v1beta2 Deleting condition and its reasons.
NOT_DELETING_REASON = "NotDeleting"
DELETING_DELETING_REASON = "Deleting"
WAITING_FOR_PRE_DRAIN_HOOK_REASON = "WaitingForPreDrainHook"
WAITING_FOR_VOLUME_DETACH_V1BETA2_REASON = WAITING_FOR_VOLUME_DETACH_REASON
WAITING_FOR_BOOTSTRAP_DELETION_REASON = "WaitingForBootstrapDeletion"
DELETING_NODE_REASON = "DeletingNode"
DELETION_COMPLETED_REASON = "DeletionCompleted"

# Where the v1beta2 sort puts types it knows (upstream's order table, the part a Machine uses).
_V1BETA2_FIRST = ("Available", "Ready", "UpToDate")
_V1BETA2_LAST = ("Deleting", "Paused")


def _status(machine: dict[str, Any]) -> dict[str, Any]:
    status = machine.get("status")
    if not isinstance(status, dict):
        status = machine["status"] = {}
    return status


def get(machine: dict[str, Any], condition_type: str) -> dict[str, Any] | None:
    """The v1beta1 condition of ``condition_type``, or None."""
    return condition_of(machine, condition_type)


def is_true(machine: dict[str, Any], condition_type: str) -> bool:
    """Whether the v1beta1 condition exists with status True."""
    condition = get(machine, condition_type)
    return condition is not None and condition.get("status") == CONDITION_TRUE


def _v1beta1_sort_key(condition: dict[str, Any]) -> tuple[int, str]:
    return (0 if condition.get("type") == READY else 1, str(condition.get("type", "")))


def set_v1beta1(
    machine: dict[str, Any], condition_type: str, status: str, now: float, *, reason: str = "", severity: str = "",
    message: str = "",
) -> None:
    """``conditions.Set``: write the condition in place; its transition time moves only when its state
    (status, reason, severity, message) changes."""
    new: dict[str, Any] = {"type": condition_type, "status": status}
    if severity:
        new["severity"] = severity
    new["lastTransitionTime"] = rfc3339(now)
    if reason:
        new["reason"] = reason
    if message:
        new["message"] = message
    conditions = [dict(c) for c in _status(machine).get("conditions") or []]
    for i, existing in enumerate(conditions):
        if existing.get("type") != condition_type:
            continue
        same = all(existing.get(k, "") == new.get(k, "") for k in ("status", "reason", "severity", "message"))
        if same:
            return
        conditions[i] = new
        break
    else:
        conditions.append(new)
    conditions.sort(key=_v1beta1_sort_key)
    _status(machine)["conditions"] = conditions


def mark_true(machine: dict[str, Any], condition_type: str, now: float) -> None:
    """``conditions.MarkTrue``."""
    set_v1beta1(machine, condition_type, CONDITION_TRUE, now)


def mark_false(
    machine: dict[str, Any], condition_type: str, reason: str, severity: str, message: str, now: float
) -> None:
    """``conditions.MarkFalse``."""
    set_v1beta1(machine, condition_type, CONDITION_FALSE, now, reason=reason, severity=severity, message=message)


def mark_unknown(machine: dict[str, Any], condition_type: str, reason: str, message: str, now: float) -> None:
    """``conditions.MarkUnknown``."""
    set_v1beta1(machine, condition_type, CONDITION_UNKNOWN, now, reason=reason, message=message)


def get_v1beta2(machine: dict[str, Any], condition_type: str) -> dict[str, Any] | None:
    """The v1beta2 condition of ``condition_type``, or None."""
    v1beta2 = (machine.get("status") or {}).get("v1beta2") or {}
    for condition in v1beta2.get("conditions") or []:
        if condition.get("type") == condition_type:
            return dict(condition)
    return None


def _v1beta2_sort_key(condition: dict[str, Any]) -> tuple[int, int, str]:
    kind = str(condition.get("type", ""))
    if kind in _V1BETA2_FIRST:
        return (0, _V1BETA2_FIRST.index(kind), kind)
    if kind in _V1BETA2_LAST:
        return (2, _V1BETA2_LAST.index(kind), kind)
    return (1, 0, kind)


def set_v1beta2(machine: dict[str, Any], condition_type: str, status: str, reason: str, message: str,
                now: float) -> None:
    """``v1beta2conditions.Set``: write the condition in place with the Machine's generation; the
    transition time moves only when the status changes."""
    v1beta2 = _status(machine).get("v1beta2")
    if not isinstance(v1beta2, dict):
        v1beta2 = _status(machine)["v1beta2"] = {}
    generation = (machine.get("metadata") or {}).get("generation")
    new: dict[str, Any] = {"type": condition_type, "status": status, "reason": reason, "message": message}
    if generation:
        new["observedGeneration"] = generation
    conditions = [dict(c) for c in v1beta2.get("conditions") or []]
    set_status_condition(conditions, new, rfc3339(now))
    conditions.sort(key=_v1beta2_sort_key)
    v1beta2["conditions"] = conditions
