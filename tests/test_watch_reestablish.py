"""A controller's watch that the server ends is re-established as an informer does (harness/client/runtime.py):
list again, deliver what changed while it was down (deletions included), watch from the list's
resourceVersion; a failing list is retried on the virtual clock."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_http_fixtures import Served, serving

from harness.client.http import HttpClient
from harness.client.runtime import RELIST_BACKOFF_BASE, Controller, Manager, Request
from harness.clock import Scheduler, VirtualClock

FAULTS = "/harness/v1/faults"
WAIT_SECONDS = 10.0


class Recorder(Controller):
    """Records every key it is asked to reconcile."""

    name = "recorder"

    def __init__(self, client: HttpClient) -> None:
        super().__init__()
        self.client = client
        self.seen: list[str] = []

    def setup(self) -> None:
        self.watch(self.client, "v1", "ConfigMap", namespace="default")

    def reconcile(self, request: Request) -> None:
        self.seen.append(request.name)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    yield from serving(tmp_path, simulators=[], controllers=[])


@pytest.fixture
def admin(served: Served) -> Iterator[httpx.Client]:
    with served.http() as session:
        yield session


def _wait(stream: Any, condition: Callable[[Any], bool], what: str) -> None:
    """Wait (bounded) until ``condition(stream)`` holds: the watch is a real stream read on a thread,
    which calls ``on_event`` when something arrives or the stream ends."""
    arrived = threading.Event()
    stream.on_event = arrived.set
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition(stream):
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"timed out waiting for {what}"
        arrived.wait(remaining)
        arrived.clear()


def _configmap(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}}


def _start(served: Served) -> tuple[Manager, Recorder]:
    manager = Manager(Scheduler(VirtualClock()))
    recorder = manager.add(Recorder(HttpClient.from_kubeconfig(served.kubeconfig.read_text())))
    assert isinstance(recorder, Recorder)
    return manager, recorder


def _stream(manager: Manager) -> Any:
    (stream,) = manager.sources()
    return stream


def test_a_dropped_watch_is_reestablished_and_what_changed_meanwhile_is_delivered(
        served: Served, admin: httpx.Client) -> None:
    world = served.world.client()
    world.create(_configmap("kept"))
    world.create(_configmap("removed"))
    admin.post(FAULTS, json={"fault": "DropWatch", "resource": "configmaps", "count": 1, "afterEvents": 2})
    manager, recorder = _start(served)
    first = _stream(manager)
    _wait(first, lambda w: w.ended, "the server to end the first watch after two events")
    world.delete("v1", "ConfigMap", "removed", "default")
    world.create(_configmap("added"))
    manager.settle()
    assert sorted(set(recorder.seen)) == ["added", "kept", "removed"]
    second = _stream(manager)
    assert second is not first and not second.ended
    recorder.seen.clear()
    world.create(_configmap("later"))
    _wait(second, lambda w: w.received > 0, "the new watch to deliver the next event")
    manager.settle()
    assert recorder.seen == ["later"]


def test_an_expired_resource_version_makes_the_watch_list_again(served: Served, admin: httpx.Client) -> None:
    world = served.world.client()
    world.create(_configmap("a"))
    admin.post(FAULTS, json={"fault": "DropWatch", "resource": "configmaps", "count": 1, "afterEvents": 1})
    admin.post(FAULTS, json={"fault": "Expired", "resource": "configmaps", "verbs": ["watch"], "count": 1})
    manager, recorder = _start(served)
    # Every watch the informer opens after the first: the 410 may reach the second one while the settle
    # below still runs (a loaded machine), and that settle then lists and watches a third time at once.
    reopened: list[Any] = []
    watch = recorder.client.watch

    def recorded_watch(*args: Any, **kwargs: Any) -> Any:
        reopened.append(watch(*args, **kwargs))
        return reopened[-1]

    recorder.client.watch = recorded_watch  # type: ignore[method-assign]
    _wait(_stream(manager), lambda w: w.ended, "the first watch to end")
    manager.settle()  # lists, and watches from the list's resourceVersion: that one is too old
    assert reopened, "the ended watch was not opened again"
    _wait(reopened[0], lambda w: w.ended, "the 410 in the second watch")
    current = _stream(manager)  # the second, ended; or the third, if that settle has listed already
    before = current.received
    world.create(_configmap("b"))
    _wait(current, lambda w: w.ended or w.received > before, "b over the third watch")
    manager.settle()  # lists again (or delivers b from the third watch)
    assert "b" in recorder.seen
    fired = {rule["fault"]: rule["fired"] for rule in admin.get(FAULTS).json()["items"]}
    assert fired == {"DropWatch": 1, "Expired": 1}
    assert len(reopened) == 2, "one list and watch after the drop, one after the 410"
    assert not _stream(manager).ended


def test_a_list_that_fails_is_tried_again_after_a_virtual_backoff(served: Served, admin: httpx.Client) -> None:
    world = served.world.client()
    admin.post(FAULTS, json={"fault": "DropWatch", "resource": "configmaps", "count": 1})
    admin.post(FAULTS, json={"fault": "InternalError", "resource": "configmaps", "verbs": ["list"], "count": 1})
    manager, recorder = _start(served)
    _wait(_stream(manager), lambda w: w.ended, "the first watch to end")
    world.create(_configmap("meanwhile"))
    manager.settle()
    assert recorder.seen == [], "the list failed: nothing to deliver yet"
    clock = manager.scheduler.clock
    assert manager.scheduler.next_due() == pytest.approx(clock.now() + RELIST_BACKOFF_BASE)
    manager.advance(RELIST_BACKOFF_BASE)
    assert recorder.seen == ["meanwhile"]
