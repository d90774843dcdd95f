"""Field sets as structured-merge-diff v4 computes them: paths, their ``fieldsV1`` encoding, and
the walks server-side apply needs over plain-dict objects.

A path is a tuple of encoded path elements, exactly as ``fieldsV1`` keys spell them:

* ``f:<name>`` — a field of a struct or a key of a map;
* ``k:{"name":"c"}`` — an item of an associative list, by the compact JSON of its key fields;
* ``v:<json>`` — an item of a set list;
* ``i:<n>`` — an item of a list addressed by index (never produced here: lists are atomic,
  associative or sets).

A field set is a Python ``set`` of such paths (its *members*); the serialised tree marks a member
that also has children with ``".": {}``. What a node is (struct, granular map, atomic value,
associative list, set, atomic list) comes from a :class:`Shapes` resolver: built-in kinds derive it
from the strategic-merge-patch table in :mod:`harness.apiserver.patch` (the same merge keys, so the
knowledge lives once) plus the list-map keys where the OpenAPI ``x-kubernetes-list-map-keys`` differ
from the patch merge key; custom resources read it from their structural schema.
"""

from __future__ import annotations

import functools
import json
from bisect import bisect_left
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any, TypeVar

from harness.apiserver import patch as smp
from harness.kube.objects import JsonMemo

Path = tuple[str, ...]
FieldSet = set[Path]

# Node shapes.
STRUCT = "struct"  # declared fields: a struct with children is not itself owned
MAP = "map"  # a granular map (labels, data): every entry is owned
ATOMIC = "atomic"  # one value with one owner (LabelSelector, atomic lists, tolerations)
LIST_MAP = "map-list"  # associative list keyed by fields
LIST_SET = "set-list"  # list of scalars keyed by value

MEMBER = "."


def field(name: str) -> str:
    """The path element of a struct field or map key."""
    return "f:" + name


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def _compact(value: Any) -> str:
    # Compact JSON as Go's encoder writes it; strings and integers (nearly every key) take the
    # fast path, since this runs for every list item of every write.
    if isinstance(value, str):
        return encode_basestring(value)
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    return _ENCODER.encode(value)


def key_element(item: dict[str, Any], keys: tuple[str, ...], key_defaults: dict[str, Any]) -> str | None:
    """``k:{...}`` for an associative-list item, its key fields sorted by name; None when a key
    field is missing and has no schema default (upstream refuses such an item)."""
    if len(keys) == 1:
        # Most associative lists have one key (conditions by type, containers by name): no list,
        # sort or join, as this runs for every item of every list of every write.
        name = keys[0]
        value = item.get(name)
        if value is None:
            if name not in key_defaults:
                return None
            value = key_defaults[name]
        return "k:{" + encode_basestring(name) + ":" + _compact(value) + "}"
    parts: list[tuple[str, Any]] = []
    for name in keys:
        value = item.get(name)
        if value is not None:
            parts.append((name, value))
        elif name in key_defaults:
            parts.append((name, key_defaults[name]))
        else:
            return None
    if len(parts) > 1:
        parts.sort()
    return "k:{" + ",".join(encode_basestring(n) + ":" + _compact(v) for n, v in parts) + "}"


def value_element(value: Any) -> str:
    """``v:<json>`` for a set item."""
    return "v:" + _compact(value)


# -- rendering paths as smd prints them (conflict messages) -------------------------------------


def path_string(path: Path) -> str:
    """``.spec.containers[name="nginx"].image``: the form conflict messages use."""
    out = []
    for element in path:
        kind, body = element[:2], element[2:]
        if kind == "f:":
            out.append("." + body)
        elif kind == "k:":
            fields = json.loads(body)
            out.append("[" + ",".join(f"{k}={_compact(v)}" for k, v in fields.items()) + "]")
        elif kind == "v:":
            out.append("[=" + body + "]")
        else:
            out.append("[" + body + "]")
    return "".join(out)


# -- fieldsV1 encoding ----------------------------------------------------------------------------

_ORDER = {"f:": 0, "k:": 1, "v:": 2, "i:": 3}


@functools.lru_cache(maxsize=16384)  # the same elements are sorted on every write (a tuple: shared safely)
def element_sort_key(element: str) -> tuple[int, Any]:
    """Where an element sorts among its siblings, as structured-merge-diff's ``PathElement.Compare``
    orders them (and so the keys of ``fieldsV1``): fields, then keys, then values, then indices;
    field names as strings, indices as numbers, and a key's fields or a value by ``value.Compare``
    (numbers by value before strings, so ``containerPort`` 80 before 443 before 8080)."""
    kind, body = element[:2], element[2:]
    order = _ORDER.get(kind, 4)
    if kind == "f:":
        return (order, body)
    # Within a kind, what follows the order is one shape (a second number first: parsed 0, not 1),
    # so that elements a client sent that do not parse still compare with the rest.
    if kind == "i:":
        try:
            return (order, 0, int(body), "")
        except ValueError:
            return (order, 1, 0, body)
    if kind in ("k:", "v:"):
        try:
            value = json.loads(body)
        except ValueError:
            return (order, 1, (), body)
        if kind == "v:":
            return (order, 0, _value_order(value), "")
        if isinstance(value, dict):
            return (order, 0, tuple((name, _value_order(field)) for name, field in value.items()), "")
    return (order, 1, (), body)


# The order of a node's elements (in their plain sorted order) by element_sort_key: the same lists of
# keys come back write after write (a status's conditions, a Pod's containers), and sorting by a key
# per element cost a Pod create about a twentieth more. A lone key (a Pod's IP) is in place without
# it, so what is remembered recurs. Emptied when it grows past this many.
_KEYED_ORDERS: dict[tuple[str, ...], tuple[str, ...]] = {}
_KEYED_ORDERS_SIZE = 4096


