"""The deletion sequence of a Machine (``reconcileDelete`` of Cluster API v1.10), run from the top on
every reconcile of a deleting Machine:

1. deletion started (Deleting reason ``Deleting``, message ``Deletion started``);
2. ``isDeleteNodeAllowed`` (:mod:`controllers.machine.node_deletion`); when it says no, steps 3-5 and 9
   are skipped;
3. pre-drain hooks: wait (no requeue, the watch resumes) while any is present;
4. drain, unless excluded, timed out or the KCP rule applies: one pass every 20 s until done;
5. volume detach wait, unless excluded, timed out or the KCP rule applies: checked every 20 s;
6. pre-terminate hooks: wait while any is present (evaluated even when step 2 said no);
7. delete the infrastructure machine and wait until it is gone;
8. delete the bootstrap config (when the Machine references one) and wait until it is gone;
9. delete the Node, retried until ``spec.nodeDeletionTimeout`` has passed (upstream polls for 10 s within
   one reconcile; here one attempt is made per pass and a failed one defers the next pass by 10 s);
10. remove the ``machine.cluster.x-k8s.io`` finalizer.

The KCP rule (v1.9-v1.13): a control plane Machine owned by a KubeadmControlPlane that no longer has
the ``pre-terminate.delete.hook.machine.cluster.x-k8s.io/kcp-cleanup`` annotation skips drain and the
volume wait. The drain and volume timeouts count from ``status.deletion.nodeDrainStartTime`` and
``status.deletion.waitForNodeVolumeDetachStartTime`` (set once), inclusive; when one has passed the step
is skipped silently and its condition keeps its last False value.

A reconcile of a deleting Machine runs at most once a second, and not before 20 s after a drain or
volume pass that has to be repeated, whatever events arrive in between (upstream's reconcileDeleteCache).
"""

from __future__ import annotations

from typing import Any

from controllers.machine import conditions as cond
from controllers.machine import hooks, logs
from controllers.machine.api import (
    EXCLUDE_NODE_DRAINING_ANNOTATION,
    EXCLUDE_WAIT_FOR_NODE_VOLUME_DETACH_ANNOTATION,
    KCP_CLEANUP_HOOK_ANNOTATION,
    annotations,
    has_owner,
    is_deleting,
    labels,
    meta,
)
from controllers.machine.drain import DRAIN_RETRY_INTERVAL, drain_node
from controllers.machine.errors import ReconcileError, go_quote
from controllers.machine.node_deletion import (
    LOG_DELETING_NODE,
    LOG_NOT_ALLOWED,
    LOG_TIMED_OUT,
    LOG_TIMEOUT_EXPIRED,
    delete_node,
    is_delete_node_allowed,
    node_deletion_timed_out,
)
from controllers.machine.scope import Scope
from controllers.machine.volume_detach import VOLUME_DETACH_RETRY_INTERVAL, wait_for_node_volumes
from harness.client import NORMAL, WARNING, ApiError
from harness.clock import parse_rfc3339, rfc3339
from harness.kube.duration import duration_seconds
from harness.kube.names.capi import (
    CONTROL_PLANE_API_VERSION,
    CONTROL_PLANE_LABEL,
    DELETED_REASON,
    DELETION_COMPLETED_MESSAGE,
    DRAIN_NOT_COMPLETED_MESSAGE,
    DRAINING_NODE_REASON,
    DRAINING_SUCCEEDED,
    INTERNAL_ERROR_MESSAGE,
    INTERNAL_ERROR_REASON,
    KUBEADM_CONTROL_PLANE_KIND,
    MACHINE_FINALIZER,
    NODE_HEALTHY,
    PRE_TERMINATE_DELETE_HOOK_SUCCEEDED,
    VOLUME_WAIT_MESSAGE,
    WAITING_EXTERNAL_HOOK_REASON,
    WAITING_FOR_DELETION_MESSAGE,
    WAITING_FOR_INFRASTRUCTURE_DELETION_REASON,
    WAITING_FOR_PRE_TERMINATE_HOOK_REASON,
    WAITING_FOR_VOLUME_DETACH_REASON,
)

