"""A watch-backed read cache for controllers in a process of their own, as controller-runtime's cached
client reads through its informers.

:class:`CachedClient` wraps a client (an :class:`~harness.client.http.HttpClient`) and answers ``get``
from what the manager's watches have delivered, instead of a round trip, when a controller of that
manager watches the kind cluster-wide (or in the object's namespace) without a label or field selector,
and that watch is *synced*: it existed when the process last caught up with the server (every event the
server had given it was read) and has not ended since. Otherwise ``get`` goes to the server, as does
everything else (lists, writes, the admin API). An object the synced watch has not delivered does not
exist: ``404 NotFound`` with the server's text.

Freshness. Upstream's cache lags behind the server by however long its informer takes, so a read just
after a write may see the old object; that lag depends on timing, and the harness must be deterministic.
Here the watches are caught up at each round of the lockstep protocol (harness/client/remote.py), and
within a round the cache answers with the newer (by ``resourceVersion``) of what the watches delivered
and what this client's own writes were answered with; an object this client deleted (or evicted, bound,
finalized) is read from the server until the next catch-up. So a controller reads at least what the
server had at the round's start and everything the process wrote since: what it would read from an
informer that had caught up, the same every run. Writes by others in a round (none: the world waits for
the process) would be seen at the next round. Reads are copies; a controller may change what it reads.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from harness.client.interface import WatchStream
from harness.client.runtime import Manager
from harness.kube.errors import not_found

# Writes whose answer is the object written (a Scale is not; the other subresources read from the server).
_OBJECT_SUBRESOURCES = ("", "status")

ObjectKey = tuple[str, str, str, str]  # apiVersion, kind, namespace ("" when cluster-scoped), name


def _rv(obj: dict[str, Any]) -> int | None:
    text = str((obj.get("metadata") or {}).get("resourceVersion") or "")
    return int(text) if text.isdigit() else None


def _key(api_version: str, kind: str, namespace: str | None, name: str) -> ObjectKey:
    return api_version, kind, namespace or "", name


class CachedClient:
    """``client`` with ``get`` served from ``manager``'s synced watches (see the module docstring); every
    other attribute is ``client``'s. :meth:`serve_from` ties it to the manager whose controllers use it."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._manager: Manager | None = None
        self._synced: set[int] = set()
        self._written: dict[ObjectKey, dict[str, Any]] = {}
        self._bypass: set[ObjectKey] = set()
        self.hits = 0
        self.misses = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def serve_from(self, manager: Manager) -> None:
        """Answer reads from ``manager``'s watches once they are caught up (:meth:`caught_up`)."""
        self._manager = manager
        manager.caught_up_hooks.append(self.caught_up)

    def caught_up(self, streams: Iterable[WatchStream]) -> None:
        """Every event the server had given ``streams`` has been read: they are synced, and what this
        client wrote before now will come from them."""
        self._synced = {id(stream) for stream in streams}
        self._written.clear()
        self._bypass.clear()

    # -- reads ---------------------------------------------------------------------------------------

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        key = _key(api_version, kind, namespace, name)
        served, cached = self._cached(key)
        if not served:
            self.misses += 1
            return self._client.get(api_version, kind, name, namespace)  # type: ignore[no-any-return]
        self.hits += 1
        written = self._written.get(key)
        if written is not None and (cached is None or _newer(written, cached)):
            cached = written
        if cached is None:
            plural, _ = self._client._resource(api_version, kind)
            group = api_version.rpartition("/")[0]
            raise not_found(plural, group, name)
        return copy.deepcopy(cached)

    def _cached(self, key: ObjectKey) -> tuple[bool, dict[str, Any] | None]:
        if self._manager is None or key in self._bypass:
            return False, None
        api_version, kind, namespace, name = key
        return self._manager.known_object(self._client.cluster, api_version, kind, namespace, name,
                                          lambda stream: id(stream) in self._synced)

    # -- writes (to the server; their answers are remembered until the next catch-up) -----------------

    def _remember(self, obj: Any) -> Any:
        if isinstance(obj, dict) and obj.get("kind") != "Status" and (obj.get("metadata") or {}).get("name"):
            meta = obj["metadata"]
            key = _key(str(obj.get("apiVersion", "")), str(obj.get("kind", "")), meta.get("namespace"),
                       str(meta["name"]))
            previous = self._written.get(key)
            if previous is None or _newer(obj, previous):
                self._written[key] = obj
        return obj

    def _forget(self, key: ObjectKey) -> None:
        self._written.pop(key, None)
        self._bypass.add(key)

    def create(self, obj: dict[str, Any], *, dry_run: bool = False) -> dict[str, Any]:
        out = self._client.create(obj, dry_run=dry_run)
        return out if dry_run else self._remember(out)  # type: ignore[no-any-return]

    def update(self, obj: dict[str, Any], *, dry_run: bool = False) -> dict[str, Any]:
        out = self._client.update(obj, dry_run=dry_run)
        return out if dry_run else self._remember(out)  # type: ignore[no-any-return]

    def update_status(self, obj: dict[str, Any], *, dry_run: bool = False) -> dict[str, Any]:
        out = self._client.update_status(obj, dry_run=dry_run)
        return out if dry_run else self._remember(out)  # type: ignore[no-any-return]

    def patch(self, api_version: str, kind: str, name: str, body: Any, *, namespace: str | None = None,
              subresource: str = "", dry_run: bool = False, **options: Any) -> dict[str, Any]:
        out = self._client.patch(api_version, kind, name, body, namespace=namespace, subresource=subresource,
                                 dry_run=dry_run, **options)
        if dry_run:
            return out  # type: ignore[no-any-return]
        if subresource not in _OBJECT_SUBRESOURCES:
            self._forget(_key(api_version, kind, namespace, name))
            return out  # type: ignore[no-any-return]
        return self._remember(out)  # type: ignore[no-any-return]

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None,
               **options: Any) -> dict[str, Any]:
        try:
            return self._client.delete(api_version, kind, name, namespace, **options)  # type: ignore[no-any-return]
        finally:
            if not options.get("dry_run"):
                self._forget(_key(api_version, kind, namespace, name))

    def evict(self, name: str, namespace: str, **options: Any) -> dict[str, Any]:
        try:
            return self._client.evict(name, namespace, **options)  # type: ignore[no-any-return]
        finally:
            if not options.get("dry_run"):
                self._forget(_key("v1", "Pod", namespace, name))

    def bind(self, name: str, namespace: str, node_name: str) -> dict[str, Any]:
        try:
            return self._client.bind(name, namespace, node_name)  # type: ignore[no-any-return]
        finally:
            self._forget(_key("v1", "Pod", namespace, name))

    def finalize_namespace(self, name: str, finalizers: list[str]) -> dict[str, Any]:
        try:
            return self._client.finalize_namespace(name, finalizers)  # type: ignore[no-any-return]
        finally:
            self._forget(_key("v1", "Namespace", None, name))


def _newer(candidate: dict[str, Any], than: dict[str, Any]) -> bool:
    """Whether ``candidate`` is a later version than ``than`` (an unreadable resourceVersion: assume so)."""
    a, b = _rv(candidate), _rv(than)
    return a is None or b is None or a > b
