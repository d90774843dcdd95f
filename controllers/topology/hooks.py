"""Tracking the intent to call a hook (``internal/hooks/tracking.go``): the Cluster annotation
``runtime.cluster.x-k8s.io/pending-hooks`` lists hook names, sorted, de-duplicated, comma-separated
without spaces (empty entries dropped); the key goes when the list is empty. Marking writes the Cluster at
once (merge patch), so an intent survives a failing reconcile or a restart. And ``ok-to-delete``.
"""

from __future__ import annotations

from typing import Any

from controllers.runtime.api import PENDING_HOOKS_ANNOTATION
from harness.client import MERGE, Client
from harness.kube.names.capi import CLUSTER_API_VERSION, CLUSTER_KIND
from harness.kube.names.runtime_sdk import OK_TO_DELETE_ANNOTATION


def _annotations(cluster: dict[str, Any]) -> dict[str, str]:
    return (cluster.get("metadata") or {}).get("annotations") or {}


def pending(cluster: dict[str, Any]) -> list[str]:
    """The hooks the Cluster is marked as pending, sorted."""
    return sorted({h for h in _annotations(cluster).get(PENDING_HOOKS_ANNOTATION, "").split(",") if h})


def is_pending(cluster: dict[str, Any], hook: str) -> bool:
    """``hooks.IsPending``."""
    return hook in pending(cluster)


def _write(client: Client, cluster: dict[str, Any], hooks: set[str]) -> None:
    value = ",".join(sorted(h for h in hooks if h)) or None
    if value == _annotations(cluster).get(PENDING_HOOKS_ANNOTATION):
        return
    meta = cluster["metadata"]
    written = client.patch(CLUSTER_API_VERSION, CLUSTER_KIND, meta["name"],
                           {"metadata": {"annotations": {PENDING_HOOKS_ANNOTATION: value}}},
                           namespace=meta.get("namespace"), patch_type=MERGE)
    # Keep the caller's copy in step with what was written.
    meta["annotations"] = dict((written.get("metadata") or {}).get("annotations") or {})
    meta["resourceVersion"] = (written.get("metadata") or {}).get("resourceVersion")


def mark_pending(client: Client, cluster: dict[str, Any], *hooks: str) -> None:
    """``hooks.MarkAsPending``: add ``hooks`` to the annotation."""
    _write(client, cluster, set(pending(cluster)) | set(hooks))


def mark_done(client: Client, cluster: dict[str, Any], *hooks: str) -> None:
    """``hooks.MarkAsDone``: remove ``hooks`` from the annotation (the key goes with the last one)."""
    _write(client, cluster, set(pending(cluster)) - set(hooks))


def is_ok_to_delete(cluster: dict[str, Any]) -> bool:
    """``hooks.IsOkToDelete``: the annotation is there (whatever its value)."""
    return OK_TO_DELETE_ANNOTATION in _annotations(cluster)


def mark_ok_to_delete(client: Client, cluster: dict[str, Any]) -> None:
    """``hooks.MarkAsOkToDelete``: set ``runtime.cluster.x-k8s.io/ok-to-delete: ""``."""
    meta = cluster["metadata"]
    client.patch(CLUSTER_API_VERSION, CLUSTER_KIND, meta["name"],
                 {"metadata": {"annotations": {OK_TO_DELETE_ANNOTATION: ""}}},
                 namespace=meta.get("namespace"), patch_type=MERGE)
