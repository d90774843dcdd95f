"""A minimal KubeadmControlPlane controller (``controlplane.cluster.x-k8s.io/v1beta1``): enough of Cluster
API's KCP for machine deletion -- it owns the control plane Machines of a Cluster, keeps the pre-terminate
hook ``pre-terminate.delete.hook.machine.cluster.x-k8s.io/kcp-cleanup`` on them, and removes that hook
from a deleting Machine once the machine controller waits at pre-terminate, after removing the Machine's
etcd member (simulated).

What it does, per KubeadmControlPlane (finalizer ``kubeadm.controlplane.cluster.x-k8s.io``):

- Machines: ``<kcp>-<5 characters>``, with a FakeBootstrapConfig and a FakeMachine cloned from
  ``spec.machineTemplate.infrastructureRef`` (a FakeMachineTemplate) under the same name; labels
  ``cluster.x-k8s.io/cluster-name``, ``cluster.x-k8s.io/control-plane``,
  ``cluster.x-k8s.io/control-plane-name`` and the template's; the template's annotations plus the
  ``kcp-cleanup`` hook; ``spec.version`` and the node drain, volume detach and deletion timeouts of
  ``spec.machineTemplate``; owned by the KubeadmControlPlane.
- Rollout (``RollingUpdate``, ``maxSurge`` 1): a Machine whose ``spec.version`` differs from the KCP's,
  that was created before a passed ``spec.rolloutAfter``, or whose FakeMachine was not cloned from the
  current template is replaced: first a new Machine joins (scale up), then an old one is deleted (scale
  down). Nothing scales while a Machine is being deleted, or while a Machine has no healthy Node
  (``NodeHealthy`` True and its Node Ready) -- the preflight checks, simplified, looked at again every 15 s.
  Scale down picks a Machine annotated
  ``cluster.x-k8s.io/delete-machine``, else the oldest outdated one, else the oldest.
- Pre-terminate hook (``reconcilePreTerminateHook`` of v1.10): acts on the deleting Machine with the
  oldest deletionTimestamp, and only when every deleting Machine still has the hook, when (for
  ``spec.version`` >= v1.31) the Machine has no other pre-terminate hook, and when its
  ``PreTerminateDeleteHookSucceeded`` condition is False with reason ``WaitingExternalHook``. Then, when
  more than one Machine exists, the etcd member of the Machine is removed (:meth:`etcd_members` shows the
  simulated membership: a Machine joins when its Node is healthy), and the hook is removed. It looks
  again every 30 s, and whenever an owned Machine changes.
- Deletion: every Machine is deleted; the finalizer goes once none is left.
- Status: ``replicas``, ``updatedReplicas``, ``readyReplicas``, ``unavailableReplicas``, ``selector``,
  ``version``, ``initialized``, ``ready``.
"""

from __future__ import annotations

import hashlib
from typing import Any

from harness.client import MERGE, ApiError, Client, Controller, Request, Result, owner_mapper
from harness.client.interface import shared_reads
from harness.clock import parse_rfc3339
from harness.kube.conditions import condition_of
from harness.kube.names.capi import (
    BOOTSTRAP_API_VERSION,
    CLONED_FROM_GROUP_KIND_ANNOTATION,
    CLONED_FROM_NAME_ANNOTATION,
    CLUSTER_API_VERSION,
    CLUSTER_KIND,
    CLUSTER_NAME_LABEL,
    CONTROL_PLANE_API_VERSION,
    CONTROL_PLANE_LABEL,
    CONTROL_PLANE_NAME_LABEL,
    DELETE_MACHINE_ANNOTATION,
    FAKE_BOOTSTRAP_CONFIG_KIND,
    KUBEADM_CONTROL_PLANE_KIND,
    MACHINE_KIND,
    NODE_HEALTHY,
    PRE_TERMINATE_DELETE_HOOK_PREFIX,
    PRE_TERMINATE_DELETE_HOOK_SUCCEEDED,
    WAITING_EXTERNAL_HOOK_REASON,
)
from harness.kube.names.core import NODE_READY
from harness.kube.names.meta import RANDOM_ALPHABET
from harness.world.providers.workload import WorkloadClients

FINALIZER = "kubeadm.controlplane.cluster.x-k8s.io"

