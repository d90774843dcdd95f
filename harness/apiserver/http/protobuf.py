"""Kubernetes protobuf request bodies (``application/vnd.kubernetes.protobuf``), for the kinds
kubectl's typed clients send that way.

kubectl builds some requests with client-go's typed clients, which encode bodies as protobuf and
do not fall back to JSON: the Eviction of ``kubectl drain``, the DeleteOptions of typed deletes,
the objects of ``kubectl create namespace|configmap|secret|pdb``, and the reviews of
``kubectl auth``. Those kinds are decoded here into the JSON shape; any other kind is a 415 naming
the JSON media types. The wire format is the apimachinery protobuf serializer's: the magic prefix
``k8s\\0`` and a ``runtime.Unknown`` envelope (type meta plus the raw message). Field numbers are
those of the kinds' ``generated.proto``.

Non-pointer Go fields are always encoded, so zero values of those decode to absent fields (as
their ``omitempty`` JSON would be); pointer fields (``keep``) keep an explicit zero
(``gracePeriodSeconds: 0`` means "delete now").
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from harness.clock import rfc3339
from harness.kube import errors

PROTOBUF = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"
INVALID_MESSAGE = "invalid protobuf body: {}"

# Field kinds.
STRING = "string"
BYTES = "bytes"
INT = "int"
BOOL = "bool"
MESSAGE = "message"
MAP_STRING = "map<string,string>"
MAP_BYTES = "map<string,bytes>"
TIME = "time"
INT_OR_STRING = "intstr"

_VARINT, _FIXED64, _LENGTH, _FIXED32 = 0, 1, 2, 5


@dataclass(frozen=True)
class Field:
    """One message field: its JSON name, kind, and how it decodes."""

    name: str
    kind: str
    repeated: bool = False
    keep: bool = False  # a Go pointer field: an explicit zero value is kept
    message: dict[int, Field] | None = field(default=None, compare=False)


Schema = dict[int, Field]

TIME_SCHEMA: Schema = {1: Field("seconds", INT), 2: Field("nanos", INT)}
INT_OR_STRING_SCHEMA: Schema = {1: Field("type", INT), 2: Field("intVal", INT), 3: Field("strVal", STRING)}
TYPE_META: Schema = {1: Field("apiVersion", STRING), 2: Field("kind", STRING)}
UNKNOWN: Schema = {
    1: Field("typeMeta", MESSAGE, message=TYPE_META), 2: Field("raw", BYTES), 3: Field("contentEncoding", STRING),
    4: Field("contentType", STRING),
}
OWNER_REFERENCE: Schema = {
    1: Field("kind", STRING), 3: Field("name", STRING), 4: Field("uid", STRING), 5: Field("apiVersion", STRING),
    6: Field("controller", BOOL, keep=True), 7: Field("blockOwnerDeletion", BOOL, keep=True),
}
OBJECT_META: Schema = {
    1: Field("name", STRING), 2: Field("generateName", STRING), 3: Field("namespace", STRING),
    5: Field("uid", STRING), 6: Field("resourceVersion", STRING), 7: Field("generation", INT),
    8: Field("creationTimestamp", TIME), 9: Field("deletionTimestamp", TIME, keep=True),
    10: Field("deletionGracePeriodSeconds", INT, keep=True), 11: Field("labels", MAP_STRING),
    12: Field("annotations", MAP_STRING), 13: Field("ownerReferences", MESSAGE, True, message=OWNER_REFERENCE),
    14: Field("finalizers", STRING, True),
}
PRECONDITIONS: Schema = {1: Field("uid", STRING, keep=True), 2: Field("resourceVersion", STRING, keep=True)}
DELETE_OPTIONS: Schema = {
    1: Field("gracePeriodSeconds", INT, keep=True),
    2: Field("preconditions", MESSAGE, keep=True, message=PRECONDITIONS),
    3: Field("orphanDependents", BOOL, keep=True), 4: Field("propagationPolicy", STRING, keep=True),
    5: Field("dryRun", STRING, True), 6: Field("ignoreStoreReadErrorWithClusterBreakingPotential", BOOL, keep=True),
}
SELECTOR_REQUIREMENT: Schema = {1: Field("key", STRING), 2: Field("operator", STRING), 3: Field("values", STRING, True)}
LABEL_SELECTOR: Schema = {
    1: Field("matchLabels", MAP_STRING), 2: Field("matchExpressions", MESSAGE, True, message=SELECTOR_REQUIREMENT),
}
_META = Field("metadata", MESSAGE, keep=True, message=OBJECT_META)
RESOURCE_ATTRIBUTES: Schema = {
    1: Field("namespace", STRING), 2: Field("verb", STRING), 3: Field("group", STRING), 4: Field("version", STRING),
    5: Field("resource", STRING), 6: Field("subresource", STRING), 7: Field("name", STRING),
}
NON_RESOURCE_ATTRIBUTES: Schema = {1: Field("path", STRING), 2: Field("verb", STRING)}

KINDS: dict[str, Schema] = {
    "DeleteOptions": DELETE_OPTIONS,
    "Eviction": {1: _META, 2: Field("deleteOptions", MESSAGE, keep=True, message=DELETE_OPTIONS)},
    "Namespace": {1: _META, 2: Field("spec", MESSAGE, message={1: Field("finalizers", STRING, True)})},
    "ConfigMap": {
        1: _META, 2: Field("data", MAP_STRING), 3: Field("binaryData", MAP_BYTES),
        4: Field("immutable", BOOL, keep=True),
    },
    "Secret": {
        1: _META, 2: Field("data", MAP_BYTES), 3: Field("type", STRING), 4: Field("stringData", MAP_STRING),
        5: Field("immutable", BOOL, keep=True),
    },
    "PodDisruptionBudget": {
        1: _META,
        2: Field("spec", MESSAGE, message={
            1: Field("minAvailable", INT_OR_STRING, keep=True),
            2: Field("selector", MESSAGE, keep=True, message=LABEL_SELECTOR),
            3: Field("maxUnavailable", INT_OR_STRING, keep=True),
            4: Field("unhealthyPodEvictionPolicy", STRING, keep=True),
        }),
    },
    "Binding": {
        1: _META,
        2: Field("target", MESSAGE, message={
            1: Field("kind", STRING), 2: Field("namespace", STRING), 3: Field("name", STRING), 4: Field("uid", STRING),
            5: Field("apiVersion", STRING), 6: Field("resourceVersion", STRING), 7: Field("fieldPath", STRING),
        }),
    },
    "Scale": {1: _META, 2: Field("spec", MESSAGE, keep=True, message={1: Field("replicas", INT, keep=True)})},
    # kubectl auth can-i / can-i --list / whoami (authorization.k8s.io/v1, authentication.k8s.io/v1).
    "SelfSubjectAccessReview": {1: _META, 2: Field("spec", MESSAGE, message={
        1: Field("resourceAttributes", MESSAGE, keep=True, message=RESOURCE_ATTRIBUTES),
        2: Field("nonResourceAttributes", MESSAGE, keep=True, message=NON_RESOURCE_ATTRIBUTES),
    })},
    "SelfSubjectRulesReview": {1: _META, 2: Field("spec", MESSAGE, message={1: Field("namespace", STRING)})},
    "SelfSubjectReview": {1: _META},
}


class _Malformed(Exception):
    pass


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise _Malformed("truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, raw value) for every field of a message."""
    out = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == _VARINT:
            value, pos = _varint(data, pos)
        elif wire == _LENGTH:
            size, pos = _varint(data, pos)
            if pos + size > len(data):
                raise _Malformed("truncated field")
            value, pos = data[pos:pos + size], pos + size
        elif wire == _FIXED64:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == _FIXED32:
            value, pos = data[pos:pos + 4], pos + 4
        else:
            raise _Malformed(f"unsupported wire type {wire}")
        if pos > len(data):
            raise _Malformed("truncated field")
        out.append((number, wire, value))
    return out


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _text(value: Any) -> str:
    if not isinstance(value, bytes):
        raise _Malformed("expected a length-delimited string")
    try:
        return value.decode()
    except UnicodeDecodeError:
        raise _Malformed("string is not UTF-8") from None


