"""Typed decoding of request bodies, as kube-apiserver's decoder does it.

kube-apiserver decodes a built-in object into its versioned Go struct (sigs.k8s.io/json, case
sensitive). Three things a client sees follow from that, and this module reproduces them from the
1.32 schemas (:mod:`harness.apiserver.schemas`):

* a value of the wrong JSON type, an integer out of its Go type's range or a fraction where an
  integer belongs is refused with the Go decoder's message (``json: cannot unmarshal number into
  Go struct field ObjectMeta.metadata.name of type string``);
* fields the struct does not declare are dropped (pruned) and reported as ``unknown field
  "spec.bogus"``; custom resources are pruned by their structural schema instead, with
  ``x-kubernetes-preserve-unknown-fields`` and embedded resources honoured;
* ``fieldValidation``: ``Ignore`` drops unknown fields silently, ``Warn`` (the default) also sends
  one ``Warning`` header per field, ``Strict`` refuses the request (and duplicate JSON keys too).

The ``fieldValidation`` directive and the warnings travel in a :class:`contextvars.ContextVar`,
as upstream's travel in the request context (``warning.AddWarning(ctx, ...)``): the HTTP layer
opens :func:`request_scope` per request, and the storage methods keep their signatures. Outside a
request scope (the in-process world) the directive is Warn and warnings are discarded.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from harness.apiserver import errors, schemas
from harness.apiserver.resources import ResourceType

BODY = "body"  # a create or update body: failures are 400 BadRequest
PATCH = "patch"  # the result of a JSON, merge or strategic patch: failures are 422 on `patch`
SUMMARY_BYTES = 30
IGNORE = "Ignore"
WARN = "Warn"
STRICT = "Strict"
DIRECTIVES = ("", IGNORE, STRICT, WARN)

INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1), "int": (-(2**63), 2**63 - 1)}
QUANTITY_PATTERN = r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
_QUANTITY_RE = re.compile(QUANTITY_PATTERN)
QUANTITY_ERROR = f"quantities must match the regular expression '{QUANTITY_PATTERN}'"
RFC3339_LAYOUT = "2006-01-02T15:04:05Z07:00"
_RFC3339_RE = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
# Root fields every custom resource keeps whatever its schema says.
_CR_ROOT_FIELDS = ("apiVersion", "kind", "metadata")


class DecodeError(Exception):
    """The body does not decode into the kind's Go type; ``str()`` is the Go decoder's message."""


@dataclass
class Scope:
    """One request's decoding options and the warnings it produced."""

    field_validation: str = WARN
    warnings: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)

    def warn(self, text: str) -> None:
        """Record a warning once (identical texts are sent once)."""
        if text not in self.warnings:
            self.warnings.append(text)


_SCOPE: contextvars.ContextVar[Scope | None] = contextvars.ContextVar("decoding_scope", default=None)


@contextlib.contextmanager
def request_scope(field_validation: str = "", raw: bytes | None = None) -> Iterator[Scope]:
    """Decode the writes made inside the block with ``field_validation``; ``raw`` (a JSON body)
    lets Strict and Warn report duplicate keys. Yields the scope, whose ``warnings`` the caller
    turns into ``Warning`` headers."""
    scope = Scope(field_validation or WARN)
    if raw is not None and scope.field_validation != IGNORE:
        scope.duplicates = duplicate_fields(raw)
    token = _SCOPE.set(scope)
    try:
        yield scope
    finally:
        _SCOPE.reset(token)


def current() -> Scope:
    """The active request's scope, or a throwaway Warn scope outside requests."""
    return _SCOPE.get() or Scope()


def strict_problems(unknown: list[str], duplicates: list[str]) -> list[str]:
    """The strict-decoding texts: ``unknown field "a.b"``, ``duplicate field "c"``."""
    return [f'unknown field "{p}"' for p in unknown] + [f'duplicate field "{p}"' for p in duplicates]


# -- Go type rendering -----------------------------------------------------------------------------


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _types(node: dict[str, Any]) -> list[str]:
    kind = node.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [k for k in kind if k != "null"]
    return []


