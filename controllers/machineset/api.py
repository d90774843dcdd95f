"""The Cluster API v1beta1 facts of MachineSets and MachineDeployments (``api/v1beta1`` of Cluster API
v1.10): finalizers, labels, annotations, delete policies, strategy types, and small readers of them.

Kinds and the labels shared with the machine controller come from :mod:`controllers.machine.api`.
"""

from __future__ import annotations

import base64
import hashlib
import re
import struct
from typing import Any

from controllers.machine.api import meta
from controllers.machine.errors import ReconcileError
from harness.client import ApiError, Client
from harness.kube.names.capi import (
    CLUSTER_API_VERSION,
    CLUSTER_KIND,
)
from harness.kube.names.meta import RANDOM_ALPHABET
from harness.kube.selectors import label_selector_from_dict

GET_CLUSTER_ERROR = "failed to get Cluster {namespace}/{name}"
MACHINE_SET_FINALIZER = "cluster.x-k8s.io/machineset"
MACHINE_DEPLOYMENT_FINALIZER = "cluster.x-k8s.io/machinedeployment"

# Labels.
MACHINE_DEPLOYMENT_UNIQUE_LABEL = "machine-template-hash"

# Annotations.
DISABLE_MACHINE_CREATE_ANNOTATION = "cluster.x-k8s.io/disable-machine-create"
REVISION_ANNOTATION = "machinedeployment.clusters.x-k8s.io/revision"
REVISION_HISTORY_ANNOTATION = "machinedeployment.clusters.x-k8s.io/revision-history"
DESIRED_REPLICAS_ANNOTATION = "machinedeployment.clusters.x-k8s.io/desired-replicas"
MAX_REPLICAS_ANNOTATION = "machinedeployment.clusters.x-k8s.io/max-replicas"

# spec.deletePolicy of a MachineSet (spec.strategy.rollingUpdate.deletePolicy of a MachineDeployment).
DELETE_POLICY_RANDOM = "Random"
DELETE_POLICY_NEWEST = "Newest"
DELETE_POLICY_OLDEST = "Oldest"

# spec.strategy.type of a MachineDeployment.
ROLLING_UPDATE = "RollingUpdate"
ON_DELETE = "OnDelete"

# status.phase of a MachineDeployment.
PHASE_SCALING_UP = "ScalingUp"
PHASE_SCALING_DOWN = "ScalingDown"

# v1beta1 conditions and reasons of MachineSets and MachineDeployments.
MACHINES_CREATED = "MachinesCreated"
RESIZED = "Resized"
SCALING_UP_REASON = "ScalingUp"
SCALING_DOWN_REASON = "ScalingDown"
SCALING_UP_MESSAGE = "Scaling up MachineSet to {desired} replicas (actual {actual})"
SCALING_DOWN_MESSAGE = "Scaling down MachineSet to {desired} replicas (actual {actual})"
MACHINE_CREATION_FAILED_REASON = "MachineCreationFailed"
INFRASTRUCTURE_TEMPLATE_CLONING_FAILED_REASON = "InfrastructureTemplateCloningFailed"
BOOTSTRAP_TEMPLATE_CLONING_FAILED_REASON = "BootstrapTemplateCloningFailed"
MACHINE_DEPLOYMENT_AVAILABLE = "Available"
WAITING_FOR_AVAILABLE_MACHINES_REASON = "WaitingForAvailableMachines"
MINIMUM_AVAILABILITY_MESSAGE = "Minimum availability requires {needed} replicas, current {available} available"
MACHINE_SET_READY = "MachineSetReady"
WAITING_FOR_MACHINE_SET_REASON = "WaitingForMachineSet"
MACHINE_SET_NOT_FOUND_MESSAGE = "MachineSet not found"

# Generated names (names.SimpleNameGenerator): 5 characters of this alphabet after the base.
RANDOM_LENGTH = 5
MAX_NAME_LENGTH = 63
MAX_GENERATED_BASE_LENGTH = MAX_NAME_LENGTH - RANDOM_LENGTH

_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def format_label_value(text: str) -> str:
    """``format.MustFormatValue``: the text when it is a valid label value, else ``hash_<fnv32a>_z``
    (base64url without padding)."""
    if len(text) <= MAX_NAME_LENGTH and _LABEL_VALUE.match(text):
        return text
    value = 0x811C9DC5
    for byte in text.encode():
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    encoded = base64.urlsafe_b64encode(struct.pack(">I", value)).decode().rstrip("=")
    return f"hash_{encoded}_z"


def generate_suffix(seed: str) -> str:
    """Five characters of the name alphabet, fixed by ``seed`` (the virtual world is deterministic: a
    seed of the owner's uid and a counter gives the same names run after run)."""
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(RANDOM_ALPHABET[b % len(RANDOM_ALPHABET)] for b in digest[:RANDOM_LENGTH])


def replicas(obj: dict[str, Any]) -> int:
    """``spec.replicas`` (0 when unset)."""
    return int((obj.get("spec") or {}).get("replicas") or 0)


def status_int(obj: dict[str, Any], name: str) -> int:
    """An integer of ``status`` (0 when unset)."""
    return int((obj.get("status") or {}).get(name) or 0)


def selector_matches(selector: dict[str, Any] | None, object_labels: dict[str, str]) -> bool:
    """Whether a ``metav1.LabelSelector`` matches the labels (an empty selector matches nothing here, as
    controllers treat it). Raises ValueError for a selector that does not convert."""
    parsed = label_selector_from_dict(selector or {})
    return parsed is not None and not parsed.empty and parsed.matches(object_labels)


def selector_string(selector: dict[str, Any] | None) -> str:
    """``LabelSelectorAsSelector(...).String()``. Raises ValueError for a selector that does not convert."""
    parsed = label_selector_from_dict(selector or {})
    return str(parsed) if parsed is not None else ""


def creation_key(obj: dict[str, Any]) -> tuple[str, str]:
    """Sort key: creation time, then name (``MachineSetsByCreationTimestamp``)."""
    return str(meta(obj).get("creationTimestamp") or ""), str(meta(obj).get("name", ""))


def get_cluster(client: Client, obj: dict[str, Any]) -> dict[str, Any]:
    """The Cluster ``obj`` (a MachineSet or MachineDeployment) belongs to (``spec.clusterName``);
    :class:`ReconcileError` naming it when it cannot be read."""
    namespace = meta(obj).get("namespace") or ""
    name = str((obj.get("spec") or {}).get("clusterName", ""))
    try:
        return client.get(CLUSTER_API_VERSION, CLUSTER_KIND, name, namespace)
    except ApiError as err:
        raise ReconcileError(f"{GET_CLUSTER_ERROR.format(namespace=namespace, name=name)}: {err.message}") from err
