"""The phases every reconcile of a Machine runs before the deletion sequence (Cluster API v1.10
``machine_controller_phases.go`` and ``machine_controller_noderef.go``, the parts deletion depends on):

- owner and labels: a stand-alone Machine gets its Cluster as owner; every Machine the cluster-name label;
- bootstrap: the bootstrap config is owned by the Machine; once it reports ``status.ready`` its
  ``status.dataSecretName`` goes to ``spec.bootstrap.dataSecretName`` (``status.bootstrapReady``);
- infrastructure: the infrastructure machine is owned by the Machine; once ready its ``spec.providerID``
  goes to the Machine (``status.infrastructureReady``, addresses, failure domain);
- node: the Node with that providerID is ``status.nodeRef``; it gets the Machine's bookkeeping
  annotations, and ``NodeHealthy`` summarises its conditions.

While the Machine is deleting, a missing infrastructure machine, bootstrap config or Node is expected.
Each phase returns the seconds after which to look again (None: wait for an event) or raises.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from controllers.machine import conditions as cond
from controllers.machine import logs
from controllers.machine.api import (
    INVALID_CONFIGURATION_ERROR,
    MACHINE_POOL_NAME_LABEL,
    group_of,
    is_deleting,
    meta,
)
from controllers.machine.errors import ReconcileError, go_quote
from controllers.machine.noderef import (
    managed_annotations,
    missing_annotations,
    node_by_provider_id,
    node_reference,
    summarize_node_conditions,
)
from controllers.machine.scope import Scope
from harness.client import MERGE, NORMAL, WARNING, ApiError
from harness.client.interface import shared_reads
from harness.kube.names.capi import (
    CLUSTER_API_VERSION,
    CLUSTER_KIND,
    CLUSTER_NAME_LABEL,
    CONTROL_PLANE_LABEL,
    CONTROL_PLANE_NAME_LABEL,
    DELETING_REASON,
    FAILURE_FROM_REFERENCE_MESSAGE,
    MACHINE_KIND,
    MACHINE_SET_KIND,
    MACHINE_SET_NAME_LABEL,
    NODE_HEALTHY,
)
from harness.kube.names.core import CONDITION_FALSE, CONDITION_UNKNOWN
from harness.kube.objects import clone
from harness.kube.ownerrefs import controller_of

# externalReadyWait: how soon a missing bootstrap config or infrastructure machine is looked for again.
EXTERNAL_READY_WAIT = 30.0

INFRA_DELETED_AFTER_READY = "Machine infrastructure resource {gvk} with name {name} has been deleted after being ready"
COULD_NOT_FIND_ERROR = "could not find {gvk} {name} for Machine {machine} in namespace {namespace}"
EMPTY_DATA_SECRET_ERROR = (
    "retrieved empty dataSecretName from bootstrap provider for Machine {machine} in namespace {namespace}"
)
EMPTY_PROVIDER_ID_ERROR = (
    "retrieved empty Spec.ProviderID from infrastructure provider for Machine {machine} in namespace {namespace}"
)
NO_MATCHING_NODE_ERROR = (
    "no matching Node for Machine {machine} in namespace {namespace}: cannot find node with matching ProviderID"
)
RECONCILE_NODE_ERROR = "failed to reconcile Node {node}"

SUCCESSFUL_SET_NODE_REF = "SuccessfulSetNodeRef"
FAILED_TO_RETRIEVE_NODE = "Failed to retrieve Node by ProviderID"

LOG_BOOTSTRAP_MISSING = "Could not find bootstrap config object, requeuing"
LOG_WAITING_FOR_BOOTSTRAP = "Waiting for bootstrap provider to generate data secret and report status.ready"
LOG_BOOTSTRAP_READY = "Bootstrap provider generated data secret and reports status.ready"
LOG_INFRA_MISSING = "Could not find infrastructure machine, requeuing"
LOG_INFRA_DELETED = "Machine infrastructure reference has been deleted after being ready, setting failure state"
LOG_WAITING_FOR_INFRA = "Waiting for infrastructure provider to create machine infrastructure and report status.ready"
LOG_INFRA_READY = "Infrastructure provider has completed machine infrastructure provisioning and reports status.ready"
LOG_WAITING_FOR_PROVIDER_ID = "Waiting for infrastructure provider to report spec.providerID"
LOG_NODE_NOT_YET = "Infrastructure provider reporting spec.providerID, matching Kubernetes node is not yet available"
LOG_NODE_AVAILABLE = "Infrastructure provider reporting spec.providerID, Kubernetes node is now available"


def _gvk(ref: dict[str, Any]) -> str:
    """``schema.GroupVersionKind.String()``: ``group/version, Kind=kind``."""
    return f"{ref.get('apiVersion', '')}, Kind={ref.get('kind', '')}"


def reconcile_owner_and_labels(s: Scope) -> float | None:
    """Own a stand-alone Machine by its Cluster; always set the cluster-name label."""
    m = s.machine
    metadata = m.setdefault("metadata", {})
    refs = list(metadata.get("ownerReferences") or [])
    owned_by_cluster = any(group_of(str(r.get("apiVersion", ""))) == group_of(CLUSTER_API_VERSION)
                           and r.get("kind") == CLUSTER_KIND for r in refs)
    origin_labels = (MACHINE_SET_NAME_LABEL, MACHINE_POOL_NAME_LABEL, CONTROL_PLANE_NAME_LABEL)
    if controller_of(m) is None and not owned_by_cluster and not any(lb in (metadata.get("labels") or {})
                                                                      for lb in origin_labels):
        refs.append({"apiVersion": CLUSTER_API_VERSION, "kind": CLUSTER_KIND, "name": meta(s.cluster)["name"],
                     "uid": meta(s.cluster).get("uid", "")})
        metadata["ownerReferences"] = refs
    machine_labels = dict(metadata.get("labels") or {})
    machine_labels[CLUSTER_NAME_LABEL] = str((m.get("spec") or {}).get("clusterName", ""))
    metadata["labels"] = machine_labels
    return None


def _external(s: Scope, ref: dict[str, Any], watch: Callable[[str, str], None]) -> dict[str, Any]:
    """``reconcileExternal``: the referenced object, owned by the Machine and labelled with its Cluster;
    its failures are copied to the Machine. Raises ApiError (404 when it does not exist)."""
    namespace = ref.get("namespace") or s.namespace
    api_version, kind = str(ref.get("apiVersion", "")), str(ref.get("kind", ""))
    # A view where the client offers one (shared_reads): the phases read it, take its scalars and copy what else
    # they keep; a change goes out as a patch.
    obj = s.management.get(api_version, kind, str(ref.get("name", "")), namespace, **shared_reads(s.management))
    watch(api_version, kind)
    desired = {"apiVersion": CLUSTER_API_VERSION, "kind": MACHINE_KIND, "name": s.name,
               "uid": meta(s.machine).get("uid", ""), "controller": True, "blockOwnerDeletion": True}
    refs = list(meta(obj).get("ownerReferences") or [])
    cp_ref = (s.cluster.get("spec") or {}).get("controlPlaneRef") or {}
    is_cp = CONTROL_PLANE_LABEL in (meta(s.machine).get("labels") or {})

    def on_create_owner(r: dict[str, Any]) -> bool:
        group = group_of(str(r.get("apiVersion", "")))
        if group == group_of(CLUSTER_API_VERSION) and r.get("kind") == MACHINE_SET_KIND:
            return True
        return bool(is_cp and cp_ref and group == group_of(str(cp_ref.get("apiVersion", "")))
                    and r.get("kind") == cp_ref.get("kind"))

    has_desired = any(
        r.get("apiVersion") == CLUSTER_API_VERSION
        and r.get("kind") == MACHINE_KIND
        and r.get("name") == s.name
        and r.get("uid") == desired["uid"]
        and r.get("controller")
        for r in refs
    )
    cluster_name = str((s.machine.get("spec") or {}).get("clusterName", ""))
    labelled = (meta(obj).get("labels") or {}).get(CLUSTER_NAME_LABEL) == cluster_name
    if not any(on_create_owner(r) for r in refs) and has_desired and labelled:
        failure_from(s, obj)
        return obj
    kept = [dict(r, controller=False) if r.get("controller") else r for r in refs if not on_create_owner(r)
            and not (r.get("kind") == MACHINE_KIND and r.get("name") == s.name)]
    body = {"metadata": {"ownerReferences": kept + [desired],
                         "labels": {**(meta(obj).get("labels") or {}), CLUSTER_NAME_LABEL: cluster_name}}}
    if not is_deleting(obj):
        obj = s.management.patch(api_version, kind, meta(obj)["name"], body, namespace=namespace, patch_type=MERGE)
    failure_from(s, obj)
    return obj


def failure_from(s: Scope, obj: dict[str, Any]) -> None:
    """Copy ``status.failureReason``/``failureMessage`` of a referenced object to the Machine."""
    status = obj.get("status") or {}
    machine_status = s.machine.setdefault("status", {})
    if status.get("failureReason"):
        machine_status["failureReason"] = status["failureReason"]
    if status.get("failureMessage"):
        machine_status["failureMessage"] = FAILURE_FROM_REFERENCE_MESSAGE.format(
            gvk=_gvk(obj), name=go_quote(meta(obj).get("name", "")), message=status["failureMessage"])


def _missing(err: ApiError) -> bool:
    """A NotFound for the object itself (a kind the server does not serve is another failure)."""
    return err.code == 404 and bool((err.status.get("details") or {}).get("name"))


def _mirror_ready(s: Scope, condition_type: str, obj: dict[str, Any], fallback_reason: str) -> bool:
    """``conditions.SetMirror`` of the object's Ready condition, with the fallback upstream uses."""
    ready = bool((obj.get("status") or {}).get("ready"))
    mirrored = None
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if condition.get("type") == cond.READY:
            mirrored = condition
    m = s.machine
    if mirrored is not None:
        cond.set_v1beta1(m, condition_type, str(mirrored.get("status", "")), s.now,
                         reason=str(mirrored.get("reason", "")), severity=str(mirrored.get("severity", "")),
                         message=str(mirrored.get("message", "")))
    elif ready:
        cond.mark_true(m, condition_type, s.now)
    else:
        reason = DELETING_REASON if is_deleting(m) else fallback_reason
        cond.mark_false(m, condition_type, reason, cond.SEVERITY_INFO, "", s.now)
    return ready


