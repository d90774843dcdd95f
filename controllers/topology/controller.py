"""The topology controller (Cluster API v1.11's ``internal/controllers/topology/cluster``, classic hooks of
seed 002), for Clusters with ``spec.topology``. Clusters without a topology are left alone; a paused
Cluster (``spec.paused`` or the ``cluster.x-k8s.io/paused`` annotation) only gets its condition.

A reconcile, in upstream's order:

1. A deleting Cluster: unless it has ``runtime.cluster.x-k8s.io/ok-to-delete``, BeforeClusterDelete is
   called; a blocking answer requeues after ``retryAfterSeconds``; a non-blocking one sets the annotation
   (for good: the hook is never called again). The core Cluster controller deletes nothing before that.
2. BeforeClusterCreate, while neither ``spec.infrastructureRef`` nor ``spec.controlPlaneRef`` is set: a
   blocking answer requeues and creates nothing.
3. The control plane version (``computeControlPlaneVersion``): at the topology version, AfterControlPlaneUpgrade
   is called when pending and the control plane is neither provisioning nor upgrading (a blocking answer
   holds the MachineDeployments at their version); a different version is held while the control plane
   provisions or upgrades or a MachineDeployment upgrades, then blocked by any
   ``before-upgrade.hook.cluster.cluster.x-k8s.io*`` annotation of the Cluster or by a blocking
   BeforeClusterUpgrade answer (``fromKubernetesVersion``: the control plane's, ``toKubernetesVersion``: the
   topology's); once it passes, AfterControlPlaneUpgrade and AfterClusterUpgrade become pending.
4. AfterControlPlaneInitialized: pending from creation on (marked while the references are unset), called
   once the Cluster's ``ControlPlaneInitialized`` condition is True, until it succeeds. AfterClusterUpgrade
   (non-blocking): called when pending, AfterControlPlaneUpgrade is not, and the control plane and every
   MachineDeployment are at the topology version and stable.
5. The FakeCluster, KubeadmControlPlane and MachineDeployments are created or brought to their desired
   spec; the Cluster's references and labels are set.

Every hook error (a Fail-policy failure, a ``Failure`` answer) is a reconcile error, retried with back-off.
``TopologyReconciled`` (v1beta1 and v1beta2) says, in this order: paused, deleting, the error, the blocking
hooks (``hook "<Hook>" is blocking: <message>`` joined with ``"; "``), an upgrade on hold, or True.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from controllers.machine import conditions as cond
from controllers.machine.api import PAUSED_ANNOTATION, meta
from controllers.runtime.api import (
    AFTER_CLUSTER_UPGRADE,
    AFTER_CONTROL_PLANE_INITIALIZED,
    AFTER_CONTROL_PLANE_UPGRADE,
    BEFORE_CLUSTER_CREATE,
    BEFORE_CLUSTER_DELETE,
    BEFORE_CLUSTER_UPGRADE,
)
from controllers.runtime.client import RuntimeClient, RuntimeSDKError, clean_cluster
from controllers.topology import desired, hooks
from controllers.topology.api import (
    ANNOTATION_HOOK_RETRY_SECONDS,
    ANNOTATION_SET,
    ANNOTATIONS_SET,
    BEFORE_CLUSTER_UPGRADE_HOOK_PREFIX,
    BLUEPRINT_FAILED,
    CLUSTER_CLASS_KIND,
    CLUSTER_CLASS_NOT_FOUND,
    CLUSTER_TOPOLOGY_OWNED_LABEL,
    CONTROL_PLANE_PROVISIONING_SUFFIX,
    CONTROL_PLANE_UPGRADE_ON_HOLD,
    CONTROL_PLANE_UPGRADE_PENDING_REASON,
    CONTROL_PLANE_UPGRADING_SUFFIX,
    DELETING_MESSAGE,
    HOOK_BLOCKING,
    HOOK_BLOCKING_NO_MESSAGE,
    HOOK_BLOCKING_REASON,
    MACHINE_DEPLOYMENTS_UPGRADE_ON_HOLD,
    MACHINE_DEPLOYMENTS_UPGRADE_PENDING_REASON,
    MACHINE_DEPLOYMENTS_UPGRADING_SUFFIX,
    PAUSED_BY_ANNOTATION_MESSAGE,
    PROGRESS_REQUEUE_SECONDS,
    RECONCILE_FAILED_REASON,
    RECONCILE_SUCCEEDED_REASON,
)
from harness.client import MERGE, ApiError, Client, Controller, Request, Result, find_in
from harness.kube.names.capi import (
    CLUSTER_API_VERSION,
    CLUSTER_KIND,
    CLUSTER_NAME_LABEL,
    CONTROL_PLANE_API_VERSION,
    CONTROL_PLANE_INITIALIZED,
    DELETED_REASON,
    DELETING_REASON,
    FAKE_CLUSTER_KIND,
    INFRASTRUCTURE_API_VERSION,
    KUBEADM_CONTROL_PLANE_KIND,
    MACHINE_DEPLOYMENT_KIND,
    MACHINE_DEPLOYMENT_NAME_LABEL,
    MACHINE_KIND,
    PAUSED_BY_SPEC_MESSAGE,
    PAUSED_REASON,
    TOPOLOGY_RECONCILE_FAILED_REASON,
    TOPOLOGY_RECONCILED,
)
from harness.kube.names.core import CONDITION_FALSE, CONDITION_TRUE
from harness.kube.objects import clone


class TopologyError(Exception):
    """A reconcile error whose text is what upstream's TopologyReconciled condition shows."""


