"""Well-known names of the ``policy`` API group (PodDisruptionBudget, Eviction)."""

from __future__ import annotations

POLICY_GROUP = "policy"
POLICY_V1 = "policy/v1"
PDB_KIND = "PodDisruptionBudget"
PDB_RESOURCE = "poddisruptionbudgets.policy"
PDB_VIOLATION_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget."


__all__ = [
    "POLICY_GROUP",
    "POLICY_V1",
    "PDB_KIND",
    "PDB_RESOURCE",
    "PDB_VIOLATION_MESSAGE",
]
