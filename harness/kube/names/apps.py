"""Well-known names of the ``apps`` API group."""

from __future__ import annotations

APPS_GROUP = "apps"
APPS_V1 = "apps/v1"
REPLICA_SET = "ReplicaSet"
STATEFUL_SET = "StatefulSet"
DAEMON_SET = "DaemonSet"
POD_TEMPLATE_HASH_LABEL = "pod-template-hash"
REPLICA_FAILURE = "ReplicaFailure"
DEPLOYMENT = "Deployment"
CONTROLLER_REVISION = "ControllerRevision"

# Strategies (Deployment: RollingUpdate, Recreate; StatefulSet and DaemonSet: RollingUpdate, OnDelete) and
# StatefulSet pod management policies.
ROLLING_UPDATE = "RollingUpdate"
RECREATE = "Recreate"
ON_DELETE = "OnDelete"
ORDERED_READY = "OrderedReady"
PARALLEL = "Parallel"

# Labels and annotations of the workload controllers.
CONTROLLER_REVISION_HASH_LABEL = "controller-revision-hash"
CONTROLLER_HASH_LABEL = "controller.kubernetes.io/hash"
STATEFUL_SET_POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
REVISION_HISTORY_ANNOTATION = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS_ANNOTATION = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS_ANNOTATION = "deployment.kubernetes.io/max-replicas"
CHANGE_CAUSE_ANNOTATION = "kubernetes.io/change-cause"
DEPRECATED_ROLLBACK_TO_ANNOTATION = "deprecated.deployment.rollback.to"


__all__ = [
    "APPS_GROUP",
    "APPS_V1",
    "REPLICA_SET",
    "STATEFUL_SET",
    "DAEMON_SET",
    "POD_TEMPLATE_HASH_LABEL",
    "REPLICA_FAILURE",
    "DEPLOYMENT",
    "CONTROLLER_REVISION",
    "ROLLING_UPDATE",
    "RECREATE",
    "ON_DELETE",
    "ORDERED_READY",
    "PARALLEL",
    "CONTROLLER_REVISION_HASH_LABEL",
    "CONTROLLER_HASH_LABEL",
    "STATEFUL_SET_POD_NAME_LABEL",
    "POD_INDEX_LABEL",
    "REVISION_ANNOTATION",
    "REVISION_HISTORY_ANNOTATION",
    "DESIRED_REPLICAS_ANNOTATION",
    "MAX_REPLICAS_ANNOTATION",
    "CHANGE_CAUSE_ANNOTATION",
    "DEPRECATED_ROLLBACK_TO_ANNOTATION",
]
