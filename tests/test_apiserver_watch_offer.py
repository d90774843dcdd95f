"""What a watch queues for each committed change: an unfiltered watch (a whole resource, as every
informer watches) takes each change as it is, a filtered one follows selector transitions."""

from __future__ import annotations

from typing import Any

import pytest

from harness.apiserver.watch import Watch
from harness.kube.names.meta import ADDED, DELETED, MODIFIED


def _obj(rv: str, namespace: str = "a", labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "x", "namespace": namespace, "resourceVersion": rv, "labels": labels or {}}}


@pytest.mark.parametrize(("event", "old", "queued"), [
    (ADDED, None, ADDED),
    (MODIFIED, _obj("1"), MODIFIED),
    (MODIFIED, None, ADDED),
    (DELETED, _obj("1"), DELETED),
])
def test_an_unfiltered_watch_queues_each_change(event: str, old: dict[str, Any] | None, queued: str) -> None:
    watch = Watch(namespace=None, matcher=None, api_version="v1")
    new = _obj("2")
    watch.offer(event, new, old)
    assert list(watch.events) == [(queued, new)] and watch.last_rv == "2"


def test_a_namespace_watch_sees_an_object_leave_and_others_not_at_all() -> None:
    watch = Watch(namespace="a", matcher=None, api_version="v1")
    watch.offer(MODIFIED, _obj("2", "b"), _obj("1", "b"))
    assert not watch.events
    watch.offer(DELETED, _obj("3", "a"), _obj("2", "a"))
    assert [t for t, _ in watch.events] == [DELETED]


def test_a_selector_watch_turns_transitions_into_added_and_deleted() -> None:
    watch = Watch(namespace=None, matcher=lambda o: o["metadata"]["labels"].get("app") == "web", api_version="v1")
    watch.offer(MODIFIED, _obj("2", labels={"app": "web"}), _obj("1"))
    watch.offer(MODIFIED, _obj("3", labels={"app": "web"}), _obj("2", labels={"app": "web"}))
    watch.offer(MODIFIED, _obj("4"), _obj("3", labels={"app": "web"}))
    assert [t for t, _ in watch.events] == [ADDED, MODIFIED, DELETED]


def test_a_stopped_watch_queues_nothing() -> None:
    watch = Watch(namespace=None, matcher=None)
    watch.stop()
    watch.offer(ADDED, _obj("1"), None)
    assert not watch.events
