"""The event recorder (harness/client/events.py): client-go's client-side aggregation of repeats
(tools/record/events_cache.go) without reading the Event back before each write."""

from __future__ import annotations

from typing import Any

import pytest

from harness.apiserver.faults import injector_of
from harness.client import NORMAL, WARNING, EventRecorder
from harness.client.inprocess import InProcessClient
from harness.kube.names.faults import INTERNAL_ERROR
from harness.world.world import World

COMPONENT = "test-recorder"


@pytest.fixture
def world() -> World:
    return World()


@pytest.fixture
def client(world: World) -> InProcessClient:
    return world.client()


def _pod(client: InProcessClient, name: str = "p") -> dict[str, Any]:
    created = client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                             "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    assert created is not None
    return created


def _events(client: InProcessClient) -> list[dict[str, Any]]:
    return [e for e in client.list("v1", "Event", "default")["items"] if e["source"]["component"] == COMPONENT]


def _writes(world: World, since: int) -> list[tuple[str, str]]:
    return [(r.verb, r.resource) for r in world.audit.query(since=since, resource="events")
            if ((r.new or r.old or {}).get("source") or {}).get("component") == COMPONENT]


def _fail_event_reads(world: World) -> None:
    """Every GET of an Event fails from now on: a recorder that reads before writing would lose its events."""
    injector_of(world.clusters).add({"fault": INTERNAL_ERROR, "verbs": ["get"], "resource": "events", "rate": 1})


def test_a_new_event_is_one_create_with_count_one_and_no_read(world: World, client: InProcessClient) -> None:
    pod = _pod(client)
    _fail_event_reads(world)
    since = len(world.audit)
    EventRecorder(client, COMPONENT).event(pod, NORMAL, "Scheduled", "assigned")
    [event] = _events(client)
    assert (event["count"], event["type"], event["reason"], event["message"]) == (1, NORMAL, "Scheduled", "assigned")
    assert event["firstTimestamp"] == event["lastTimestamp"]
    assert event["involvedObject"]["uid"] == pod["metadata"]["uid"]
    assert _writes(world, since) == [("create", "events")]
    assert injector_of(world.clusters).injected == type(injector_of(world.clusters).injected)()


def test_a_repeat_patches_the_count_and_last_timestamp_from_the_recorders_memory(
    world: World, client: InProcessClient
) -> None:
    pod = _pod(client)
    recorder = EventRecorder(client, COMPONENT)
    recorder.event(pod, WARNING, "FailedCreate", "quota")
    first = _events(client)[0]["firstTimestamp"]
    _fail_event_reads(world)
    since = len(world.audit)
    world.advance(30)
    recorder.event(pod, WARNING, "FailedCreate", "quota")
    recorder.event(pod, WARNING, "FailedCreate", "quota")
    [event] = _events(client)
    assert event["count"] == 3
    assert event["firstTimestamp"] == first
    assert event["lastTimestamp"] > first
    assert _writes(world, since) == [("patch", "events"), ("patch", "events")]


def test_a_different_message_is_another_event(client: InProcessClient) -> None:
    pod = _pod(client)
    recorder = EventRecorder(client, COMPONENT)
    recorder.event(pod, WARNING, "FailedCreate", "one")
    recorder.event(pod, WARNING, "FailedCreate", "two")
    assert sorted((e["message"], e["count"]) for e in _events(client)) == [("one", 1), ("two", 1)]


def test_a_repeat_of_a_deleted_event_creates_it_again_with_the_count_reached(
    world: World, client: InProcessClient
) -> None:
    pod = _pod(client)
    recorder = EventRecorder(client, COMPONENT)
    recorder.event(pod, NORMAL, "Killing", "stopping")
    recorder.event(pod, NORMAL, "Killing", "stopping")
    [event] = _events(client)
    client.delete("v1", "Event", event["metadata"]["name"], "default")
    since = len(world.audit)
    recorder.event(pod, NORMAL, "Killing", "stopping")
    [again] = _events(client)
    # client-go creates the Event it tried to patch: the count and first timestamp it remembers.
    assert (again["metadata"]["name"], again["count"], again["firstTimestamp"]) == (
        event["metadata"]["name"], 3, event["firstTimestamp"])
    assert _writes(world, since) == [("create", "events")]


def test_a_fresh_recorder_of_the_same_component_counts_on_top_of_the_stored_event(client: InProcessClient) -> None:
    pod = _pod(client)
    EventRecorder(client, COMPONENT).event(pod, NORMAL, "Started", "up")
    EventRecorder(client, COMPONENT).event(pod, NORMAL, "Started", "up")
    later = EventRecorder(client, COMPONENT)
    later.event(pod, NORMAL, "Started", "up")
    later.event(pod, NORMAL, "Started", "up")
    [event] = _events(client)
    assert event["count"] == 4


def test_a_failed_write_is_dropped_and_the_next_repeat_still_lands(world: World, client: InProcessClient) -> None:
    pod = _pod(client)
    recorder = EventRecorder(client, COMPONENT)
    injector_of(world.clusters).add({"fault": INTERNAL_ERROR, "verbs": ["create"], "resource": "events", "count": 1})
    recorder.event(pod, NORMAL, "Pulled", "image")  # best effort: the error is swallowed
    assert _events(client) == []
    recorder.event(pod, NORMAL, "Pulled", "image")
    [event] = _events(client)
    # As client-go: the lost attempt was counted when observed; the PATCH found nothing and created it.
    assert event["count"] == 2


def test_the_recorder_remembers_a_bounded_number_of_events(client: InProcessClient) -> None:
    pod = _pod(client)
    recorder = EventRecorder(client, COMPONENT, cache_size=2)
    for message in ("a", "b", "c"):
        recorder.event(pod, NORMAL, "Note", message)
    assert len(recorder._seen) == 2  # noqa: SLF001 - the bound is the point of the test
    recorder.event(pod, NORMAL, "Note", "a")  # forgotten: found stored through AlreadyExists
    assert {e["message"]: e["count"] for e in _events(client)} == {"a": 2, "b": 1, "c": 1}
