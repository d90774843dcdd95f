"""Progress points, fenceposts and hook Job names of the rollout controllers (controllers/rollout)."""

from __future__ import annotations

import pytest

from controllers.rollout.fenceposts import (
    daemon_set_fenceposts,
    deployment_fenceposts,
    stateful_set_max_unavailable,
)
from controllers.rollout.hooks import job_name
from controllers.rollout.points import groups, resolve


@pytest.mark.parametrize(("point", "replicas", "count"), [
    ("50%", 5, 3), ("20%", 5, 1), ("33%", 3, 1), ("34%", 3, 2), ("41%", 10, 5), ("1%", 5, 1),
    ("0%", 5, 0), ("100%", 5, 5), (2, 5, 2), (7, 3, 3),
])
def test_a_point_resolves_to_the_ceiling_of_its_share_and_ints_are_clamped_to_the_replicas(
        point: object, replicas: int, count: int) -> None:
    assert resolve(point, replicas).count == count


def test_equal_values_share_a_group_and_equal_counts_of_different_values_do_not() -> None:
    result = groups([("sixty", "60%"), ("fifty", "50%"), ("two", 2), ("forty", "40%"), ("pre", "0%")], 5)
    assert [(g.point.count, sorted(g.names)) for g in result] == [
        (0, ["pre"]), (2, ["forty", "two"]), (3, ["fifty"]), (3, ["sixty"])]


@pytest.mark.parametrize(("surge", "unavailable", "desired", "expected"), [
    ("25%", "25%", 4, (1, 1)), ("30%", "30%", 5, (2, 1)), (0, "10%", 3, (0, 1)), ("0%", 0, 0, (0, 1)),
])
def test_deployment_fenceposts_round_surge_up_and_unavailable_down(
        surge: object, unavailable: object, desired: int, expected: tuple[int, int]) -> None:
    assert deployment_fenceposts(surge, unavailable, desired) == expected


def test_daemon_set_fenceposts_round_both_up_and_stateful_sets_floor_to_at_least_one() -> None:
    assert daemon_set_fenceposts(0, "30%", 5) == (0, 2)
    assert daemon_set_fenceposts(0, 0, 3) == (0, 1)
    assert stateful_set_max_unavailable("30%", 5) == 1
    assert stateful_set_max_unavailable("50%", 5) == 2
    assert stateful_set_max_unavailable(None, 5) == 1


def test_hook_job_names_are_deterministic_and_fit_a_label() -> None:
    assert job_name("web", 2, "smoke") == "web-2-smoke"
    long = job_name("a" * 60, 12, "migrate-database")
    assert len(long) <= 63 and long == job_name("a" * 60, 12, "migrate-database")
    assert long != job_name("a" * 60, 13, "migrate-database")
