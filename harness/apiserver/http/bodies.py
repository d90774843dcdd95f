"""Request bodies: the size limit, and decoding JSON or YAML into plain JSON-shaped data.

The apiserver reads at most 3 MiB of a body (``MaxRequestBodyBytes``) and answers 413 beyond it;
it decodes ``application/json`` (the default when no Content-Type is sent) and
``application/yaml``, and answers 415 for anything else. YAML is read as sigs.k8s.io/yaml reads
it: converted to JSON, so timestamps stay strings and keys become strings.
"""

from __future__ import annotations

import json
import math
from typing import Any

import yaml
from starlette.requests import Request

from harness.apiserver.http import protobuf
from harness.apiserver.http.negotiation import YAML, parse_media_type
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
YAML_PARSE_ERROR = "error converting YAML to JSON: {}"
PATCH_TYPES = (
    JSON_PATCH_CONTENT_TYPE, MERGE_PATCH_CONTENT_TYPE, STRATEGIC_MERGE_PATCH_CONTENT_TYPE, APPLY_PATCH_CONTENT_TYPE,
)


class _JSONLikeLoader(yaml.SafeLoader):
    """SafeLoader without the timestamp rule: ``2026-01-01T00:00:00Z`` stays a string, as in JSON."""


_JSONLikeLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def too_large() -> errors.StatusError:
    return errors.request_entity_too_large(TOO_LARGE_MESSAGE.format(MAX_BODY_BYTES))


async def read_body(request: Request) -> bytes:
    """The request body, at most :data:`MAX_BODY_BYTES`; larger bodies are a 413 ``Status``."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > DRAIN_LIMIT_BYTES:
        raise too_large()
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size <= MAX_BODY_BYTES:
            chunks.append(chunk)
        elif size > DRAIN_LIMIT_BYTES:
            break
    if size > MAX_BODY_BYTES:
        raise too_large()
    return b"".join(chunks)


def _jsonable(value: Any) -> Any:
    """YAML data as JSON data: keys become strings; binary, sets and non-finite numbers are refused."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if isinstance(key, bool):
                name = "true" if key else "false"
            elif key is None:
                name = "null"
            elif isinstance(key, (str, int, float)):
                name = str(key)
            else:
                raise errors.bad_request(YAML_PARSE_ERROR.format(f"unsupported map key {key!r}"))
            out[name] = _jsonable(item)
        return out
    if isinstance(value, list):
        return [_jsonable(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        raise errors.bad_request(YAML_PARSE_ERROR.format(f"unsupported value: {value}"))
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise errors.bad_request(YAML_PARSE_ERROR.format(f"unsupported value of type {type(value).__name__}"))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"invalid character '{name[0]}' looking for beginning of value")


def parse_json(raw: bytes) -> Any:
    """Decode a JSON body (400 ``BadRequest`` when malformed)."""
    try:
        return json.loads(raw, parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError) as exc:
        raise errors.bad_request(JSON_PARSE_ERROR.format(exc)) from None


def parse_yaml(raw: bytes) -> Any:
    """Decode the first document of a YAML body (JSON is YAML too); 400 when malformed."""
    try:
        document = next(yaml.load_all(raw, Loader=_JSONLikeLoader), None)  # noqa: S506 - a SafeLoader
    except yaml.YAMLError as exc:
        raise errors.bad_request(YAML_PARSE_ERROR.format(str(exc).replace("\n", " "))) from None
    return _jsonable(document)


def decode_object(raw: bytes, content_type: str | None) -> Any:
    """The body of a create or update: JSON (also when no Content-Type is sent), YAML, or
    protobuf for the kinds :mod:`protobuf` knows.

    415 for other media types, 400 for an empty or malformed body."""
    mime = parse_media_type(content_type).mime
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
    return parse_media_type(content_type).mime


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
