"""Recording core/v1 Events about objects, as client-go's EventRecorder does (with aggregation of
repeats into ``count``)."""

from __future__ import annotations

import hashlib
from typing import Any

from harness.client.interface import Client, unanswered
from harness.clock import rfc3339
from harness.kube.errors import StatusError

NORMAL = "Normal"
WARNING = "Warning"


class EventRecorder:
    """Creates Events from one component; a repeat of the same event bumps its count."""

    def __init__(self, client: Client, component: str) -> None:
        self.client = client
        self.component = component

    def event(self, obj: dict[str, Any], event_type: str, reason: str, message: str) -> None:
        """Record an event about ``obj``; failures are swallowed (events are best effort)."""
        meta = obj.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        digest = hashlib.sha256(
            f"{meta.get('uid')}/{event_type}/{reason}/{message}/{self.component}".encode()
        ).hexdigest()[:16]
        name = f"{meta.get('name', 'unknown')}.{digest}"
        now = rfc3339(self.client.now())
        try:
            existing = self.client.get("v1", "Event", name, namespace)
        except StatusError:
            existing = None
        except ConnectionError:
            return
        try:
            if existing is not None:
                existing["count"] = int(existing.get("count") or 1) + 1
                existing["lastTimestamp"] = now
                self.client.update(existing, **unanswered(self.client))
                return
            self.client.create({
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": name, "namespace": namespace},
                "involvedObject": {
                    "apiVersion": obj.get("apiVersion"),
                    "kind": obj.get("kind"),
                    "name": meta.get("name"),
                    "namespace": meta.get("namespace"),
                    "uid": meta.get("uid"),
                    "resourceVersion": meta.get("resourceVersion"),
                },
                "reason": reason,
                "message": message,
                "type": event_type,
                "source": {"component": self.component},
                "reportingComponent": self.component,
                "firstTimestamp": now,
                "lastTimestamp": now,
                "count": 1,
            }, **unanswered(self.client))
        except (StatusError, ConnectionError):
            pass  # events are best effort: a terminating namespace or a vanished cluster drops them