def _keyed_order(elements: tuple[str, ...]) -> tuple[str, ...]:
    found = _KEYED_ORDERS.get(elements)
    if found is None:
        if len(_KEYED_ORDERS) >= _KEYED_ORDERS_SIZE:
            _KEYED_ORDERS.clear()
        found = _KEYED_ORDERS[elements] = tuple(sorted(elements, key=element_sort_key))
    return found


def _value_order(value: Any) -> tuple[Any, ...]:
    """``value.Compare``'s total order of JSON values: numbers (ints and floats alike, by value),
    then strings, booleans (false first), lists (element by element, then shorter first), maps
    (by their sorted keys and values), null last."""
    if value is True or value is False:
        return (2, value)
    if isinstance(value, int | float):
        return (0, value)
    if isinstance(value, str):
        return (1, value)
    if isinstance(value, list):
        return (3, tuple(_value_order(item) for item in value))
    if isinstance(value, dict):
        return (4, tuple((key, _value_order(value[key])) for key in sorted(value)))
    return (5,)


def encode(fields: Iterable[Path]) -> dict[str, Any]:
    """The ``fieldsV1`` object of a field set (children sorted, ``"."`` first)."""
    tree: dict[str, Any] = {}
    members: set[Path] = set()
    for path in fields:
        node = tree
        for element in path:
            node = node.setdefault(element, {})
        members.add(path)

    def emit(node: dict[str, Any], prefix: Path) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if node and prefix in members:
            out[MEMBER] = {}
        for element in sorted(node, key=element_sort_key):
            out[element] = emit(node[element], prefix + (element,))
        return out

    return emit(tree, ())


def decode(fields_v1: Any) -> FieldSet:
    """The field set of a ``fieldsV1`` object; ValueError when it is not one."""
    out: FieldSet = set()

    def walk(node: Any, prefix: Path) -> None:
        if not isinstance(node, dict):
            raise ValueError("fieldsV1 nodes must be objects")
        if not node and prefix:
            out.add(prefix)
            return
        for element, child in node.items():
            if element == MEMBER:
                if prefix:
                    out.add(prefix)
                continue
            if not isinstance(element, str) or element[:2] not in _ORDER:
                raise ValueError(f"invalid path element {element!r}")
            walk(child, prefix + (element,))

    walk(fields_v1, ())
    return out


# -- set algebra ------------------------------------------------------------------------------------


def without_subtrees(fields: FieldSet, roots: Iterable[Path]) -> FieldSet:
    """``fields`` minus every path at or under one of ``roots``."""
    root_set = set(roots)
    if not root_set:
        return set(fields)
    return {p for p in fields if not any(p[:n] in root_set for n in range(1, len(p) + 1))}


def owns_at_or_under(fields: FieldSet, path: Path) -> bool:
    """True when ``fields`` holds ``path`` or a path below it."""
    n = len(path)
    return any(p[:n] == path for p in fields)


# -- shapes -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ListShape:
    """How a list is merged and owned."""

    relationship: str  # LIST_MAP, LIST_SET or ATOMIC
    keys: tuple[str, ...] = ()
    key_defaults: tuple[tuple[str, Any], ...] = ()


ATOMIC_LIST = ListShape(ATOMIC)
SET_LIST = ListShape(LIST_SET)


class Shapes:
    """What a node is, by its field-name path (list levels are not part of the path)."""

    def dict_shape(self, fields: Path) -> str:
        """STRUCT, MAP or ATOMIC for an object node."""
        raise NotImplementedError

    def list_shape(self, fields: Path) -> ListShape:
        """The list relationship of a list node."""
        raise NotImplementedError

    def value_struct(self, fields: Path) -> bool:
        """True for a struct (or list) that always exists in the Go type's zero value (non-pointer,
        no omitempty), so creating it is not a change an Update records with ``"."``."""
        return fields in (("metadata",),)


# ObjectMeta, shared by every kind (ownerReferences by uid, finalizers a set).
_META_MAPS = {("metadata", "labels"), ("metadata", "annotations")}
_META_LISTS = {
    ("metadata", "finalizers"): SET_LIST,
    ("metadata", "ownerReferences"): ListShape(LIST_MAP, ("uid",)),
}

# Leaf names of map[string]string / ResourceList fields of built-in kinds.
_BUILTIN_MAP_NAMES = {"labels", "annotations", "data", "binaryData", "stringData", "nodeSelector", "limits",
                      "requests", "capacity", "allocatable", "matchLabels", "parameters", "overhead",
                      "hard", "used", "allocatedResources", "volumeAttributes", "attributes"}
# Kinds whose ``spec.selector`` is a plain map (everywhere else it is an atomic LabelSelector).
_MAP_SELECTOR_KINDS = {"Service", "ReplicationController"}
# Structs that are one value (``+structType=atomic`` / ``x-kubernetes-map-type: atomic``).
_ATOMIC_STRUCT_NAMES = {"selector", "labelSelector", "namespaceSelector", "nodeSelectorTerms", "matchExpressions",
                        "podSelector", "objectSelector", "configMapKeyRef", "secretKeyRef", "fieldRef",
                        "resourceFieldRef", "localObjectReference", "targetRef", "claimRef"}
# Non-pointer structs of the Go types: always present, so never "added" by an update.
_VALUE_STRUCT_NAMES = {"metadata", "spec", "status", "template", "strategy", "updateStrategy", "resources",
                       "jobTemplate"}
