"""harness.kube.objects: copies of JSON-shaped objects."""

from __future__ import annotations

from harness.kube.objects import JsonMemo, clone, replacement, same_json


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


def test_a_json_memo_answers_only_for_the_same_json_that_python_finds_equal() -> None:
    memo = JsonMemo(2)
    key, found = memo.find("labels", {"a": 1})
    assert found is None
    memo.remember(key, {"a": 1}, "answer")
    assert memo.find("labels", {"a": 1})[1] == "answer"
    assert memo.find("labels", {"a": 1.0})[1] is None  # 1.0 prints differently
    assert memo.find("labels", {"a": True})[1] is None
    assert memo.find("other", {"a": 1})[1] is None  # another tag
    assert memo.find("labels", {1: 1}) == (None, None)  # not plain JSON: never remembered


def test_a_json_memo_keeps_its_own_copy_and_forgets_all_when_full() -> None:
    memo = JsonMemo(1)
    value = {"a": [1]}
    key, _ = memo.find("t", value)
    memo.remember(key, value, True)
    value["a"].append(2)  # the caller's later change does not reach the memo
    assert memo.find("t", {"a": [1]})[1] is True
    key, _ = memo.find("t", {"b": 1})
    memo.remember(key, {"b": 1}, True)
    assert memo.find("t", {"a": [1]})[1] is None and memo.find("t", {"b": 1})[1] is True


def test_a_replacement_owns_only_the_fields_named_one_level_down() -> None:
    stored = {"metadata": {"name": "p", "labels": {"a": "b"}}, "spec": {"x": [1]}}
    new = replacement(stored, "metadata", "status")
    new["metadata"]["name"] = "q"
    new["status"]["phase"] = "Running"
    assert stored == {"metadata": {"name": "p", "labels": {"a": "b"}}, "spec": {"x": [1]}}
    assert new["spec"] is stored["spec"] and new["metadata"]["labels"] is stored["metadata"]["labels"]
