"""The Cluster API v1beta1 facts the machine controller works with: kinds, the finalizer, labels and
annotations (``api/v1beta1`` of Cluster API v1.10), and small readers of Machine and Cluster dicts."""

from __future__ import annotations

from typing import Any

from harness.kube.names.capi import (
    CONTROL_PLANE_LABEL,
    PRE_TERMINATE_DELETE_HOOK_PREFIX,
)

# Labels.
MACHINE_POOL_NAME_LABEL = "cluster.x-k8s.io/pool-name"
POD_DRAIN_LABEL = "cluster.x-k8s.io/drain"

# Annotations on Machines.
PAUSED_ANNOTATION = "cluster.x-k8s.io/paused"
EXCLUDE_NODE_DRAINING_ANNOTATION = "machine.cluster.x-k8s.io/exclude-node-draining"
EXCLUDE_WAIT_FOR_NODE_VOLUME_DETACH_ANNOTATION = "machine.cluster.x-k8s.io/exclude-wait-for-node-volume-detach"

# Annotations the machine controller keeps on Nodes (CommonNodeAnnotations).
NODE_CLUSTER_NAMESPACE_ANNOTATION = "cluster.x-k8s.io/cluster-namespace"
NODE_MACHINE_ANNOTATION = "cluster.x-k8s.io/machine"
NODE_OWNER_KIND_ANNOTATION = "cluster.x-k8s.io/owner-kind"
NODE_OWNER_NAME_ANNOTATION = "cluster.x-k8s.io/owner-name"

# KubeadmControlPlane, inlined as upstream's machine controller inlines it.
KCP_CLEANUP_HOOK_ANNOTATION = PRE_TERMINATE_DELETE_HOOK_PREFIX + "/kcp-cleanup"

# Machine phases (status.phase).

# capierrors.InvalidConfigurationMachineError.
INVALID_CONFIGURATION_ERROR = "InvalidConfiguration"

# The Machine webhook's default for spec.nodeDeletionTimeout (metav1.Duration of 10s).
DEFAULT_NODE_DELETION_TIMEOUT = "10s"


def meta(obj: dict[str, Any]) -> dict[str, Any]:
    """``metadata`` of an object (an empty dict when missing)."""
    value = obj.get("metadata")
    return value if isinstance(value, dict) else {}


def annotations(obj: dict[str, Any]) -> dict[str, str]:
    """The object's annotations (empty when none)."""
    return meta(obj).get("annotations") or {}


def labels(obj: dict[str, Any]) -> dict[str, str]:
    """The object's labels (empty when none)."""
    return meta(obj).get("labels") or {}


def is_deleting(obj: dict[str, Any]) -> bool:
    """Whether the object has a deletionTimestamp."""
    return bool(meta(obj).get("deletionTimestamp"))


def is_control_plane_machine(machine: dict[str, Any]) -> bool:
    """``util.IsControlPlaneMachine``: the control-plane label is present (its value does not matter)."""
    return CONTROL_PLANE_LABEL in labels(machine)


def group_of(api_version: str) -> str:
    """The group of ``group/version`` ("" for the core group)."""
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


def has_owner(obj: dict[str, Any], api_version: str, kinds: tuple[str, ...]) -> bool:
    """``util.HasOwner``: an owner reference of the same group (any version) and one of ``kinds``."""
    group = group_of(api_version)
    return any(group_of(str(ref.get("apiVersion", ""))) == group and ref.get("kind") in kinds
               for ref in meta(obj).get("ownerReferences") or [])




def key(obj: dict[str, Any]) -> str:
    """``klog.KObj``: ``namespace/name`` (or ``name`` for a cluster-scoped object)."""
    m = meta(obj)
    namespace = m.get("namespace") or ""
    return f"{namespace}/{m.get('name', '')}" if namespace else str(m.get("name", ""))
