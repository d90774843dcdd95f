"""The reference MachineDeployment controller: Cluster API v1.10's MachineDeployment reconciler on the
client interface.

A reconcile adds the ``cluster.x-k8s.io/machinedeployment`` finalizer first and stops at a paused
Cluster or MachineDeployment (v1beta2 ``Paused``). A MachineDeployment being deleted deletes its
MachineSets and drops the finalizer once they are gone. Otherwise it is owned by its Cluster, adopts the
MachineSets its selector matches, and rolls out:

- the new MachineSet is the one whose template matches ``spec.template`` (in-place mutable fields
  aside); without one, ``<md>-<5 characters>`` is created with the label
  ``machine-template-hash: <hash>-<5 characters>`` on itself, its selector and its template, the
  ``cluster.x-k8s.io/deployment-name`` label, and the revision annotations
  (``machinedeployment.clusters.x-k8s.io/revision``, ``.../desired-replicas``, ``.../max-replicas``);
  the MachineDeployment carries the new MachineSet's revision;
- ``RollingUpdate``: the new MachineSet grows while the total stays within replicas + ``maxSurge``;
  old MachineSets shrink (unavailable Machines first) while the available Machines stay at least
  replicas - ``maxUnavailable``; a scale-down of the MachineDeployment shrinks the new MachineSet, whose
  delete policy picks the Machines;
- ``OnDelete``: old MachineSets stop creating Machines (``cluster.x-k8s.io/disable-machine-create``) and
  shrink only as their Machines are deleted by someone else; the new MachineSet makes up the difference;
- once complete, old MachineSets with no replicas beyond ``spec.revisionHistoryLimit`` are deleted.

Status: ``replicas``, ``updatedReplicas``, ``readyReplicas``, ``availableReplicas``,
``unavailableReplicas``, ``selector``, ``phase``, ``observedGeneration``; v1beta1 ``Available``,
``MachineSetReady`` and the ``Ready`` summary of ``Available``. ``spec.paused`` (proportional scaling
of a paused MachineDeployment) is not implemented: a paused MachineDeployment only reports status.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from controllers.cluster import conditions as ccond
from controllers.cluster.api import ensure_owner_ref, owner_reference
from controllers.cluster.patch import copy_json, write
from controllers.machine import conditions as cond
from controllers.machine.api import is_deleting, labels, meta
from controllers.machine.errors import ReconcileError, go_quote
from controllers.machine.reconciler import ClusterApiReconciler
from controllers.machineset import rollout
from controllers.machineset.api import (
    DESIRED_REPLICAS_ANNOTATION,
    DISABLE_MACHINE_CREATE_ANNOTATION,
    MACHINE_DEPLOYMENT_AVAILABLE,
    MACHINE_DEPLOYMENT_FINALIZER,
    MACHINE_DEPLOYMENT_UNIQUE_LABEL,
    MACHINE_SET_NOT_FOUND_MESSAGE,
    MACHINE_SET_READY,
    MAX_GENERATED_BASE_LENGTH,
    MAX_REPLICAS_ANNOTATION,
    MINIMUM_AVAILABILITY_MESSAGE,
    ON_DELETE,
    PHASE_SCALING_DOWN,
    PHASE_SCALING_UP,
    REVISION_ANNOTATION,
    ROLLING_UPDATE,
    WAITING_FOR_AVAILABLE_MACHINES_REASON,
    WAITING_FOR_MACHINE_SET_REASON,
    creation_key,
    generate_suffix,
    get_cluster,
    replicas,
    selector_matches,
    selector_string,
    status_int,
)
from harness.client import (
    MERGE,
    NORMAL,
    WARNING,
    ApiError,
    Client,
    Request,
    Result,
)
from harness.kube.names.capi import (
    CLUSTER_API_VERSION,
    CLUSTER_KIND,
    CLUSTER_NAME_LABEL,
    MACHINE_DEPLOYMENT_KIND,
    MACHINE_DEPLOYMENT_NAME_LABEL,
    MACHINE_KIND,
    MACHINE_SET_KIND,
    PHASE_FAILED,
    PHASE_RUNNING,
)
from harness.kube.names.events import FAILED_CREATE, SUCCESSFUL_ADOPT, SUCCESSFUL_CREATE, SUCCESSFUL_DELETE
from harness.kube.ownerrefs import controller_of, is_controlled_by

EVENT_COMPONENT = "machinedeployment-controller"

# Events.
SUCCESSFUL_CREATE_MESSAGE = "Created MachineSet {key}"
FAILED_CREATE_MESSAGE = "Failed to create MachineSet {key}: {err}"
SUCCESSFUL_SCALE = "SuccessfulScale"
SUCCESSFUL_SCALE_MESSAGE = "Scaled MachineSet {key}: {old} -> {new}"
FAILED_SCALE = "FailedScale"
FAILED_SCALE_MESSAGE = "Failed to scale MachineSet {key}: {err}"
SUCCESSFUL_DELETE_MESSAGE = "Deleted MachineSet {name}"
SUCCESSFUL_ADOPT_MESSAGE = "Adopted MachineSet {name}"

MISSING_STRATEGY = "missing MachineDeployment strategy"
UNEXPECTED_STRATEGY = "unexpected deployment strategy type: {strategy}"


@dataclass
class Scope:
    """What one reconcile of a MachineDeployment reads and decides."""

    md: dict[str, Any]
    cluster: dict[str, Any]
    now: float
    machine_sets: list[dict[str, Any]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return str(meta(self.md)["name"])

    @property
    def namespace(self) -> str:
        return str(meta(self.md).get("namespace") or "")

    @property
    def spec(self) -> dict[str, Any]:
        return self.md.setdefault("spec", {})  # type: ignore[no-any-return]


class MachineDeploymentController(ClusterApiReconciler):
    """Reconciles ``cluster.x-k8s.io/v1beta1`` MachineDeployments of the management cluster."""

    name = "machinedeployment"
    event_component = EVENT_COMPONENT

    def __init__(self, client: Client) -> None:
        super().__init__(client)
        # (namespace, name) -> cluster name of every MachineDeployment, from the watch.
        self._deployments: dict[tuple[str, str], str] = {}

    def setup(self) -> None:
        self.watch(self.client, CLUSTER_API_VERSION, MACHINE_DEPLOYMENT_KIND, self._on_deployment)
        self.watch(self.client, CLUSTER_API_VERSION, MACHINE_SET_KIND, self._on_machine_set)
        self.watch(self.client, CLUSTER_API_VERSION, CLUSTER_KIND, self._on_cluster)

    def _on_deployment(self, event: str, md: dict[str, Any]) -> Iterable[Request]:
        key = (meta(md).get("namespace") or "", meta(md).get("name", ""))
        if event == "DELETED":
            self._deployments.pop(key, None)
        else:
            self._deployments[key] = str((md.get("spec") or {}).get("clusterName", ""))
        return (Request(*key),)

    def _on_machine_set(self, _event: str, ms: dict[str, Any]) -> Iterable[Request]:
        namespace = meta(ms).get("namespace") or ""
        owner = controller_of(ms)
        if owner is not None:
            return (Request(namespace, str(owner.get("name", ""))),) if owner.get("kind") == MACHINE_DEPLOYMENT_KIND \
                else ()
        name = labels(ms).get(MACHINE_DEPLOYMENT_NAME_LABEL)
        return (Request(namespace, name),) if name else ()

    def _on_cluster(self, _event: str, cluster: dict[str, Any]) -> Iterable[Request]:
        namespace, name = meta(cluster).get("namespace") or "", meta(cluster).get("name", "")
        return [Request(*key) for key, c in sorted(self._deployments.items()) if key[0] == namespace and c == name]

    # -- reconcile ---------------------------------------------------------------------------------

    def reconcile(self, request: Request) -> Result | None:
        md = self.get_with_finalizer(MACHINE_DEPLOYMENT_KIND, request, MACHINE_DEPLOYMENT_FINALIZER)
        if md is None:
            return None
        cluster = get_cluster(self.client, md)
        s = Scope(md=copy_json(md), cluster=cluster, now=self.now())
        if ccond.set_paused(cluster, s.md, s.now):
            write(self.client, md, s.md)
            return None
        error: str | None = None
        try:
            if is_deleting(md):
                self._reconcile_delete(s)
            else:
                self._reconcile(s)
        except ReconcileError as err:
            error = str(err)
        except ApiError as err:
            error = err.message
        if error is None and meta(s.md).get("generation"):
            s.md.setdefault("status", {})["observedGeneration"] = meta(s.md)["generation"]
        ccond.summarize(s.md, (MACHINE_DEPLOYMENT_AVAILABLE,), s.now)
        write(self.client, md, s.md)
        if error is not None:
            raise ReconcileError(error)
        return None

    def _event(self, s: Scope, event_type: str, reason: str, message: str) -> None:
        self.recorder.event(s.md, event_type, reason, message)

    def _reconcile_delete(self, s: Scope) -> None:
        self._get_and_adopt_machine_sets(s)
        if not s.machine_sets:
            meta(s.md)["finalizers"] = [f for f in meta(s.md).get("finalizers") or []
                                        if f != MACHINE_DEPLOYMENT_FINALIZER]
            return
        for ms in s.machine_sets:
            if is_deleting(ms):
                continue
            try:
                self.client.delete(CLUSTER_API_VERSION, MACHINE_SET_KIND, meta(ms)["name"], s.namespace)
            except ApiError as err:
                if err.code != 404:
                    raise ReconcileError(f"failed to delete MachineSet {s.namespace}/{meta(ms)['name']}: "
                                         f"{err.message}") from err

    def _reconcile(self, s: Scope) -> None:
        metadata = s.md.setdefault("metadata", {})
        metadata["labels"] = {**(metadata.get("labels") or {}), CLUSTER_NAME_LABEL: s.spec.get("clusterName", "")}
        metadata["ownerReferences"] = ensure_owner_ref(metadata.get("ownerReferences") or [],
                                                       owner_reference(s.cluster))
        self._get_and_adopt_machine_sets(s)
        for ms in s.machine_sets:
            if labels(ms).get(MACHINE_DEPLOYMENT_NAME_LABEL) != s.name:
                written = self.client.patch(CLUSTER_API_VERSION, MACHINE_SET_KIND, meta(ms)["name"],
                                            {"metadata": {"labels": {MACHINE_DEPLOYMENT_NAME_LABEL: s.name}}},
                                            namespace=s.namespace, patch_type=MERGE)
                ms.clear()
                ms.update(written)
        if s.spec.get("paused"):
            self._sync_status(s, rollout.find_new_machine_set(s.md, s.machine_sets), s.machine_sets)
            return
        kind = (s.spec.get("strategy") or {}).get("type")
        if not s.spec.get("strategy"):
            raise ReconcileError(MISSING_STRATEGY)
        if kind not in (ROLLING_UPDATE, ON_DELETE):
            raise ReconcileError(UNEXPECTED_STRATEGY.format(strategy=kind))
        new_ms, old_sets = self._new_and_old(s)
        all_sets = old_sets + [new_ms]
        if kind == ROLLING_UPDATE:
            self._reconcile_new(s, all_sets, new_ms)
            self._sync_status(s, new_ms, all_sets)
            self._reconcile_old_rolling(s, all_sets, old_sets, new_ms)
        else:
            self._remove_disable_create(s, new_ms)
            self._reconcile_new(s, all_sets, new_ms)
            self._sync_status(s, new_ms, all_sets)
            self._reconcile_old_on_delete(s, all_sets, old_sets)
        self._sync_status(s, new_ms, all_sets)
        if rollout.deployment_complete(s.md):
            self._cleanup(s, old_sets)

    def _get_and_adopt_machine_sets(self, s: Scope) -> None:
        """``getAndAdoptMachineSetsForDeployment``: MachineSets controlled by this MachineDeployment, or
        matching its selector and controlled by nothing (adopted)."""
        found = []
        for ms in self.client.list(CLUSTER_API_VERSION, MACHINE_SET_KIND, s.namespace)["items"]:
            try:
                matches = selector_matches(s.spec.get("selector"), labels(ms))
            except ValueError:
                continue
            controlled = is_controlled_by(ms, s.md)
            if not matches and not controlled:
                continue
            if controller_of(ms) is None:
                refs = ensure_owner_ref(meta(ms).get("ownerReferences") or [],
                                        owner_reference(s.md, controller=True))
                ms = self.client.patch(CLUSTER_API_VERSION, MACHINE_SET_KIND, meta(ms)["name"],
                                       {"metadata": {"ownerReferences": refs}}, namespace=s.namespace,
                                       patch_type=MERGE)
                self._event(s, NORMAL, SUCCESSFUL_ADOPT,
                            SUCCESSFUL_ADOPT_MESSAGE.format(name=go_quote(meta(ms)["name"])))
                controlled = True
            if controlled:
                found.append(ms)
        s.machine_sets = found

    # -- the new MachineSet ------------------------------------------------------------------------

    def _new_and_old(self, s: Scope) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """``getAllMachineSetsAndSyncRevision``: the new MachineSet (created when missing, its in-place
        fields brought in step otherwise) and the old ones; the MachineDeployment gets its revision."""
        matching = rollout.find_new_machine_set(s.md, s.machine_sets)
        old_sets = [ms for ms in s.machine_sets if matching is None or meta(ms)["uid"] != meta(matching)["uid"]]
        if matching is not None:
            new_ms = self._update_machine_set(s, matching, old_sets)
        else:
            new_ms = self._create_machine_set(s, old_sets)
        s.md["metadata"]["annotations"] = {
            **(meta(s.md).get("annotations") or {}),
            REVISION_ANNOTATION: (meta(new_ms).get("annotations") or {}).get(REVISION_ANNOTATION, ""),
        }
        return new_ms, old_sets

    def _desired(self, s: Scope, existing: dict[str, Any] | None,
                 old_sets: list[dict[str, Any]]) -> dict[str, Any]:
        """``computeDesiredMachineSet``: name, unique label, replicas and template spec are kept for an
        existing MachineSet; labels, annotations and the in-place fields come from the MachineDeployment."""
        template = s.spec.get("template") or {}
        template_labels = dict((template.get("metadata") or {}).get("labels") or {})
        if existing is None:
            base = f"{s.name}-"[:MAX_GENERATED_BASE_LENGTH]
            taken = {meta(ms)["name"] for ms in s.machine_sets}
            suffix = ""
            for i in range(10_000):
                suffix = generate_suffix(f"{meta(s.md).get('uid')}/{i}")
                if base + suffix not in taken:
                    break
            name = base + suffix
            unique = f"{rollout.template_hash(template)}-{suffix}"
            count = rollout.new_ms_new_replicas(s.md, old_sets, 0)
            template_spec = copy_json(template.get("spec") or {})
        else:
            name = meta(existing)["name"]
            unique = labels(existing).get(MACHINE_DEPLOYMENT_UNIQUE_LABEL, "")
            count = replicas(existing)
            template_spec = copy_json(((existing.get("spec") or {}).get("template") or {}).get("spec") or {})
        md_template_spec = template.get("spec") or {}
        for in_place in ("readinessGates", "nodeDrainTimeout", "nodeDeletionTimeout", "nodeVolumeDetachTimeout"):
            if md_template_spec.get(in_place) is not None:
                template_spec[in_place] = md_template_spec[in_place]
            else:
                template_spec.pop(in_place, None)
        selector = copy_json(s.spec.get("selector") or {})
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), MACHINE_DEPLOYMENT_UNIQUE_LABEL: unique}
        spec: dict[str, Any] = {
            "replicas": count, "clusterName": s.spec.get("clusterName"), "selector": selector,
            "minReadySeconds": int(s.spec.get("minReadySeconds") or 0),
            "template": {"metadata": {"labels": {**template_labels, MACHINE_DEPLOYMENT_UNIQUE_LABEL: unique},
                                      "annotations": dict((template.get("metadata") or {}).get("annotations") or {})},
                         "spec": template_spec},
        }
        delete_policy = ((s.spec.get("strategy") or {}).get("rollingUpdate") or {}).get("deletePolicy")
        if delete_policy:
            spec["deletePolicy"] = delete_policy
        return {
            "apiVersion": CLUSTER_API_VERSION, "kind": MACHINE_SET_KIND,
            "metadata": {"name": name, "namespace": s.namespace,
                         "labels": {**template_labels, MACHINE_DEPLOYMENT_UNIQUE_LABEL: unique,
                                    MACHINE_DEPLOYMENT_NAME_LABEL: s.name},
                         "annotations": rollout.machine_set_annotations(s.md, old_sets, existing),
                         "ownerReferences": [owner_reference(s.md, controller=True)]},
            "spec": spec,
        }

    def _create_machine_set(self, s: Scope, old_sets: list[dict[str, Any]]) -> dict[str, Any]:
        desired = self._desired(s, None, old_sets)
        key = f"{s.namespace}/{meta(desired)['name']}"
        try:
            created = self.client.create(desired)
        except ApiError as err:
            self._event(s, WARNING, FAILED_CREATE, FAILED_CREATE_MESSAGE.format(key=key, err=err.message))
            raise ReconcileError(f"failed to create new MachineSet {key}: {err.message}") from err
        self._event(s, NORMAL, SUCCESSFUL_CREATE, SUCCESSFUL_CREATE_MESSAGE.format(key=key))
        s.machine_sets.append(created)
        return created

    def _update_machine_set(self, s: Scope, ms: dict[str, Any], old_sets: list[dict[str, Any]]) -> dict[str, Any]:
        """Bring the in-place fields (labels, annotations, template metadata, timeouts, minReadySeconds,
        deletePolicy) of the new MachineSet in step; its replicas and template spec otherwise stay."""
        desired = self._desired(s, ms, old_sets)
        current = copy_json(ms)
        current["metadata"]["labels"] = {**labels(ms), **desired["metadata"]["labels"]}
        current["metadata"]["annotations"] = {**(meta(ms).get("annotations") or {}),
                                              **desired["metadata"]["annotations"]}
        spec = current.setdefault("spec", {})
        spec["minReadySeconds"] = desired["spec"]["minReadySeconds"]
        if "deletePolicy" in desired["spec"]:
            spec["deletePolicy"] = desired["spec"]["deletePolicy"]
        template = spec.setdefault("template", {})
        template["metadata"] = desired["spec"]["template"]["metadata"]
        template["spec"] = desired["spec"]["template"]["spec"]
        written = write(self.client, ms, current)
        return written if written is not None else ms

    # -- scaling -----------------------------------------------------------------------------------

    def _scale(self, s: Scope, ms: dict[str, Any], count: int) -> None:
        """``scaleMachineSet``: replicas and the desired/max-replicas annotations, in place."""
        desired = str(replicas(s.md))
        most = str(replicas(s.md) + rollout.max_surge(s.md))
        notes = meta(ms).get("annotations") or {}
        if replicas(ms) == count and notes.get(DESIRED_REPLICAS_ANNOTATION) == desired \
                and notes.get(MAX_REPLICAS_ANNOTATION) == most:
            return
        before = replicas(ms)
        key = f"{s.namespace}/{meta(ms)['name']}"
        body = {"metadata": {"annotations": {DESIRED_REPLICAS_ANNOTATION: desired, MAX_REPLICAS_ANNOTATION: most}},
                "spec": {"replicas": count}}
        try:
            written = self.client.patch(
                CLUSTER_API_VERSION, MACHINE_SET_KIND, meta(ms)["name"], body, namespace=s.namespace, patch_type=MERGE
            )
        except ApiError as err:
            self._event(s, WARNING, FAILED_SCALE, FAILED_SCALE_MESSAGE.format(key=key, err=err.message))
            raise
        ms.clear()
        ms.update(written)
        self._event(s, NORMAL, SUCCESSFUL_SCALE, SUCCESSFUL_SCALE_MESSAGE.format(key=key, old=before, new=count))

    def _reconcile_new(self, s: Scope, all_sets: list[dict[str, Any]], new_ms: dict[str, Any]) -> None:
        """``reconcileNewMachineSet``."""
        wanted = replicas(s.md)
        if replicas(new_ms) == wanted:
            return
        if replicas(new_ms) > wanted:
            self._scale(s, new_ms, wanted)
            return
        self._scale(s, new_ms, rollout.new_ms_new_replicas(s.md, all_sets, replicas(new_ms)))

    def _reconcile_old_rolling(self, s: Scope, all_sets: list[dict[str, Any]], old_sets: list[dict[str, Any]],
                               new_ms: dict[str, Any]) -> None:
        """``reconcileOldMachineSets``: shrink old MachineSets, unavailable Machines first, keeping at
        least replicas - maxUnavailable available."""
        if rollout.total_replicas(old_sets) == 0:
            return
        min_available = replicas(s.md) - rollout.max_unavailable(s.md)
        new_unavailable = replicas(new_ms) - status_int(new_ms, "availableReplicas")
        max_scaled_down = rollout.total_replicas(all_sets) - min_available - new_unavailable
        if max_scaled_down <= 0:
            return
        ordered = sorted(old_sets, key=creation_key)
        cleaned = 0
        for ms in ordered:
            if cleaned >= max_scaled_down:
                break
            count, available = replicas(ms), status_int(ms, "availableReplicas")
            if count == 0 or count == available:
                continue
            down = min(max_scaled_down - cleaned, count - available)
            self._scale(s, ms, count - down)
            cleaned += down
        available_total = rollout.total_status(old_sets + [new_ms], "availableReplicas")
        if available_total <= min_available:
            return
        to_scale_down = available_total - min_available
        scaled = 0
        for ms in ordered:
            if scaled >= to_scale_down:
                break
            if replicas(ms) == 0:
                continue
            down = min(replicas(ms), to_scale_down - scaled)
            self._scale(s, ms, replicas(ms) - down)
            scaled += down

    def _remove_disable_create(self, s: Scope, new_ms: dict[str, Any]) -> None:
        if DISABLE_MACHINE_CREATE_ANNOTATION in (meta(new_ms).get("annotations") or {}):
            written = self.client.patch(CLUSTER_API_VERSION, MACHINE_SET_KIND, meta(new_ms)["name"],
                                        {"metadata": {"annotations": {DISABLE_MACHINE_CREATE_ANNOTATION: None}}},
                                        namespace=s.namespace, patch_type=MERGE)
            new_ms.clear()
            new_ms.update(written)

    def _reconcile_old_on_delete(self, s: Scope, all_sets: list[dict[str, Any]],
                                 old_sets: list[dict[str, Any]]) -> None:
        """``reconcileOldMachineSetsOnDelete``: old MachineSets stop creating Machines and follow the
        deletions of their Machines; any excess beyond replicas is taken from the oldest."""
        excess = rollout.total_replicas(all_sets) - replicas(s.md)
        for ms in old_sets:
            if replicas(ms) <= 0:
                continue
            if DISABLE_MACHINE_CREATE_ANNOTATION not in (meta(ms).get("annotations") or {}):
                written = self.client.patch(CLUSTER_API_VERSION, MACHINE_SET_KIND, meta(ms)["name"],
                                            {"metadata": {"annotations": {DISABLE_MACHINE_CREATE_ANNOTATION: "true"}}},
                                            namespace=s.namespace, patch_type=MERGE)
                ms.clear()
                ms.update(written)
            match = dict(((ms.get("spec") or {}).get("selector") or {}).get("matchLabels") or {})
            selector = ",".join(f"{k}={v}" for k, v in sorted(match.items()))
            machines = self.client.list(CLUSTER_API_VERSION, MACHINE_KIND, s.namespace,
                                        label_selector=selector or None)["items"]
            remaining = len([m for m in machines if not is_deleting(m)])
            excess -= replicas(ms) - remaining
            self._scale(s, ms, remaining)
        for ms in old_sets:
            if excess <= 0:
                break
            if replicas(ms) <= 0:
                continue
            down = min(replicas(ms), excess)
            excess -= down
            self._scale(s, ms, replicas(ms) - down)

    def _cleanup(self, s: Scope, old_sets: list[dict[str, Any]]) -> None:
        """``cleanupDeployment``: delete the oldest empty old MachineSets beyond ``revisionHistoryLimit``."""
        limit = s.spec.get("revisionHistoryLimit")
        if limit is None:
            return
        alive = sorted((ms for ms in old_sets if not is_deleting(ms)), key=creation_key)
        for ms in alive[:max(0, len(alive) - int(limit))]:
            status = ms.get("status") or {}
            if status_int(ms, "replicas") != 0 or replicas(ms) != 0 \
                    or int(meta(ms).get("generation") or 0) > int(status.get("observedGeneration") or 0):
                continue
            try:
                self.client.delete(CLUSTER_API_VERSION, MACHINE_SET_KIND, meta(ms)["name"], s.namespace)
            except ApiError as err:
                if err.code != 404:
                    raise
                continue
            self._event(s, NORMAL, SUCCESSFUL_DELETE, SUCCESSFUL_DELETE_MESSAGE.format(name=go_quote(meta(ms)["name"])))

    # -- status ------------------------------------------------------------------------------------

    def _sync_status(self, s: Scope, new_ms: dict[str, Any] | None, all_sets: list[dict[str, Any]]) -> None:
        """``syncDeploymentStatus``: counters, phase, Available and MachineSetReady."""
        md = s.md
        available = rollout.total_status(all_sets, "availableReplicas")
        total = rollout.total_replicas(all_sets)
        ready = rollout.total_status(all_sets, "readyReplicas")
        status = md.setdefault("status", {})
        try:
            status["selector"] = selector_string(s.spec.get("selector"))
        except ValueError:
            status["selector"] = ""
        status.update(replicas=rollout.total_status(all_sets, "replicas"),
                      updatedReplicas=status_int(new_ms, "replicas") if new_ms is not None else 0,
                      readyReplicas=ready, availableReplicas=available,
                      unavailableReplicas=max(0, total - available))
        wanted = replicas(md)
        phase = status.get("phase")
        if wanted == ready:
            phase = PHASE_RUNNING
        if wanted > ready:
            phase = PHASE_SCALING_UP
        if total - available < 0:
            phase = PHASE_SCALING_DOWN
        if any((ms.get("status") or {}).get("failureReason") or (ms.get("status") or {}).get("failureMessage")
               for ms in all_sets):
            phase = PHASE_FAILED
        if phase:
            status["phase"] = phase
        needed = wanted - rollout.max_unavailable(md)
        if available >= needed:
            cond.mark_true(md, MACHINE_DEPLOYMENT_AVAILABLE, s.now)
        else:
            cond.mark_false(md, MACHINE_DEPLOYMENT_AVAILABLE, WAITING_FOR_AVAILABLE_MACHINES_REASON,
                            cond.SEVERITY_WARNING, MINIMUM_AVAILABILITY_MESSAGE.format(needed=needed,
                                                                                       available=available), s.now)
        if new_ms is not None:
            ccond.mirror(md, MACHINE_SET_READY, new_ms, s.now, fallback_ready=False,
                         fallback_reason=WAITING_FOR_MACHINE_SET_REASON)
        else:
            cond.mark_false(md, MACHINE_SET_READY, WAITING_FOR_MACHINE_SET_REASON, cond.SEVERITY_INFO,
                            MACHINE_SET_NOT_FOUND_MESSAGE, s.now)
        if meta(md).get("generation"):
            status["observedGeneration"] = meta(md)["generation"]
