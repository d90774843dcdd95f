"""The reference Cluster controller: Cluster API v1.10's Cluster reconciler on the client interface.

A reconcile adds the ``cluster.cluster.x-k8s.io`` finalizer first; sets the v1beta2 ``Paused`` condition
and stops there for a paused Cluster (``spec.paused`` or the ``cluster.x-k8s.io/paused`` annotation);
then runs the phases of :mod:`controllers.cluster.phases` (infrastructure cluster, control plane object,
descendants) and either the deletion of :mod:`controllers.cluster.deletion` or, for a Cluster not being
deleted, the control plane initialization check. A Cluster with a managed topology whose references are
not set yet is left to the topology controller. Status and metadata are written at the end
(:mod:`controllers.cluster.status`, :mod:`controllers.cluster.patch`). Every phase runs even after an
earlier one failed; errors are aggregated and retried with back-off.

Watches: Clusters; control plane Machines with a Node, until the Cluster's control plane is initialized;
MachineDeployments (to their Cluster); the infrastructure cluster and control plane kinds a Cluster
references (to the Cluster controlling them). A deleting Cluster with descendants left looks again every
5 s, as upstream does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from controllers.cluster import conditions as ccond
from controllers.cluster.api import CLUSTER_FINALIZER, EVENT_COMPONENT, has_topology
from controllers.cluster.deletion import reconcile_delete
from controllers.cluster.patch import copy_json, write
from controllers.cluster.phases import (
    Scope,
    get_descendants,
    reconcile_control_plane,
    reconcile_control_plane_initialized,
    reconcile_infrastructure,
)
from controllers.cluster.status import update_status
from controllers.machine import conditions as cond
from controllers.machine.api import is_control_plane_machine, is_deleting, meta
from controllers.machine.errors import ReconcileError, aggregate, run_phases
from controllers.machine.reconciler import ClusterApiReconciler
from harness.client import (
    Client,
    Request,
    Result,
    owner_mapper,
)
from harness.kube.names.capi import (
    CLUSTER_API_VERSION,
    CLUSTER_KIND,
    CONTROL_PLANE_INITIALIZED,
    MACHINE_DEPLOYMENT_KIND,
    MACHINE_KIND,
)


class ClusterController(ClusterApiReconciler):
    """Reconciles ``cluster.x-k8s.io/v1beta1`` Clusters of the management cluster."""

    name = "cluster"
    event_component = EVENT_COMPONENT

    def __init__(self, client: Client) -> None:
        super().__init__(client)
        self._owner_mapper = owner_mapper(CLUSTER_KIND)
        # Clusters whose control plane is initialized (from the Cluster watch): their Machines need not wake them.
        self._initialized: set[tuple[str, str]] = set()

    def setup(self) -> None:
        self.watch(self.client, CLUSTER_API_VERSION, CLUSTER_KIND, self._on_cluster)
        self.watch(self.client, CLUSTER_API_VERSION, MACHINE_KIND, self._on_machine)
        self.watch(self.client, CLUSTER_API_VERSION, MACHINE_DEPLOYMENT_KIND, self._on_machine_deployment)

    def _on_cluster(self, event: str, cluster: dict[str, Any]) -> Iterable[Request]:
        key = (meta(cluster).get("namespace") or "", meta(cluster).get("name", ""))
        if event != "DELETED" and cond.is_true(cluster, CONTROL_PLANE_INITIALIZED):
            self._initialized.add(key)
        else:
            self._initialized.discard(key)
        return (Request.of(cluster),)

    def _on_machine(self, _event: str, machine: dict[str, Any]) -> Iterable[Request]:
        """``controlPlaneMachineToCluster``: a control plane Machine with a Node, while its Cluster's
        control plane is not initialized yet."""
        if not is_control_plane_machine(machine) or not (machine.get("status") or {}).get("nodeRef"):
            return ()
        key = (meta(machine).get("namespace") or "", str((machine.get("spec") or {}).get("clusterName", "")))
        return () if key in self._initialized else (Request(*key),)

    def _on_machine_deployment(self, _event: str, md: dict[str, Any]) -> Iterable[Request]:
        cluster = str((md.get("spec") or {}).get("clusterName", ""))
        return (Request(meta(md).get("namespace") or "", cluster),) if cluster else ()

    def _watch_external(self, api_version: str, kind: str) -> None:
        self.watch(self.client, api_version, kind, self._owner_mapper)

    def reconcile(self, request: Request) -> Result | None:
        cluster = self.get_with_finalizer(CLUSTER_KIND, request, CLUSTER_FINALIZER)
        if cluster is None:
            return None
        original = cluster
        s = Scope(client=self.client, recorder=self.recorder, cluster=copy_json(cluster), now=self.now(),
                  watch=self._watch_external)
        if ccond.set_paused(s.cluster, s.cluster, s.now):
            write(self.client, original, s.cluster)
            return None

        phases = [lambda: reconcile_infrastructure(s), lambda: reconcile_control_plane(s), lambda: get_descendants(s)]
        if is_deleting(cluster):
            phases.append(lambda: reconcile_delete(s))
        elif has_topology(cluster) and not (s.spec.get("controlPlaneRef") and s.spec.get("infrastructureRef")):
            phases = []  # waiting for the topology controller to create and reference the objects
        else:
            phases.append(lambda: reconcile_control_plane_initialized(s))
        errors, requeue = run_phases(phases)
        update_status(s, failed=bool(errors))
        write(self.client, original, s.cluster)
        if errors:
            raise ReconcileError(aggregate(errors))
        return Result(requeue_after=requeue or 0.0)
