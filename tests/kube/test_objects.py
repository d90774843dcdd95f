"""harness.kube.objects: copies of JSON-shaped objects."""

from __future__ import annotations

from harness.kube.objects import clone, same_json


def test_clone_copies_nested_dicts_and_lists_so_edits_do_not_reach_the_original() -> None:
    original = {"metadata": {"labels": {"a": "1"}}, "spec": {"containers": [{"name": "c", "ports": [80]}]}}
    copy = clone(original)
    copy["metadata"]["labels"]["a"] = "2"
    copy["spec"]["containers"][0]["ports"].append(443)
    assert original == {"metadata": {"labels": {"a": "1"}}, "spec": {"containers": [{"name": "c", "ports": [80]}]}}
    assert copy["metadata"]["labels"] == {"a": "2"}


def test_clone_returns_scalars_as_they_are() -> None:
    assert [clone(v) for v in ("x", 1, 1.5, None, True)] == ["x", 1, 1.5, None, True]


def test_same_json_tells_apart_what_python_takes_for_equal() -> None:
    assert same_json({"a": [1, "x"], "b": {"c": None}}, {"b": {"c": None}, "a": [1, "x"]})  # key order aside
    assert not same_json({"replicas": 1}, {"replicas": 1.0})
    assert not same_json([True], [1])
    assert not same_json({"a": 1}, {"a": 2})
    assert not same_json({1: "x"}, {1: "x"})  # not JSON: never the same


def test_same_json_of_one_value_with_itself() -> None:
    stored = {"spec": {"replicas": 1, "template": {"x": [1.5, None]}}}
    assert same_json(stored, stored)
    assert not same_json(float("nan"), float("nan"))
    nan = float("nan")
    assert not same_json(nan, nan)
    big = [2**70]
    assert not same_json(big, big)  # not JSON a Go client could decode as the same number
    keyed = {1: "a"}
    assert not same_json(keyed, keyed)
