"""Request bodies: the size limit, and decoding JSON or YAML into plain JSON-shaped data.

The apiserver reads at most 3 MiB of a body (``MaxRequestBodyBytes``) and answers 413 beyond it;
it decodes ``application/json`` (the default when no Content-Type is sent) and
``application/yaml``, and answers 415 for anything else. YAML is read as sigs.k8s.io/yaml reads
it: converted to JSON, so timestamps stay strings and keys become strings. Both decoders are
bounded (depth, number range, YAML aliasing: harness/apiserver/parsing.py).
"""

from __future__ import annotations

import functools
import threading
from typing import Any

import orjson
from starlette.requests import ClientDisconnect, Request

from harness.apiserver import parsing
from harness.apiserver.http import protobuf
from harness.apiserver.http.negotiation import YAML, parse_media_type
from harness.apiserver.http.responses import may_hold_float
from harness.kube import errors
from harness.kube.names.meta import (
    APPLY_PATCH_CONTENT_TYPE,
    JSON_PATCH_CONTENT_TYPE,
    MERGE_PATCH_CONTENT_TYPE,
    STRATEGIC_MERGE_PATCH_CONTENT_TYPE,
)
from harness.kube.names.meta import JSON_CONTENT_TYPE as JSON

MAX_BODY_BYTES = 3 * 1024 * 1024
TOO_LARGE_MESSAGE = "Request entity too large: limit is {}"
# Past the limit the rest of an upload is read and dropped (so the client sees the 413 rather
# than a reset connection), but only up to this much.
DRAIN_LIMIT_BYTES = 64 * 1024 * 1024
OBJECT_MEDIA_TYPES = [JSON, YAML]
EMPTY_BODY_MESSAGE = "Object 'Kind' is missing in ''"
JSON_PARSE_ERROR = "couldn't get version/kind; json parse error: {}"
PATCH_TYPES = (
    JSON_PATCH_CONTENT_TYPE, MERGE_PATCH_CONTENT_TYPE, STRATEGIC_MERGE_PATCH_CONTENT_TYPE, APPLY_PATCH_CONTENT_TYPE,
)


def too_large() -> errors.StatusError:
    return errors.request_entity_too_large(TOO_LARGE_MESSAGE.format(MAX_BODY_BYTES))


async def read_body(request: Request) -> bytes:
    """The request body, at most :data:`MAX_BODY_BYTES`; larger bodies are a 413 ``Status``."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > DRAIN_LIMIT_BYTES:
        raise too_large()
    # The ASGI messages read here directly, as Request.stream() reads them (without its async
    # generator, a few µs a write): body chunks until one says no more follows; a disconnect is
    # Starlette's ClientDisconnect.
    receive = request.receive
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnect()
        if message["type"] != "http.request":
            continue
        chunk = message.get("body", b"")
        size += len(chunk)
        if size <= MAX_BODY_BYTES:
            chunks.append(chunk)
        elif size > DRAIN_LIMIT_BYTES:
            break
        if not message.get("more_body", False):
            break
    if size > MAX_BODY_BYTES:
        raise too_large()
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _fast_json(raw: bytes) -> tuple[Any, bytes] | None:
    """(value, orjson's compact re-encoding of it) when orjson reads ``raw`` exactly as
    :func:`parsing.loads_json` would, else None (the exact decoder then decides, errors included).

    orjson decodes a Pod in a fifth of json's time (issue 16). Where the two could differ it is not
    trusted: fewer brackets than the depth limit (so nesting cannot reach it), an object or array at
    the top, and no float in the value (orjson parses floats itself, and reads integers past 64 bits
    as floats). Invalid UTF-8, lone surrogate escapes, NaN and infinities make orjson fail, and
    json's handling of them stands."""
    if type(raw) is not bytes or raw.count(b"{") + raw.count(b"[") >= parsing.MAX_DEPTH:
        return None
    try:
        value = orjson.loads(raw)
        if type(value) is not dict and type(value) is not list:
            return None
        text = orjson.dumps(value)
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):
        return None
    if may_hold_float(text):
        return None
    return value, text


