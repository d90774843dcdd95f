"""The client interface, defined in the vocabulary layer (harness/kube/client.py) so that the steps and
every layer name it without importing an implementation; re-exported here for harness.client's users.
Beside it, what both clients (HTTP and in-process) and the simulators share about requests."""

from __future__ import annotations

from typing import Any

from harness.kube.client import ApiError, Client, WatchStream, find_in, obj_ref

__all__ = [
    "ApiError",
    "Client",
    "WatchStream",
    "binding_body",
    "delete_options_body",
    "eviction_body",
    "finalize_body",
    "find_in",
    "obj_ref",
    "answers_optional",
    "shared_reads",
    "unanswered",
    "update_status_unless_gone",
]


def answers_optional(client: Client) -> bool:
    """Whether ``client``'s ``create``, ``update``, ``update_status`` and ``delete`` take ``answer=False`` (the
    in-process client: the caller does not read the written object, so none is copied for it)."""
    return bool(getattr(client, "answers_optional", False))


def unanswered(client: Client) -> dict[str, Any]:
    """The keyword arguments that tell ``client``'s ``create``, ``update``, ``update_status`` or ``delete`` the
    caller discards the answer: ``{"answer": False}`` for a client that can skip it, else none
    (``client.update_status(obj, **unanswered(client))``)."""
    return {"answer": False} if answers_optional(client) else {}


def shared_reads(client: Client) -> dict[str, Any]:
    """The keyword arguments that tell ``client``'s ``get``, ``list``, ``create`` or ``discover`` the caller only reads
    the answer and never changes any part of it: ``{"shared": True}`` for a client that then answers views of its
    stored objects instead of copies (the in-process client), else none
    (``client.list(..., **shared_reads(client))``)."""
    return {"shared": True} if getattr(client, "reads_shared", False) else {}


def update_status_unless_gone(
    client: Client, obj: dict[str, Any], status: dict[str, Any], *, answer: bool = True
) -> dict[str, Any] | None:
    """Write ``status`` through the object's status subresource; None when the object is gone (404: a
    controller acting on a cached copy lost the race with a deletion), any other error raised.
    ``answer`` false: the caller does not read the result (always None then); a client that can
    skip the answer (:func:`answers_optional`) is told so."""
    updated = dict(obj)
    updated["status"] = status
    try:
        if not answer:
            client.update_status(updated, **unanswered(client))
            return None
        return client.update_status(updated)
    except ApiError as err:
        if err.code == 404:
            return None
        raise


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
