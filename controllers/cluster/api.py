"""The Cluster API v1beta1 facts the Cluster controller owns (``api/v1beta1/cluster_types.go`` of Cluster
API v1.10), and small readers of object references.

Kinds, labels and the paused annotation shared with the machine controller are imported from
:mod:`controllers.machine.api`, the ``runtime.cluster.x-k8s.io/ok-to-delete`` annotation (set by the
topology controller once BeforeClusterDelete passed) from :mod:`controllers.runtime.api`.
"""

from __future__ import annotations

from typing import Any

from controllers.machine.api import group_of, meta

CLUSTER_FINALIZER = "cluster.cluster.x-k8s.io"

# status.phase (ClusterPhase).

# deleteRequeueAfter: how often a deleting Cluster looks again for descendants that are still there.
DELETE_REQUEUE_AFTER = 5.0
# externalReadyWait: how long to wait before looking again for a referenced object that does not exist.
EXTERNAL_READY_WAIT = 30.0

EVENT_COMPONENT = "cluster-controller"


def has_topology(cluster: dict[str, Any]) -> bool:
    """Whether the Cluster has a managed topology (``spec.topology`` set)."""
    return bool((cluster.get("spec") or {}).get("topology"))


def refers_to(ref: dict[str, Any], obj: dict[str, Any]) -> bool:
    """``util.refersTo``: same API group (any version), kind and name."""
    return (group_of(str(ref.get("apiVersion", ""))) == group_of(str(obj.get("apiVersion", "")))
            and ref.get("kind") == obj.get("kind") and ref.get("name") == meta(obj).get("name"))


def is_owned_by(obj: dict[str, Any], owner: dict[str, Any]) -> bool:
    """``util.IsOwnedByObject``: one of the object's owner references refers to ``owner``."""
    return any(refers_to(ref, owner) for ref in meta(obj).get("ownerReferences") or [])




def owner_reference(owner: dict[str, Any], *, controller: bool = False) -> dict[str, Any]:
    """An owner reference to ``owner`` (``metav1.NewControllerRef`` when ``controller``)."""
    ref: dict[str, Any] = {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": meta(owner)["name"],
                           "uid": meta(owner).get("uid", "")}
    if controller:
        ref.update(controller=True, blockOwnerDeletion=True)
    return ref


def ensure_owner_ref(refs: list[dict[str, Any]], wanted: dict[str, Any]) -> list[dict[str, Any]]:
    """``util.EnsureOwnerRef``: replace the reference to the same group, kind and name, or add it."""
    out = [dict(r) for r in refs]
    for i, ref in enumerate(out):
        if (group_of(str(ref.get("apiVersion", ""))) == group_of(str(wanted.get("apiVersion", "")))
                and ref.get("kind") == wanted.get("kind") and ref.get("name") == wanted.get("name")):
            out[i] = dict(wanted)
            return out
    out.append(dict(wanted))
    return out


def list_to_string(items: list[str], limit: int = 5) -> str:
    """``clog.StringListToString``: at most ``limit`` items joined by ``", "``, then ``... (N more)``."""
    shown = list(items[:limit])
    if len(items) > limit:
        shown.append(f"... ({len(items) - limit} more)")
    return ", ".join(shown)
