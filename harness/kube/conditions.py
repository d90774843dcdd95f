"""Conditions on Kubernetes objects (``metav1.Condition`` lists and ``status.conditions``).

:func:`set_status_condition` is ``apimeta.SetStatusCondition``: the one setter for conditions with
those semantics (the PodDisruptionBudget, CRD and Cluster API v1beta2 conditions). Kinds whose
upstream helper differs keep their own setter beside their controller (``SetDeploymentCondition``,
Cluster API's v1beta1 ``conditions.Set``), so each mirrors its upstream.
"""

from __future__ import annotations

from typing import Any


def set_status_condition(conditions: list[dict[str, Any]], new: dict[str, Any], now: str) -> bool:
    """``apimeta.SetStatusCondition`` on a list of ``metav1.Condition`` dicts, in place.

    A new type is appended (``lastTransitionTime`` = ``now`` unless given); an existing one takes
    the new status (moving ``lastTransitionTime`` only when the status changes), reason, message
    and observedGeneration. Returns whether anything changed."""
    for existing in conditions:
        if existing.get("type") != new["type"]:
            continue
        changed = False
        if existing.get("status") != new["status"]:
            existing["status"] = new["status"]
            existing["lastTransitionTime"] = new.get("lastTransitionTime") or now
            changed = True
        for key in ("reason", "message"):
            if existing.get(key, "") != new.get(key, ""):
                existing[key] = new.get(key, "")
                changed = True
        old_generation = existing.get("observedGeneration", 0) or 0
        new_generation = new.get("observedGeneration", 0) or 0
        if old_generation != new_generation:
            if new_generation:
                existing["observedGeneration"] = new_generation
            else:
                existing.pop("observedGeneration", None)
            changed = True
        return changed
    # metav1.Condition's JSON field order; observedGeneration is omitempty, message is not.
    condition: dict[str, Any] = {"type": new["type"], "status": new["status"]}
    if new.get("observedGeneration"):
        condition["observedGeneration"] = new["observedGeneration"]
    condition["lastTransitionTime"] = new.get("lastTransitionTime") or now
    condition["reason"] = new.get("reason", "")
    condition["message"] = new.get("message", "")
    conditions.append(condition)
    return True


def find_condition(conditions: list[dict[str, Any]] | None, condition_type: str) -> dict[str, Any] | None:
    """The condition of ``condition_type`` in a list, or None."""
    for condition in conditions or []:
        if condition.get("type") == condition_type:
            return condition
    return None


def condition_of(obj: dict[str, Any], condition_type: str) -> dict[str, Any] | None:
    """A copy of the condition of ``condition_type`` in ``obj``'s ``status.conditions``, or None."""
    found = find_condition((obj.get("status") or {}).get("conditions"), condition_type)
    return dict(found) if found is not None else None


def is_true(conditions: list[dict[str, Any]] | None, condition_type: str) -> bool:
    """Whether the condition of ``condition_type`` exists with status ``"True"``."""
    found = find_condition(conditions, condition_type)
    return found is not None and found.get("status") == "True"


__all__ = ["condition_of", "find_condition", "is_true", "set_status_condition"]
