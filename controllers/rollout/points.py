"""Progress points (seed 004 ``ProgressPoint``) resolved against the declared replicas, and the groups
hooks run in.

A percentage ``p%`` of ``R`` replicas resolves to ``ceil(p*R/100)`` ("the exact or the closest possible
point right after it"); an int ``n`` to ``n``, clamped to ``R`` when replicas shrank below it (the hook
then runs when the rollout reaches every replica rather than never). Hooks are grouped by their exact
progress value (``n/R`` for ints, ``p/100`` for percentages): equal values form one group and run in
parallel; distinct values that resolve to the same count run in separate groups, lower value first
(DESIGN.md "Rollout decisions").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from harness.kube.intstr import is_percent, percent_of


@dataclass(frozen=True, order=True)
class Point:
    """A resolved progress point: the count of new available replicas and the exact value behind it."""

    count: int
    value: Fraction
    text: str = field(compare=False)


def resolve(point: Any, replicas: int) -> Point:
    """The point ``point`` (int or ``"N%"``) resolves to for ``replicas`` declared replicas."""
    if is_percent(point):
        percent = percent_of(point)
        count = -(-percent * replicas // 100)
        return Point(min(count, replicas), Fraction(percent, 100), str(point))
    number = int(point)
    value = Fraction(number, replicas) if replicas > 0 else Fraction(1 if number else 0)
    return Point(min(number, replicas), value, str(point))


@dataclass
class Group:
    """Hooks that share one exact progress value."""

    point: Point
    names: list[str]


def groups(hooks: list[tuple[str, Any]], replicas: int) -> list[Group]:
    """``(name, progressPoint)`` pairs grouped by exact value, ordered by (count, value)."""
    by_key: dict[tuple[int, Fraction], Group] = {}
    for name, raw in hooks:
        point = resolve(raw, replicas)
        key = (point.count, point.value)
        if key not in by_key:
            by_key[key] = Group(point, [])
        by_key[key].names.append(name)
    return [by_key[k] for k in sorted(by_key)]
