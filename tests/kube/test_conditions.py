"""Conditions: ``apimeta.SetStatusCondition`` semantics and the lookups."""

from __future__ import annotations

from harness.kube.conditions import condition_of, find_condition, is_true, set_status_condition

T0, T1 = "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z"


def test_a_new_condition_is_appended_stamped_now_in_metav1_field_order() -> None:
    conditions: list[dict[str, object]] = []
    assert set_status_condition(conditions, {"type": "Ready", "status": "True", "reason": "Ok"}, T0)
    assert list(conditions[0]) == ["type", "status", "lastTransitionTime", "reason", "message"]
    assert conditions[0]["lastTransitionTime"] == T0 and conditions[0]["message"] == ""


def test_the_transition_time_moves_only_when_the_status_changes() -> None:
    conditions: list[dict[str, object]] = []
    set_status_condition(conditions, {"type": "Ready", "status": "True", "reason": "A"}, T0)
    assert set_status_condition(conditions, {"type": "Ready", "status": "True", "reason": "B"}, T1)
    assert conditions[0]["lastTransitionTime"] == T0 and conditions[0]["reason"] == "B"
    assert set_status_condition(conditions, {"type": "Ready", "status": "False", "reason": "B"}, T1)
    assert conditions[0]["lastTransitionTime"] == T1


def test_setting_the_same_condition_again_changes_nothing() -> None:
    conditions: list[dict[str, object]] = []
    set_status_condition(conditions, {"type": "Ready", "status": "True", "reason": "A", "observedGeneration": 2}, T0)
    assert not set_status_condition(
        conditions, {"type": "Ready", "status": "True", "reason": "A", "observedGeneration": 2}, T1
    )
    assert conditions[0]["observedGeneration"] == 2


def test_lookups_find_the_condition_of_a_type() -> None:
    obj = {"status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False"}]}}
    assert find_condition(obj["status"]["conditions"], "Synced") == {"type": "Synced", "status": "False"}
    assert find_condition(None, "Ready") is None
    copy = condition_of(obj, "Ready")
    assert copy == {"type": "Ready", "status": "True"} and copy is not obj["status"]["conditions"][0]
    assert is_true(obj["status"]["conditions"], "Ready") and not is_true(obj["status"]["conditions"], "Synced")
    assert condition_of({}, "Ready") is None
