"""A small controller runtime in the spirit of controller-runtime, on the virtual clock.

A :class:`Controller` reconciles keys. Watches (through the client interface) turn events into
keys; a key is queued at most once; ``Result.requeue_after`` schedules it on the clock; an
exception requeues it with per-key exponential backoff (5 ms doubling to 1000 s, as
controller-runtime's default rate limiter). The :class:`Manager` runs every controller of a
process: :meth:`Manager.settle` processes queues and due timers until nothing is left at the
current instant, which is how a virtual world "waits".

A watch the server ends (a dropped connection, a ``410 Expired`` in the stream) is re-established
as an informer does: list again, turn what changed since the last event seen into events (objects
gone since are ``DELETED``), and watch from the list's ``resourceVersion``. A list that fails is
tried again after :data:`RELIST_BACKOFF_BASE` virtual seconds, doubling up to
:data:`RELIST_BACKOFF_MAX`.

Controllers of one manager that open the identical watch share one server watch, as the controllers of
kube-controller-manager share one informer per kind (through in-process clients of the same clusters, whose
watches nothing records per user; over HTTP, through the same client object: :func:`_watch_identity`); each
still gets exactly the events, in the order and at the pumps, its own watch would have given it.
"""

from __future__ import annotations

import heapq
import logging
import sys
import traceback
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from harness.client.interface import Client, WatchStream
from harness.clock import Scheduler, Timer
from harness.kube.names.meta import MERGE_PATCH_CONTENT_TYPE

log = logging.getLogger("lifecycle_tck.runtime")

BACKOFF_BASE = 0.005
BACKOFF_MAX = 1000.0
MAX_STEPS_PER_INSTANT = 5_000_000
# One key reconciled this often at one virtual instant is a hot loop, not progress.
MAX_RECONCILES_PER_KEY_PER_INSTANT = 1_000
# client-go's reflector backs off from a failing list+watch from 800 ms up to 30 s.
RELIST_BACKOFF_BASE = 0.8
RELIST_BACKOFF_MAX = 30.0
# Whether a Manager shares one watch among the sources that would open the identical one (see Manager),
# unless told otherwise; the tests turn it off to compare a world with and without sharing.
SHARE_WATCHES = True
# A key whose reconcile failed on a request the apiserver could not serve (409, 429, 5xx, no connection)
# is still recovering while the controller asks for it again within this many seconds (a controller may
# hold a retry back a little, as Cluster API's deletion cache does: 1 s).
RECOVERY_WINDOW = 2.0
TRANSIENT_CODES = (409, 429, 500, 502, 503, 504)
# What those failures say when a controller passes on only their text (kube-apiserver's own wording).
TRANSIENT_TEXTS = ("Too many requests, please try again later", "Internal error occurred:",
                   "the object has been modified; please apply your changes")


# One Request per key, made once: mappers give the same keys over and over (a Pod's at each of its events, its
# ReplicaSet's at each event of its pods, about ten of them for each Pod written), and building a frozen
# dataclass, then hashing it (a tuple each time) and comparing it field by field with the one queued, cost
# more than the rest of a typical mapper. Equality, order and hash stay those of the fields; the table only
# saves work, and is emptied when it grows past this many keys (a long-running world's keys come and go).
REQUEST_TABLE_SIZE = 65536
_requests: dict[tuple[str, str], Request] = {}
_new_object = object.__new__
_set_attribute = object.__setattr__


@dataclass(frozen=True, order=True, init=False)
class Request:
    """What a reconcile is about: an object's namespace ("" when cluster-scoped) and name."""

    namespace: str
    name: str

    def __new__(cls, namespace: str, name: str, *more: Any, **fields: Any) -> Request:
        if cls is Request and type(namespace) is str and type(name) is str:
            key = (namespace, name)
            found = _requests.get(key)
            if found is not None:
                return found
            request = _new_object(cls)
            _set_attribute(request, "namespace", namespace)
            _set_attribute(request, "name", name)
            _set_attribute(request, "_hash", hash(key))  # the hash the dataclass computes from its fields, once
            if len(_requests) >= REQUEST_TABLE_SIZE:
                _requests.clear()
            _requests[key] = request
            return request
        # Anything else is made as the dataclass made it and never shared: a subclass (a dataclass of its own
        # sets these and its other fields again in its __init__), or fields that are not plain strings (a
        # str subclass, or 1 and True, equal but not alike, must not come back as each other).
        request = _new_object(cls)
        _set_attribute(request, "namespace", namespace)
        _set_attribute(request, "name", name)
        return request

    def __hash__(self) -> int:
        try:
            return self._hash  # type: ignore[attr-defined,no-any-return]
        except AttributeError:
            return hash((self.namespace, self.name))  # raises what hashing the fields raises

    def __reduce__(self) -> tuple[Any, ...]:
        return (self.__class__, (self.namespace, self.name))

    @classmethod
    def of(cls, obj: dict[str, Any]) -> Request:
        meta = obj.get("metadata") or {}
        return cls(meta.get("namespace") or "", meta.get("name", ""))


