"""Watches: one stream of events per watcher, filtered by namespace and selectors.

The store offers every committed change to each watch on that resource; a watch keeps the events
its watcher may see. Selector transitions follow the apiserver: an object that starts matching
arrives as ``ADDED``, one that stops matching as ``DELETED``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from harness.kube import errors
from harness.kube.names.meta import ADDED, BOOKMARK, DELETED, ERROR, MODIFIED

Matcher = Callable[[dict[str, Any]], bool]


class Watch:
    """A watcher's queue of ``(type, object)`` events.

    Objects in the queue are the store's own (never mutated after commit); consumers that hand
    them to user code copy them first. ``on_event`` is called after each event is queued, so a
    consumer in another loop can wake up.
    """

    def __init__(
        self,
        *,
        namespace: str | None,
        matcher: Matcher | None,
        allow_bookmarks: bool = False,
        bookmark_kind: tuple[str, str] = ("v1", ""),
        api_version: str = "",
        convert: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    ) -> None:
        self.namespace = namespace
        self._matcher = matcher
        self.allow_bookmarks = allow_bookmarks
        self.bookmark_kind = bookmark_kind
        self.api_version = api_version
        # Objects stored in another version's shape are converted for this watcher.
        self.convert = convert
        self.events: deque[tuple[str, dict[str, Any]]] = deque()
        self.on_event: Callable[[], None] | None = None
        self.closed = False
        # Events a watcher may leave unread before it is closed, as kube-apiserver's watch cache closes a
        # watcher that does not keep up (its client lists and watches again); None: no limit (in-world
        # watchers, read at every settle).
        self.max_queued: int | None = None
        self.last_rv = "0"
        self._close_hook: Callable[[Watch], None] | None = None

    def _matches(self, obj: dict[str, Any] | None) -> bool:
        if obj is None:
            return False
        if self.namespace is not None and obj["metadata"].get("namespace") != self.namespace:
            return False
        return self._matcher is None or self._matcher(obj)

    def offer(self, event_type: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        """Queue the event as this watcher sees it (after namespace and selector filtering)."""
        if self.closed:
            return
        if self.namespace is None and self._matcher is None and obj is not None:
            # Unfiltered (most watchers: informers of a whole resource): every object matches, so
            # a change is MODIFIED when there was an old version, ADDED when there was none.
            self._push(ADDED if event_type == MODIFIED and old is None else event_type, obj)
            return
        now_matches = self._matches(obj)
        if event_type == DELETED:
            if now_matches or self._matches(old):
                self._push(DELETED, obj)
            return
        if event_type == ADDED:
            if now_matches:
                self._push(ADDED, obj)
            return
        was_matching = self._matches(old)
        if now_matches and was_matching:
            self._push(MODIFIED, obj)
        elif now_matches:
            self._push(ADDED, obj)
        elif was_matching:
            self._push(DELETED, obj)

    def initial(self, obj: dict[str, Any]) -> None:
        """Queue a synthetic ``ADDED`` for an object that existed when the watch began."""
        if self._matches(obj):
            self._push(ADDED, obj)

    def bookmark(self, resource_version: str, annotations: dict[str, str] | None = None) -> None:
        """Queue a ``BOOKMARK`` carrying only ``metadata.resourceVersion``; only when asked for."""
        if not self.allow_bookmarks or self.closed:
            return
        api_version, kind = self.bookmark_kind
        meta: dict[str, Any] = {"resourceVersion": resource_version}
        if annotations:
            meta["annotations"] = annotations
        self.events.append((BOOKMARK, {"kind": kind, "apiVersion": api_version, "metadata": meta}))
        self._notify()

    def expire(self, message: str) -> None:
        """Queue the in-stream ``ERROR`` with a 410 ``Expired`` Status, then close."""
        self.events.append((ERROR, errors.gone(message).status))
        self._notify()
        self.stop()

    def _push(self, event_type: str, obj: dict[str, Any]) -> None:
        self.last_rv = obj["metadata"].get("resourceVersion", self.last_rv)
        if self.convert is not None:
            obj = self.convert(obj)
        elif self.api_version and obj.get("apiVersion") != self.api_version:
            obj = {**obj, "apiVersion": self.api_version}
        if self.max_queued is not None and len(self.events) >= self.max_queued:
            # Unresponsive: drop what it left unread (the objects it pins) and end its stream.
            self.events.clear()
            self.stop()
            return
        self.events.append((event_type, obj))
        on_event = self.on_event  # _notify, inlined: this runs for every event of every watch
        if on_event is not None:
            on_event()

    def _notify(self) -> None:
        if self.on_event is not None:
            self.on_event()

    def drain(self) -> list[tuple[str, dict[str, Any]]]:
        """Take every queued event."""
        out = list(self.events)
        self.events.clear()
        return out

    def stop(self) -> None:
        """Stop receiving events; queued ones stay readable."""
        if not self.closed:
            self.closed = True
            if self._close_hook is not None:
                self._close_hook(self)
            self._notify()
