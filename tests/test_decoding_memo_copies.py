"""A value the decoding memos remember (a PodSpec, a conditions list) is handed out again as a copy
parsed from its JSON, which gives back the very value only for plain JSON: values JSON cannot carry
exactly (NaN and infinities, which it writes as null; subclasses of str, which it writes as str) are
copied as before, container by container. Every answer is checked against the plain walk of
tests/decoding_reference.py by repr (types and key order), and is a private copy."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest

from harness.apiserver import decoding
from tests import decoding_reference as reference


class _Text(str):
    """A str subclass an in-process caller might send (a StrEnum's value, say)."""

    __slots__ = ()


def _spec(limit: Any, image: Any = "registry.example/app:1.0") -> dict[str, Any]:
    return {"containers": [{"name": "app", "image": image, "resources": {"limits": {"cpu": limit}},
                            "env": [{"name": "E", "value": "1"}], "ports": [{"containerPort": 80}]}],
            "terminationGracePeriodSeconds": 30, "restartPolicy": "Always"}


def _body(spec: dict[str, Any], conditions: list[Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "spec": spec, "status": {"conditions": conditions}}


def _containers(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [value, *(c for item in value.values() for c in _containers(item))]
    if isinstance(value, list):
        return [value, *(c for item in value for c in _containers(item))]
    return []


@pytest.mark.parametrize("limit", ["500m", 2, 2.5, -0.0, 1e300, math.inf, -math.inf, math.nan, _Text("1")])
def test_a_remembered_value_is_handed_out_as_the_plain_walk_decodes_it(limit: Any) -> None:
    conditions = [{"type": "Ready", "status": _Text("True") if isinstance(limit, _Text) else "True",
                   "lastProbeTime": None, "lastTransitionTime": "2026-01-01T00:00:00Z"}]
    answers = []
    for _ in range(3):  # the first decodes and remembers; the next ones are handed the remembered value
        body = _body(copy.deepcopy(_spec(limit)), copy.deepcopy(conditions))
        if isinstance(limit, _Text):
            body["spec"]["containers"][0]["image"] = _Text("registry.example/app:1.0")
        want = reference.decode_builtin("v1", "Pod", body)
        got = decoding.decode_builtin("v1", "Pod", body)
        assert got is not None and want is not None
        assert repr(got) == repr(want)
        answers.append(got[0])
    # Each answer is a copy of its own: no container shared with another answer or with a body.
    seen: set[int] = set()
    for answer in answers:
        ids = {id(c) for c in _containers(answer)}
        assert not ids & seen
        seen |= ids


def test_the_copy_is_parsed_from_json_only_when_that_gives_the_value_back() -> None:
    assert decoding._json_copy_source({"a": [1, 1.0, True, None, "x", -0.0]}) is not None
    for odd in ({"a": math.nan}, {"a": math.inf}, [_Text("x")], {"a": {1: "x"}}, [2**64], {"a": (1, 2)}):
        assert decoding._json_copy_source(odd) is None, odd
