"""Deliberately wrong rollout controllers: the reference's, each with one plausible bug against one rule
of seed 004. Loaded as a pytest plugin (``-p tests.wrong_controllers.rollout_variants``) in a child
process, it patches the reference before any world starts; ``LIFECYCLE_TCK_WRONG`` names the variant.

- ``parallel-groups``: hooks whose points resolve to the same count run as one group (RH_ORDER_001 says
  two values are two groups, the lower first);
- ``no-pause``: the rollout keeps scaling while a hook group runs (DESIGN.md's auto-pause);
- ``no-cap``: the new revision is not held at the next pending point (seed 004 "Algorithm" step 1);
- ``abort-ignored``: a failed Abort hook does not stop the rollout (seed 004 "Algorithm" step 3.1).
"""

from __future__ import annotations

import os
from typing import Any

from controllers.rollout import (
    hooks,
    points,
)

VARIANT = os.environ.get("LIFECYCLE_TCK_WRONG", "")


def _merged_groups(pairs: list[tuple[str, Any]], replicas: int) -> list[points.Group]:
    merged: list[points.Group] = []
    for group in points.groups(pairs, replicas):
        if merged and merged[-1].point.count == group.point.count:
            merged[-1].names.extend(group.names)
        else:
            merged.append(points.Group(group.point, list(group.names)))
    return merged


_evaluate = hooks.HookRunner.evaluate


def _evaluate_no_pause(self: hooks.HookRunner, *args: Any, **kwargs: Any) -> hooks.Gate:
    gate = _evaluate(self, *args, **kwargs)
    if gate.running:
        gate.frozen = False
        gate.cap = None
    return gate


def _evaluate_no_cap(self: hooks.HookRunner, *args: Any, **kwargs: Any) -> hooks.Gate:
    gate = _evaluate(self, *args, **kwargs)
    gate.cap = None
    return gate


def _evaluate_abort_ignored(self: hooks.HookRunner, *args: Any, **kwargs: Any) -> hooks.Gate:
    gate = _evaluate(self, *args, **kwargs)
    if gate.aborted:
        gate.frozen = False
        gate.cap = None
    return gate


if VARIANT == "parallel-groups":
    hooks.groups = _merged_groups  # type: ignore[assignment]
elif VARIANT == "no-pause":
    hooks.HookRunner.evaluate = _evaluate_no_pause  # type: ignore[method-assign]
elif VARIANT == "no-cap":
    hooks.HookRunner.evaluate = _evaluate_no_cap  # type: ignore[method-assign]
elif VARIANT == "abort-ignored":
    hooks.HookRunner.evaluate = _evaluate_abort_ignored  # type: ignore[method-assign]
elif VARIANT:
    raise ValueError(f"unknown wrong controller {VARIANT!r}")
