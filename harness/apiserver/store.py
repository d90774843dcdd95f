"""One cluster's storage: objects, the resourceVersion counter, the event history and watchers.

This is the etcd-and-watch-cache layer: it knows nothing of Kubernetes semantics beyond keys and
resourceVersions. Stored objects are never mutated after commit: every write stores a new dict, so
readers, history and watchers can share them and copy only when handing them to user code.
"""

from __future__ import annotations

import logging
from bisect import bisect_right, insort
from collections import deque
from collections.abc import Iterator
from typing import Any

from harness.apiserver import limits
from harness.apiserver.watch import Watch
from harness.kube import errors
from harness.kube.names.meta import ADDED, DELETED, MODIFIED

log = logging.getLogger("lifecycle_tck.store")

# The watch cache's history window, in events. Older resourceVersions get 410 Expired.
DEFAULT_HISTORY = 200_000

StorageKey = tuple[str, str]  # (group, plural): all versions of a resource share storage
ObjectKey = tuple[str, str]  # (namespace, name); namespace "" for cluster-scoped


def _node_name(pod: dict[str, Any]) -> str:
    # Only a string names a node; anything else (refused by validation) must not break the index.
    spec = pod.get("spec")
    name = spec.get("nodeName") if isinstance(spec, dict) else None
    return name if isinstance(name, str) else ""


# One event of the watch history: (rv, storage key, event type, object, previous object).
HistoryEntry = tuple[int, StorageKey, str, dict[str, Any], dict[str, Any] | None]
_ENTRY = 5  # the fields of one entry


class EventHistory:
    """The watch history's events, oldest first, with a deque's ``append``/``popleft``/``clear``, its
    length and iteration both ways; each event comes out as a :data:`HistoryEntry`.

    The fields are kept flat, five to an event, in one deque: a tuple per event would be one more container
    for the cyclic garbage collector to scan in every full pass (about a tenth of what a 10,000-Pod drain
    leaves in the heap, as a scenario world keeps every event), while the deque's own blocks are not
    containers it scans. The tuples handed out are made on the way and live as long as their reader keeps
    them. Like the store, single-threaded: two callers popping at once could misalign the five-field
    stride for good (the store is only used from the thread that serves the world)."""

    __slots__ = ("_fields",)

    def __init__(self) -> None:
        self._fields: deque[Any] = deque()

    def append(self, entry: HistoryEntry) -> None:
        """Add the newest event."""
        self._fields.extend(entry)

    def popleft(self) -> HistoryEntry:
        """Remove and return the oldest event (IndexError when there is none)."""
        if not self._fields:
            raise IndexError("pop from an empty history")
        pop = self._fields.popleft
        return (pop(), pop(), pop(), pop(), pop())

    def clear(self) -> None:
        """Forget every event."""
        self._fields.clear()

    def __len__(self) -> int:
        return len(self._fields) // _ENTRY

    def __iter__(self) -> Iterator[HistoryEntry]:
        fields = iter(self._fields)
        return zip(fields, fields, fields, fields, fields)

    def __reversed__(self) -> Iterator[HistoryEntry]:
        # Newest first: the fields come out backwards, so each event's are put back in order.
        fields = reversed(self._fields)
        for old, obj, event_type, skey, rv in zip(fields, fields, fields, fields, fields):
            yield rv, skey, event_type, obj, old


# NamespaceKeys: below one note in this many keys, the notes are put in place one by one.
_FEW = 64