def go_type(node: dict[str, Any]) -> str:
    """The Go type a schema node decodes into, as ``reflect.Type.String`` prints it."""
    ref = schemas.ref_name(node)
    if ref is not None:
        return schemas.go_type_name(ref)
    types = _types(node)
    kind = types[0] if len(types) == 1 else ""
    fmt = node.get("format")
    if kind == "string":
        return "[]uint8" if fmt == "byte" else "string"
    if kind == "integer":
        return fmt if fmt in ("int32", "int64") else "int"
    if kind == "number":
        return "float64"
    if kind == "boolean":
        return "bool"
    if kind == "array":
        return "[]" + go_type(node.get("items") or {})
    if kind == "object" and isinstance(node.get("additionalProperties"), dict):
        return "map[string]" + go_type(node["additionalProperties"])
    return "interface {}"


# -- built-in kinds --------------------------------------------------------------------------------


@dataclass
class _Walk:
    unknown: list[str] = field(default_factory=list)


def _type_error(value: str, struct: str, stack: list[str], go: str) -> DecodeError:
    if struct or stack:
        return DecodeError(
            f"json: cannot unmarshal {value} into Go struct field {struct}.{'.'.join(stack)} of type {go}"
        )
    return DecodeError(f"json: cannot unmarshal {value} into Go value of type {go}")


def _number_literal(value: int | float) -> str:
    return str(value) if isinstance(value, int) else repr(value)


def decode_builtin(api_version: str, kind: str, obj: dict[str, Any]) -> tuple[dict[str, Any], list[str]] | None:
    """Decode ``obj`` as the 1.32 type of ``kind``: a pruned copy and the unknown field paths, or
    None when 1.32 has no such kind. Raises :class:`DecodeError` for a wrong-typed value."""
    name = schemas.definition_name(api_version, kind)
    if name is None:
        return None
    walk = _Walk()
    value = _decode_definition(obj, name, "", [], "", walk)
    return value, walk.unknown


def decode_object_meta(meta: Any, prefix: str) -> tuple[Any, list[str]]:
    """Decode a custom resource's ``metadata`` as ObjectMeta (upstream unmarshals it alone, so
    the error names fields relative to it: ``ObjectMeta.name``); unknown paths get ``prefix``."""
    walk = _Walk()
    value = _decode_definition(meta, schemas.OBJECT_META, "", [], prefix, walk)
    return value, walk.unknown


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _decode_definition(value: Any, name: str, struct: str, stack: list[str], path: str, walk: _Walk) -> Any:
    if value is None:
        return None
    if name == schemas.INT_OR_STRING:
        if isinstance(value, str):
            return value
        return _decode_integer(value, "int32", struct, stack)
    if name == schemas.QUANTITY:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)) or (
            isinstance(value, str) and not _QUANTITY_RE.match(value.strip())
        ):
            raise DecodeError(QUANTITY_ERROR)
        return value
    if name in (schemas.TIME, schemas.MICRO_TIME):
        if not isinstance(value, str):
            raise _type_error(_json_kind(value), struct, stack, "string")
        if not _RFC3339_RE.match(value):
            raise DecodeError(f'parsing time "{value}" as "{RFC3339_LAYOUT}": cannot parse "{value}" as "2006"')
        return value
    node = schemas.definitions().get(name)
    if node is None:
        return value
    properties = node.get("properties")
    if not isinstance(properties, dict):
        return _decode_node(value, node, struct, stack, path, walk)
    if not isinstance(value, dict):
        raise _type_error(_json_kind(value), struct, stack, schemas.go_type_name(name))
    go_struct = schemas.struct_name(name)
    required = node.get("required") or ()
    out: dict[str, Any] = {}
    for key, item in value.items():
        sub = properties.get(key)
        if sub is None:
            walk.unknown.append(_join(path, key))
            continue
        if item is None:
            # null leaves the Go field at its zero value: an optional (omitempty) field is then
            # not written back; a required struct (a Deployment's `template`) becomes empty.
            if key in required and _is_struct(sub):
                out[key] = {}
            continue
        out[key] = _decode_node(item, sub, go_struct, [*stack, key], _join(path, key), walk)
    return out


