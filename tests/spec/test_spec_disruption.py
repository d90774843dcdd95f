"""harness.spec.disruption: a PodDisruptionBudget's disruptionsAllowed as policy/v1 documents it."""

from __future__ import annotations

import pytest

from harness.spec.disruption import budget


@pytest.mark.parametrize(("spec", "selected", "scale", "healthy", "desired", "allowed"), [
    ({"minAvailable": 2}, 3, 3, 3, 2, 1),
    ({"minAvailable": 3}, 3, 3, 3, 3, 0),
    ({"minAvailable": "50%"}, 3, 3, 3, 2, 1),  # ceil(1.5)
    ({"maxUnavailable": 1}, 3, 3, 3, 2, 1),
    ({"maxUnavailable": "50%"}, 3, 3, 2, 1, 1),  # 50% of 3 rounds up to 2 unavailable
    ({"maxUnavailable": 0}, 4, 4, 4, 4, 0),
    ({"minAvailable": 1}, 2, 2, 0, 1, 0),  # never negative
    ({"maxUnavailable": 5}, 3, 3, 3, 0, 3),
])
def test_disruptions_allowed(spec: dict[str, object], selected: int, scale: int, healthy: int, desired: int,
                             allowed: int) -> None:
    result = budget(spec, selected_pods=selected, controller_scale=scale, healthy=healthy)
    assert (result.desired_healthy, result.disruptions_allowed) == (desired, allowed)


def test_no_expected_pod_allows_no_disruption() -> None:
    assert budget({"maxUnavailable": 1}, selected_pods=0, controller_scale=0, healthy=0).disruptions_allowed == 0
    assert budget({"minAvailable": 0}, selected_pods=0, controller_scale=0, healthy=0).disruptions_allowed == 0