def _map_entry(value: Any, bytes_values: bool) -> tuple[str, Any]:
    entry = {number: raw for number, _, raw in _fields(value)}
    key = _text(entry.get(1, b""))
    raw = entry.get(2, b"")
    return key, base64.b64encode(raw).decode() if bytes_values else _text(raw)


def _scalar(spec: Field, wire: int, value: Any) -> Any:
    if spec.kind == STRING:
        return _text(value)
    if spec.kind == BYTES:
        if not isinstance(value, bytes):
            raise _Malformed("expected bytes")
        return value
    if spec.kind == INT:
        if wire != _VARINT:
            raise _Malformed(f"{spec.name}: expected a varint")
        return _signed(value)
    if spec.kind == BOOL:
        return bool(value)
    if not isinstance(value, bytes):
        raise _Malformed(f"{spec.name}: expected a message")
    if spec.kind == TIME:
        seconds = _signed(_decode(value, TIME_SCHEMA, keep_zero=True).get("seconds", 0))
        return rfc3339(seconds) if seconds else None
    if spec.kind == INT_OR_STRING:
        parts = _decode(value, INT_OR_STRING_SCHEMA, keep_zero=True)
        return parts.get("strVal", "") if parts.get("type") == 1 else parts.get("intVal", 0)
    return _decode(value, spec.message or {})


def _is_zero(value: Any) -> bool:
    return value in ("", 0, False, None, b"") or value == {} or value == []


def _decode(data: bytes, schema: Schema, *, keep_zero: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for number, wire, value in _fields(data):
        spec = schema.get(number)
        if spec is None:
            continue  # a field this table does not know (managedFields, status): dropped
        if spec.kind in (MAP_STRING, MAP_BYTES):
            key, item = _map_entry(value, spec.kind == MAP_BYTES)
            out.setdefault(spec.name, {})[key] = item
        elif spec.repeated:
            out.setdefault(spec.name, []).append(_scalar(spec, wire, value))
        else:
            out[spec.name] = _scalar(spec, wire, value)
    if not keep_zero:
        for number_spec in schema.values():
            name = number_spec.name
            if name in out and not number_spec.keep and _is_zero(out[name]):
                del out[name]
    return out


def decode(raw: bytes, accepted: list[str]) -> dict[str, Any]:
    """The JSON shape of a protobuf-encoded object; 415 (listing ``accepted``) for kinds this
    table does not know, 400 for a malformed body."""
    if not raw.startswith(MAGIC):
        raise errors.bad_request(INVALID_MESSAGE.format("missing the k8s protobuf prefix"))
    try:
        envelope = _decode(raw[len(MAGIC):], UNKNOWN, keep_zero=True)
        type_meta = envelope.get("typeMeta") or {}
        kind = type_meta.get("kind", "")
        schema = KINDS.get(kind)
        if schema is None:
            raise errors.unsupported_media_type(PROTOBUF, accepted)
        obj = _decode(envelope.get("raw", b""), schema)
    except _Malformed as exc:
        raise errors.bad_request(INVALID_MESSAGE.format(exc)) from None
    out: dict[str, Any] = {}
    if type_meta.get("apiVersion"):
        out["apiVersion"] = type_meta["apiVersion"]
    out["kind"] = kind
    out.update(obj)
    return out