# Lists without omitempty in the Go types (``containers``): present as null in a zero value.
_VALUE_LIST_NAMES = {"containers"}
# Lists whose OpenAPI list-map keys differ from (or extend) the strategic-merge-patch merge key.
_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")


_SHAPE_CACHE_SIZE = 4096
_Answer = TypeVar("_Answer")


def _remembered(answers: dict[Path, _Answer], fields: Path, compute: Callable[[Path], _Answer]) -> _Answer:
    """``compute(fields)``, remembered in ``answers`` (emptied when full: map keys such as label names
    are paths too)."""
    answer = answers.get(fields)
    if answer is None:
        if len(answers) >= _SHAPE_CACHE_SIZE:
            answers.clear()
        answer = answers[fields] = compute(fields)
    return answer


class BuiltinShapes(Shapes):
    """Shapes of a built-in kind, from the strategic-merge-patch strategy table."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.table = smp.STRATEGIES.get(kind, {})
        # Every write asks about the same few hundred field paths of its kind: the answers are
        # remembered (bounded: map keys such as label names are paths too).
        self._dict_shapes: dict[Path, str] = {}
        self._list_shapes: dict[Path, ListShape] = {}
        self._value_structs: dict[Path, bool] = {}

    def dict_shape(self, fields: Path) -> str:
        return self._dict_shapes.get(fields) or _remembered(self._dict_shapes, fields, self._dict_shape)

    def list_shape(self, fields: Path) -> ListShape:
        return self._list_shapes.get(fields) or _remembered(self._list_shapes, fields, self._list_shape)

    def value_struct(self, fields: Path) -> bool:
        answer = self._value_structs.get(fields)
        return _remembered(self._value_structs, fields, self._value_struct) if answer is None else answer

    def _dict_shape(self, fields: Path) -> str:
        if fields in _META_MAPS:
            return MAP
        if not fields:
            return STRUCT
        name = fields[-1]
        if name == "selector" and fields == ("spec", "selector") and self.kind in _MAP_SELECTOR_KINDS:
            return MAP
        if name in _ATOMIC_STRUCT_NAMES:
            return ATOMIC
        if name in _BUILTIN_MAP_NAMES and fields[0] != "metadata" or fields[-2:] in _META_MAPS:
            return MAP
        if self.table.get(fields, ("", None))[0] == smp.REPLACE:
            return ATOMIC
        return STRUCT

    def _list_shape(self, fields: Path) -> ListShape:
        if fields in _META_LISTS:
            return _META_LISTS[fields]
        if len(fields) >= 2 and fields[-1] == "ports" and fields[-2] in _CONTAINER_LISTS:
            return ListShape(LIST_MAP, ("containerPort", "protocol"), (("protocol", "TCP"),))
        if self.kind == "Service" and fields == ("spec", "ports"):
            return ListShape(LIST_MAP, ("port", "protocol"), (("protocol", "TCP"),))
        if fields and fields[-1] == "topologySpreadConstraints":
            return ListShape(LIST_MAP, ("topologyKey", "whenUnsatisfiable"))
        if fields[-2:] in (("metadata", "finalizers"),):
            return SET_LIST
        if fields[-2:] == ("metadata", "ownerReferences"):
            return ListShape(LIST_MAP, ("uid",))
        strategy, key = self.table.get(fields, ("", None))
        if smp.MERGE in strategy.split(","):
            return ListShape(LIST_MAP, (key,)) if key else SET_LIST
        return ATOMIC_LIST

    def _value_struct(self, fields: Path) -> bool:
        if fields and fields[-1] in _VALUE_LIST_NAMES:
            return True
        return bool(fields) and fields[-1] in _VALUE_STRUCT_NAMES and self.dict_shape(fields) == STRUCT


class SchemaShapes(Shapes):
    """Shapes of a custom resource from its structural schema (``x-kubernetes-list-type``,
    ``x-kubernetes-list-map-keys``, ``x-kubernetes-map-type``); lists without a list type are
    atomic, objects without properties are granular maps."""

    def __init__(self, schema: dict[str, Any] | None) -> None:
        self.schema = schema if isinstance(schema, dict) else {}
        self.meta = BuiltinShapes("")

    def _node(self, fields: Path) -> dict[str, Any] | None:
        node: Any = self.schema
        for name in fields:
            if not isinstance(node, dict):
                return None
            while node.get("type") == "array" and isinstance(node.get("items"), dict):
                node = node["items"]
            props = node.get("properties")
            if isinstance(props, dict) and name in props:
                node = props[name]
            elif isinstance(node.get("additionalProperties"), dict):
                node = node["additionalProperties"]
            else:
                return None
        return node if isinstance(node, dict) else None

    def dict_shape(self, fields: Path) -> str:
        if fields[:1] == ("metadata",):
            return self.meta.dict_shape(fields)
        if not fields:
            return STRUCT
        node = self._node(fields)
        while node is not None and node.get("type") == "array":
            node = node.get("items") if isinstance(node.get("items"), dict) else None
        if node is None:
            return MAP
        if node.get("x-kubernetes-map-type") == "atomic":
            return ATOMIC
        if isinstance(node.get("properties"), dict) and node["properties"]:
            return STRUCT
        return MAP

    def list_shape(self, fields: Path) -> ListShape:
        if fields[:1] == ("metadata",):
            return self.meta.list_shape(fields)
        node = self._node(fields)
        if node is None:
            return ATOMIC_LIST
        list_type = node.get("x-kubernetes-list-type")
        if list_type == "set":
            return SET_LIST
        if list_type == "map":
            keys = tuple(k for k in node.get("x-kubernetes-list-map-keys") or [] if isinstance(k, str))
            item_props = (node.get("items") or {}).get("properties") or {}
            key_defaults = tuple((k, item_props[k]["default"]) for k in keys
                                 if isinstance(item_props.get(k), dict) and "default" in item_props[k])
            return ListShape(LIST_MAP, keys, key_defaults) if keys else ATOMIC_LIST
        return ATOMIC_LIST

    def value_struct(self, fields: Path) -> bool:
        return fields == ("metadata",)


# -- walks over objects ------------------------------------------------------------------------------


def item_element(item: Any, shape: ListShape) -> str | None:
    if shape.relationship == LIST_SET:
        return value_element(item)
    if not isinstance(item, dict):
        return None
    return key_element(item, shape.keys, dict(shape.key_defaults))


def to_field_set(obj: dict[str, Any], shapes: Shapes) -> FieldSet:
    """What an applier of ``obj`` owns (smd ``ToFieldSet``): leaves, entries of granular maps,
    atomic values as a whole and list items (each with its own node); structs only through their
    children. ``obj`` is the applied configuration without the fields nobody owns."""
    out: FieldSet = set()

    def visit(value: Any, path: Path, fields: Path, declared: bool) -> None:
        # ``declared``: the parent is a struct, so this key is one of its fields; entries of a
        # granular map are owned themselves (upstream: "field not declared" keys are members).
        if isinstance(value, dict):
            shape = shapes.dict_shape(fields)
            if shape == ATOMIC or not value or not declared:
                out.add(path)
            if shape == ATOMIC or not value:
                return
            for key, child in value.items():
                visit(child, path + (field(key),), fields + (key,), shape == STRUCT)
            return
        if isinstance(value, list):
            lshape = shapes.list_shape(fields)
            if lshape.relationship == ATOMIC or not declared:
                out.add(path)
            if lshape.relationship == ATOMIC:
                return
            for item in value:
                element = item_element(item, lshape)
                if element is None:
                    out.add(path)
                    continue
                item_path = path + (element,)
                out.add(item_path)
                if isinstance(item, dict):
                    item_struct = shapes.dict_shape(fields) == STRUCT
                    for key, child in item.items():
                        visit(child, item_path + (field(key),), fields + (key,), item_struct)
            return
        out.add(path)

    for key, child in obj.items():
        visit(child, (field(key),), (key,), True)
    return out


def _index_list(items: list[Any], shape: ListShape) -> list[tuple[str | None, Any]]:
    return [(item_element(item, shape), item) for item in items]


# ``k:{"type":"Ready"}`` by (key name, string value): the items of one list (conditions, containers)
# carry the same keys write after write, so their elements are built once (emptied when full: a
# Pod IP is a key too).
_KEY_ELEMENTS: dict[tuple[str, str], str] = {}
_KEY_ELEMENTS_SIZE = 4096


def _element(item: Any, shape: ListShape) -> str | None:
    # ``item_element``, remembered for an item keyed by one string field (most of them).
    if len(shape.keys) == 1 and type(item) is dict:
        name = shape.keys[0]
        value = item.get(name)
        if type(value) is str:
            element = _KEY_ELEMENTS.get((name, value))
            if element is None:
                if len(_KEY_ELEMENTS) >= _KEY_ELEMENTS_SIZE:
                    _KEY_ELEMENTS.clear()
                element = _KEY_ELEMENTS[(name, value)] = \
                    "k:{" + encode_basestring(name) + ":" + encode_basestring(value) + "}"
            return element
    return item_element(item, shape)


def _keyed(items: list[Any], shape: ListShape) -> dict[str, Any]:
    # The items of a list by element, as ``_index_list`` pairs them (a repeated element keeps its
    # first place and its last item; items without one left out).
    out: dict[str, Any] = {}
    if len(shape.keys) == 1:
        # ``_element`` inlined for items keyed by one string field whose element is remembered.
        name = shape.keys[0]
        remembered = _KEY_ELEMENTS
        for item in items:
            if type(item) is dict:
                value = item.get(name)
                if type(value) is str:
                    element = remembered.get((name, value))
                    if element is not None:
                        out[element] = item
                        continue
            element = _element(item, shape)
            if element is not None:
                out[element] = item
        return out
    for item in items:
        element = _element(item, shape)
        if element is not None:
            out[element] = item
    return out


@dataclass
class Comparison:
    """smd ``Compare``: paths added, modified and removed between two objects."""

    added: FieldSet
    modified: FieldSet
    removed: FieldSet

    @property
    def changed(self) -> FieldSet:
        """Added and modified: what an update takes ownership of."""
        return self.added | self.modified


def _subtree(value: Any, path: Path, fields: Path, shapes: Shapes, out: FieldSet) -> None:
    """Every path of ``value`` below and including ``path`` (for wholly added or removed nodes)."""
    if isinstance(value, dict):
        shape = shapes.dict_shape(fields)
        if shape == ATOMIC:
            out.add(path)
            return
        if path and (not value or not shapes.value_struct(fields)):
            out.add(path)
        for key, child in value.items():
            _subtree(child, path + (field(key),), fields + (key,), shapes, out)
        return
    if isinstance(value, list):
        lshape = shapes.list_shape(fields)
        if lshape.relationship == ATOMIC:
            out.add(path)
            return
        if path and not shapes.value_struct(fields):
            out.add(path)  # an omitempty list that appears is itself a change (f:conditions ".")
        for element, item in _index_list(value, lshape):
            if element is None:
                out.add(path)
                continue
            out.add(path + (element,))
            if isinstance(item, dict):
                for key, child in item.items():
                    _subtree(child, path + (element, field(key)), fields + (key,), shapes, out)
        return
    out.add(path)


def compare(old: dict[str, Any], new: dict[str, Any], shapes: Shapes) -> Comparison:
    """The paths ``new`` adds, changes and drops relative to ``old``."""
    result = Comparison(set(), set(), set())

    def walk(left: Any, right: Any, path: Path, fields: Path) -> None:
        if left is None and right is None:
            return
        if left == right and type(left) is type(right):
            return  # nothing changed below here (the common case for most of an object)
        if left is None:
            _subtree(right, path, fields, shapes, result.added)
            return
        if right is None:
            _subtree(left, path, fields, shapes, result.removed)
            return
        if isinstance(left, dict) and isinstance(right, dict):
            if shapes.dict_shape(fields) == ATOMIC:
                if left != right:
                    result.modified.add(path)
                return
            for key in list(left) + [k for k in right if k not in left]:
                lv, rv = left.get(key), right.get(key)
                if lv == rv and type(lv) is type(rv):
                    continue  # walk's own first test, without the call and the paths (most keys)
                walk(lv, rv, path + (field(key),), fields + (key,))
            return
        if isinstance(left, list) and isinstance(right, list):
            lshape = shapes.list_shape(fields)
            if lshape.relationship == ATOMIC:
                if left != right:
                    result.modified.add(path)
                return
            lhs = {e: v for e, v in _index_list(left, lshape) if e is not None}
            rhs = {e: v for e, v in _index_list(right, lshape) if e is not None}
            for element in list(lhs) + [e for e in rhs if e not in lhs]:
                lv, rv = lhs.get(element), rhs.get(element)
                item_path = path + (element,)
                if element not in rhs:
                    _subtree_item(lv, item_path, fields, shapes, result.removed)
                elif element not in lhs:
                    _subtree_item(rv, item_path, fields, shapes, result.added)
                elif isinstance(lv, dict) and isinstance(rv, dict):
                    for key in list(lv) + [k for k in rv if k not in lv]:
                        lval, rval = lv.get(key), rv.get(key)
                        if lval == rval and type(lval) is type(rval):
                            continue
                        walk(lval, rval, item_path + (field(key),), fields + (key,))
            return
        if type(left) is not type(right) or left != right:
            if isinstance(left, (dict, list)) or isinstance(right, (dict, list)):
                _subtree(left, path, fields, shapes, result.removed)
                _subtree(right, path, fields, shapes, result.added)
                result.removed.discard(path)
                result.added.discard(path)
            result.modified.add(path)

    walk(old, new, (), ())
    result.added.discard(())
    result.modified.discard(())
    result.removed.discard(())
    return result


def _subtree_item(item: Any, item_path: Path, fields: Path, shapes: Shapes, out: FieldSet) -> None:
    out.add(item_path)
    if isinstance(item, dict):
        for key, child in item.items():
            _subtree(child, item_path + (field(key),), fields + (key,), shapes, out)


def added_fields_v1(obj: dict[str, Any], shapes: Shapes) -> dict[str, Any]:
    """``encode(compare({}, obj).added)`` in one walk: what a create owns, without building paths."""
    return _alike_sorted(_added_children(obj, (), shapes, False), False)


def _sorted_node(children: dict[str, Any], *, member: bool) -> dict[str, Any]:
    out: dict[str, Any] = {MEMBER: {}} if member and children else {}
    if len(children) == 1 and not out:
        return children
    # Fields (``f:``, sorted first as plain strings too, by name) are in the order element_sort_key
    # gives them as plain strings; indices, keys and values (``i:`` < ``k:`` < ``v:`` as strings,
    # after every field) need the sort key: numbers in them sort by value.
    ordered: Iterable[str] = sorted(children)
    if bisect_left(ordered, "i:") < len(children) - 1:  # type: ignore[arg-type]
        ordered = _keyed_order(tuple(ordered))  # two or more indices, keys or values (one is in place)
    for element in ordered:
        out[element] = children[element]
    return out


def _alike_sorted(children: dict[str, Any], member: bool) -> dict[str, Any]:
    # ``_sorted_node`` for children of one kind (all fields, all keys or all values): fields in the
    # plain order of the elements, without a sort key per element; keys and values by the key.
    if len(children) == 1 and not member:
        return children
    out: dict[str, Any] = {MEMBER: {}} if member else {}
    ordered: Iterable[str] = sorted(children)
    if len(children) > 1 and ordered[-1] >= "i:":  # type: ignore[index]
        ordered = _keyed_order(tuple(ordered))
    for element in ordered:
        out[element] = children[element]
    return out


# The sorted elements of the keys of an object holding only scalars (a condition, an owner
# reference, an Event's involvedObject), by its keys in their order and whether the node is a
# member (then ``"."`` leads them): such objects recur write after write. The nodes themselves are
# built anew each time, as no tree holds one node twice (a YAML dump would write it as an alias).
_FLAT_ELEMENTS: dict[tuple[tuple[str, ...], bool], tuple[str, ...]] = {}
_FLAT_ELEMENTS_SIZE = 4096
# Values that are surely neither an object nor a list (checked by exact type, before isinstance).
_SCALAR_TYPES = frozenset((str, int, float, bool, type(None)))


def _flat_node(value: dict[str, Any], member: bool) -> dict[str, Any] | None:
    # The encoded node of a non-empty added object when none of its values is an object or a
    # list; None when one is.
    for child in value.values():
        if type(child) not in _SCALAR_TYPES and isinstance(child, (dict, list)):
            return None
    keys = tuple(value)
    elements = _FLAT_ELEMENTS.get((keys, member))
    if elements is None:
        if len(_FLAT_ELEMENTS) >= _FLAT_ELEMENTS_SIZE:
            _FLAT_ELEMENTS.clear()
        ordered = tuple(sorted("f:" + key for key in keys))
        elements = _FLAT_ELEMENTS[(keys, member)] = (MEMBER, *ordered) if member else ordered
    return {element: {} for element in elements}


def _added_children(value: dict[str, Any], fields: Path, shapes: Shapes, union: bool) -> dict[str, Any]:
    # The encoded nodes of an added object's keys (unsorted); scalars, the most of them, inline.
    children: dict[str, Any] = {}
    for key, child in value.items():
        if isinstance(child, (dict, list)):
            node = _added_node(child, fields + (key,), shapes, union)
            if node is not None:
                children["f:" + key] = node
        else:
            children["f:" + key] = {}
    return children


def _added_node(value: Any, fields: Path, shapes: Shapes, union: bool) -> dict[str, Any] | None:
    # The encoded node of a wholly added value (None: the value adds no path at all). Items of an
    # associative list with the same key: ``union`` owns what each of them holds (as ``compare``
    # does), else the last one counts (as a create always did).
    if isinstance(value, dict):
        if not value or shapes.dict_shape(fields) == ATOMIC:
            return {}
        member = not shapes.value_struct(fields)
        flat = _flat_node(value, member)
        if flat is not None:
            return flat
        children = _added_children(value, fields, shapes, union)
        if not children:
            return {} if member else None
        return _alike_sorted(children, member)
    if isinstance(value, list):
        lshape = shapes.list_shape(fields)
        if lshape.relationship == ATOMIC:
            return {}
        member = not shapes.value_struct(fields)
        children = {}
        name = lshape.keys[0] if len(lshape.keys) == 1 else None
        for item in value:
            element = None
            if name is not None and type(item) is dict:
                # ``_element`` and ``_added_item`` inlined for an item keyed by one string field
                # whose element is remembered, holding only scalars (a condition, an IP).
                key = item.get(name)
                if type(key) is str:
                    element = _KEY_ELEMENTS.get((name, key))
                    if element is not None and element not in children:
                        flat = _flat_node(item, True)
                        if flat is not None:
                            children[element] = flat
                            continue
            if element is None:
                element = _element(item, lshape)
            if element is None:
                member = True
                continue
            node = _added_item(item, fields, shapes, union)
            if union and element in children:
                node = _edit(children[element], None, None, node)
            children[element] = node
        if not children:
            return {} if member else None
        return _alike_sorted(children, member)
    return {}


# -- comparison and ownership edits straight on encoded trees (what every update does) ------------


def _as_member(node: dict[str, Any] | None) -> dict[str, Any]:
    # The node owned itself, whatever it holds below.
    if not node:
        return {}
    if MEMBER in node:
        return node
    out: dict[str, Any] = {MEMBER: {}}
    out.update(node)
    return out


def _not_member(node: dict[str, Any] | None) -> dict[str, Any] | None:
    # What the node holds below, without the node itself.
    if not node:
        return None
    if MEMBER not in node:
        return node
    return {k: v for k, v in node.items() if k != MEMBER}


def _added_item(item: Any, fields: Path, shapes: Shapes, union: bool) -> dict[str, Any]:
    # The encoded node of a wholly added (or removed) list item: the item and what it holds.
    if not isinstance(item, dict) or not item:
        return {}
    flat = _flat_node(item, True)
    if flat is not None:
        return flat
    children = _added_children(item, fields, shapes, union)
    return _alike_sorted(children, True) if children else {}


def compare_trees(old: dict[str, Any], new: dict[str, Any],
                  shapes: Shapes) -> tuple[dict[str, Any], dict[str, Any]]:
    """:func:`compare` with its answer already encoded: ``(encode(changed), encode(removed))``,
    built in the walk itself (no path tuples). Parts ``old`` and ``new`` share (``a is b``, as a
    status write shares the stored object's untouched parts) are skipped without comparing them."""
    if old is new or (old == new and type(old) is type(new)):
        return {}, {}
    changed, removed = _compare_node(old, new, (), shapes)
    return _root(changed), _root(removed)


def _root(node: dict[str, Any] | None) -> dict[str, Any]:
    # The root is never a member (compare discards the empty path).
    return _not_member(node) or {}


_MISSING = object()


def _compare_node(left: Any, right: Any, fields: Path,
                  shapes: Shapes) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    # (changed node, removed node) of one path, None where nothing is at or below it. The caller
    # has found the two values different (``==`` or their types), so a deep comparison of what may
    # be most of the object is not made twice at each level.
    if left is None:
        return _added_node(right, fields, shapes, True), None
    if right is None:
        return None, _added_node(left, fields, shapes, True)
    if isinstance(left, dict) and isinstance(right, dict):
        if shapes.dict_shape(fields) == ATOMIC:
            # Two values of one type differ (the callers' test): not compared again.
            return ({} if type(left) is type(right) or left != right else None), None
        return _compare_children(left, right, fields, shapes)
    if isinstance(left, list) and isinstance(right, list):
        lshape = shapes.list_shape(fields)
        if lshape.relationship == ATOMIC:
            return ({} if type(left) is type(right) or left != right else None), None
        if type(shapes) is BuiltinShapes:
            # The same two lists come back write after write (a kubelet's conditions, a budget's):
            # their comparison is a function of the two values, the path and the kind's shapes.
            pair = [left, right]
            memo_key, found = _LIST_COMPARISONS.find((shapes.kind, fields), pair)
            if found is not None:
                return found  # type: ignore[no-any-return]
            result = _compare_lists(left, right, lshape, fields, shapes)
            _LIST_COMPARISONS.remember(memo_key, pair, result)
            return result
        return _compare_lists(left, right, lshape, fields, shapes)
    if type(left) is not type(right) or left != right:
        if isinstance(left, (dict, list)) or isinstance(right, (dict, list)):
            # A node that changes kind: what the old one held goes, the new one's arrives, and
            # the node itself is modified.
            return (_as_member(_added_node(right, fields, shapes, True)),
                    _not_member(_added_node(left, fields, shapes, True)))
        return {}, None
    return None, None


# The comparisons of two associative lists or sets of a built-in kind (:func:`_compare_lists`),
# remembered by the two lists' JSON and Python equality (:class:`~harness.kube.objects.JsonMemo`):
# the answer is a function of the two values, the path and the kind. The trees answered are shared
# by every caller, as encoded trees are (nothing edits one in place: see ``SharedFields``).
_LIST_COMPARISONS = JsonMemo(1024)


def _compare_lists(left: list[Any], right: list[Any], lshape: ListShape, fields: Path,
                   shapes: Shapes) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    # (changed node, removed node) of two different associative lists or sets, item by item.
    lhs = _keyed(left, lshape)
    rhs = _keyed(right, lshape)
    changed: dict[str, Any] = {}
    removed: dict[str, Any] = {}
    # The order the elements are met in does not matter: each node is sorted when it is made.
    for element, lv in lhs.items():
        rv = rhs.get(element, _MISSING)
        if rv is _MISSING:
            removed[element] = _added_item(lv, fields, shapes, True)
        elif lv is rv or (lv == rv and type(lv) is type(rv)):
            continue  # most items of a list that changed elsewhere
        elif isinstance(lv, dict) and isinstance(rv, dict):
            c, r = _compare_children(lv, rv, fields, shapes)
            if c is not None:
                changed[element] = c
            if r is not None:
                removed[element] = r
    if len(rhs) > len(lhs) - len(removed):
        for element, rv in rhs.items():
            if element not in lhs:
                changed[element] = _added_item(rv, fields, shapes, True)
    return (_alike_sorted(changed, False) if changed else None,
            _alike_sorted(removed, False) if removed else None)


def _compare_children(left: dict[str, Any], right: dict[str, Any], fields: Path,
                      shapes: Shapes) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    # The keys of two objects compared one by one; the node itself is not a member.
    changed: dict[str, Any] = {}
    removed: dict[str, Any] = {}
    for key, lv in left.items():
        rv = right.get(key)
        if lv is rv:
            continue  # most keys: nothing changed below
        kind = type(lv)
        if kind is type(rv) and lv == rv:
            continue
        if (kind in _SCALAR_TYPES or not isinstance(lv, (dict, list))) and not isinstance(rv, (dict, list)):
            # A scalar changed or dropped (``_compare_node`` inlined: the usual change).
            if rv is None:
                removed["f:" + key] = {}
            else:
                changed["f:" + key] = {}
            continue
        if kind is dict and type(rv) is dict:
            # Two objects (``_compare_node`` inlined): their keys, or the whole of an atomic one.
            below = fields + (key,)
            if shapes.dict_shape(below) == ATOMIC:
                changed["f:" + key] = {}  # they differ (above)
                continue
            c, r = _compare_children(lv, rv, below, shapes)
        else:
            c, r = _compare_node(lv, rv, fields + (key,), shapes)
        if c is not None:
            changed["f:" + key] = c
        if r is not None:
            removed["f:" + key] = r
    for key, rv in right.items():
        if rv is None or key in left:
            continue  # compared above (a key set to null is no key)
        if not isinstance(rv, (dict, list)):
            changed["f:" + key] = {}
            continue
        c = _added_node(rv, fields + (key,), shapes, True)
        if c is not None:  # an empty list that is always there (``containers: []``) adds nothing
            changed["f:" + key] = c
    return (_alike_sorted(changed, False) if changed else None,
            _alike_sorted(removed, False) if removed else None)


def edit_tree(tree: dict[str, Any], remove: dict[str, Any] | None, remove_too: dict[str, Any] | None,
              add: dict[str, Any] | None) -> dict[str, Any]:
    """``encode((decode(tree) - decode(remove) - decode(remove_too)) | decode(add))`` on the trees
    themselves, walking only the nodes the edit names: untouched nodes are shared, ``tree`` itself
    is returned when nothing changes, and a node keeps its key order unless something was added to
    it (then it is sorted as :func:`encode` sorts)."""
    out = _edit(tree or None, remove or None, remove_too or None, add or None, True)
    return {} if out is None else out


def misses(tree: dict[str, Any], remove: dict[str, Any]) -> bool:
    """Whether ``edit_tree(tree, remove, None, None)`` would hand ``tree`` back unchanged: no path
    ``tree`` owns is at a member of ``remove`` (a cheaper walk than the edit's, as it builds nothing;
    what an update's comparison changed mostly lies beside another owner's fields)."""
    for element, below in remove.items():
        node = tree.get(element)
        if node is None:
            continue
        if (not below or MEMBER in below) and (not node or MEMBER in node):
            return False  # an owned node (a leaf, or one marked ".") loses its owner
        if below and node and not misses(node, below):
            return False
    return True


def _is_member(node: dict[str, Any] | None) -> bool:
    return node is not None and (not node or MEMBER in node)


def _edit(node: dict[str, Any] | None, remove: dict[str, Any] | None, remove_too: dict[str, Any] | None,
          add: dict[str, Any] | None, root: bool = False) -> dict[str, Any] | None:
    if node is None:
        return add  # nothing to remove from; what is added is already an encoded tree (sorted)
    if add is None and remove is None and remove_too is None:
        return node
    if not node and not root and not add:
        # An owned leaf (most nodes an edit reaches): it stays unless removed and not added back.
        if add is None and (_is_member(remove) or _is_member(remove_too)):
            return None
        return node
    was = not root and _is_member(node)
    member = (was and not _is_member(remove) and not _is_member(remove_too)) or (not root and _is_member(add))
    edited: dict[str, Any] = {}
    grew = member and not was
    for below in (remove, remove_too, add):
        if not below:
            continue
        for element in below:
            if element == MEMBER or element in edited:
                continue
            current = node.get(element) if node else None
            child_add = add.get(element) if add else None
            if current is None:
                if child_add is None:
                    continue  # nothing to remove there
                edited[element] = child_add  # a new node: the added tree as it is (the call's answer)
                grew = True
                continue
            if not current and not child_add:
                # An owned leaf (the call's first answers inlined: most nodes an edit reaches).
                if child_add is None and (_is_member(remove.get(element) if remove else None)
                                          or _is_member(remove_too.get(element) if remove_too else None)):
                    edited[element] = None
                continue
            result = _edit(current, remove.get(element) if remove else None,
                           remove_too.get(element) if remove_too else None, child_add)
            if result is not current:
                edited[element] = result
                if current is None:
                    grew = True
    if not edited and member == was:
        return node
    if grew:
        children = {k: v for k, v in node.items() if k != MEMBER} if node else {}
        for element, result in edited.items():
            if result is None:
                children.pop(element, None)
            else:
                children[element] = result
        if not children:
            return {} if member else None
        return _sorted_node(children, member=member)
    out: dict[str, Any] = {}
    kept = 0
    for element, value in (node or {}).items():
        if element == MEMBER:
            if member:
                out[MEMBER] = value
            continue
        if element in edited:
            value = edited[element]
            if value is None:
                continue
        out[element] = value
        kept += 1
    if not kept:
        return {} if member else None
    return out


# -- merging an applied configuration into a live object --------------------------------------------


def merge(live: Any, config: Any, shapes: Shapes, fields: Path = ()) -> Any:
    """smd ``Merge``: the configuration laid over the live object. Structs and granular maps merge
    by key, associative lists and sets by item (live order kept, new items after the shared ones
    they follow in the configuration), atomic values are replaced."""
    if isinstance(live, dict) and isinstance(config, dict):
        if fields and shapes.dict_shape(fields) == ATOMIC:
            return json.loads(json.dumps(config))
        out = dict(live)
        for key, value in config.items():
            if value is None:
                out.pop(key, None)
                continue
            out[key] = merge(live.get(key), value, shapes, fields + (key,))
        return out
    if isinstance(live, list) and isinstance(config, list):
        lshape = shapes.list_shape(fields)
        if lshape.relationship == ATOMIC:
            return json.loads(json.dumps(config))
        rhs = _index_list(config, lshape)
        if any(e is None for e, _ in rhs):
            return json.loads(json.dumps(config))
        lhs = _index_list(live, lshape)
        rhs_map = dict(rhs)
        lhs_map = {e: v for e, v in lhs if e is not None}
        taken: set[str] = set()
        out_list: list[Any] = []
        rhs_order = [e for e, _ in rhs]

        def take_rhs_until(element: str) -> None:
            for candidate in rhs_order:
                if candidate in taken:
                    continue
                taken.add(candidate)
                out_list.append(merge(lhs_map.get(candidate), rhs_map[candidate], shapes, fields)
                                if isinstance(rhs_map[candidate], dict) else rhs_map[candidate])
                if candidate == element:
                    return

        for element, item in lhs:
            if element is not None and element in rhs_map:
                if element not in taken:
                    take_rhs_until(element)
            else:
                out_list.append(item)
        for candidate in rhs_order:
            if candidate not in taken:
                take_rhs_until(candidate)
        return out_list
    return json.loads(json.dumps(config))


def remove_paths(obj: dict[str, Any], paths: Iterable[Path], shapes: Shapes) -> dict[str, Any]:
    """A copy of ``obj`` without the values at ``paths`` (a list item goes with its whole node)."""
    result = json.loads(json.dumps(obj))
    wanted = set(paths)
    # Only the topmost paths: removing a node takes its children with it, and a child removed
    # first could change the key that finds its list item.
    tops = [p for p in wanted if not any(p[:n] in wanted for n in range(1, len(p)))]
    for path in sorted(tops, key=len):
        _remove_one(result, path, (), shapes)
    return result


def _remove_one(node: Any, path: Path, fields: Path, shapes: Shapes) -> None:
    if not path:
        return
    element, rest = path[0], path[1:]
    if isinstance(node, dict) and element.startswith("f:"):
        name = element[2:]
        if name not in node:
            return
        if not rest:
            del node[name]
            return
        _remove_one(node[name], rest, fields + (name,), shapes)
        if node[name] in ({}, []):
            del node[name]  # omitempty: a list or map emptied by removal is not kept
        return
    if isinstance(node, list):
        lshape = shapes.list_shape(fields)
        for index, (candidate, item) in enumerate(_index_list(node, lshape)):
            if candidate == element:
                if not rest:
                    del node[index]
                else:
                    _remove_one(item, rest, fields, shapes)
                return
