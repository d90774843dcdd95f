"""Writing what a reconcile changed, as Cluster API's ``util/patch`` helper does: the status through the
status subresource, then metadata (labels, annotations, finalizers, owner references) and spec with a
JSON merge patch of the differences only. Used by the Cluster, MachineSet and MachineDeployment
controllers; an object that is gone meanwhile is not an error.
"""

from __future__ import annotations

from typing import Any

from controllers.machine.api import meta
from harness.client import MERGE, ApiError, Client

METADATA_FIELDS = ("labels", "annotations", "finalizers", "ownerReferences")


def copy_json(value: Any) -> Any:
    """A deep copy of JSON-shaped data (dicts, lists, scalars)."""
    if isinstance(value, dict):
        return {k: copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_json(v) for v in value]
    return value


def merge_diff(old: Any, new: Any) -> Any:
    """The JSON merge patch (RFC 7386) that turns ``old`` into ``new`` (None when they are equal and
    both are objects): removed keys become null, lists and scalars are replaced whole."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return copy_json(new)
    out: dict[str, Any] = {}
    for key in old:
        if key not in new:
            out[key] = None
    for key, value in new.items():
        if key not in old:
            out[key] = copy_json(value)
        elif old[key] != value:
            out[key] = merge_diff(old[key], value) if isinstance(value, dict) and isinstance(old[key], dict) \
                else copy_json(value)
    return out


def write(client: Client, original: dict[str, Any], current: dict[str, Any]) -> dict[str, Any] | None:
    """Write the changes from ``original`` (as read) to ``current``; the object as last written (the
    original when nothing changed, None when the object is gone). A status conflict is retried once on
    the fresh object: status belongs to the controller."""
    api_version, kind = str(current["apiVersion"]), str(current["kind"])
    name, namespace = meta(current)["name"], meta(current).get("namespace")
    written = original
    if current.get("status") != original.get("status"):
        body = dict(current)
        body["metadata"] = dict(meta(current), resourceVersion=meta(original).get("resourceVersion"))
        try:
            written = client.update_status(body)
        except ApiError as err:
            if err.code == 404:
                return None
            if err.code != 409:
                raise
            fresh = client.get(api_version, kind, name, namespace)
            fresh["status"] = copy_json(current.get("status"))
            written = client.update_status(fresh)
    patch: dict[str, Any] = {}
    metadata = {f: merge_diff(meta(original).get(f), meta(current).get(f)) for f in METADATA_FIELDS
                if meta(current).get(f) != meta(original).get(f)}
    if metadata:
        patch["metadata"] = metadata
    if current.get("spec") != original.get("spec"):
        patch["spec"] = merge_diff(original.get("spec") or {}, current.get("spec") or {})
    if patch:
        try:
            written = client.patch(api_version, kind, name, patch, namespace=namespace, patch_type=MERGE)
        except ApiError as err:
            if err.code != 404:
                raise
            return None
    return written