@dataclass
class Scope:
    """What one reconcile learns: hook answers (in call order) and the upgrade state."""

    cluster: dict[str, Any]
    responses: dict[str, dict[str, Any]] = field(default_factory=dict)
    cp: dict[str, Any] | None = None
    cp_pending_upgrade: bool = False
    cp_provisioning: bool = False
    cp_upgrading: bool = False
    cp_starting_upgrade: bool = False
    md_pending_upgrade: list[str] = field(default_factory=list)
    md_upgrading: list[str] = field(default_factory=list)

    def blocking(self) -> dict[str, str]:
        """Hooks whose answer blocks (non-zero retryAfterSeconds) and their messages."""
        return {hook: str(r.get("message") or "") for hook, r in self.responses.items()
                if int(r.get("retryAfterSeconds") or 0) != 0}

    def retry_after(self) -> float:
        """``AggregateRetryAfter``: the lowest non-zero retryAfterSeconds of the answers."""
        values = [int(r.get("retryAfterSeconds") or 0) for r in self.responses.values()]
        values = [v for v in values if v]
        return float(min(values)) if values else 0.0

    @property
    def cp_stable(self) -> bool:
        return not (self.cp_pending_upgrade or self.cp_provisioning or self.cp_upgrading or self.cp_starting_upgrade)


def _paused(cluster: dict[str, Any]) -> list[str]:
    messages = []
    if (cluster.get("spec") or {}).get("paused"):
        messages.append(PAUSED_BY_SPEC_MESSAGE)
    if PAUSED_ANNOTATION in ((cluster.get("metadata") or {}).get("annotations") or {}):
        messages.append(PAUSED_BY_ANNOTATION_MESSAGE)
    return messages


def _topology(cluster: dict[str, Any]) -> dict[str, Any]:
    topology = (cluster.get("spec") or {}).get("topology")
    return topology if isinstance(topology, dict) else {}


def _condition_true(obj: dict[str, Any], condition_type: str) -> bool:
    if cond.is_true(obj, condition_type):
        return True
    found = cond.get_v1beta2(obj, condition_type)
    return found is not None and found.get("status") == CONDITION_TRUE


