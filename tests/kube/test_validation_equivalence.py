"""The checks every write runs, with their fast paths (empty metadata parts not checked, the update's
label, annotation and owner-reference checks not repeated after valid metadata, absent tolerations
and gates not compared), give the same errors in the same order as the checks without them
(tests/kube/validation_reference.py) on random metadata and Pod specs, valid and not."""

from __future__ import annotations

import random
from typing import Any

import pytest

from harness.apiserver import validation
from harness.kube import validation as kv
from harness.kube.errors import FieldError
from tests.kube import validation_reference as reference

NAMES = [None, "", "p", "web-0", "Bad_Name", "a" * 254, "x-", 5, True, "a.b"]
GENERATE_NAMES = [None, "", "gen-", "Bad-", "a" * 260]
NAMESPACES = [None, "", "default", "Bad NS", "a" * 64, "kube-system"]
GENERATIONS = [None, -1, 0, 3, True, 2.5]
LABELS: list[Any] = [None, {}, "", [], {"app": "web"}, {"bad key!": "v"}, {"k": "bad value!"}, {"a": "b", "c": "d"}, 0]
ANNOTATIONS: list[Any] = [None, {}, "", {"a": "b"}, {"Bad Key": "x"}, {"k": "x" * (256 * 1024)}, False]
OWNERS: list[Any] = [
    None, [], "", [{"apiVersion": "v1", "kind": "ReplicaSet", "name": "n", "uid": "u", "controller": True}],
    [{"kind": "K"}], [{"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "u"}],
    [{"apiVersion": "apps/v1", "kind": "A", "name": "a", "uid": "1", "controller": True},
     {"apiVersion": "apps/v1", "kind": "B", "name": "b", "uid": "2", "controller": True}],
]
FINALIZERS: list[Any] = [None, [], "", ["a/b"], ["bad finalizer!"], ["orphan", "foregroundDeletion"], ["kubernetes"]]
TIMES = [None, "", "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"]


def _pick(rng: random.Random, choices: list[Any]) -> Any:
    return rng.choice(choices)


def _meta(rng: random.Random) -> dict[str, Any]:
    fields = {
        "name": NAMES, "generateName": GENERATE_NAMES, "namespace": NAMESPACES, "generation": GENERATIONS,
        "labels": LABELS, "annotations": ANNOTATIONS, "ownerReferences": OWNERS, "finalizers": FINALIZERS,
        "uid": [None, "", "u1", "u2"], "creationTimestamp": TIMES, "deletionTimestamp": TIMES,
        "deletionGracePeriodSeconds": [None, 0, 30],
    }
    return {key: _pick(rng, choices) for key, choices in fields.items() if rng.random() < 0.6}


def _texts(errs: list[FieldError]) -> list[tuple[str, str, str]]:
    return [(err.field, err.type, str(err)) for err in errs]


@pytest.mark.parametrize("seed", range(4))
def test_metadata_checks_match_the_reference_on_random_metadata(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(1500):
        obj, old = {"metadata": _meta(rng)}, {"metadata": _meta(rng)}
        if rng.random() < 0.3:
            obj = {"metadata": dict(old["metadata"])}  # a status write: the same metadata
        namespaced = rng.random() < 0.7
        rule = rng.choice(sorted(kv.NAME_RULES))
        got = kv.validate_object_meta(obj, namespaced=namespaced, name_rule=rule)
        want = reference.validate_object_meta(obj, namespaced=namespaced, name_rule=rule)
        assert _texts(got) == _texts(want), obj
        # As the server runs them for an update.
        got += kv.validate_object_meta_update(obj, old, parts_valid=not got)
        want += reference.validate_object_meta_update(obj, old)
        assert _texts(got) == _texts(want), (obj, old)
        alone = kv.validate_object_meta_update(obj, old)
        assert _texts(alone) == _texts(reference.validate_object_meta_update(obj, old))


CONTAINERS: list[Any] = [
    [{"name": "c", "image": "i"}], [{"name": "c", "image": " i"}], [{"name": "c", "image": ""}],
    [{"name": "c", "image": "i"}, {"name": "d", "image": "j"}], [], None,
]
TOLERATIONS: list[Any] = [
    None, [], [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
    [{"key": "k", "operator": "Exists", "effect": "NoExecute"}], [{"key": "other", "operator": "Exists"}],
]
GATES: list[Any] = [None, [], [{"name": "a"}], [{"name": "a"}, {"name": "b"}], [{"name": "b"}]]


def _spec(rng: random.Random) -> dict[str, Any]:
    fields = {
        "containers": CONTAINERS, "initContainers": CONTAINERS, "tolerations": TOLERATIONS, "schedulingGates": GATES,
        "activeDeadlineSeconds": [None, 10, 20, -1, 2**31], "terminationGracePeriodSeconds": [None, 1, 30, -1],
        "nodeName": [None, "n1", "n2"], "restartPolicy": [None, "Always", "Sometimes"],
    }
    return {key: _pick(rng, choices) for key, choices in fields.items() if rng.random() < 0.6}


@pytest.mark.parametrize("seed", range(4))
def test_pod_update_checks_match_the_reference_on_random_specs(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(1500):
        old = {"spec": _spec(rng)}
        roll = rng.random()
        # The same spec (a status write), an equal copy, or another one.
        spec = old["spec"] if roll < 0.3 else dict(old["spec"]) if roll < 0.5 else _spec(rng)
        new = {"spec": spec}
        assert _texts(validation.validate_pod_update(new, old)) == _texts(reference.validate_pod_update(new, old))