class NamespaceKeys:
    """One namespace's keys of a resource, handed out sorted.

    A key that comes or goes is only noted; the next read puts the notes into the sorted list (many of them:
    one sort of the list with the new keys after it, which Timsort does as a merge). Kept sorted at every write
    instead, each new key of a namespace holding N cost a memmove of N/2 pointers and a bisect through
    scattered keys: at 100,000 Pods and their Events (half a million keys in one namespace) that grew to
    tens of microseconds per create, quadratic in all. A read costs what it returns, as before."""

    __slots__ = ("_added", "_removed", "_sorted")

    def __init__(self) -> None:
        self._sorted: list[ObjectKey] = []
        # Keys not in ``_sorted`` yet, and keys of ``_sorted`` that are gone.
        self._added: set[ObjectKey] = set()
        self._removed: set[ObjectKey] = set()

    def add(self, key: ObjectKey) -> None:
        """Note a key that is not among the keys."""
        if key in self._removed:
            self._removed.discard(key)  # back before a read: still in its place
        else:
            self._added.add(key)

    def discard(self, key: ObjectKey) -> None:
        """Note that a key among the keys is gone."""
        if key in self._added:
            self._added.discard(key)
        else:
            self._removed.add(key)

    def __len__(self) -> int:
        return len(self._sorted) - len(self._removed) + len(self._added)

    def sorted(self) -> list[ObjectKey]:
        """The keys in order (the list is the index's own: do not change it)."""
        keys = self._sorted
        removed, added = self._removed, self._added
        # A few notes (a read after every write or so) go in one by one, as the writes did before: a read
        # then costs no more than the list it returns.
        if removed:
            if len(removed) * _FEW > len(keys):
                self._sorted = keys = [k for k in keys if k not in removed]
            else:
                for key in removed:
                    del keys[bisect_right(keys, key) - 1]
            removed.clear()
        if added:
            if len(added) * _FEW > len(keys):
                keys.extend(added)
                keys.sort()
            else:
                for key in added:
                    insort(keys, key)
            added.clear()
        return keys

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NamespaceKeys):
            return NotImplemented
        return self.sorted() == other.sorted()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"NamespaceKeys({self.sorted()!r})"


