"""Well-known names of the ``apps`` API group."""

from __future__ import annotations

APPS_GROUP = "apps"
APPS_V1 = "apps/v1"
REPLICA_SET = "ReplicaSet"
STATEFUL_SET = "StatefulSet"
DAEMON_SET = "DaemonSet"
POD_TEMPLATE_HASH_LABEL = "pod-template-hash"
REPLICA_FAILURE = "ReplicaFailure"


__all__ = [
    "APPS_GROUP",
    "APPS_V1",
    "REPLICA_SET",
    "STATEFUL_SET",
    "DAEMON_SET",
    "POD_TEMPLATE_HASH_LABEL",
    "REPLICA_FAILURE",
]