# At most one pass through the sequence per second per Machine (reconcileDeleteCache).
RECONCILE_DELETE_INTERVAL = 1.0
# nodeDeletionRetryTimeout: upstream polls the Node deletion every 2 s for up to 10 s within one reconcile.
# On the virtual clock a reconcile takes no time, so a failed attempt defers the next pass by as much.
NODE_DELETION_RETRY_TIMEOUT = 10.0

DELETION_STARTED_MESSAGE = "Deletion started"
DRAIN_ERROR_MESSAGE = "Error draining Node, please check controller logs for errors"
VOLUME_ERROR_MESSAGE = "Error waiting for volumes to be detached from Node, please check controller logs for errors"
DELETE_FAILED_MESSAGE = "Failed to delete {kind}, please check controller logs for errors"
NODE_DELETE_ERROR_MESSAGE = "Error deleting Node, please check controller logs for errors"
CHECK_ALLOWED_ERROR = "failed to check if Kubernetes Node deletion is allowed"
DELETE_OBJECT_ERROR = "failed to delete {kind} {name} for Machine {machine} in namespace {namespace}"

# Events.
FAILED_DRAIN_NODE = "FailedDrainNode"
FAILED_DRAIN_NODE_MESSAGE = "error draining Machine's node {node}: {err}"
SUCCESSFUL_DRAIN_NODE = "SuccessfulDrainNode"
SUCCESSFUL_DRAIN_NODE_MESSAGE = "success draining Machine's node {node}"
FAILED_WAIT_FOR_VOLUME_DETACH = "FailedWaitForVolumeDetach"
FAILED_WAIT_FOR_VOLUME_DETACH_MESSAGE = "error waiting for node volumes detaching, Machine's node {node}: {err}"
NODE_VOLUMES_DETACHED = "NodeVolumesDetached"
NODE_VOLUMES_DETACHED_MESSAGE = "success waiting for node volumes detaching Machine's node {node}"
FAILED_DELETE_NODE = "FailedDeleteNode"
FAILED_DELETE_NODE_MESSAGE = "error deleting Machine's node: {err}"

LOG_WAITING_FOR_INFRASTRUCTURE = "Waiting for infrastructure to be deleted"
LOG_WAITING_FOR_BOOTSTRAP = "Waiting for bootstrap to be deleted"


def _is_kcp_machine_without_cleanup_hook(machine: dict[str, Any]) -> bool:
    """The KCP rule: a KCP-owned control plane Machine whose ``kcp-cleanup`` pre-terminate hook is gone."""
    return (CONTROL_PLANE_LABEL in labels(machine)
            and has_owner(machine, CONTROL_PLANE_API_VERSION, (KUBEADM_CONTROL_PLANE_KIND,))
            and KCP_CLEANUP_HOOK_ANNOTATION not in annotations(machine))


def _timeout_exceeded(machine: dict[str, Any], timeout_field: str, start_field: str, now: float) -> bool:
    deletion = (machine.get("status") or {}).get("deletion")
    timeout = (machine.get("spec") or {}).get(timeout_field)
    if not deletion or not timeout:
        return False
    seconds = duration_seconds(str(timeout))
    if seconds <= 0:
        return False
    start = deletion.get(start_field)
    if not start:
        return False
    return now - parse_rfc3339(str(start)) >= seconds


def is_node_drain_allowed(machine: dict[str, Any], now: float) -> bool:
    """``isNodeDrainAllowed``: not for the KCP rule, the exclude annotation, or an expired
    ``spec.nodeDrainTimeout``."""
    if _is_kcp_machine_without_cleanup_hook(machine):
        return False
    if EXCLUDE_NODE_DRAINING_ANNOTATION in annotations(machine):
        return False
    return not _timeout_exceeded(machine, "nodeDrainTimeout", "nodeDrainStartTime", now)


def is_node_volume_detaching_allowed(machine: dict[str, Any], now: float) -> bool:
    """``isNodeVolumeDetachingAllowed``: not for the KCP rule, the exclude annotation, or an expired
    ``spec.nodeVolumeDetachTimeout``."""
    if _is_kcp_machine_without_cleanup_hook(machine):
        return False
    if EXCLUDE_WAIT_FOR_NODE_VOLUME_DETACH_ANNOTATION in annotations(machine):
        return False
    return not _timeout_exceeded(machine, "nodeVolumeDetachTimeout", "waitForNodeVolumeDetachStartTime", now)