def reconcile_bootstrap(s: Scope, watch: Callable[[str, str], None]) -> float | None:
    """The bootstrap config phase (nothing to do without ``spec.bootstrap.configRef``)."""
    m = s.machine
    spec = m.setdefault("spec", {})
    bootstrap = spec.setdefault("bootstrap", {})
    ref = bootstrap.get("configRef")
    if not ref:
        return None
    try:
        obj = _external(s, ref, watch)
    except ApiError as err:
        if not _missing(err):
            raise ReconcileError(err.message) from err
        s.bootstrap_config_not_found = True
        if is_deleting(m):
            return None
        logs.info(LOG_BOOTSTRAP_MISSING, **s.log_values,
                  **{str(ref.get("kind", "")): f"{ref.get('namespace', '')}/{ref.get('name', '')}"})
        return EXTERNAL_READY_WAIT
    s.bootstrap_config = obj
    status = m.setdefault("status", {})
    if bootstrap.get("dataSecretName"):
        status["bootstrapReady"] = True
        cond.mark_true(m, cond.BOOTSTRAP_READY, s.now)
        return None
    ready = _mirror_ready(s, cond.BOOTSTRAP_READY, obj, cond.WAITING_FOR_DATA_SECRET_REASON)
    if is_deleting(obj):
        return None
    if not ready:
        logs.info(LOG_WAITING_FOR_BOOTSTRAP, **s.log_values, **{obj["kind"]: f"{s.namespace}/{meta(obj)['name']}"})
        return None
    secret = (obj.get("status") or {}).get("dataSecretName")
    if not secret:
        raise ReconcileError(EMPTY_DATA_SECRET_ERROR.format(machine=go_quote(s.name), namespace=go_quote(s.namespace)))
    bootstrap["dataSecretName"] = secret
    if not status.get("bootstrapReady"):
        logs.info(LOG_BOOTSTRAP_READY, **s.log_values, Secret=f"{s.namespace}/{secret}")
    status["bootstrapReady"] = True
    return None


