"""What a create owns, remembered by the body's outline (harness/apiserver/managedfields.py
``_created_fields``): bodies that differ only in their scalars share one tree, and the tree answered
is always the one a fresh walk builds (``fieldsets.added_fields_v1``), key order included."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from harness.apiserver import builtins
from harness.apiserver import fieldsets as fs
from harness.apiserver import managedfields as mf
from tests.test_managed_fields_equivalence import _object, _scalar

_KINDS = [builtins.POD, builtins.DEPLOYMENT, builtins.EVENT]


def _rescaled(rng: random.Random, value: Any) -> Any:
    """``value`` with the scalars its objects hold drawn afresh (same outline); lists untouched."""
    if isinstance(value, dict):
        return {key: _rescaled(rng, child) if isinstance(child, dict) else
                child if isinstance(child, list) else _scalar(rng) for key, child in value.items()}
    return value


def _fresh(rt: Any, body: dict[str, Any]) -> str:
    return json.dumps(fs.added_fields_v1(body, mf.shapes_for(rt)))


@pytest.mark.parametrize("seed", range(30))
def test_remembered_created_trees_are_the_fresh_ones(seed: int) -> None:
    rng = random.Random(seed)
    mf._CREATED_CACHE.clear()  # noqa: SLF001 - each seed starts from an empty memory
    mf._CREATED_BY_OUTLINE.clear()  # noqa: SLF001
    bodies = [_object(rng) for _ in range(20)]
    # Outline relatives (only scalars differ), mixed with the rest and with repeats.
    bodies += [_rescaled(rng, rng.choice(bodies)) for _ in range(40)] + rng.sample(bodies, 10)
    rng.shuffle(bodies)
    for body in bodies:
        rt = rng.choice(_KINDS)
        assert json.dumps(mf._created_fields(rt, body)) == _fresh(rt, body), body  # noqa: SLF001


@pytest.mark.parametrize(("first", "second"), [
    ({"a": "x"}, {"a": {"b": 1}}),
    ({"spec": {"containers": []}}, {"spec": {"containers": [{"name": "c"}]}}),
    ({"a": None}, {"a": {"b": 1}}),
    ({"spec": {"containers": [{"name": "x"}]}}, {"spec": {"containers": [{"name": "y"}]}}),
    ({"spec": {"nodeSelector": {"k": "v"}}}, {"spec": {"nodeSelector": {"j": "v"}}}),
    ({"metadata": {"finalizers": ["a"]}}, {"metadata": {"finalizers": ["b"]}}),
])
def test_bodies_of_other_outlines_get_their_own_tree(first: dict[str, Any], second: dict[str, Any]) -> None:
    mf._CREATED_CACHE.clear()  # noqa: SLF001
    mf._CREATED_BY_OUTLINE.clear()  # noqa: SLF001
    assert json.dumps(mf._created_fields(builtins.POD, first)) == _fresh(builtins.POD, first)  # noqa: SLF001
    assert json.dumps(mf._created_fields(builtins.POD, second)) == _fresh(builtins.POD, second)  # noqa: SLF001
    assert _fresh(builtins.POD, first) != _fresh(builtins.POD, second)


def test_events_about_different_pods_share_one_tree() -> None:
    mf._CREATED_CACHE.clear()  # noqa: SLF001
    mf._CREATED_BY_OUTLINE.clear()  # noqa: SLF001

    def event(pod: str) -> dict[str, Any]:
        return {"involvedObject": {"kind": "Pod", "name": pod, "uid": f"uid-{pod}", "resourceVersion": "7"},
                "reason": "Scheduled", "message": f"Successfully assigned default/{pod} to a", "count": 1}

    first = mf._created_fields(builtins.EVENT, event("a"))  # noqa: SLF001
    assert mf._created_fields(builtins.EVENT, event("b")) is first  # noqa: SLF001
    assert json.dumps(first) == _fresh(builtins.EVENT, event("b"))
