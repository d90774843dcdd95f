"""PodDisruptionBudget arithmetic as the policy/v1 API documents it (and the eviction API enforces it).

- ``minAvailable: N`` expects the Pods the selector selects and wants N of them healthy;
- ``minAvailable: "p%"`` and ``maxUnavailable`` expect the *scale* of the Pods' controllers (the sum of
  their declared replicas), percentages rounded up: ``desiredHealthy = ceil(p·scale/100)`` or
  ``max(0, scale − maxUnavailable)``;
- ``disruptionsAllowed = currentHealthy − desiredHealthy``, never negative, and 0 when no Pod is expected.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.spec.rollout import (
    percentage,
    scaled,
)


@dataclass(frozen=True)
class Budget:
    """The status a PodDisruptionBudget must report."""

    expected_pods: int
    desired_healthy: int
    current_healthy: int

    @property
    def disruptions_allowed(self) -> int:
        """How many healthy Pods may be evicted now."""
        if self.expected_pods <= 0:
            return 0
        return max(0, self.current_healthy - self.desired_healthy)


def budget(spec: dict[str, Any], *, selected_pods: int, controller_scale: int, healthy: int) -> Budget:
    """The budget of a PDB ``spec`` over ``selected_pods`` Pods whose controllers declare
    ``controller_scale`` replicas in all, ``healthy`` of the Pods being healthy."""
    if spec.get("maxUnavailable") is not None:
        unavailable = scaled(spec["maxUnavailable"], controller_scale, round_up=True)
        return Budget(controller_scale, max(0, controller_scale - unavailable), healthy)
    minimum = spec.get("minAvailable")
    if minimum is None:
        return Budget(selected_pods, 0, healthy)
    if percentage(minimum) is not None:
        return Budget(controller_scale, scaled(minimum, controller_scale, round_up=True), healthy)
    return Budget(selected_pods, int(minimum), healthy)
