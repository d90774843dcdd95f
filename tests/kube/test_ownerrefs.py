"""Owner references: the controller of an object, and who owns it."""

from __future__ import annotations

from harness.kube.ownerrefs import controller_of, is_controlled_by, is_owned_by, new_controller_ref

OWNER = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web", "uid": "u1"}}


def _pod(*refs: dict[str, object]) -> dict[str, object]:
    return {"metadata": {"name": "p", "ownerReferences": list(refs)}}


def test_the_controller_is_the_reference_marked_controller_and_a_copy_is_returned() -> None:
    controller = new_controller_ref(OWNER)
    pod = _pod({"kind": "Other", "uid": "u0"}, controller)
    found = controller_of(pod)
    assert found == controller and found is not controller
    assert controller_of(_pod({"kind": "Other", "uid": "u0"})) is None
    assert controller_of({}) is None


def test_controlled_by_needs_the_controller_flag_and_owned_by_does_not() -> None:
    plain = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "u1"}
    assert is_owned_by(_pod(plain), OWNER) and not is_controlled_by(_pod(plain), OWNER)
    assert is_controlled_by(_pod(new_controller_ref(OWNER)), OWNER)
    assert not is_owned_by(_pod(plain), {"metadata": {"uid": "u2"}})


def test_a_new_controller_ref_blocks_owner_deletion() -> None:
    assert new_controller_ref(OWNER) == {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "u1",
                                         "controller": True, "blockOwnerDeletion": True}
