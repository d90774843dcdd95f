"""A controller process settles the same way however late the events of its own writes cross the wire
(harness/client/remote.py's lockstep): before the step that follows one of its writes, it waits until its
watches carry what the write changed, as an in-process manager's watches already do when the write returns.

The reference controllers as a process (``--target reference-process``) once failed RT_BCD_002 on a loaded
machine: after a reconcile wrote, the next step looked at the watches before that write's events had
arrived, found the queues empty, and fired a timer a reconcile of the older state had set (the topology
controller's 10 s progress requeue), which called BeforeClusterDelete inside the 60 s it had been told to
wait. Here the wire is made as slow as it can be: an event caused by a write of the process reaches a
watch's queue only once the process has asked the server what it sent (:class:`_SlowWire`), so without
the lockstep the old order comes back every run."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from harness.client import Controller, Manager, Request, Result
from harness.client.http import HttpClient, HttpWatch
from harness.client.remote import settle_with_server
from harness.clock import Scheduler, VirtualClock
from harness.world.http_scene import HttpScene, WorldServer
from harness.world.world import World

NS = "default"
TIMER_SECONDS = 10.0
# A held event goes on after this much wall time even if nobody asks (only so a broken test cannot hang).
HOLD_SECONDS = 10.0


class _Asks:
    """How often the process has asked the server what its watch streams were given, and from which
    question on events are held (the last write the process started)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._count = 0
        self._held_from: int | None = None

    @property
    def count(self) -> int:
        with self._changed:
            return self._count

    def ask(self) -> None:
        with self._changed:
            self._count += 1
            self._changed.notify_all()

    def write_started(self) -> None:
        """What the server sends from now on reaches the queues only after the next question."""
        with self._changed:
            self._held_from = self._count

    def wait_if_held(self) -> None:
        with self._changed:
            held_from = self._held_from
            if held_from is not None:
                self._changed.wait_for(lambda: self._count > held_from, timeout=HOLD_SECONDS)


class _HeldQueue(deque):  # type: ignore[type-arg]
    """A watch's event queue that takes an event the process's last write caused in only after the process
    next asks the server."""

    def __init__(self, asks: _Asks) -> None:
        super().__init__()
        self._asks = asks

    def append(self, item: Any) -> None:
        self._asks.wait_if_held()
        super().append(item)


class _HeldWatch(HttpWatch):
    def __init__(self, http: httpx.Client, url: str, params: dict[str, str], asks: _Asks) -> None:
        self._asks = asks
        super().__init__(http, url, params)

    def _start(self) -> None:
        self._events = _HeldQueue(self._asks)  # before the reader thread reads anything
        super()._start()


class _SlowWire(HttpClient):
    """A process's client on the slowest wire the protocol allows: once it has started a write, what a
    watch reads off its stream is queued (and counted as received) only after the process next asks the
    server for its counts."""

    def __init__(self, server: str, user: str) -> None:
        super().__init__(server, token=user, user=user)
        self.asks = _Asks()

    def watch(self, api_version: str, kind: str, namespace: str | None = None, *,  # type: ignore[override]
              resource_version: str | None = None, label_selector: str | None = None,
              field_selector: str | None = None, allow_bookmarks: bool = False) -> HttpWatch:
        params = self._params(watch=True, resourceVersion=resource_version, labelSelector=label_selector,
                              fieldSelector=field_selector, allowWatchBookmarks=allow_bookmarks)
        return _HeldWatch(self._http, self.server + self._path(api_version, kind, None, namespace), params, self.asks)

    def watch_streams(self) -> dict[str, dict[str, Any]]:
        self.asks.ask()
        return super().watch_streams()

    def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        if method not in ("GET", "HEAD", "OPTIONS"):
            self.asks.write_started()
        return super()._request(method, path, **kwargs)


class _Writer(Controller):
    """Creates the ConfigMap ``follow`` when it sees ``trigger``."""

    name = "writer"

    def __init__(self, client: Any) -> None:
        super().__init__()
        self.client = client

    def setup(self) -> None:
        self.watch(self.client, "v1", "ConfigMap")

    def reconcile(self, request: Request) -> Result | None:
        if request.name == "trigger":
            self.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                "metadata": {"name": "follow", "namespace": request.namespace}})
        return None


class _Follower(Controller):
    """Notes when it reconciles ``follow``."""

    name = "follower"

    def __init__(self, client: Any, order: list[str]) -> None:
        super().__init__()
        self.client = client
        self.order = order

    def setup(self) -> None:
        self.watch(self.client, "v1", "ConfigMap")

    def reconcile(self, request: Request) -> Result | None:
        if request.name == "follow":
            self.order.append("follow")
        return None


class _Timed(Controller):
    """Watches nothing; notes when its timer fires."""

    name = "timed"

    def __init__(self, order: list[str]) -> None:
        super().__init__()
        self.order = order

    def reconcile(self, request: Request) -> Result | None:
        self.order.append("timer")
        return None


@pytest.fixture
def served() -> Iterator[tuple[HttpScene, _SlowWire, Manager, list[str]]]:
    server = WorldServer()
    scene = HttpScene(World(controllers=[]), server=server)
    client = _SlowWire(server.base_url, "controller")
    try:
        order: list[str] = []
        manager = Manager(Scheduler(VirtualClock(scene.now())))
        manager.add(_Writer(client))
        manager.add(_Follower(client, order))
        timed = _Timed(order)
        manager.add(timed)
        timed.enqueue_after(Request("", "tick"), TIMER_SECONDS)
        settle_with_server(manager, client.watch_streams)  # the watches are open and caught up
        yield scene, client, manager, order
        for controller in list(manager.controllers):
            manager.remove(controller)
    finally:
        client.close()
        scene.close()
        server.stop()


def test_the_events_of_a_process_write_are_reconciled_before_a_timer_due_at_the_same_instant(
        served: Any) -> None:
    scene, _client, manager, order = served
    scene.client().create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "trigger", "namespace": NS}})
    manager.scheduler.clock.advance_to(manager.scheduler.clock.now() + TIMER_SECONDS)
    settle_with_server(manager, _client.watch_streams)
    # In process, the ConfigMap ``follow`` the writer created is queued when the create returns, and queued
    # work goes before timers; the process must find it queued too, however slow the wire.
    assert order == ["follow", "timer"]


def _asks_after_the_first_catch_up(client: _SlowWire, manager: Manager) -> int:
    """Settle once; how often the process asked the server for its watches' counts after the settle's
    first catch-up."""
    marks: list[int] = []
    manager.caught_up_hooks.append(lambda streams: marks.append(client.asks.count))
    settle_with_server(manager, client.watch_streams)
    return client.asks.count - marks[0]


def test_only_a_step_that_follows_a_write_of_the_process_asks_the_server_again(served: Any) -> None:
    scene, client, manager, order = served
    scene.client().create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "other", "namespace": NS}})
    assert _asks_after_the_first_catch_up(client, manager) == 0  # reconciled "other" twice, wrote nothing
    scene.client().create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "trigger", "namespace": NS}})
    assert _asks_after_the_first_catch_up(client, manager) >= 1  # the writer created "follow"
    assert order == ["follow"]
    # What the write caused was reconciled in this settle, at this instant, not left for a later one.
    assert not any(controller._queue for controller in manager.controllers)
