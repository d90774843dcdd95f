"""The knobs every fake provider honours, as annotations on the object it provides:

- ``harness.test/provision-delay`` (Go duration, e.g. ``30s``): time from the object's creation to ready.
- ``harness.test/deletion-delay`` (Go duration, e.g. ``5m``): time from the deletionTimestamp until the
  provider removes its finalizer (the object goes).
- ``harness.test/deletion-stuck: "true"``: the provider never removes its finalizer (until the
  annotation is removed or changed).

An unparsable duration counts as 0.
"""

from __future__ import annotations

from typing import Any

from harness.clock import parse_rfc3339
from harness.kube.duration import duration_seconds
from harness.kube.names.knobs import DELETION_DELAY_ANNOTATION, DELETION_STUCK_ANNOTATION, PROVISION_DELAY_ANNOTATION

TRUE = "true"


def _annotations(obj: dict[str, Any]) -> dict[str, str]:
    return (obj.get("metadata") or {}).get("annotations") or {}


def _delay(obj: dict[str, Any], annotation: str) -> float:
    value = _annotations(obj).get(annotation)
    if not value:
        return 0.0
    try:
        return max(0.0, duration_seconds(value))
    except ValueError:
        return 0.0


def ready_at(obj: dict[str, Any]) -> float:
    """When the object may become ready: its creation time plus the provision delay."""
    created = (obj.get("metadata") or {}).get("creationTimestamp")
    return (parse_rfc3339(created) if created else 0.0) + _delay(obj, PROVISION_DELAY_ANNOTATION)


def deletion_stuck(obj: dict[str, Any]) -> bool:
    """Whether the deletion is held forever."""
    return _annotations(obj).get(DELETION_STUCK_ANNOTATION, "").lower() == TRUE


def gone_at(obj: dict[str, Any]) -> float:
    """When a deleting object may lose the provider's finalizer: deletionTimestamp plus the deletion delay."""
    deleted = (obj.get("metadata") or {}).get("deletionTimestamp")
    return (parse_rfc3339(deleted) if deleted else 0.0) + _delay(obj, DELETION_DELAY_ANNOTATION)
