"""A scenario's world: the clusters, the virtual clock, the simulators and the controllers under test.

Everything runs in one thread on the virtual clock. ``advance(seconds)`` runs due work in time
order; ``settle()`` runs what is due now until nothing is. Each cluster gets its own set of
simulators (kubelet, scheduler, ReplicaSet, Job, garbage collector, namespace, disruption, CSI
attacher, CRD cleanup), each switchable and with knobs a scenario can set.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from controllers.registry import CONTROLLERS, admission_plugins
from controllers.registry import load as load_controller
from harness.apiserver.audit import AuditLog
from harness.apiserver.clusters import MANAGEMENT, ClusterSet
from harness.apiserver.server import APIServer
from harness.client import Controller, InProcessClient, Manager, Request
from harness.clock import EPOCH, Scheduler, VirtualClock
from harness.kube.names.core import SYSTEM_USER
from harness.resources import ResourceError, crd_dir
from harness.world import crd_snapshot
from harness.world.fixtures import FixtureError, apply_documents
from harness.world.workload_clusters import WorkloadClusterProvisioner

# The names of the reference controllers a world can run (the composition root knows them; the targets
# and the steps learn them here, never from ``controllers`` itself).
REFERENCE_CONTROLLERS: tuple[str, ...] = tuple(CONTROLLERS)

# name → "module:Class"; each class takes the cluster's client and is a Controller. The order is the
# manager's priority at an instant: the disruption controller comes after those that change Pods, so its
# PDB syncs coalesce over their changes instead of following each one.
SIMULATORS: dict[str, str] = {
    "namespace": "harness.world.namespace:NamespaceController",
    "garbage-collector": "harness.world.gc:GarbageCollector",
    "crd-cleanup": "harness.world.crd_cleanup:CRDCleanupController",
    "scheduler": "harness.world.scheduler:Scheduler",
    "kubelet": "harness.world.kubelet:Kubelet",
    "replicaset": "harness.world.replicaset:ReplicaSetController",
    "replicationcontroller": "harness.world.replicaset:ReplicationControllerController",
    "job": "harness.world.job:JobController",
    "csi-attacher": "harness.world.csi_attacher:CSIAttacher",
    "disruption": "harness.world.disruption:DisruptionController",
}

# Simulators that only the management cluster runs (they serve Cluster API kinds); same form as SIMULATORS.
MANAGEMENT_SIMULATORS: dict[str, str] = {
    "fake-infrastructure": "harness.world.providers.infrastructure:FakeInfrastructureProvider",
    "fake-bootstrap": "harness.world.providers.bootstrap:FakeBootstrapProvider",
    "kubeadm-control-plane": "harness.world.providers.controlplane:KubeadmControlPlaneController",
    # The reference hook implementing controller: idle until a HIC config is given (harness/world/hic.py).
    "reference-hic": "harness.world.hic:ReferenceHic",
}

# What kube-controller-manager and admission give a fresh cluster (harness/world/cluster_defaults.py):
# only worlds that name them run them (``serve`` does), so scenario worlds start empty.
CLUSTER_DEFAULT_SIMULATORS: dict[str, str] = {
    "serviceaccount": "harness.world.cluster_defaults:ServiceAccounts",
    "root-ca-cert-publisher": "harness.world.cluster_defaults:RootCAPublisher",
    "pvc-protection": "harness.world.cluster_defaults:PVCProtection",
    "pv-protection": "harness.world.cluster_defaults:PVProtection",
}

# The watch cache sends bookmarks to watches that asked for them about once a minute.
BOOKMARK_INTERVAL = 60.0


def _load(path: str) -> Callable[[Any], Controller]:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]


class World:
    """Clusters, clock and controllers of one scenario (or one ``serve`` process)."""

    def __init__(
        self,
        *,
        simulators: list[str] | None = None,
        start: float = EPOCH,
        follow_wall_time: bool = False,
        audit: bool = True,
        history: int | None = None,
        crds: bool = True,
        controllers: list[str] | None = None,
        history_bytes: int | None = None,
        audit_max_records: int | None = None,
        audit_max_bytes: int | None = None,
    ) -> None:
        # Retention (None: unbounded, what scenarios want): ``history``/``history_bytes`` bound each
        # cluster's watch history, ``audit_max_records``/``audit_max_bytes`` the audit trail.
        self.clock = VirtualClock(start, follow_wall_time=follow_wall_time)
        self.scheduler = Scheduler(self.clock)
        self.audit = AuditLog(enabled=audit, max_records=audit_max_records, max_bytes=audit_max_bytes)
        self.clusters = ClusterSet(self.clock, audit=self.audit, history=history, history_bytes=history_bytes)
        self.manager = Manager(self.scheduler)
        everything = list(SIMULATORS) + list(MANAGEMENT_SIMULATORS)
        self.simulator_names = everything if simulators is None else list(simulators)
        self.controller_names = list(CONTROLLERS) if controllers is None else list(controllers)
        self._controllers: dict[str, Controller] = {}
        self._simulators: dict[tuple[str, str], Controller] = {}
        self._cluster_hooks: list[Callable[[str], None]] = []
        self._kubeconfigs: dict[tuple[str, str, str | None, bytes | None], str] = {}
        self._install_simulators(MANAGEMENT)
        self.scheduler.call_later(BOOKMARK_INTERVAL, self._bookmarks)
        self._provisioner: WorkloadClusterProvisioner | None = None
        if crds:
            # The kinds the world serves beyond Kubernetes (Cluster API's Cluster, ...): their CRDs' writes
            # are made once per process and replayed here (harness/world/crd_snapshot.py), unless this
            # management cluster is not as fresh as the snapshot's was.
            try:
                documents = crd_snapshot.documents(crd_dir())
            except FixtureError as err:  # a packaged CRD that cannot be parsed: the kit is damaged
                first = str(err).splitlines()[0]
                raise ResourceError(f"packaged resource fixtures/crds is corrupt ({first}); reinstall lifecycle-tck") \
                    from None
            snapshot = crd_snapshot.snapshot_for(documents, start)
            if snapshot.fits(self.management, self.audit):
                snapshot.replay(self.management)
            else:
                apply_documents(self.client(MANAGEMENT, "system:admin"), documents.fresh())
            self._provisioner = WorkloadClusterProvisioner(
                self.client(MANAGEMENT, SYSTEM_USER.format("workload-clusters")),
                ensure=self.add_cluster, remove=self.remove_cluster,
                kubeconfig=self._kubeconfig,
            )
            self.manager.add(self._provisioner)
            self._install_management()

    # -- clusters ----------------------------------------------------------------------------------

    @property
    def management(self) -> APIServer:
        return self.clusters.management

    def add_cluster(self, name: str) -> APIServer:
        """Create a workload cluster (with its own simulators) if it does not exist."""
        existing = self.clusters.get(name)
        if existing is not None:
            return existing
        server = self.clusters.add(name)
        self._install_simulators(name)
        for hook in self._cluster_hooks:
            hook(name)
        return server

    def remove_cluster(self, name: str) -> None:
        """Take a workload cluster away: its API becomes unreachable, its simulators stop."""
        for (cluster, sim_name), controller in list(self._simulators.items()):
            if cluster == name:
                self.manager.remove(controller)
                del self._simulators[(cluster, sim_name)]
        for controller in self.manager.controllers:
            controller.forget_watches(name)
        self.clusters.remove(name)
        for hook in self._cluster_hooks:
            hook(name)

    def _kubeconfig(self, name: str) -> str:
        """The kubeconfig of the workload cluster ``name`` (its Secret's content). The provisioner asks at
        each event of the Cluster; the text changes only with where and how the clusters are served."""
        key = (name, self.clusters.base_url, self.clusters.token, self.clusters.ca_pem)
        text = self._kubeconfigs.get(key)
        if text is None:
            text = self._kubeconfigs[key] = self.clusters.kubeconfig([name], current=name)
        return text

    def _bookmarks(self) -> None:
        for server in self.clusters:
            server.store.bookmark()
        self.scheduler.call_later(BOOKMARK_INTERVAL, self._bookmarks)

    def set_base_url(self, url: str, token: str | None = None) -> None:
        """Where the clusters are served (``serve``); kubeconfig Secrets are rewritten to match."""
        self.clusters.base_url = url
        self.clusters.token = token
        if self._provisioner is not None:
            for item in self.client().list("cluster.x-k8s.io/v1beta1", "Cluster")["items"]:
                self._provisioner.enqueue(Request.of(item))
        self.settle()

    def on_clusters_changed(self, hook: Callable[[str], None]) -> None:
        """Call ``hook(name)`` whenever a workload cluster comes or goes."""
        self._cluster_hooks.append(hook)

    def client(self, cluster: str = MANAGEMENT, user: str = "admin") -> InProcessClient:
        """An in-process client of ``cluster`` acting as ``user``."""
        return InProcessClient(self.clusters, cluster, user)

    # -- controllers -------------------------------------------------------------------------------

    def _install_simulators(self, cluster: str) -> None:
        per_cluster = {**SIMULATORS, **CLUSTER_DEFAULT_SIMULATORS}
        for name in [n for n in self.simulator_names if n in per_cluster]:
            factory = _load(per_cluster[name])
            controller = factory(self.client(cluster, SYSTEM_USER.format(name)))
            # A simulator standing for an admission plugin too (StorageObjectInUseProtection) brings it;
            # one publishing the cluster's CA reads it from the clusters (serve sets it).
            server = self.clusters.get(cluster)
            for group, kind, plugin in getattr(controller, "admission_plugins", list)():
                assert server is not None
                server.add_admission(group, kind, plugin)
            if hasattr(controller, "ca_source"):
                controller.ca_source = lambda: self.clusters.ca_pem
            self._simulators[(cluster, name)] = controller
            self.manager.add(controller)

    def _install_management(self) -> None:
        """What needs the Cluster API kinds: their webhooks, the management-only simulators and the
        reference controllers (all in-process, on the management cluster)."""
        for group, kind, plugin in admission_plugins():
            self.management.add_admission(group, kind, plugin)
        for name in [n for n in self.simulator_names if n in MANAGEMENT_SIMULATORS]:
            controller = _load(MANAGEMENT_SIMULATORS[name])(self.client(MANAGEMENT, SYSTEM_USER.format(name)))
            self._simulators[(MANAGEMENT, name)] = controller
            self.manager.add(controller)
        for name in self.controller_names:
            controller = load_controller(name)(self.client(MANAGEMENT, SYSTEM_USER.format(name)))
            self._controllers[name] = controller
            self.manager.add(controller)

    def controller(self, name: str) -> Any:
        """The reference controller ``name`` running in this world."""
        return self._controllers[name]

    def simulator(self, name: str, cluster: str = MANAGEMENT) -> Any:
        """The simulator ``name`` of ``cluster``, to read or set its knobs."""
        return self._simulators[(cluster, name)]

    def set_enabled(self, name: str, enabled: bool, cluster: str | None = None) -> None:
        """Switch a simulator or reference controller off (its events wait) or on again, in one cluster or all."""
        for (c, n), controller in self._simulators.items():
            if n == name and (cluster is None or c == cluster):
                controller.enabled = enabled
        if name in self._controllers and cluster in (None, MANAGEMENT):
            self._controllers[name].enabled = enabled

    def restart_controllers(self, names: list[str] | None = None) -> list[str]:
        """Restart the reference controllers ``names`` (default: every one this world runs), as a
        crash and restart would: each instance stops (its watches end, its queue and timers are
        lost) and a new instance with nothing in memory takes its place, starting from a fresh
        list+watch. The names restarted; KeyError naming a controller this world does not run."""
        chosen = list(self.controller_names) if names is None else list(names)
        unknown = [name for name in chosen if name not in self._controllers]
        if unknown:
            raise KeyError(f"no reference controller {', '.join(map(repr, unknown))} runs in this world")
        for name in chosen:
            old = self._controllers[name]
            place, enabled = self.manager.controllers.index(old), old.enabled
            self.manager.remove(old)
            fresh = load_controller(name)(self.client(MANAGEMENT, SYSTEM_USER.format(name)))
            fresh.enabled = enabled  # a controller switched off (set_enabled) stays off
            self._controllers[name] = fresh
            self.manager.add(fresh)
            # Back in its place, so the order in which controllers take turns stays the same.
            self.manager.controllers.insert(place, self.manager.controllers.pop())
        return chosen

    def add_controller(self, controller: Controller) -> Controller:
        """Run a controller (a reference controller or a test's own) in this world."""
        return self.manager.add(controller)

    # -- time --------------------------------------------------------------------------------------

    def now(self) -> float:
        return self.clock.now()

    @property
    def follows_wall_time(self) -> bool:
        return self.clock.follows_wall_time

    def settle(self) -> int:
        """Run everything due now, until nothing is."""
        return self.manager.settle()

    def advance(self, seconds: float) -> None:
        """Move virtual time forward, running due work in order and settling."""
        self.manager.advance(seconds)

    def advance_until(
        self, target: float, *, stop_after_write: bool = False, pause: Callable[[], bool] | None = None
    ) -> tuple[float, bool]:
        """Move virtual time forward to ``target`` as :meth:`advance` does; the time reached, and
        whether anything was written on the way. With ``stop_after_write`` it stops at the first
        instant at which any cluster was written to, so controllers in another process see that
        write at the instant it happened. ``pause``, asked after each settled instant, stops the
        run early when it answers True (the served world advances in slices of wall time); call
        again to go on."""
        before = self._writes()
        changed = lambda: self._writes() != before  # noqa: E731 - asked after every instant
        stops = [check for check in (changed if stop_after_write else None, pause) if check is not None]
        stop = (lambda: any(check() for check in stops)) if stops else None
        reached = self.manager.advance_until(target, stop)
        return reached, changed()

    def _writes(self) -> list[tuple[str, int]]:
        # Every write moves its cluster's resourceVersion, and nothing else does.
        return [(server.name, server.store.resource_version) for server in self.clusters]

    def next_due(self) -> float | None:
        """When the world next has work due (a simulator's timer, a bookmark), or None."""
        return self.scheduler.next_due()

    def retry_due(self) -> float | None:
        """When a controller next retries a request the apiserver failed, or None (see
        :meth:`Manager.retry_due`)."""
        return self.manager.retry_due()

    def errors(self) -> list[str]:
        """Reconcile failures any controller has seen (they are retried, never fatal)."""
        out: list[str] = []
        for controller in self.manager.controllers:
            out.extend(controller.errors)
        return out