class TopologyController(Controller):
    """Reconciles Clusters with a managed topology and calls the lifecycle hooks."""

    name = "topology"

    def __init__(self, client: Client) -> None:
        super().__init__()
        self.client = client
        self.runtime = RuntimeClient(client)

    def setup(self) -> None:
        self.watch(self.client, CLUSTER_API_VERSION, CLUSTER_KIND)
        self.watch(self.client, CONTROL_PLANE_API_VERSION, KUBEADM_CONTROL_PLANE_KIND, self._to_cluster)
        self.watch(self.client, INFRASTRUCTURE_API_VERSION, FAKE_CLUSTER_KIND, self._to_cluster)
        self.watch(self.client, CLUSTER_API_VERSION, MACHINE_DEPLOYMENT_KIND, self._to_cluster)
        self.watch(self.client, CLUSTER_API_VERSION, MACHINE_KIND, self._to_cluster)
        self.watch(self.client, CLUSTER_API_VERSION, CLUSTER_CLASS_KIND, self._class_to_clusters)

    @staticmethod
    def _to_cluster(_event: str, obj: dict[str, Any]) -> Iterable[Request]:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        name = labels.get(CLUSTER_NAME_LABEL)
        return (Request(str((obj.get("metadata") or {}).get("namespace") or ""), name),) if name else ()

    def _class_to_clusters(self, _event: str, cluster_class: dict[str, Any]) -> Iterable[Request]:
        namespace = str(meta(cluster_class).get("namespace") or "")
        try:
            clusters = self.client.list(CLUSTER_API_VERSION, CLUSTER_KIND, namespace)["items"]
        except (ApiError, ConnectionError):
            return ()
        return [Request(namespace, meta(c)["name"]) for c in clusters
                if _topology(c).get("class") == meta(cluster_class).get("name")]

    # -- reconcile ---------------------------------------------------------------------------------

    def reconcile(self, request: Request) -> Result | None:
        cluster = find_in(self.client, CLUSTER_API_VERSION, CLUSTER_KIND, request.name, request.namespace)
        if cluster is None or not _topology(cluster):
            return None
        scope = Scope(cluster)
        paused = _paused(cluster)
        if paused:
            self._write_condition(scope, paused_messages=paused)
            return None
        error: Exception | None = None
        result: Result | None = None
        try:
            if meta(cluster).get("deletionTimestamp"):
                result = self._reconcile_delete(scope)
            else:
                result = self._reconcile(scope)
        except (RuntimeSDKError, TopologyError, desired.BlueprintError) as err:
            error = err
        self._write_condition(scope, error=error)
        if error is not None:
            raise error
        return result

    def _call(self, scope: Scope, hook: str, **fields: Any) -> dict[str, Any]:
        request = {"cluster": clean_cluster({**scope.cluster, "apiVersion": CLUSTER_API_VERSION, "kind": CLUSTER_KIND}),
                   **fields}
        response = self.runtime.call_all(hook, scope.cluster, request)
        scope.responses[hook] = response
        return response

    def _reconcile_delete(self, scope: Scope) -> Result | None:
        if hooks.is_ok_to_delete(scope.cluster):
            return None
        response = self._call(scope, BEFORE_CLUSTER_DELETE)
        retry = int(response.get("retryAfterSeconds") or 0)
        if retry:
            return Result(requeue_after=float(retry))
        hooks.mark_ok_to_delete(self.client, scope.cluster)
        return None

    def _reconcile(self, scope: Scope) -> Result | None:
        cluster = scope.cluster
        namespace = meta(cluster)["namespace"]
        class_name = str(_topology(cluster).get("class", ""))
        try:
            cluster_class = self.client.get(CLUSTER_API_VERSION, CLUSTER_CLASS_KIND, class_name, namespace)
        except ApiError as err:
            raise TopologyError(CLUSTER_CLASS_NOT_FOUND.format(namespace=namespace, name=class_name,
                                                               error=err)) from None
        try:
            blueprint = desired.read_blueprint(self.client, cluster_class)
        except ApiError as err:
            raise TopologyError(BLUEPRINT_FAILED.format(error=err)) from None
        spec = cluster.get("spec") or {}
        creating = not spec.get("infrastructureRef") and not spec.get("controlPlaneRef")
        if creating:
            response = self._call(scope, BEFORE_CLUSTER_CREATE)
            if int(response.get("retryAfterSeconds") or 0):
                return Result(requeue_after=float(response["retryAfterSeconds"]))
        scope.cp = find_in(self.client, CONTROL_PLANE_API_VERSION, KUBEADM_CONTROL_PLANE_KIND,
                           meta(cluster)["name"], namespace) if not creating else None
        current_mds = self._current_machine_deployments(cluster)
        self._track_machine_deployments(scope, current_mds)
        cp_version = self._control_plane_version(scope)
        md_version = self._machine_deployment_version(scope, current_mds)
        # reconcileState: the intents and After* hooks first, then the objects.
        if creating:
            hooks.mark_pending(self.client, cluster, AFTER_CONTROL_PLANE_INITIALIZED)
        self._after_control_plane_initialized(scope)
        self._after_cluster_upgrade(scope, current_mds)
        self._apply(desired.infrastructure_cluster(cluster, blueprint))
        self._apply(desired.control_plane(cluster, blueprint, cp_version))
        self._set_references(scope)
        for topology_name, md in desired.machine_deployments(cluster, blueprint):
            current = current_mds.get(md["metadata"]["name"])
            version = md_version.get(topology_name)
            if version is None:
                version = str(_topology(cluster).get("version", ""))
            md["spec"]["template"]["spec"]["version"] = version
            if current is None and AFTER_CONTROL_PLANE_UPGRADE in scope.blocking():
                continue  # MarkPendingCreate: no new MachineDeployment while AfterControlPlaneUpgrade blocks
            self._apply(md)
        retry = scope.retry_after()
        if retry:
            return Result(requeue_after=retry)
        if not scope.cp_stable or scope.md_upgrading or scope.md_pending_upgrade \
                or hooks.pending(cluster):
            return Result(requeue_after=PROGRESS_REQUEUE_SECONDS)
        return None

    # -- control plane and workers -----------------------------------------------------------------

    def _control_plane_version(self, scope: Scope) -> str:
        """``computeControlPlaneVersion`` (classic)."""
        cluster = scope.cluster
        wanted = str(_topology(cluster).get("version", ""))
        if scope.cp is None:
            return wanted
        cp_spec, cp_status = scope.cp.get("spec") or {}, scope.cp.get("status") or {}
        current = str(cp_spec.get("version", ""))
        scope.cp_pending_upgrade = current != wanted
        if not cp_status.get("version"):
            scope.cp_provisioning = True
            return current
        if cp_status.get("version") != current or int(cp_status.get("updatedReplicas") or 0) != int(
                cp_status.get("replicas") or 0):
            scope.cp_upgrading = True
            return current
        if not scope.cp_pending_upgrade:
            if hooks.is_pending(cluster, AFTER_CONTROL_PLANE_UPGRADE):
                response = self._call(scope, AFTER_CONTROL_PLANE_UPGRADE, kubernetesVersion=wanted)
                if not int(response.get("retryAfterSeconds") or 0):
                    hooks.mark_done(self.client, cluster, AFTER_CONTROL_PLANE_UPGRADE)
            return current
        if scope.md_upgrading:
            return current
        annotation_hooks = sorted(k for k in (meta(cluster).get("annotations") or {})
                                  if k.startswith(BEFORE_CLUSTER_UPGRADE_HOOK_PREFIX))
        if annotation_hooks:
            template = ANNOTATION_SET if len(annotation_hooks) == 1 else ANNOTATIONS_SET
            scope.responses[BEFORE_CLUSTER_UPGRADE] = {
                "status": "Success", "retryAfterSeconds": ANNOTATION_HOOK_RETRY_SECONDS,
                "message": template.format(keys=", ".join(annotation_hooks))}
            return current
        response = self._call(scope, BEFORE_CLUSTER_UPGRADE, fromKubernetesVersion=current,
                              toKubernetesVersion=wanted)
        if int(response.get("retryAfterSeconds") or 0):
            return current
        hooks.mark_pending(self.client, cluster, AFTER_CONTROL_PLANE_UPGRADE, AFTER_CLUSTER_UPGRADE)
        scope.cp_pending_upgrade = False
        scope.cp_starting_upgrade = True
        return wanted

    def _current_machine_deployments(self, cluster: dict[str, Any]) -> dict[str, dict[str, Any]]:
        selector = f"{CLUSTER_NAME_LABEL}={meta(cluster)['name']},{CLUSTER_TOPOLOGY_OWNED_LABEL}"
        items = self.client.list(CLUSTER_API_VERSION, MACHINE_DEPLOYMENT_KIND, meta(cluster)["namespace"],
                                 label_selector=selector)["items"]
        return {meta(md)["name"]: md for md in items}

    def _track_machine_deployments(self, scope: Scope, current: dict[str, dict[str, Any]]) -> None:
        """MachineDeployments whose Machines are not all at the MachineDeployment's version are upgrading."""
        if not current:
            return
        namespace = meta(scope.cluster)["namespace"]
        machines = self.client.list(CLUSTER_API_VERSION, MACHINE_KIND, namespace,
                                    label_selector=f"{CLUSTER_NAME_LABEL}={meta(scope.cluster)['name']}")["items"]
        for name, md in sorted(current.items()):
            version = (((md.get("spec") or {}).get("template") or {}).get("spec") or {}).get("version")
            owned = [m for m in machines if (meta(m).get("labels") or {}).get(MACHINE_DEPLOYMENT_NAME_LABEL) == name]
            if any((m.get("spec") or {}).get("version") != version for m in owned):
                scope.md_upgrading.append(name)

    def _machine_deployment_version(self, scope: Scope, current: dict[str, dict[str, Any]]) -> dict[str, str]:
        """Per topology name, the version a MachineDeployment gets (absent: the topology version)."""
        wanted = str(_topology(scope.cluster).get("version", ""))
        out: dict[str, str] = {}
        hold = not scope.cp_stable or AFTER_CONTROL_PLANE_UPGRADE in scope.blocking()
        for md in current.values():
            topology_name = (meta(md).get("labels") or {}).get("topology.cluster.x-k8s.io/deployment-name", "")
            version = str((((md.get("spec") or {}).get("template") or {}).get("spec") or {}).get("version", ""))
            if version != wanted and hold:
                out[topology_name] = version
                scope.md_pending_upgrade.append(meta(md)["name"])
        return out

    # -- After* hooks ------------------------------------------------------------------------------

    def _after_control_plane_initialized(self, scope: Scope) -> None:
        if hooks.is_pending(scope.cluster, AFTER_CONTROL_PLANE_INITIALIZED) \
                and _condition_true(scope.cluster, CONTROL_PLANE_INITIALIZED):
            self._call(scope, AFTER_CONTROL_PLANE_INITIALIZED)
            hooks.mark_done(self.client, scope.cluster, AFTER_CONTROL_PLANE_INITIALIZED)

    def _after_cluster_upgrade(self, scope: Scope, current: dict[str, dict[str, Any]]) -> None:
        cluster = scope.cluster
        if not hooks.is_pending(cluster, AFTER_CLUSTER_UPGRADE) or hooks.is_pending(cluster,
                                                                                   AFTER_CONTROL_PLANE_UPGRADE):
            return
        if not scope.cp_stable or scope.md_upgrading or scope.md_pending_upgrade:
            return
        wanted = str(_topology(cluster).get("version", ""))
        if any(str((((md.get("spec") or {}).get("template") or {}).get("spec") or {}).get("version", "")) != wanted
               for md in current.values()):
            return
        self._call(scope, AFTER_CLUSTER_UPGRADE, kubernetesVersion=wanted)
        hooks.mark_done(self.client, cluster, AFTER_CLUSTER_UPGRADE)

    # -- objects -----------------------------------------------------------------------------------

    def _apply(self, wanted: dict[str, Any]) -> None:
        """Create the object, or bring its spec and labels to ``wanted`` (a merge patch of what differs)."""
        name, namespace = wanted["metadata"]["name"], wanted["metadata"]["namespace"]
        current = find_in(self.client, wanted["apiVersion"], wanted["kind"], name, namespace)
        if current is None:
            try:
                self.client.create(wanted)
            except ApiError as err:
                if err.code != 409:
                    raise
            return
        if meta(current).get("deletionTimestamp"):
            return
        patch: dict[str, Any] = {}
        spec_patch = _merge_diff(current.get("spec") or {}, wanted.get("spec") or {})
        if spec_patch:
            patch["spec"] = spec_patch
        labels = meta(current).get("labels") or {}
        missing = {k: v for k, v in (wanted["metadata"].get("labels") or {}).items() if labels.get(k) != v}
        if missing:
            patch["metadata"] = {"labels": missing}
        if patch:
            self.client.patch(wanted["apiVersion"], wanted["kind"], name, patch, namespace=namespace,
                              patch_type=MERGE)

    def _set_references(self, scope: Scope) -> None:
        cluster = scope.cluster
        name = meta(cluster)["name"]
        spec = cluster.get("spec") or {}
        wanted_infra = {"apiVersion": INFRASTRUCTURE_API_VERSION, "kind": FAKE_CLUSTER_KIND, "name": name,
                        "namespace": meta(cluster)["namespace"]}
        wanted_cp = {"apiVersion": CONTROL_PLANE_API_VERSION, "kind": KUBEADM_CONTROL_PLANE_KIND,
                     "name": name, "namespace": meta(cluster)["namespace"]}
        labels = meta(cluster).get("labels") or {}
        patch: dict[str, Any] = {}
        if not spec.get("infrastructureRef") or not spec.get("controlPlaneRef"):
            patch["spec"] = {"infrastructureRef": spec.get("infrastructureRef") or wanted_infra,
                             "controlPlaneRef": spec.get("controlPlaneRef") or wanted_cp}
        if labels.get(CLUSTER_NAME_LABEL) != name or CLUSTER_TOPOLOGY_OWNED_LABEL not in labels:
            patch["metadata"] = {"labels": {CLUSTER_NAME_LABEL: name, CLUSTER_TOPOLOGY_OWNED_LABEL: ""}}
        if patch:
            written = self.client.patch(
                CLUSTER_API_VERSION, CLUSTER_KIND, name, patch, namespace=meta(cluster)["namespace"], patch_type=MERGE
            )
            cluster["metadata"] = written["metadata"]
            cluster["spec"] = written["spec"]

    # -- conditions --------------------------------------------------------------------------------

    def _write_condition(self, scope: Scope, *, paused_messages: list[str] | None = None,
                         error: Exception | None = None) -> None:
        """Set TopologyReconciled on a fresh copy of the Cluster and write it (one retry on a conflict)."""
        for attempt in range(2):
            cluster = find_in(self.client, CLUSTER_API_VERSION, CLUSTER_KIND, meta(scope.cluster)["name"],
                              meta(scope.cluster)["namespace"])
            if cluster is None:
                return
            before = clone(cluster.get("status"))
            self._set_condition(cluster, scope, paused_messages, error)
            if cluster.get("status") == before:
                return
            try:
                self.client.update_status(cluster)
                return
            except ApiError as err:
                if err.code == 404:
                    return
                if err.code != 409 or attempt:
                    raise

    def _set_condition(self, cluster: dict[str, Any], scope: Scope, paused_messages: list[str] | None,
                       error: Exception | None) -> None:
        now = self.now()
        version = str(_topology(cluster).get("version", ""))

        def false(v1beta1_reason: str, severity: str, v1beta1_message: str, reason: str, message: str) -> None:
            cond.mark_false(cluster, TOPOLOGY_RECONCILED, v1beta1_reason, severity, v1beta1_message, now)
            cond.set_v1beta2(cluster, TOPOLOGY_RECONCILED, CONDITION_FALSE, reason, message, now)

        if paused_messages:
            text = ", ".join(paused_messages)
            false(PAUSED_REASON, cond.SEVERITY_INFO, text, PAUSED_REASON, text)
        elif meta(cluster).get("deletionTimestamp"):
            false(DELETED_REASON, cond.SEVERITY_INFO, "", DELETING_REASON, DELETING_MESSAGE)
        elif error is not None:
            false(TOPOLOGY_RECONCILE_FAILED_REASON, cond.SEVERITY_ERROR, str(error), RECONCILE_FAILED_REASON,
                  str(error))
        elif scope.blocking():
            text = "; ".join(HOOK_BLOCKING.format(hook=hook, message=message) if message
                             else HOOK_BLOCKING_NO_MESSAGE.format(hook=hook)
                             for hook, message in scope.blocking().items())
            false(HOOK_BLOCKING_REASON, cond.SEVERITY_INFO, text, HOOK_BLOCKING_REASON, text)
        elif scope.cp_pending_upgrade or scope.md_pending_upgrade:
            if scope.cp_pending_upgrade:
                text = CONTROL_PLANE_UPGRADE_ON_HOLD.format(version=version)
                reason = CONTROL_PLANE_UPGRADE_PENDING_REASON
            else:
                text = MACHINE_DEPLOYMENTS_UPGRADE_ON_HOLD.format(names=", ".join(sorted(scope.md_pending_upgrade)),
                                                                  version=version)
                reason = MACHINE_DEPLOYMENTS_UPGRADE_PENDING_REASON
            if scope.cp_provisioning:
                text += CONTROL_PLANE_PROVISIONING_SUFFIX
            elif scope.cp_upgrading and scope.cp is not None:
                text += CONTROL_PLANE_UPGRADING_SUFFIX.format(version=(scope.cp.get("spec") or {}).get("version"))
            elif scope.md_upgrading:
                text += MACHINE_DEPLOYMENTS_UPGRADING_SUFFIX.format(names=", ".join(scope.md_upgrading))
            false(reason, cond.SEVERITY_INFO, text, reason, text)
        else:
            cond.mark_true(cluster, TOPOLOGY_RECONCILED, now)
            cond.set_v1beta2(cluster, TOPOLOGY_RECONCILED, CONDITION_TRUE, RECONCILE_SUCCEEDED_REASON, "", now)


def _merge_diff(current: dict[str, Any], wanted: dict[str, Any]) -> dict[str, Any]:
    """The part of ``wanted`` that differs from ``current`` (fields ``wanted`` does not name are kept)."""
    out: dict[str, Any] = {}
    for key, value in wanted.items():
        have = current.get(key)
        if isinstance(value, dict) and isinstance(have, dict):
            nested = _merge_diff(have, value)
            if nested:
                out[key] = nested
        elif have != value:
            out[key] = value
    return out