PRE_TERMINATE_HOOK_CLEANUP_ANNOTATION = PRE_TERMINATE_DELETE_HOOK_PREFIX + "/kcp-cleanup"
# deleteRequeueAfter.
DELETE_REQUEUE_AFTER = 30.0
# preflightFailedRequeueAfter.
PREFLIGHT_FAILED_REQUEUE_AFTER = 15.0
# Kubernetes versions from which the KCP hook waits for the other pre-terminate hooks.
OTHER_HOOKS_FIRST_FROM = (1, 31, 0)
MAX_SURGE = 1
MACHINE_TIMEOUTS = ("nodeDrainTimeout", "nodeVolumeDetachTimeout", "nodeDeletionTimeout")


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("metadata") or {}


def _deleting(obj: dict[str, Any]) -> bool:
    return bool(_meta(obj).get("deletionTimestamp"))


def parse_version(version: str) -> tuple[int, int, int] | None:
    """``major.minor.patch`` of a Kubernetes version (``v`` and pre-release tolerated)."""
    core = version.strip().lstrip("v").split("-")[0].split("+")[0]
    parts = core.split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    return int(parts[0]), int(parts[1]), int(parts[2])


def _created(obj: dict[str, Any]) -> str:
    return str(_meta(obj).get("creationTimestamp") or "")