def reconcile_infrastructure(s: Scope, watch: Callable[[str, str], None]) -> float | None:
    """The infrastructure machine phase."""
    m = s.machine
    spec = m.setdefault("spec", {})
    ref = spec.get("infrastructureRef") or {}
    status = m.setdefault("status", {})
    try:
        obj = _external(s, ref, watch)
    except ApiError as err:
        if not _missing(err):
            raise ReconcileError(err.message) from err
        s.infra_machine_not_found = True
        if is_deleting(m):
            return None
        if status.get("infrastructureReady"):
            logs.error(LOG_INFRA_DELETED, err.message, **s.log_values)
            status["failureReason"] = INVALID_CONFIGURATION_ERROR
            status["failureMessage"] = INFRA_DELETED_AFTER_READY.format(
                gvk=_gvk(ref), name=go_quote(ref.get("name", "")))
            raise ReconcileError(COULD_NOT_FIND_ERROR.format(
                gvk=_gvk(ref), name=go_quote(ref.get("name", "")), machine=go_quote(s.name),
                namespace=go_quote(s.namespace))) from err
        logs.info(LOG_INFRA_MISSING, **s.log_values,
                  **{str(ref.get("kind", "")): f"{ref.get('namespace', '')}/{ref.get('name', '')}"})
        return EXTERNAL_READY_WAIT
    s.infra_machine = obj
    ready = bool((obj.get("status") or {}).get("ready"))
    if ready and not status.get("infrastructureReady"):
        logs.info(LOG_INFRA_READY, **s.log_values, **{obj["kind"]: f"{s.namespace}/{meta(obj)['name']}"})
    _mirror_ready(s, cond.INFRASTRUCTURE_READY, obj, cond.WAITING_FOR_INFRASTRUCTURE_REASON)
    if is_deleting(obj):
        return None
    if not ready and not status.get("infrastructureReady"):
        logs.info(LOG_WAITING_FOR_INFRA, **s.log_values, **{obj["kind"]: f"{s.namespace}/{meta(obj)['name']}"})
        return None
    provider_id = (obj.get("spec") or {}).get("providerID")
    if not provider_id:
        raise ReconcileError(EMPTY_PROVIDER_ID_ERROR.format(machine=go_quote(s.name), namespace=go_quote(s.namespace)))
    addresses = (obj.get("status") or {}).get("addresses")
    if addresses is not None:
        status["addresses"] = clone(addresses)  # the referenced object's own list (read as a view)
    failure_domain = (obj.get("spec") or {}).get("failureDomain")
    if failure_domain is not None:
        spec["failureDomain"] = failure_domain
    spec["providerID"] = provider_id
    status["infrastructureReady"] = True
    return None


