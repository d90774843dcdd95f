"""The Cluster's conditions (Cluster API v1.10 ``api/v1beta1``), and the condition arithmetic the Cluster,
MachineSet and MachineDeployment controllers share: ``conditions.SetSummary``, ``conditions.SetMirror``
and the v1beta2 ``Paused`` condition (``util/paused``).

Writing single conditions (transition times, sort order) is :mod:`controllers.machine.conditions`'.
"""

from __future__ import annotations

from typing import Any

from controllers.machine import conditions as cond
from controllers.machine.api import PAUSED_ANNOTATION, annotations, is_deleting
from harness.kube.names.capi import (
    CONTROL_PLANE_NOT_INITIALIZED_MESSAGE,
    CONTROL_PLANE_READY,
    DELETED_MESSAGE,
    DELETED_WHILE_CLUSTER_EXISTS_MESSAGE,
    DELETING,
    DOES_NOT_EXIST_MESSAGE,
    INFRASTRUCTURE_NOT_READY_MESSAGE,
    INITIALIZED_REASON,
    MISSING_NODE_REF_MESSAGE,
    MISSING_NODE_REF_REASON,
    NO_CONTROL_PLANE_NODE_MESSAGE,
    NOT_INITIALIZED_REASON,
    NOT_PAUSED_REASON,
    NOT_READY_REASON,
    OBJECT_DELETED_REASON,
    OBJECT_DOES_NOT_EXIST_REASON,
    PAUSED,
    PAUSED_BY_ANNOTATION_MESSAGE,
    PAUSED_BY_SPEC_MESSAGE,
    PAUSED_REASON,
    READY_REASON,
    WAITING_FOR_BEFORE_DELETE_HOOK_REASON,
    WAITING_FOR_CONTROL_PLANE_DELETION_REASON,
    WAITING_FOR_CONTROL_PLANE_PROVIDER_INITIALIZED_MESSAGE,
    WAITING_FOR_CONTROL_PLANE_PROVIDER_INITIALIZED_REASON,
    WAITING_FOR_CONTROL_PLANE_REASON,
    WAITING_FOR_TOPOLOGY_MESSAGE,
    WAITING_FOR_WORKERS_DELETION_REASON,
)
from harness.kube.names.core import CONDITION_FALSE, CONDITION_TRUE, CONDITION_UNKNOWN

# Re-exported for the controllers' imports.
__all__ = [
    "CONTROL_PLANE_NOT_INITIALIZED_MESSAGE",
    "CONTROL_PLANE_READY",
    "DELETED_MESSAGE",
    "DELETED_WHILE_CLUSTER_EXISTS_MESSAGE",
    "DOES_NOT_EXIST_MESSAGE",
    "INFRASTRUCTURE_NOT_READY_MESSAGE",
    "INITIALIZED_REASON",
    "MISSING_NODE_REF_MESSAGE",
    "MISSING_NODE_REF_REASON",
    "NOT_INITIALIZED_REASON",
    "NOT_PAUSED_REASON",
    "NOT_READY_REASON",
    "NO_CONTROL_PLANE_NODE_MESSAGE",
    "OBJECT_DELETED_REASON",
    "OBJECT_DOES_NOT_EXIST_REASON",
    "PAUSED_BY_ANNOTATION_MESSAGE",
    "READY_REASON",
    "WAITING_FOR_BEFORE_DELETE_HOOK_REASON",
    "WAITING_FOR_CONTROL_PLANE_DELETION_REASON",
    "WAITING_FOR_CONTROL_PLANE_PROVIDER_INITIALIZED_MESSAGE",
    "WAITING_FOR_CONTROL_PLANE_PROVIDER_INITIALIZED_REASON",
    "WAITING_FOR_CONTROL_PLANE_REASON",
    "WAITING_FOR_TOPOLOGY_MESSAGE",
    "WAITING_FOR_WORKERS_DELETION_REASON",
]

