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

import orjson

from harness.apiserver import schemas
from harness.apiserver.resources import ResourceType
from harness.kube import errors
from harness.kube.objects import JsonMemo, clone, kept_json, same_json

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
    raw: bytes | None = None  # the request body, for the summary of an unrecognized object

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
    scope = Scope(field_validation or WARN, raw=raw)
    if raw is not None and scope.field_validation != IGNORE:
        scope.duplicates = duplicate_fields(raw)
    token = _SCOPE.set(scope)
    try:
        yield scope
    finally:
        _SCOPE.reset(token)


def request_repeats_keys() -> bool:
    """Whether the current request's body repeats a key: every decode in it (a write the request makes
    on its way, too) then reports the duplicates under Strict and Warn."""
    scope = _SCOPE.get()
    return scope is not None and bool(scope.duplicates)


def current() -> Scope:
    """The active request's scope, or a throwaway Warn scope outside requests."""
    return _SCOPE.get() or Scope()


def strict_problems(unknown: list[str], duplicates: list[str]) -> list[str]:
    """The strict-decoding texts: ``unknown field "a.b"``, ``duplicate field "c"``."""
    return [f'unknown field "{p}"' for p in unknown] + [f'duplicate field "{p}"' for p in duplicates]


# -- Go type rendering -----------------------------------------------------------------------------


def json_kind(value: Any) -> str:
    """The JSON kind Go's decoder names in an ``UnmarshalTypeError`` (``number``, ``object``, ``null``...)."""
    if value is None:
        return "null"
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


# Compiled schema nodes: what a decode needs of a schema node, worked out once per node (the
# definitions are fixed), so decoding an object costs a walk over its values only.
_STRUCT, _STRING, _INTEGER, _NUMBER, _BOOLEAN, _ARRAY, _MAP, _ANY = range(8)
_INT_OR_STRING, _QUANTITY, _TIME = range(8, 11)
_SPECIAL = {schemas.INT_OR_STRING: _INT_OR_STRING, schemas.QUANTITY: _QUANTITY, schemas.TIME: _TIME,
            schemas.MICRO_TIME: _TIME}


class _Node:
    """One schema node, compiled: its shape, its Go type's name, and its children."""

    __slots__ = ("shape", "go", "struct", "required", "zero_struct", "low", "high", "memo", "_source",
                 "_properties", "_leaves", "_item")

    def __init__(self, shape: int, go: str, source: dict[str, Any] | None = None, struct: str = "") -> None:
        self.shape = shape
        self.go = go
        self.struct = struct  # the Go struct name, for a struct
        self._source = source
        self._properties: dict[str, _Node] | None = None
        # A struct's string and boolean fields by name: the exact class a value of each must have to be
        # taken as it is (set with the properties).
        self._leaves: dict[str, type] = {}
        self._item: _Node | None = None
        self.required: frozenset[str] = frozenset((source or {}).get("required") or ()) if shape == _STRUCT \
            else frozenset()
        self.zero_struct = False  # set on a property: null becomes {} (a required struct field)
        # An integer's Go range (for the other shapes, an empty one: nothing is in it).
        self.low, self.high = INT_RANGES.get(go, (0, -1)) if shape == _INTEGER else (0, -1)
        self.memo = struct in _MEMO_STRUCTS or (shape == _ARRAY and go in _MEMO_LISTS)

    @property
    def properties(self) -> dict[str, _Node]:
        if self._properties is None:
            props = (self._source or {}).get("properties") or {}
            compiled = {}
            for key, sub in props.items():
                node = _compile(sub)
                if key in self.required and node.shape == _STRUCT:
                    node = _with_zero_struct(node)
                compiled[key] = node
            self._leaves = {key: str if node.shape == _STRING else bool for key, node in compiled.items()
                            if node.shape in (_STRING, _BOOLEAN)}
            self._properties = compiled
        return self._properties

    @property
    def item(self) -> _Node:
        if self._item is None:
            source = self._source or {}
            sub = source.get("items") if self.shape == _ARRAY else source.get("additionalProperties")
            self._item = _compile(sub if isinstance(sub, dict) else {})
        return self._item


