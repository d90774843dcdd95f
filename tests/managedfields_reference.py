"""The update path of ``harness.apiserver.managedfields`` (``record_update`` and the encoded-tree
comparison and edits of ``harness.apiserver.fieldsets`` it runs on) as main had it at 5ba3476, before
the shortcuts tests/test_managed_fields_update_equivalence.py checks (other owners' edits skipped
when ``fieldsets.misses`` says they miss, leaves and list items handled inline, children sorted as
plain strings): the oracle that test compares ``record_update`` against, step by step. A verbatim
copy, kept apart so that later changes to the modules cannot change the oracle; only the shapes, the
path-set helpers (decode, encode, element order), ``strip`` and a create's tree come from the live modules."""

# ruff: noqa
# mypy: ignore-errors

from __future__ import annotations

from dataclasses import dataclass, field
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any

from harness.apiserver import fieldsets as fs
from harness.apiserver.fieldsets import ATOMIC, LIST_SET, MEMBER, ListShape, Path, Shapes, element_sort_key, item_element
from harness.apiserver.managedfields import (
    ANCIENT_CHANGES, APPLY, FIELDS_V1, MAX_UPDATE_MANAGERS, UPDATE, SharedFields, _created_fields, is_reset,
    shapes_for, strip,
)
from harness.apiserver.resources import ResourceType

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
    for item in items:
        element = _element(item, shape)
        if element is not None:
            out[element] = item
    return out



def _sorted_node(children: dict[str, Any], *, member: bool) -> dict[str, Any]:
    out: dict[str, Any] = {MEMBER: {}} if member and children else {}
    if len(children) == 1 and not out:
        return children
    for element in sorted(children, key=element_sort_key):
        out[element] = children[element]
    return out


def _alike_sorted(children: dict[str, Any], member: bool) -> dict[str, Any]:
    # ``_sorted_node`` for children of one kind (all fields, all keys or all values): their order
    # is then the plain order of the elements, without a sort key per element.
    if len(children) == 1 and not member:
        return children
    out: dict[str, Any] = {MEMBER: {}} if member else {}
    # (Changed after 5ba3476 on purpose: keys and values sort as structured-merge-diff's value.Compare,
    # numbers by value; see tests/test_managed_fields.py.)
    for element in sorted(children, key=element_sort_key):
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
        for item in value:
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
            return ({} if left != right else None), None
        return _compare_children(left, right, fields, shapes)
    if isinstance(left, list) and isinstance(right, list):
        lshape = shapes.list_shape(fields)
        if lshape.relationship == ATOMIC:
            return ({} if left != right else None), None
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
    if type(left) is not type(right) or left != right:
        if isinstance(left, (dict, list)) or isinstance(right, (dict, list)):
            # A node that changes kind: what the old one held goes, the new one's arrives, and
            # the node itself is modified.
            return (_as_member(_added_node(right, fields, shapes, True)),
                    _not_member(_added_node(left, fields, shapes, True)))
        return {}, None
    return None, None


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
            if current is None and child_add is None:
                continue  # nothing to remove there
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



