"""The fenceposts each workload kind derives from ``maxSurge``/``maxUnavailable``, resolved with
apimachinery's scaled int-or-percent (:func:`harness.kube.intstr.scaled_value`)."""

from __future__ import annotations

from typing import Any

from harness.kube.intstr import scaled_value, value_or_default


def deployment_fenceposts(max_surge: Any, max_unavailable: Any, desired: int) -> tuple[int, int]:
    """``ResolveFenceposts``: unset values are 0, surge rounds up, unavailable rounds down; both 0 makes
    unavailable 1 (on the theory that surge might not work due to quota)."""
    surge = scaled_value(value_or_default(max_surge, 0), desired, round_up=True)
    unavailable = scaled_value(value_or_default(max_unavailable, 0), desired, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def daemon_set_fenceposts(max_surge: Any, max_unavailable: Any, desired: int) -> tuple[int, int]:
    """A DaemonSet's surge and unavailable node counts: unset values are 0, both round UP; both 0 with
    nodes to run on makes unavailable 1 (``updatedDesiredNodeCounts``)."""
    surge = scaled_value(value_or_default(max_surge, 0), desired, round_up=True)
    unavailable = scaled_value(value_or_default(max_unavailable, 0), desired, round_up=True)
    if desired > 0 and surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def stateful_set_max_unavailable(max_unavailable: Any, replicas: int) -> int:
    """A StatefulSet's maxUnavailable: floored (the code, although the field's doc says rounded up),
    at least 1, default 1 (``getStatefulSetMaxUnavailable``)."""
    if max_unavailable is None:
        return 1
    return max(1, scaled_value(max_unavailable, replicas, round_up=False))