def _with_zero_struct(node: _Node) -> _Node:
    copy = _Node(node.shape, node.go, node._source, node.struct)
    copy.zero_struct = True
    return copy


# Structs whose values repeat from write to write: a PodSpec is a workload's template, the same for
# every Pod it creates. Their decoded values are remembered by their JSON (see _decode_memo).
_MEMO_STRUCTS = frozenset({"PodSpec"})
# Lists whose values repeat likewise: the conditions of a status, which every Pod a kubelet starts at
# one instant, or every sync of a budget, writes alike (a list of five PodConditions decodes in about
# twice the time a remembered one is found and copied).
_MEMO_LISTS = frozenset({"[]v1.PodCondition", "[]v1.Condition"})
# Per (id of the node, the value): its decoded form, a private copy; 256 distinct values per process,
# the lists apart (they change with the clock, and would push the PodSpecs out).
_MEMO = JsonMemo(256)
_LIST_MEMO = JsonMemo(256)


_COMPILED: dict[int, _Node] = {}
_DEFINITIONS: dict[str, _Node] = {}


def _definition(name: str) -> _Node:
    node = _DEFINITIONS.get(name)
    if node is None:
        source = schemas.definitions().get(name)
        if name in _SPECIAL:
            node = _Node(_SPECIAL[name], "int32" if name == schemas.INT_OR_STRING else "string")
        elif source is not None and isinstance(source.get("properties"), dict):
            node = _Node(_STRUCT, schemas.go_type_name(name), source, schemas.struct_name(name))
        elif source is not None:
            node = _compile(source)
        else:
            node = _Node(_ANY, "interface {}")
        _DEFINITIONS[name] = node
    return node


def _compile(source: dict[str, Any]) -> _Node:
    node = _COMPILED.get(id(source))
    if node is not None:
        return node
    ref = schemas.ref_name(source)
    if ref is not None:
        node = _definition(ref)
    else:
        types = _types(source)
        kind = types[0] if len(types) == 1 else ""
        go = go_type(source)
        if kind == "string":
            node = _Node(_STRING, go)
        elif kind == "integer":
            node = _Node(_INTEGER, go)
        elif kind == "number":
            node = _Node(_NUMBER, go)
        elif kind == "boolean":
            node = _Node(_BOOLEAN, go)
        elif kind == "array":
            node = _Node(_ARRAY, go, source)
        elif kind == "object" and isinstance(source.get("additionalProperties"), dict):
            node = _Node(_MAP, go, source)
        else:
            node = _Node(_ANY, go)
    # The definitions live as long as the process, so their ids stay valid keys.
    _COMPILED[id(source)] = node
    return node


class _Walk:
    """One decode: the unknown fields found, and where the walk is (JSON path segments, and
    whether each is a struct field, which is what the Go error's field path is made of)."""

    __slots__ = ("unknown", "path", "prefix", "remembered")

    def __init__(self, prefix: str = "", remembered: list[tuple[dict[str, Any], str, Any]] | None = None) -> None:
        self.unknown: list[str] = []
        self.path: list[tuple[str | int, bool]] = []
        self.prefix = prefix
        # Not None: remembered values are handed out as they are, not copied, and listed here with
        # where they are (see decode_builtin).
        self.remembered = remembered

    def here(self, key: str | None = None) -> str:
        text = self.prefix
        for segment, _ in self.path:
            if isinstance(segment, int):
                text += f"[{segment}]"
            else:
                text = f"{text}.{segment}" if text else segment
        if key is not None:
            text = f"{text}.{key}" if text else key
        return text

    def type_error(self, value: str, struct: str, go: str) -> DecodeError:
        fields = [str(segment) for segment, is_field in self.path if is_field]
        if struct or fields:
            return DecodeError(
                f"json: cannot unmarshal {value} into Go struct field {struct}.{'.'.join(fields)} of type {go}"
            )
        return DecodeError(f"json: cannot unmarshal {value} into Go value of type {go}")