class Entry:
    """One managedFields entry. Its field set is decoded from ``fieldsV1`` only when a write needs
    it (most writes touch one or two managers' fields), and re-encoded only when it changed."""

    def __init__(
        self,
        manager: str,
        operation: str,
        api_version: str,
        time: str | None,
        fields: fs.FieldSet | None,
        subresource: str = "",
        *,
        raw: dict[str, Any] | None = None,
    ) -> None:
        self.manager = manager
        self.operation = operation
        self.api_version = api_version
        self.time = time
        self.subresource = subresource
        self._fields = fields
        self._raw = raw if fields is None else None

    @property
    def fields(self) -> fs.FieldSet:
        """The owned paths."""
        if self._fields is None:
            self._fields = fs.decode(self._raw or {})
        return self._fields

    @fields.setter
    def fields(self, value: fs.FieldSet) -> None:
        self._fields = value
        self._raw = None

    def empty(self) -> bool:
        """Owns nothing (without decoding an untouched entry)."""
        return not (self._raw if self._fields is None else self._fields)

    def edit(self, remove: dict[str, Any] | None, remove_too: dict[str, Any] | None,
             add: dict[str, Any] | None) -> None:
        """Own ``(fields - remove - remove_too) | add``, the three given as encoded trees; an
        undecoded entry is edited as its encoded tree (left as it is when the edit misses it)."""
        if self._fields is not None:
            for tree in (remove, remove_too):
                if tree:
                    self._fields = self._fields - fs.decode(tree)
            if add:
                self._fields = self._fields | fs.decode(add)
        elif remove or remove_too or add:
            self._raw = edit_tree(self._raw or {}, remove, remove_too, add)

    def same_fields(self, other: Entry) -> bool:
        """Whether two entries own the same fields (compared the cheap way when both are trees)."""
        if self._fields is None and other._fields is None:
            return (self._raw or {}) == (other._raw or {})
        return self.fields == other.fields

    @property
    def identity(self) -> tuple[str, str, str, str]:
        """BuildManagerIdentifier: apiVersion counts for Update entries only."""
        return (self.manager, self.operation, self.api_version if self.operation == UPDATE else "", self.subresource)

    def label(self) -> str:
        """The manager as conflict messages print it (``"m" using v1``)."""
        text = json.dumps(self.manager)
        if self.subresource:
            text += f' with subresource "{self.subresource}"'
        if self.operation == UPDATE:
            text += f" using {self.api_version}"
        return text

    def sort_key(self) -> str:
        """The encoded identifier upstream sorts conflicting managers by."""
        ident: dict[str, Any] = {"manager": self.manager, "operation": self.operation}
        if self.operation == UPDATE:
            ident["apiVersion"] = self.api_version
        if self.subresource:
            ident["subresource"] = self.subresource
        return json.dumps(ident, separators=(",", ":"))

    def encode(self) -> dict[str, Any]:
        """The JSON entry, keys in the Go struct's order."""
        out: dict[str, Any] = {"manager": self.manager, "operation": self.operation, "apiVersion": self.api_version}
        if self.time:
            out["time"] = self.time
        out["fieldsType"] = FIELDS_V1
        tree = self._raw if self._fields is None else fs.encode(self._fields)
        out["fieldsV1"] = tree if type(tree) is SharedFields else SharedFields(tree or {})
        if self.subresource:
            out["subresource"] = self.subresource
        return out


# The caches below hold their keys: an object larger than this is not cached.

@dataclass
class Managers:
    """All entries of one object."""

    entries: dict[tuple[str, str, str, str], Entry] = field(default_factory=dict)

    def others(self, identity: tuple[str, str, str, str]) -> list[Entry]:
        return [e for i, e in self.entries.items() if i != identity]

    def owned(self) -> fs.FieldSet:
        out: fs.FieldSet = set()
        for entry in self.entries.values():
            out |= entry.fields
        return out

    def drop_empty(self) -> None:
        self.entries = {i: e for i, e in self.entries.items() if not e.empty()}

    def encode(self) -> list[dict[str, Any]]:
        """Entries sorted as upstream sorts them."""
        ordered = sorted(
            self.entries.values(),
            key=lambda e: (e.operation, e.time or "", e.manager, e.api_version, e.subresource),
        )
        return [e.encode() for e in ordered]


