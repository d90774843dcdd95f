"""Go durations as Kubernetes and Cluster API write them (``metav1.Duration``, ``nodeDrainTimeout``).

:func:`parse_duration` accepts exactly what Go's ``time.ParseDuration`` accepts: a signed sequence of
decimal numbers, each with an optional fraction and a unit (``ns``, ``us``, ``µs``, ``ms``, ``s``,
``m``, ``h``), or ``"0"``. There is no ``d``: a day is not a Go duration unit. The result is an
integer count of nanoseconds, as Go's ``Duration`` is. :func:`format_duration` prints a count of
nanoseconds as ``Duration.String()`` does (``1h0m0s``, ``1.5s``, ``250ms``).
"""

from __future__ import annotations

NANOSECOND = 1
MICROSECOND = 1000 * NANOSECOND
MILLISECOND = 1000 * MICROSECOND
SECOND = 1000 * MILLISECOND
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE

# Go accepts both the micro sign (U+00B5) and the Greek small letter mu (U+03BC).
UNITS: dict[str, int] = {
    "ns": NANOSECOND,
    "us": MICROSECOND,
    "\u00b5s": MICROSECOND,
    "\u03bcs": MICROSECOND,
    "ms": MILLISECOND,
    "s": SECOND,
    "m": MINUTE,
    "h": HOUR,
}

_MAX = 1 << 63  # the magnitude bound of an int64 (the largest negative duration)

INVALID_MSG = 'time: invalid duration "{text}"'
MISSING_UNIT_MSG = 'time: missing unit in duration "{text}"'
UNKNOWN_UNIT_MSG = 'time: unknown unit "{unit}" in duration "{text}"'


def _leading_int(text: str) -> tuple[int, str, bool]:
    """The leading digits' value, the rest, and whether the value overflowed (``leadingInt``)."""
    i, value = 0, 0
    while i < len(text) and text[i].isascii() and text[i].isdigit():
        value = value * 10 + int(text[i])
        if value > _MAX:
            return 0, "", True
        i += 1
    return value, text[i:], False


def _leading_fraction(text: str) -> tuple[int, float, str]:
    """The fraction's digits as an integer, its scale, and the rest (``leadingFraction``).

    Digits beyond what an int64 holds are consumed but ignored, as Go does.
    """
    i, value, scale, overflow = 0, 0, 1.0, False
    while i < len(text) and text[i].isascii() and text[i].isdigit():
        if not overflow:
            if value > (_MAX - 1) // 10:
                overflow = True
            else:
                candidate = value * 10 + int(text[i])
                if candidate > _MAX:
                    overflow = True
                else:
                    value, scale = candidate, scale * 10
        i += 1
    return value, scale, text[i:]


def parse_duration(text: str) -> int:
    """Nanoseconds in ``text``, parsed exactly as Go's ``time.ParseDuration``; ``ValueError`` otherwise.

    The error message is Go's (``time: invalid duration "1x"``, ``time: missing unit in duration
    "5"``, ``time: unknown unit "d" in duration "1d"``).
    """
    if not isinstance(text, str):
        raise ValueError(INVALID_MSG.format(text=text))
    original, rest, negative = text, text, False
    if rest and rest[0] in "+-":
        negative = rest[0] == "-"
        rest = rest[1:]
    if rest == "0":
        return 0
    if not rest:
        raise ValueError(INVALID_MSG.format(text=original))
    total = 0
    while rest:
        if not (rest[0] == "." or (rest[0].isascii() and rest[0].isdigit())):
            raise ValueError(INVALID_MSG.format(text=original))
        before = len(rest)
        whole, rest, overflow = _leading_int(rest)
        if overflow:
            raise ValueError(INVALID_MSG.format(text=original))
        has_whole = len(rest) != before
        fraction, scale, has_fraction = 0, 1.0, False
        if rest.startswith("."):
            rest = rest[1:]
            before = len(rest)
            fraction, scale, rest = _leading_fraction(rest)
            has_fraction = len(rest) != before
        if not has_whole and not has_fraction:
            raise ValueError(INVALID_MSG.format(text=original))
        i = 0
        while i < len(rest) and rest[i] != "." and not (rest[i].isascii() and rest[i].isdigit()):
            i += 1
        if i == 0:
            raise ValueError(MISSING_UNIT_MSG.format(text=original))
        unit_text, rest = rest[:i], rest[i:]
        unit = UNITS.get(unit_text)
        if unit is None:
            raise ValueError(UNKNOWN_UNIT_MSG.format(unit=unit_text, text=original))
        if whole > _MAX // unit:
            raise ValueError(INVALID_MSG.format(text=original))
        value = whole * unit
        if fraction > 0:
            # Go converts through float64 here; Python floats are the same IEEE doubles.
            value += int(float(fraction) * (float(unit) / scale))
            if value > _MAX:
                raise ValueError(INVALID_MSG.format(text=original))
        total += value
        if total > _MAX:
            raise ValueError(INVALID_MSG.format(text=original))
    if negative:
        return -total
    if total > _MAX - 1:
        raise ValueError(INVALID_MSG.format(text=original))
    return total


def duration_seconds(text: str) -> float:
    """Seconds in a Go duration string (``"1m30s"`` gives 90.0); ``ValueError`` where Go refuses it."""
    return parse_duration(text) / SECOND


def _fraction(value: int, precision: int) -> tuple[int, str]:
    """``fmtFrac``: the whole part and ``.digits`` with trailing zeros dropped (empty when none)."""
    whole, rest = divmod(value, 10**precision)
    digits = f"{rest:0{precision}d}".rstrip("0")
    return whole, ("." + digits) if digits else ""


def format_duration(nanoseconds: int) -> str:
    """``Duration.String()``: ``0s``, ``250ms``, ``1.5s``, ``1m30s``, ``2h0m0s``, ``-5s``."""
    if nanoseconds == 0:
        return "0s"
    sign = "-" if nanoseconds < 0 else ""
    magnitude = abs(nanoseconds)
    if magnitude < SECOND:
        if magnitude < MICROSECOND:
            return f"{sign}{magnitude}ns"
        precision, unit = (3, "\u00b5s") if magnitude < MILLISECOND else (6, "ms")
        whole, fraction = _fraction(magnitude, precision)
        return f"{sign}{whole}{fraction}{unit}"
    seconds, fraction = _fraction(magnitude, 9)
    text = f"{seconds % 60}{fraction}s"
    if seconds >= 60:
        text = f"{(seconds // 60) % 60}m{text}"
    if seconds >= 3600:
        text = f"{seconds // 3600}h{text}"
    return sign + text


def format_seconds(seconds: float) -> str:
    """A number of seconds as ``Duration.String()`` prints it (rounded to the nanosecond)."""
    return format_duration(round(seconds * SECOND))


__all__ = [
    "HOUR",
    "MICROSECOND",
    "MILLISECOND",
    "MINUTE",
    "NANOSECOND",
    "SECOND",
    "UNITS",
    "duration_seconds",
    "format_duration",
    "format_seconds",
    "parse_duration",
]
