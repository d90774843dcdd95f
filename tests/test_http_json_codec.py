"""The facade's body decoding takes orjson's fast path only where its value is the exact decoder's
value; everything else, errors included, goes the exact way."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.apiserver import decoding, parsing
from harness.apiserver.http import bodies
from harness.kube import errors

DECODED_ALIKE = [
    b'{"metadata":{"name":"p","annotations":{"a":"x:y"}},"spec":{"containers":[{"image":"app:1.0"}]}}',
    b' {"a" : [1, -2, 9223372036854775807, 18446744073709551615, true, false, null]}\n',
    b'{"big":18446744073709551616,"small":-9223372036854775809,"huge":1' + b"0" * 400 + b"}",
    b'{"f":1.5,"e":1e5,"E":1.5E+3,"tiny":5e-324,"neg":-0.0}',
    b'{"f":1e400}',
    b'{"f":NaN}',
    b'{"s":"\\ud800"}',
    b'{"s":"\\ud83d\\ude00 \\u003a \\/ \\n"}',
    b'{"s":"\xff"}',
    b'{"s":"\t"}',
    b'\xef\xbb\xbf{}',
    b'[' * 99 + b']' * 99,
    b'{"a":' * 60 + b'{}' + b'}' * 60 + b'[' * 50 + b']' * 50,
    b'[' * 101 + b']' * 101,
    b'{"a":1}{"b":2}',
    b'{"a":1,}',
    b'"text"',
    b'12',
    b'{"a":1,"a":2,"b":{"c":1,"c":{"d":3}}}',
]


def _outcome(decode: Any, raw: bytes) -> Any:
    try:
        return ("value", repr(decode(raw)))
    except errors.StatusError as err:
        return ("status", err.code, err.status)


@pytest.mark.parametrize("raw", DECODED_ALIKE)
def test_parse_json_reads_what_the_exact_decoder_reads(raw: bytes) -> None:
    def exact(text: bytes) -> Any:
        try:
            return parsing.loads_json(text)
        except parsing.NumberRangeError as exc:
            raise errors.bad_request(str(exc)) from None
        except parsing.DecodeError as exc:
            raise errors.bad_request(bodies.JSON_PARSE_ERROR.format(exc)) from None

    assert _outcome(bodies.parse_json, raw) == _outcome(exact, raw)


DUPLICATE_FREE = [
    b'{"metadata":{"name":"p","annotations":{"a":"x:y","b":"::"}},"spec":{"containers":[{"image":"app:1.0"}]}}',
    b'{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}',
]
WITH_DUPLICATES = [
    b'{"a":1,"a":2}',
    b'{"a":"x:y","a":"z"}',
    b'{"metadata":{"labels":{"k":"1","k":"2"}},"spec":{}}',
    b'{"s":[{"name":"a","name":"b"}]}',
]


@pytest.mark.parametrize("raw", DUPLICATE_FREE)
def test_a_body_without_repeated_keys_is_shown_so_cheaply(raw: bytes) -> None:

    assert bodies.without_duplicate_keys(raw)
    assert decoding.duplicate_fields(raw) == []


@pytest.mark.parametrize("raw", [*WITH_DUPLICATES, b'{"a\\u003a":"b","c":1}', b'{"a":1.5}', b"a: b", b"{"])
def test_a_body_with_repeated_keys_or_unsure_is_left_to_the_exact_check(raw: bytes) -> None:

    assert not bodies.without_duplicate_keys(raw)


@pytest.mark.parametrize("raw", WITH_DUPLICATES)
def test_repeated_keys_are_still_found(raw: bytes) -> None:

    assert decoding.duplicate_fields(raw)


def test_the_value_decoded_for_the_duplicate_check_is_handed_out_once() -> None:
    raw = b'{"metadata":{"name":"p"},"spec":{"containers":[{"image":"app:1.0"}]}}'
    assert bodies.without_duplicate_keys(raw)
    first = bodies.parse_json(raw)
    first["spec"]["containers"].clear()  # what a write path may do to the body it was given
    second = bodies.parse_json(raw)
    assert first is not second
    assert second == json.loads(raw)
