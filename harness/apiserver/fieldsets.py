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
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any, TypeVar

from harness.apiserver import patch as smp

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
    # Fields, then keys, then values, then indices (fieldpath Compare); indices numerically.
    kind = element[:2]
    if kind == "i:":
        try:
            return (_ORDER[kind], (int(element[2:]), ""))
        except ValueError:
            return (_ORDER[kind], (0, element))
    return (_ORDER.get(kind, 4), (0, element[2:]))


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


# -- editing encoded trees in place of decoding them -------------------------------------------------


def _ordered(node: dict[str, Any]) -> None:
    items = sorted(node.items(), key=lambda kv: (-1, (0, "")) if kv[0] == MEMBER else element_sort_key(kv[0]))
    node.clear()
    node.update(items)


def tree_edit(tree: dict[str, Any], remove: Iterable[Path], add: Iterable[Path]) -> dict[str, Any]:
    """``encode((decode(tree) - remove) | add)`` computed on the tree itself: only the nodes along
    the edited paths are copied (the rest is shared), which keeps a write proportional to what it
    changed rather than to the size of the object."""
    root = dict(tree)
    mine: dict[int, dict[str, Any]] = {id(root): root}
    reorder: dict[int, dict[str, Any]] = {}

    def child(node: dict[str, Any], element: str) -> dict[str, Any] | None:
        current = node.get(element)
        if current is None:
            return None
        if id(current) not in mine:
            current = dict(current)
            node[element] = current
            mine[id(current)] = current
        return current

    for path in remove:
        stack = [root]
        node: dict[str, Any] | None = root
        for element in path:
            node = child(stack[-1], element)
            if node is None:
                break
            stack.append(node)
        if node is None or not path:
            continue
        if any(k != MEMBER for k in node):
            node.pop(MEMBER, None)  # stays as the parent of what it holds
            continue
        depth = len(path)
        del stack[depth - 1][path[depth - 1]]
        for level in range(depth - 1, 0, -1):
            parent = stack[level]
            if parent:
                if list(parent) == [MEMBER]:
                    stack[level - 1][path[level - 1]] = {}  # a member with no children left
                break
            del stack[level - 1][path[level - 1]]  # an emptied parent that was not itself owned
    for path in add:
        node = root
        last = len(path) - 1
        for index, element in enumerate(path):
            # ``child`` inlined: this loop runs for every element of every path a write owns.
            nxt = node.get(element)
            if nxt is None:
                nxt = {}
                node[element] = nxt
                mine[id(nxt)] = nxt
                reorder[id(node)] = node
            else:
                if id(nxt) not in mine:
                    nxt = dict(nxt)
                    node[element] = nxt
                    mine[id(nxt)] = nxt
                if not nxt and index < last:
                    nxt[MEMBER] = {}  # an owned leaf gains children and stays owned
            node = nxt
        if node and MEMBER not in node:
            node[MEMBER] = {}
            reorder[id(node)] = node
    for node in reorder.values():
        _ordered(node)
    return root


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
        return _remembered(self._dict_shapes, fields, self._dict_shape)

    def list_shape(self, fields: Path) -> ListShape:
        return _remembered(self._list_shapes, fields, self._list_shape)

    def value_struct(self, fields: Path) -> bool:
        return _remembered(self._value_structs, fields, self._value_struct)

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
    out: dict[str, Any] = {}
    for key in obj:
        node = _added_node(obj[key], (key,), shapes)
        if node is not None:
            out[field(key)] = node
    return _sorted_node(out, member=False)


def _sorted_node(children: dict[str, Any], *, member: bool) -> dict[str, Any]:
    out: dict[str, Any] = {MEMBER: {}} if member and children else {}
    if len(children) == 1 and not out:
        return children
    for element in sorted(children, key=element_sort_key):
        out[element] = children[element]
    return out


def _added_node(value: Any, fields: Path, shapes: Shapes) -> dict[str, Any] | None:
    # The encoded node of a wholly added value (None: the value adds no path at all).
    if isinstance(value, dict):
        if shapes.dict_shape(fields) == ATOMIC or not value:
            return {}
        children: dict[str, Any] = {}
        for key, child in value.items():
            node = _added_node(child, fields + (key,), shapes)
            if node is not None:
                children[field(key)] = node
        member = not shapes.value_struct(fields)
        if not children:
            return {} if member else None
        return _sorted_node(children, member=member)
    if isinstance(value, list):
        lshape = shapes.list_shape(fields)
        if lshape.relationship == ATOMIC:
            return {}
        member = not shapes.value_struct(fields)
        children = {}
        for item in value:
            element = item_element(item, lshape)
            if element is None:
                member = True
                continue
            item_children: dict[str, Any] = {}
            if isinstance(item, dict):
                for key, child in item.items():
                    node = _added_node(child, fields + (key,), shapes)
                    if node is not None:
                        item_children[field(key)] = node
            children[element] = _sorted_node(item_children, member=True)
        if not children:
            return {} if member else None
        return _sorted_node(children, member=member)
    return {}


def has_path(fields_v1: dict[str, Any], path: Path) -> bool:
    """Whether an encoded ``fieldsV1`` tree has a node at ``path`` (owned or a parent)."""
    node: Any = fields_v1
    for element in path:
        if not isinstance(node, dict) or element not in node:
            return False
        node = node[element]
    return True


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