def decode(raw: Any, *, trusted: bool = False) -> Managers | None:
    """The entries of a ``managedFields`` value; None when it does not decode (then the live ones
    are kept, as upstream keeps them for clients that mangle the field). ``trusted``: stored
    entries this server wrote, whose ``fieldsV1`` is decoded only when needed."""
    if not isinstance(raw, list):
        return None
    out = Managers()
    for item in raw:
        if not isinstance(item, dict):
            return None
        operation = item.get("operation")
        manager = item.get("manager", "")
        if operation not in (APPLY, UPDATE) or not isinstance(manager, str):
            return None
        if item.get("fieldsType", FIELDS_V1) != FIELDS_V1:
            return None
        fields_v1 = item.get("fieldsV1") or {}
        if trusted and isinstance(fields_v1, dict):
            fields = None
        else:
            try:
                fields = fs.decode(fields_v1)
            except ValueError:
                return None
        entry = Entry(manager, operation, str(item.get("apiVersion") or ""), item.get("time"), fields,
                      str(item.get("subresource") or ""), raw=fields_v1)
        if entry.identity in out.entries:
            return None  # duplicate manager entries do not decode upstream either
        out.entries[entry.identity] = entry
    return out



def _cap(managers: Managers, api_version: str) -> None:
    """At most 10 Update entries: the oldest fold into ``ancient-changes`` (one per apiVersion)."""
    updates = [e for e in managers.entries.values() if e.operation == UPDATE and e.manager != ANCIENT_CHANGES]
    if len(updates) <= MAX_UPDATE_MANAGERS:
        return
    updates.sort(key=lambda e: (e.time or "", e.manager))
    for entry in updates[: len(updates) - MAX_UPDATE_MANAGERS]:
        del managers.entries[entry.identity]
        ident = (ANCIENT_CHANGES, UPDATE, entry.api_version, "")
        ancient = managers.entries.setdefault(ident, Entry(ANCIENT_CHANGES, UPDATE, entry.api_version, None, set()))
        ancient.fields |= entry.fields



def record_update(
    rt: ResourceType,
    old: dict[str, Any] | None,
    new: dict[str, Any],
    manager: str,
    now: str,
    *,
    subresource: str = "",
) -> list[dict[str, Any]] | None:
    """The managedFields ``new`` must carry after a create (``old`` None), update or non-apply
    patch by ``manager``; None means "none" (an untracked object stays untracked)."""
    requested = (new.get("metadata") or {}).get("managedFields")
    live_raw = ((old or {}).get("metadata") or {}).get("managedFields") or []
    if old is None and not requested:
        # A create: it owns everything it sets, encoded in one walk.
        fields_v1 = _created_fields(rt, strip(new, rt, subresource))
        if not fields_v1:
            return None
        return [Entry(manager, UPDATE, rt.api_version, now, None, subresource, raw=fields_v1).encode()]
    live = decode(live_raw, trusted=True) or Managers()
    if subresource:
        managers = live
    elif is_reset(requested):
        managers = Managers()
    else:
        # What the client sent back unchanged is the live set (the usual case: a read-modify-write).
        given = decode(requested) if requested is not None and requested != live_raw else None
        managers = given if given is not None and given.entries else live
    if old is not None and not managers.entries:
        return None  # skipNonApplied: updates do not start tracking an object
    shapes = shapes_for(rt)
    before = strip(old, rt, subresource) if old is not None else {}
    after = strip(new, rt, subresource)
    # The changed and removed paths as encoded trees: each owner's tree is edited along them.
    changed, removed = compare_trees(before, after, shapes)
    ident = (manager, UPDATE, rt.api_version, subresource)
    if not changed and not removed and managers is live:
        return live_raw or None  # nothing changed hands
    for entry in managers.others(ident):
        entry.edit(changed, removed, None)
    own = managers.entries.get(ident)
    updated = Entry(manager, UPDATE, rt.api_version, now, None, subresource, raw={})
    if own is not None:
        updated = Entry(manager, UPDATE, rt.api_version, now, None if own._fields is None else set(own._fields),
                        subresource, raw=own._raw)
    updated.edit(removed, None, changed)
    if not updated.empty():
        if own is not None and updated.same_fields(own):
            updated.time = own.time
        managers.entries[ident] = updated
    else:
        managers.entries.pop(ident, None)
    managers.drop_empty()
    _cap(managers, rt.api_version)
    return managers.encode() if managers.entries else None

