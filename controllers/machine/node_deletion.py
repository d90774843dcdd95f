"""Whether the Machine's Node may be touched at all during deletion, and deleting it at the end.

``isDeleteNodeAllowed`` says no (and then the pre-drain hook wait, drain, volume wait and Node deletion
are all skipped; pre-terminate hooks and the infrastructure and bootstrap deletion still happen) when:

1. the Cluster is being deleted (``cluster is being deleted``);
2. the Machine has no ``status.nodeRef``, even after a last look for a Node with its providerID (which,
   when found, is written to ``status.nodeRef``) (``noderef is nil``);
3. the Cluster's control plane object is being deleted (``control plane is being deleted``); an
   externally managed control plane allows deletion at once;
4. no control plane Machine of the Cluster is left that is not being deleted (``no control plane
   members``): the last control plane Node stays, and so do the Nodes of workers then.

The Node is deleted only after the infrastructure and bootstrap objects are gone. A failed deletion is
retried until ``spec.nodeDeletionTimeout`` (counted from the Machine's deletionTimestamp; unset or 0:
forever) has passed; then the Machine goes without it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from controllers.machine import logs
from controllers.machine.api import is_deleting, key, meta
from controllers.machine.errors import ReconcileError
from controllers.machine.noderef import node_by_provider_id, node_reference
from harness.client import ApiError, Client
from harness.clock import parse_rfc3339
from harness.kube.duration import duration_seconds

ERR_NIL_NODE_REF = "noderef is nil"
ERR_NO_CONTROL_PLANE_NODES = "no control plane members"
ERR_CLUSTER_BEING_DELETED = "cluster is being deleted"
ERR_CONTROL_PLANE_BEING_DELETED = "control plane is being deleted"

DELETE_NODE_ERROR = "error deleting node {name}"
CONNECTION_DOWN_ERROR = "failed deleting Node because connection to the workload cluster is down"

LOG_NOT_ALLOWED = "Skipping deletion of Kubernetes Node associated with Machine as it is not allowed"
LOG_CONTROL_PLANE_MISSING = "Control plane object specified in cluster spec.controlPlaneRef does not exist"
LOG_CLUSTER_CLIENT = "Failed to get cluster client while deleting Machine and checking for nodes"
LOG_GET_NODE = "Failed to get node while deleting Machine"
LOG_DELETING_NODE = "Deleting node"
LOG_TIMED_OUT = "Timed out deleting node"
LOG_TIMEOUT_EXPIRED = "Node deletion timeout expired, continuing without Node deletion."


def provider_id_of(machine: dict[str, Any], infra_machine: dict[str, Any] | None) -> str:
    """``spec.providerID`` of the Machine, else of its infrastructure machine ("" when neither has one)."""
    provider_id = (machine.get("spec") or {}).get("providerID")
    if provider_id:
        return str(provider_id)
    if infra_machine is not None:
        return str((infra_machine.get("spec") or {}).get("providerID") or "")
    return ""


def is_delete_node_allowed(
    management: Client,
    remote: Callable[[], Client],
    cluster: dict[str, Any],
    machine: dict[str, Any],
    infra_machine: dict[str, Any] | None,
    active_control_plane_machines: Callable[[], int],
    node_hint: Callable[[str], str] = lambda _provider_id: "",
) -> str | None:
    """None when the Node may be drained and deleted, else the reason it may not (one of the ``ERR_``
    texts). May set ``status.nodeRef`` on ``machine``. Raises :class:`ReconcileError` when it cannot tell."""
    if is_deleting(cluster):
        return ERR_CLUSTER_BEING_DELETED
    status = machine.setdefault("status", {})
    provider_id = provider_id_of(machine, infra_machine)
    if not status.get("nodeRef") and provider_id:
        # A last, best-effort look for the Node: errors are logged, never returned, so the Machine can go.
        try:
            node = node_by_provider_id(remote(), provider_id, node_hint(provider_id))
        except (ApiError, ConnectionError, ReconcileError) as err:
            logs.error(LOG_GET_NODE if not isinstance(err, ConnectionError) else LOG_CLUSTER_CLIENT, err,
                       Machine=key(machine))
            node = None
        if node is not None:
            status["nodeRef"] = node_reference(node)
    if not status.get("nodeRef"):
        return ERR_NIL_NODE_REF
    ref = (cluster.get("spec") or {}).get("controlPlaneRef")
    if ref:
        namespace = ref.get("namespace") or meta(cluster).get("namespace")
        try:
            control_plane = management.get(str(ref.get("apiVersion", "")), str(ref.get("kind", "")),
                                            str(ref.get("name", "")), namespace)
        except ApiError as err:
            if err.code != 404:
                raise ReconcileError(err.message) from err
            logs.error(LOG_CONTROL_PLANE_MISSING, err.message,
                       **{str(ref.get("kind", "")): f"{namespace}/{ref.get('name')}"})
            control_plane = None
        except ConnectionError as err:
            raise ReconcileError(str(err)) from err
        if control_plane is not None:
            if is_deleting(control_plane):
                return ERR_CONTROL_PLANE_BEING_DELETED
            if (control_plane.get("status") or {}).get("externalManagedControlPlane") is True:
                return None
    if active_control_plane_machines() == 0:
        return ERR_NO_CONTROL_PLANE_NODES
    return None


def delete_node(remote: Client | None, remote_error: str, name: str) -> str | None:
    """Delete the Node in the workload cluster; None when it is gone (already or now), else the error
    text (``error deleting node <name>: ...``)."""
    if remote is None:
        return f"{CONNECTION_DOWN_ERROR}: {remote_error}"
    try:
        remote.delete("v1", "Node", name)
    except ApiError as err:
        if err.code == 404:
            return None
        return f"{DELETE_NODE_ERROR.format(name=name)}: {err.message}"
    except ConnectionError as err:
        return f"{DELETE_NODE_ERROR.format(name=name)}: {err}"
    return None


def node_deletion_timed_out(machine: dict[str, Any], now: float) -> bool:
    """Whether ``spec.nodeDeletionTimeout`` has passed since the deletionTimestamp (never when unset or 0)."""
    timeout = (machine.get("spec") or {}).get("nodeDeletionTimeout")
    if not timeout:
        return False
    seconds = duration_seconds(str(timeout))
    if seconds == 0:
        return False
    deleted = parse_rfc3339(str(meta(machine).get("deletionTimestamp")))
    # Upstream retries while deletionTimestamp + timeout is still after now.
    return not deleted + seconds > now
