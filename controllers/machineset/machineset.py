"""The reference MachineSet controller: Cluster API v1.10's MachineSet reconciler on the client interface.

A reconcile adds the ``cluster.x-k8s.io/machineset`` finalizer first, stops at a paused Cluster or
MachineSet (v1beta2 ``Paused``), labels the MachineSet with its Cluster, has a stand-alone MachineSet
(one no MachineDeployment made) owned by its Cluster, and adopts orphan Machines its selector matches.
Then, for a MachineSet being deleted, it deletes its Machines and drops the finalizer once they are gone;
otherwise it keeps the in-place fields of its Machines in step with ``spec.template`` (labels,
annotations, the node drain, volume detach and deletion timeouts) and scales:

- up: Machines ``<machineset>-<5 characters>``, each with a bootstrap config and an infrastructure
  machine cloned from the templates under the Machine's name (:mod:`controllers.machineset.templates`),
  labelled with ``spec.template``'s labels, ``cluster.x-k8s.io/set-name`` and, from a MachineDeployment,
  ``cluster.x-k8s.io/deployment-name``; not while the MachineSet carries
  ``cluster.x-k8s.io/disable-machine-create``;
- down: the Machines :mod:`controllers.machineset.delete_policy` ranks first are deleted; each then goes
  through the machine controller's deletion (hooks, drain, volume detach).

Status: ``replicas`` (every Machine, being deleted or not), ``fullyLabeledReplicas``, ``readyReplicas``
(the Machine's Node is Ready), ``availableReplicas`` (Ready for ``spec.minReadySeconds``), ``selector``,
``observedGeneration``; v1beta1 ``MachinesCreated``, ``Resized`` and their ``Ready`` summary. While
Machines are not ready it looks again every 15 s.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from controllers.cluster import conditions as ccond
from controllers.cluster.api import ensure_owner_ref, owner_reference
from controllers.cluster.patch import copy_json, write
from controllers.machine import conditions as cond
from controllers.machine.api import has_owner, is_deleting, labels, meta
from controllers.machine.cluster_cache import ClusterCache
from controllers.machine.errors import ReconcileError, aggregate, go_quote, run_phases
from controllers.machine.reconciler import ClusterApiReconciler
from controllers.machineset import delete_policy
from controllers.machineset.api import (
    BOOTSTRAP_TEMPLATE_CLONING_FAILED_REASON,
    DISABLE_MACHINE_CREATE_ANNOTATION,
    INFRASTRUCTURE_TEMPLATE_CLONING_FAILED_REASON,
    MACHINE_CREATION_FAILED_REASON,
    MACHINE_SET_FINALIZER,
    MACHINES_CREATED,
    MAX_GENERATED_BASE_LENGTH,
    RESIZED,
    SCALING_DOWN_MESSAGE,
    SCALING_DOWN_REASON,
    SCALING_UP_MESSAGE,
    SCALING_UP_REASON,
    format_label_value,
    generate_suffix,
    get_cluster,
    replicas,
    selector_matches,
    selector_string,
)
from controllers.machineset.templates import clone_from_template
from harness.client import (
    MERGE,
    NORMAL,
    WARNING,
    ApiError,
    Client,
    Request,
    Result,
)
from harness.clock import parse_rfc3339
from harness.kube.names.capi import (
    CLUSTER_API_VERSION,
    CLUSTER_KIND,
    CLUSTER_NAME_LABEL,
    MACHINE_DEPLOYMENT_KIND,
    MACHINE_DEPLOYMENT_NAME_LABEL,
    MACHINE_FINALIZER,
    MACHINE_KIND,
    MACHINE_SET_KIND,
    MACHINE_SET_NAME_LABEL,
)
from harness.kube.names.core import CONDITION_TRUE
from harness.kube.names.events import (
    FAILED_CREATE,
    FAILED_DELETE,
    SUCCESSFUL_ADOPT,
    SUCCESSFUL_CREATE,
    SUCCESSFUL_DELETE,
)
from harness.kube.ownerrefs import controller_of, is_controlled_by

EVENT_COMPONENT = "machineset-controller"
# Quickly reconcile until the Nodes become Ready (shouldRequeueForReplicaCountersRefresh).
NOT_READY_REQUEUE_AFTER = 15.0
IN_PLACE_TIMEOUTS = ("nodeDrainTimeout", "nodeVolumeDetachTimeout", "nodeDeletionTimeout")

# Events.
SUCCESSFUL_CREATE_MESSAGE = "Created machine {name}"
FAILED_CREATE_MESSAGE = "Failed to create machine: {err}"
SUCCESSFUL_DELETE_MESSAGE = "Deleted machine {name}"
FAILED_DELETE_MESSAGE = "Failed to delete machine {name}: {err}"
SUCCESSFUL_ADOPT_MESSAGE = "Adopted Machine {name}"

# Errors.
NIL_REPLICAS = "the Replicas field in Spec for MachineSet {name} is nil, this should not be allowed"
CLONE_BOOTSTRAP_ERROR = "failed to clone bootstrap configuration from {kind} {ref} while creating a machine"
CLONE_INFRA_ERROR = "failed to clone infrastructure machine from {kind} {ref} while creating a machine"
NO_OWNER_DEPLOYMENT = "failed to retrieve owner MachineDeployment for MachineSet {key}"


@dataclass
class Scope:
    """What one reconcile of a MachineSet reads and decides."""

    cluster: dict[str, Any]
    machine_set: dict[str, Any]
    now: float
    machines: list[dict[str, Any]] = field(default_factory=list)
    machines_found: bool = False

    @property
    def name(self) -> str:
        return str(meta(self.machine_set)["name"])

    @property
    def namespace(self) -> str:
        return str(meta(self.machine_set).get("namespace") or "")

    @property
    def spec(self) -> dict[str, Any]:
        return self.machine_set.setdefault("spec", {})  # type: ignore[no-any-return]


def machine_labels(ms: dict[str, Any]) -> dict[str, str]:
    """``machineLabelsFromMachineSet``: the template's labels, the set-name label and, from a
    MachineDeployment, the deployment-name label."""
    out = dict(((ms.get("spec") or {}).get("template") or {}).get("metadata", {}).get("labels") or {})
    out[MACHINE_SET_NAME_LABEL] = format_label_value(str(meta(ms)["name"]))
    deployment = labels(ms).get(MACHINE_DEPLOYMENT_NAME_LABEL)
    if deployment is not None:
        out[MACHINE_DEPLOYMENT_NAME_LABEL] = deployment
    return out


def machine_annotations(ms: dict[str, Any]) -> dict[str, str]:
    """``machineAnnotationsFromMachineSet``: the template's annotations."""
    return dict(((ms.get("spec") or {}).get("template") or {}).get("metadata", {}).get("annotations") or {})


