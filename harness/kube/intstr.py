"""Int-or-string values (``maxSurge``, ``maxUnavailable``, ``minAvailable``) as apimachinery resolves them.

:func:`scaled_value` is ``intstr.GetScaledValueFromIntOrPercent``: an int is itself; a string must end in
``%`` (``"5"`` is an error, not 5) and its number, read as ``strconv.Atoi`` reads it, is that percent of
a total, rounded up or down as the caller asks. The arithmetic is on integers, which gives exactly the
result upstream's float64 arithmetic gives for every value a workload can hold, without the float.
Errors carry upstream's text (``invalid value for IntOrString: invalid type: string is not a percentage``).
"""

from __future__ import annotations

import re
from typing import Any

_INT64_MAX = (1 << 63) - 1
_ATOI = re.compile(r"[+-]?[0-9]+")
# IsValidPercent's pattern: what validation accepts as a percentage (no sign).
_PERCENT = re.compile(r"[0-9]+%")

NIL_MSG = "nil value for IntOrString"
INVALID_PREFIX = "invalid value for IntOrString: "
NOT_A_PERCENTAGE_MSG = "invalid type: string is not a percentage"
NEITHER_INT_NOR_PERCENT_MSG = "invalid type: neither int nor percentage"
BAD_NUMBER_MSG = 'invalid value "{digits}": strconv.Atoi: parsing "{digits}": {why}'


class IntOrStringError(ValueError):
    """A value ``GetScaledValueFromIntOrPercent`` refuses; ``str()`` is upstream's error text."""


def _atoi(digits: str) -> int:
    """``strconv.Atoi``: an optional sign and decimal digits within int64; ``IntOrStringError`` otherwise."""
    if not _ATOI.fullmatch(digits):
        raise IntOrStringError(INVALID_PREFIX + BAD_NUMBER_MSG.format(digits=digits, why="invalid syntax"))
    number = int(digits)
    if not -_INT64_MAX - 1 <= number <= _INT64_MAX:
        raise IntOrStringError(INVALID_PREFIX + BAD_NUMBER_MSG.format(digits=digits, why="value out of range"))
    return number


def is_int(value: Any) -> bool:
    """Whether ``value`` is the int form of an IntOrString (a JSON integer, not a boolean)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_percent(value: Any) -> bool:
    """Whether ``value`` is a percentage string as validation accepts it (``IsValidPercent``: ``"25%"``)."""
    return isinstance(value, str) and _PERCENT.fullmatch(value) is not None


def percent_of(value: str) -> int:
    """The number of a valid percentage string (``"25%"`` gives 25); ``IntOrStringError`` otherwise."""
    if not is_percent(value):
        raise IntOrStringError(INVALID_PREFIX + NOT_A_PERCENTAGE_MSG)
    return int(value[:-1])


def value_or_default(value: Any, default: Any) -> Any:
    """``intstr.ValueOrDefault``: the value, or ``default`` when it is unset (None)."""
    return default if value is None else value


def scaled_value(value: Any, total: int, *, round_up: bool) -> int:
    """``GetScaledValueFromIntOrPercent``: an int as is; ``"P%"`` as P percent of ``total`` rounded up
    (ceil) or down (floor). None, a string without ``%``, a bad number or another type raise
    :class:`IntOrStringError` with upstream's message."""
    if value is None:
        raise IntOrStringError(NIL_MSG)
    if is_int(value):
        return value
    if isinstance(value, str):
        if not value.endswith("%"):
            raise IntOrStringError(INVALID_PREFIX + NOT_A_PERCENTAGE_MSG)
        product = _atoi(value[:-1]) * total
        return -(-product // 100) if round_up else product // 100
    raise IntOrStringError(INVALID_PREFIX + NEITHER_INT_NOR_PERCENT_MSG)


__all__ = [
    "IntOrStringError",
    "is_int",
    "is_percent",
    "percent_of",
    "scaled_value",
    "value_or_default",
]
