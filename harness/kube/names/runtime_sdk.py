"""Well-known names of the Cluster API Runtime SDK (``runtime.cluster.x-k8s.io``)."""

from __future__ import annotations

RUNTIME_API_VERSION = "runtime.cluster.x-k8s.io/v1alpha1"
OK_TO_DELETE_ANNOTATION = "runtime.cluster.x-k8s.io/ok-to-delete"


__all__ = [
    "RUNTIME_API_VERSION",
    "OK_TO_DELETE_ANNOTATION",
]