def _node_ready(node: dict[str, Any] | None) -> tuple[bool, float]:
    for condition in (node or {}).get("status", {}).get("conditions") or []:
        if condition.get("type") == "Ready" and condition.get("status") == CONDITION_TRUE:
            stamp = condition.get("lastTransitionTime")
            return True, parse_rfc3339(str(stamp)) if stamp else 0.0
    return False, 0.0


class MachineSetController(ClusterApiReconciler):
    """Reconciles ``cluster.x-k8s.io/v1beta1`` MachineSets of the management cluster."""

    name = "machineset"
    event_component = EVENT_COMPONENT

    def __init__(self, client: Client) -> None:
        super().__init__(client)
        self.clusters = ClusterCache(client)
        # (namespace, name) -> (cluster name, selector) of every MachineSet, from the watch.
        self._sets: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}

    def setup(self) -> None:
        self.watch(self.client, CLUSTER_API_VERSION, MACHINE_SET_KIND, self._on_machine_set)
        self.watch(self.client, CLUSTER_API_VERSION, MACHINE_KIND, self._on_machine)
        self.watch(self.client, CLUSTER_API_VERSION, CLUSTER_KIND, self._on_cluster)

    def _on_machine_set(self, event: str, ms: dict[str, Any]) -> Iterable[Request]:
        key = (meta(ms).get("namespace") or "", meta(ms).get("name", ""))
        if event == "DELETED":
            self._sets.pop(key, None)
        else:
            spec = ms.get("spec") or {}
            self._sets[key] = (str(spec.get("clusterName", "")), dict(spec.get("selector") or {}))
        return (Request(*key),)

    def _on_machine(self, _event: str, machine: dict[str, Any]) -> Iterable[Request]:
        """The MachineSet controlling the Machine; for an orphan, every MachineSet that could adopt it."""
        namespace = meta(machine).get("namespace") or ""
        owner = controller_of(machine)
        if owner is not None:
            return (Request(namespace, str(owner.get("name", ""))),) if owner.get("kind") == MACHINE_SET_KIND else ()
        out = []
        for (ns, name), (_cluster, selector) in sorted(self._sets.items()):
            try:
                if ns == namespace and selector_matches(selector, labels(machine)):
                    out.append(Request(ns, name))
            except ValueError:
                continue
        return out

    def _on_cluster(self, _event: str, cluster: dict[str, Any]) -> Iterable[Request]:
        namespace, name = meta(cluster).get("namespace") or "", meta(cluster).get("name", "")
        return [Request(ns, ms) for (ns, ms), (c, _selector) in sorted(self._sets.items())
                if ns == namespace and c == name]

    # -- reconcile ---------------------------------------------------------------------------------

    def reconcile(self, request: Request) -> Result | None:
        ms = self.get_with_finalizer(MACHINE_SET_KIND, request, MACHINE_SET_FINALIZER)
        if ms is None:
            return None
        cluster = get_cluster(self.client, ms)
        s = Scope(cluster=cluster, machine_set=copy_json(ms), now=self.now())
        if ccond.set_paused(cluster, s.machine_set, s.now):
            write(self.client, ms, s.machine_set)
            return None

        phases = [self._owner_and_labels, self._get_and_adopt_machines]
        if is_deleting(ms):
            phases.append(self._reconcile_delete)
        else:
            phases += [self._sync_machines, self._sync_replicas]
        errors, requeue = run_phases([lambda phase=phase: phase(s) for phase in phases])
        try:
            self._reconcile_status(s)
        except ReconcileError as err:
            errors.append(str(err))
        ccond.summarize(s.machine_set, (MACHINES_CREATED, RESIZED), s.now)
        write(self.client, ms, s.machine_set)
        if errors:
            raise ReconcileError(aggregate(errors))
        if not is_deleting(ms) and s.machines_found:
            wanted = replicas(s.machine_set)
            status = s.machine_set.get("status") or {}
            min_ready = int(s.spec.get("minReadySeconds") or 0)
            if min_ready > 0 and status.get("readyReplicas") == wanted and status.get("availableReplicas") != wanted:
                requeue = min(requeue or float(min_ready), float(min_ready))
            elif status.get("readyReplicas") != wanted:
                requeue = min(requeue or NOT_READY_REQUEUE_AFTER, NOT_READY_REQUEUE_AFTER)
        return Result(requeue_after=requeue or 0.0)

    def _event(self, s: Scope, event_type: str, reason: str, message: str) -> None:
        self.recorder.event(s.machine_set, event_type, reason, message)

    # -- phases ------------------------------------------------------------------------------------

    def _owner_and_labels(self, s: Scope) -> float | None:
        """``reconcileMachineSetOwnerAndLabels``."""
        ms, cluster = s.machine_set, s.cluster
        metadata = ms.setdefault("metadata", {})
        metadata["labels"] = {**(metadata.get("labels") or {}), CLUSTER_NAME_LABEL: s.spec.get("clusterName", "")}
        stand_alone = not has_owner(ms, CLUSTER_API_VERSION, (MACHINE_DEPLOYMENT_KIND, CLUSTER_KIND)) \
            and MACHINE_DEPLOYMENT_NAME_LABEL not in metadata["labels"]
        if stand_alone:
            metadata["ownerReferences"] = ensure_owner_ref(metadata.get("ownerReferences") or [],
                                                           owner_reference(cluster))
        selector = s.spec.setdefault("selector", {})
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), CLUSTER_NAME_LABEL: s.spec.get("clusterName")}
        template_meta = s.spec.setdefault("template", {}).setdefault("metadata", {})
        template_meta["labels"] = {**(template_meta.get("labels") or {}),
                                   CLUSTER_NAME_LABEL: s.spec.get("clusterName")}
        return None

    def _get_and_adopt_machines(self, s: Scope) -> float | None:
        """``getAndAdoptMachinesForMachineSet``: the Machines the selector matches that are controlled by
        this MachineSet or by nothing (those are adopted); Machines being deleted included."""
        match = dict((s.spec.get("selector") or {}).get("matchLabels") or {})
        selector = ",".join(f"{k}={v}" for k, v in sorted(match.items()))
        items = self.client.list(CLUSTER_API_VERSION, MACHINE_KIND, s.namespace, label_selector=selector or None)[
            "items"
        ]
        found = []
        for machine in items:
            owner = controller_of(machine)
            if owner is not None and not is_controlled_by(machine, s.machine_set):
                continue
            if owner is None:
                refs = ensure_owner_ref(meta(machine).get("ownerReferences") or [],
                                        owner_reference(s.machine_set, controller=True))
                try:
                    machine = self.client.patch(CLUSTER_API_VERSION, MACHINE_KIND, meta(machine)["name"],
                                                {"metadata": {"ownerReferences": refs}}, namespace=s.namespace,
                                                patch_type=MERGE)
                except ApiError:
                    continue
                self._event(s, NORMAL, SUCCESSFUL_ADOPT, SUCCESSFUL_ADOPT_MESSAGE.format(
                    name=go_quote(meta(machine)["name"])))
            found.append(machine)
        s.machines = found
        s.machines_found = True
        return None

    def _reconcile_delete(self, s: Scope) -> float | None:
        """Delete every Machine; drop the finalizer once none is left."""
        if not s.machines_found:
            return None  # the Machines could not be listed: "none left" would be a guess
        if not s.machines:
            meta(s.machine_set)["finalizers"] = [f for f in meta(s.machine_set).get("finalizers") or []
                                                 if f != MACHINE_SET_FINALIZER]
            return None
        for machine in s.machines:
            if is_deleting(machine):
                continue
            try:
                self.client.delete(CLUSTER_API_VERSION, MACHINE_KIND, meta(machine)["name"], s.namespace)
            except ApiError as err:
                if err.code != 404:
                    raise ReconcileError(f"failed to delete Machine {s.namespace}/{meta(machine)['name']}: "
                                         f"{err.message}") from err
        return None

    def _sync_machines(self, s: Scope) -> float | None:
        """``syncMachines``: the in-place mutable fields of ``spec.template`` (labels, annotations and the
        three timeouts) reach every Machine not being deleted."""
        if not s.machines_found:
            return None
        wanted_labels, wanted_annotations = machine_labels(s.machine_set), machine_annotations(s.machine_set)
        template_spec = (s.spec.get("template") or {}).get("spec") or {}
        for machine in s.machines:
            if is_deleting(machine):
                continue
            body: dict[str, Any] = {}
            current_labels, current_annotations = labels(machine), meta(machine).get("annotations") or {}
            missing_labels = {k: v for k, v in wanted_labels.items() if current_labels.get(k) != v}
            missing_annotations = {k: v for k, v in wanted_annotations.items() if current_annotations.get(k) != v}
            if missing_labels or missing_annotations:
                body["metadata"] = {k: v for k, v in (("labels", missing_labels),
                                                      ("annotations", missing_annotations)) if v}
            spec = {t: template_spec.get(t) for t in IN_PLACE_TIMEOUTS
                    if template_spec.get(t) is not None and (machine.get("spec") or {}).get(t) != template_spec.get(t)}
            if spec:
                body["spec"] = spec
            if body:
                self.client.patch(CLUSTER_API_VERSION, MACHINE_KIND, meta(machine)["name"], body, namespace=s.namespace,
                                  patch_type=MERGE)
        return None

    def _sync_replicas(self, s: Scope) -> float | None:
        """``syncReplicas``: create or delete Machines until there are ``spec.replicas``."""
        if not s.machines_found:
            return None  # as upstream: never count Machines that could not be listed
        if s.spec.get("replicas") is None:
            raise ReconcileError(NIL_REPLICAS.format(name=s.name))
        diff = len(s.machines) - replicas(s.machine_set)
        if diff < 0:
            if DISABLE_MACHINE_CREATE_ANNOTATION in (meta(s.machine_set).get("annotations") or {}):
                return None
            errors = []
            for _ in range(-diff):
                try:
                    self._create_machine(s)
                except (ApiError, ReconcileError) as err:
                    text = err.message if isinstance(err, ApiError) else str(err)
                    errors.append(text)
            if errors:
                raise ReconcileError(aggregate(errors))
        elif diff > 0:
            priority = delete_policy.priority_for(str(s.spec.get("deletePolicy") or ""))
            errors = []
            for machine in delete_policy.machines_to_delete(s.machines, diff, priority, s.now):
                if is_deleting(machine):
                    continue
                name = meta(machine)["name"]
                try:
                    self.client.delete(CLUSTER_API_VERSION, MACHINE_KIND, name, s.namespace)
                except ApiError as err:
                    if err.code == 404:
                        continue
                    self._event(s, WARNING, FAILED_DELETE, FAILED_DELETE_MESSAGE.format(name=go_quote(name),
                                                                                        err=err.message))
                    errors.append(err.message)
                    continue
                self._event(s, NORMAL, SUCCESSFUL_DELETE, SUCCESSFUL_DELETE_MESSAGE.format(name=go_quote(name)))
            if errors:
                raise ReconcileError(aggregate(errors))
        return None

    def _machine_name(self, s: Scope) -> str:
        """``<machineset>-<5 characters>``, never a name in use."""
        base = f"{s.name[:MAX_GENERATED_BASE_LENGTH - 1]}-"
        taken = {meta(m)["name"] for m in s.machines}
        for i in range(10_000):
            name = base + generate_suffix(f"{meta(s.machine_set).get('uid')}/{i}")
            if name in taken:
                continue
            try:
                self.client.get(CLUSTER_API_VERSION, MACHINE_KIND, name, s.namespace)
            except ApiError as err:
                if err.code == 404:
                    return name
                raise
        raise ReconcileError(f"no free Machine name for {base}")

    def _create_machine(self, s: Scope) -> None:
        """Clone the bootstrap config and the infrastructure machine, then create the Machine."""
        ms = s.machine_set
        name = self._machine_name(s)
        cluster = str(s.spec.get("clusterName", ""))
        template_spec = copy_json((s.spec.get("template") or {}).get("spec") or {})
        obj_labels, obj_annotations = machine_labels(ms), machine_annotations(ms)
        owner = owner_reference(ms)
        bootstrap = template_spec.setdefault("bootstrap", {})
        bootstrap_ref = None
        template_ref = bootstrap.get("configRef")
        if template_ref:
            try:
                bootstrap_ref = clone_from_template(self.client, template_ref, namespace=s.namespace, name=name,
                                                    cluster=cluster, labels=obj_labels, annotations=obj_annotations,
                                                    owner=owner)
            except (ApiError, ReconcileError) as err:
                text = err.message if isinstance(err, ApiError) else str(err)
                cond.mark_false(ms, MACHINES_CREATED, BOOTSTRAP_TEMPLATE_CLONING_FAILED_REASON, cond.SEVERITY_ERROR,
                                text, s.now)
                raise ReconcileError(CLONE_BOOTSTRAP_ERROR.format(
                    kind=template_ref.get("kind", ""),
                    ref=f"{template_ref.get('namespace') or s.namespace}/{template_ref.get('name', '')}")
                    + f": {text}") from err
            bootstrap["configRef"] = bootstrap_ref
        infra_template = template_spec.get("infrastructureRef") or {}
        try:
            infra_ref = clone_from_template(self.client, infra_template, namespace=s.namespace, name=name,
                                            cluster=cluster, labels=obj_labels, annotations=obj_annotations,
                                            owner=owner)
        except (ApiError, ReconcileError) as err:
            text = err.message if isinstance(err, ApiError) else str(err)
            if bootstrap_ref is not None:
                self._delete_quietly(bootstrap_ref)
            cond.mark_false(ms, MACHINES_CREATED, INFRASTRUCTURE_TEMPLATE_CLONING_FAILED_REASON, cond.SEVERITY_ERROR,
                            text, s.now)
            raise ReconcileError(CLONE_INFRA_ERROR.format(
                kind=infra_template.get("kind", ""),
                ref=f"{infra_template.get('namespace') or s.namespace}/{infra_template.get('name', '')}")
                + f": {text}") from err
        template_spec["infrastructureRef"] = infra_ref
        template_spec["clusterName"] = cluster
        machine = {
            "apiVersion": CLUSTER_API_VERSION, "kind": MACHINE_KIND,
            "metadata": {"name": name, "namespace": s.namespace, "labels": obj_labels, "annotations": obj_annotations,
                         "ownerReferences": [owner_reference(ms, controller=True)],
                         "finalizers": [MACHINE_FINALIZER]},
            "spec": template_spec,
        }
        try:
            created = self.client.create(machine)
        except ApiError as err:
            self._event(s, WARNING, FAILED_CREATE, FAILED_CREATE_MESSAGE.format(err=err.message))
            cond.mark_false(ms, MACHINES_CREATED, MACHINE_CREATION_FAILED_REASON, cond.SEVERITY_ERROR, err.message,
                            s.now)
            self._delete_quietly(infra_ref)
            if bootstrap_ref is not None:
                self._delete_quietly(bootstrap_ref)
            raise
        s.machines.append(created)
        self._event(s, NORMAL, SUCCESSFUL_CREATE, SUCCESSFUL_CREATE_MESSAGE.format(name=go_quote(name)))

    def _delete_quietly(self, ref: dict[str, str]) -> None:
        try:
            self.client.delete(ref["apiVersion"], ref["kind"], ref["name"], ref["namespace"])
        except ApiError:
            pass  # best effort, as upstream's cleanup after a failed create

    # -- status ------------------------------------------------------------------------------------

    def _node(self, s: Scope, machine: dict[str, Any]) -> dict[str, Any] | None:
        node_name = ((machine.get("status") or {}).get("nodeRef") or {}).get("name")
        if not node_name:
            return None
        try:
            remote = self.clusters.client(s.namespace, str(s.spec.get("clusterName", "")))
            return remote.get("v1", "Node", str(node_name))
        except (ApiError, ReconcileError, ConnectionError):
            return None

    def _reconcile_status(self, s: Scope) -> None:
        """``reconcileStatus``: the replica counters and the Resized and MachinesCreated conditions."""
        if not s.machines_found:
            return
        ms = s.machine_set
        if s.spec.get("replicas") is None:
            raise ReconcileError("Cannot update status when MachineSet spec.replicas is not set")
        status = ms.setdefault("status", {})
        try:
            status["selector"] = selector_string(s.spec.get("selector"))
        except ValueError as err:
            raise ReconcileError(f"failed to update status for MachineSet {s.namespace}/{s.name}: {err}") from err
        template_labels = ((s.spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        min_ready = int(s.spec.get("minReadySeconds") or 0)
        fully_labeled = ready = available = 0
        for machine in s.machines:
            if all(labels(machine).get(k) == v for k, v in template_labels.items()):
                fully_labeled += 1
            node_ready, since = _node_ready(self._node(s, machine))
            if node_ready:
                ready += 1
                if min_ready == 0 or since + min_ready < s.now:
                    available += 1
        desired = 0 if is_deleting(ms) else replicas(ms)
        status.update(replicas=len(s.machines), fullyLabeledReplicas=fully_labeled, readyReplicas=ready,
                      availableReplicas=available)
        if meta(ms).get("generation"):
            status["observedGeneration"] = meta(ms)["generation"]
        actual = len(s.machines)
        if actual < desired:
            cond.mark_false(ms, RESIZED, SCALING_UP_REASON, cond.SEVERITY_WARNING,
                            SCALING_UP_MESSAGE.format(desired=desired, actual=actual), s.now)
        elif actual > desired:
            cond.mark_false(ms, RESIZED, SCALING_DOWN_REASON, cond.SEVERITY_WARNING,
                            SCALING_DOWN_MESSAGE.format(desired=desired, actual=actual), s.now)
            cond.mark_true(ms, MACHINES_CREATED, s.now)
        else:
            if ready == actual:
                cond.mark_true(ms, RESIZED, s.now)
            cond.mark_true(ms, MACHINES_CREATED, s.now)
