"""The comparison of two associative lists or sets of a built-in kind is remembered by the two lists'
JSON and Python equality (``fieldsets._LIST_COMPARISONS``): a pair seen before (a kubelet's
conditions, a budget's) is answered without walking it again. Randomized: lists drawn from a small
pool, so pairs come back as the same objects, equal copies, and JSON twins (``1``, ``1.0``, ``true``)
that Python finds equal, repeated keys; every answer is checked against the same comparison made
without the memo (the walk it replaces), key order included."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from harness.apiserver import fieldsets as fs

_SHAPES = [fs.BuiltinShapes("Pod"), fs.BuiltinShapes("PodDisruptionBudget"), fs.BuiltinShapes("Deployment")]
# List paths of each shape: associative by type, by ip, by name; a set (finalizers).
_LISTS = [("status", "conditions"), ("status", "podIPs"), ("spec", "containers"), ("metadata", "finalizers")]
_TWINS: list[Any] = [1, 1.0, True, "1", None, 0, False, 0.0]


def _item(rng: random.Random, path: tuple[str, str]) -> Any:
    if path == ("metadata", "finalizers"):
        return rng.choice(["a", "b", "example.com/c", 1, 1.0, True])
    key = {"conditions": "type", "podIPs": "ip", "containers": "name"}[path[1]]
    item: dict[str, Any] = {key: rng.choice(["A", "B", "C", 1])}
    for name in rng.sample(["status", "reason", "x", "lastProbeTime", "nested"], rng.randint(0, 3)):
        if name == "nested":
            item[name] = rng.choice([{"a": rng.choice(_TWINS)}, [rng.choice(_TWINS)], {}, []])
        else:
            item[name] = rng.choice(_TWINS)
    return item


def _list(rng: random.Random, path: tuple[str, str]) -> list[Any]:
    return [_item(rng, path) for _ in range(rng.randint(0, 4))]


def _twin(value: Any, rng: random.Random) -> Any:
    """An equal copy of ``value``, sometimes with a scalar swapped for one Python finds equal and
    JSON does not (``1``/``1.0``/``true``, ``0``/``0.0``/``false``)."""
    if isinstance(value, dict):
        return {k: _twin(v, rng) for k, v in value.items()}
    if isinstance(value, list):
        return [_twin(v, rng) for v in value]
    if rng.random() < 0.3:
        if value == 1 and not isinstance(value, str):
            return rng.choice([1, 1.0, True])
        if value == 0 and not isinstance(value, str) and value is not None:
            return rng.choice([0, 0.0, False])
    return value


# [walks of two lists, comparisons made with the memo]
_CALLS = [0, 0]


class _Forgetful(fs.JsonMemo):
    """A memo that never finds anything: the comparison as it was before the memo."""

    def find(self, tag: Any, value: Any) -> tuple[Any, Any]:
        return None, None


def _walked(old: dict[str, Any], new: dict[str, Any], shapes: fs.Shapes) -> tuple[Any, Any]:
    memo = fs._LIST_COMPARISONS
    fs._LIST_COMPARISONS = _Forgetful(1)
    try:
        return fs.compare_trees(old, new, shapes)
    finally:
        fs._LIST_COMPARISONS = memo


def _check(old: dict[str, Any], new: dict[str, Any], shapes: fs.Shapes) -> None:
    text = json.dumps(old), json.dumps(new)
    changed, removed = fs.compare_trees(old, new, shapes)
    _CALLS[1] += 1
    walks = _CALLS[0]
    walked = _walked(old, new, shapes)
    _CALLS[0] = walks  # (the walk without the memo is not counted)
    assert json.dumps([changed, removed]) == json.dumps(walked), (old, new)
    assert (json.dumps(old), json.dumps(new)) == text  # neither object is edited


@pytest.mark.parametrize("seed", range(12))
def test_remembered_list_comparisons_answer_what_the_walk_answers(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    compare_lists = fs._compare_lists
    _CALLS[:] = [0, 0]

    def counted(*args: Any) -> Any:
        _CALLS[0] += 1
        return compare_lists(*args)

    monkeypatch.setattr(fs, "_compare_lists", counted)
    monkeypatch.setattr(fs, "_LIST_COMPARISONS", fs.JsonMemo(64))  # small: it fills and empties too
    pool = {path: [_list(rng, path) for _ in range(4)] for path in _LISTS}
    for _ in range(400):
        path = rng.choice(_LISTS)
        left, right = rng.choice(pool[path]), rng.choice(pool[path])
        roll = rng.random()
        if roll < 0.3:
            left, right = _twin(left, rng), _twin(right, rng)
        elif roll < 0.4:
            left, right = copy.deepcopy(left), copy.deepcopy(right)
        old = {path[0]: {path[1]: left, "keep": 1}}
        new = {path[0]: {path[1]: right, "keep": 1}}
        for shapes in _SHAPES:
            _check(old, new, shapes)
        if rng.random() < 0.1 and left:
            # A caller changing its list after the comparison changes nothing remembered: the
            # changed list is a new pair, compared as such.
            left.append(copy.deepcopy(left[0]))
            for shapes in _SHAPES:
                _check(old, new, shapes)
    walks, comparisons = _CALLS
    assert 0 < walks < comparisons / 2  # the memo answered most comparisons, and walked others


def test_a_kubelet_status_write_compares_its_conditions_once() -> None:
    shapes = fs.BuiltinShapes("Pod")
    scheduled = {"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                 "lastTransitionTime": "2026-01-01T00:00:00Z"}
    running = [{"type": kind, "status": "True", "lastProbeTime": None, "lastTransitionTime": "2026-01-01T00:00:00Z"}
               for kind in ("Initialized", "Ready", "ContainersReady")] + [scheduled]
    first = fs.compare_trees({"status": {"conditions": [scheduled]}}, {"status": {"conditions": running}}, shapes)
    # Another Pod's write: equal lists, other objects; then the JSON twin of a status value.
    again = fs.compare_trees({"status": {"conditions": copy.deepcopy([scheduled])}},
                             {"status": {"conditions": copy.deepcopy(running)}}, shapes)
    assert json.dumps(again) == json.dumps(first)
    assert again[0]["f:status"]["f:conditions"] is first[0]["f:status"]["f:conditions"]  # remembered
    twin = copy.deepcopy(running)
    twin[0]["status"] = 1  # equal to True in Python, not in JSON
    answer = fs.compare_trees({"status": {"conditions": [{**scheduled, "status": True}]}},
                              {"status": {"conditions": twin}}, shapes)
    expected = fs.compare({"status": {"conditions": [{**scheduled, "status": True}]}},
                          {"status": {"conditions": twin}}, shapes)
    assert json.dumps(answer[0]) == json.dumps(fs.encode(expected.changed))
    assert "f:status" in answer[0]["f:status"]["f:conditions"]['k:{"type":"Initialized"}']
