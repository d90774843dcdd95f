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
"""

from __future__ import annotations

import heapq
import logging
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
# A key whose reconcile failed on a request the apiserver could not serve (409, 429, 5xx, no connection)
# is still recovering while the controller asks for it again within this many seconds (a controller may
# hold a retry back a little, as Cluster API's deletion cache does: 1 s).
RECOVERY_WINDOW = 2.0
TRANSIENT_CODES = (409, 429, 500, 502, 503, 504)
# What those failures say when a controller passes on only their text (kube-apiserver's own wording).
TRANSIENT_TEXTS = ("Too many requests, please try again later", "Internal error occurred:",
                   "the object has been modified; please apply your changes")


@dataclass(frozen=True, order=True)
class Request:
    """What a reconcile is about: an object's namespace ("" when cluster-scoped) and name."""

    namespace: str
    name: str

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

        self.manager.add_source(self, open_watch(), mapper or _own_key, key, reopen=open_watch, relist=relist)

    def forget_watches(self, cluster: str) -> None:
        """Stop following a cluster that went away."""
        assert self.manager is not None
        self.manager.remove_sources(self, cluster)
        self._watch_keys = {k for k in self._watch_keys if k[0] != cluster}

    # -- queue -------------------------------------------------------------------------------------

    def enqueue(self, request: Request) -> None:
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


def owner_mapper(owner_kind: str, *, controller_only: bool = True) -> Mapper:
    """Map an event to the key of the object's owner of ``owner_kind`` (same namespace)."""

    def mapper(_event: str, obj: dict[str, Any]) -> Iterable[Request]:
        meta = obj.get("metadata") or {}
        for ref in meta.get("ownerReferences") or []:
            if ref.get("kind") == owner_kind and (ref.get("controller") or not controller_only):
                yield Request(meta.get("namespace") or "", ref.get("name", ""))

    return mapper


@dataclass
class _Source:
    controller: Controller
    stream: WatchStream
    mapper: Mapper
    key: tuple[Any, ...]
    # How to re-establish the watch when the server ends it (None: it is never re-established).
    reopen: Callable[[str | None], WatchStream] | None = None
    relist: Callable[[], dict[str, Any]] | None = None
    # The newest object seen per (namespace, name), to tell which ones a relist no longer has.
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
    # Its place among the manager's sources (only ever increasing, so it orders them as the list does).
    index: int = 0
    # Whether it waits in the manager's ready heap; whether the manager dropped it.
    pending: bool = False
    removed: bool = False

    def __post_init__(self) -> None:
        self.use(self.stream)

    def use(self, stream: WatchStream) -> None:
        """Read ``stream`` from now on."""
        self.stream = stream
        self.raw = _raw_watch(stream)
        self.take = getattr(stream, "drain_shared", None) or stream.drain


def _raw_watch(stream: WatchStream) -> Any:
    """The in-process Watch whose ``events`` and ``closed`` tell everything ``stream`` has to give, or None."""
    return getattr(stream, "in_process_watch", None)


