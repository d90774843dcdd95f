"""A custom resource's top-level property that structural pruning left as it was (nothing unknown, the
same JSON) is remembered by the JSON of the root schema, the property's name and its own JSON with
Python equality (``decoding._PRUNED_AS_IS``), and taken as it is when it comes again. Randomized:
values drawn from a small pool (unknown fields, preserved fields, embedded resources whose metadata is
decoded, JSON twins ``1``/``1.0``/``true``, values changed in place after a prune) as the same
objects and as copies, under schemas as the same objects, equal copies and ones that differ; every
answer is checked against the walk without the memo (``decoding._prune`` of each property): the same
pruned object (JSON, key order, Python values), the same unknown paths in the same order, the same
DecodeError."""

from __future__ import annotations

import copy
import random
from typing import Any

import orjson
import pytest

from harness.apiserver import decoding

_TWINS: list[Any] = [1, 1.0, True, "1", None, "a"]


def _schema(preserve: bool, with_port: bool) -> dict[str, Any]:
    spec: dict[str, Any] = {"type": "object", "properties": {
        "name": {"type": "string"},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        "map": {"type": "object", "additionalProperties": {"type": "object", "properties": {"a": {}}}},
        "items": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "string"}}}},
        "embedded": {"type": "object", "x-kubernetes-embedded-resource": True,
                     "properties": {"spec": {"type": "object"}}},
    }}
    if with_port:
        spec["properties"]["port"] = {"x-kubernetes-int-or-string": True}
    if preserve:
        spec["x-kubernetes-preserve-unknown-fields"] = True
    return {"type": "object", "properties": {"spec": spec, "status": {"type": "object", "properties": {
        "ready": {"type": "boolean"}, "conditions": {"type": "array", "items": {"type": "object", "properties": {
            "type": {"type": "string"}}}}}}}}


def _schemas() -> list[dict[str, Any]]:
    first = _schema(False, True)
    return [first, copy.deepcopy(first), _schema(True, True), _schema(False, False)]


def _value(rng: random.Random) -> Any:
    choices = {
        "name": lambda: rng.choice(["n", 1]),
        "free": lambda: {"anything": rng.choice(_TWINS)},
        "map": lambda: {"k": rng.choice([{"a": 1}, {"a": 1, "b": 2}, {}])},
        "items": lambda: [rng.choice([{"n": "x"}, {"n": "x", "drop": 1.0}]) for _ in range(rng.randint(0, 2))],
        "embedded": lambda: {"apiVersion": "v1", "kind": "Pod",
                             "metadata": rng.choice([{"name": "p"}, {"name": "p", "junk": 1}, {"name": 5},
                                                     {"labels": {"a": "b"}}]),
                             **rng.choice([{}, {"spec": {}}, {"other": True}])},
        "port": lambda: rng.choice([80, "http"]),
        "extra": lambda: rng.choice(_TWINS),
    }
    if rng.random() < 0.05:
        return rng.choice([[], {}, "spec", [{"name": "x"}]])
    return {name: choices[name]() for name in rng.sample(sorted(choices), rng.randint(0, 4))}


def _walked(obj: dict[str, Any], schema: dict[str, Any]) -> Any:
    """prune_custom without the memo: each property pruned by the walk."""
    unknown: list[str] = []
    out = dict(obj)
    out["metadata"], meta_unknown = decoding.decode_object_meta(out["metadata"], "metadata")
    unknown.extend(meta_unknown)
    for key in list(out):
        if key in ("apiVersion", "kind", "metadata"):
            continue
        sub = decoding._prune_child(schema, key)  # noqa: SLF001 - the walk the memo skips
        if sub is None:
            unknown.append(key)
            del out[key]
        else:
            out[key] = decoding._prune(out[key], sub, key, unknown)  # noqa: SLF001
    return out, unknown


def _outcome(obj: dict[str, Any], schema: dict[str, Any], prune: Any) -> Any:
    try:
        pruned, unknown = prune(obj, schema)
    except decoding.DecodeError as exc:
        return ("error", str(exc))
    return (orjson.dumps(pruned), pruned, unknown)


@pytest.fixture(autouse=True)
def _empty_memo() -> None:
    decoding._PRUNED_AS_IS._entries.clear()  # noqa: SLF001 - each test starts from what it remembers


@pytest.mark.parametrize("seed", range(6))
def test_pruned_as_without_the_memo(seed: int) -> None:
    rng = random.Random(seed)
    schemas = _schemas()
    values = [_value(rng) for _ in range(30)]
    statuses = [{"ready": True}, {"conditions": [{"type": "A"}]}, {"conditions": [{"type": "A", "x": 1}]}, {}]
    remembered = 0
    for _ in range(1500):
        schema = rng.choice(schemas)
        obj: dict[str, Any] = {"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "n"}}
        if rng.random() < 0.95:
            obj["spec"] = rng.choice(values)
        if rng.random() < 0.6:
            obj["status"] = rng.choice(statuses)
        if rng.random() < 0.1:
            obj["unknownRoot"] = {"a": 1}
        if rng.random() < 0.3:
            obj = copy.deepcopy(obj)
        sent = copy.deepcopy(obj)
        expected = _outcome(copy.deepcopy(obj), schema, _walked)
        before = len(decoding._PRUNED_AS_IS._entries)  # noqa: SLF001
        assert _outcome(obj, schema, decoding.prune_custom) == expected
        remembered += len(decoding._PRUNED_AS_IS._entries) > before  # noqa: SLF001
        assert obj == sent and orjson.dumps(obj) == orjson.dumps(sent)  # the body is not changed
        spec = obj.get("spec")
        if isinstance(spec, dict) and rng.random() < 0.1:
            # Changed after it was pruned: a new value (the memo holds its own copy).
            spec[rng.choice(["name", "port", "extra"])] = rng.choice(_TWINS)
    assert remembered > 0


def test_a_remembered_spec_is_not_walked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    schema = _schema(False, True)
    obj = {"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "n"}, "spec": {"name": "n", "port": 80}}
    first = decoding.prune_custom(obj, schema)
    walks: list[str] = []
    real = decoding._prune  # noqa: SLF001

    def counted(value: Any, sub: dict[str, Any], path: str, unknown: list[str]) -> Any:
        walks.append(path)
        return real(value, sub, path, unknown)

    monkeypatch.setattr(decoding, "_prune", counted)
    assert decoding.prune_custom(copy.deepcopy(obj), copy.deepcopy(schema)) == first
    assert walks == []
    # A value with an unknown field is pruned each time (and reported each time).
    dropped = {**obj, "spec": {"name": "n", "junk": 1}}
    for _ in range(2):
        pruned, unknown = decoding.prune_custom(dropped, schema)
        assert pruned["spec"] == {"name": "n"} and unknown == ["spec.junk"]
    assert [path for path in walks if "." not in path] == ["spec", "spec"]
