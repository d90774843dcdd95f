"""Typed decoding as one generic walk, without the shortcuts of harness.apiserver.decoding (leaves
taken in the struct's loop, lists of strings copied whole, empty containers, the PodSpec and
conditions memos): the reference tests/test_typed_decoding_equivalence.py compares decoding against.
It walks the same compiled schema nodes, one call per value, with the path kept as a list."""

from __future__ import annotations

from typing import Any

from harness.apiserver import schemas
from harness.apiserver.decoding import (
    _ANY,
    _ARRAY,
    _BOOLEAN,
    _INT_OR_STRING,
    _INTEGER,
    _MAP,
    _NUMBER,
    _QUANTITY,
    _QUANTITY_RE,
    _RFC3339_RE,
    _STRING,
    _STRUCT,
    _TIME,
    INT_RANGES,
    QUANTITY_ERROR,
    RFC3339_LAYOUT,
    DecodeError,
    _definition,
    _is_number,
    _Node,
    json_kind,
)
from harness.kube.objects import clone


class Walk:
    """One decode: the unknown fields found and the path (segments, and whether each is a struct field)."""

    def __init__(self) -> None:
        self.unknown: list[str] = []
        self.path: list[tuple[str | int, bool]] = []

    def here(self, key: str) -> str:
        """The JSON path of ``key`` at the walk's position."""
        text = ""
        for segment, _ in self.path:
            if isinstance(segment, int):
                text += f"[{segment}]"
            else:
                text = f"{text}.{segment}" if text else segment
        return f"{text}.{key}" if text else key

    def type_error(self, value: str, struct: str, go: str) -> DecodeError:
        """The Go decoder's UnmarshalTypeError at the walk's position."""
        fields = [str(segment) for segment, is_field in self.path if is_field]
        if struct or fields:
            return DecodeError(
                f"json: cannot unmarshal {value} into Go struct field {struct}.{'.'.join(fields)} of type {go}"
            )
        return DecodeError(f"json: cannot unmarshal {value} into Go value of type {go}")


def decode_builtin(api_version: str, kind: str, obj: Any) -> tuple[Any, list[str]]:
    """The reference for :func:`harness.apiserver.decoding.decode_builtin` (a kind 1.32 defines)."""
    name = schemas.definition_name(api_version, kind)
    assert name is not None
    walk = Walk()
    value = reference_decode(obj, _definition(name), "", walk)
    return value, walk.unknown


def reference_decode(value: Any, node: _Node, struct: str, walk: Walk) -> Any:  # noqa: C901, PLR0911, PLR0912
    """``value`` decoded into ``node``'s Go type; ``struct`` is the innermost enclosing struct."""
    shape = node.shape
    if value is None:
        return value
    if shape == _ANY:
        return clone(value)
    if shape == _STRUCT:
        if not isinstance(value, dict):
            raise walk.type_error(json_kind(value), struct, node.go)
        out: dict[str, Any] = {}
        for key, item in value.items():
            sub = node.properties.get(key)
            if sub is None:
                walk.unknown.append(walk.here(key))
                continue
            if item is None:
                if sub.zero_struct:
                    out[key] = {}
                elif sub.shape == _TIME:
                    out[key] = None
                continue
            walk.path.append((key, True))
            out[key] = reference_decode(item, sub, node.struct, walk)
            walk.path.pop()
        return out
    if shape == _STRING:
        if not isinstance(value, str):
            raise walk.type_error(json_kind(value), struct, node.go)
        return value
    if shape == _INTEGER or (shape == _INT_OR_STRING and not isinstance(value, str)):
        if not _is_number(value):
            raise walk.type_error(json_kind(value), struct, node.go)
        low, high = INT_RANGES[node.go]
        if isinstance(value, float) or not low <= value <= high:
            literal = str(value) if isinstance(value, int) else repr(value)
            raise walk.type_error(f"number {literal}", struct, node.go)
        return value
    if shape == _ARRAY:
        if not isinstance(value, list):
            raise walk.type_error(json_kind(value), struct, node.go)
        out_list = []
        for i, item in enumerate(value):
            walk.path.append((i, False))
            out_list.append(reference_decode(item, node.item, struct, walk))
            walk.path.pop()
        return out_list
    if shape == _MAP:
        if not isinstance(value, dict):
            raise walk.type_error(json_kind(value), struct, node.go)
        if node.item.shape == _STRING:
            for item in value.values():
                if not isinstance(item, str) and item is not None:
                    raise walk.type_error(json_kind(item), struct, node.item.go)
            return dict(value)
        out_map = {}
        for key, item in value.items():
            walk.path.append((key, False))
            out_map[key] = reference_decode(item, node.item, struct, walk)
            walk.path.pop()
        return out_map
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
    return value
