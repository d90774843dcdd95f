"""Well-known names of ``apiextensions.k8s.io`` (CustomResourceDefinitions)."""

from __future__ import annotations

APIEXTENSIONS_V1 = "apiextensions.k8s.io/v1"
CRD_KIND = "CustomResourceDefinition"
SCOPE_NAMESPACED = "Namespaced"
SCOPE_CLUSTER = "Cluster"


__all__ = [
    "APIEXTENSIONS_V1",
    "CRD_KIND",
    "SCOPE_NAMESPACED",
    "SCOPE_CLUSTER",
]
