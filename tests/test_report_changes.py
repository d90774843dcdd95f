"""The timeline's one line per changed field (harness/targets/report.py ``changes``): objects are walked by
the kit and only lists that differ go to DeepDiff, and the lines are exactly those DeepDiff gives of the
whole objects."""

from __future__ import annotations

import copy
import random
from typing import Any

from harness.targets import report


def _pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-1", "namespace": "default", "resourceVersion": "7", "generation": 1,
                     "labels": {"app": "web", "tier": "front"}, "annotations": {"note": "x"},
                     "managedFields": [{"manager": "kubelet", "operation": "Update"}]},
        "spec": {"nodeName": "node-1",
                 "containers": [{"name": "app", "image": "nginx:1", "ports": [{"containerPort": 80}]},
                                {"name": "side", "image": "envoy:1"}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"},
                                                       {"type": "PodScheduled", "status": "True"}],
                   "restartCount": 0},
    }


def _whole(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    return sorted(report._deepdiff_lines(old, new), key=lambda line: line.lstrip("+-"))


def _mutate(obj: dict[str, Any], rng: random.Random) -> None:
    """One random change somewhere in ``obj``: a value changed, its type changed, a key added or
    removed, a list item added, removed or moved."""
    node: Any = obj
    while True:
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        if not keys:
            break
        key = rng.choice(keys)
        child = node[key]
        if isinstance(child, (dict, list)) and child and rng.random() < 0.7:
            node = child
            continue
        choice = rng.randrange(6)
        if choice == 0:
            node[key] = f"v{rng.randrange(100)}"
        elif choice == 1:
            node[key] = float(child) if isinstance(child, int) and not isinstance(child, bool) else 1
        elif choice == 2 and isinstance(node, dict):
            del node[key]
        elif choice == 3 and isinstance(node, dict):
            node[f"k{rng.randrange(100)}"] = {"nested": rng.randrange(3)}
        elif choice == 4 and isinstance(node, list):
            node.insert(0, node.pop())
        else:
            node[key] = [child, {"name": f"n{rng.randrange(5)}"}]
        break


def test_the_lines_are_those_of_a_diff_of_the_whole_objects() -> None:
    rng = random.Random(20261124)
    for _ in range(400):
        old = _pod()
        new = copy.deepcopy(old)
        for _ in range(rng.randrange(1, 4)):
            _mutate(new, rng)
        got = sorted(report._changed(old, new, ""), key=lambda line: line.lstrip("+-"))
        assert got == _whole(old, new), (old, new)


def test_a_condition_change_is_named_by_its_type() -> None:
    old = _pod()
    new = copy.deepcopy(old)
    new["status"]["conditions"][0]["status"] = "False"
    new["metadata"]["resourceVersion"] = "8"
    assert report.changes(old, new) == ["status.conditions[Ready].status: True → False"]


def test_a_value_of_another_type_is_a_change_even_when_python_finds_it_equal() -> None:
    old = {"spec": {"replicas": 1, "paused": True}}
    new = {"spec": {"replicas": 1.0, "paused": 1}}
    assert report.changes(old, new) == ["spec.paused: true → 1", "spec.replicas: 1 → 1.0"]


def test_only_ignored_fields_changed_is_no_line() -> None:
    old = _pod()
    new = copy.deepcopy(old)
    new["metadata"]["resourceVersion"] = "9"
    new["metadata"]["managedFields"].append({"manager": "kubectl", "operation": "Apply"})
    assert report.changes(old, new) == []
