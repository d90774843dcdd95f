"""Event reasons and messages that the workload controllers of Kubernetes and Cluster API share
(``pkg/controller``)."""

from __future__ import annotations

# The events.k8s.io API group (its Event is the core Event, stored once).
EVENTS_API_GROUP = "events.k8s.io"
SUCCESSFUL_CREATE = "SuccessfulCreate"
FAILED_CREATE = "FailedCreate"
SUCCESSFUL_DELETE = "SuccessfulDelete"
FAILED_DELETE = "FailedDelete"
SUCCESSFUL_ADOPT = "SuccessfulAdopt"
CREATED_POD_MESSAGE = "Created pod: {name}"
DELETED_POD_MESSAGE = "Deleted pod: {name}"
FAILED_CREATE_MESSAGE = "Error creating: {error}"


__all__ = [
    "SUCCESSFUL_CREATE",
    "FAILED_CREATE",
    "SUCCESSFUL_DELETE",
    "FAILED_DELETE",
    "SUCCESSFUL_ADOPT",
    "CREATED_POD_MESSAGE",
    "DELETED_POD_MESSAGE",
    "FAILED_CREATE_MESSAGE",
    "EVENTS_API_GROUP",
]
