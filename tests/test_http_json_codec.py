"""The facade's JSON encoding and body decoding take orjson's fast path only where its result is
byte for byte (or value for value) what the exact json path gives; everything else goes the exact way."""

from __future__ import annotations

import dataclasses
import datetime
import json
from typing import Any

import pytest

from harness.apiserver import decoding, parsing
from harness.apiserver.http import bodies
from harness.apiserver.http.responses import encode
from harness.kube import errors


def _exact(body: Any) -> bytes:
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


@dataclasses.dataclass
class _Data:
    a: int


ENCODED_ALIKE = [
    {"metadata": {"name": "p", "labels": {"app": "x"}}, "spec": {"containers": [{"image": "app:1.0"}]}},
    {"text": "\x00\x01\x1f\x7f\u2028\u2029\"\\/\b\f\n\r\t é 😀"},
    {"floats": [1e-05, 1e16, 0.1, 1e15, -2.5e-300, 123456789.123, 5e-324, 1.7976931348623157e308]},
    {"float": 1.0, "negative": -0.0, "exp": 1e100},
    {"ints": [0, -1, 2**63 - 1, -(2**63), 2**64 - 1, 2**64, -(2**64), 10**30]},
    {"nothing": None, "text": "null", "yes": True, "no": False},
    {"a string that looks like a float": ":1.5,", "another": "[1e5]"},
    {1: "int key", False: "bool key", None: "none key", 2.5: "float key"},
    {"tuple": (1, 2, "x"), "empty": {}, "list": []},
    {"deep": [[[{"a": [1, {"b": 2.5}]}]]]},
]


@pytest.mark.parametrize("body", ENCODED_ALIKE)
def test_encode_writes_the_bytes_json_dumps_writes(body: Any) -> None:
    assert encode(body) == _exact(body)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_encode_refuses_nan_and_infinities_as_json_does(value: float) -> None:
    with pytest.raises(ValueError):
        encode({"metadata": {"value": value}})


@pytest.mark.parametrize("value", [datetime.datetime(2026, 1, 1), _Data(1), {1, 2}, object()])
def test_encode_refuses_what_json_cannot_encode(value: Any) -> None:
    with pytest.raises(TypeError):
        encode({"value": value})


def test_encode_of_a_lone_surrogate_fails_as_before() -> None:
    with pytest.raises(UnicodeEncodeError):
        encode({"value": "\ud800"})


def test_encode_of_a_non_object_body_is_json_dumps() -> None:
    assert encode([1.5e-7, None]) == _exact([1.5e-7, None])
    assert encode("x") == b'"x"'


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
