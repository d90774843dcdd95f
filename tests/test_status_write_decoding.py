"""A status write that sends back some of the stored status's own members (an in-process writer that
copied the stored status and replaced a few members, as the eviction's DisruptionTarget condition and
a budget's spent disruption do) decodes to what decoding the whole body answers: the same value (types
and key order), the same unknown-field warnings and the same refusals, under every fieldValidation;
the members taken as stored are not decoded again."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from harness.apiserver import builtins, decoding, schemas
from harness.apiserver.decoding import _definition
from harness.apiserver.resources import ResourceType
from harness.kube.errors import StatusError
from tests.test_typed_decoding_equivalence import ODD, _value

KINDS = [builtins.POD, builtins.POD_DISRUPTION_BUDGET, builtins.NODE, builtins.DEPLOYMENT, builtins.JOB,
         builtins.REPLICA_SET, builtins.STATEFUL_SET, builtins.PERSISTENT_VOLUME_CLAIM]


def _stored(rt: ResourceType, rng: random.Random) -> dict[str, Any]:
    """A stored object of ``rt``: a random one as decoding leaves it (what a write stores)."""
    name = schemas.definition_name(rt.api_version, rt.kind)
    assert name is not None
    while True:
        obj = _value(_definition(name), rng, 0)
        if isinstance(obj, dict) and isinstance(obj.get("status"), dict) and obj["status"]:
            break
    obj.update(apiVersion=rt.api_version, kind=rt.kind, metadata={"name": "o", "namespace": "default"})
    try:
        return decoding.decode(rt, json.loads(json.dumps(obj)))
    except StatusError:
        return _stored(rt, rng)


def _status_body(rt: ResourceType, stored: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """``stored`` with a status of its own whose members are partly the stored ones themselves,
    partly replaced (random values, odd ones, nulls, unknown fields), dropped or added."""
    name = schemas.definition_name(rt.api_version, rt.kind)
    assert name is not None
    status_node = _definition(name).properties["status"]
    body = dict(stored)
    status = dict(stored["status"])
    for key in list(status):
        roll = rng.random()
        if roll < 0.2:
            del status[key]
        elif roll < 0.45:
            status[key] = _value(status_node.properties[key], rng, 1)
        elif roll < 0.5:
            status[key] = rng.choice(ODD)
        elif roll < 0.55:
            status[key] = None
    if rng.random() < 0.3:
        key = rng.choice(sorted(status_node.properties))
        status[key] = _value(status_node.properties[key], rng, 1)
    if rng.random() < 0.1:
        status["bogus"] = 1
    keys = list(status)
    if rng.random() < 0.3:
        rng.shuffle(keys)
    # The new members as a client sends them (JSON: no tuples); the kept ones are the stored ones themselves.
    body["status"] = {key: status[key] if status[key] is stored["status"].get(key) else _json(status[key])
                      for key in keys}
    return body


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value))


def _answer(rt: ResourceType, body: dict[str, Any], validation: str,
            status_of: dict[str, Any] | None) -> tuple[str, Any, list[str]]:
    with decoding.request_scope(validation) as scope:
        try:
            decoded = decoding.decode(rt, body, status_of=status_of)
        except StatusError as err:
            return "refused", err.status, scope.warnings
    # repr tells 1 from 1.0 from True, a tuple from a list, and shows the key order.
    return "decoded", repr(decoded), scope.warnings


@pytest.mark.parametrize("seed", range(4))
def test_a_status_write_keeping_stored_members_decodes_as_the_whole_body(seed: int) -> None:
    rng = random.Random(seed)
    for rt in KINDS:
        for _ in range(25):
            stored = _stored(rt, rng)
            body = _status_body(rt, stored, rng)
            for validation in ("Strict", "Warn", "Ignore"):
                # The oracle: the same body as JSON (nothing in it is the stored object's), decoded whole.
                want = _answer(rt, json.loads(json.dumps(body)), validation, None)
                assert _answer(rt, body, validation, stored) == want, (rt.kind, body)


def test_the_stored_members_of_a_status_write_are_not_decoded_again() -> None:
    stored = decoding.decode(builtins.POD, {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
        "status": {"phase": "Running", "hostIPs": [{"ip": "10.0.0.1"}],
                   "containerStatuses": [{"name": "c", "ready": True, "state": {"running": {}}}],
                   "conditions": [{"type": "Ready", "status": "True"}]}})
    body = dict(stored)
    body["status"] = status = dict(stored["status"])
    status["conditions"] = [*stored["status"]["conditions"], {"type": "DisruptionTarget", "status": "True"}]
    decoded = decoding.decode(builtins.POD, body, status_of=stored)
    assert decoded["status"]["containerStatuses"] is stored["status"]["containerStatuses"]
    assert decoded["status"]["hostIPs"] is stored["status"]["hostIPs"]
    assert decoded["status"]["conditions"] is not status["conditions"]
    assert decoded["status"] is not status
    assert decoded["status"] == status and list(decoded["status"]) == list(status)
