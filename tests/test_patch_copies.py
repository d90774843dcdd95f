"""The patch functions copy their inputs with ``harness.kube.objects.clone`` (JSON only) where they used
``copy.deepcopy``: over random JSON documents and patches, each answers exactly what the deepcopy version
answers (that version is the same module with ``clone`` put back to ``copy.deepcopy``), raises the same
errors, and leaves its inputs as they were."""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from typing import Any

import orjson
import pytest

from harness.apiserver import patch
from harness.kube.errors import StatusError

_KEYS = ("a", "b", "c", "name", "labels", "spec", "containers", "finalizers", "image")
_RUNS = 300


def _value(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if depth <= 0 or roll < 0.35:
        return rng.choice([None, True, False, 0, 1, -3, 2.5, "", "x", "y", "web"])
    if roll < 0.7:
        return {rng.choice(_KEYS): _value(rng, depth - 1) for _ in range(rng.randint(0, 4))}
    return [_value(rng, depth - 1) for _ in range(rng.randint(0, 3))]


def _pod(rng: random.Random) -> dict[str, Any]:
    containers = [{"name": name, "image": rng.choice(["i", "j"]), "ports": [{"containerPort": rng.choice([80, 443])}]}
                  for name in rng.sample(["a", "b", "c", "d"], rng.randint(0, 3))]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "labels": {k: "v" for k in rng.sample(_KEYS, 2)},
                         "finalizers": rng.sample(["f1", "f2", "f3"], rng.randint(0, 3))},
            "spec": {"containers": containers}}


def _pod_patch(rng: random.Random) -> Any:
    body: dict[str, Any] = {}
    if rng.random() < 0.5:
        body["metadata"] = {"labels": {rng.choice(_KEYS): rng.choice([None, "w"])},
                            "finalizers": rng.sample(["f1", "f2", "f4"], rng.randint(0, 2))}
    if rng.random() < 0.6:
        body["spec"] = {"containers": [{"name": rng.choice(["a", "b", "e"]), "image": rng.choice(["k", None])}
                                       for _ in range(rng.randint(0, 2))]}
    if rng.random() < 0.1:
        body["spec"] = {"containers": [{"image": "no merge key"}]}
    return body if rng.random() > 0.05 else rng.choice([None, [], "text"])


def _operations(rng: random.Random, doc: dict[str, Any]) -> Any:
    paths = ["/metadata/labels/a", "/metadata/finalizers/0", "/metadata/finalizers/-", "/spec/containers/0",
             "/spec/containers/1/image", "/spec", "/missing/x", "/metadata/name"]
    ops = []
    for _ in range(rng.randint(0, 4)):
        op = rng.choice(["add", "remove", "replace", "copy", "move", "test"])
        entry: dict[str, Any] = {"op": op, "path": rng.choice(paths)}
        if op in ("add", "replace", "test"):
            entry["value"] = _value(rng, 2)
        if op in ("copy", "move"):
            entry["from"] = rng.choice(paths)
        ops.append(entry)
    return ops if rng.random() > 0.05 else rng.choice([None, {}, "text"])


def _outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return "ok", orjson.dumps(call())
    except StatusError as err:
        return "error", orjson.dumps(err.status)


def _both(monkeypatch: pytest.MonkeyPatch, call: Callable[[], Any]) -> tuple[tuple[str, Any], tuple[str, Any]]:
    new = _outcome(call)
    with monkeypatch.context() as m:
        m.setattr(patch, "clone", copy.deepcopy)
        old = _outcome(call)
    return new, old


@pytest.mark.parametrize("seed", range(3))
def test_merge_strategic_and_json_patches_answer_what_their_deepcopy_versions_answered(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    rng = random.Random(seed)
    for _ in range(_RUNS):
        doc = rng.choice([_pod(rng), {"metadata": {"name": "x"}, **{k: _value(rng, 3) for k in rng.sample(_KEYS, 3)}}])
        body = rng.choice([_pod_patch(rng), _value(rng, 3)])
        ops = _operations(rng, doc)
        before = orjson.dumps([doc, body, ops])
        calls: list[Callable[[], Any]] = [
            lambda doc=doc, body=body: patch.merge_patch(doc, body),
            lambda doc=doc, body=body: patch.strategic_merge_patch(doc, body, "Pod"),
            lambda doc=doc, ops=ops: patch.json_patch(doc, ops),
        ]
        for call in calls:
            new, old = _both(monkeypatch, call)
            assert new == old, (doc, body, ops)
            assert orjson.dumps([doc, body, ops]) == before  # the inputs are not changed


def test_a_patched_result_shares_nothing_with_its_inputs() -> None:
    doc = {"metadata": {"name": "p", "labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    body = {"spec": {"containers": [{"name": "c", "image": "j"}]}, "metadata": {"annotations": {"k": "v"}}}
    for result in (patch.merge_patch(doc, body), patch.strategic_merge_patch(doc, body, "Pod"),
                   patch.json_patch(doc, [{"op": "add", "path": "/metadata/annotations", "value": {"k": "v"}}])):
        result["metadata"]["labels"]["a"] = "changed"
        result["metadata"]["annotations"]["k"] = "changed"
        result["spec"]["containers"][0]["name"] = "changed"
    assert doc == {"metadata": {"name": "p", "labels": {"a": "b"}},
                   "spec": {"containers": [{"name": "c", "image": "i"}]}}
    assert body == {"spec": {"containers": [{"name": "c", "image": "j"}]}, "metadata": {"annotations": {"k": "v"}}}
