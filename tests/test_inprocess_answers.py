"""In-process writes that want no answer (``answer=False``): the caller discards the written object, so
the server copies none for it; the write itself (object, resourceVersion, audit, watch events, errors)
is the one the same call with an answer makes."""

from __future__ import annotations

from typing import Any

import pytest

from harness.client import InProcessClient
from harness.client.cache import CachedClient
from harness.client.http import HttpClient
from harness.client.interface import answers_optional, shared_reads, unanswered, update_status_unless_gone
from harness.kube.errors import StatusError
from harness.world.world import World

_VOLATILE = ("name", "uid", "resourceVersion")


def _client() -> tuple[World, InProcessClient]:
    world = World()
    return world, InProcessClient(world.clusters, world.management.name)


def _pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}]}]}}


def _without_identity(obj: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in obj["metadata"].items() if k not in _VOLATILE}
    return {**obj, "metadata": meta}


def test_a_create_that_wants_no_answer_returns_none_and_stores_the_same_object() -> None:
    world, client = _client()
    answered = client.create(_pod("a"))
    assert client.create(_pod("b"), answer=False) is None
    stored_b = client.get("v1", "Pod", "b", "default")
    assert answered is not None
    assert _without_identity(stored_b) == _without_identity(answered)
    assert int(stored_b["metadata"]["resourceVersion"]) == int(answered["metadata"]["resourceVersion"]) + 1
    creates = [r for r in world.audit if r.verb == "create" and r.resource == "pods"]
    assert [r.name for r in creates] == ["a", "b"]


def test_a_status_write_that_wants_no_answer_writes_and_notifies_as_an_answered_one() -> None:
    _world, client = _client()
    client.create(_pod("a"))
    client.create(_pod("b"))
    watch = client.watch("v1", "Pod", "default", resource_version=client.get("v1", "Pod", "b", "default")
                         ["metadata"]["resourceVersion"])
    results = []
    for name, answer in (("a", True), ("b", False)):
        pod = client.get("v1", "Pod", name, "default")
        pod["status"] = {"phase": "Running", "podIP": "10.0.0.1", "conditions": [
            {"type": "Ready", "status": "True", "lastProbeTime": None, "lastTransitionTime": "2024-01-01T00:00:00Z"}]}
        results.append(client.update_status(pod, answer=answer))
    assert results[0] is not None and results[1] is None
    stored_b = client.get("v1", "Pod", "b", "default")
    assert _without_identity(stored_b) == _without_identity(results[0])
    events = watch.drain()
    assert [(t, o["metadata"]["name"]) for t, o in events] == [("MODIFIED", "a"), ("MODIFIED", "b")]
    assert events[1][1] == stored_b


def test_a_write_that_wants_no_answer_fails_as_an_answered_one() -> None:
    _world, client = _client()
    client.create(_pod("a"))
    stale = client.get("v1", "Pod", "a", "default")
    client.update_status({**stale, "status": {"phase": "Running"}}, answer=False)
    with pytest.raises(StatusError) as conflict:
        client.update_status({**stale, "status": {"phase": "Failed"}}, answer=False)
    assert conflict.value.code == 409
    with pytest.raises(StatusError) as missing:
        client.update({**_pod("gone"), "metadata": {"name": "gone", "namespace": "default"}}, answer=False)
    assert missing.value.code == 404
    with pytest.raises(StatusError) as invalid:
        client.create({**_pod("x"), "spec": {"containers": []}}, answer=False)
    assert invalid.value.code == 422
    assert client.get("v1", "Pod", "a", "default")["status"]["phase"] == "Running"


def test_update_status_unless_gone_without_an_answer_writes_and_tolerates_a_deleted_object() -> None:
    _world, client = _client()
    pod = client.create(_pod("a"))
    assert pod is not None
    assert update_status_unless_gone(client, pod, {"phase": "Running"}, answer=False) is None
    assert client.get("v1", "Pod", "a", "default")["status"]["phase"] == "Running"
    client.delete("v1", "Pod", "a", "default", grace_period_seconds=0)
    assert update_status_unless_gone(client, pod, {"phase": "Failed"}, answer=False) is None


def test_only_a_client_that_can_skip_answers_is_told_to() -> None:
    _world, client = _client()
    assert answers_optional(client) and unanswered(client) == {"answer": False}
    assert not answers_optional(HttpClient) and unanswered(HttpClient) == {}  # type: ignore[arg-type]



