"""harness.kube.objects: copies of JSON-shaped objects."""

from __future__ import annotations

from harness.kube.objects import clone


def test_clone_copies_nested_dicts_and_lists_so_edits_do_not_reach_the_original() -> None:
    original = {"metadata": {"labels": {"a": "1"}}, "spec": {"containers": [{"name": "c", "ports": [80]}]}}
    copy = clone(original)
    copy["metadata"]["labels"]["a"] = "2"
    copy["spec"]["containers"][0]["ports"].append(443)
    assert original == {"metadata": {"labels": {"a": "1"}}, "spec": {"containers": [{"name": "c", "ports": [80]}]}}
    assert copy["metadata"]["labels"] == {"a": "2"}


def test_clone_returns_scalars_as_they_are() -> None:
    assert [clone(v) for v in ("x", 1, 1.5, None, True)] == ["x", 1, 1.5, None, True]
