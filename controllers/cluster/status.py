"""What a Cluster's reconcile reports at its end, whatever happened (``updateStatus`` and
``patchCluster`` of Cluster API v1.10): the phase (with an event when it changes), the v1beta2
``InfrastructureReady``, ``ControlPlaneInitialized`` and ``Deleting`` conditions, and the v1beta1
``Ready`` summary of ``ControlPlaneReady`` and ``InfrastructureReady``.

Of upstream's v1beta2 conditions only those three are kept; replica counters and the Available,
WorkersAvailable, Machines*, RollingOut, Scaling* and Remediating conditions are not reported.
"""

from __future__ import annotations

from controllers.cluster import conditions as ccond
from controllers.cluster.api import has_topology
from controllers.cluster.phases import Scope
from controllers.machine import conditions as cond
from controllers.machine.api import is_deleting
from harness.client import NORMAL, WARNING
from harness.kube.names.capi import (
    CONTROL_PLANE_INITIALIZED,
    INTERNAL_ERROR_MESSAGE,
    INTERNAL_ERROR_REASON,
    PHASE_DELETING,
    PHASE_FAILED,
    PHASE_PENDING,
    PHASE_PROVISIONED,
    PHASE_PROVISIONING,
)
from harness.kube.names.core import CONDITION_FALSE, CONDITION_TRUE, CONDITION_UNKNOWN

PHASE_EVENT_MESSAGE = "Cluster {name} is {phase}"
FAILED_EVENT_MESSAGE = "Cluster {name} is {phase}: {message}"
UNKNOWN_FAILURE = "unknown"

SUMMARIZED = (ccond.CONTROL_PLANE_READY, cond.INFRASTRUCTURE_READY)


def _endpoint_valid(s: Scope) -> bool:
    endpoint = s.spec.get("controlPlaneEndpoint")
    return isinstance(endpoint, dict) and bool(endpoint.get("host")) and bool(endpoint.get("port"))


def reconcile_phase(s: Scope) -> None:
    """``reconcilePhase``: Pending, Provisioning (a reference is set), Provisioned (infrastructure ready
    and an endpoint), Failed, Deleting; an event when it changes (Warning for Failed)."""
    status = s.status
    before = status.get("phase", "")
    phase = before or PHASE_PENDING
    if s.spec.get("infrastructureRef") or s.spec.get("controlPlaneRef"):
        phase = PHASE_PROVISIONING
    if status.get("infrastructureReady") and _endpoint_valid(s):
        phase = PHASE_PROVISIONED
    if status.get("failureReason") or status.get("failureMessage"):
        phase = PHASE_FAILED
    if is_deleting(s.cluster):
        phase = PHASE_DELETING
    status["phase"] = phase
    if phase == before:
        return
    if phase == PHASE_FAILED:
        s.event(WARNING, phase, FAILED_EVENT_MESSAGE.format(name=s.name, phase=phase,
                                                          message=status.get("failureMessage") or UNKNOWN_FAILURE))
    else:
        s.event(NORMAL, phase, PHASE_EVENT_MESSAGE.format(name=s.name, phase=phase))


