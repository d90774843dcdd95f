"""``namespaces/<name>/finalize``: the namespace controller's way to change ``spec.finalizers``.

A PUT replaces ``spec.finalizers`` (the main resource's writes keep them as they are); an empty list
on a deleting namespace without metadata finalizers removes the namespace.
"""

from __future__ import annotations

from typing import Any

from harness.apiserver import builtins
from harness.apiserver.server import APIServer
from harness.apiserver.subresources.base import UPDATE, ServedBy, SubresourceRequest
from harness.kube import errors


def finalize_namespace(
    server: APIServer, name: str, body: Any, *, user: str = "admin", dry_run: bool = False
) -> dict[str, Any]:
    """PUT ``namespaces/<name>/finalize``; returns the namespace as written."""
    rt = builtins.NAMESPACE
    old = server.stored(rt, None, name)
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request was not a JSON object")
    new = server.stored(rt, None, name)
    new["spec"] = {"finalizers": list((body.get("spec") or {}).get("finalizers") or [])}
    if new == old or dry_run:
        return server.present(rt, new)
    return server.write(rt, old, new, verb="update", code=200, subresource="finalize", user=user)


class Finalize(ServedBy):
    """``namespaces/finalize``."""

    name = "finalize"
    verbs = (UPDATE,)
    resources = (("", "namespaces"),)
    field_managed = False  # the write records no managedFields entry, so no manager is derived

    def update(self, request: SubresourceRequest, body: Any) -> dict[str, Any]:
        return finalize_namespace(request.server, request.name, body, user=request.user, dry_run=request.dry_run)


FINALIZE = Finalize()