def _is_struct(node: dict[str, Any]) -> bool:
    ref = schemas.ref_name(node)
    return ref is not None and isinstance(schemas.definitions().get(ref, {}).get("properties"), dict)


def _decode_integer(value: Any, go: str, struct: str, stack: list[str]) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _type_error(_json_kind(value), struct, stack, go)
    low, high = INT_RANGES[go]
    if isinstance(value, float) or not low <= value <= high:
        raise _type_error(f"number {_number_literal(value)}", struct, stack, go)
    return value


def _decode_node(value: Any, node: dict[str, Any], struct: str, stack: list[str], path: str, walk: _Walk) -> Any:
    if value is None:
        return None
    ref = schemas.ref_name(node)
    if ref is not None:
        return _decode_definition(value, ref, struct, stack, path, walk)
    types = _types(node)
    if len(types) != 1:
        return value
    kind = types[0]
    if kind == "string":
        if not isinstance(value, str):
            raise _type_error(_json_kind(value), struct, stack, go_type(node))
        return value
    if kind == "integer":
        return _decode_integer(value, go_type(node), struct, stack)
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _type_error(_json_kind(value), struct, stack, "float64")
        return value
    if kind == "boolean":
        if not isinstance(value, bool):
            raise _type_error(_json_kind(value), struct, stack, "bool")
        return value
    if kind == "array":
        if not isinstance(value, list):
            raise _type_error(_json_kind(value), struct, stack, go_type(node))
        items = node.get("items")
        if not isinstance(items, dict):
            return value
        return [_decode_node(item, items, struct, stack, f"{path}[{i}]", walk) for i, item in enumerate(value)]
    if kind == "object":
        additional = node.get("additionalProperties")
        if not isinstance(additional, dict):
            return value  # RawExtension, FieldsV1: any JSON object
        if not isinstance(value, dict):
            raise _type_error(_json_kind(value), struct, stack, go_type(node))
        return {k: _decode_node(v, additional, struct, stack, _join(path, k), walk) for k, v in value.items()}
    return value


# -- custom resources: structural pruning ----------------------------------------------------------


def prune_custom(obj: dict[str, Any], schema: dict[str, Any] | None) -> tuple[dict[str, Any], list[str]]:
    """Prune a custom resource by its structural ``openAPIV3Schema`` (a copy and the pruned
    paths). ``apiVersion``, ``kind`` and ``metadata`` stay at the root and in embedded resources;
    ``x-kubernetes-preserve-unknown-fields`` keeps what its node does not describe. Metadata is
    decoded as ObjectMeta (wrong types raise :class:`DecodeError`)."""
    unknown: list[str] = []
    out = dict(obj)
    if "metadata" in out:
        out["metadata"], meta_unknown = decode_object_meta(out["metadata"], "metadata")
        unknown.extend(meta_unknown)
    if not schema:
        return out, unknown
    for key in list(out):
        if key in _CR_ROOT_FIELDS:
            continue
        sub = _prune_child(schema, key)
        if sub is None:
            unknown.append(key)
            del out[key]
        else:
            out[key] = _prune(out[key], sub, key, unknown)
    return out, unknown


def _prune_child(schema: dict[str, Any], key: str) -> dict[str, Any] | None:
    properties = schema.get("properties")
    if isinstance(properties, dict) and isinstance(properties.get(key), dict):
        return properties[key]
    additional = schema.get("additionalProperties")
    if isinstance(additional, dict):
        return additional
    if additional is True or schema.get("x-kubernetes-preserve-unknown-fields"):
        return {"x-kubernetes-preserve-unknown-fields": True}
    return None


