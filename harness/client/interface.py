"""The one client interface every controller uses, whatever carries its requests.

Objects are plain dicts shaped as Kubernetes JSON. Kinds are named by ``(apiVersion, kind)``.
Failures raise :class:`ApiError` carrying the server's ``Status``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from harness.kube.errors import StatusError
from harness.kube.names.meta import MERGE_PATCH_CONTENT_TYPE as MERGE

ApiError = StatusError



class WatchStream(Protocol):
    """Events of one watch. ``drain`` never blocks; ``on_event`` is called when events arrive."""

    on_event: Callable[[], None] | None
    closed: bool

    def drain(self) -> list[tuple[str, dict[str, Any]]]: ...

    def stop(self) -> None: ...


class Client(Protocol):
    """Requests to one cluster, as one user."""

    cluster: str
    user: str

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]: ...

    def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> dict[str, Any]: ...

    def watch(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        allow_bookmarks: bool = False,
    ) -> WatchStream: ...

    def create(self, obj: dict[str, Any], *, dry_run: bool = False) -> dict[str, Any]: ...

    def update(self, obj: dict[str, Any], *, dry_run: bool = False) -> dict[str, Any]: ...

    def update_status(self, obj: dict[str, Any], *, dry_run: bool = False) -> dict[str, Any]: ...

    def patch(
        self,
        api_version: str,
        kind: str,
        name: str,
        body: Any,
        *,
        namespace: str | None = None,
        patch_type: str = MERGE,
        subresource: str = "",
        dry_run: bool = False,
        field_manager: str | None = None,
        force: bool = False,
    ) -> dict[str, Any]: ...

    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        *,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        preconditions: dict[str, str] | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]: ...

    def evict(
        self, name: str, namespace: str, *, delete_options: dict[str, Any] | None = None, dry_run: bool = False
    ) -> dict[str, Any]: ...

    def bind(self, name: str, namespace: str, node_name: str) -> dict[str, Any]: ...

    def finalize_namespace(self, name: str, finalizers: list[str]) -> dict[str, Any]: ...

    def now(self) -> float:
        """The cluster's current (virtual) time, as Unix seconds."""
        ...

    def discover(self) -> list[dict[str, Any]]:
        """Every served resource: ``{apiVersion, group, kind, plural, namespaced, verbs, subresources}``,
        one entry per resource (preferred version only)."""
        ...

    def for_kubeconfig(self, kubeconfig: str, user: str | None = None) -> Client:
        """A client for the cluster a kubeconfig points at (a workload cluster's Secret value)."""
        ...


def find_in(
    client: Client, api_version: str, kind: str, name: str, namespace: str | None = None
) -> dict[str, Any] | None:
    """The object, or None when the API answers 404 (any other error is raised)."""
    try:
        return client.get(api_version, kind, name, namespace)
    except ApiError as err:
        if err.code == 404:
            return None
        raise


def update_status_unless_gone(client: Client, obj: dict[str, Any], status: dict[str, Any]) -> dict[str, Any] | None:
    """Write ``status`` through the object's status subresource; None when the object is gone (404: a
    controller acting on a cached copy lost the race with a deletion), any other error raised."""
    updated = dict(obj)
    updated["status"] = status
    try:
        return client.update_status(updated)
    except ApiError as err:
        if err.code == 404:
            return None
        raise


def obj_ref(obj: dict[str, Any]) -> tuple[str, str, str, str | None]:
    """``(apiVersion, kind, name, namespace)`` of an object."""
    meta = obj.get("metadata") or {}
    return obj["apiVersion"], obj["kind"], meta.get("name", ""), meta.get("namespace")


# The bodies of the requests both clients send: one place, so the wire shape cannot drift between transports.

def delete_options_body(
    *,
    propagation_policy: str | None = None,
    grace_period_seconds: int | None = None,
    preconditions: dict[str, str] | None = None,
    dry_run: bool = False,
) -> dict[str, Any]:
    """The ``DeleteOptions`` fields a ``delete`` call sets (only those given; no ``kind``/``apiVersion``)."""
    options: dict[str, Any] = {}
    if propagation_policy is not None:
        options["propagationPolicy"] = propagation_policy
    if grace_period_seconds is not None:
        options["gracePeriodSeconds"] = grace_period_seconds
    if preconditions:
        options["preconditions"] = dict(preconditions)
    if dry_run:
        options["dryRun"] = ["All"]
    return options


def eviction_body(name: str, namespace: str, delete_options: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``policy/v1`` ``Eviction`` posted to a pod's ``eviction`` subresource."""
    body: dict[str, Any] = {"apiVersion": "policy/v1", "kind": "Eviction",
                            "metadata": {"name": name, "namespace": namespace}}
    if delete_options is not None:
        body["deleteOptions"] = delete_options
    return body


def binding_body(name: str, namespace: str, node_name: str) -> dict[str, Any]:
    """The ``v1`` ``Binding`` posted to a pod's ``binding`` subresource."""
    return {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name, "namespace": namespace},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name}}


def finalize_body(name: str, finalizers: list[str]) -> dict[str, Any]:
    """The ``Namespace`` put to a namespace's ``finalize`` subresource."""
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name},
            "spec": {"finalizers": list(finalizers)}}
