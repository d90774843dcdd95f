"""Watches over HTTP: newline-delimited compact JSON, resume, in-stream 410, timeouts,
bookmarks, selector transitions, Tables, and cleanup when the client hangs up."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from test_http_fixtures import TABLE_ACCEPT, Served, eventually, serving

from harness.world.world import World

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


def _seed(world: World) -> None:
    # Two objects, then history compacted: resourceVersions up to now can no longer be resumed.
    client = world.client()
    for name in ("a", "b"):
        client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}})
    world.management.store.compact()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    yield from serving(tmp_path, simulators=[], prepare=_seed)


def _events(response: httpx.Response, count: int) -> list[dict]:
    # One line iterator per response, kept with it: dropping a half-read httpx iterator closes
    # the connection, which the server would rightly take as the client hanging up.
    lines = response.extensions.setdefault("test_lines", response.iter_lines())
    out = []
    while len(out) < count:
        line = next(lines)
        assert line == line.strip() and "\n" not in line
        out.append(json.loads(line))
    return out


def test_watch_streams_one_compact_json_event_per_line(served: Served) -> None:
    with served.http() as http, served.http() as writer:
        current = http.get(CONFIGMAPS).json()["metadata"]["resourceVersion"]
        with http.stream("GET", CONFIGMAPS, params={"watch": "1", "resourceVersion": current}) as response:
            assert response.status_code == 200
            assert response.headers["content-type"] == "application/json"
            writer.post(CONFIGMAPS, json={"metadata": {"name": "c"}}).raise_for_status()
            raw = next(response.iter_raw())
    assert raw.endswith(b"\n") and raw.count(b"\n") == 1 and b": " not in raw
    event = json.loads(raw)
    assert event["type"] == "ADDED" and event["object"]["metadata"]["name"] == "c"


def test_watch_without_resource_version_starts_with_synthetic_added_events(served: Served) -> None:
    with served.http() as http, http.stream("GET", CONFIGMAPS, params={"watch": "true"}) as response:
        events = _events(response, 2)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "a"), ("ADDED", "b")]


def test_watch_resumes_after_an_exact_resource_version(served: Served) -> None:
    with served.http() as http, served.http() as writer:
        first = writer.post(CONFIGMAPS, json={"metadata": {"name": "c"}}).json()
        writer.post(CONFIGMAPS, json={"metadata": {"name": "d"}}).raise_for_status()
        params = {"watch": "1", "resourceVersion": first["metadata"]["resourceVersion"]}
        with http.stream("GET", CONFIGMAPS, params=params) as response:
            events = _events(response, 1)
    assert events[0]["object"]["metadata"]["name"] == "d"


def test_a_compacted_resource_version_is_an_in_stream_410(served: Served) -> None:
    with served.http() as http:
        response = http.get(CONFIGMAPS, params={"watch": "1", "resourceVersion": "1"})
    assert response.status_code == 200
    lines = response.text.splitlines()
    assert len(lines) == 1
    event = json.loads(lines[0])
    assert event["type"] == "ERROR"
    assert event["object"]["kind"] == "Status" and event["object"]["code"] == 410
    assert event["object"]["reason"] == "Expired"


def test_timeout_seconds_ends_the_stream_with_a_bookmark_only_when_allowed(served: Served) -> None:
    current = None
    with served.http() as http:
        current = http.get(CONFIGMAPS).json()["metadata"]["resourceVersion"]
        plain = http.get(CONFIGMAPS, params={"watch": "1", "resourceVersion": current, "timeoutSeconds": "1"})
        bookmarked = http.get(
            CONFIGMAPS,
            params={"watch": "1", "resourceVersion": current, "timeoutSeconds": "1", "allowWatchBookmarks": "true"},
        )
    assert plain.status_code == 200 and plain.text == ""
    events = [json.loads(line) for line in bookmarked.text.splitlines()]
    assert [e["type"] for e in events] == ["BOOKMARK"]
    assert events[0]["object"]["kind"] == "ConfigMap"
    assert events[0]["object"]["metadata"] == {"resourceVersion": current}


def test_field_selector_on_a_watch_turns_transitions_into_added_and_deleted(served: Served) -> None:
    with served.http() as http, served.http() as writer:
        current = http.get(CONFIGMAPS).json()["metadata"]["resourceVersion"]
        params = {"watch": "1", "resourceVersion": current, "labelSelector": "keep=yes"}
        with http.stream("GET", CONFIGMAPS, params=params) as response:
            merge = {"Content-Type": "application/merge-patch+json"}
            writer.patch(f"{CONFIGMAPS}/a", json={"metadata": {"labels": {"keep": "yes"}}}, headers=merge)
            writer.patch(f"{CONFIGMAPS}/b", json={"data": {"x": "y"}}, headers=merge)
            writer.patch(f"{CONFIGMAPS}/a", json={"metadata": {"labels": {"keep": "no"}}}, headers=merge)
            events = _events(response, 2)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "a"), ("DELETED", "a")]


def test_watch_by_name_sees_only_that_object_and_its_deletion(served: Served) -> None:
    with served.http() as http, served.http() as writer:
        current = http.get(CONFIGMAPS).json()["metadata"]["resourceVersion"]
        params = {"watch": "1", "resourceVersion": current, "fieldSelector": "metadata.name=b"}
        with http.stream("GET", CONFIGMAPS, params=params) as response:
            writer.delete(f"{CONFIGMAPS}/a").raise_for_status()
            writer.delete(f"{CONFIGMAPS}/b").raise_for_status()
            events = _events(response, 1)
    assert events[0]["type"] == "DELETED" and events[0]["object"]["metadata"]["name"] == "b"


def test_table_watch_sends_one_row_tables_with_columns_first(served: Served) -> None:
    headers = {"Accept": TABLE_ACCEPT}
    with served.http() as http, http.stream("GET", CONFIGMAPS, params={"watch": "1"}, headers=headers) as response:
        events = _events(response, 2)
    first, second = (e["object"] for e in events)
    assert first["kind"] == second["kind"] == "Table"
    assert [c["name"] for c in first["columnDefinitions"]] == ["Name", "Created At"]
    assert second["columnDefinitions"] is None
    assert [len(first["rows"]), first["rows"][0]["cells"][0]] == [1, "a"]
    assert first["rows"][0]["object"]["kind"] == "PartialObjectMetadata"


def test_a_client_that_hangs_up_leaves_no_watch_behind(served: Served) -> None:
    hub = served.app.state.watches
    with served.http() as http:
        with http.stream("GET", CONFIGMAPS, params={"watch": "1"}) as response:
            _events(response, 1)
            [watch] = list(hub)
            assert not watch.closed
        # Closed watches are detached from the store; the hub forgets them.
        assert eventually(lambda: watch.closed and len(hub) == 0)


def test_shutdown_ends_open_watches(tmp_path: Path) -> None:
    for running in serving(tmp_path / "second", simulators=[], prepare=_seed):
        client = running.http()
        response = client.send(client.build_request("GET", CONFIGMAPS, params={"watch": "1"}), stream=True)
        _events(response, 1)
        running.server.stop(10.0)
        assert not running.server.thread.is_alive()
        response.close()
        client.close()