class Store:
    """Objects by resource and key, with a per-cluster monotonic resourceVersion."""

    def __init__(self, history: int = DEFAULT_HISTORY, history_bytes: int | None = None) -> None:
        """``history``: events the watch history keeps; ``history_bytes`` (None: unbounded): the
        bytes of object versions it may hold. Past either, the oldest events go, as an automatic
        compaction: a watch from before them gets 410 Expired."""
        self._rv = 0
        self._data: dict[StorageKey, dict[ObjectKey, dict[str, Any]]] = {}
        # Per resource, each namespace's keys in order ("" for cluster-scoped; NamespaceKeys: put in order
        # at the read after keys came or went), so a namespace's list costs what it returns, not what the
        # cluster holds. An update of an
        # existing key changes no order and touches neither this nor the cache below.
        self._ns_keys: dict[StorageKey, dict[str, NamespaceKeys]] = {}
        # Per resource, all keys in order: built from the namespaces' lists when a list asks, dropped when
        # a key comes or goes.
        self._all_keys: dict[StorageKey, list[ObjectKey]] = {}
        # (rv, storage key, event type, object, previous object), oldest first
        self._history = EventHistory()
        self._history_max = history
        self._history_max_bytes = history_bytes
        self._history_sizes: deque[int] = deque()
        self._history_bytes = 0
        self._compacted_rv = 0
        self._watchers: dict[StorageKey, set[Watch]] = {}
        # The open watches that asked for bookmarks (the world's own controllers do not): a bookmark tick,
        # once a virtual minute, visits only these.
        self._bookmarking: set[Watch] = set()
        # spec.nodeName → pod keys, so per-node pod lists don't scan every pod
        self._pods_by_node: dict[str, set[ObjectKey]] = {}

    # -- reads ---------------------------------------------------------------------------------

    @property
    def resource_version(self) -> int:
        return self._rv

    def get(self, skey: StorageKey, key: ObjectKey) -> dict[str, Any] | None:
        """The stored object (shared: do not mutate), or None."""
        return self._data.get(skey, {}).get(key)

    def items(
        self, skey: StorageKey, namespace: str | None = None, after: ObjectKey | None = None
    ) -> list[dict[str, Any]]:
        """Stored objects of a resource in key order (namespace, name), optionally one namespace;
        ``after``: only those whose key sorts after it (where a continue token resumes)."""
        bucket = self._data.get(skey)
        if not bucket:
            return []
        if namespace is None:
            keys = self._sorted_keys(skey)
        else:
            in_namespace = self._ns_keys[skey].get(namespace)
            keys = in_namespace.sorted() if in_namespace is not None else []
        start = bisect_right(keys, after) if after is not None else 0
        return [bucket[k] for k in keys[start:]] if start else [bucket[k] for k in keys]

    def _sorted_keys(self, skey: StorageKey) -> list[ObjectKey]:
        keys = self._all_keys.get(skey)
        if keys is None:
            by_ns = self._ns_keys[skey]
            keys = [key for ns in sorted(by_ns) for key in by_ns[ns].sorted()]
            self._all_keys[skey] = keys
        return keys

    def pods_on_node(
        self, node_name: str, namespace: str | None = None, after: ObjectKey | None = None
    ) -> list[dict[str, Any]]:
        """Pods whose spec.nodeName is ``node_name``, in key order; optionally one namespace, and only
        keys after ``after``."""
        bucket = self._data.get(("", "pods"), {})
        keys = self._pods_by_node.get(node_name, ())
        if namespace is not None:
            keys = [k for k in keys if k[0] == namespace]
        if after is not None:
            keys = [k for k in keys if k > after]
        return [bucket[k] for k in sorted(keys)]

    def count(self, skey: StorageKey) -> int:
        return len(self._data.get(skey, {}))

    def resources(self) -> list[StorageKey]:
        return [k for k, v in self._data.items() if v]

    # -- writes --------------------------------------------------------------------------------

    def set_resource_version(self, rv: int) -> None:
        """Move the counter to ``rv``, to commit versions made elsewhere with their resourceVersions
        (a world replaying the packaged CRDs' writes, harness/world/crd_snapshot.py); never backwards."""
        if rv < self._rv:
            raise ValueError(f"resourceVersion {rv} is behind the store's {self._rv}")
        self._rv = rv

    def next_rv(self) -> str:
        self._rv += 1
        return str(self._rv)

    def put(self, skey: StorageKey, key: ObjectKey, obj: dict[str, Any]) -> dict[str, Any]:
        """Commit ``obj`` (whose resourceVersion the caller set from :meth:`next_rv`)."""
        bucket = self._data.setdefault(skey, {})
        old = bucket.get(key)
        bucket[key] = obj
        if old is None:
            by_ns = self._ns_keys.get(skey)
            if by_ns is None:
                by_ns = self._ns_keys[skey] = {}
            keys = by_ns.get(key[0])
            if keys is None:
                keys = by_ns[key[0]] = NamespaceKeys()
            keys.add(key)
            self._all_keys.pop(skey, None)
        if skey == ("", "pods"):
            self._index_pod(key, old, obj)
        self._record(skey, MODIFIED if old is not None else ADDED, obj, old)
        return obj

    def remove(self, skey: StorageKey, key: ObjectKey, final: dict[str, Any]) -> None:
        """Remove the object; ``final`` is its last state with a new resourceVersion."""
        bucket = self._data.get(skey, {})
        old = bucket.pop(key, None)
        if old is not None:
            self._unindex(skey, key)
        if skey == ("", "pods") and old is not None:
            self._index_pod(key, old, None)
        self._record(skey, DELETED, final, old)

    def drop_resource(self, skey: StorageKey) -> None:
        """Forget every object of a resource (its CRD is gone), without events."""
        self._data.pop(skey, None)
        self._ns_keys.pop(skey, None)
        self._all_keys.pop(skey, None)
        if skey == ("", "pods"):
            self._pods_by_node.clear()

    def _unindex(self, skey: StorageKey, key: ObjectKey) -> None:
        by_ns = self._ns_keys[skey]
        keys = by_ns[key[0]]
        keys.discard(key)
        if not len(keys):
            del by_ns[key[0]]
        self._all_keys.pop(skey, None)

    def _index_pod(self, key: ObjectKey, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        if old is not None and new is not None and old.get("spec") is new.get("spec"):
            return  # a status or metadata write shares the stored spec: the node is the same
        old_node = _node_name(old) if old is not None else None
        new_node = _node_name(new) if new is not None else None
        if old_node == new_node:
            return  # most pod writes (status, finalizers, deletion) leave the pod where it was
        if old_node is not None:
            self._pods_by_node.get(old_node, set()).discard(key)
        if new_node is not None:
            self._pods_by_node.setdefault(new_node, set()).add(key)

    def _record(self, skey: StorageKey, event_type: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        rv = int(obj["metadata"]["resourceVersion"])
        self._history.append((rv, skey, event_type, obj, old))
        if self._history_max_bytes is not None:
            size = limits.encoded_size(obj)
            self._history_sizes.append(size)
            self._history_bytes += size
        self._trim_history()
        for watch in list(self._watchers.get(skey, ())):
            try:
                watch.offer(event_type, obj, old)
            except Exception:  # noqa: BLE001 - a committed write stands whatever one watcher makes of it
                log.exception("a watch could not take an event; it is closed")
                watch.stop()

    def _trim_history(self) -> None:
        history = self._history
        limit_bytes = self._history_max_bytes
        while len(history) > 1 and (
            len(history) > self._history_max or (limit_bytes is not None and self._history_bytes > limit_bytes)
        ):
            # The oldest event goes: a watch must now start after it.
            self._compacted_rv = history.popleft()[0]
            if limit_bytes is not None:
                self._history_bytes -= self._history_sizes.popleft()

    @property
    def history_bytes(self) -> int:
        """Bytes of the object versions the watch history holds (0 without a byte limit)."""
        return self._history_bytes

    def history_length(self) -> int:
        """Events the watch history holds."""
        return len(self._history)

    # -- watch ---------------------------------------------------------------------------------

    def compact(self) -> None:
        """Forget all history up to now, as an etcd compaction does."""
        self._history.clear()
        self._history_sizes.clear()
        self._history_bytes = 0
        self._compacted_rv = self._rv

    @property
    def oldest_rv(self) -> int:
        """The oldest resourceVersion a watch may resume from."""
        return self._compacted_rv

    def watch(self, skey: StorageKey, watch: Watch, resource_version: str | None) -> Watch:
        """Attach ``watch``: replay history after ``resource_version``, or synthesize ``ADDED``.

        ``None`` and ``"0"`` start with an ``ADDED`` for every current object; a resourceVersion
        older than the history window gets an in-stream 410 ``Expired`` error.
        """
        if resource_version in (None, "", "0"):
            # A namespaced watch starts from its namespace's objects alone (the others it would skip).
            for obj in self.items(skey, watch.namespace):
                watch.initial(obj)
            watch.last_rv = str(self._rv)
        else:
            try:
                since = int(resource_version)
            except ValueError:
                raise errors.bad_request(f"invalid resource version: {resource_version}") from None
            if since < self._compacted_rv:
                watch.expire(f"too old resource version: {since} ({self._compacted_rv})")
                return watch
            # The history is in resourceVersion order: walk back to ``since`` only, so a watch resuming
            # near the head does not read the whole window.
            newer = []
            for entry in reversed(self._history):
                if entry[0] <= since:
                    break
                newer.append(entry)
            for _, key, event_type, obj, old in reversed(newer):
                if key == skey:
                    watch.offer(event_type, obj, old)
            watch.last_rv = str(max(since, int(watch.last_rv or 0)))
        self._watchers.setdefault(skey, set()).add(watch)
        if watch.allow_bookmarks:
            self._bookmarking.add(watch)

        def closed(w: Watch) -> None:
            self._watchers.get(skey, set()).discard(w)
            self._bookmarking.discard(w)

        watch._close_hook = closed
        return watch

    def bookmark(self) -> None:
        """Send every watch that asked for bookmarks one at the current resourceVersion (the
        apiserver does so about once a minute)."""
        rv = str(self._rv)
        for watch in list(self._bookmarking):
            watch.bookmark(rv)

    def watcher_count(self) -> int:
        return sum(len(v) for v in self._watchers.values())
