"""harness.spec.rollout: progress points, hook groups and rollout bounds as seed 004 and DESIGN.md state
them, and the reference controllers' own arithmetic agreeing with them (two implementations, one rule)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from controllers.rollout import (
    fenceposts,
    points,
)
from harness.spec.rollout import (
    Bounds,
    daemon_set_bounds,
    deployment_bounds,
    group_of,
    hook_groups,
    next_point,
    resolve_point,
    scaled,
    stateful_set_bounds,
)


def hook(name: str, point: object) -> dict[str, object]:
    return {"name": name, "trigger": {"type": "ProgressAvailable", "progressAvailableParams": {"progressPoint": point}}}


@pytest.mark.parametrize(("point", "replicas", "count"), [
    ("50%", 5, 3), ("20%", 5, 1), ("33%", 3, 1), ("34%", 3, 2), ("41%", 10, 5), ("1%", 5, 1), ("0%", 5, 0),
    ("100%", 5, 5), (2, 5, 2), (4, 4, 4), (7, 4, 4), ("50%", 0, 0),
])
def test_RH_POINT_001_a_percentage_resolves_to_the_ceiling(point: object, replicas: int, count: int) -> None:
    assert resolve_point(point, replicas).count == count


def test_RH_ORDER_001_equal_counts_of_different_values_are_two_groups_lower_first() -> None:
    groups = hook_groups([hook("sixty", "60%"), hook("fifty", "50%")], 5)
    assert [g.hooks for g in groups] == [("fifty",), ("sixty",)]
    assert [g.point.count for g in groups] == [3, 3]


def test_RH_ORDER_002_equal_values_form_one_group() -> None:
    groups = hook_groups([hook("count", 2), hook("share", "40%"), hook("end", "100%")], 5)
    assert [g.hooks for g in groups] == [("count", "share"), ("end",)]
    assert groups[0].point.value == Fraction(2, 5)
    assert group_of(groups, "share") == 0 and group_of(groups, "end") == 1 and group_of(groups, "x") is None


def test_next_point_is_the_first_group_with_an_unfinished_hook() -> None:
    hooks = [hook("pre", "0%"), hook("mid", "50%"), hook("post", "100%")]
    assert next_point(hooks, 4, set()) == resolve_point("0%", 4)
    assert next_point(hooks, 4, {"pre"}).count == 2  # type: ignore[union-attr]
    assert next_point(hooks, 4, {"pre", "mid", "post"}) is None


@pytest.mark.parametrize(("value", "total", "up", "down"), [
    ("50%", 5, 3, 2), ("25%", 4, 1, 1), ("25%", 3, 1, 0), (2, 10, 2, 2), (None, 7, 0, 0), ("0%", 9, 0, 0),
])
def test_scaled_rounds_in_integer_arithmetic(value: object, total: int, up: int, down: int) -> None:
    assert (scaled(value, total, round_up=True), scaled(value, total, round_up=False)) == (up, down)


@pytest.mark.parametrize("value", ["5", "x%", "-1%", 1.5, True])
def test_scaled_refuses_what_is_not_an_int_or_a_percentage(value: object) -> None:
    with pytest.raises(ValueError):
        scaled(value, 10, round_up=True)


@pytest.mark.parametrize(("rolling", "replicas", "most", "least"), [
    ({"maxSurge": 1, "maxUnavailable": 0}, 4, 5, 4), ({"maxSurge": 0, "maxUnavailable": 1}, 4, 4, 3),
    ({"maxSurge": "25%", "maxUnavailable": "25%"}, 4, 5, 3), ({"maxSurge": 0, "maxUnavailable": 0}, 3, 3, 2),
    ({"maxSurge": "50%", "maxUnavailable": "50%"}, 5, 8, 3), ({}, 10, 13, 8),
])
def test_RH_DEP_001_deployment_bounds(rolling: dict[str, object], replicas: int, most: int, least: int) -> None:
    bounds = deployment_bounds({"replicas": replicas, "strategy": {"type": "RollingUpdate", "rollingUpdate": rolling}})
    assert (bounds.most, bounds.least) == (most, least)


def test_recreate_has_no_surge_and_may_go_to_zero() -> None:
    assert deployment_bounds({"replicas": 4, "strategy": {"type": "Recreate"}}) == Bounds(4, 0, 4)


@pytest.mark.parametrize(("rolling", "nodes", "most", "least"), [
    ({"maxSurge": 0, "maxUnavailable": 1}, 4, 4, 3), ({"maxSurge": 1, "maxUnavailable": 0}, 4, 5, 4),
    ({"maxSurge": "25%", "maxUnavailable": 0}, 3, 4, 3), ({"maxSurge": 0, "maxUnavailable": "50%"}, 3, 3, 1),
    ({"maxSurge": 0, "maxUnavailable": 0}, 4, 4, 3),
])
def test_RH_DS_001_daemon_set_bounds(rolling: dict[str, object], nodes: int, most: int, least: int) -> None:
    bounds = daemon_set_bounds({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": rolling}}, nodes)
    assert (bounds.most, bounds.least) == (most, least)


@pytest.mark.parametrize(("policy", "unavailable", "least"), [
    ("OrderedReady", "50%", 3), ("Parallel", "50%", 2), ("Parallel", "10%", 3), ("Parallel", None, 3),
])
def test_RH_STS_002_stateful_set_bounds(policy: str, unavailable: object, least: int) -> None:
    spec = {"replicas": 4, "podManagementPolicy": policy,
            "updateStrategy": {"rollingUpdate": {"maxUnavailable": unavailable}}}
    assert (stateful_set_bounds(spec).most, stateful_set_bounds(spec).least) == (4, least)


# The reference controllers keep their own arithmetic (mirroring upstream's code); over a grid of inputs
# the two must agree, or one of them has a bug.
PERCENTS = ["0%", "1%", "10%", "25%", "33%", "34%", "50%", "60%", "99%", "100%"]


@pytest.mark.parametrize("replicas", range(0, 13))
def test_the_reference_resolves_every_point_as_the_spec(replicas: int) -> None:
    for point in [*PERCENTS, *range(0, 14)]:
        spec, ref = resolve_point(point, replicas), points.resolve(point, replicas)
        assert (spec.count, spec.value) == (ref.count, ref.value), (point, replicas)


@pytest.mark.parametrize("replicas", range(1, 13))
def test_the_reference_fenceposts_agree_with_the_spec(replicas: int) -> None:
    for surge in ["0%", "25%", "50%", 0, 1, 2]:
        for unavailable in ["0%", "25%", "50%", 0, 1]:
            rolling = {"maxSurge": surge, "maxUnavailable": unavailable}
            spec = deployment_bounds({"replicas": replicas, "strategy": {"rollingUpdate": rolling}})
            ref_surge, ref_unavailable = fenceposts.deployment_fenceposts(surge, unavailable, replicas)
            assert (spec.surge, spec.unavailable) == (ref_surge, min(ref_unavailable, replicas))
            ds = daemon_set_bounds({"updateStrategy": {"rollingUpdate": rolling}}, replicas)
            ds_surge, ds_unavailable = fenceposts.daemon_set_fenceposts(surge, unavailable, replicas)
            assert (ds.surge, ds.unavailable) == (ds_surge, 0 if ds_surge else ds_unavailable)


def test_RH_LATE_001_a_hook_added_after_its_point_does_not_run() -> None:
    from harness.spec.rollout import runs_when_added
    assert runs_when_added(resolve_point("75%", 4), 2, revision_complete=False)
    assert runs_when_added(resolve_point("50%", 4), 2, revision_complete=False)
    assert not runs_when_added(resolve_point("25%", 4), 2, revision_complete=False)
    assert not runs_when_added(resolve_point("100%", 4), 4, revision_complete=True)
