"""Typed decoding with its shortcuts (leaves taken in the struct's loop, lists of strings copied whole,
empty containers, the PodSpec and conditions memos) answers what the plain walk of
tests/decoding_reference.py answers: the same value (types, key order and all), the same unknown
field paths in the same order, or the same Go error, for random objects of every built-in kind of
1.32, for mutations of them, and again once they are remembered."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from harness.apiserver import decoding, schemas
from harness.apiserver.decoding import (
    _ANY,
    _ARRAY,
    _BOOLEAN,
    _INT_OR_STRING,
    _INTEGER,
    _MAP,
    _NUMBER,
    _QUANTITY,
    _STRING,
    _STRUCT,
    _TIME,
    DecodeError,
    _definition,
    _Node,
)
from tests import decoding_reference as reference

KINDS = sorted(schemas._by_gvk().items())
ODD = [None, 5, 1.0, 2.5, True, "x", [], {}, [1], {"k": "v"}, (1,), 2**40]
GOOD: dict[int, list[Any]] = {
    _STRING: ["a", "", "web-0", "2026-01-01T00:00:00Z"],
    _INTEGER: [0, 1, 30, -1, 2**31 - 1],
    _NUMBER: [0, 1.5, 3],
    _BOOLEAN: [True, False],
    _QUANTITY: ["100m", "1Gi", 1, " 2 "],
    _TIME: ["2026-01-01T00:00:00Z", "2026-01-01T00:00:00.5+01:00"],
    _INT_OR_STRING: [1, "50%", "a"],
    _ANY: [{"x": [1, {"y": None}]}, "s", 1, [True, 2.0]],
}
# Values of the right JSON type that the Go type still refuses (a range, a pattern).
BAD: dict[int, list[Any]] = {_INTEGER: [2**31, 2**63], _QUANTITY: ["bogus"], _TIME: ["yesterday"],
                             _INT_OR_STRING: [1.5, 2**40]}


def _value(node: _Node, rng: random.Random, depth: int) -> Any:  # noqa: PLR0911 - one case per shape
    if rng.random() < 0.01:
        return rng.choice(ODD)
    shape = node.shape
    if shape == _STRUCT:
        if depth > 5:
            return {}
        keys = sorted(node.properties)
        out = {key: _value(node.properties[key], rng, depth + 1) for key in rng.sample(keys, min(len(keys), 4))}
        if rng.random() < 0.05:
            out[f"bogus{rng.randrange(3)}"] = 1
        return out
    if shape == _ARRAY:
        return [] if depth > 5 else [_value(node.item, rng, depth + 1) for _ in range(rng.randrange(3))]
    if shape == _MAP:
        return {} if depth > 5 else {f"k{i}": _value(node.item, rng, depth + 1) for i in range(rng.randrange(3))}
    if shape in BAD and rng.random() < 0.02:
        return rng.choice(BAD[shape])
    return rng.choice(GOOD[shape])


def _mutated(value: Any, rng: random.Random) -> Any:
    """A copy of ``value`` with one value somewhere replaced by an odd one."""
    out = json.loads(json.dumps(value))
    holders = []
    stack = [out]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            holders.extend((item, key) for key in item)
            stack.extend(item.values())
        elif isinstance(item, list):
            holders.extend((item, i) for i in range(len(item)))
            stack.extend(item)
    if holders:
        holder, key = rng.choice(holders)
        holder[key] = rng.choice(ODD)
    return out


def _twin(value: Any, rng: random.Random) -> Any:
    """A copy of ``value`` with one list somewhere turned into a tuple: the same JSON, not the same value."""
    out = json.loads(json.dumps(value))
    holders = []
    stack = [out]
    while stack:
        item = stack.pop()
        children = list(item.items()) if isinstance(item, dict) else list(enumerate(item))
        for key, child in children:
            if isinstance(child, (dict, list)):
                stack.append(child)
            if isinstance(child, list):
                holders.append((item, key))
    if holders:
        holder, key = rng.choice(holders)
        holder[key] = tuple(holder[key])
    return out


def _answer(decode: Any, api_version: str, kind: str, obj: Any) -> tuple[str, Any]:
    try:
        value, unknown = decode(api_version, kind, obj)
    except DecodeError as exc:
        return "error", str(exc)
    # repr tells 1 from 1.0 from True, a tuple from a list, and shows the key order.
    return "value", (repr(value), unknown)


def _containers(value: Any) -> set[int]:
    if isinstance(value, dict):
        return {id(value)}.union(*(_containers(item) for item in value.values()))
    if isinstance(value, list):
        return {id(value)}.union(*(_containers(item) for item in value))
    return set()


@pytest.mark.parametrize("seed", range(3))
def test_decoding_answers_as_the_plain_walk_for_every_built_in_kind(seed: int) -> None:
    rng = random.Random(seed)
    for (api_version, kind), name in KINDS:
        node = _definition(name)
        for _ in range(6):
            obj = _value(node, rng, 0)
            if not isinstance(obj, dict):
                continue
            obj.update(apiVersion=api_version, kind=kind)
            for body in (obj, json.loads(json.dumps(obj)), _mutated(obj, rng), obj):
                want = _answer(reference.decode_builtin, api_version, kind, body)
                assert _answer(decoding.decode_builtin, api_version, kind, body) == want, (kind, body)
            if want[0] == "value":  # (the last body is obj)
                result = decoding.decode_builtin(api_version, kind, obj)
                assert result is not None
                assert not _containers(result[0]) & _containers(obj), kind


def _pod_status(conditions: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "status": {"conditions": conditions, "containerStatuses": [
        {"name": "c", "lastState": {}, "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}]}}


@pytest.mark.parametrize("seed", range(2))
def test_remembered_pod_specs_and_conditions_answer_as_the_plain_walk(seed: int) -> None:
    # The memos see the same values again and again, and values that differ from a remembered one
    # only in a type (1 and 1.0, a list and a tuple) or in one odd value.
    rng = random.Random(seed)
    spec_node = _definition("io.k8s.api.core.v1.PodSpec")
    condition_node = _definition("io.k8s.api.core.v1.PodCondition")
    specs = [_value(spec_node, rng, 0) for _ in range(5)]
    conditions = [[_value(condition_node, rng, 1) for _ in range(rng.randrange(1, 4))] for _ in range(5)]
    for _ in range(300):
        body = _pod_status(rng.choice(conditions))
        body["spec"] = rng.choice(specs)
        roll = rng.random()
        if roll < 0.3:
            body = _mutated(body, rng)
        elif roll < 0.5:
            body = _twin(body, rng)
        want = _answer(reference.decode_builtin, "v1", "Pod", body)
        assert _answer(decoding.decode_builtin, "v1", "Pod", body) == want, body
