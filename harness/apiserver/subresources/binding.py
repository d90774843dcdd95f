"""``pods/<name>/binding`` (and ``POST bindings``, its older spelling): the scheduler's assignment of
a pod to a node.

A Binding without ``target.name`` is a 422; a pod that already has a node, or is being deleted, is a
409; otherwise ``spec.nodeName`` is set and ``PodScheduled=True`` stamped in one write (audited as a
``create`` of the ``binding`` subresource), answered with a 201 Success ``Status``.
"""

from __future__ import annotations

from typing import Any

from harness.apiserver import builtins
from harness.apiserver.resources import ResourceType
from harness.apiserver.server import APIServer
from harness.apiserver.subresources.base import CREATE, ServedBy, SubresourceRequest
from harness.kube import errors
from harness.kube.objects import replacement

BINDING_KIND = "Binding"


def bind(
    server: APIServer, namespace: str, name: str, body: Any, *, user: str = "admin", dry_run: bool = False
) -> dict[str, Any]:
    """Assign the unscheduled pod ``namespace/name`` to ``body.target.name``; returns the 201 Status."""
    rt = builtins.POD
    if not isinstance(body, dict) or not isinstance(body.get("target"), dict) or not body["target"].get("name"):
        raise errors.invalid_object(BINDING_KIND, "", name, [errors.required("target.name")])
    old = server.stored_view(rt, namespace, name)
    node = body["target"]["name"]
    current = (old.get("spec") or {}).get("nodeName")
    if current:
        raise errors.conflict("pods", "", name, f'pod {name} is already assigned to node "{current}"')
    if old["metadata"].get("deletionTimestamp"):
        raise errors.conflict("pods", "", name, f"pod {name} is being deleted, cannot be assigned to a host")
    # Own dicts where this write (and ``write``: the resourceVersion) edits; the rest shared.
    new = replacement(old, "metadata", "spec", "status")
    new["spec"]["nodeName"] = node
    conditions = [c for c in new["status"].get("conditions", []) if c.get("type") != "PodScheduled"]
    conditions.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                       "lastTransitionTime": server.now()})
    new["status"]["conditions"] = conditions
    if not dry_run:
        server.write(rt, old, new, verb="create", code=201, subresource="binding", user=user, answer=False)
    return errors.status(201, "", "", None, success=True)


def bind_named(
    server: APIServer, namespace: str, body: Any, *, user: str = "admin", dry_run: bool = False
) -> dict[str, Any]:
    """``POST bindings``: the Binding's own ``metadata.name`` names the pod."""
    name = ((body.get("metadata") or {}).get("name") if isinstance(body, dict) else None) or ""
    return bind(server, namespace, str(name), body, user=user, dry_run=dry_run)


class Binding(ServedBy):
    """``pods/binding``."""

    name = "binding"
    verbs = (CREATE,)
    resources = (("", "pods"),)

    def response_kind(self, rt: ResourceType) -> tuple[str, str, str]:
        return rt.group, rt.version, BINDING_KIND

    def create(self, request: SubresourceRequest, body: Any) -> dict[str, Any]:
        return bind(request.server, request.namespace or "", request.name, body, user=request.user,
                    dry_run=request.dry_run)


BINDING = Binding()