def _set_infrastructure_ready(s: Scope) -> None:
    """``setInfrastructureReadyCondition`` (v1beta2), from ``status.infrastructureReady`` (the fake
    infrastructure reports no v1beta2 conditions of its own to mirror)."""
    c, ref = s.cluster, s.spec.get("infrastructureRef")
    name = cond.INFRASTRUCTURE_READY
    if not ref and has_topology(c):
        message = "" if is_deleting(c) else ccond.WAITING_FOR_TOPOLOGY_MESSAGE
        cond.set_v1beta2(c, name, CONDITION_FALSE, ccond.OBJECT_DOES_NOT_EXIST_REASON, message, s.now)
        return
    kind = str((ref or {}).get("kind", ""))
    ready = bool(s.status.get("infrastructureReady"))
    if not ref or s.infra_cluster is not None:
        if ready:
            cond.set_v1beta2(c, name, CONDITION_TRUE, ccond.READY_REASON, "", s.now)
        else:
            cond.set_v1beta2(c, name, CONDITION_FALSE, ccond.NOT_READY_REASON,
                             ccond.INFRASTRUCTURE_NOT_READY_MESSAGE.format(kind=kind), s.now)
        return
    if not s.infra_cluster_not_found:
        cond.set_v1beta2(c, name, CONDITION_UNKNOWN, INTERNAL_ERROR_REASON, INTERNAL_ERROR_MESSAGE, s.now)
    elif is_deleting(c) and ready:
        cond.set_v1beta2(c, name, CONDITION_FALSE, ccond.OBJECT_DELETED_REASON,
                         ccond.DELETED_MESSAGE.format(kind=kind), s.now)
    elif ready:
        cond.set_v1beta2(c, name, CONDITION_FALSE, ccond.OBJECT_DELETED_REASON,
                         ccond.DELETED_WHILE_CLUSTER_EXISTS_MESSAGE.format(kind=kind), s.now)
    else:
        cond.set_v1beta2(c, name, CONDITION_FALSE, ccond.OBJECT_DOES_NOT_EXIST_REASON,
                         ccond.DOES_NOT_EXIST_MESSAGE.format(kind=kind), s.now)


def _set_control_plane_initialized(s: Scope) -> None:
    """``setControlPlaneInitializedCondition`` (v1beta2): once True it stays True."""
    c = s.cluster
    name = CONTROL_PLANE_INITIALIZED
    current = cond.get_v1beta2(c, name)
    if current is not None and current.get("status") == CONDITION_TRUE:
        return
    ref = s.spec.get("controlPlaneRef")
    if not ref and has_topology(c):
        message = "" if is_deleting(c) else ccond.WAITING_FOR_TOPOLOGY_MESSAGE
        cond.set_v1beta2(c, name, CONDITION_UNKNOWN, ccond.OBJECT_DOES_NOT_EXIST_REASON, message, s.now)
        return
    if ref:
        if s.control_plane is None:
            if not s.control_plane_not_found:
                cond.set_v1beta2(c, name, CONDITION_UNKNOWN, INTERNAL_ERROR_REASON, INTERNAL_ERROR_MESSAGE,
                                 s.now)
            else:
                cond.set_v1beta2(c, name, CONDITION_UNKNOWN, ccond.OBJECT_DOES_NOT_EXIST_REASON,
                                 ccond.DOES_NOT_EXIST_MESSAGE.format(kind=ref.get("kind", "")), s.now)
        elif (s.control_plane.get("status") or {}).get("initialized"):
            cond.set_v1beta2(c, name, CONDITION_TRUE, ccond.INITIALIZED_REASON, "", s.now)
        else:
            cond.set_v1beta2(c, name, CONDITION_FALSE, ccond.NOT_INITIALIZED_REASON,
                             ccond.CONTROL_PLANE_NOT_INITIALIZED_MESSAGE, s.now)
        return
    if not s.descendants_found:
        cond.set_v1beta2(c, name, CONDITION_UNKNOWN, INTERNAL_ERROR_REASON, INTERNAL_ERROR_MESSAGE, s.now)
    elif any((m.get("status") or {}).get("nodeRef") for m in s.descendants.control_plane_machines):
        cond.set_v1beta2(c, name, CONDITION_TRUE, ccond.INITIALIZED_REASON, "", s.now)
    else:
        cond.set_v1beta2(c, name, CONDITION_FALSE, ccond.NOT_INITIALIZED_REASON, ccond.NO_CONTROL_PLANE_NODE_MESSAGE,
                         s.now)


def update_status(s: Scope, *, failed: bool) -> None:
    """The end of every reconcile: phase, v1beta2 conditions, the ``Ready`` summary and, after a clean
    run, ``status.observedGeneration``."""
    reconcile_phase(s)
    _set_infrastructure_ready(s)
    _set_control_plane_initialized(s)
    ccond.set_deleting(s.cluster, s.deleting_reason, s.deleting_message, s.now)
    ccond.summarize(s.cluster, SUMMARIZED, s.now)
    generation = (s.cluster.get("metadata") or {}).get("generation")
    if not failed and generation:
        s.status["observedGeneration"] = generation
