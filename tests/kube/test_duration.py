"""Go durations: parsing is ``time.ParseDuration``'s, printing is ``Duration.String()``'s."""

from __future__ import annotations

import pytest

from harness.kube.duration import (
    HOUR,
    MICROSECOND,
    MILLISECOND,
    MINUTE,
    SECOND,
    duration_seconds,
    format_duration,
    format_seconds,
    parse_duration,
)

MAX = (1 << 63) - 1
MIN = -(1 << 63)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", 0),
        ("-0", 0),
        ("+0", 0),
        ("5s", 5 * SECOND),
        ("30s", 30 * SECOND),
        ("1478s", 1478 * SECOND),
        ("-5s", -5 * SECOND),
        ("+5s", 5 * SECOND),
        ("-0s", 0),
        ("5.0s", 5 * SECOND),
        ("5.6s", 5 * SECOND + 600 * MILLISECOND),
        ("5.s", 5 * SECOND),
        (".5s", 500 * MILLISECOND),
        ("1.004s", 1 * SECOND + 4 * MILLISECOND),
        ("100.00100s", 100 * SECOND + 1 * MILLISECOND),
        ("10ns", 10),
        ("11us", 11 * MICROSECOND),
        ("12\u00b5s", 12 * MICROSECOND),
        ("12\u03bcs", 12 * MICROSECOND),
        ("13ms", 13 * MILLISECOND),
        ("15m", 15 * MINUTE),
        ("16h", 16 * HOUR),
        ("3h30m", 3 * HOUR + 30 * MINUTE),
        ("10.5s4m", 4 * MINUTE + 10 * SECOND + 500 * MILLISECOND),
        ("-2m3.4s", -(2 * MINUTE + 3 * SECOND + 400 * MILLISECOND)),
        ("1h2m3s4ms5us6ns", HOUR + 2 * MINUTE + 3 * SECOND + 4 * MILLISECOND + 5 * MICROSECOND + 6),
        ("39h9m14.425s", 39 * HOUR + 9 * MINUTE + 14 * SECOND + 425 * MILLISECOND),
        ("52763797000ns", 52763797000),
        ("0.3333333333333333333h", 20 * MINUTE),
        ("9007199254740993ns", (1 << 53) + 1),
        ("9223372036854775807ns", MAX),
        ("9223372036854775.807us", MAX),
        ("9223372036s854ms775us807ns", MAX),
        ("-9223372036854775808ns", MIN),
        ("-9223372036854775.808us", MIN),
        ("-2562047h47m16.854775808s", MIN),
        ("0.100000000000000000000h", 6 * MINUTE),
        ("0.830103483285477580700h", 49 * MINUTE + 48 * SECOND + 372539827),
    ],
)
def test_parse_duration_accepts_what_go_accepts(text: str, expected: int) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", 'time: invalid duration ""'),
        ("3", 'time: missing unit in duration "3"'),
        ("-", 'time: invalid duration "-"'),
        ("s", 'time: invalid duration "s"'),
        (".", 'time: invalid duration "."'),
        ("-.", 'time: invalid duration "-."'),
        (".s", 'time: invalid duration ".s"'),
        ("+.s", 'time: invalid duration "+.s"'),
        ("1d", 'time: unknown unit "d" in duration "1d"'),
        ("2w", 'time: unknown unit "w" in duration "2w"'),
        ("1.5", 'time: missing unit in duration "1.5"'),
        ("9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'),
        ("9223372036854775.808us", 'time: invalid duration "9223372036854775.808us"'),
        ("9223372036854ms775us808ns", 'time: invalid duration "9223372036854ms775us808ns"'),
        ("-9223372036854775809ns", 'time: invalid duration "-9223372036854775809ns"'),
    ],
)
def test_parse_duration_refuses_what_go_refuses_with_gos_message(text: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_duration(text)
    assert str(info.value) == message


def test_a_day_is_not_a_go_duration_unit() -> None:
    with pytest.raises(ValueError, match="unknown unit"):
        duration_seconds("1d")


def test_duration_seconds_is_the_parsed_value_in_seconds() -> None:
    assert duration_seconds("1m30s") == 90.0
    assert duration_seconds("250ms") == 0.25
    assert duration_seconds("1500us") == 0.0015


@pytest.mark.parametrize(
    ("nanoseconds", "text"),
    [
        (0, "0s"),
        (1, "1ns"),
        (1100 * 1, "1.1\u00b5s"),
        (2200 * MICROSECOND, "2.2ms"),
        (3300 * MILLISECOND, "3.3s"),
        (4 * MINUTE + 5 * SECOND, "4m5s"),
        (4 * MINUTE + 5001 * MILLISECOND, "4m5.001s"),
        (5 * HOUR + 6 * MINUTE + 7001 * MILLISECOND, "5h6m7.001s"),
        (8 * MINUTE + 1, "8m0.000000001s"),
        (2 * HOUR, "2h0m0s"),
        (-5 * SECOND, "-5s"),
        (MAX, "2562047h47m16.854775807s"),
        (MIN, "-2562047h47m16.854775808s"),
    ],
)
def test_format_duration_prints_as_go_duration_string(nanoseconds: int, text: str) -> None:
    assert format_duration(nanoseconds) == text


def test_format_seconds_round_trips_through_parse() -> None:
    assert format_seconds(90) == "1m30s"
    assert duration_seconds(format_seconds(3601.5)) == 3601.5
