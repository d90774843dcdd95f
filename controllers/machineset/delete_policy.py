"""Which Machines a MachineSet deletes when it scales down (``machineset_delete_policy.go`` of Cluster API
v1.10).

Every policy ranks Machines already being deleted first, then Machines annotated
``cluster.x-k8s.io/delete-machine``, then unhealthy Machines (no Node, a failure, ``NodeHealthy`` or
``HealthCheckSucceeded`` False); among the rest ``Random`` ranks all alike, ``Oldest`` prefers the
oldest and ``Newest`` the newest. Equal ranks go by name, so the choice is the same every time.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from controllers.machine import conditions as cond
from controllers.machine.api import annotations, is_deleting, meta
from controllers.machine.errors import ReconcileError
from controllers.machineset.api import DELETE_POLICY_NEWEST, DELETE_POLICY_OLDEST, DELETE_POLICY_RANDOM
from harness.clock import parse_rfc3339
from harness.kube.names.capi import DELETE_MACHINE_ANNOTATION, NODE_HEALTHY
from harness.kube.names.core import CONDITION_FALSE

MUST_DELETE = 100.0
SHOULD_DELETE = 75.0
BETTER_DELETE = 50.0
COULD_DELETE = 20.0
MUST_NOT_DELETE = 0.0
SECONDS_PER_TEN_DAYS = 864000.0

HEALTH_CHECK_SUCCEEDED = "HealthCheckSucceeded"
UNSUPPORTED_POLICY = "Unsupported delete policy {policy}. Must be one of 'Random', 'Newest', or 'Oldest'"

Priority = Callable[[dict[str, Any], float], float]


def is_machine_healthy(machine: dict[str, Any]) -> bool:
    """``isMachineHealthy``: a Node, no failure, and neither NodeHealthy nor HealthCheckSucceeded False."""
    status = machine.get("status") or {}
    if not status.get("nodeRef") or status.get("failureReason") or status.get("failureMessage"):
        return False
    return not any((cond.get(machine, t) or {}).get("status") == CONDITION_FALSE
                   for t in (NODE_HEALTHY, HEALTH_CHECK_SUCCEEDED))


def _forced(machine: dict[str, Any]) -> float | None:
    if is_deleting(machine):
        return MUST_DELETE
    if DELETE_MACHINE_ANNOTATION in annotations(machine):
        return SHOULD_DELETE
    if not is_machine_healthy(machine):
        return BETTER_DELETE
    return None


def oldest_priority(machine: dict[str, Any], now: float) -> float:
    """``oldestDeletePriority``: the age mapped onto 0-50, older higher."""
    forced = _forced(machine)
    if forced is not None:
        return forced
    created = meta(machine).get("creationTimestamp")
    if not created:
        return MUST_NOT_DELETE
    age = now - parse_rfc3339(str(created))
    if age < 0:
        return MUST_NOT_DELETE
    return BETTER_DELETE * (1.0 - math.exp(-age / SECONDS_PER_TEN_DAYS))


def newest_priority(machine: dict[str, Any], now: float) -> float:
    """``newestDeletePriority``: 50 minus the oldest priority, newer higher."""
    forced = _forced(machine)
    if forced is not None:
        return forced
    return BETTER_DELETE - oldest_priority(machine, now)


def random_priority(machine: dict[str, Any], _now: float) -> float:
    """``randomDeletePolicy``: every healthy Machine alike."""
    forced = _forced(machine)
    return COULD_DELETE if forced is None else forced


def priority_for(policy: str) -> Priority:
    """``getDeletePriorityFunc``: the ranking of ``spec.deletePolicy`` ("" is Random)."""
    table: dict[str, Priority] = {DELETE_POLICY_RANDOM: random_priority, "": random_priority,
                                  DELETE_POLICY_NEWEST: newest_priority, DELETE_POLICY_OLDEST: oldest_priority}
    if policy not in table:
        raise ReconcileError(UNSUPPORTED_POLICY.format(policy=policy))
    return table[policy]


def machines_to_delete(machines: list[dict[str, Any]], count: int, priority: Priority,
                       now: float) -> list[dict[str, Any]]:
    """``getMachinesToDeletePrioritized``: the ``count`` Machines ranked highest (all when ``count``
    covers them, none when it is not positive)."""
    if count >= len(machines):
        return list(machines)
    if count <= 0:
        return []
    ranked = sorted(machines, key=lambda m: (-priority(m, now), str(meta(m).get("name", ""))))
    return ranked[:count]
