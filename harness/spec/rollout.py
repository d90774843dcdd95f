"""Seed 004's rollout arithmetic and DESIGN.md's "Rollout decisions", written from the text.

- A progress point is an int (a count of new available replicas) or ``"p%"`` of the declared replicas R,
  which resolves to ``ceil(p·R/100)``: "the exact or the closest possible point right after it". An int
  larger than R resolves to R (the rollout can reach no further, and the hook then runs at the end rather
  than never: RH_BAD_003).
- Hooks are grouped by the exact value of their point (``n/R`` for an int, ``p/100`` for a percentage):
  one value is one group, whose hooks may run in parallel; groups run one after the other ordered by
  (count, value), so two values that resolve to the same count still run in two groups, the lower first.
- Bounds of a rolling update: a Deployment's ``maxSurge`` is a percentage rounded up and its
  ``maxUnavailable`` rounded down (both default 25%), both 0 making unavailable 1; Recreate has no surge
  and may go down to 0 available. A DaemonSet's are both rounded up over the eligible Nodes (default
  surge 0, unavailable 1), both 0 on a non-empty set making unavailable 1. A StatefulSet replaces one Pod
  at a time unless ``podManagementPolicy: Parallel``, where ``maxUnavailable`` (rounded down, at least 1)
  applies.
"""

from __future__ import annotations

import re
from dataclasses import (
    dataclass,
    field,
)
from fractions import Fraction
from typing import Any

from harness.kube.names.meta import PATCH_DIRECTIVE

_PERCENT = re.compile(r"^([0-9]+)%$")

DEPLOYMENT_DEFAULT_SURGE = "25%"
DEPLOYMENT_DEFAULT_UNAVAILABLE = "25%"


def percentage(value: Any) -> int | None:
    """The number in ``"p%"``; None for anything else (an int, or a string that is not a percentage)."""
    if not isinstance(value, str):
        return None
    match = _PERCENT.match(value)
    return int(match.group(1)) if match else None


