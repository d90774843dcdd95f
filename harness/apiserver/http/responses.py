"""Responses: compact JSON bodies and Kubernetes ``Status`` errors.

Every error leaves as a ``Status`` with ``Content-Type: application/json`` exactly (lightkube
only recognises an API error by that header value), and carries the error's own headers
(``Retry-After``).
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

import orjson
from starlette.responses import Response

from harness.apiserver.managedfields import SharedFields
from harness.kube import errors
from harness.kube.names.meta import JSON_CONTENT_TYPE as JSON

log = logging.getLogger("lifecycle_tck.http")

NOT_FOUND_MESSAGE = "the server could not find the requested resource"
METHOD_NOT_ALLOWED_MESSAGE = "the server does not allow this method on the requested resource"
UNAUTHORIZED_MESSAGE = "Unauthorized"


def encode(body: Any) -> bytes:
    """Compact JSON on one line (watch framing depends on it); NaN and infinities are refused.

    The bytes are always :func:`encode_exact`'s. orjson writes them some ten times faster, and its
    text is taken when it is provably the same: see :func:`_fast_text`. The proof reads the text back,
    which for a long list (past :data:`FAST_LIST_ITEMS` items) costs more than json.dumps itself."""
    kind = type(body)
    if kind is dict:
        items = body.get("items")
        fast = type(items) is not list or len(items) <= FAST_LIST_ITEMS
    else:
        fast = kind is list and len(body) <= FAST_LIST_ITEMS
    if fast:
        text = _fast_text(body)
        if text is not None:
            return text
    return encode_exact(body)


def encode_exact(body: Any) -> bytes:
    """The standard library's compact JSON of ``body``, as UTF-8 (ValueError for NaN and infinities,
    TypeError for what is not JSON data)."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


# Up to this many items, a list (or a List's ``items``) of Pods is written faster the orjson way, proof
# included (some 25 µs a running Pod against json's 31 at 64 items; at 256 items they are even, past it
# json is faster).
FAST_LIST_ITEMS = 64
# orjson encodes subclasses of str, int, dict and list itself; json reads a dict subclass through its
# ``items()``. With this option they are handed to ``_plain`` instead, which lets through the one the
# server writes (the managedFields trees, a plain dict subclass) and refuses the rest; datetimes and
# dataclasses, which json refuses, are refused too.
_FAST_OPTIONS = orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
# Outside strings, orjson's compact text holds punctuation, numbers, true, false and null. With the digits
# and signs deleted and every ``.``, ``e`` and ``E`` turned into ``.``, a float (``1.5``, ``-2e-07``,
# ``1e16``) becomes one or two dots between punctuation; mapping the punctuation around a value to ``:``
# leaves ``:.:`` or ``:..:`` to look for (inside a string the same bytes may turn up: the exact encoder
# then runs, no harm done).
_NUMBER_SHAPES = bytes.maketrans(b"eE,[]}", b"..::::")
_NUMBER_CHARACTERS = b"0123456789-+"


def may_hold_float(text: bytes) -> bool:
    """False when orjson's compact ``text`` holds no float; True when it may (a float in a string
    can look like one: the caller then takes the exact path)."""
    return _FLOAT_SHAPE.search(text.translate(_NUMBER_SHAPES, _NUMBER_CHARACTERS)) is not None


# ``:.:`` or ``:..:`` in one scan (two ``in`` tests cost some 2.5 times as much on a running Pod's text, where
# colons abound).
_FLOAT_SHAPE = re.compile(rb":\.\.?:")


def _plain(value: Any) -> Any:
    if type(value) is SharedFields:
        return dict(value)  # not overriding ``items()``: json writes what ``dict(value)`` holds
    raise TypeError


def _fast_text(body: dict[str, Any] | list[Any]) -> bytes | None:
    """orjson's compact text of ``body`` when it is, byte for byte, what :func:`encode_exact` writes;
    else None.

    The two write strings alike (non-ASCII as UTF-8; ``"``, ``\\``, ``\\n``, ``\\r``, ``\\t``, ``\\b``,
    ``\\f`` with a backslash, other control characters as lowercase ``\\u00XX``; every code point is
    compared in tests/test_http_json_codec.py), integers, booleans, null, and dicts and lists
    in their order. They differ on floats (``1e-05`` is ``1e-5`` to orjson), so a text holding
    anything like a float is not taken; on what json refuses and orjson writes (NaN and infinities
    as null, enum members without a str or int mixin, UUIDs, tuples as lists): then the text, read
    back, is not equal to ``body``; and on what orjson refuses (an integer past 64 bits, a key
    that is no string, a lone surrogate, nesting past 255), which the exact encoder then decides."""
    try:
        text = orjson.dumps(body, default=_plain, option=_FAST_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError
        return None
    if may_hold_float(text):
        return None
    if orjson.loads(text) != body:
        return None
    return text


def json_response(
    body: Any, status_code: int = 200, *, headers: dict[str, str] | None = None, media_type: str = JSON
) -> Response:
    """A JSON response whose Content-Type is ``media_type`` exactly (no charset is added); the body
    ends with a newline, as the apiserver's JSON encoder writes it."""
    content = encode(body) + b"\n"
    if headers is None and media_type == JSON and status_code >= 200 and status_code not in (204, 304):
        # What Response.__init__ builds for this case (its body, then Content-Length and
        # Content-Type in that order), built directly: some 2 µs a response.
        response = Response.__new__(Response)
        response.status_code = status_code
        response.media_type = JSON
        response.background = None
        response.body = content
        response.raw_headers = [(b"content-length", str(len(content)).encode("latin-1")), _JSON_CONTENT_TYPE]
        return response
    return Response(content, status_code=status_code, headers=headers, media_type=media_type)


_JSON_CONTENT_TYPE = (b"content-type", JSON.encode("latin-1"))


def status_response(err: errors.StatusError) -> Response:
    """The error's ``Status`` with its HTTP code and headers."""
    return json_response(err.status, err.code, headers=dict(err.headers))


def path_not_found() -> errors.StatusError:
    """404 for a path no handler serves, as the apiserver's not-found handler writes it."""
    return errors.StatusError(errors.status(404, "NotFound", NOT_FOUND_MESSAGE))


def method_not_allowed() -> errors.StatusError:
    """405 for a verb the addressed resource does not serve."""
    return errors.method_not_allowed(METHOD_NOT_ALLOWED_MESSAGE)


def unauthorized() -> errors.StatusError:
    """401 for a request without the expected bearer token."""
    return errors.StatusError(errors.status(401, "Unauthorized", UNAUTHORIZED_MESSAGE))


def internal_error(exc: BaseException) -> Response:
    """500 ``InternalError`` for a bug on our side; the traceback goes to the log, not the client."""
    log.error("unhandled error while serving a request", exc_info=exc)
    return status_response(errors.internal(f"{type(exc).__name__}: {exc}"))


WARNING_HEADER = "Warning"


def warning_value(text: str) -> str:
    """A ``Warning`` header value as kube-apiserver writes it: code 299, agent ``-`` and the text
    quoted, with ``"`` and ``\\`` escaped (``NewWarningHeader``)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{escaped}"'
