"""PodDisruptionBudget status arithmetic (harness/apiserver/pdb.py): desired healthy pods and the
disruptions a budget allows, as the disruption controller computes them."""

from __future__ import annotations

from typing import Any

import pytest

from harness.apiserver.pdb import counts_pods_directly, desired_healthy, disruptions_allowed
from harness.kube.intstr import IntOrStringError


@pytest.mark.parametrize(
    ("spec", "expected", "desired"),
    [
        ({"maxUnavailable": 1}, 3, 2),
        ({"maxUnavailable": "50%"}, 3, 1),  # 50% of 3 rounds up to 2 unavailable
        ({"maxUnavailable": 5}, 3, 0),
        ({"minAvailable": 2}, 3, 2),
        ({"minAvailable": "50%"}, 3, 2),  # rounds up
        ({"minAvailable": "100%"}, 7, 7),
        ({}, 4, 0),
    ],
)
def test_desired_healthy_rounds_percentages_up(spec: dict[str, Any], expected: int, desired: int) -> None:
    assert desired_healthy(spec, expected) == desired


def test_a_value_that_is_not_a_percentage_is_upstreams_intorstring_error() -> None:
    with pytest.raises(IntOrStringError, match="string is not a percentage"):
        desired_healthy({"minAvailable": "2"}, 3)


def test_only_an_integer_min_available_counts_the_selected_pods_themselves() -> None:
    assert counts_pods_directly({"minAvailable": 2})
    assert not counts_pods_directly({"minAvailable": "50%"})
    assert not counts_pods_directly({"maxUnavailable": 1})


@pytest.mark.parametrize(
    ("healthy", "desired", "expected", "allowed"),
    [(3, 2, 3, 1), (2, 2, 3, 0), (1, 2, 3, 0), (5, 0, 0, 0), (4, 1, 4, 3)],
)
def test_disruptions_allowed_are_the_healthy_pods_beyond_the_desired_ones(
    healthy: int, desired: int, expected: int, allowed: int
) -> None:
    assert disruptions_allowed(healthy, desired, expected) == allowed