# The value :func:`without_duplicate_keys` decoded, with the very body (``is``) it came from, for
# :func:`parse_json` to take once; per thread, as each server's requests run on its own thread.
_decoded = threading.local()


def without_duplicate_keys(raw: bytes) -> bool:
    """True when ``raw`` is a JSON text none of whose objects repeats a key (so the decoding
    scope's duplicate check, :func:`decoding.duplicate_fields`, finds nothing); False when that is
    not shown cheaply (the exact check then runs).

    Every key is followed by a colon, and outside strings nothing else is. Without ``\\u`` escapes
    (one could spell a colon) the body's strings hold as many colons as orjson's re-encoding of
    them, so the body has more colons than that re-encoding exactly when a repeated key (and its
    value) was dropped while decoding."""
    if b"\\u" in raw:
        return False
    fast = _fast_json(raw)
    if fast is None:
        return False
    _decoded.last = (raw, fast[0])  # the body's own decoding takes it (once) rather than decode again
    return raw.count(b":") == fast[1].count(b":")


def parse_json(raw: bytes) -> Any:
    """Decode a JSON body, bounded as the apiserver's decoder is (harness/apiserver/parsing.py):
    400 ``BadRequest`` when malformed, nested too deep, or holding a number past float64."""
    last = getattr(_decoded, "last", None)
    if last is not None and last[0] is raw:
        _decoded.last = None
        return last[1]
    fast = _fast_json(raw)
    if fast is not None:
        return fast[0]
    try:
        return parsing.loads_json(raw)
    except parsing.NumberRangeError as exc:
        raise errors.bad_request(str(exc)) from None
    except parsing.DecodeError as exc:
        raise errors.bad_request(JSON_PARSE_ERROR.format(exc)) from None


def parse_yaml(raw: bytes) -> Any:
    """Decode the first document of a YAML body (JSON is YAML too); 400 when malformed, nested too
    deep, or aliased beyond go-yaml's budget (a few hundred bytes must not become megabytes)."""
    try:
        return parsing.loads_yaml(raw)
    except parsing.DecodeError as exc:
        raise errors.bad_request(str(exc)) from None


@functools.lru_cache(maxsize=256)
def media_type_of(content_type: str | None) -> str:
    """The media type of a ``Content-Type`` value, without its parameters (worked out once per value:
    a client sends the same one with each write)."""
    return parse_media_type(content_type).mime


def decode_object(raw: bytes, content_type: str | None) -> Any:
    """The body of a create or update: JSON (also when no Content-Type is sent), YAML, or
    protobuf for the kinds :mod:`protobuf` knows.

    415 for other media types, 400 for an empty or malformed body."""
    mime = media_type_of(content_type)
    if mime not in ("", JSON, YAML, protobuf.PROTOBUF):
        raise errors.unsupported_media_type(mime, OBJECT_MEDIA_TYPES)
    if not raw.strip():
        raise errors.bad_request(EMPTY_BODY_MESSAGE)
    if mime == protobuf.PROTOBUF:
        return protobuf.decode(raw, OBJECT_MEDIA_TYPES)
    return parse_yaml(raw) if mime == YAML else parse_json(raw)


def decode_optional(raw: bytes, content_type: str | None) -> Any:
    """An optional body (DeleteOptions): None when empty, else as :func:`decode_object`."""
    if not raw.strip():
        return None
    return decode_object(raw, content_type)


def patch_type(content_type: str | None) -> str:
    """The patch type a PATCH request names (its media type without parameters)."""
    return media_type_of(content_type)


def decode_patch(raw: bytes, content_type: str | None) -> Any:
    """The body of a PATCH: JSON for the three JSON patch types, YAML or JSON for apply.

    Unknown patch types decode to None: the resource decides the 415 and its accepted list."""
    kind = patch_type(content_type)
    if kind not in PATCH_TYPES:
        return None
    if not raw.strip():
        raise errors.bad_request(EMPTY_BODY_MESSAGE)
    if kind == APPLY_PATCH_CONTENT_TYPE:
        return parse_yaml(raw)
    return parse_json(raw)