def _number_literal(value: int | float) -> str:
    return str(value) if isinstance(value, int) else repr(value)


def decode_builtin(
    api_version: str, kind: str, obj: dict[str, Any], *,
    remembered: list[tuple[dict[str, Any], str, Any]] | None = None,
) -> tuple[dict[str, Any], list[str]] | None:
    """Decode ``obj`` as the 1.32 type of ``kind``: a pruned deep copy and the unknown field paths, or
    None when 1.32 has no such kind. Raises :class:`DecodeError` for a wrong-typed value.

    ``remembered`` (a list): a value the memos remember (a PodSpec, a conditions list seen before) is put
    in the answer as it is, shared with the memo and every other such answer, and ``(the dict holding
    it, its key, it)`` is appended to the list; the caller must not change it (nor anything in it), and
    must replace it (``holder[key] = a copy``) before storing the answer or handing it out."""
    name = schemas.definition_name(api_version, kind)
    if name is None:
        return None
    walk = _Walk(remembered=remembered)
    value = _decode(obj, _definition(name), "", walk)
    return value, walk.unknown


def decode_object_meta(meta: Any, prefix: str) -> tuple[Any, list[str]]:
    """Decode a custom resource's ``metadata`` as ObjectMeta (upstream unmarshals it alone, so
    the error names fields relative to it: ``ObjectMeta.name``); unknown paths get ``prefix``."""
    walk = _Walk(prefix)
    value = _decode(meta, _definition(schemas.OBJECT_META), "", walk)
    return value, walk.unknown


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _decode(value: Any, node: _Node, struct: str, walk: _Walk) -> Any:
    """``value`` decoded into ``node``'s Go type; ``struct`` is the innermost enclosing struct."""
    shape = node.shape
    if value is None:
        return value
    if shape == _ANY:
        return clone(value)  # the decoded object shares nothing with the body (the caller owns it)
    if shape == _STRUCT:
        if not isinstance(value, dict):
            raise walk.type_error(json_kind(value), struct, node.go)
        properties = node._properties
        if properties is None:
            properties = node.properties
        leaves = node._leaves
        out: dict[str, Any] = {}
        path = walk.path
        for key, item in value.items():
            if leaves.get(key) is item.__class__:
                out[key] = item  # a string or boolean field holding a str or bool (most of them)
                continue
            sub = properties.get(key)
            if sub is None:
                walk.unknown.append(walk.here(key))
                continue
            if item is None:
                # null leaves the Go field at its zero value: an optional (omitempty) field is then
                # not written back; a required struct (a Deployment's `template`) becomes empty; a
                # zero metav1.Time is written back as null (`lastProbeTime: null`), which the
                # schema cannot tell from a pointer, so a null time is kept.
                if sub.zero_struct:
                    out[key] = {}
                elif sub.shape == _TIME:
                    out[key] = None
                continue
            sub_shape = sub.shape
            item_class = item.__class__
            # The common leaves, without a call: what they accept is exactly what the call would.
            if (sub_shape == _STRING and item_class is str) or (sub_shape == _BOOLEAN and item_class is bool) \
                    or (item_class is int and sub.low <= item <= sub.high) \
                    or (sub_shape == _TIME and item_class is str and _RFC3339_RE.match(item)):
                out[key] = item
                continue
            if sub_shape == _ANY:
                out[key] = clone(item)
                continue
            if not item and ((item_class is dict and sub_shape in (_STRUCT, _MAP))
                             or (item_class is list and sub_shape == _ARRAY)):
                # An empty struct, map or list (a container's `lastState: {}`) decodes to an empty one.
                out[key] = {} if item_class is dict else []
                continue
            path.append((key, True))
            if sub.memo:
                out[key] = _decode_memo(item, sub, node.struct, walk, out, key)
            else:
                out[key] = _decode(item, sub, node.struct, walk)
            path.pop()
        return out
    # The containers next: the leaves of a struct seldom get here (its loop takes them).
    if shape == _ARRAY:
        if not isinstance(value, list):
            raise walk.type_error(json_kind(value), struct, node.go)
        item_node = node._item
        if item_node is None:
            item_node = node.item
        if item_node.shape == _ANY:
            return clone(value)
        if item_node.shape == _STRING and all(item.__class__ is str for item in value):
            return list(value)  # a list of strings (args, command, finalizers) needs no walk
        out_list = []
        path = walk.path
        for i, item in enumerate(value):
            path.append((i, False))
            out_list.append(_decode(item, item_node, struct, walk))
            path.pop()
        return out_list
    if shape == _MAP:
        if not isinstance(value, dict):
            raise walk.type_error(json_kind(value), struct, node.go)
        item_node = node._item
        if item_node is None:
            item_node = node.item
        if item_node.shape == _STRING:
            for item in value.values():
                if not isinstance(item, str) and item is not None:
                    raise walk.type_error(json_kind(item), struct, item_node.go)
            return dict(value)
        if item_node.shape == _TIME and all(
            item.__class__ is str and _RFC3339_RE.match(item) for item in value.values()
        ):
            return dict(value)  # a map of times (a budget's disruptedPods) whose times all parse
        out_map = {}
        path = walk.path
        for key, item in value.items():
            path.append((key, False))
            out_map[key] = _decode(item, item_node, struct, walk)
            path.pop()
        return out_map
    if shape == _STRING:
        if not isinstance(value, str):
            raise walk.type_error(json_kind(value), struct, node.go)
        return value
    if shape == _INTEGER or (shape == _INT_OR_STRING and not isinstance(value, str)):
        if not _is_number(value):
            raise walk.type_error(json_kind(value), struct, node.go)
        low, high = INT_RANGES[node.go]
        if isinstance(value, float) or not low <= value <= high:
            raise walk.type_error(f"number {_number_literal(value)}", struct, node.go)
        return value
    if shape == _NUMBER:
        if not _is_number(value):
            raise walk.type_error(json_kind(value), struct, node.go)
        return value
    if shape == _BOOLEAN:
        if not isinstance(value, bool):
            raise walk.type_error(json_kind(value), struct, node.go)
        return value
    if shape == _QUANTITY:
        if not (_is_number(value) or (isinstance(value, str) and _QUANTITY_RE.match(value.strip()))):
            raise DecodeError(QUANTITY_ERROR)
        return value
    if shape == _TIME:
        if not isinstance(value, str):
            raise walk.type_error(json_kind(value), struct, "string")
        if not _RFC3339_RE.match(value):
            raise DecodeError(f'parsing time "{value}" as "{RFC3339_LAYOUT}": cannot parse "{value}" as "2006"')
        return value
    return value  # an IntOrString holding a string


