"""PodDisruptionBudget rules in one place: what a budget selects, its DisruptionAllowed condition, and
the arithmetic of its status (expected pods, desired healthy, disruptions allowed), shared by the
eviction subresource (harness/apiserver/subresources/eviction.py) and the disruption controller
(harness/world/disruption.py), as ``pdbhelper`` and the disruption controller share them upstream.
"""

from __future__ import annotations

from typing import Any

from harness.kube import errors, selectors
from harness.kube.conditions import find_condition, set_status_condition
from harness.kube.intstr import is_int, scaled_value
from harness.kube.names.core import CONDITION_FALSE, CONDITION_TRUE, POD_READY

# -- PodDisruptionBudget facts (policy/v1 types.go, component-helpers) -----------------------------

ALWAYS_ALLOW = "AlwaysAllow"
IF_HEALTHY_BUDGET = "IfHealthyBudget"
DISRUPTION_ALLOWED = "DisruptionAllowed"
SUFFICIENT_PODS = "SufficientPods"
INSUFFICIENT_PODS = "InsufficientPods"
SYNC_FAILED = "SyncFailed"


# -- conditions ---------------------------------------------------------------------------------------


def update_disruption_allowed_condition(status: dict[str, Any], now: str) -> None:
    """``pdbhelper.UpdateDisruptionAllowedCondition``: ``DisruptionAllowed`` True/SufficientPods when
    ``disruptionsAllowed > 0``, else False/InsufficientPods, with the status's observedGeneration."""
    conditions = status.setdefault("conditions", [])
    allowed = int(status.get("disruptionsAllowed") or 0) > 0
    set_status_condition(conditions, {
        "type": DISRUPTION_ALLOWED,
        "status": CONDITION_TRUE if allowed else CONDITION_FALSE,
        "reason": SUFFICIENT_PODS if allowed else INSUFFICIENT_PODS,
        "observedGeneration": int(status.get("observedGeneration") or 0),
    }, now)


def conditions_are_up_to_date(pdb: dict[str, Any]) -> bool:
    """``pdbhelper.ConditionsAreUpToDate``: the DisruptionAllowed condition exists, the status has
    observed the current generation, and status/reason agree with ``disruptionsAllowed``."""
    status = pdb.get("status") or {}
    condition = find_condition(status.get("conditions"), DISRUPTION_ALLOWED)
    if condition is None:
        return False
    if int(status.get("observedGeneration") or 0) != int((pdb.get("metadata") or {}).get("generation") or 0):
        return False
    if int(status.get("disruptionsAllowed") or 0) > 0:
        return condition.get("status") == CONDITION_TRUE and condition.get("reason") == SUFFICIENT_PODS
    return condition.get("status") == CONDITION_FALSE and condition.get("reason") == INSUFFICIENT_PODS


def is_pod_ready(pod: dict[str, Any]) -> bool:
    """``podutil.IsPodReady``: the pod's Ready condition is True."""
    condition = find_condition((pod.get("status") or {}).get("conditions"), POD_READY)
    return condition is not None and condition.get("status") == CONDITION_TRUE


def pdb_selects(pdb: dict[str, Any], labels: dict[str, str] | None) -> bool:
    """Whether a PDB's selector matches pod labels (policy/v1: nil selects nothing, ``{}`` everything,
    an unparseable selector nothing)."""
    selector = _pdb_selector(pdb)
    return selector is not None and selector.matches(labels or {})


# Parsed PDB selectors by (uid, generation): a PDB's selector only changes with its spec.
_SELECTORS: dict[tuple[str, int], selectors.LabelSelector | None] = {}
_SELECTOR_CACHE_SIZE = 10_000


def _pdb_selector(pdb: dict[str, Any]) -> selectors.LabelSelector | None:
    meta = pdb.get("metadata") or {}
    key = (meta.get("uid"), meta.get("generation"))
    if key[0] and key[1] is not None and key in _SELECTORS:
        return _SELECTORS[key]
    raw = (pdb.get("spec") or {}).get("selector")
    selector = None
    if isinstance(raw, dict):
        try:
            selector = selectors.label_selector_from_dict(raw)
        except (ValueError, errors.StatusError, AttributeError, TypeError):
            selector = None  # an unparseable selector selects nothing
    if key[0] and key[1] is not None:
        if len(_SELECTORS) >= _SELECTOR_CACHE_SIZE:
            _SELECTORS.clear()
        _SELECTORS[key] = selector  # type: ignore[index]
    return selector


# -- status arithmetic (the disruption controller's getExpectedPodCount and updatePdbStatus) ----------


def desired_healthy(spec: dict[str, Any], expected_pods: int) -> int:
    """``desiredHealthy`` for ``expected_pods``: ``max(0, expected - maxUnavailable)`` or
    ``minAvailable``, percentages rounded up (``GetScaledValueFromIntOrPercent(..., true)``).
    Raises :class:`~harness.kube.intstr.IntOrStringError` for a value that is neither."""
    if spec.get("maxUnavailable") is not None:
        return max(0, expected_pods - scaled_value(spec["maxUnavailable"], expected_pods, round_up=True))
    if spec.get("minAvailable") is not None:
        return scaled_value(spec["minAvailable"], expected_pods, round_up=True)
    return 0


def counts_pods_directly(spec: dict[str, Any]) -> bool:
    """Whether the expected pods are the selected pods themselves (an integer ``minAvailable``) rather
    than the summed scale of their controllers."""
    return spec.get("maxUnavailable") is None and is_int(spec.get("minAvailable"))


def disruptions_allowed(current_healthy: int, desired_healthy: int, expected_pods: int) -> int:
    """``disruptionsAllowed``: the healthy pods beyond the desired ones, 0 when none are expected."""
    allowed = current_healthy - desired_healthy
    return 0 if expected_pods <= 0 or allowed <= 0 else allowed
