"""Workload conditions as upstream's deployment util sets them, and the rollout's condition types,
reasons and message templates.

``set_condition`` follows ``SetDeploymentCondition``: a condition with the same status and reason as the
current one changes nothing; a new status moves ``lastTransitionTime``; the same status with another
reason or message keeps it. ``Progressing`` is special: progress refreshes ``lastUpdateTime`` with the
same reason (``refresh_progressing``), and ``progressDeadlineSeconds`` counts from it.

Upstream types, reasons and messages (``pkg/controller/deployment/util``): ``Progressing`` with
NewReplicaSetCreated, FoundNewReplicaSet, ReplicaSetUpdated, NewReplicaSetAvailable,
ProgressDeadlineExceeded, DeploymentPaused, DeploymentResumed; ``Available`` with
MinimumReplicasAvailable / MinimumReplicasUnavailable; ``ReplicaFailure`` with FailedCreate. Seed 004 /
DESIGN.md: an aborting hook sets ``Progressing=False`` with reason ``LifecycleHookFailed``. The
``LifecycleHooks`` condition type is this project's (seed 004: "The related state will be reported using
Conditions"): True while hooks run or wait for their point, False when the sequence is stuck (a failed
Abort hook, a Job that cannot be created, a point out of reach).
"""

from __future__ import annotations

from typing import Any

from harness.clock import rfc3339
from harness.kube.conditions import find_condition
from harness.kube.names.core import CONDITION_TRUE
from harness.kube.names.rollout_hooks import HOOK_RUNNING_REASON, LIFECYCLE_HOOKS_CONDITION

PROGRESSING = "Progressing"
AVAILABLE = "Available"
LIFECYCLE_HOOKS = LIFECYCLE_HOOKS_CONDITION

# Progressing reasons and messages.
NEW_RS_CREATED = "NewReplicaSetCreated"
NEW_RS_CREATED_MESSAGE = 'Created new replica set "{name}"'
FOUND_NEW_RS = "FoundNewReplicaSet"
FOUND_NEW_RS_MESSAGE = 'Found new replica set "{name}"'
RS_UPDATED = "ReplicaSetUpdated"
RS_PROGRESSING_MESSAGE = 'ReplicaSet "{name}" is progressing.'
DEPLOYMENT_PROGRESSING_MESSAGE = 'Deployment "{name}" is progressing.'
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
NEW_RS_AVAILABLE_MESSAGE = 'ReplicaSet "{name}" has successfully progressed.'
TIMED_OUT = "ProgressDeadlineExceeded"
TIMED_OUT_MESSAGE = 'ReplicaSet "{name}" has timed out progressing.'
DEPLOYMENT_TIMED_OUT_MESSAGE = 'Deployment "{name}" has timed out progressing.'
PAUSED = "DeploymentPaused"
PAUSED_MESSAGE = "Deployment is paused"
RESUMED = "DeploymentResumed"
RESUMED_MESSAGE = "Deployment is resumed"

# Available reasons and messages.
MIN_AVAILABLE = "MinimumReplicasAvailable"
MIN_AVAILABLE_MESSAGE = "Deployment has minimum availability."
MIN_UNAVAILABLE = "MinimumReplicasUnavailable"
MIN_UNAVAILABLE_MESSAGE = "Deployment does not have minimum availability."

# Lifecycle hook reasons and messages (seed 004 / DESIGN.md; this project's wording).
HOOK_FAILED = "LifecycleHookFailed"
HOOK_FAILED_MESSAGE = ('Lifecycle hook "{hook}" failed at progress point {point}: {detail}; '
                       "the rollout of revision {revision} is aborted")
HOOK_RUNNING = HOOK_RUNNING_REASON
HOOK_RUNNING_MESSAGE = ("Running lifecycle hooks at progress point {point} "
                        "({count} of {replicas} new replicas available): {hooks}")
HOOK_WAITING = "WaitingForProgressPoint"
HOOK_WAITING_MESSAGE = ("Next lifecycle hooks at progress point {point} "
                        "({count} of {replicas} new replicas): {hooks}")
HOOKS_COMPLETED = "LifecycleHooksCompleted"
HOOKS_COMPLETED_MESSAGE = "Every lifecycle hook of revision {revision} has finished"
HOOK_JOB_FAILED_CREATE = "LifecycleHookJobFailedCreate"
HOOK_JOB_FAILED_CREATE_MESSAGE = 'Cannot create the Job "{job}" of lifecycle hook "{hook}": {error}'
HOOK_UNREACHABLE = "LifecycleHookUnreachable"
HOOK_UNREACHABLE_MESSAGE = ("Lifecycle hooks at progress point {point} ({count} of {replicas} new replicas) cannot be "
                            "reached: at most {reachable} replicas are updated ({why}): {hooks}")


def find(obj: dict[str, Any], condition_type: str) -> dict[str, Any] | None:
    """The condition of ``condition_type`` in ``obj``'s status, or None."""
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if condition.get("type") == condition_type:
            return condition  # type: ignore[no-any-return]
    return None


def new_condition(condition_type: str, status: str, reason: str, message: str, now: float) -> dict[str, Any]:
    """A deployment-style condition stamped ``now`` (both lastUpdateTime and lastTransitionTime)."""
    stamp = rfc3339(now)
    return {"type": condition_type, "status": status, "lastUpdateTime": stamp, "lastTransitionTime": stamp,
            "reason": reason, "message": message}


def set_condition(conditions: list[dict[str, Any]], condition: dict[str, Any]) -> None:
    """``SetDeploymentCondition``, in place: nothing changes when status and reason are the current
    ones; the same status keeps its lastTransitionTime; the condition goes last."""
    current = find_condition(conditions, condition["type"])
    if current is not None and current.get("status") == condition["status"] \
            and current.get("reason") == condition["reason"]:
        return
    if current is not None and current.get("status") == condition["status"]:
        condition = {**condition, "lastTransitionTime": current.get("lastTransitionTime")}
    conditions[:] = [c for c in conditions if c.get("type") != condition["type"]] + [condition]


def refresh_progressing(conditions: list[dict[str, Any]], condition: dict[str, Any]) -> None:
    """Record progress: replace Progressing with ``condition`` (a fresh lastUpdateTime), keeping the
    lastTransitionTime of a current True condition."""
    current = find_condition(conditions, condition["type"])
    if current is not None and current.get("status") == CONDITION_TRUE and condition["status"] == CONDITION_TRUE:
        condition = {**condition, "lastTransitionTime": current.get("lastTransitionTime")}
    conditions[:] = [c for c in conditions if c.get("type") != condition["type"]] + [condition]


def remove(conditions: list[dict[str, Any]], condition_type: str) -> None:
    """Drop the condition of ``condition_type``, in place."""
    conditions[:] = [c for c in conditions if c.get("type") != condition_type]


def set_hook_condition(conditions: list[dict[str, Any]], status: str, reason: str, message: str, now: float) -> None:
    """Set the LifecycleHooks condition: a new message counts as a change (the detail is the point)."""
    current = find_condition(conditions, LIFECYCLE_HOOKS)
    if current is not None and (current.get("status"), current.get("reason"), current.get("message")) == (
            status, reason, message):
        return
    condition = new_condition(LIFECYCLE_HOOKS, status, reason, message, now)
    if current is not None and current.get("status") == status:
        condition["lastTransitionTime"] = current.get("lastTransitionTime")
    conditions[:] = [c for c in conditions if c.get("type") != LIFECYCLE_HOOKS] + [condition]
