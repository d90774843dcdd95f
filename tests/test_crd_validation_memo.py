"""A custom resource's top-level property found valid against its schema is remembered by the JSON of
the root schema, the property's name and the property's JSON with Python equality
(``crd._VALID_PROPERTIES``): a spec written again is not walked again. Randomized: values drawn from a
small pool, so they come back as the same objects, equal copies, JSON twins (``1``, ``1.0``,
``true``) that Python finds equal, values changed in place after they were validated, under schemas
that differ only in a type or an enum, as the same objects and as equal copies; every answer is checked
against the walk without the memo (``crd._check`` of each property), errors and their order included."""

from __future__ import annotations

import copy
import random
from typing import Any

import orjson
import pytest

from harness.apiserver import crd
from harness.kube import errors
from harness.kube.errors import FieldError

_TWINS: list[Any] = [1, 1.0, True, "1", None, 0, False, 0.0, 2.5, "a", "b"]


_VALID: dict[str, list[Any]] = {
    "name": ["n", "m"], "count": [1, 2], "mode": ["A", "B"], "tags": [["x"], []], "limits": [{"cpu": 1}],
    "port": [80, "http"], "maybe": [None, "x"], "extra": [1, {}], "replicas": [3, 1],
    "strategy": [{"kind": "R"}, {}, {"surge": 1}],
}