def _decode_memo(value: Any, node: _Node, struct: str, walk: _Walk, container: dict[str, Any],
                 field: str) -> Any:
    """:func:`_decode` of a value seen before, remembered: a copy of the decoded value it had (or the
    value itself, listed with where it goes, for a walk that lists them). Only values that decoded
    without an error or an unknown field are remembered (the path of either depends on where the
    value is); :class:`~harness.kube.objects.JsonMemo` says when a value is the one remembered."""
    memo = _MEMO if node.shape == _STRUCT else _LIST_MEMO
    key, found = memo.find(id(node), value)
    if found is not None:
        if walk.remembered is not None:
            walk.remembered.append((container, field, found))  # the caller replaces it (see decode_builtin)
            return found
        return clone(found)
    unknown = len(walk.unknown)
    decoded = _decode(value, node, struct, walk)
    if len(walk.unknown) == unknown:
        memo.remember(key, value, clone(decoded))
    return decoded


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
    tag = kept_json(schema)
    for key in list(out):
        if key in _CR_ROOT_FIELDS:
            continue
        sub = _prune_child(schema, key)
        if sub is None:
            unknown.append(key)
            del out[key]
        else:
            out[key] = _prune_property(out[key], sub, key, unknown, tag)
    return out, unknown


# A custom resource is written over and over with the same spec: a top-level property that pruning
# left as it was (nothing unknown, the same JSON) is remembered by the JSON of the root schema, its name
# and its own JSON (with Python equality), and taken as it is the next time. ``_prune`` of the same
# value against the same schema would find and change nothing again (what it does is a function of
# those), and decoding copies the pruned object whole afterwards.
_PRUNED_AS_IS = JsonMemo(1024)