def _deletion_status(machine: dict[str, Any]) -> dict[str, Any]:
    status = machine.setdefault("status", {})
    deletion = status.get("deletion")
    if not isinstance(deletion, dict):
        deletion = status["deletion"] = {}
    return deletion


def reconcile_delete(s: Scope) -> float | None:
    """Run the deletion sequence once; the seconds after which to run it again (None: wait for an
    event). Raises :class:`ReconcileError` (retried with back-off) after recording what went wrong."""
    m = s.machine
    s.reconcile_delete_executed = True
    s.defer(s.now + RECONCILE_DELETE_INTERVAL)
    s.deleting_reason = cond.DELETING_DELETING_REASON
    s.deleting_message = DELETION_STARTED_MESSAGE

    try:
        not_allowed = is_delete_node_allowed(
            s.management, s.remote, s.cluster, m, s.infra_machine, s.active_control_plane_machines, s.node_hint)
    except ReconcileError as err:
        s.deleting_reason = INTERNAL_ERROR_REASON
        s.deleting_message = INTERNAL_ERROR_MESSAGE
        raise ReconcileError(f"{CHECK_ALLOWED_ERROR}: {err}") from err
    allowed = not_allowed is None
    if not allowed:
        logs.info(LOG_NOT_ALLOWED, **s.log_values, Node=s.node_name, cause=not_allowed)

    if allowed:
        waiting = hooks.pre_drain_hooks(m)
        if waiting:
            logs.info(hooks.WAITING_FOR_PRE_DRAIN_LOG, **s.log_values, hooks=hooks.joined(waiting))
            cond.mark_false(m, cond.PRE_DRAIN_DELETE_HOOK_SUCCEEDED, WAITING_EXTERNAL_HOOK_REASON,
                            cond.SEVERITY_INFO, "", s.now)
            s.deleting_reason = cond.WAITING_FOR_PRE_DRAIN_HOOK_REASON
            s.deleting_message = hooks.WAITING_FOR_PRE_DRAIN_MESSAGE.format(hooks=hooks.joined(waiting))
            return None
        cond.mark_true(m, cond.PRE_DRAIN_DELETE_HOOK_SUCCEEDED, s.now)

        if is_node_drain_allowed(m, s.now):
            again = _drain(s)
            if again is not None:
                return again

        if is_node_volume_detaching_allowed(m, s.now):
            again = _wait_for_volumes(s)
            if again is not None:
                return again

    waiting = hooks.pre_terminate_hooks(m)
    if waiting:
        logs.info(hooks.WAITING_FOR_PRE_TERMINATE_LOG, **s.log_values, hooks=hooks.joined(waiting))
        cond.mark_false(m, PRE_TERMINATE_DELETE_HOOK_SUCCEEDED, WAITING_EXTERNAL_HOOK_REASON,
                        cond.SEVERITY_INFO, "", s.now)
        s.deleting_reason = WAITING_FOR_PRE_TERMINATE_HOOK_REASON
        s.deleting_message = hooks.WAITING_FOR_PRE_TERMINATE_MESSAGE.format(hooks=hooks.joined(waiting))
        return None
    cond.mark_true(m, PRE_TERMINATE_DELETE_HOOK_SUCCEEDED, s.now)

    infra_ref = (m.get("spec") or {}).get("infrastructureRef") or {}
    if not _external_gone(s, infra_ref, s.infra_machine, s.infra_machine_not_found, cond.INFRASTRUCTURE_READY,
                          LOG_WAITING_FOR_INFRASTRUCTURE, WAITING_FOR_INFRASTRUCTURE_DELETION_REASON):
        return None

    config_ref = ((m.get("spec") or {}).get("bootstrap") or {}).get("configRef")
    if config_ref and not _external_gone(s, config_ref, s.bootstrap_config, s.bootstrap_config_not_found,
                                         cond.BOOTSTRAP_READY, LOG_WAITING_FOR_BOOTSTRAP,
                                         cond.WAITING_FOR_BOOTSTRAP_DELETION_REASON):
        return None

    # The Node goes only after the infrastructure is gone (cluster-api#2565).
    if allowed:
        logs.info(LOG_DELETING_NODE, **s.log_values, Node=s.node_name)
        remote, remote_error = s.remote_or_error()
        failure = delete_node(remote, remote_error, s.node_name)
        if failure is not None:
            logs.error(LOG_TIMED_OUT, failure, **s.log_values, Node=s.node_name)
            cond.mark_false(m, NODE_HEALTHY, cond.DELETION_FAILED_REASON, cond.SEVERITY_WARNING, "", s.now)
            s.event(WARNING, FAILED_DELETE_NODE, FAILED_DELETE_NODE_MESSAGE.format(err=failure))
            if not node_deletion_timed_out(m, s.now):
                s.defer(s.now + NODE_DELETION_RETRY_TIMEOUT)
                s.deleting_reason = cond.DELETING_NODE_REASON
                s.deleting_message = NODE_DELETE_ERROR_MESSAGE
                raise ReconcileError(failure)
            logs.info(LOG_TIMEOUT_EXPIRED, **s.log_values)

    s.deleting_reason = cond.DELETION_COMPLETED_REASON
    s.deleting_message = DELETION_COMPLETED_MESSAGE
    finalizers = [f for f in meta(m).get("finalizers") or [] if f != MACHINE_FINALIZER]
    m["metadata"]["finalizers"] = finalizers
    return None