def _prune(value: Any, schema: dict[str, Any], path: str, unknown: list[str]) -> Any:
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            return [_prune(item, items, f"{path}[{i}]", unknown) for i, item in enumerate(value)]
        return value
    if not isinstance(value, dict):
        return value
    if not isinstance(schema.get("properties"), dict) and not isinstance(schema.get("additionalProperties"), dict) \
            and (schema.get("x-kubernetes-preserve-unknown-fields") or schema.get("additionalProperties") is True):
        return value
    embedded = bool(schema.get("x-kubernetes-embedded-resource"))
    out: dict[str, Any] = {}
    for key, item in value.items():
        if embedded and key in ("apiVersion", "kind"):
            out[key] = item
            continue
        if embedded and key == "metadata":
            out[key], meta_unknown = decode_object_meta(item, _join(path, "metadata"))
            unknown.extend(meta_unknown)
            continue
        sub = _prune_child(schema, key)
        if sub is None:
            unknown.append(_join(path, key))
            continue
        out[key] = _prune(item, sub, _join(path, key), unknown)
    return out


# -- duplicate keys --------------------------------------------------------------------------------


class _Pairs(dict):  # type: ignore[type-arg]
    """A JSON object that remembers which of its keys appeared twice."""

    duplicates: list[str]


def _pairs(items: list[tuple[str, Any]]) -> _Pairs:
    out = _Pairs()
    out.duplicates = []
    for key, value in items:
        if key in out and key not in out.duplicates:
            out.duplicates.append(key)
        out[key] = value
    return out


def duplicate_fields(raw: bytes) -> list[str]:
    """Paths of the keys a JSON body repeats (``metadata.name``, ``spec.containers[0].name``);
    empty for bodies that are not JSON (YAML, protobuf) or do not parse."""
    text = raw.lstrip()
    if not text.startswith(b"{") or b'"' not in text:
        return []
    try:
        parsed = json.loads(text, object_pairs_hook=_pairs)
    except (ValueError, RecursionError):
        return []
    out: list[str] = []
    stack: list[tuple[Any, str]] = [(parsed, "")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, _Pairs):
            out.extend(_join(path, key) for key in value.duplicates)
            stack.extend((v, _join(path, k)) for k, v in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend((v, f"{path}[{i}]") for i, v in reversed(list(enumerate(value))))
    return out


# -- the server's entry points ---------------------------------------------------------------------


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def check_type_meta(kind: str, body: dict[str, Any]) -> None:
    """``apiVersion`` and ``kind`` are read first, into strings; anything else is the
    "unrecognized object" 400 with a summary of the body, as upstream's ``Interpret`` fails."""
    for key in ("apiVersion", "kind"):
        value = body.get(key)
        if value is None or isinstance(value, str):
            continue
        data = _compact(body)
        summary = data[:SUMMARY_BYTES] + " ..." if len(data) > SUMMARY_BYTES else data
        raise errors.bad_request(
            f"the object provided is unrecognized (must be of type {kind}): couldn't get version/kind; "
            f"json parse error: json: cannot unmarshal {_json_kind(value)} into Go struct field .{key} of type "
            f"string ({summary})"
        )


def _failure(rt: ResourceType, body: dict[str, Any], message: str, origin: str) -> errors.StatusError:
    if origin == PATCH:
        return errors.invalid_object("", "", "", [errors.invalid("patch", _compact(body), message)])
    return errors.bad_request(f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: {message}')


def decode(rt: ResourceType, body: dict[str, Any], origin: str = BODY) -> dict[str, Any]:
    """``body`` decoded as ``rt``'s type under the current request's ``fieldValidation``: a pruned
    copy; a wrong type, or an unknown or duplicate field under Strict, raises the Status upstream
    answers (400 for a body, 422 for a patch result); under Warn each problem becomes a warning."""
    scope = current()
    try:
        if rt.custom:
            decoded, unknown = prune_custom(body, rt.schema)
        else:
            result = decode_builtin(rt.api_version, rt.kind, body)
            if result is None:
                return body
            decoded, unknown = result
    except DecodeError as exc:
        raise _failure(rt, body, str(exc), origin) from None
    problems = strict_problems(unknown, scope.duplicates)
    if problems and scope.field_validation == STRICT:
        raise _failure(rt, body, "strict decoding error: " + ", ".join(problems), origin)
    if scope.field_validation == WARN:
        for text in problems:
            scope.warn(text)
    return decoded