def _prune_property(value: Any, schema: dict[str, Any], key: str, unknown: list[str], tag: bytes | None) -> Any:
    if tag is None or type(value) not in (dict, list) or not value:
        return _prune(value, schema, key, unknown)
    memo_key, known = _PRUNED_AS_IS.find((tag, key), value)
    if known:
        return value
    before = len(unknown)
    pruned = _prune(value, schema, key, unknown)
    if memo_key is not None and len(unknown) == before and pruned == value:
        try:
            same = orjson.dumps(pruned) == memo_key[1]
        except TypeError:  # orjson.JSONEncodeError: what the embedded metadata decoded to is not plain JSON
            same = False
        if same:
            _PRUNED_AS_IS.remember(memo_key, value, True)
    return pruned


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


class _Duplicate(Exception):
    """A JSON object repeats a key (raised to stop the parse at the first one)."""


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _Duplicate
    return out


def _has_duplicate(text: bytes) -> bool:
    """Whether any object of a JSON text repeats a key: one call per object, no paths kept, so the
    common body (no repeats) costs far less than working out where the repeats are."""
    try:
        json.loads(text, object_pairs_hook=_unique_pairs)
    except _Duplicate:
        return True
    except (ValueError, RecursionError):
        return False
    return False


def duplicate_fields(raw: bytes) -> list[str]:
    """Paths of the keys a JSON body repeats (``metadata.name``, ``spec.containers[0].name``);
    empty for bodies that are not JSON (YAML, protobuf) or do not parse."""
    text = raw.lstrip()
    if not text.startswith(b"{") or b'"' not in text or not _has_duplicate(text):
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


def summarize(data: bytes) -> str:
    """A body as upstream's decode errors quote it: its first 30 bytes (and `` ...``) when it is a
    JSON object, their hex otherwise, ``<empty>`` when empty (``summarizeData``)."""
    if not data:
        return "<empty>"
    head = data[:SUMMARY_BYTES]
    text = head.decode("utf-8", "replace") if data[:1] == b"{" else head.hex()
    return text + " ..." if len(data) > SUMMARY_BYTES else text


def check_type_meta(kind: str, body: dict[str, Any]) -> None:
    """``apiVersion`` and ``kind`` are read first, into strings; anything else is the
    "unrecognized object" 400 with a summary of the body, as upstream's ``Interpret`` fails."""
    for key in ("apiVersion", "kind"):
        value = body.get(key)
        if value is None or isinstance(value, str):
            continue
        summary = summarize(current().raw or _compact(body).encode())
        raise errors.bad_request(
            f"the object provided is unrecognized (must be of type {kind}): couldn't get version/kind; "
            f"json parse error: json: cannot unmarshal {json_kind(value)} into Go struct field .{key} of type "
            f"string ({summary})"
        )


