"""The phases of a Cluster's reconcile (``cluster_controller_phases.go`` of Cluster API v1.10): the
infrastructure cluster and the control plane object it references, the descendants it has, and, for a
Cluster without a control plane object, whether its control plane is initialized.

Each phase reads and changes :class:`Scope` in place and returns the seconds after which it wants to run
again (None: the watches bring it back), or raises :class:`ReconcileError`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from controllers.cluster import conditions as ccond
from controllers.cluster.api import EXTERNAL_READY_WAIT
from controllers.machine import conditions as cond
from controllers.machine.api import is_deleting, labels, meta
from controllers.machine.errors import ReconcileError, go_quote
from harness.client import MERGE, NORMAL, ApiError, Client, EventRecorder
from harness.client.interface import shared_reads
from harness.kube.names.capi import (
    CLUSTER_API_VERSION,
    CLUSTER_KIND,
    CLUSTER_NAME_LABEL,
    CONTROL_PLANE_INITIALIZED,
    CONTROL_PLANE_LABEL,
    DELETING_REASON,
    FAILURE_FROM_REFERENCE_MESSAGE,
    MACHINE_DEPLOYMENT_KIND,
    MACHINE_KIND,
    MACHINE_SET_KIND,
)

DELETED_AFTER_READY_ERROR = "{kind} has been deleted after being ready"

# Events.
INFRASTRUCTURE_READY_EVENT = "InfrastructureReady"
INFRASTRUCTURE_READY_EVENT_MESSAGE = "Cluster {name} InfrastructureReady is now True"
CONTROL_PLANE_READY_EVENT = "ControlPlaneReady"
CONTROL_PLANE_READY_EVENT_MESSAGE = "Cluster {name} ControlPlaneReady is now True"


@dataclass
class Descendants:
    """What the Cluster has, found by the ``cluster.x-k8s.io/cluster-name`` label in its namespace."""

    machine_deployments: list[dict[str, Any]] = field(default_factory=list)
    machine_sets: list[dict[str, Any]] = field(default_factory=list)
    control_plane_machines: list[dict[str, Any]] = field(default_factory=list)
    worker_machines: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Scope:
    """What one reconcile of a Cluster reads and decides."""

    client: Client
    recorder: EventRecorder
    cluster: dict[str, Any]
    now: float
    watch: Callable[[str, str], None]
    infra_cluster: dict[str, Any] | None = None
    infra_cluster_not_found: bool = False
    control_plane: dict[str, Any] | None = None
    control_plane_not_found: bool = False
    descendants: Descendants = field(default_factory=Descendants)
    descendants_found: bool = False
    deleting_reason: str = ""
    deleting_message: str = ""

    @property
    def name(self) -> str:
        return str(meta(self.cluster)["name"])

    @property
    def namespace(self) -> str:
        return str(meta(self.cluster).get("namespace") or "")

    @property
    def spec(self) -> dict[str, Any]:
        return self.cluster.setdefault("spec", {})  # type: ignore[no-any-return]

    @property
    def status(self) -> dict[str, Any]:
        return self.cluster.setdefault("status", {})  # type: ignore[no-any-return]

    def event(self, event_type: str, reason: str, message: str) -> None:
        self.recorder.event(self.cluster, event_type, reason, message)


def _gvk(obj: dict[str, Any]) -> str:
    """``schema.GroupVersionKind.String()``."""
    return f"{obj.get('apiVersion', '')}, Kind={obj.get('kind', '')}"


def _missing(err: ApiError) -> bool:
    """A NotFound of the object itself (a kind the server does not serve is another failure)."""
    return err.code == 404 and bool((err.status.get("details") or {}).get("name"))


def _external(s: Scope, ref: dict[str, Any]) -> dict[str, Any]:
    """``reconcileExternal``: the referenced object, controlled by the Cluster and labelled with its name;
    its failures are copied to the Cluster. Raises ApiError (404 when it does not exist)."""
    api_version, kind = str(ref.get("apiVersion", "")), str(ref.get("kind", ""))
    obj = s.client.get(api_version, kind, str(ref.get("name", "")), ref.get("namespace") or s.namespace)
    s.watch(api_version, kind)
    desired = {
        "apiVersion": CLUSTER_API_VERSION,
        "kind": CLUSTER_KIND,
        "name": s.name,
        "uid": meta(s.cluster).get("uid", ""),
        "controller": True,
        "blockOwnerDeletion": True,
    }
    refs = list(meta(obj).get("ownerReferences") or [])
    owned = any(r == desired for r in refs)
    if not (owned and labels(obj).get(CLUSTER_NAME_LABEL) == s.name) and not is_deleting(obj):
        kept = [r for r in refs if not (r.get("kind") == CLUSTER_KIND and r.get("name") == s.name)
                and not r.get("controller")]
        body = {"metadata": {"ownerReferences": kept + [desired], "labels": {CLUSTER_NAME_LABEL: s.name}}}
        obj = s.client.patch(api_version, kind, meta(obj)["name"], body, namespace=meta(obj).get("namespace"),
                             patch_type=MERGE)
    status = obj.get("status") or {}
    if status.get("failureReason"):
        s.status["failureReason"] = status["failureReason"]
    if status.get("failureMessage"):
        s.status["failureMessage"] = FAILURE_FROM_REFERENCE_MESSAGE.format(
            gvk=_gvk(obj), name=go_quote(str(meta(obj).get("name", ""))), message=status["failureMessage"])
    return obj


def _existing_external(s: Scope, ref: dict[str, Any]) -> dict[str, Any] | None:
    """:func:`_external`, or None when the referenced object does not exist; any other failure is a
    :class:`ReconcileError`."""
    try:
        return _external(s, ref)
    except ApiError as err:
        if not _missing(err):
            raise ReconcileError(err.message) from err
        return None


def _external_gone(ref: dict[str, Any], *, deleting: bool, was_ready: bool) -> float | None:
    """What a missing infrastructure cluster or control plane means: nothing for a deleting Cluster, an
    error once it had been ready, else wait for it to appear."""
    if deleting:
        return None
    if was_ready:
        raise ReconcileError(DELETED_AFTER_READY_ERROR.format(kind=ref.get("kind", "")))
    return EXTERNAL_READY_WAIT


def _endpoint_valid(endpoint: Any) -> bool:
    """``APIEndpoint.IsValid``: a host and a port."""
    return isinstance(endpoint, dict) and bool(endpoint.get("host")) and bool(endpoint.get("port"))


def _copy_endpoint(s: Scope, obj: dict[str, Any]) -> None:
    endpoint = (obj.get("spec") or {}).get("controlPlaneEndpoint")
    if not _endpoint_valid(s.spec.get("controlPlaneEndpoint")) and isinstance(endpoint, dict) and endpoint:
        s.spec["controlPlaneEndpoint"] = {"host": endpoint.get("host", ""), "port": endpoint.get("port", 0)}


def reconcile_infrastructure(s: Scope) -> float | None:
    """``reconcileInfrastructure``: ``status.infrastructureReady``, the ``InfrastructureReady`` condition,
    the control plane endpoint and failure domains, from the infrastructure cluster."""
    ref = s.spec.get("infrastructureRef")
    deleting = is_deleting(s.cluster)
    if not ref:
        if not deleting:
            s.status["infrastructureReady"] = True
            cond.mark_true(s.cluster, cond.INFRASTRUCTURE_READY, s.now)
        return None
    obj = _existing_external(s, ref)
    if obj is None:
        s.infra_cluster_not_found = True
        return _external_gone(ref, deleting=deleting, was_ready=bool(s.status.get("infrastructureReady")))
    s.infra_cluster = obj
    ready = bool((obj.get("status") or {}).get("ready"))
    if deleting:
        ccond.mirror(s.cluster, cond.INFRASTRUCTURE_READY, obj, s.now, fallback_ready=False,
                     fallback_reason=DELETING_REASON)
    else:
        ccond.mirror(s.cluster, cond.INFRASTRUCTURE_READY, obj, s.now, fallback_ready=ready,
                     fallback_reason=cond.WAITING_FOR_INFRASTRUCTURE_REASON)
    if is_deleting(obj) or (not ready and not s.status.get("infrastructureReady")):
        return None
    _copy_endpoint(s, obj)
    failure_domains = (obj.get("status") or {}).get("failureDomains")
    if failure_domains:
        s.status["failureDomains"] = failure_domains
    else:
        s.status.pop("failureDomains", None)
    if not s.status.get("infrastructureReady"):
        s.event(NORMAL, INFRASTRUCTURE_READY_EVENT, INFRASTRUCTURE_READY_EVENT_MESSAGE.format(name=s.name))
    s.status["infrastructureReady"] = True
    return None


def reconcile_control_plane(s: Scope) -> float | None:
    """``reconcileControlPlane``: ``status.controlPlaneReady`` and the ``ControlPlaneReady`` and
    ``ControlPlaneInitialized`` conditions from the control plane object (``status.ready``,
    ``status.initialized``), and the control plane endpoint when the infrastructure gave none."""
    ref = s.spec.get("controlPlaneRef")
    if not ref:
        return None
    deleting = is_deleting(s.cluster)
    obj = _existing_external(s, ref)
    if obj is None:
        s.control_plane_not_found = True
        return _external_gone(ref, deleting=deleting, was_ready=bool(s.status.get("controlPlaneReady")))
    s.control_plane = obj
    obj_status = obj.get("status") or {}
    ready = bool(obj_status.get("ready"))
    if deleting:
        ccond.mirror(s.cluster, ccond.CONTROL_PLANE_READY, obj, s.now, fallback_ready=False,
                     fallback_reason=DELETING_REASON)
    else:
        ccond.mirror(s.cluster, ccond.CONTROL_PLANE_READY, obj, s.now, fallback_ready=ready,
                     fallback_reason=ccond.WAITING_FOR_CONTROL_PLANE_REASON)
    if is_deleting(obj):
        return None
    if not cond.is_true(s.cluster, CONTROL_PLANE_INITIALIZED):
        if obj_status.get("initialized"):
            cond.mark_true(s.cluster, CONTROL_PLANE_INITIALIZED, s.now)
        else:
            cond.mark_false(s.cluster, CONTROL_PLANE_INITIALIZED,
                            ccond.WAITING_FOR_CONTROL_PLANE_PROVIDER_INITIALIZED_REASON, cond.SEVERITY_INFO,
                            ccond.WAITING_FOR_CONTROL_PLANE_PROVIDER_INITIALIZED_MESSAGE, s.now)
    if not ready and not s.status.get("controlPlaneReady"):
        return None
    _copy_endpoint(s, obj)
    if not s.status.get("controlPlaneReady"):
        s.event(NORMAL, CONTROL_PLANE_READY_EVENT, CONTROL_PLANE_READY_EVENT_MESSAGE.format(name=s.name))
    s.status["controlPlaneReady"] = True
    return None


def get_descendants(s: Scope) -> float | None:
    """``getDescendants``: the MachineDeployments, MachineSets and Machines labelled with the Cluster's
    name, Machines split into control plane (the control-plane label) and worker Machines."""
    selector = f"{CLUSTER_NAME_LABEL}={s.name}"
    # Views where the client offers them (shared_reads): the descendants are only read (names, owners,
    # deletion, nodeRef), and deleted by name.
    shared = shared_reads(s.client)
    try:
        found = Descendants(
            machine_deployments=s.client.list(
                CLUSTER_API_VERSION, MACHINE_DEPLOYMENT_KIND, s.namespace, label_selector=selector, **shared
            )["items"],
            machine_sets=s.client.list(CLUSTER_API_VERSION, MACHINE_SET_KIND, s.namespace, label_selector=selector,
                                       **shared)["items"],
        )
        machines = s.client.list(CLUSTER_API_VERSION, MACHINE_KIND, s.namespace, label_selector=selector,
                                 **shared)["items"]
    except ApiError as err:
        raise ReconcileError(f"failed to list descendants for cluster {s.namespace}/{s.name}: {err.message}") from err
    for machine in machines:
        if CONTROL_PLANE_LABEL in labels(machine):
            found.control_plane_machines.append(machine)
        else:
            found.worker_machines.append(machine)
    s.descendants = found
    s.descendants_found = True
    return None


def reconcile_control_plane_initialized(s: Scope) -> float | None:
    """``reconcileControlPlaneInitialized``: without a control plane object, the control plane is
    initialized once a control plane Machine that is not being deleted has a ``status.nodeRef``."""
    if s.spec.get("controlPlaneRef") or cond.is_true(s.cluster, CONTROL_PLANE_INITIALIZED):
        return None
    for machine in s.descendants.control_plane_machines:
        if not is_deleting(machine) and (machine.get("status") or {}).get("nodeRef"):
            cond.mark_true(s.cluster, CONTROL_PLANE_INITIALIZED, s.now)
            return None
    cond.mark_false(s.cluster, CONTROL_PLANE_INITIALIZED, ccond.MISSING_NODE_REF_REASON, cond.SEVERITY_INFO,
                    ccond.MISSING_NODE_REF_MESSAGE, s.now)
    return None
