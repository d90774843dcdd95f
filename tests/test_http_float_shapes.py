"""The float test the JSON fast paths share (``responses.may_hold_float``) answers as the tests it replaced:
the two substring tests the response encoder made, and at least every text the request decoder's float
regex matched (so no body with a float is taken the fast way)."""

from __future__ import annotations

import random
import re
from typing import Any

import orjson
import pytest

from harness.apiserver.http.responses import _NUMBER_CHARACTERS, _NUMBER_SHAPES, may_hold_float

# The request decoder's former float test (harness/apiserver/http/bodies.py before the shared one).
OLD_FLOAT_TOKEN = re.compile(rb"[:,\[]-?[0-9]+(?:\.[0-9]+(?:[eE][-+]?[0-9]+)?|[eE][-+]?[0-9]+)[,}\]]")
PIECES = ["", "a", "e", "E", ".", "..", ":", ",", "[", "]", "}", "{", "1", "-", "+", "1.5", "e5", "2e-07", " ", "é"]


def _old_response_test(text: bytes) -> bool:
    shapes = text.translate(_NUMBER_SHAPES, _NUMBER_CHARACTERS)
    return b":.:" in shapes or b":..:" in shapes


def _value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth < 4 and roll < 0.25:
        return {"".join(rng.choices(PIECES, k=rng.randrange(0, 4))): _value(rng, depth + 1)
                for _ in range(rng.randrange(0, 4))}
    if depth < 4 and roll < 0.4:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(0, 4))]
    if roll < 0.55:
        return rng.choice([0.5, -2e-07, 1e16, 1.0, -0.0, 3.25e100, 123.456])
    if roll < 0.7:
        return rng.choice([0, -1, 7, 10**15, True, False, None])
    return "".join(rng.choices(PIECES, k=rng.randrange(0, 6)))


@pytest.mark.parametrize("seed", range(20))
def test_the_shared_float_test_answers_as_the_tests_it_replaced(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(300):
        value = _value(rng)
        text = orjson.dumps(value)
        assert may_hold_float(text) == _old_response_test(text)
        if OLD_FLOAT_TOKEN.search(text):
            assert may_hold_float(text)


def test_a_text_with_a_float_value_may_hold_one_and_plain_text_does_not() -> None:
    assert may_hold_float(b'{"a":1.5}') and may_hold_float(b"[1e+23]") and may_hold_float(b'{"a":[-2e-07,1]}')
    assert not may_hold_float(b'{"image":"registry.example/app:1.0","n":12,"v":"1.2.3"}')
