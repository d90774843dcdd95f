"""Running controllers in their own process against a served world: its clock, and two run loops.

:func:`run_forever` is for a world whose clock follows wall time (``python -m harness serve``):
:class:`ServerClock` mirrors the server's time, reading it now and then and counting wall time in
between, so due timers (requeue-after) fire when the server's time reaches them.

:func:`run_controlled` is for a world whose clock moves only when told (a test's world): the process
does nothing until asked, and each request is answered once the controllers have caught up with
everything the server sent them and have nothing left to do at that instant. That makes a world
and a controller process settle together deterministically (harness/targets/process.py drives it).
The requests and answers are JSON lines:

* first, unasked, the process writes ``{"ready": true, "controllers": [names]}``; it connects to the
  server only at its first ``settle`` (so a process can be started ahead of the world it will serve);
* ``{"op": "settle", "now": unix}`` moves the process's clock to ``now`` (the server's time), then
  catches up and settles, catching up again before every step that follows one of its own writes (the
  server settled the world before it answered the write, so the watches then carry the write and what
  the world did because of it: the next reconcile or timer finds the same queued work every run, however
  slowly the events cross the wire); answer ``{"steps": N, "nextDue": unix|null,
  "retryDue": unix|null, "errors": [new reconcile errors]}`` (``nextDue``: the earliest requeue-after
  timer; ``retryDue``: the earliest retry of something that failed). With ``"unchanged": true`` the
  harness adds that nothing was written anywhere in the world since the process's last answer (only the
  clock moved, to one of its timers): a process may then keep what it read in its last round (its read
  cache, harness/client/cache.py) if its watches, caught up, got nothing new either. A process may
  ignore the field;
* ``{"op": "stop"}`` (or the end of the input) ends the loop; answer ``{"stopped": true}``.

A request the loop cannot read is answered ``{"error": message}``.

A controller of another maker driven through this protocol (``--target controller --stdio-control``) is
as deterministic as it catches up: one that reconciles on whatever events have arrived by then settles
differently on a slow machine than on a fast one (a timer firing before the events of its own write).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable
from typing import IO, Any

from harness.client.http import writes_sent
from harness.client.runtime import Manager
from harness.clock import VirtualClock

# How often the mirrored clock re-reads the server's time (an admin advance is seen within this).
SYNC_INTERVAL = 0.1
# How long (wall time) a controlled process waits for its watches to deliver what the server sent.
CATCH_UP_SECONDS = 10.0
POLL_SECONDS = 0.002
OP_SETTLE = "settle"
OP_STOP = "stop"


class ServerClock(VirtualClock):
    """A clock that follows a server's virtual time, read through ``read_server_clock`` (the admin
    API's clock document). When the server's clock follows wall time this one counts wall time
    between reads; when the server's clock is frozen, this one moves only when re-read."""

    def __init__(self, read_server_clock: Callable[[], dict[str, Any]]) -> None:
        self._read = read_server_clock
        doc = read_server_clock()
        super().__init__(float(doc["unix"]), follow_wall_time=bool(doc.get("followsWallTime", True)))
        self._synced_at = time.monotonic()

    def sync(self) -> None:
        """Re-read the server's time (at most every ``SYNC_INTERVAL`` seconds)."""
        if time.monotonic() - self._synced_at < SYNC_INTERVAL:
            return
        server_now = float(self._read()["unix"])
        self._synced_at = time.monotonic()
        self.advance_to(server_now)


def run_forever(manager: Manager, clock: ServerClock, stop: threading.Event) -> None:
    """Run the manager's controllers until ``stop`` is set: settle, then sleep until an event
    arrives, a timer falls due or the clock needs re-reading."""
    wake = threading.Event()
    for source in manager.sources():
        source.on_event = wake.set
    while not stop.is_set():
        try:
            clock.sync()
        except ConnectionError:
            pass  # the server is away for a moment; try again on the next turn
        manager.settle()
        for source in manager.sources():
            if source.on_event is None:
                source.on_event = wake.set
        due = manager.scheduler.next_due()
        timeout = SYNC_INTERVAL if due is None else max(0.0, min(SYNC_INTERVAL, due - clock.now()))
        wake.wait(timeout)
        wake.clear()


def _behind(watches: Iterable[Any], streams: Callable[[], dict[str, dict[str, Any]]]) -> list[Any]:
    """The watches that have not yet read everything the server gave their stream (or seen its end)."""
    behind = []
    server: dict[str, dict[str, Any]] | None = None
    for watch in watches:
        if getattr(watch, "ended", True):
            continue  # over (or not a stream at all): everything it carried is queued already
        if watch.audit_id is None:
            behind.append(watch)  # the server has not answered yet
            continue
        server = streams() if server is None else server
        stream = server.get(watch.audit_id)
        if stream is not None and (watch.received < stream["events"] or stream["ended"]):
            behind.append(watch)
    return behind


