"""IntOrString values as apimachinery resolves them (``intstr.GetScaledValueFromIntOrPercent``): an int
is itself, ``"NN%"`` is NN percent of a total rounded up or down; and the fenceposts each workload kind
derives from ``maxSurge``/``maxUnavailable``."""

from __future__ import annotations

import re
from typing import Any

PERCENT = re.compile(r"^(\d+)%$")
INVALID_VALUE = "invalid value for IntOrString: invalid value {value!r}: must be an int or a percentage"


def is_percent(value: Any) -> bool:
    """Whether ``value`` is a percentage string (``"25%"``)."""
    return isinstance(value, str) and PERCENT.match(value) is not None


def percent_of(value: str) -> int:
    """The number in a percentage string."""
    match = PERCENT.match(value)
    if match is None:
        raise ValueError(INVALID_VALUE.format(value=value))
    return int(match.group(1))


def scaled_value(value: Any, total: int, *, round_up: bool) -> int:
    """An int as is; a percentage of ``total``, rounded up (ceil) or down (floor). Integer arithmetic,
    so 50% of 5 is exactly 3 rounded up and 2 rounded down."""
    if value is None:
        return 0
    if isinstance(value, bool):
        raise ValueError(INVALID_VALUE.format(value=value))
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    percent = percent_of(str(value))
    product = percent * total
    return -(-product // 100) if round_up else product // 100


def deployment_fenceposts(max_surge: Any, max_unavailable: Any, desired: int) -> tuple[int, int]:
    """``ResolveFenceposts``: surge rounds up, unavailable rounds down; both 0 makes unavailable 1 (on
    the theory that surge might not work due to quota)."""
    surge = scaled_value(max_surge, desired, round_up=True)
    unavailable = scaled_value(max_unavailable, desired, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def daemon_set_fenceposts(max_surge: Any, max_unavailable: Any, desired: int) -> tuple[int, int]:
    """A DaemonSet's surge and unavailable node counts: both round UP; both 0 with nodes to run on
    makes unavailable 1 (``updatedDesiredNodeCounts``)."""
    surge = scaled_value(max_surge, desired, round_up=True)
    unavailable = scaled_value(max_unavailable, desired, round_up=True)
    if desired > 0 and surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def stateful_set_max_unavailable(max_unavailable: Any, replicas: int) -> int:
    """A StatefulSet's maxUnavailable: floored (the code, although the field's doc says rounded up),
    at least 1, default 1 (``getStatefulSetMaxUnavailable``)."""
    if max_unavailable is None:
        return 1
    return max(1, scaled_value(max_unavailable, replicas, round_up=False))