def _drain(s: Scope) -> float | None:
    """The drain step: None when drained, else the seconds until the next pass."""
    m = s.machine
    deletion = _deletion_status(m)
    deletion.setdefault("nodeDrainStartTime", rfc3339(s.now))
    start = str(deletion["nodeDrainStartTime"])
    if cond.get(m, DRAINING_SUCCEEDED) is None:
        cond.mark_false(m, DRAINING_SUCCEEDED, cond.DRAINING_REASON, cond.SEVERITY_INFO, cond.DRAINING_MESSAGE,
                        s.now)
    s.deleting_reason = DRAINING_NODE_REASON
    s.deleting_message = DRAIN_NOT_COMPLETED_MESSAGE.format(start=rfc3339(parse_rfc3339(start)))
    try:
        s.patch()
    except (ApiError, ConnectionError) as err:
        s.deleting_reason = INTERNAL_ERROR_REASON
        s.deleting_message = INTERNAL_ERROR_MESSAGE
        raise ReconcileError(str(err)) from err
    remote, remote_error = s.remote_or_error()
    try:
        outcome = drain_node(s.management, remote, remote_error, s.cluster, m, s.node_name, start, s.now)
    except ReconcileError as err:
        cond.mark_false(m, DRAINING_SUCCEEDED, cond.DRAINING_FAILED_REASON, cond.SEVERITY_WARNING, str(err),
                        s.now)
        s.deleting_reason = DRAINING_NODE_REASON
        s.deleting_message = DRAIN_ERROR_MESSAGE
        s.event(WARNING, FAILED_DRAIN_NODE, FAILED_DRAIN_NODE_MESSAGE.format(node=go_quote(s.node_name), err=err))
        raise
    if not outcome.completed:
        # Events must not bring the next pass forward: it runs 20 s from now.
        s.defer(s.now + DRAIN_RETRY_INTERVAL)
        cond.mark_false(m, DRAINING_SUCCEEDED, cond.DRAINING_REASON, cond.SEVERITY_INFO, outcome.message, s.now)
        s.deleting_reason = DRAINING_NODE_REASON
        s.deleting_message = outcome.message
        return DRAIN_RETRY_INTERVAL
    cond.mark_true(m, DRAINING_SUCCEEDED, s.now)
    s.event(NORMAL, SUCCESSFUL_DRAIN_NODE, SUCCESSFUL_DRAIN_NODE_MESSAGE.format(node=go_quote(s.node_name)))
    return None