class KubeadmControlPlaneController(Controller):
    """Owns control plane Machines: creates, rolls out, deletes them, and runs the ``kcp-cleanup`` hook."""

    name = "kubeadm-control-plane"

    def __init__(self, client: Client) -> None:
        super().__init__()
        self.client = client
        self.workloads = WorkloadClients(client)
        # (namespace, cluster) -> names of the Machines whose etcd member is part of the etcd cluster.
        self._etcd: dict[tuple[str, str], set[str]] = {}

    def setup(self) -> None:
        self.watch(self.client, CONTROL_PLANE_API_VERSION, KUBEADM_CONTROL_PLANE_KIND)
        self.watch(self.client, CLUSTER_API_VERSION, MACHINE_KIND, owner_mapper(KUBEADM_CONTROL_PLANE_KIND))

    def etcd_members(self, namespace: str, cluster: str) -> list[str]:
        """The Machines whose (simulated) etcd member is in the Cluster's etcd cluster, sorted."""
        return sorted(self._etcd.get((namespace, cluster), set()))

    # -- reconcile ---------------------------------------------------------------------------------

    def reconcile(self, request: Request) -> Result | None:
        try:
            kcp = self.client.get(
                CONTROL_PLANE_API_VERSION, KUBEADM_CONTROL_PLANE_KIND, request.name, request.namespace
            )
        except ApiError as err:
            if err.code == 404:
                return None
            raise
        finalizers = list(_meta(kcp).get("finalizers") or [])
        if not _deleting(kcp) and FINALIZER not in finalizers:
            self.client.patch(
                CONTROL_PLANE_API_VERSION,
                KUBEADM_CONTROL_PLANE_KIND,
                request.name,
                {"metadata": {"finalizers": finalizers + [FINALIZER]}},
                namespace=request.namespace,
                patch_type=MERGE,
            )
            return None
        cluster = self._cluster_name(kcp)
        if not cluster:
            return None  # waiting for the Cluster to name this control plane
        machines = self._machines(kcp, cluster)
        self._follow_etcd(request.namespace, cluster, machines)
        self._sync_machines(machines)
        self._update_status(kcp, cluster, machines)
        hook = self._reconcile_pre_terminate_hook(kcp, cluster, machines)
        if _deleting(kcp):
            return self._reconcile_delete(kcp, machines) or hook
        return self._reconcile_replicas(kcp, cluster, machines) or hook

    def _cluster_name(self, kcp: dict[str, Any]) -> str:
        label = (_meta(kcp).get("labels") or {}).get(CLUSTER_NAME_LABEL)
        if label:
            return str(label)
        for ref in _meta(kcp).get("ownerReferences") or []:
            if ref.get("kind") == CLUSTER_KIND:
                return str(ref.get("name", ""))
        return ""

    def _machines(self, kcp: dict[str, Any], cluster: str) -> list[dict[str, Any]]:
        selector = f"{CLUSTER_NAME_LABEL}={cluster},{CONTROL_PLANE_LABEL}"
        # Views where the client offers them (shared_reads): the reconcile only reads its Machines (names,
        # conditions, annotations, versions) and writes through patches and deletes.
        items = self.client.list(CLUSTER_API_VERSION, MACHINE_KIND, _meta(kcp).get("namespace"),
                                 label_selector=selector, **shared_reads(self.client))["items"]
        uid = _meta(kcp).get("uid")
        return [
            m
            for m in items
            if any(
                r.get("kind") == KUBEADM_CONTROL_PLANE_KIND and r.get("uid") == uid and r.get("controller")
                for r in _meta(m).get("ownerReferences") or []
            )
        ]

    def _follow_etcd(self, namespace: str, cluster: str, machines: list[dict[str, Any]]) -> None:
        members = self._etcd.setdefault((namespace, cluster), set())
        names = {_meta(m)["name"] for m in machines}
        members.intersection_update(names)
        for machine in machines:
            healthy = condition_of(machine, NODE_HEALTHY)
            if not _deleting(machine) and healthy is not None and healthy.get("status") == "True":
                members.add(_meta(machine)["name"])

    def _sync_machines(self, machines: list[dict[str, Any]]) -> None:
        """Every Machine that is not being deleted carries the ``kcp-cleanup`` hook."""
        for machine in machines:
            if _deleting(machine) or PRE_TERMINATE_HOOK_CLEANUP_ANNOTATION in (_meta(machine).get("annotations") or {}):
                continue
            self.client.patch(CLUSTER_API_VERSION, MACHINE_KIND, _meta(machine)["name"],
                              {"metadata": {"annotations": {PRE_TERMINATE_HOOK_CLEANUP_ANNOTATION: ""}}},
                              namespace=_meta(machine).get("namespace"), patch_type=MERGE)

    def _reconcile_pre_terminate_hook(
        self, kcp: dict[str, Any], cluster: str, machines: list[dict[str, Any]]
    ) -> Result | None:
        deleting = [m for m in machines if _deleting(m)]
        if not deleting:
            return None
        if any(PRE_TERMINATE_HOOK_CLEANUP_ANNOTATION not in (_meta(m).get("annotations") or {}) for m in deleting):
            return Result(requeue_after=DELETE_REQUEUE_AFTER)
        machine = min(deleting, key=lambda m: (str(_meta(m)["deletionTimestamp"]), _meta(m)["name"]))
        version = parse_version(str((kcp.get("spec") or {}).get("version", "")))
        annotations = _meta(machine).get("annotations") or {}
        if version is not None and version >= OTHER_HOOKS_FIRST_FROM and any(
                k.startswith(PRE_TERMINATE_DELETE_HOOK_PREFIX) and k != PRE_TERMINATE_HOOK_CLEANUP_ANNOTATION
                for k in annotations):
            return Result(requeue_after=DELETE_REQUEUE_AFTER)
        condition = condition_of(machine, PRE_TERMINATE_DELETE_HOOK_SUCCEEDED)
        if (
            condition is None
            or condition.get("status") != "False"
            or condition.get("reason") != WAITING_EXTERNAL_HOOK_REASON
        ):
            return Result(requeue_after=DELETE_REQUEUE_AFTER)
        if len(machines) > 1:
            self._etcd.setdefault((_meta(kcp).get("namespace", ""), cluster), set()).discard(_meta(machine)["name"])
        try:
            self.client.patch(CLUSTER_API_VERSION, MACHINE_KIND, _meta(machine)["name"],
                              {"metadata": {"annotations": {PRE_TERMINATE_HOOK_CLEANUP_ANNOTATION: None}}},
                              namespace=_meta(machine).get("namespace"), patch_type=MERGE)
        except ApiError as err:
            if err.code != 404:
                raise
        return Result(requeue_after=DELETE_REQUEUE_AFTER)

    def _reconcile_delete(self, kcp: dict[str, Any], machines: list[dict[str, Any]]) -> Result | None:
        for machine in machines:
            if not _deleting(machine):
                self._delete_machine(machine)
        if machines:
            return Result(requeue_after=DELETE_REQUEUE_AFTER)
        finalizers = [f for f in _meta(kcp).get("finalizers") or [] if f != FINALIZER]
        self.client.patch(
            CONTROL_PLANE_API_VERSION,
            KUBEADM_CONTROL_PLANE_KIND,
            _meta(kcp)["name"],
            {"metadata": {"finalizers": finalizers}},
            namespace=_meta(kcp).get("namespace"),
            patch_type=MERGE,
        )
        return None

    # -- replicas and rollout ----------------------------------------------------------------------

    def _outdated(self, kcp: dict[str, Any], machine: dict[str, Any]) -> bool:
        spec = kcp.get("spec") or {}
        if (machine.get("spec") or {}).get("version") != spec.get("version"):
            return True
        rollout_after = spec.get("rolloutAfter")
        if rollout_after and parse_rfc3339(str(rollout_after)) <= self.now() \
                and parse_rfc3339(_created(machine)) < parse_rfc3339(str(rollout_after)):
            return True
        template = ((spec.get("machineTemplate") or {}).get("infrastructureRef") or {}).get("name")
        infra = (machine.get("spec") or {}).get("infrastructureRef") or {}
        try:
            fake = self.client.get(str(infra.get("apiVersion", "")), str(infra.get("kind", "")),
                                   str(infra.get("name", "")), _meta(machine).get("namespace"),
                                   **shared_reads(self.client))  # only its annotation is read
        except ApiError:
            return False
        cloned_from = (_meta(fake).get("annotations") or {}).get(CLONED_FROM_NAME_ANNOTATION)
        return cloned_from is not None and cloned_from != template

    @staticmethod
    def _healthy(machine: dict[str, Any]) -> bool:
        condition = condition_of(machine, NODE_HEALTHY)
        return bool((machine.get("status") or {}).get("nodeRef")) and condition is not None \
            and condition.get("status") == "True"

    def _joined(self, namespace: str, cluster: str, machine: dict[str, Any]) -> bool:
        """The preflight check: the Machine is healthy and its Node in the workload cluster is Ready."""
        if not self._healthy(machine):
            return False
        remote = self.workloads.get(namespace, cluster)
        if remote is None:
            return False
        try:
            node = remote.get("v1", "Node", str(machine["status"]["nodeRef"].get("name", "")),
                              **shared_reads(remote))  # only its Ready condition is read
        except (ApiError, ConnectionError):
            return False
        ready = condition_of(node, NODE_READY)
        return ready is not None and ready.get("status") == "True"

    def _reconcile_replicas(self, kcp: dict[str, Any], cluster: str, machines: list[dict[str, Any]]) -> Result | None:
        desired = int((kcp.get("spec") or {}).get("replicas", 1) or 0)
        if any(_deleting(m) for m in machines):
            return Result(requeue_after=DELETE_REQUEUE_AFTER)  # waiting for machines to be deleted
        outdated = [m for m in machines if self._outdated(kcp, m)]
        namespace = str(_meta(kcp).get("namespace", ""))
        preflight_ok = all(self._joined(namespace, cluster, m) for m in machines)
        wait = None if preflight_ok else Result(requeue_after=PREFLIGHT_FAILED_REQUEUE_AFTER)
        if outdated:
            if len(machines) < desired + MAX_SURGE:
                if preflight_ok:
                    self._create_machine(kcp, cluster, machines)
                return wait
            if preflight_ok:
                self._delete_machine(self._pick_for_scale_down(machines, outdated))
            return wait
        if len(machines) < desired:
            if not machines or preflight_ok:
                self._create_machine(kcp, cluster, machines)
                return None
            return wait
        if len(machines) > desired:
            if preflight_ok:
                self._delete_machine(self._pick_for_scale_down(machines, []))
            return wait
        return None

    @staticmethod
    def _pick_for_scale_down(machines: list[dict[str, Any]], outdated: list[dict[str, Any]]) -> dict[str, Any]:
        marked = [m for m in machines if DELETE_MACHINE_ANNOTATION in (_meta(m).get("annotations") or {})]
        pool = marked or outdated or machines
        return min(pool, key=lambda m: (_created(m), _meta(m)["name"]))

    def _delete_machine(self, machine: dict[str, Any]) -> None:
        try:
            self.client.delete(
                CLUSTER_API_VERSION, MACHINE_KIND, _meta(machine)["name"], _meta(machine).get("namespace")
            )
        except ApiError as err:
            if err.code != 404:
                raise

    def _machine_name(self, kcp: dict[str, Any], taken: set[str]) -> str:
        """``<kcp>-<5 characters>``: deterministic (from the KCP's uid and a counter), never a taken name."""
        base = f"{_meta(kcp)['name']}-"
        for i in range(10_000):
            digest = hashlib.sha256(f"{_meta(kcp).get('uid')}/{i}".encode()).digest()
            name = base + "".join(RANDOM_ALPHABET[b % len(RANDOM_ALPHABET)] for b in digest[:5])
            if name not in taken:
                try:
                    self.client.get(CLUSTER_API_VERSION, MACHINE_KIND, name, _meta(kcp).get("namespace"))
                except ApiError as err:
                    if err.code == 404:
                        return name
                    raise
        raise RuntimeError(f"no free Machine name for {base}")

    def _create_machine(self, kcp: dict[str, Any], cluster: str, machines: list[dict[str, Any]]) -> None:
        """Clone the infrastructure template, create the bootstrap config, then the Machine owning both."""
        namespace = _meta(kcp).get("namespace")
        spec = kcp.get("spec") or {}
        template = spec.get("machineTemplate") or {}
        template_meta = template.get("metadata") or {}
        infra_ref = template.get("infrastructureRef") or {}
        name = self._machine_name(kcp, {_meta(m)["name"] for m in machines})
        owner = {
            "apiVersion": CONTROL_PLANE_API_VERSION,
            "kind": KUBEADM_CONTROL_PLANE_KIND,
            "name": _meta(kcp)["name"],
            "uid": _meta(kcp).get("uid"),
            "controller": True,
            "blockOwnerDeletion": True,
        }
        labels = {**(template_meta.get("labels") or {}), CLUSTER_NAME_LABEL: cluster, CONTROL_PLANE_LABEL: "",
                  CONTROL_PLANE_NAME_LABEL: _meta(kcp)["name"]}
        infra_template = self.client.get(str(infra_ref.get("apiVersion", "")), str(infra_ref.get("kind", "")),
                                         str(infra_ref.get("name", "")), infra_ref.get("namespace") or namespace)
        cloned = (infra_template.get("spec") or {}).get("template") or {}
        cloned_meta = cloned.get("metadata") or {}
        infra_kind = str(infra_ref.get("kind", "")).removesuffix("Template")
        group = str(infra_ref.get("apiVersion", "")).split("/")[0]
        self.client.create({
            "apiVersion": infra_ref.get("apiVersion"), "kind": infra_kind,
            "metadata": {"name": name, "namespace": namespace,
                         "labels": {**(cloned_meta.get("labels") or {}), **labels},
                         "annotations": {**(cloned_meta.get("annotations") or {}),
                                         CLONED_FROM_NAME_ANNOTATION: str(infra_ref.get("name", "")),
                                         CLONED_FROM_GROUP_KIND_ANNOTATION: f"{infra_ref.get('kind')}.{group}"},
                         "ownerReferences": [owner]},
            "spec": dict(cloned.get("spec") or {}),
        })
        self.client.create({
            "apiVersion": BOOTSTRAP_API_VERSION, "kind": FAKE_BOOTSTRAP_CONFIG_KIND,
            "metadata": {"name": name, "namespace": namespace, "labels": labels, "ownerReferences": [owner]},
            "spec": dict(spec.get("kubeadmConfigSpec") or {}),
        })
        machine_spec: dict[str, Any] = {
            "clusterName": cluster,
            "version": spec.get("version"),
            "bootstrap": {
                "configRef": {
                    "apiVersion": BOOTSTRAP_API_VERSION,
                    "kind": FAKE_BOOTSTRAP_CONFIG_KIND,
                    "name": name,
                    "namespace": namespace,
                }
            },
            "infrastructureRef": {
                "apiVersion": infra_ref.get("apiVersion"),
                "kind": infra_kind,
                "name": name,
                "namespace": namespace,
            },
        }
        for timeout in MACHINE_TIMEOUTS:
            if template.get(timeout) is not None:
                machine_spec[timeout] = template[timeout]
        self.client.create({
            "apiVersion": CLUSTER_API_VERSION, "kind": MACHINE_KIND,
            "metadata": {"name": name, "namespace": namespace, "labels": labels,
                         "annotations": {**(template_meta.get("annotations") or {}),
                                         PRE_TERMINATE_HOOK_CLEANUP_ANNOTATION: ""},
                         "ownerReferences": [owner]},
            "spec": machine_spec,
        })

    # -- status ------------------------------------------------------------------------------------

    def _update_status(self, kcp: dict[str, Any], cluster: str, machines: list[dict[str, Any]]) -> None:
        active = [m for m in machines if not _deleting(m)]
        ready = [m for m in active if self._healthy(m)]
        updated = [m for m in active if (m.get("spec") or {}).get("version") == (kcp.get("spec") or {}).get("version")]
        status = dict(kcp.get("status") or {})
        status.update({
            "selector": f"{CLUSTER_NAME_LABEL}={cluster},{CONTROL_PLANE_LABEL}",
            "replicas": len(active),
            "updatedReplicas": len(updated),
            "readyReplicas": len(ready),
            "unavailableReplicas": len(active) - len(ready),
            "initialized": bool(status.get("initialized")) or bool(ready),
            "ready": bool(ready),
        })
        if ready:
            status["version"] = min((str((m.get("spec") or {}).get("version", "")) for m in ready),
                                    key=lambda v: parse_version(v) or (0, 0, 0))
        if status == (kcp.get("status") or {}):
            return
        kcp["status"] = status
        try:
            self.client.update_status(kcp)
        except ApiError as err:
            if err.code not in (404, 409):
                raise