def _failure(rt: ResourceType, body: dict[str, Any], message: str, origin: str) -> errors.StatusError:
    if origin == PATCH:
        return errors.invalid_object("", "", "", [errors.invalid("patch", _compact(body), message)])
    return errors.bad_request(f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: {message}')


def _kept_status_members(status: Any, stored: Any) -> dict[str, Any] | None:
    """The members of a status write's ``status`` that are the stored status's own values (``is``: an
    in-process writer that copied the stored status and replaced a few of its members, as the
    eviction's DisruptionTarget condition does), which need no decoding: they were decoded when
    stored. None when there are none."""
    if type(status) is not dict or type(stored) is not dict:
        return None
    kept = {k: v for k, v in status.items() if v is not None and v is stored.get(k, _ABSENT)}
    return kept or None


_ABSENT = object()


def decode(
    rt: ResourceType, body: dict[str, Any], origin: str = BODY, *, status_of: dict[str, Any] | None = None,
    remembered: list[tuple[dict[str, Any], str, Any]] | None = None,
) -> dict[str, Any]:
    """``body`` decoded as ``rt``'s type under the current request's ``fieldValidation``: a pruned
    copy; a wrong type, or an unknown or duplicate field under Strict, raises the Status upstream
    answers (400 for a body, 422 for a patch result); under Warn each problem becomes a warning.
    The copy shares no dict or list with ``body``: the caller may change and store it.

    ``status_of``: the stored built-in object a status write replaces (only the body's ``status``
    will be kept). A top-level field equal to the stored one as JSON is not decoded again (the
    stored value was decoded when written, so decoding the same value finds nothing): the result
    holds the stored value itself, for reading only, and a shallow copy of the stored metadata. So
    do the members of the body's ``status`` that are the stored status's own (see
    :func:`_kept_status_members`).

    ``remembered``: as :func:`decode_builtin`'s (a built-in kind only)."""
    scope = _SCOPE.get()  # None outside a request: Warn, and the warnings discarded (see current)
    reused: dict[str, Any] = {}
    kept_status: dict[str, Any] | None = None
    whole = body  # what an error quotes: the body as sent
    if status_of is not None and not rt.custom:
        for key, item in body.items():
            if key == "status":
                kept_status = _kept_status_members(item, status_of.get("status"))
                continue
            if key not in status_of:
                continue
            stored = status_of[key]
            # The stored value itself (a writer that read the object and replaced only its status
            # sends it back as it was) needs no comparison of its JSON.
            if item is stored or same_json(item, stored):
                reused[key] = dict(stored) if key == "metadata" else stored
        if reused:
            body = {k: v for k, v in body.items() if k not in reused}
        if kept_status:
            body = dict(body)
            body["status"] = {k: v for k, v in whole["status"].items() if k not in kept_status}
    try:
        if rt.custom:
            decoded, unknown = prune_custom(body, rt.schema)
            # Pruning keeps what the schema preserves as it was: copy it.
            decoded = clone(decoded)
        else:
            result = decode_builtin(rt.api_version, rt.kind, body, remembered=remembered)
            if result is None:
                return clone(body)
            decoded, unknown = result
            if reused:
                # In the body's order, as decoding the whole body would have put them.
                partial = decoded
                decoded = {k: reused[k] if k in reused else decoded[k] for k in whole if k in reused or k in decoded}
                if remembered:
                    remembered[:] = [(decoded if holder is partial else holder, key, value)
                                     for holder, key, value in remembered]
            if kept_status:
                rest = decoded["status"]
                decoded["status"] = status = {k: kept_status[k] if k in kept_status else rest[k]
                                              for k in whole["status"] if k in kept_status or k in rest}
                if remembered:
                    remembered[:] = [(status if holder is rest else holder, key, value)
                                     for holder, key, value in remembered]
    except DecodeError as exc:
        raise _failure(rt, whole, str(exc), origin) from None
    if not unknown and (scope is None or not scope.duplicates):
        return decoded  # nothing to refuse or warn about (the common write)
    if scope is None:
        scope = current()
    problems = strict_problems(unknown, scope.duplicates)
    if problems and scope.field_validation == STRICT:
        raise _failure(rt, whole, "strict decoding error: " + ", ".join(problems), origin)
    if scope.field_validation == WARN:
        for text in problems:
            scope.warn(text)
    return decoded