def _wait_for_volumes(s: Scope) -> float | None:
    """The volume detach step: None when nothing is attached any more, else the seconds until the next check."""
    m = s.machine
    deletion = _deletion_status(m)
    deletion.setdefault("waitForNodeVolumeDetachStartTime", rfc3339(s.now))
    start = str(deletion["waitForNodeVolumeDetachStartTime"])
    if cond.get(m, cond.VOLUME_DETACH_SUCCEEDED) is None:
        cond.mark_false(m, cond.VOLUME_DETACH_SUCCEEDED, WAITING_FOR_VOLUME_DETACH_REASON, cond.SEVERITY_INFO,
                        cond.WAITING_FOR_VOLUME_DETACH_MESSAGE, s.now)
    s.deleting_reason = cond.WAITING_FOR_VOLUME_DETACH_V1BETA2_REASON
    s.deleting_message = VOLUME_WAIT_MESSAGE.format(start=rfc3339(parse_rfc3339(start)))
    try:
        wait = wait_for_node_volumes(s.management, s.remote(), s.cluster, m, s.node_name, start, s.now)
    except ReconcileError as err:
        s.deleting_reason = cond.WAITING_FOR_VOLUME_DETACH_V1BETA2_REASON
        s.deleting_message = VOLUME_ERROR_MESSAGE
        s.event(WARNING, FAILED_WAIT_FOR_VOLUME_DETACH,
                FAILED_WAIT_FOR_VOLUME_DETACH_MESSAGE.format(node=go_quote(s.node_name), err=err))
        raise
    if not wait.done:
        s.defer(s.now + VOLUME_DETACH_RETRY_INTERVAL)
        s.deleting_reason = cond.WAITING_FOR_VOLUME_DETACH_V1BETA2_REASON
        s.deleting_message = wait.message
        return VOLUME_DETACH_RETRY_INTERVAL
    cond.mark_true(m, cond.VOLUME_DETACH_SUCCEEDED, s.now)
    s.event(NORMAL, NODE_VOLUMES_DETACHED, NODE_VOLUMES_DETACHED_MESSAGE.format(node=go_quote(s.node_name)))
    return None


def _external_gone(
    s: Scope,
    ref: dict[str, Any],
    obj: dict[str, Any] | None,
    not_found: bool,
    ready_condition: str,
    waiting_log: str,
    waiting_reason: str,
) -> bool:
    """Phases 8 and 9 (infrastructure, then bootstrap): True once the referenced object is gone;
    otherwise delete it and record why the Machine waits (or why the delete failed)."""
    kind = str(ref.get("kind", ""))
    try:
        gone = _delete_external(s, obj, not_found, ready_condition)
    except ReconcileError:
        s.deleting_reason = INTERNAL_ERROR_REASON
        s.deleting_message = DELETE_FAILED_MESSAGE.format(kind=kind)
        raise
    if not gone:
        logs.info(waiting_log, **s.log_values, **{kind: f"{ref.get('namespace', '')}/{ref.get('name', '')}"})
        s.deleting_reason = waiting_reason
        s.deleting_message = WAITING_FOR_DELETION_MESSAGE.format(kind=kind)
    return gone


def _delete_external(s: Scope, obj: dict[str, Any] | None, not_found: bool, ready_condition: str) -> bool:
    """``reconcileDeleteInfrastructure``/``Bootstrap``: True once the object is gone; otherwise delete it
    (once) and wait for the watch to report it gone."""
    if obj is None and not_found:
        cond.mark_false(s.machine, ready_condition, DELETED_REASON, cond.SEVERITY_INFO, "", s.now)
        return True
    if obj is not None and not is_deleting(obj):
        m = meta(obj)
        try:
            s.management.delete(obj["apiVersion"], obj["kind"], m["name"], m.get("namespace"))
        except ApiError as err:
            if err.code != 404:
                raise ReconcileError(DELETE_OBJECT_ERROR.format(
                    kind=obj["kind"], name=go_quote(m["name"]), machine=go_quote(s.name),
                    namespace=go_quote(s.namespace)) + f": {err.message}") from err
        except ConnectionError as err:
            raise ReconcileError(str(err)) from err
    return False