@dataclass(frozen=True)
class Result:
    """What a reconcile asks for next: nothing, an immediate (rate-limited) retry, or a retry later."""

    requeue: bool = False
    requeue_after: float = 0.0


DONE = Result()

Mapper = Callable[[str, dict[str, Any]], Iterable[Request]]


class SettleError(RuntimeError):
    """The world did not settle: controllers kept producing work at one instant."""


class Controller:
    """Base class: subclasses set ``name`` and implement :meth:`reconcile`, and declare watches in
    :meth:`setup`."""

    name = "controller"

    def __init__(self) -> None:
        self.manager: Manager | None = None
        self._queue: deque[Request] = deque()
        self._queued: set[Request] = set()
        self._timers: dict[Request, Timer] = {}
        self._failures: dict[Request, int] = {}
        self._recovering: set[Request] = set()
        self._watch_keys: set[tuple[Any, ...]] = set()
        self.enabled = True
        self.errors: list[str] = []
        self.reconciles: dict[Request, int] = {}  # at the current instant, to catch hot loops

    # -- wiring ------------------------------------------------------------------------------------

    def setup(self) -> None:
        """Declare watches (called once the controller is added to a manager)."""

    def watch(
        self,
        client: Client,
        api_version: str,
        kind: str,
        mapper: Mapper | None = None,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> None:
        """Reconcile on events of ``kind`` in ``client``'s cluster; ``mapper`` turns an event into
        keys (default: the object's own key). Calling it again for the same watch does nothing,
        so reconcilers may call it to follow clusters that appear later."""
        mapper_id = id(mapper) if mapper else 0
        key = (client.cluster, api_version, kind, namespace, label_selector, field_selector, mapper_id)
        if key in self._watch_keys:
            return
        self._watch_keys.add(key)
        assert self.manager is not None, "add the controller to a manager first"
        def open_watch(resource_version: str | None = None) -> WatchStream:
            return client.watch(api_version, kind, namespace, resource_version=resource_version,
                                label_selector=label_selector, field_selector=field_selector)

        def relist() -> dict[str, Any]:
            return client.list(api_version, kind, namespace, label_selector=label_selector,
                               field_selector=field_selector)

        self.manager.watch(self, mapper or _own_key, key, open_watch, relist, (_watch_identity(client), *key[:6]))

    def forget_watches(self, cluster: str) -> None:
        """Stop following a cluster that went away."""
        assert self.manager is not None
        self.manager.remove_sources(self, cluster)
        self._watch_keys = {k for k in self._watch_keys if k[0] != cluster}

    # -- queue -------------------------------------------------------------------------------------

    def enqueue(self, request: Request) -> None:
        # Manager._deliver does the same inline for controllers that keep this method: change both.
        if request not in self._queued:
            self._queued.add(request)
            self._queue.append(request)

    def enqueue_after(self, request: Request, delay: float) -> None:
        """Queue ``request`` after ``delay`` virtual seconds; an earlier pending timer wins."""
        assert self.manager is not None
        due = self.manager.scheduler.clock.now() + max(0.0, delay)
        existing = self._timers.get(request)
        if existing is not None and existing.due <= due:
            return
        if existing is not None:
            existing.cancel()

        def fire() -> None:
            self._timers.pop(request, None)
            self.enqueue(request)

        self._timers[request] = self.manager.scheduler.call_at(due, fire)

    def drop_timers(self) -> None:
        """Cancel every pending requeue and forget the queue."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        self._recovering.clear()
        self._queue.clear()
        self._queued.clear()

    def has_work(self) -> bool:
        return bool(self._queue) and self.enabled

    def process_one(self) -> None:
        request = self._queue.popleft()
        self._queued.discard(request)
        count = self.reconciles.get(request, 0) + 1
        self.reconciles[request] = count
        if count > MAX_RECONCILES_PER_KEY_PER_INSTANT:
            raise SettleError(
                f"{self.name} reconciled {request.namespace}/{request.name} {count} times at one instant: "
                "it keeps changing what it watches"
            )
        try:
            result = self.reconcile(request) or DONE
        except Exception as err:  # noqa: BLE001 - a failing reconcile is retried, never fatal
            failures = self._failures.get(request, 0)
            self._failures[request] = failures + 1
            delay = min(BACKOFF_BASE * (2**failures), BACKOFF_MAX)
            message = f"{self.name}: reconcile {request.namespace}/{request.name} failed: {err}"
            self.errors.append(message)
            if log.isEnabledFor(logging.DEBUG):  # formatting the traceback costs ~0.3 ms, and is seldom wanted
                log.debug("%s\n%s", message, traceback.format_exc())
            if _transient(err):
                self._recovering.add(request)
            else:
                self._recovering.discard(request)
            self.enqueue_after(request, delay)
            return
        if not 0 < result.requeue_after <= RECOVERY_WINDOW:
            self._recovering.discard(request)
        if result.requeue_after > 0:
            self._failures.pop(request, None)
            self.enqueue_after(request, result.requeue_after)
        elif result.requeue:
            failures = self._failures.get(request, 0)
            self._failures[request] = failures + 1
            self.enqueue_after(request, min(BACKOFF_BASE * (2**failures), BACKOFF_MAX))
        else:
            self._failures.pop(request, None)

    def reconcile(self, request: Request) -> Result | None:
        raise NotImplementedError

    def now(self) -> float:
        assert self.manager is not None
        return self.manager.scheduler.clock.now()


def _transient(err: BaseException) -> bool:
    """Whether ``err`` (or what caused it) is a request the apiserver could not serve just then."""
    seen: set[int] = set()
    cause: BaseException | None = err
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, ConnectionError) or getattr(cause, "code", None) in TRANSIENT_CODES:
            return True
        cause = cause.__cause__ or cause.__context__
    text = str(err)
    return any(marker in text for marker in TRANSIENT_TEXTS)


def add_finalizer(client: Client, obj: dict[str, Any], finalizer: str) -> bool:
    """Add ``finalizer`` to ``obj`` (merge patch) unless it has it or is being deleted; True when it
    was added, so a reconcile can end there and go on with the event its own write causes."""
    meta = obj.get("metadata") or {}
    finalizers = list(meta.get("finalizers") or [])
    if meta.get("deletionTimestamp") or finalizer in finalizers:
        return False
    client.patch(str(obj["apiVersion"]), str(obj["kind"]), meta["name"],
                 {"metadata": {"finalizers": finalizers + [finalizer]}},
                 namespace=meta.get("namespace"), patch_type=MERGE_PATCH_CONTENT_TYPE)
    return True


def _resource_version(obj: dict[str, Any]) -> int:
    text = str((obj.get("metadata") or {}).get("resourceVersion") or "")
    return int(text) if text.isdigit() else -1


def _own_key(_event: str, obj: dict[str, Any]) -> Iterable[Request]:
    return (Request.of(obj),)


def _by_key(item: tuple[tuple[str, str], dict[str, Any]]) -> tuple[str, str]:
    """Sorts ``known``'s items as the store orders objects: by (namespace, name)."""
    return item[0]


def owner_mapper(owner_kind: str, *, controller_only: bool = True) -> Mapper:
    """Map an event to the key of the object's owner of ``owner_kind`` (same namespace)."""

    def mapper(_event: str, obj: dict[str, Any]) -> Iterable[Request]:
        meta = obj.get("metadata") or {}
        refs = meta.get("ownerReferences")
        if not refs:
            return ()  # most objects of a kind watched for its owners have none (a list, not a generator)
        return [Request(meta.get("namespace") or "", ref.get("name", "")) for ref in refs
                if ref.get("kind") == owner_kind and (ref.get("controller") or not controller_only)]

    return mapper


@dataclass(eq=False)
class _Shared:
    """One server watch, read by every source that would have opened the identical watch (as client-go's
    shared informers): the events taken from it wait in ``log`` until every source has read them."""

    # (cluster, apiVersion, kind, namespace, label selector, field selector): what it watches.
    key: tuple[Any, ...]
    # Its place in the manager's registry of shared watches (None: this watch is one source's alone).
    share: tuple[Any, ...] | None
    stream: WatchStream
    # How to re-establish the watch when the server ends it (None: it is never re-established).
    reopen: Callable[[str | None], WatchStream] | None = None
    relist: Callable[[], dict[str, Any]] | None = None
    # The newest object taken per (namespace, name): what a relist compares with, and what a source that
    # joins late is given as ADDED events (the watch's current state, as a fresh watch would start with).
    known: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    relist_failures: int = 0
    relist_at: float = 0.0
    # The in-process Watch behind ``stream`` when there is one: the manager looks at it to skip a watch
    # with nothing queued without calling into it (a settle pumps every watch at every step).
    raw: Any = None
    # Whether ``raw`` tells the manager when it has events (Manager._listen).
    notifies: bool = False
    # How to take ``stream``'s events: without copies when it offers that (``use``).
    take: Callable[[], list[tuple[str, dict[str, Any]]]] | None = None
    # Events taken from ``stream`` that not every source has read; ``base``: the position of log[0] in
    # everything the watch gave (a source's ``position`` counts in the same terms).
    log: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    base: int = 0
    # The sources reading it, in the order they joined; how many of them have read the whole log.
    consumers: list[_Source] = field(default_factory=list)
    caught: int = 0

    def __post_init__(self) -> None:
        self.use(self.stream)

    def use(self, stream: WatchStream) -> None:
        """Read ``stream`` from now on."""
        self.stream = stream
        self.raw = _raw_watch(stream)
        self.take = getattr(stream, "drain_shared", None) or stream.drain

    @property
    def end(self) -> int:
        """The position after the last event taken."""
        return self.base + len(self.log)

    def fill(self) -> None:
        """Take what the stream has queued into the log (and into ``known``)."""
        raw = self.raw
        if raw is not None and not raw.events:
            return
        events = self.take()  # type: ignore[misc]
        if events:
            self.append(events)

    def append(self, events: list[tuple[str, dict[str, Any]]]) -> None:
        """Add ``events`` to the log: every source has them still to read."""
        known = self.known
        for event_type, obj in events:
            if event_type == "BOOKMARK" or event_type == "ERROR":
                continue  # an ERROR (410 Expired) ends the stream: the relist catches up
            meta = obj.get("metadata") or {}
            key = (meta.get("namespace") or "", meta.get("name", ""))
            if event_type == "DELETED":
                known.pop(key, None)
            else:
                known[key] = obj
        self.log.extend(events)
        self.caught = 0

    def read(self, source: _Source) -> list[tuple[str, dict[str, Any]]]:
        """What ``source`` has not read yet (its own first events, then the log from its position)."""
        events = source.backlog
        if events:
            source.backlog = []
        end = self.base + len(self.log)
        if source.position < end:
            events = events + self.log[source.position - self.base:] if events else \
                self.log[source.position - self.base:]
            source.position = end
            self.caught += 1
            if self.caught >= len(self.consumers):
                # Everyone has read it all: forget it (the objects stay the store's, referenced by ``known``).
                self.base = end
                self.log = []
        return events

    def has_unread(self, source: _Source) -> bool:
        """Whether ``source`` has something to read or the watch ended (without calling into the stream)."""
        raw = self.raw
        return bool(source.backlog) or source.position < self.base + len(self.log) or raw is None \
            or bool(raw.events) or raw.closed

    def leave(self, source: _Source) -> None:
        """``source`` reads no more."""
        self.consumers.remove(source)
        if source.position >= self.end:
            self.caught -= 1
        if self.consumers and self.caught >= len(self.consumers):
            self.base = self.end
            self.log = []


@dataclass(eq=False)
class _Source:
    """A controller's watch as the manager routes it: a mapper reading a (possibly shared) server watch."""

    controller: Controller
    shared: _Shared
    mapper: Mapper
    key: tuple[Any, ...]
    # Its position in what ``shared`` gave; events only it gets first (a late joiner's ADDED events).
    position: int = 0
    backlog: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    # Its place among the manager's sources (only ever increasing, so it orders them as the list does).
    index: int = 0
    # Whether it waits in the manager's ready heap; whether the manager dropped it.
    pending: bool = False
    removed: bool = False

    @property
    def stream(self) -> WatchStream:
        """The server watch it reads (shared with other sources that would open the same one)."""
        return self.shared.stream


def _raw_watch(stream: WatchStream) -> Any:
    """The in-process Watch whose ``events`` and ``closed`` tell everything ``stream`` has to give, or None."""
    return getattr(stream, "in_process_watch", None)


def _watch_identity(client: Client) -> tuple[str, Any]:
    """Who a watch opened through ``client`` is, as far as sharing it goes.

    An in-process client's watch is neither recorded nor subject to fault rules (harness/apiserver/faults.py),
    so watches of the same clusters are the same whoever asks: the world's simulators and controllers share
    one per kind, as kube-controller-manager's controllers share one informer. Any other client's watch is a
    request of its user's (the served world lists its streams by user, fault rules pick watches by user):
    shared only among the sources of the very same client object (one user, one connection), as a
    controller process's controllers share its informers (``python -m controllers`` gives them one)."""
    # Looked up rather than imported: the in-process client brings in the whole API server, which a
    # controller process (whose clients are HTTP ones) never needs.
    inprocess = sys.modules.get("harness.client.inprocess")
    if inprocess is not None and type(client) is inprocess.InProcessClient:
        # The cluster's API server itself: a workload cluster taken away and made again under its name is
        # another one (ConnectionError when it is away, as opening the watch would raise).
        return ("in-process", client._server)
    return ("client", client)


class Manager:
    """Runs controllers: routes watch events to their queues and runs them on the clock.

    Sources that would open the identical watch (same apiVersion, kind, namespace and selectors, through
    in-process clients of the same clusters or through the same client object: :func:`_watch_identity`)
    share one server watch: its events are taken once
    and each source reads them from its own position, so every source gets the events its own watch would
    have given, in the same order, at the same pumps (a pump still looks at the sources in the order they
    were opened). A source that joins a shared watch late first gets an ``ADDED`` event for each object the
    watch has now, in the server's key order, as a watch of its own would have started. A source that
    leaves leaves the watch to the others; the last one ends it."""

    def __init__(self, scheduler: Scheduler, *, share_watches: bool | None = None) -> None:
        self.scheduler = scheduler
        self.controllers: list[Controller] = []
        self._sources: list[_Source] = []
        # Whether identical watches are shared (False: each source opens its own, as before sharing; the
        # tests compare the two). None: :data:`SHARE_WATCHES`.
        self.share_watches = SHARE_WATCHES if share_watches is None else share_watches
        # The shared watches sources may still join, by identity and what they watch.
        self._shared: dict[tuple[Any, ...], _Shared] = {}
        self.steps = 0
        # Told which watch streams are caught up with the server (harness/client/remote.py), so a read
        # cache fed by them may answer (harness/client/cache.py).
        self.caught_up_hooks: list[Callable[[list[WatchStream]], None]] = []
        # Called before each step (None: nothing). Over HTTP the events of a write arrive on the watches'
        # threads whenever the machine gets to them; a controller process waits there until they have
        # (harness/client/remote.py), as an in-process watch holds them already when the write returns.
        self.before_step: Callable[[], None] | None = None
        # Whether a watch may have something to give since the last pump: every in-process watch tells the
        # manager when an event arrives or it closes, so a step after which nothing was written (a timer,
        # a reconcile that only read) skips looking at the world's watches. Streams that cannot tell
        # (over HTTP) are looked at every time; a watch waiting to be re-established after a failed list
        # is looked at again when its retry falls due (the timer marks the manager).
        self._dirty = True
        self._silent = 0  # sources whose stream cannot tell
        # The sources whose in-process watch told of an event (or its end) since they were last looked at,
        # by their place among the sources: a pump looks at those alone, in the order a look at every source
        # would take (a World has ~200 sources; a Pod's write gives events to about ten of them).
        self._ready: list[tuple[int, _Source]] = []
        self._next_index = 0
        # Watches that ended and could not be re-established yet (a failed list): while there are any, every
        # pump looks at every source, as each pump tries them again once their retry is due.
        self._failing: set[_Shared] = set()

    def _mark(self) -> None:
        self._dirty = True

    def _listen(self, shared: _Shared) -> None:
        """Have ``shared``'s in-process watch tell the manager when it has something (if nothing else
        listens): each of its sources is then due a look."""
        raw = shared.raw
        if raw is not None and raw.on_event is None:
            ready = self._ready
            consumers = shared.consumers

            def arrived() -> None:
                for source in consumers:
                    if not source.pending:
                        source.pending = True
                        heapq.heappush(ready, (source.index, source))

            raw.on_event = arrived
            shared.notifies = True
            if raw.events or raw.closed:
                arrived()  # what the watch gave before anyone listened (its initial ADDED events)
        else:
            shared.notifies = False

    def _count_silent(self) -> None:
        self._silent = sum(1 for source in self._sources if not source.shared.notifies)
        self._dirty = True

    def add(self, controller: Controller) -> Controller:
        controller.manager = self
        self.controllers.append(controller)
        controller.setup()
        return controller

    def remove(self, controller: Controller) -> None:
        """Stop running ``controller``: its watches end (a shared one for it alone), its timers are
        dropped, its queue is forgotten."""
        for source in [s for s in self._sources if s.controller is controller]:
            self._drop(source)
        self._sources = [s for s in self._sources if s.controller is not controller]
        self._count_silent()
        controller.enabled = False
        controller.drop_timers()
        if controller in self.controllers:
            self.controllers.remove(controller)

    def get(self, name: str) -> Controller:
        for controller in self.controllers:
            if controller.name == name:
                return controller
        raise KeyError(name)

    def watch(self, controller: Controller, mapper: Mapper, key: tuple[Any, ...],
              open_watch: Callable[[str | None], WatchStream], relist: Callable[[], dict[str, Any]],
              share: tuple[Any, ...] | None) -> None:
        """Route the events of the watch ``open_watch()`` opens through ``mapper`` to ``controller``,
        re-established through ``relist`` and ``open_watch`` when the server ends it; with ``share``,
        reading the open watch other sources share under that key when there is one (:class:`Manager`)."""
        if not self.share_watches:
            share = None
        shared = self._shared.get(share) if share is not None else None
        if shared is not None and self._joinable(shared):
            self._join(controller, shared, mapper, key)
            return
        self.add_source(controller, open_watch(), mapper, key, reopen=open_watch, relist=relist, share=share)

    def add_source(
        self,
        controller: Controller,
        stream: WatchStream,
        mapper: Mapper,
        key: tuple[Any, ...],
        *,
        reopen: Callable[[str | None], WatchStream] | None = None,
        relist: Callable[[], dict[str, Any]] | None = None,
        share: tuple[Any, ...] | None = None,
    ) -> None:
        """Route ``stream``'s events through ``mapper`` to ``controller``; with ``reopen`` and ``relist``
        the watch is re-established (list, then watch from there) when the server ends it; with ``share``,
        later sources under that key read ``stream`` too (:meth:`watch`)."""
        shared = _Shared(key[:6], share, stream, reopen, relist)
        if share is not None:
            self._shared[share] = shared
        source = _Source(controller, shared, mapper, key, index=self._next_index)
        self._next_index += 1
        shared.consumers.append(source)
        shared.caught = 1
        self._listen(shared)
        self._sources.append(source)
        # Counted as it comes rather than recounted: a World opens ~200 watches, one at a time.
        self._silent += not shared.notifies
        self._dirty = True

    def _joinable(self, shared: _Shared) -> bool:
        """Whether a source may start reading ``shared`` now: it is open (not ended, nor waiting to be
        re-established), and the manager hears of its events as it heard of them until now."""
        if shared in self._failing:
            return False
        raw = shared.raw
        if raw is not None:
            return shared.notifies and not raw.closed
        return not getattr(shared.stream, "ended", shared.stream.closed)

    def _join(self, controller: Controller, shared: _Shared, mapper: Mapper, key: tuple[Any, ...]) -> None:
        """Add a source reading ``shared`` (open, in-process) from now on, given first an ``ADDED`` for
        each object the watch has now, in the order a watch opened now would give them (the store's key
        order), as what it gave before anyone listened."""
        shared.fill()  # everything written so far is in ``known``: the watch's current state
        source = _Source(controller, shared, mapper, key, position=shared.end, index=self._next_index)
        self._next_index += 1
        source.backlog = [("ADDED", obj) for _key, obj in sorted(shared.known.items(), key=_by_key)]
        shared.consumers.append(source)
        shared.caught += 1
        self._sources.append(source)
        self._silent += not shared.notifies
        if source.backlog and shared.notifies:
            source.pending = True
            heapq.heappush(self._ready, (source.index, source))
        self._dirty = True

    def sources(self) -> list[WatchStream]:
        """Every watch stream the controllers read (a shared one once)."""
        return [shared.stream for shared in self._watches()]

    def _watches(self) -> list[_Shared]:
        """The server watches behind the sources, each once, in the order of their first source."""
        seen: dict[int, _Shared] = {}
        for source in self._sources:
            seen.setdefault(id(source.shared), source.shared)
        return list(seen.values())

    def caught_up(self, streams: list[WatchStream]) -> None:
        """Every event the server had given ``streams`` has been read (not necessarily pumped yet)."""
        for hook in self.caught_up_hooks:
            hook(streams)

    def known_object(self, cluster: str, api_version: str, kind: str, namespace: str, name: str,
                     synced: Callable[[WatchStream], bool]) -> tuple[bool, dict[str, Any] | None]:
        """What the watches delivered of one object: ``(True, newest version or None when absent)`` when a
        watch of ``kind`` in ``cluster`` covers it (cluster-wide or in ``namespace``, no selector) and is
        ``synced``; ``(False, None)`` when none does. Not a copy."""
        served = False
        newest: dict[str, Any] | None = None
        for shared in self._watches():
            _cluster, version, source_kind, source_namespace, labels, fields = shared.key
            if (_cluster, version, source_kind) != (cluster, api_version, kind) or labels or fields:
                continue
            if source_namespace is not None and source_namespace != namespace:
                continue
            if not synced(shared.stream) or shared.stream.closed:
                continue
            served = True
            obj = shared.known.get((namespace, name))
            if obj is not None and (newest is None or _resource_version(obj) > _resource_version(newest)):
                newest = obj
        return served, newest

    def remove_sources(self, controller: Controller, cluster: str) -> None:
        keep = []
        for source in self._sources:
            if source.controller is controller and source.key[0] == cluster:
                self._drop(source)
            else:
                keep.append(source)
        self._sources = keep
        self._count_silent()

    def _drop(self, source: _Source) -> None:
        """Forget ``source`` as a pump sees it: it is no longer one of the manager's. The last source of a
        watch ends it."""
        source.removed = True
        shared = source.shared
        shared.leave(source)
        if not shared.consumers:
            shared.stream.stop()
            self._failing.discard(shared)
            if shared.share is not None and self._shared.get(shared.share) is shared:
                del self._shared[shared.share]

    def retry_due(self) -> float | None:
        """When the earliest retry of a request the apiserver failed falls due: a reconcile that raised
        on one (409, 429, 5xx, no connection), also while the controller holds it back a moment after;
        a watch whose list failed. None when nothing is failing that way. (A reconcile that failed for
        another reason, an extension answering Failure, say, is retried too, but is not counted.)"""
        dues = [timer.due for controller in self.controllers for request, timer in controller._timers.items()
                if request in controller._recovering]
        dues += [shared.relist_at for shared in self._watches() if shared.relist_failures]
        return min(dues, default=None)

    def _pump(self) -> bool:
        """Move queued watch events into controller queues, re-establishing watches the server
        ended; True if any arrived."""
        if self._silent or self._failing:
            return self._pump_all()
        ready = self._ready
        if not ready:
            self._dirty = False
            return False  # no watch was given an event or closed since the last look
        self._dirty = False
        # The sources as they are now, in their order: one that told of an event while this pump ran is
        # looked at now if it comes after the one being pumped (as a walk over every source would find
        # it), at the next pump if not; one added while this pump ran waits for the next pump.
        end = self._next_index
        last = -1
        later: list[tuple[int, _Source]] = []
        moved = False
        while ready and ready[0][0] < end:
            entry = heapq.heappop(ready)
            index, source = entry
            if index <= last:
                later.append(entry)  # it told while this pump ran, after its turn
                continue
            last = index
            source.pending = False
            if source.removed:
                continue
            if self._pump_source(source):
                moved = True
        for entry in later:
            heapq.heappush(ready, entry)
        return moved

    def _pump_all(self) -> bool:
        """:meth:`_pump` looking at every source: some cannot tell when they have events (over HTTP),
        or a watch waits to be re-established."""
        if not self._dirty and not self._silent and not self._ready:
            return False  # no watch was given an event or closed since the last look
        self._dirty = False  # an event arriving from here on sets it again
        for _index, source in self._ready:
            source.pending = False
        self._ready.clear()  # this look covers them (an event arriving from here on queues its source again)
        moved = False
        for source in list(self._sources):
            if self._pump_source(source):
                moved = True
        return moved

    def _pump_source(self, source: _Source) -> bool:
        """Deliver what ``source`` has not read of its watch and re-establish the watch if the server
        ended it; True if anything arrived."""
        shared = source.shared
        raw = shared.raw
        if raw is not None and not raw.closed and not source.backlog:
            # An open in-process watch (nearly every one): Shared.has_unread, fill and read, inlined, as this
            # runs for every source an event reaches (about 30 for each Pod created in a World).
            if raw.events:
                shared.append(shared.take())  # type: ignore[misc]
            log = shared.log
            offset = source.position - shared.base
            if offset >= len(log):
                return False  # nothing queued and still open: draining would give nothing
            events = log[offset:]  # a copy: a source joining from a mapper may add to the log
            source.position = end = shared.base + len(log)
            shared.caught += 1
            if shared.caught >= len(shared.consumers):
                shared.base = end
                shared.log = []
            self._deliver(source, events)
            return True
        if not shared.has_unread(source):
            return False  # nothing queued and still open: draining would give nothing
        shared.fill()
        events = shared.read(source)
        if events:
            self._deliver(source, events)
        # An open in-process watch says its stream is not over (raw tells everything the stream has).
        raw = shared.raw
        if shared.reopen is not None and (raw is None or raw.closed) and shared.stream.closed \
                and self._rewatch(shared):
            events = shared.read(source)
            if events:
                self._deliver(source, events)
            return True
        return bool(events)

    @staticmethod
    def _deliver(source: _Source, events: list[tuple[str, dict[str, Any]]]) -> None:
        """Queue the keys ``source``'s mapper gives for each event. (Runs for every event of every
        source, a Pod's write reaching about ten: the loop looks things up once, and queues a key as
        :meth:`Controller.enqueue` does, inlined, unless the controller queues keys its own way.)"""
        mapper = source.mapper
        controller = source.controller
        if type(controller).enqueue is not Controller.enqueue:
            enqueue = controller.enqueue
            for event_type, obj in events:
                if event_type == "BOOKMARK" or event_type == "ERROR":
                    continue  # an ERROR (410 Expired) ends the stream: the relist catches up
                for request in mapper(event_type, obj):
                    enqueue(request)
            return
        queued = controller._queued
        queue = controller._queue
        for event_type, obj in events:
            if event_type == "BOOKMARK" or event_type == "ERROR":
                continue  # an ERROR (410 Expired) ends the stream: the relist catches up
            for request in mapper(event_type, obj):
                if request not in queued:  # a key already queued costs this look-up alone
                    queued.add(request)
                    queue.append(request)

    def _rewatch(self, shared: _Shared) -> bool:
        """List and watch again after the server ended ``shared``'s watch; True when it did (the
        differences since the last event seen are added to its log as events, for each source)."""
        assert shared.reopen is not None and shared.relist is not None
        now = self.scheduler.clock.now()
        if now < shared.relist_at:
            return False
        try:
            listing = shared.relist()
            stream = shared.reopen(str((listing.get("metadata") or {}).get("resourceVersion") or "") or None)
        except Exception as err:  # noqa: BLE001 - an apiserver that fails the list is tried again later
            delay = min(RELIST_BACKOFF_BASE * (2**shared.relist_failures), RELIST_BACKOFF_MAX)
            shared.relist_failures += 1
            shared.relist_at = now + delay
            self.scheduler.call_at(shared.relist_at, self._mark)  # wakes the manager to try again
            self._failing.add(shared)
            log.debug("re-establishing the watch %s failed: %s", shared.key, err)
            return False
        shared.use(stream)
        self._failing.discard(shared)
        self._listen(shared)
        self._count_silent()
        shared.relist_failures = 0
        shared.relist_at = 0.0
        kind = shared.key[2]
        api_version = shared.key[1]
        gone = dict(shared.known)
        differences: list[tuple[str, dict[str, Any]]] = []
        for item in listing.get("items") or []:
            item = {"apiVersion": api_version, "kind": kind, **item}
            meta = item.get("metadata") or {}
            key = (meta.get("namespace") or "", meta.get("name", ""))
            previous = gone.pop(key, None)
            if previous is not None and (previous.get("metadata") or {}).get("resourceVersion") == meta.get(
                    "resourceVersion"):
                continue  # unchanged while the watch was down
            differences.append(("MODIFIED" if previous is not None else "ADDED", item))
        differences.extend(("DELETED", obj) for obj in gone.values())
        if differences:
            shared.append(differences)
            # Every source reads them: those already looked at in this pump at the next one.
            self._dirty = True
            for source in shared.consumers:
                if shared.notifies and not source.pending:
                    source.pending = True
                    heapq.heappush(self._ready, (source.index, source))
        return True

    def step(self) -> bool:
        """Do one unit of work due now (an event batch, a reconcile or a timer); False when idle."""
        if self.before_step is not None:
            self.before_step()
        self._pump()
        for controller in self.controllers:
            # has_work(), inlined: this loop runs over every controller at every step of every settle.
            if controller._queue and controller.enabled:
                controller.process_one()
                self.steps += 1
                return True
        if self.scheduler.run_one_due():
            return True
        return self._pump()

    def settle(self) -> int:
        """Run until nothing is due at the current instant; returns the number of steps taken.

        Raises :class:`SettleError` naming the controller and key when one key is reconciled over
        and over at one instant (a controller that keeps changing what it watches)."""
        steps = 0
        instant = self.scheduler.clock.now()
        while self.step():
            steps += 1
            if steps > MAX_STEPS_PER_INSTANT:
                raise SettleError(f"no quiescence after {steps} steps at one instant")
            if self.scheduler.clock.now() != instant:
                instant = self.scheduler.clock.now()
                for controller in self.controllers:
                    controller.reconciles.clear()
        for controller in self.controllers:
            controller.reconciles.clear()
        return steps

    def advance(self, seconds: float) -> None:
        """Move the clock forward by ``seconds``, running due work in time order and settling."""
        self.advance_until(self.scheduler.clock.now() + max(0.0, seconds))

    def advance_until(self, target: float, stop: Callable[[], bool] | None = None) -> float:
        """Move the clock forward to ``target``, running due work in time order and settling at
        each instant; the time reached. ``stop``, asked after each instant has settled, ends the
        run there when it answers True (so another process can react at that very instant)."""
        clock = self.scheduler.clock
        self.settle()
        while stop is None or not stop():
            due = self.scheduler.next_due()
            if due is None or due > target:
                clock.advance_to(target)
                self.settle()
                break
            clock.advance_to(due)
            self.settle()
        return clock.now()