def reconcile_node(s: Scope) -> float | None:
    """The Node phase: ``status.nodeRef``, ``status.nodeInfo``, the Node's annotations, ``NodeHealthy``."""
    m = s.machine
    status = m.setdefault("status", {})
    provider_id = (m.get("spec") or {}).get("providerID")
    ref = (m.get("spec") or {}).get("infrastructureRef") or {}
    if not provider_id:
        logs.info(LOG_WAITING_FOR_PROVIDER_ID, **s.log_values,
                  **{str(ref.get("kind", "")): f"{ref.get('namespace', '')}/{ref.get('name', '')}"})
        cond.mark_false(m, NODE_HEALTHY, cond.WAITING_FOR_NODE_REF_REASON, cond.SEVERITY_INFO, "", s.now)
        return None
    remote = s.remote()
    s.watch_nodes(remote)
    try:
        hint = s.node_hint(str(provider_id)) or str((status.get("nodeRef") or {}).get("name", ""))
        node = node_by_provider_id(remote, str(provider_id), hint)
    except (ApiError, ConnectionError, ReconcileError) as err:
        text = err.message if isinstance(err, ApiError) else str(err)
        s.event(WARNING, FAILED_TO_RETRIEVE_NODE, text)
        cond.mark_unknown(m, NODE_HEALTHY, cond.NODE_INSPECTION_FAILED_REASON,
                          cond.NODE_INSPECTION_FAILED_MESSAGE, s.now)
        raise ReconcileError(text) from err
    if node is None:
        if is_deleting(m):
            return None
        if status.get("nodeRef"):
            cond.mark_false(m, NODE_HEALTHY, cond.NODE_NOT_FOUND_REASON, cond.SEVERITY_ERROR, "", s.now)
            raise ReconcileError(NO_MATCHING_NODE_ERROR.format(
                machine=go_quote(s.name), namespace=go_quote(s.namespace)))
        cond.mark_false(m, NODE_HEALTHY, cond.NODE_PROVISIONING_REASON, cond.SEVERITY_WARNING,
                        cond.NODE_PROVISIONING_MESSAGE, s.now)
        logs.info(LOG_NODE_NOT_YET, **s.log_values, providerID=provider_id)
        return None
    s.node = node
    if not status.get("nodeRef"):
        status["nodeRef"] = node_reference(node)
        logs.info(LOG_NODE_AVAILABLE, **s.log_values, providerID=provider_id, Node=meta(node)["name"])
        s.event(NORMAL, SUCCESSFUL_SET_NODE_REF, meta(node)["name"])
    node_info = (node.get("status") or {}).get("nodeInfo")
    if node_info:
        status["nodeInfo"] = clone(node_info)  # the Node's own (read as a view)
    missing = missing_annotations(node, managed_annotations(m))
    if missing and not is_deleting(node):
        try:
            remote.patch("v1", "Node", meta(node)["name"], {"metadata": {"annotations": missing}}, patch_type=MERGE)
        except (ApiError, ConnectionError) as err:
            text = err.message if isinstance(err, ApiError) else str(err)
            raise ReconcileError(f"{RECONCILE_NODE_ERROR.format(node=meta(node)['name'])}: {text}") from err
    if s.infra_machine is None or is_deleting(s.infra_machine):
        cond.mark_false(m, NODE_HEALTHY, DELETING_REASON, cond.SEVERITY_INFO, "", s.now)
        return None
    health, message = summarize_node_conditions(node)
    if health == CONDITION_FALSE:
        cond.mark_false(m, NODE_HEALTHY, cond.NODE_CONDITIONS_FAILED_REASON, cond.SEVERITY_WARNING, message,
                        s.now)
    elif health == CONDITION_UNKNOWN:
        cond.mark_unknown(m, NODE_HEALTHY, cond.NODE_CONDITIONS_FAILED_REASON, message, s.now)
    else:
        cond.mark_true(m, NODE_HEALTHY, s.now)
    return None
