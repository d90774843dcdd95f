"""A status write stores what it decodes as it is, never changing it in place: a remembered conditions
list is handed to it itself (shared with every stored object that holds it) rather than copied; a
create, which the server then defaults in place, still gets a copy of its own. Either way the answer is
the one decoding without the memo gives (tests/decoding_reference.py)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from harness.apiserver import builtins, decoding
from harness.apiserver.decoding import _definition
from harness.apiserver.server import APIServer
from harness.apiserver.subresources import binding
from harness.clock import VirtualClock
from harness.kube.errors import StatusError
from tests import decoding_reference as reference
from tests.test_typed_decoding_equivalence import _mutated, _twin, _value

CONDITIONS = [{"type": "Ready", "status": "True", "lastProbeTime": None,
               "lastTransitionTime": "2026-01-01T00:00:00Z"},
              {"type": "PodScheduled", "status": "True", "lastProbeTime": None,
               "lastTransitionTime": "2026-01-01T00:00:00Z"}]


@pytest.fixture
def server() -> APIServer:
    return APIServer("test", VirtualClock())


def _create(server: APIServer, name: str) -> None:
    server.create(builtins.POD, "default", {"metadata": {"name": name},
                                            "spec": {"containers": [{"name": "c", "image": "i"}]}})


def _status_write(server: APIServer, name: str, status: dict[str, Any]) -> dict[str, Any]:
    pod = server.get(builtins.POD, "default", name)
    pod["status"] = json.loads(json.dumps(status))
    server.update(builtins.POD, "default", name, pod, subresource="status")
    return server.stored_view(builtins.POD, "default", name)


def test_status_writes_share_a_remembered_conditions_list(server: APIServer) -> None:
    for name in ("a", "b", "c"):
        _create(server, name)
    first = _status_write(server, "a", {"phase": "Running", "conditions": CONDITIONS})
    second = _status_write(server, "b", {"phase": "Running", "conditions": CONDITIONS})
    assert second["status"]["conditions"] is first["status"]["conditions"]
    assert first["status"]["conditions"] == CONDITIONS
    # A change to one Pod's conditions is a new list: the other Pod's stay as they were.
    changed = [dict(CONDITIONS[0], status="False"), CONDITIONS[1]]
    third = _status_write(server, "a", {"phase": "Running", "conditions": changed})
    assert third["status"]["conditions"] == changed
    assert server.stored_view(builtins.POD, "default", "b")["status"]["conditions"] == CONDITIONS
    # Binding replaces Pod b's PodScheduled condition in a list of its own.
    binding.bind(server, "default", "b", {"target": {"name": "node-1"}})
    bound = server.stored_view(builtins.POD, "default", "b")
    assert bound["status"]["conditions"] is not second["status"]["conditions"]
    assert bound["status"]["conditions"][-1]["type"] == "PodScheduled"
    assert second["status"]["conditions"] == CONDITIONS
    assert _status_write(server, "c", {"conditions": CONDITIONS})["status"]["conditions"] == CONDITIONS


def test_a_create_gets_a_copy_of_its_own() -> None:
    body = {"apiVersion": "v1", "kind": "Pod", "status": {"conditions": CONDITIONS}}
    shared = decoding.decode(builtins.POD, json.loads(json.dumps(body)), status_of={})
    again = decoding.decode(builtins.POD, json.loads(json.dumps(body)), status_of={})
    assert again["status"]["conditions"] is shared["status"]["conditions"]
    own = decoding.decode(builtins.POD, json.loads(json.dumps(body)))
    assert own["status"]["conditions"] == CONDITIONS
    assert own["status"]["conditions"] is not shared["status"]["conditions"]
    own["status"]["conditions"][0]["status"] = "False"  # a create's defaults may do this
    assert shared["status"]["conditions"] == CONDITIONS
    assert decoding.decode(builtins.POD, json.loads(json.dumps(body)), status_of={})["status"]["conditions"] \
        == CONDITIONS


def test_a_shared_list_is_still_refused_or_warned_about_as_sent(server: APIServer) -> None:
    _create(server, "a")
    _status_write(server, "a", {"conditions": CONDITIONS})
    bad = [dict(CONDITIONS[0], lastTransitionTime="yesterday")]
    with pytest.raises(StatusError) as caught:
        _status_write(server, "a", {"conditions": bad})
    assert caught.value.code == 400 and 'parsing time "yesterday"' in caught.value.message
    with decoding.request_scope("") as scope:
        _status_write(server, "a", {"conditions": [dict(CONDITIONS[0], bogus=1)]})
    assert scope.warnings == ['unknown field "status.conditions[0].bogus"']


def _answer(share: bool, body: Any) -> tuple[str, Any]:
    try:
        result = decoding.decode_builtin("v1", "Pod", body, share=share)
    except decoding.DecodeError as exc:
        return "error", str(exc)
    assert result is not None
    return "value", (repr(result[0]), result[1])


@pytest.mark.parametrize("seed", range(3))
def test_shared_memo_answers_as_the_plain_walk(seed: int) -> None:
    # Remembered conditions sent again, changed, or as their JSON twin (a tuple), shared or copied,
    # answer as the plain walk; a shared answer handed out twice is never changed by the second.
    rng = random.Random(seed)
    node = _definition("io.k8s.api.core.v1.PodCondition")
    lists = [[_value(node, rng, 1) for _ in range(rng.randrange(1, 4))] for _ in range(5)]
    for _ in range(400):
        body: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "status": {"conditions": rng.choice(lists)}}
        roll = rng.random()
        if roll < 0.3:
            body = _mutated(body, rng)
        elif roll < 0.45:
            body = _twin(body, rng)
        want = ("error", None)
        try:
            value, unknown = reference.decode_builtin("v1", "Pod", body)
            want = ("value", (repr(value), unknown))
        except decoding.DecodeError as exc:
            want = ("error", str(exc))
        share = rng.random() < 0.7
        assert _answer(share, body) == want, body
