"""Owner references (``metav1.OwnerReference``): the controller of an object and who owns it."""

from __future__ import annotations

from typing import Any


def owner_references(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """``metadata.ownerReferences`` of ``obj`` (empty when unset)."""
    return list((obj.get("metadata") or {}).get("ownerReferences") or [])


def controller_of(obj: dict[str, Any]) -> dict[str, Any] | None:
    """``metav1.GetControllerOf``: a copy of the owner reference with ``controller: true``, or None."""
    for ref in owner_references(obj):
        if ref.get("controller"):
            return dict(ref)
    return None


def is_controlled_by(obj: dict[str, Any], owner: dict[str, Any]) -> bool:
    """``metav1.IsControlledBy``: whether the controller reference of ``obj`` names ``owner``'s uid."""
    uid = (owner.get("metadata") or {}).get("uid")
    return any(ref.get("controller") and ref.get("uid") == uid for ref in owner_references(obj))


def is_owned_by(obj: dict[str, Any], owner: dict[str, Any]) -> bool:
    """Whether any owner reference of ``obj`` names ``owner``'s uid."""
    uid = (owner.get("metadata") or {}).get("uid")
    return uid is not None and any(ref.get("uid") == uid for ref in owner_references(obj))


def new_controller_ref(owner: dict[str, Any]) -> dict[str, Any]:
    """``metav1.NewControllerRef``: a reference to ``owner`` with ``controller`` and ``blockOwnerDeletion``."""
    meta = owner.get("metadata") or {}
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": meta["name"], "uid": meta.get("uid", ""),
            "controller": True, "blockOwnerDeletion": True}


__all__ = ["controller_of", "is_controlled_by", "is_owned_by", "new_controller_ref", "owner_references"]
