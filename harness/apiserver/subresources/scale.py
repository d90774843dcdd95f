"""The ``scale`` subresource: an ``autoscaling/v1`` Scale view of a workload's ``spec.replicas``.

Served by every kind with ``ResourceType.scale`` (Deployment, ReplicaSet, StatefulSet,
ReplicationController, custom resources whose CRD asks for it). GET answers the Scale; PUT and
PATCH set ``spec.replicas`` from one (a stale ``metadata.resourceVersion`` is a 409, a negative or
non-integer count a 422) and record the write as the manager's ``scale`` managedFields entry.
"""

from __future__ import annotations

from typing import Any

from harness.apiserver import builtins, decoding, managedfields, patch
from harness.apiserver.resources import ResourceType
from harness.apiserver.server import APIServer
from harness.apiserver.subresources.base import READ_WRITE, Subresource, SubresourceRequest
from harness.kube import errors, selectors
from harness.kube.names.meta import (
    APPLY_PATCH_CONTENT_TYPE,
    JSON_PATCH_CONTENT_TYPE,
    MERGE_PATCH_CONTENT_TYPE,
    STRATEGIC_MERGE_PATCH_CONTENT_TYPE,
)

SCALE_GROUP = "autoscaling"
SCALE_VERSION = "v1"
SCALE_KIND = "Scale"
PATCH_TYPES = [
    JSON_PATCH_CONTENT_TYPE, MERGE_PATCH_CONTENT_TYPE, STRATEGIC_MERGE_PATCH_CONTENT_TYPE, APPLY_PATCH_CONTENT_TYPE,
]


def _not_served(rt: ResourceType, name: str) -> errors.StatusError:
    return errors.not_found(f"{rt.plural}/scale", rt.group, name)


def get_scale(server: APIServer, rt: ResourceType, namespace: str | None, name: str) -> dict[str, Any]:
    """``autoscaling/v1`` Scale of a Deployment, ReplicaSet, StatefulSet or ReplicationController."""
    if not rt.scale:
        raise _not_served(rt, name)
    obj = server.stored(rt, namespace, name)
    selector = (obj.get("spec") or {}).get("selector")
    if rt.kind == "ReplicationController" and isinstance(selector, dict):
        selector = {"matchLabels": selector}  # its selector is a plain label map
    parsed = selectors.label_selector_from_dict(selector) if isinstance(selector, dict) else None
    meta = obj["metadata"]
    return {
        "kind": SCALE_KIND,
        "apiVersion": f"{SCALE_GROUP}/{SCALE_VERSION}",
        "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                     if k in meta},
        "spec": {"replicas": int((obj.get("spec") or {}).get("replicas", 0) or 0)},
        "status": {"replicas": int((obj.get("status") or {}).get("replicas", 0) or 0),
                   "selector": str(parsed) if parsed is not None else ""},
    }


def update_scale(
    server: APIServer, rt: ResourceType, namespace: str | None, name: str, scale: Any, *, user: str = "admin",
    dry_run: bool = False, field_manager: str | None = None,
) -> dict[str, Any]:
    """Set ``spec.replicas`` from a Scale; a stale resourceVersion in it is a 409."""
    if not rt.scale:
        raise _not_served(rt, name)
    if isinstance(scale, dict):
        scale = decoding.decode(builtins.SCALE, scale)  # typed: `replicas: "x"` is the decoder's 400
    if not isinstance(scale, dict) or not isinstance(scale.get("spec"), dict):
        raise errors.bad_request("the body of the request was not a Scale")
    replicas = scale["spec"].get("replicas")
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise errors.invalid_object(
            SCALE_KIND, SCALE_GROUP, name,
            [errors.invalid("spec.replicas", replicas, "must be greater than or equal to 0")],
        )
    old = server.stored(rt, namespace, name)
    meta = scale.get("metadata")
    rv = meta.get("resourceVersion") if isinstance(meta, dict) else None
    if rv and rv != old["metadata"]["resourceVersion"]:
        raise errors.conflict(f"{rt.plural}", rt.group, name)
    new = server.stored(rt, namespace, name)
    new.setdefault("spec", {})["replicas"] = replicas
    manager = field_manager if field_manager is not None else user
    # The Scale write is recorded as the manager's entry for the "scale" subresource.
    managed = managedfields.record_update(rt, old, new, manager, server.now(), subresource="scale")
    server.commit_update(rt, old, new, subresource="", dry_run=dry_run, user=user, verb="update",
                         manager=manager, applied=managed or [])
    return get_scale(server, rt, namespace, name)


class Scale(Subresource):
    """``<resource>/scale``."""

    name = "scale"
    verbs = READ_WRITE

    def serves(self, rt: ResourceType) -> bool:
        return rt.scale

    def response_kind(self, rt: ResourceType) -> tuple[str, str, str]:
        return SCALE_GROUP, SCALE_VERSION, SCALE_KIND

    def get(self, request: SubresourceRequest) -> dict[str, Any]:
        return get_scale(request.server, request.rt, request.namespace, request.name)

    def update(self, request: SubresourceRequest, body: Any) -> dict[str, Any]:
        return update_scale(request.server, request.rt, request.namespace, request.name, body, user=request.user,
                            dry_run=request.dry_run, field_manager=request.field_manager)

    def patch(self, request: SubresourceRequest, body: Any, patch_type: str) -> tuple[int, dict[str, Any]]:
        current = self.get(request)
        if patch_type == JSON_PATCH_CONTENT_TYPE:
            patched = patch.json_patch(current, body)
        elif patch_type in PATCH_TYPES:
            # A Scale has no lists, so strategic merge and apply come down to a JSON merge.
            patched = patch.merge_patch(current, body)
        else:
            raise errors.unsupported_media_type(patch_type, PATCH_TYPES)
        return 200, self.update(request, patched)


SCALE = Scale()
