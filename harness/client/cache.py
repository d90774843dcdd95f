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
Here the watches are caught up at each round of the lockstep protocol (harness/client/remote.py): every
event the server had given them has been read, and the manager moves them into what it knows before a
controller runs. The world waits for the process, so until the process writes, what the watches
delivered is the server's state, and the cache answers. Once any client of the process has sent a write
the server may have accepted (:func:`~harness.client.http.writes_sent`), the watches may not yet carry it,
nor what the server did because of it (an object deleted when its last finalizer went, another one a
simulator changed in answer), and when they would is a matter of timing: every read goes to the server
until the next catch-up. So a controller reads exactly what an in-process one would, every run. Reads are
copies; a controller may change what it reads.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from harness.client.http import writes_sent
from harness.client.interface import WatchStream
from harness.client.runtime import Manager
from harness.kube.errors import not_found

ObjectKey = tuple[str, str, str, str]  # apiVersion, kind, namespace ("" when cluster-scoped), name


def _key(api_version: str, kind: str, namespace: str | None, name: str) -> ObjectKey:
    return api_version, kind, namespace or "", name


class CachedClient:
    """``client`` with ``get`` served from ``manager``'s synced watches while nothing was written since
    they caught up (see the module docstring); every other attribute is ``client``'s. :meth:`serve_from`
    ties it to the manager whose controllers use it."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._manager: Manager | None = None
        self._synced: set[int] = set()
        # writes_sent() when the watches were last caught up (None: never): a write since ends the hits.
        self._writes_at_catch_up: int | None = None
        self.hits = 0
        self.misses = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def serve_from(self, manager: Manager) -> None:
        """Answer reads from ``manager``'s watches once they are caught up (:meth:`caught_up`)."""
        self._manager = manager
        manager.caught_up_hooks.append(self.caught_up)

    def caught_up(self, streams: Iterable[WatchStream]) -> None:
        """Every event the server had given ``streams`` has been read: they are synced, and every write
        sent before now is in them."""
        self._synced = {id(stream) for stream in streams}
        self._writes_at_catch_up = writes_sent()

    # -- reads ---------------------------------------------------------------------------------------

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        key = _key(api_version, kind, namespace, name)
        served, cached = self._cached(key)
        if not served:
            self.misses += 1
            return self._client.get(api_version, kind, name, namespace)  # type: ignore[no-any-return]
        self.hits += 1
        if cached is None:
            plural, _ = self._client._resource(api_version, kind)
            group = api_version.rpartition("/")[0]
            raise not_found(plural, group, name)
        return copy.deepcopy(cached)

    def _cached(self, key: ObjectKey) -> tuple[bool, dict[str, Any] | None]:
        if self._manager is None or self._writes_at_catch_up != writes_sent():
            return False, None
        api_version, kind, namespace, name = key
        return self._manager.known_object(self._client.cluster, api_version, kind, namespace, name,
                                          lambda stream: id(stream) in self._synced)