def test_a_delete_that_wants_no_answer_deletes_as_an_answered_one() -> None:
    world, client = _client()
    for name in ("a", "b"):
        pod = _pod(name)
        pod["metadata"]["finalizers"] = ["example.com/hold"]
        client.create(pod)
    answered = client.delete("v1", "Pod", "a", "default")
    assert client.delete("v1", "Pod", "b", "default", answer=False) is None
    assert answered is not None and "deletionTimestamp" in answered["metadata"]
    stored_b = client.get("v1", "Pod", "b", "default")
    assert _without_identity(stored_b) == _without_identity(answered)
    with pytest.raises(StatusError) as conflict:
        client.delete("v1", "Pod", "b", "default", preconditions={"uid": "other"}, answer=False)
    assert conflict.value.code == 409
    deletes = [r.name for r in world.audit if r.verb == "delete" and r.resource == "pods"]
    assert deletes == ["a", "b"]


def test_a_shared_read_answers_what_a_copying_read_answers() -> None:
    _world, client = _client()
    client.create(_pod("a"))
    client.create(_pod("b"))
    assert client.list("v1", "Pod", "default", shared=True) == client.list("v1", "Pod", "default")
    assert client.list("v1", "Pod", "default", label_selector="a=b", shared=True) == client.list(
        "v1", "Pod", "default", label_selector="a=b")
    assert client.get("v1", "Pod", "a", "default", shared=True) == client.get("v1", "Pod", "a", "default")


def test_a_copying_read_can_be_changed_and_a_later_shared_read_still_answers_the_stored_object() -> None:
    _world, client = _client()
    client.create(_pod("a"))
    copied = client.list("v1", "Pod", "default")["items"][0]
    copied["spec"]["containers"][0]["image"] = "changed"
    copied["metadata"]["labels"]["a"] = "changed"
    shared = client.list("v1", "Pod", "default", shared=True)["items"][0]
    assert shared["spec"]["containers"][0]["image"] == "i"
    assert shared["metadata"]["labels"] == {"a": "b"}


def test_a_shared_read_is_a_snapshot_that_later_writes_do_not_change() -> None:
    _world, client = _client()
    client.create(_pod("a"))
    before = client.get("v1", "Pod", "a", "default", shared=True)
    pod = client.get("v1", "Pod", "a", "default")
    pod["metadata"]["labels"]["a"] = "c"
    client.update(pod)
    assert before["metadata"]["labels"] == {"a": "b"}
    assert client.get("v1", "Pod", "a", "default", shared=True)["metadata"]["labels"] == {"a": "c"}


def test_only_a_client_that_shares_reads_is_told_to() -> None:
    _world, client = _client()
    assert shared_reads(client) == {"shared": True}
    assert shared_reads(HttpClient("http://127.0.0.1:1")) == {}


def test_a_read_cache_in_front_of_an_in_process_client_is_told_neither() -> None:
    # CachedClient passes unknown attributes through to the client it wraps; its own get takes no ``shared``.
    _world, client = _client()
    cached = CachedClient(client)
    assert shared_reads(cached) == {} and unanswered(cached) == {}


def test_a_shared_create_answers_the_stored_object_as_an_answered_create_does() -> None:
    world, client = _client()
    answered = client.create(_pod("a"))
    shared = client.create(_pod("b"), shared=True)
    assert answered is not None and shared is not None
    assert _without_identity(shared) == _without_identity(answered)
    assert shared == client.get("v1", "Pod", "b", "default")
    assert [r.name for r in world.audit if r.verb == "create" and r.resource == "pods"] == ["a", "b"]
    answered["spec"]["containers"][0]["image"] = "changed"  # an answered create is the caller's own copy
    assert client.get("v1", "Pod", "a", "default")["spec"]["containers"][0]["image"] == "i"


def test_a_shared_discovery_is_the_copying_one_and_stays_the_same_list_until_the_served_kinds_change() -> None:
    world, client = _client()
    shared = client.discover(shared=True)
    assert shared == client.discover()
    assert client.discover(shared=True) is shared  # nothing served changed: the very same answer
    copy = client.discover()
    copy[0]["verbs"].append("changed")  # a copying discovery is the caller's own
    assert "changed" not in client.discover(shared=True)[0]["verbs"]
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": {"type": "object"}}}]}}
    client.create(crd)
    world.settle()
    after = client.discover(shared=True)
    assert after is not shared and after == client.discover()
    assert any(entry["kind"] == "Widget" for entry in after)
    assert not any(entry["kind"] == "Widget" for entry in shared)  # the earlier answer is not changed under its holder
    # The garbage collector, which compares the shared answer by identity, watches the new kind.
    gc = world.simulator("garbage-collector")
    assert any(key[1:3] == ("example.com/v1", "Widget") for key in gc._watch_keys)