class Manager:
    """Runs controllers: routes watch events to their queues and runs them on the clock."""

    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler
        self.controllers: list[Controller] = []
        self._sources: list[_Source] = []
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
        # a reconcile that only read) skips looking at the world's ~200 watches. Streams that cannot tell
        # (over HTTP) are looked at every time; a watch waiting to be re-established after a failed list
        # is looked at again when its retry falls due (the timer marks the manager).
        self._dirty = True
        self._silent = 0  # sources whose stream cannot tell
        # The in-process watches that told of an event (or their end) since they were last looked at, by
        # their place among the sources: a pump looks at those alone, in the order a look at every source
        # would take (a World has ~200 watches; a Pod's write gives events to about ten of them).
        self._ready: list[tuple[int, _Source]] = []
        self._next_index = 0
        # Sources whose watch ended and could not be re-established yet (a failed list): while there are
        # any, every pump looks at every source, as each pump tries them again once their retry is due.
        self._failing: set[int] = set()

    def _mark(self) -> None:
        self._dirty = True

    def _listen(self, source: _Source) -> None:
        """Have ``source``'s in-process watch tell the manager when it has something (if nothing else listens)."""
        raw = source.raw
        if raw is not None and raw.on_event is None:
            ready = self._ready

            def arrived() -> None:
                if not source.pending:
                    source.pending = True
                    heapq.heappush(ready, (source.index, source))

            raw.on_event = arrived
            source.notifies = True
            if raw.events or raw.closed:
                arrived()  # what the watch gave before anyone listened (its initial ADDED events)
        else:
            source.notifies = False

    def _count_silent(self) -> None:
        self._silent = sum(1 for source in self._sources if not source.notifies)
        self._dirty = True

    def add(self, controller: Controller) -> Controller:
        controller.manager = self
        self.controllers.append(controller)
        controller.setup()
        return controller

    def remove(self, controller: Controller) -> None:
        """Stop running ``controller``: its watches end, its timers are dropped, its queue is forgotten."""
        for source in [s for s in self._sources if s.controller is controller]:
            source.stream.stop()
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

    def add_source(
        self,
        controller: Controller,
        stream: WatchStream,
        mapper: Mapper,
        key: tuple[Any, ...],
        *,
        reopen: Callable[[str | None], WatchStream] | None = None,
        relist: Callable[[], dict[str, Any]] | None = None,
    ) -> None:
        """Route ``stream``'s events through ``mapper`` to ``controller``; with ``reopen`` and ``relist``
        the watch is re-established (list, then watch from there) when the server ends it."""
        source = _Source(controller, stream, mapper, key, reopen, relist, index=self._next_index)
        self._next_index += 1
        self._listen(source)
        self._sources.append(source)
        # Counted as it comes rather than recounted: a World opens ~200 watches, one at a time.
        self._silent += not source.notifies
        self._dirty = True

    def sources(self) -> list[WatchStream]:
        """Every watch stream the controllers read."""
        return [source.stream for source in self._sources]

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
        for source in self._sources:
            _cluster, version, source_kind, source_namespace, labels, fields = source.key[:6]
            if (_cluster, version, source_kind) != (cluster, api_version, kind) or labels or fields:
                continue
            if source_namespace is not None and source_namespace != namespace:
                continue
            if not synced(source.stream) or source.stream.closed:
                continue
            served = True
            obj = source.known.get((namespace, name))
            if obj is not None and (newest is None or _resource_version(obj) > _resource_version(newest)):
                newest = obj
        return served, newest

    def remove_sources(self, controller: Controller, cluster: str) -> None:
        keep = []
        for source in self._sources:
            if source.controller is controller and source.key[0] == cluster:
                source.stream.stop()
                self._drop(source)
            else:
                keep.append(source)
        self._sources = keep
        self._count_silent()

    def _drop(self, source: _Source) -> None:
        """Forget ``source`` as a pump sees it: it is no longer one of the manager's."""
        source.removed = True
        self._failing.discard(source.index)

    def retry_due(self) -> float | None:
        """When the earliest retry of a request the apiserver failed falls due: a reconcile that raised
        on one (409, 429, 5xx, no connection), also while the controller holds it back a moment after;
        a watch whose list failed. None when nothing is failing that way. (A reconcile that failed for
        another reason, an extension answering Failure, say, is retried too, but is not counted.)"""
        dues = [timer.due for controller in self.controllers for request, timer in controller._timers.items()
                if request in controller._recovering]
        dues += [source.relist_at for source in self._sources if source.relist_failures]
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
        """Deliver what ``source``'s watch has queued and re-establish it if the server ended it; True
        if anything arrived."""
        raw = source.raw
        if raw is not None and not raw.events and not raw.closed:
            return False  # nothing queued and still open: draining would give nothing
        events = source.take()  # type: ignore[misc]
        if events:
            self._deliver(source, events)
        # An open in-process watch says its stream is not over (raw tells everything the stream has).
        if source.reopen is not None and (raw is None or raw.closed) and source.stream.closed \
                and self._rewatch(source):
            return True
        return bool(events)

    @staticmethod
    def _deliver(source: _Source, events: list[tuple[str, dict[str, Any]]]) -> None:
        """Remember each event's object as ``source``'s and queue the keys its mapper gives. (Runs for
        every event of every watch, a Pod's write reaching about ten: the loop looks things up once.)"""
        known = source.known
        mapper = source.mapper
        enqueue = source.controller.enqueue
        for event_type, obj in events:
            if event_type == "BOOKMARK" or event_type == "ERROR":
                continue  # an ERROR (410 Expired) ends the stream: the relist catches up
            meta = obj.get("metadata") or {}
            key = (meta.get("namespace") or "", meta.get("name", ""))
            if event_type == "DELETED":
                known.pop(key, None)
            else:
                known[key] = obj
            for request in mapper(event_type, obj):
                enqueue(request)

    def _rewatch(self, source: _Source) -> bool:
        """List and watch again after the server ended ``source``'s watch; True when it did (the
        differences since the last event seen are delivered as events)."""
        assert source.reopen is not None and source.relist is not None
        now = self.scheduler.clock.now()
        if now < source.relist_at:
            return False
        try:
            listing = source.relist()
            stream = source.reopen(str((listing.get("metadata") or {}).get("resourceVersion") or "") or None)
        except Exception as err:  # noqa: BLE001 - an apiserver that fails the list is tried again later
            delay = min(RELIST_BACKOFF_BASE * (2**source.relist_failures), RELIST_BACKOFF_MAX)
            source.relist_failures += 1
            source.relist_at = now + delay
            self.scheduler.call_at(source.relist_at, self._mark)  # wakes the manager to try again
            self._failing.add(source.index)
            log.debug("%s: re-establishing the watch %s failed: %s", source.controller.name, source.key, err)
            return False
        source.use(stream)
        self._failing.discard(source.index)
        self._listen(source)
        self._count_silent()
        source.relist_failures = 0
        source.relist_at = 0.0
        kind = source.key[2]
        api_version = source.key[1]
        gone = dict(source.known)
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
        self._deliver(source, differences)
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