# Merge priority of a group of conditions (util/conditions/merge.go): the lower, the more it matters.
_PRIORITY = {(CONDITION_FALSE, cond.SEVERITY_ERROR): 0, (CONDITION_FALSE, cond.SEVERITY_WARNING): 1,
             (CONDITION_FALSE, cond.SEVERITY_INFO): 2, (CONDITION_TRUE, ""): 3, (CONDITION_UNKNOWN, ""): 4}


def summarize(obj: dict[str, Any], condition_types: tuple[str, ...], now: float) -> None:
    """``conditions.SetSummary(obj, WithConditions(...))``: ``Ready`` from the listed conditions. The
    group that matters most wins (False/Error, False/Warning, False/Info, True, Unknown); its first
    condition in the listed order gives reason, severity and message. Nothing listed exists: no change."""
    present = [c for t in condition_types if (c := cond.get(obj, t)) is not None]
    if not present:
        return

    def priority(c: dict[str, Any]) -> int:
        return _PRIORITY.get((str(c.get("status")), str(c.get("severity", ""))), 99)

    top = min(priority(c) for c in present)
    first = next(c for c in present if priority(c) == top)
    status = str(first.get("status"))
    if status == CONDITION_TRUE:
        cond.mark_true(obj, cond.READY, now)
    elif status == CONDITION_FALSE:
        cond.mark_false(obj, cond.READY, str(first.get("reason", "")), str(first.get("severity", "")),
                        str(first.get("message", "")), now)
    else:
        cond.mark_unknown(obj, cond.READY, str(first.get("reason", "")), str(first.get("message", "")), now)


def mirror(obj: dict[str, Any], condition_type: str, source: dict[str, Any], now: float, *,
           fallback_ready: bool, fallback_reason: str) -> None:
    """``conditions.SetMirror``: the source's v1beta1 ``Ready`` condition under ``condition_type``, or,
    when the source has none, True (``fallback_ready``) or False with ``fallback_reason``/Info."""
    mirrored = cond.get(source, cond.READY)
    if mirrored is not None:
        cond.set_v1beta1(obj, condition_type, str(mirrored.get("status", "")), now,
                         reason=str(mirrored.get("reason", "")), severity=str(mirrored.get("severity", "")),
                         message=str(mirrored.get("message", "")))
    elif fallback_ready:
        cond.mark_true(obj, condition_type, now)
    else:
        cond.mark_false(obj, condition_type, fallback_reason, cond.SEVERITY_INFO, "", now)


def paused_state(cluster: dict[str, Any] | None, obj: dict[str, Any]) -> tuple[bool, str]:
    """``pausedCondition``: whether ``obj`` is paused (its Cluster's ``spec.paused`` or its own
    ``cluster.x-k8s.io/paused`` annotation) and the message saying why."""
    messages = []
    if cluster is not None and (cluster.get("spec") or {}).get("paused"):
        messages.append(PAUSED_BY_SPEC_MESSAGE)
    if PAUSED_ANNOTATION in annotations(obj):
        messages.append(PAUSED_BY_ANNOTATION_MESSAGE.format(kind=obj.get("kind", "Object")))
    return bool(messages), ", ".join(messages)


def set_paused(cluster: dict[str, Any] | None, obj: dict[str, Any], now: float) -> bool:
    """Write the v1beta2 ``Paused`` condition of ``obj`` in place; whether ``obj`` is paused."""
    paused, message = paused_state(cluster, obj)
    if paused:
        cond.set_v1beta2(obj, PAUSED, CONDITION_TRUE, PAUSED_REASON, message, now)
    else:
        cond.set_v1beta2(obj, PAUSED, CONDITION_FALSE, NOT_PAUSED_REASON, "", now)
    return paused


def set_deleting(obj: dict[str, Any], reason: str, message: str, now: float) -> None:
    """The v1beta2 ``Deleting`` condition: False/``NotDeleting`` unless the object is being deleted."""
    if not is_deleting(obj):
        cond.set_v1beta2(obj, DELETING, CONDITION_FALSE, cond.NOT_DELETING_REASON, "", now)
    else:
        cond.set_v1beta2(obj, DELETING, CONDITION_TRUE, reason, message, now)
