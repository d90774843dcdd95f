"""The reference machine controller: Cluster API v1.10's Machine reconciler, as far as machine deletion
needs it, talking to clusters only through the client interface.

Watches: Machines; Clusters (to their Machines); every infrastructure and bootstrap kind a Machine
references (to the owning Machine); the Nodes of each workload cluster it reaches (to the Machine by
``status.nodeRef`` or providerID). A reconcile adds the finalizer, runs the phases of
:mod:`controllers.machine.phases`, then, for a deleting Machine, the sequence of
:mod:`controllers.machine.deletion`; it writes ``status`` (v1beta1 conditions, ``status.v1beta2``
``Deleting``, ``status.deletion``, the phase) with an update of the status subresource and the rest
(finalizers, labels, owner references, spec) with a merge patch. A Cluster that is paused, or a Machine
annotated ``cluster.x-k8s.io/paused``, is left alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from controllers.machine import conditions as cond
from controllers.machine.api import PAUSED_ANNOTATION, annotations, is_control_plane_machine, is_deleting, key, meta
from controllers.machine.cluster_cache import ClusterCache
from controllers.machine.deletion import reconcile_delete
from controllers.machine.errors import ReconcileError, aggregate, go_quote, run_phases
from controllers.machine.phases import (
    reconcile_bootstrap,
    reconcile_infrastructure,
    reconcile_node,
    reconcile_owner_and_labels,
)
from controllers.machine.reconciler import ClusterApiReconciler
from controllers.machine.scope import Scope
from harness.client import (
    MERGE,
    ApiError,
    Client,
    Request,
    Result,
    add_finalizer,
    owner_mapper,
)
from harness.client.interface import shared_reads
from harness.kube.names.capi import (
    CLUSTER_API_VERSION,
    CLUSTER_KIND,
    DELETING,
    MACHINE_FINALIZER,
    MACHINE_KIND,
    PHASE_DELETING,
    PHASE_FAILED,
    PHASE_PENDING,
    PHASE_PROVISIONED,
    PHASE_PROVISIONING,
    PHASE_RUNNING,
)
from harness.kube.names.core import CONDITION_FALSE, CONDITION_TRUE
from harness.kube.objects import clone

EVENT_COMPONENT = "machine-controller"
GET_CLUSTER_ERROR = "failed to get cluster {cluster} for machine {machine} in namespace {namespace}"


@dataclass(frozen=True)
class MachineSummary:
    """What the watch cache knows of a Machine (upstream reads these through its informer cache)."""

    cluster: str
    control_plane: bool
    deleting: bool
    provider_id: str
    node_name: str


def _phase(machine: dict[str, Any]) -> str:
    """``setPhase``: Deleting, Failed, Running, Provisioned, Provisioning or Pending."""
    status = machine.get("status") or {}
    phase = status.get("phase") or PHASE_PENDING
    if status.get("bootstrapReady") and not status.get("infrastructureReady"):
        phase = PHASE_PROVISIONING
    if status.get("infrastructureReady") and not status.get("nodeRef"):
        phase = PHASE_PROVISIONED
    if status.get("nodeRef") and status.get("infrastructureReady"):
        phase = PHASE_RUNNING
    if status.get("failureReason") or status.get("failureMessage"):
        phase = PHASE_FAILED
    if is_deleting(machine):
        phase = PHASE_DELETING
    return str(phase)


class MachineController(ClusterApiReconciler):
    """Reconciles ``cluster.x-k8s.io/v1beta1`` Machines of the management cluster."""

    name = "machine"
    event_component = EVENT_COMPONENT

    def __init__(self, client: Client) -> None:
        super().__init__(client)
        self.clusters = ClusterCache(client)
        self._machines: dict[tuple[str, str], MachineSummary] = {}
        self._by_cluster: dict[tuple[str, str], set[str]] = {}
        self._not_before: dict[Request, float] = {}
        self._owner_mapper = owner_mapper(MACHINE_KIND)
        self._node_mappers: dict[tuple[str, str], Any] = {}
        # (namespace, cluster) -> providerID -> Node name, from the Node watches (upstream's cache index).
        self._nodes: dict[tuple[str, str], dict[str, str]] = {}

    # -- wiring ------------------------------------------------------------------------------------

    def setup(self) -> None:
        self.watch(self.client, CLUSTER_API_VERSION, MACHINE_KIND, self._on_machine)
        self.watch(self.client, CLUSTER_API_VERSION, CLUSTER_KIND, self._on_cluster)

    def _on_machine(self, event: str, machine: dict[str, Any]) -> Iterable[Request]:
        m = meta(machine)
        namespace, name = m.get("namespace") or "", m.get("name", "")
        old = self._machines.pop((namespace, name), None)
        if old is not None:
            self._by_cluster.get((namespace, old.cluster), set()).discard(name)
        if event != "DELETED":
            summary = MachineSummary(
                cluster=str((machine.get("spec") or {}).get("clusterName", "")),
                control_plane=is_control_plane_machine(machine),
                deleting=is_deleting(machine),
                provider_id=str((machine.get("spec") or {}).get("providerID") or ""),
                node_name=str(((machine.get("status") or {}).get("nodeRef") or {}).get("name", "")),
            )
            self._machines[(namespace, name)] = summary
            self._by_cluster.setdefault((namespace, summary.cluster), set()).add(name)
        return (Request(namespace, name),)

    def _on_cluster(self, _event: str, cluster: dict[str, Any]) -> Iterable[Request]:
        m = meta(cluster)
        namespace = m.get("namespace") or ""
        return [Request(namespace, n) for n in sorted(self._by_cluster.get((namespace, m.get("name", "")), ()))]

    def _watch_external(self, api_version: str, kind: str) -> None:
        self.watch(self.client, api_version, kind, self._owner_mapper)

    def _watch_nodes(self, namespace: str, cluster: str, remote: Client) -> None:
        mapper = self._node_mappers.get((namespace, cluster))
        if mapper is None:
            def mapper(event: str, node: dict[str, Any]) -> Iterable[Request]:
                self._index_node(namespace, cluster, event, node)
                return self._machines_for_node(namespace, cluster, node)

            self._node_mappers[(namespace, cluster)] = mapper
        try:
            self.watch(remote, "v1", "Node", mapper)
        except (ApiError, ConnectionError):
            pass  # the cluster is unreachable right now; the next reconcile tries again

    def forget_watches(self, cluster: str) -> None:
        """A workload cluster went away: drop its watches, its client and its Node index."""
        super().forget_watches(cluster)
        namespace, _, name = cluster.partition("/")
        self._nodes.pop((namespace, name), None)
        self.clusters.forget(namespace, name)

    def _index_node(self, namespace: str, cluster: str, event: str, node: dict[str, Any]) -> None:
        index = self._nodes.setdefault((namespace, cluster), {})
        provider_id = str((node.get("spec") or {}).get("providerID") or "")
        if not provider_id:
            return
        if event == "DELETED":
            if index.get(provider_id) == meta(node).get("name"):
                del index[provider_id]
        else:
            index[provider_id] = str(meta(node).get("name", ""))

    def _machines_for_node(self, namespace: str, cluster: str, node: dict[str, Any]) -> list[Request]:
        """``nodeToMachine``: the Machine whose nodeRef names the Node, else the one with its providerID."""
        name = meta(node).get("name", "")
        provider_id = (node.get("spec") or {}).get("providerID") or ""
        candidates = [(n, self._machines[(namespace, n)]) for n in self._by_cluster.get((namespace, cluster), ())
                      if (namespace, n) in self._machines]
        by_node = [n for n, s in candidates if s.node_name == name]
        if len(by_node) == 1:
            return [Request(namespace, by_node[0])]
        by_provider = [n for n, s in candidates if provider_id and s.provider_id == provider_id]
        if len(by_provider) == 1:
            return [Request(namespace, by_provider[0])]
        return []

    def _active_control_plane_machines(self, namespace: str, cluster: str) -> int:
        return sum(1 for n in self._by_cluster.get((namespace, cluster), ())
                   if (s := self._machines.get((namespace, n))) and s.control_plane and not s.deleting)

    # -- reconcile ---------------------------------------------------------------------------------

    def reconcile(self, request: Request) -> Result | None:
        # Both reads are views where the client offers them (shared_reads): the Machine is copied once below for
        # the reconcile to change, and the original stays what was read (what ``_write`` compares with); the
        # Cluster is only read.
        try:
            machine: dict[str, Any] | None = self.client.get(CLUSTER_API_VERSION, MACHINE_KIND, request.name,
                                                             request.namespace, **shared_reads(self.client))
        except ApiError as err:
            if err.code != 404:
                raise
            machine = None
        if machine is None:
            self._not_before.pop(request, None)
            return None
        if add_finalizer(self.client, machine, MACHINE_FINALIZER):
            # Added first, so that a deletion can never race ahead of it.
            return None
        cluster_name = str((machine.get("spec") or {}).get("clusterName", ""))
        try:
            cluster = self.client.get(CLUSTER_API_VERSION, CLUSTER_KIND, cluster_name, request.namespace,
                                      **shared_reads(self.client))
        except ApiError as err:
            raise ReconcileError(GET_CLUSTER_ERROR.format(
                cluster=go_quote(cluster_name), machine=go_quote(request.name),
                namespace=go_quote(request.namespace)) + f": {err.message}") from err
        if (cluster.get("spec") or {}).get("paused") or PAUSED_ANNOTATION in annotations(machine):
            return None
        now = self.now()
        if is_deleting(machine):
            not_before = self._not_before.get(request)
            if not_before is not None and now < not_before:
                return Result(requeue_after=not_before - now)
        return self._reconcile(request, cluster, machine, now)

    def _reconcile(self, request: Request, cluster: dict[str, Any], machine: dict[str, Any], now: float) -> Result:
        namespace, cluster_name = request.namespace, meta(cluster)["name"]

        def defer(until: float) -> None:
            self._not_before[request] = until

        s = Scope(
            management=self.client, recorder=self.recorder, cluster=cluster, machine=clone(machine), now=now,
            remote_client=lambda: self.clusters.client(namespace, cluster_name),
            patch_machine=lambda scope: self._write(scope),
            defer=defer,
            active_control_plane_machines=lambda: self._active_control_plane_machines(namespace, cluster_name),
            watch_nodes=lambda remote: self._watch_nodes(namespace, cluster_name, remote),
            node_hint=lambda provider_id: self._nodes.get((namespace, cluster_name), {}).get(provider_id, ""),
            log_values={"Machine": key(machine), "Cluster": f"{namespace}/{cluster_name}"},
            written=machine,
        )
        phases = [
            lambda: reconcile_owner_and_labels(s),
            lambda: reconcile_bootstrap(s, self._watch_external),
            lambda: reconcile_infrastructure(s, self._watch_external),
            lambda: reconcile_node(s),
        ]
        if is_deleting(machine):
            phases.append(lambda: reconcile_delete(s))
        # Every phase runs even after an earlier one failed (doReconcile); errors are aggregated.
        errors, requeue = run_phases(phases, also=(ConnectionError,))
        self._finish_status(s, failed=bool(errors))
        self._write(s)
        if errors:
            raise ReconcileError(aggregate(errors))
        return Result(requeue_after=requeue or 0.0)

    def _finish_status(self, s: Scope, *, failed: bool) -> None:
        """``updateStatus``: the phase, the Deleting condition and, after a clean run, observedGeneration."""
        m = s.machine
        status = m.setdefault("status", {})
        status["phase"] = _phase(m)
        if not is_deleting(m):
            cond.set_v1beta2(m, DELETING, CONDITION_FALSE, cond.NOT_DELETING_REASON, "", s.now)
        elif s.reconcile_delete_executed:
            cond.set_v1beta2(m, DELETING, CONDITION_TRUE, s.deleting_reason, s.deleting_message, s.now)
        if not failed and meta(m).get("generation"):
            status["observedGeneration"] = meta(m)["generation"]

    # -- writing -----------------------------------------------------------------------------------

    def _write(self, s: Scope) -> None:
        """Write what changed since the last write: status first, then metadata and spec."""
        original = s.written
        current = s.machine
        name, namespace = meta(current)["name"], meta(current).get("namespace")
        if current.get("status") != original.get("status"):
            current["metadata"]["resourceVersion"] = meta(original).get("resourceVersion")
            try:
                written = self.client.update_status(current)
            except ApiError as err:
                if err.code == 404:
                    return
                if err.code != 409:
                    raise
                fresh = self.client.get(CLUSTER_API_VERSION, MACHINE_KIND, name, namespace)
                fresh["status"] = clone(current.get("status"))
                written = self.client.update_status(fresh)
            original = written
            current["metadata"]["resourceVersion"] = meta(written).get("resourceVersion")
        body: dict[str, Any] = {}
        changed_meta = {f: meta(current).get(f) for f in ("labels", "ownerReferences", "finalizers")
                        if meta(current).get(f) != meta(original).get(f)}
        if changed_meta:
            body["metadata"] = changed_meta
        changed_spec = {f: v for f, v in (current.get("spec") or {}).items()
                        if (original.get("spec") or {}).get(f) != v}
        if changed_spec:
            body["spec"] = changed_spec
        if body:
            try:
                written = self.client.patch(CLUSTER_API_VERSION, MACHINE_KIND, name, body, namespace=namespace,
                                            patch_type=MERGE)
            except ApiError as err:
                if err.code != 404:
                    raise
                return
            original = written
            current["metadata"]["resourceVersion"] = meta(written).get("resourceVersion")
        s.written = original