def _schema(count_type: str, modes: list[Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["spec"],
        "properties": {
            "spec": {
                "type": "object",
                "required": ["name"],
                "properties": {
                    "name": {"type": "string"},
                    "count": {"type": count_type},
                    "mode": {"type": "string", "enum": modes},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "limits": {"type": "object", "additionalProperties": {"type": "integer"}},
                    "port": {"x-kubernetes-int-or-string": True},
                    "maybe": {"type": "string", "nullable": True},
                    "replicas": {"type": "integer", "default": 1},
                    "strategy": {"type": "object", "default": {"kind": "Rolling"},
                                 "properties": {"kind": {"type": "string"},
                                                "surge": {"type": "integer", "default": 2}}},
                },
            },
            "status": {
                "type": "object",
                "properties": {"ready": {"type": "boolean"}, "replicas": {"type": "integer"}},
            },
        },
    }


def _schemas() -> list[dict[str, Any]]:
    first = _schema("integer", ["A", "B"])
    return [first, copy.deepcopy(first), _schema("number", ["A", "B"]), _schema("integer", ["A"]),
            _schema("boolean", ["A", "B"])]


def _spec(rng: random.Random) -> Any:
    if rng.random() < 0.05:
        return rng.choice([None, [], {}, "spec", [{"name": "x"}]])
    spec: dict[str, Any] = {}
    names = ["name", "count", "mode", "tags", "limits", "port", "maybe", "extra", "replicas", "strategy"]
    for name in rng.sample(names, rng.randint(0, 6)):
        if rng.random() < 0.7:
            # Mostly values of the right type, so that many specs are valid and remembered.
            spec[name] = rng.choice(_VALID[name])
        elif name == "mode":
            spec[name] = rng.choice(["A", "B", "C", 1])
        elif name == "tags":
            spec[name] = [rng.choice(_TWINS) for _ in range(rng.randint(0, 2))]
        elif name == "strategy":
            spec[name] = rng.choice([None, {}, {"kind": "Recreate"}, {"surge": None}, {"kind": "R", "surge": 2}])
        elif name == "limits":
            spec[name] = {rng.choice(["cpu", "mem"]): rng.choice(_TWINS)}
        else:
            spec[name] = rng.choice(_TWINS)
    return spec


def _status(rng: random.Random) -> Any:
    return {name: rng.choice(_TWINS) for name in rng.sample(["ready", "replicas", "other"], rng.randint(0, 2))}


def _walked(obj: dict[str, Any], schema: dict[str, Any]) -> list[FieldError]:
    """The validation without the memo: the same required check and a walk of every property."""
    errs: list[FieldError] = []
    for key in sorted(schema.get("required") or []):
        if key not in obj:
            errs.append(errors.required(key))
    for key, sub in sorted(schema["properties"].items()):
        if key in obj:
            crd._check(obj[key], sub, key, errs)  # noqa: SLF001 - the walk the memo skips
    return errs


@pytest.fixture(autouse=True)
def _empty_memo() -> None:
    crd._VALID_PROPERTIES._entries.clear()  # noqa: SLF001 - each test starts from what it remembers
    crd._SETTLED_PROPERTIES._entries.clear()  # noqa: SLF001


@pytest.mark.parametrize("seed", range(6))
def test_remembered_answers_match_the_walk(seed: int) -> None:
    rng = random.Random(seed)
    schemas = _schemas()
    specs = [_spec(rng) for _ in range(40)]
    statuses = [_status(rng) for _ in range(12)]
    remembered = 0
    for _ in range(1500):
        schema = rng.choice(schemas)
        spec = rng.choice(specs)
        if rng.random() < 0.3:
            spec = copy.deepcopy(spec)
        obj: dict[str, Any] = {"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "n"}}
        if rng.random() < 0.95:
            obj["spec"] = spec
        if rng.random() < 0.7:
            obj["status"] = rng.choice(statuses)
        before = len(crd._VALID_PROPERTIES._entries)  # noqa: SLF001
        assert crd.validate_against_schema(obj, schema) == _walked(obj, schema)
        remembered += len(crd._VALID_PROPERTIES._entries) > before  # noqa: SLF001
        if isinstance(spec, dict) and rng.random() < 0.1:
            # A value changed after it was found valid is a new value: the memo holds its own copy.
            spec[rng.choice(["count", "mode", "name"])] = rng.choice(_TWINS + ["C"])
    assert remembered > 0


def test_a_remembered_spec_is_answered_without_a_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    schema = _schema("integer", ["A", "B"])
    obj = {"spec": {"name": "n", "count": 3, "mode": "A"}, "status": {"ready": True}}
    assert crd.validate_against_schema(obj, schema) == []
    walks: list[str] = []
    real = crd._check  # noqa: SLF001

    def counted(value: Any, sub: dict[str, Any], path: str, errs: list[FieldError]) -> None:
        walks.append(path)
        real(value, sub, path, errs)

    monkeypatch.setattr(crd, "_check", counted)
    assert crd.validate_against_schema(copy.deepcopy(obj), copy.deepcopy(schema)) == []
    assert walks == []
    # JSON twins Python finds equal are not the same value: 3.0 for an integer is walked again.
    assert crd.validate_against_schema({"spec": {"name": "n", "count": 3.0, "mode": "A"}}, schema) == []
    assert walks[0] == "spec"


def test_an_invalid_property_is_not_remembered() -> None:
    schema = _schema("integer", ["A", "B"])
    obj = {"spec": {"name": "n", "mode": "C"}}
    first = crd.validate_against_schema(obj, schema)
    assert [e.field for e in first] == ["spec.mode"]
    assert crd.validate_against_schema(obj, schema) == first


def test_a_schema_that_is_not_plain_json_is_walked_each_time() -> None:
    schema = _schema("integer", ["A", "B"])
    schema["properties"]["spec"]["x-odd"] = {1: "non-string key"}
    obj = {"spec": {"name": "n", "count": "three"}}
    assert [e.field for e in crd.validate_against_schema(obj, schema)] == ["spec.count"]
    assert crd.validate_against_schema({"spec": {"name": "n"}}, schema) == []
    assert crd._VALID_PROPERTIES._entries == {}  # noqa: SLF001


@pytest.mark.parametrize("seed", range(6))
def test_defaulted_and_validated_as_without_the_memo(seed: int) -> None:
    """default_and_validate against apply_defaults and the walk: the same object afterwards (JSON, key
    order and Python values) and the same errors, for values written again as they were stored (the
    defaulted object) and as they were sent."""
    rng = random.Random(seed)
    schemas = _schemas()
    specs = [_spec(rng) for _ in range(40)]
    statuses = [_status(rng) for _ in range(12)]
    settled = 0
    for _ in range(1500):
        schema = rng.choice(schemas)
        obj: dict[str, Any] = {"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "n"}}
        if rng.random() < 0.95:
            obj["spec"] = rng.choice(specs)
        if rng.random() < 0.7:
            obj["status"] = rng.choice(statuses)
        if rng.random() < 0.7:
            obj = copy.deepcopy(obj)  # otherwise the pool's spec is defaulted in place, as stored
        expected = copy.deepcopy(obj)
        crd.apply_defaults(expected, schema)
        expected_errors = _walked(expected, schema)
        before = len(crd._SETTLED_PROPERTIES._entries)  # noqa: SLF001
        got_errors = crd.default_and_validate(obj, schema)
        settled += len(crd._SETTLED_PROPERTIES._entries) > before  # noqa: SLF001
        assert got_errors == expected_errors
        assert obj == expected
        assert orjson.dumps(obj) == orjson.dumps(expected)
        if rng.random() < 0.5 and isinstance(obj.get("spec"), dict):
            # Written again as stored: the defaulted spec takes the place of the one sent.
            specs[rng.randrange(len(specs))] = obj["spec"]
        if isinstance(obj.get("spec"), dict) and rng.random() < 0.1:
            obj["spec"][rng.choice(["count", "mode", "name", "replicas"])] = rng.choice(_TWINS + ["C"])
    assert settled > 0


def test_a_settled_spec_is_neither_defaulted_nor_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    schema = _schema("integer", ["A", "B"])
    sent = {"spec": {"name": "n", "mode": "A"}}
    assert crd.default_and_validate(sent, schema) == []
    assert sent["spec"] == {"name": "n", "mode": "A", "replicas": 1, "strategy": {"kind": "Rolling", "surge": 2}}
    # Defaulting changed the sent spec: it is not remembered; the stored (defaulted) one is, once seen.
    assert crd._SETTLED_PROPERTIES._entries == {}  # noqa: SLF001
    assert crd.default_and_validate(copy.deepcopy(sent), schema) == []
    assert len(crd._SETTLED_PROPERTIES._entries) == 1  # noqa: SLF001
    walks: list[str] = []
    real_check, real_default = crd._check, crd._default_property  # noqa: SLF001

    def counted_check(value: Any, sub: dict[str, Any], path: str, errs: list[FieldError]) -> None:
        walks.append(path)
        real_check(value, sub, path, errs)

    def counted_default(container: dict[str, Any], key: str, sub: dict[str, Any]) -> None:
        walks.append("default " + key)
        real_default(container, key, sub)

    monkeypatch.setattr(crd, "_check", counted_check)
    monkeypatch.setattr(crd, "_default_property", counted_default)
    again = copy.deepcopy(sent)
    assert crd.default_and_validate(again, schema) == []
    assert again == sent
    assert walks == ["default status"]
