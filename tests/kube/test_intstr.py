"""Scaled int-or-percent values: ``intstr.GetScaledValueFromIntOrPercent``'s results and errors."""

from __future__ import annotations

from typing import Any

import pytest

from harness.kube.intstr import IntOrStringError, is_percent, percent_of, scaled_value, value_or_default


@pytest.mark.parametrize(
    ("value", "total", "round_up", "expected"),
    [
        (3, 10, True, 3),
        (0, 10, False, 0),
        ("50%", 5, True, 3),
        ("50%", 5, False, 2),
        ("50%", 3, True, 2),
        ("34%", 3, True, 2),
        ("33%", 3, False, 0),
        ("25%", 10, True, 3),
        ("25%", 10, False, 2),
        ("100%", 7, True, 7),
        ("0%", 9, True, 0),
        ("1%", 1, True, 1),
        ("1%", 1, False, 0),
        ("200%", 3, True, 6),
        ("-5%", 3, True, 0),
        ("-5%", 3, False, -1),
        ("+10%", 10, True, 1),
        ("29%", 100, True, 29),
    ],
)
def test_an_int_is_itself_and_a_percentage_rounds_as_asked(
    value: Any, total: int, round_up: bool, expected: int
) -> None:
    assert scaled_value(value, total, round_up=round_up) == expected


def test_a_number_string_without_percent_is_an_error_not_a_number() -> None:
    with pytest.raises(IntOrStringError) as info:
        scaled_value("5", 10, round_up=True)
    assert str(info.value) == "invalid value for IntOrString: invalid type: string is not a percentage"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("x%", 'invalid value for IntOrString: invalid value "x": strconv.Atoi: parsing "x": invalid syntax'),
        ("%", 'invalid value for IntOrString: invalid value "": strconv.Atoi: parsing "": invalid syntax'),
        ("1.5%", 'invalid value for IntOrString: invalid value "1.5": strconv.Atoi: parsing "1.5": invalid syntax'),
        (
            "99999999999999999999%",
            'invalid value for IntOrString: invalid value "99999999999999999999": '
            'strconv.Atoi: parsing "99999999999999999999": value out of range',
        ),
        (1.5, "invalid value for IntOrString: invalid type: neither int nor percentage"),
        (True, "invalid value for IntOrString: invalid type: neither int nor percentage"),
        (None, "nil value for IntOrString"),
    ],
)
def test_other_values_raise_upstreams_error_text(value: Any, message: str) -> None:
    with pytest.raises(IntOrStringError) as info:
        scaled_value(value, 10, round_up=True)
    assert str(info.value) == message


def test_the_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        scaled_value("half", 4, round_up=True)


def test_unset_values_take_the_default() -> None:
    assert value_or_default(None, 0) == 0
    assert value_or_default("25%", 0) == "25%"


@pytest.mark.parametrize(("value", "expected"), [("25%", True), ("0%", True), ("5", False), ("-5%", False), (5, False)])
def test_a_percentage_is_digits_followed_by_percent(value: Any, expected: bool) -> None:
    assert is_percent(value) is expected


def test_percent_of_reads_the_number_and_refuses_non_percentages() -> None:
    assert percent_of("40%") == 40
    with pytest.raises(IntOrStringError):
        percent_of("40")
