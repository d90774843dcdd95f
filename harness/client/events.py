"""Recording core/v1 Events about objects, as client-go's EventRecorder does (with aggregation of
repeats into ``count``).

Like client-go's event logger (``tools/record/events_cache.go``), a recorder remembers what it
recorded (name, count, first timestamp; the most recent 4,096 events) instead of reading the Event
back before each write: a new event is a create, a repeat a strategic merge PATCH of ``count``,
``lastTimestamp`` and ``message``, and a PATCH that finds the Event gone creates it again with the
count it has reached. Event names here are derived from what the event says (not from a timestamp
as upstream's), so a recorder that has not seen an event (a new instance of a component) can find it
already there: the create's ``AlreadyExists`` sends it to the Event the cluster holds, whose count
it carries on.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from harness.client.interface import Client, unanswered
from harness.clock import rfc3339
from harness.kube.client import STRATEGIC
from harness.kube.errors import StatusError

NORMAL = "Normal"
WARNING = "Warning"

# client-go's maxLruCacheEntries: how many distinct events a recorder remembers.
CACHE_SIZE = 4096


@dataclass
class _Observation:
    """What a recorder remembers of one event it recorded (client-go's eventLog)."""

    count: int
    first_timestamp: str


class EventRecorder:
    """Creates Events from one component; a repeat of the same event bumps its count."""

    def __init__(self, client: Client, component: str, *, cache_size: int = CACHE_SIZE) -> None:
        self.client = client
        self.component = component
        self._cache_size = cache_size
        # Event name -> observation, least recently recorded first.
        self._seen: OrderedDict[str, _Observation] = OrderedDict()

    def event(self, obj: dict[str, Any], event_type: str, reason: str, message: str) -> None:
        """Record an event about ``obj``; failures are swallowed (events are best effort)."""
        meta = obj.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        digest = hashlib.sha256(
            f"{meta.get('uid')}/{event_type}/{reason}/{message}/{self.component}".encode()
        ).hexdigest()[:16]
        name = f"{meta.get('name', 'unknown')}.{digest}"
        now = rfc3339(self.client.now())
        seen = self._seen.get(name)
        try:
            if seen is not None:
                # Counted before the write, as client-go's eventObserve does: a failed write is not retried.
                seen.count += 1
                self._seen.move_to_end(name)
                if self._bump(name, namespace, seen.count, now, message):
                    return
                count, first = seen.count, seen.first_timestamp  # the Event is gone: create it again
            else:
                count, first = 1, now
                self._remember(name, _Observation(count, first))
            if not self._create(obj, name, namespace, event_type, reason, message, count, first, now):
                self._repeat_of_stored(name, namespace, now, message)
        except (StatusError, ConnectionError):
            pass  # events are best effort: a terminating namespace or a vanished cluster drops them

    def _remember(self, name: str, observation: _Observation) -> None:
        self._seen[name] = observation
        self._seen.move_to_end(name)
        while len(self._seen) > self._cache_size:
            self._seen.popitem(last=False)

    def _bump(self, name: str, namespace: str, count: int, now: str, message: str) -> bool:
        """PATCH the stored Event's count; False when it is gone (404)."""
        try:
            self.client.patch("v1", "Event", name, {"count": count, "lastTimestamp": now, "message": message},
                              namespace=namespace, patch_type=STRATEGIC)
        except StatusError as err:
            if err.code == 404:
                return False
            raise
        return True

    def _create(
        self, obj: dict[str, Any], name: str, namespace: str, event_type: str, reason: str, message: str,
        count: int, first: str, now: str,
    ) -> bool:
        """Create the Event; False when one by that name already exists (409 ``AlreadyExists``)."""
        meta = obj.get("metadata") or {}
        try:
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
                "firstTimestamp": first,
                "lastTimestamp": now,
                "count": count,
            }, **unanswered(self.client))
        except StatusError as err:
            if err.code == 409 and err.reason == "AlreadyExists":
                return False
            raise
        return True

    def _repeat_of_stored(self, name: str, namespace: str, now: str, message: str) -> None:
        """An Event this recorder did not know of is already stored (another instance of the component
        recorded it): count this one on top of the stored count."""
        stored = self.client.get("v1", "Event", name, namespace)
        count = int(stored.get("count") or 1) + 1
        self._remember(name, _Observation(count, str(stored.get("firstTimestamp") or now)))
        self._bump(name, namespace, count, now, message)