def scaled(value: Any, total: int, *, round_up: bool) -> int:
    """An int-or-percent field against ``total``: an int is itself, ``"p%"`` is ``p·total/100`` rounded up
    or down in exact integer arithmetic; None is 0. Anything else is a ValueError (the API refuses it)."""
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    percent = percentage(value)
    if percent is None:
        raise ValueError(f"not an int or a percentage: {value!r}")
    numerator = percent * total
    return -(-numerator // 100) if round_up else numerator // 100


@dataclass(frozen=True, order=True)
class Point:
    """A resolved progress point: the count of new available replicas it waits for, and its exact value."""

    count: int
    value: Fraction
    text: str = field(compare=False)


def resolve_point(point: Any, replicas: int) -> Point:
    """Where ``point`` (int or ``"p%"``) stops a rollout of ``replicas`` declared replicas."""
    percent = percentage(point)
    if percent is not None:
        return Point(min(-(-percent * replicas // 100), replicas), Fraction(percent, 100), str(point))
    number = int(point)
    if replicas <= 0:
        return Point(0, Fraction(1 if number else 0), str(point))
    return Point(min(number, replicas), Fraction(number, replicas), str(point))


def hook_point(hook: dict[str, Any]) -> Any:
    """The raw progress point of a hook as the API object writes it (``trigger.progressAvailableParams``)."""
    return (((hook.get("trigger") or {}).get("progressAvailableParams")) or {}).get("progressPoint")


@dataclass(frozen=True)
class HookGroup:
    """The hooks sharing one exact progress value: they may run together, all before the next group."""

    point: Point
    hooks: tuple[str, ...]


def hook_groups(hooks: list[dict[str, Any]], replicas: int) -> list[HookGroup]:
    """The groups the lifecycle hooks of a workload (API objects) run in, in the order they must run."""
    by_key: dict[tuple[int, Fraction], list[str]] = {}
    points: dict[tuple[int, Fraction], Point] = {}
    for hook in hooks:
        point = resolve_point(hook_point(hook), replicas)
        key = (point.count, point.value)
        points.setdefault(key, point)
        by_key.setdefault(key, []).append(str(hook["name"]))
    return [HookGroup(points[key], tuple(by_key[key])) for key in sorted(by_key)]


def group_of(groups: list[HookGroup], hook: str) -> int | None:
    """The position of the group that holds ``hook``; None when no group does."""
    return next((i for i, group in enumerate(groups) if hook in group.hooks), None)


@dataclass(frozen=True)
class Bounds:
    """What a rolling update may do at any moment: at most ``most`` Pods, at least ``least`` available."""

    desired: int
    surge: int
    unavailable: int

    @property
    def most(self) -> int:
        """The largest number of Pods (old and new, not terminating) the workload may have."""
        return self.desired + self.surge

    @property
    def least(self) -> int:
        """The smallest number of available Pods the workload may fall to."""
        return max(0, self.desired - self.unavailable)


def deployment_bounds(spec: dict[str, Any]) -> Bounds:
    """A Deployment's bounds from its spec (strategy defaults included)."""
    desired = int(spec.get("replicas", 1))
    strategy = spec.get("strategy") or {}
    if strategy.get("type") == "Recreate":
        return Bounds(desired, 0, desired)
    rolling = strategy.get("rollingUpdate") or {}
    surge = scaled(rolling.get("maxSurge", DEPLOYMENT_DEFAULT_SURGE), desired, round_up=True)
    unavailable = scaled(rolling.get("maxUnavailable", DEPLOYMENT_DEFAULT_UNAVAILABLE), desired, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return Bounds(desired, surge, min(unavailable, desired))


def daemon_set_bounds(spec: dict[str, Any], eligible_nodes: int) -> Bounds:
    """A DaemonSet's bounds over ``eligible_nodes`` (the Nodes it should run on)."""
    rolling = (spec.get("updateStrategy") or {}).get("rollingUpdate") or {}
    surge = scaled(rolling.get("maxSurge"), eligible_nodes, round_up=True)
    unavailable = scaled(rolling.get("maxUnavailable", 1), eligible_nodes, round_up=True)
    if eligible_nodes > 0 and surge == 0 and unavailable == 0:
        unavailable = 1
    # With surge, an old Pod goes only once its replacement is available: nothing drops below desired.
    return Bounds(eligible_nodes, surge, 0 if surge else unavailable)


def stateful_set_bounds(spec: dict[str, Any]) -> Bounds:
    """A StatefulSet's bounds: no surge; one Pod at a time, or maxUnavailable (floored, at least 1) with
    the Parallel pod management policy."""
    desired = int(spec.get("replicas", 1))
    unavailable = 1
    if spec.get("podManagementPolicy") == "Parallel":
        rolling = (spec.get("updateStrategy") or {}).get("rollingUpdate") or {}
        raw = rolling.get("maxUnavailable")
        unavailable = 1 if raw is None else max(1, scaled(raw, desired, round_up=False))
    return Bounds(desired, 0, min(unavailable, desired))


def next_point(hooks: list[dict[str, Any]], replicas: int, finished: set[str]) -> Point | None:
    """The point of the first group that has a hook not yet finished; None when every hook finished. The
    new revision may not have more than its count of available replicas until that group finishes."""
    for group in hook_groups(hooks, replicas):
        if any(name not in finished for name in group.hooks):
            return group.point
    return None


def runs_when_added(point: Point, new_available: int, *, revision_complete: bool) -> bool:
    """Whether a hook added to the spec while its revision rolls out still runs (DESIGN.md: hooks added
    for points already passed are not run retroactively): only if the revision has not completed and the
    new revision has not gone past its point (``available <= count``)."""
    return not revision_complete and point.count >= new_available


def revision_template(controller_revision: dict[str, Any]) -> dict[str, Any]:
    """The pod template a ControllerRevision records: ``data.spec.template`` without its patch directive
    (what ``kubectl rollout undo`` puts back)."""
    data = controller_revision.get("data") or {}
    template = dict(((data.get("spec") or {}).get("template")) or {})
    template.pop(PATCH_DIRECTIVE, None)
    return template
