"""Well-known names of the core API group (``v1``): Pod and Node phases and conditions, taints,
labels, and the defaults every kind shares."""

from __future__ import annotations

# Namespaces
DEFAULT_NAMESPACE = "default"

# Condition statuses (metav1.ConditionStatus / corev1.ConditionStatus)
CONDITION_TRUE = "True"
CONDITION_FALSE = "False"
CONDITION_UNKNOWN = "Unknown"

# Pod phases
POD_PENDING = "Pending"
POD_RUNNING = "Running"
POD_SUCCEEDED = "Succeeded"
POD_FAILED = "Failed"

# Pod and Node condition types and reasons
POD_READY = "Ready"
NODE_READY = "Ready"
DISRUPTION_TARGET = "DisruptionTarget"
EVICTION_BY_EVICTION_API = "EvictionByEvictionAPI"

# Taints and well-known labels
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
NO_SCHEDULE = "NoSchedule"
NO_EXECUTE = "NoExecute"
HOSTNAME_LABEL = "kubernetes.io/hostname"
# The user of a kube-system service account (a controller of the control plane acts as one):
# ``SYSTEM_USER.format(name)``.
SYSTEM_USER = "system:serviceaccount:kube-system:{}"
LAST_APPLIED_CONFIGURATION_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"
# The pause image the kit's Pods run (the image Kubernetes v1.32 sandboxes with).
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"

# The Kubernetes release whose behaviour the kit follows
KUBERNETES_VERSION = "v1.32.0"


__all__ = [
    "DEFAULT_NAMESPACE",
    "CONDITION_TRUE",
    "CONDITION_FALSE",
    "CONDITION_UNKNOWN",
    "POD_PENDING",
    "POD_RUNNING",
    "POD_SUCCEEDED",
    "POD_FAILED",
    "POD_READY",
    "NODE_READY",
    "DISRUPTION_TARGET",
    "EVICTION_BY_EVICTION_API",
    "UNSCHEDULABLE_TAINT",
    "NO_SCHEDULE",
    "NO_EXECUTE",
    "HOSTNAME_LABEL",
    "LAST_APPLIED_CONFIGURATION_ANNOTATION",
    "KUBERNETES_VERSION",
    "PAUSE_IMAGE",
    "SYSTEM_USER",
]
