"""A write makes the new version of a stored object without changing the old one (watches, the
audit trail and readers may still hold it), and every answer is the caller's own copy."""

from __future__ import annotations

from typing import Any

from harness.apiserver import builtins
from harness.apiserver.server import APIServer
from harness.clock import VirtualClock
from harness.kube.objects import clone


def _pod(name: str, finalizers: list[str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {"app": "a"}}
    if finalizers:
        meta["finalizers"] = finalizers
    return {"metadata": meta, "spec": {"nodeName": "n", "containers": [{"name": "c", "image": "i"}]}}


def test_a_graceful_delete_leaves_the_version_it_replaces_as_it_was() -> None:
    server = APIServer("c", VirtualClock())
    server.create(builtins.POD, "default", _pod("p", ["example.com/hold"]))
    before = server.stored_view(builtins.POD, "default", "p")
    snapshot = clone(before)
    code, answer = server.delete(builtins.POD, "default", "p", {"gracePeriodSeconds": 30})
    assert code == 200 and answer["metadata"]["deletionGracePeriodSeconds"] == 30
    assert before == snapshot  # the old version (still in the watch history) is unchanged
    answer["metadata"]["finalizers"].append("x")
    answer["spec"]["containers"][0]["image"] = "changed"
    stored = server.get(builtins.POD, "default", "p")
    assert stored["metadata"]["finalizers"] == ["example.com/hold"]
    assert stored["spec"]["containers"][0]["image"] == "i"
    # Deleting again with a shorter grace period, then removing the finalizer, leave each version alone.
    marked = server.stored_view(builtins.POD, "default", "p")
    marked_snapshot = clone(marked)
    server.delete(builtins.POD, "default", "p", {"gracePeriodSeconds": 5})
    assert marked == marked_snapshot


def test_a_dry_run_delete_answers_a_copy() -> None:
    server = APIServer("c", VirtualClock())
    server.create(builtins.POD, "default", _pod("p"))
    _code, answer = server.delete(builtins.POD, "default", "p", {"gracePeriodSeconds": 30, "dryRun": ["All"]})
    answer["spec"]["containers"][0]["image"] = "changed"
    answer["metadata"]["labels"]["app"] = "changed"
    stored = server.get(builtins.POD, "default", "p")
    assert stored["spec"]["containers"][0]["image"] == "i" and stored["metadata"]["labels"] == {"app": "a"}
    assert "deletionTimestamp" not in stored["metadata"]


def test_a_namespace_marked_terminating_leaves_its_old_status_alone() -> None:
    server = APIServer("c", VirtualClock())
    server.create(builtins.NAMESPACE, None, {"metadata": {"name": "ns"}})
    before = server.stored_view(builtins.NAMESPACE, None, "ns")
    snapshot = clone(before)
    _code, answer = server.delete(builtins.NAMESPACE, None, "ns")
    assert answer["status"]["phase"] == "Terminating"
    assert before == snapshot
