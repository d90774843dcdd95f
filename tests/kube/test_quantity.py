"""Resource quantities: the suffixes ``resource.ParseQuantity`` accepts, exact values, rounding up."""

from __future__ import annotations

from fractions import Fraction

import pytest

from harness.kube.quantity import FORMAT_WRONG_MSG, milli_value, parse_quantity, value


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", 0),
        ("1", 1),
        ("1Ki", 1024),
        ("1Gi", 2**30),
        ("1.5Gi", 3 * 2**29),
        ("500m", Fraction(1, 2)),
        ("100n", Fraction(1, 10**7)),
        ("2k", 2000),
        ("1M", 10**6),
        ("3E", 3 * 10**18),
        ("1e3", 1000),
        ("1E-2", Fraction(1, 100)),
        ("-1.5", Fraction(-3, 2)),
        ("+.5", Fraction(1, 2)),
        ("5.", 5),
    ],
)
def test_a_quantity_is_its_number_times_its_suffix_exactly(text: str, expected: Fraction | int) -> None:
    assert parse_quantity(text) == expected


@pytest.mark.parametrize("text", ["", "Gi", "1K", "1 Gi", "1.2.3", "1gi", "--1", ".", "1e", "1Gi2"])
def test_a_malformed_quantity_is_refused_with_upstreams_message(text: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_quantity(text)
    assert str(info.value) == FORMAT_WRONG_MSG


def test_value_and_milli_value_round_up() -> None:
    assert value("500m") == 1 and value("1Gi") == 2**30
    assert milli_value("1.5") == 1500 and milli_value("1n") == 1