def catch_up(watches: list[Any], streams: Callable[[], dict[str, dict[str, Any]]],
             timeout: float = CATCH_UP_SECONDS) -> None:
    """Wait until every watch has read what the server has given its stream (``streams()``: the
    server's count per audit ID); TimeoutError naming the laggards after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    arrived = threading.Event()
    behind = _behind(watches, streams)
    while behind:
        for watch in behind:
            watch.on_event = arrived.set  # wake as soon as one of them reads something
        if time.monotonic() > deadline:
            names = ", ".join(str(w.audit_id) for w in behind)
            raise TimeoutError(f"watch streams did not deliver what the server sent within {timeout} s: {names}")
        arrived.wait(POLL_SECONDS)
        arrived.clear()
        behind = _behind(behind, streams)


class CaughtUp(list[Any]):
    """The watch streams just caught up (what :meth:`Manager.caught_up` hands its hooks); whether this is
    the first catch-up of a ``settle`` request (``first``: the world may have changed since the last
    answer; later ones of the same request follow only the process's own writes, which the server
    answered once it had settled the world), and whether the harness said the world was ``unchanged``
    since the process's last answer (see the module docstring)."""

    def __init__(self, streams: Iterable[Any], *, first: bool = True, world_unchanged: bool = False) -> None:
        super().__init__(streams)
        self.first = first
        self.world_unchanged = world_unchanged


class _Lockstep:
    """What a manager does before each step of a ``settle`` request (:attr:`Manager.before_step`): when
    the process sent a write since its watches last caught up (or opened or re-established a watch), it
    waits until they have read everything the server has given them, and tells the catch-up hooks
    (``first=False``). The server settled the world before it answered the write, so the watches then
    carry the write and whatever the world did because of it, and the step that follows finds the same
    queued work every run, as an in-process manager does, whose watches hold a write's events when the
    write returns. Without it the next step takes whatever has crossed the wire by then: on a slow
    machine a controller's queue looks empty and a timer fires first, or another controller's key goes
    first, and a scenario's outcome depends on the machine's speed."""

    def __init__(self, manager: Manager, streams: Callable[[], dict[str, dict[str, Any]]], writes: int,
                 sources: list[Any]) -> None:
        self.manager = manager
        self.streams = streams
        self.writes = writes
        self.sources = sources

    def __call__(self) -> None:
        sources = self.manager.sources()
        writes = writes_sent()
        if writes == self.writes and _same(sources, self.sources):
            return  # nothing the process did since the last catch-up can have given the watches anything
        catch_up(sources, self.streams)
        self.writes, self.sources = writes, sources
        self.manager.caught_up(CaughtUp(sources, first=False))


def settle_with_server(manager: Manager, streams: Callable[[], dict[str, dict[str, Any]]], *,
                       unchanged: bool = False) -> int:
    """Catch up with the server's watch streams and settle, catching up again before any step that
    follows a write of the process (:class:`_Lockstep`); the steps taken. When it returns, the last step
    found nothing to do after the watches had caught up with the process's last write: nothing is left
    at this instant. ``unchanged``: the harness says nothing was written in the world since the last
    settle answered (told to the first catch-up's hooks)."""
    sources = manager.sources()
    writes = writes_sent()
    catch_up(sources, streams)
    manager.caught_up(CaughtUp(sources, first=True, world_unchanged=unchanged))
    manager.before_step = _Lockstep(manager, streams, writes, sources)
    try:
        return manager.settle()
    finally:
        manager.before_step = None


def _same(now: list[Any], before: list[Any]) -> bool:
    return len(now) == len(before) and all(a is b for a, b in zip(now, before, strict=True))


def _error_count(manager: Manager) -> int:
    return sum(len(controller.errors) for controller in manager.controllers)


def _new_errors(manager: Manager, seen: int) -> list[str]:
    return [error for controller in manager.controllers for error in controller.errors][seen:]


Connect = Callable[[float], tuple[Manager, Callable[[], dict[str, dict[str, Any]]]]]


def run_controlled(names: list[str], connect: Connect, requests: IO[str], answers: IO[str]) -> None:
    """Serve the JSON-line protocol of the module docstring on ``requests``/``answers`` until
    asked to stop or the requests end. ``names``: the controllers, for the ready line;
    ``connect(now)``, called at the first ``settle``: the manager running them on a clock that
    starts at ``now``, and the server's watch stream counts."""

    def answer(body: dict[str, Any]) -> None:
        answers.write(json.dumps(body) + "\n")
        answers.flush()

    answer({"ready": True, "controllers": names})
    connected: tuple[Manager, Callable[[], dict[str, dict[str, Any]]]] | None = None
    errors_seen = 0
    for line in requests:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            op = request["op"]
        except (ValueError, KeyError, TypeError) as err:
            answer({"error": f"unreadable request {line.strip()[:200]!r}: {err}"})
            continue
        if op == OP_STOP:
            answer({"stopped": True})
            return
        if op != OP_SETTLE:
            answer({"error": f"unknown op {op!r}"})
            continue
        try:
            now = float(request["now"])
            if connected is None:
                connected = connect(now)
            manager, streams = connected
            manager.scheduler.clock.advance_to(now)
            steps = settle_with_server(manager, streams, unchanged=request.get("unchanged") is True)
        except (OSError, RuntimeError, ValueError, TypeError, KeyError) as err:
            answer({"error": f"{type(err).__name__}: {err}"})
            continue
        answer({"steps": steps, "nextDue": manager.scheduler.next_due(), "retryDue": manager.retry_due(),
                "errors": _new_errors(manager, errors_seen)})
        errors_seen = _error_count(manager)
