"""Validation of an update that keeps the stored object's spec object (every status write does): for a
Pod, a PodDisruptionBudget and the workloads the checks read the spec alone, so a spec of the same JSON
found valid before is valid (harness.kube.validation.checked_once), with the same answers as checking
it again; and the metadata update checks answer at once when every field they compare is the stored
one itself. Each compared with tests/kube/validation_reference.py on random values."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from harness.apiserver import builtins
from harness.apiserver.server import APIServer
from harness.clock import VirtualClock
from harness.kube import validation as kube_validation
from harness.kube.errors import StatusError
from tests.kube import validation_reference
from tests.kube.test_validation_equivalence import _meta as _random_meta
from tests.kube.test_validation_equivalence import _spec as _random_spec
from tests.kube.test_validation_equivalence import _texts

POD_WHAT = "v1/Pod update keeping its spec"
PDB_WHAT = "policy/v1/PodDisruptionBudget update keeping its spec"


@pytest.fixture
def server() -> APIServer:
    return APIServer("test", VirtualClock())


def _known_valid(what: str, spec: Any) -> bool:
    return kube_validation._VALID.find(what, spec)[1] is True


def _pod(image: str = "app:1", **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": image}], **spec}}


def _status_write(server: APIServer, phase: str) -> dict[str, Any]:
    pod = server.get(builtins.POD, "default", "p")
    pod["status"] = {"phase": phase}
    result = server.update(builtins.POD, "default", "p", pod, subresource="status")
    assert result is not None
    return result


def _stored(server: APIServer) -> dict[str, Any]:
    return server.stored_view(builtins.POD, "default", "p")


def test_a_status_write_remembers_the_spec_it_kept(server: APIServer) -> None:
    # (An image no other test uses: the memo is the process's.)
    server.create(builtins.POD, "default", _pod(image="app:kept-spec-test", activeDeadlineSeconds=7))
    spec = _stored(server)["spec"]
    assert not _known_valid(POD_WHAT, spec)
    _status_write(server, "Pending")
    assert _stored(server)["spec"] is spec and _known_valid(POD_WHAT, spec)
    assert _status_write(server, "Running")["status"]["phase"] == "Running"
    # Remembered by its JSON: 7.0 is another value (and an invalid deadline for an update).
    assert not _known_valid(POD_WHAT, json.loads(json.dumps(spec).replace(": 7", ": 7.0")))


def test_an_invalid_kept_spec_is_refused_at_every_status_write(server: APIServer) -> None:
    # A create checks only that an image is set; every update also refuses surrounding blanks: the
    # stored spec fails each status write, and the error (never remembered) is the same each time.
    server.create(builtins.POD, "default", _pod(image=" app:1"))
    spec = _stored(server)["spec"]
    messages = []
    for phase in ("Pending", "Running"):
        with pytest.raises(StatusError) as caught:
            _status_write(server, phase)
        assert (caught.value.code, caught.value.reason) == (422, "Invalid")
        messages.append(caught.value.message)
    assert messages[0] == messages[1]
    assert 'spec.containers[0].image: Invalid value: " app:1": must not have leading or trailing whitespace' \
        in messages[0]
    assert not _known_valid(POD_WHAT, spec)


def test_a_spec_update_after_a_remembered_one_is_checked_in_full(server: APIServer) -> None:
    server.create(builtins.POD, "default", _pod(activeDeadlineSeconds=30))
    _status_write(server, "Pending")
    _status_write(server, "Running")
    pod = server.get(builtins.POD, "default", "p")
    pod["spec"]["activeDeadlineSeconds"] = 60
    with pytest.raises(StatusError) as caught:
        server.update(builtins.POD, "default", "p", pod)
    assert caught.value.code == 422
    assert "spec.activeDeadlineSeconds: Invalid value: 60: must be less than or equal to previous value" \
        in caught.value.message


def test_a_budgets_status_writes_remember_its_spec(server: APIServer) -> None:
    body = {"metadata": {"name": "b"}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}}
    server.create(builtins.POD_DISRUPTION_BUDGET, "default", body)
    for healthy in (1, 2):
        pdb = server.get(builtins.POD_DISRUPTION_BUDGET, "default", "b")
        pdb["status"] = {"currentHealthy": healthy, "desiredHealthy": 1, "disruptionsAllowed": healthy - 1,
                         "expectedPods": 2}
        server.update(builtins.POD_DISRUPTION_BUDGET, "default", "b", pdb, subresource="status")
    spec = server.stored_view(builtins.POD_DISRUPTION_BUDGET, "default", "b")["spec"]
    assert _known_valid(PDB_WHAT, spec)
    assert not _known_valid(POD_WHAT, spec)  # remembered per check


def _number_twin(spec: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A copy of ``spec`` with one integer turned into the float (or bool) Python finds equal to it."""
    out = json.loads(json.dumps(spec))
    ints = [k for k, v in out.items() if type(v) is int]
    if ints:
        key = rng.choice(ints)
        out[key] = float(out[key]) if out[key] not in (0, 1) or rng.random() < 0.5 else bool(out[key])
    return out


@pytest.mark.parametrize("seed", range(3))
def test_kept_spec_checks_match_the_reference(seed: int) -> None:
    # Random Pod specs, valid and not, kept by updates (the same object on both sides), again and again
    # (then remembered when valid), and as their twins with a float or a bool for an integer.
    rng = random.Random(seed)
    specs = [_random_spec(rng) for _ in range(40)]
    for _ in range(1200):
        spec = rng.choice(specs)
        if rng.random() < 0.3:
            spec = _number_twin(spec, rng)
        old = {"metadata": {"name": "p"}, "spec": spec}
        new = {"metadata": {"name": "p"}, "spec": spec, "status": {}}
        got = APIServer._validate_kind(builtins.POD, new, old)
        assert _texts(got) == _texts(validation_reference.validate_pod_update(new, old)), spec


@pytest.mark.parametrize("seed", range(3))
def test_metadata_update_checks_of_kept_fields_match_the_reference(seed: int) -> None:
    # Random metadata written again as a status write does (the same values), or with one field
    # changed or dropped; grace periods that are no integers (a NaN is not equal to itself) too.
    rng = random.Random(seed)
    for _ in range(1500):
        old = {"metadata": _random_meta(rng)}
        if rng.random() < 0.2:
            old["metadata"]["deletionGracePeriodSeconds"] = rng.choice([float("nan"), 30.0, True])
        meta = dict(old["metadata"])
        if rng.random() < 0.5:
            other = _random_meta(rng)
            key = rng.choice(sorted(set(other) | set(meta)))
            if key in other:
                meta[key] = other[key]
            else:
                del meta[key]
        obj = {"metadata": meta}
        namespaced = rng.random() < 0.7
        got = kube_validation.validate_object_meta(obj, namespaced=namespaced)
        want = validation_reference.validate_object_meta(obj, namespaced=namespaced)
        assert _texts(got) == _texts(want), obj
        got += kube_validation.validate_object_meta_update(obj, old, parts_valid=not got)
        want += validation_reference.validate_object_meta_update(obj, old)
        assert _texts(got) == _texts(want), (obj, old)
