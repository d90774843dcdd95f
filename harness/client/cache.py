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
Here the watches are caught up at the start of each ``settle`` of the lockstep protocol and before each
step that follows a write (harness/client/remote.py): every event the server had given them has been
read, and the manager moves them into what it knows before a controller runs. The world waits for the
process, so until the process writes, what the watches delivered is the server's state, and the cache
answers. Once any client of the process has sent a write
the server may have accepted (:func:`~harness.client.http.writes_sent`), the watches may not yet carry it,
nor what the server did because of it (an object deleted when its last finalizer went, another one a
simulator changed in answer), and when they would is a matter of timing: every read goes to the server
until the next catch-up (before the process's next step, harness/client/remote.py). So a controller
reads exactly what an in-process one would, every run. Reads are copies; a controller may change what it
reads.

Repeated reads. For the same reason, a read that is not of a watched kind (a kind nobody watches, a list,
a workload cluster's objects through :meth:`CachedClient.for_kubeconfig`) is sent once per ``settle``
request of the protocol and per write of the process: asked again before the process wrote anything
(and within the same request, while the watches get nothing new: the server settles the world before it
answers a write, and the world waits for the process, but for the harness's own Runtime Extension, which
moves the world's clock when told to hang, whatever the world then writes arriving as events), it is
answered with what the server said the first time, which is what the server would say again. A machine
controller's drain retry reads the kubeconfig Secret and the Node twice each; in lockstep that is the
difference between 9 requests a retry and 7. Only answers are kept, never errors: a read that failed is asked again.

Across settles. When the harness tells the process that nothing was written in the world since its last
answer (``"unchanged"`` in the ``settle`` request, harness/client/remote.py: the world only moved its
clock to one of the process's timers) and the watches, caught up, got nothing new, the last round's
answers still stand: a drain retry that finds the same Pods, PDB and Node as 20 s before reads them from
there, and sends the server only its eviction (and the catch-up's one question).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

from harness.client.http import writes_sent
from harness.client.interface import WatchStream
from harness.client.runtime import Manager
from harness.kube.errors import not_found

ObjectKey = tuple[str, str, str, str]  # apiVersion, kind, namespace ("" when cluster-scoped), name
ReadKey = tuple[Any, ...]  # the method and its arguments


def _key(api_version: str, kind: str, namespace: str | None, name: str) -> ObjectKey:
    return api_version, kind, namespace or "", name


class CachedClient:
    """``client`` with ``get`` served from ``manager``'s synced watches while nothing was written since
    they caught up (see the module docstring); every other attribute is ``client``'s. :meth:`serve_from`
    ties it to the manager whose controllers use it."""

    def __init__(self, client: Any, *, root: CachedClient | None = None) -> None:
        self._client = client
        self._manager: Manager | None = None
        self._synced: set[int] = set()
        # writes_sent() when the watches were last caught up (None: never): a write since ends the hits.
        self._writes_at_catch_up: int | None = None
        # The client whose manager's catch-ups start a round (a workload cluster's client is its parent's).
        self._root = root if root is not None else self
        self._round = 0  # the root's count of catch-ups (those after which the world may differ)
        self._seen: tuple[tuple[int, Any, Any], ...] | None = None  # the watches' counts at the last one
        # Answers of the reads sent since (round, writes_sent()) was ``_answers_at``.
        self._answers: dict[ReadKey, Any] = {}
        self._answers_at: tuple[int, int] | None = None
        self.hits = 0
        self.misses = 0
        self.repeats = 0

    # Its get and list take no ``shared`` and its writes no ``answer`` (harness/client/interface.py's
    # shared_reads and unanswered), whatever the wrapped client takes.
    reads_shared = False
    answers_optional = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def serve_from(self, manager: Manager) -> None:
        """Answer reads from ``manager``'s watches once they are caught up (:meth:`caught_up`)."""
        self._manager = manager
        manager.caught_up_hooks.append(self.caught_up)

    def caught_up(self, streams: Iterable[WatchStream]) -> None:
        """Every event the server had given ``streams`` has been read: they are synced, and every write
        sent before now is in them."""
        seen = tuple((id(stream), getattr(stream, "received", None), getattr(stream, "ended", True))
                     for stream in streams)
        # A new round of answers whenever the world may have changed since the last catch-up, but for the
        # process's own writes (the answers are kept by writes_sent(), and the server settled the world
        # before answering a write): kept only if the watches got nothing new, and at the first catch-up of
        # a settle request only if the harness also said nothing was written in the world since the last
        # answer. (Within one request the world waits for the process, except that the harness's own
        # Runtime Extension moves the world's clock when it is told to hang: whatever the world then
        # writes that the process watches arrives as events, and ends the answers.)
        first = getattr(streams, "first", True)
        same = seen == self._seen and (not first or (getattr(streams, "world_unchanged", False)
                                                     and self._writes_at_catch_up == writes_sent()))
        self._synced = {id(stream) for stream in streams}
        self._writes_at_catch_up = writes_sent()
        self._seen = seen
        if not same:
            self._round += 1

    def for_kubeconfig(self, kubeconfig: str, user: str | None = None) -> CachedClient:
        """The client of another cluster (a workload cluster), whose repeated reads within a round are
        answered as this one's are (see the module docstring); it has no watches of its own."""
        return CachedClient(self._client.for_kubeconfig(kubeconfig, user), root=self._root)

    # -- reads ---------------------------------------------------------------------------------------

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        key = _key(api_version, kind, namespace, name)
        served, cached = self._cached(key)
        if not served:
            return self._once(("get", key), lambda: self._client.get(api_version, kind, name, namespace))
        self.hits += 1
        if cached is None:
            plural, _ = self._client._resource(api_version, kind)
            group = api_version.rpartition("/")[0]
            raise not_found(plural, group, name)
        return copy.deepcopy(cached)

    def list(self, api_version: str, kind: str, namespace: str | None = None, **options: Any) -> dict[str, Any]:
        """A list, from the server (once a round while nothing is written: see the module docstring)."""
        key = ("list", api_version, kind, namespace, tuple(sorted(options.items())))
        return self._once(key, lambda: self._client.list(api_version, kind, namespace, **options))

    def _once(self, key: ReadKey, read: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """``read()``'s answer, sent to the server only if it was not already this round (and nothing
        was written since)."""
        root = self._root
        if root._writes_at_catch_up is None:  # not caught up yet: no round has started
            self.misses += 1
            return read()
        current = (root._round, writes_sent())
        if self._answers_at != current:
            self._answers.clear()  # an earlier round's, or from before a write: never valid again
            self._answers_at = current
        if key in self._answers:
            self.repeats += 1
            return copy.deepcopy(self._answers[key])  # type: ignore[no-any-return]
        self.misses += 1
        answer = read()
        if (root._round, writes_sent()) == current:
            self._answers[key] = copy.deepcopy(answer)
        return answer

    def _cached(self, key: ObjectKey) -> tuple[bool, dict[str, Any] | None]:
        if self._manager is None or self._writes_at_catch_up != writes_sent():
            return False, None
        api_version, kind, namespace, name = key
        return self._manager.known_object(self._client.cluster, api_version, kind, namespace, name,
                                          lambda stream: id(stream) in self._synced)
