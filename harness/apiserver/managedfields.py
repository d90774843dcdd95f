"""``metadata.managedFields`` as kube-apiserver 1.32 keeps them: who owns which field, recorded on
every write, and server-side apply's merge, prune and conflict rules.

* Every create, update and patch records an ``Update`` entry for its manager owning what it
  changed (smd ``Updater.Update``); fields it changes leave every other manager's set.
* Apply merges the configuration into the live object, owns exactly the configuration's fields,
  removes the fields it applied last time and no longer applies when nobody else owns them, and
  answers 409 when another manager owns a field whose value it would change (unless forced).
* Entries are identified by manager + operation + subresource (+ apiVersion for ``Update``),
  sorted Apply first, then by time, then by manager; their ``time`` moves only when the manager's
  set changes; at most 10 ``Update`` entries survive, older ones fold into ``ancient-changes``.
* A request body's ``managedFields`` replaces the live ones when it decodes (``[]`` or ``[{}]``
  resets them); an object without managedFields stays untracked by updates until its first
  apply, which hands everything it has to ``before-first-apply``.
* kubectl's special cases: the manager ``kubectl`` may take fields whose live value is the one in
  ``kubectl.kubernetes.io/last-applied-configuration``, and its apply rewrites that annotation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import orjson
import yaml

from harness.apiserver import fieldsets as fs
from harness.apiserver.resources import ResourceType
from harness.kube import errors
from harness.kube.names.core import LAST_APPLIED_CONFIGURATION_ANNOTATION as LAST_APPLIED

APPLY = "Apply"
UPDATE = "Update"
FIELDS_V1 = "FieldsV1"
BEFORE_FIRST_APPLY = "before-first-apply"
ANCIENT_CHANGES = "ancient-changes"
MAX_UPDATE_MANAGERS = 10
KUBECTL_MANAGER = "kubectl"
MAX_MANAGER_LENGTH = 128

# Fields nobody owns (stripmeta.go): the apiserver sets them.
_STRIPPED_META = ("name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp", "selfLink",
                  "managedFields", "deletionTimestamp", "deletionGracePeriodSeconds")


class SharedFields(dict):  # type: ignore[type-arg]
    """A ``fieldsV1`` tree the server wrote: stored objects and the copies handed out share it
    (``harness.kube.objects.clone`` copies only plain dicts and lists), because nothing edits one in place (a
    write that changes ownership encodes a new tree) and copying it would double the cost of
    every copy of every object. ``copy.deepcopy`` shares it too; the one patch that can edit
    inside it (a JSON patch under ``/metadata/managedFields``) works on a plain copy
    (:func:`unshare`)."""

    def __deepcopy__(self, memo: dict[int, Any]) -> SharedFields:
        return self


def unshare(obj: dict[str, Any]) -> None:
    """Give ``obj`` plain, private copies of its ``fieldsV1`` trees (before editing them in place)."""
    for entry in (obj.get("metadata") or {}).get("managedFields") or []:
        if isinstance(entry, dict) and isinstance(entry.get("fieldsV1"), SharedFields):
            entry["fieldsV1"] = json.loads(json.dumps(entry["fieldsV1"]))


# YAML output (reports, application/yaml answers) writes it as the mapping it is.
yaml.SafeDumper.add_representer(SharedFields, yaml.representer.SafeRepresenter.represent_dict)


class Entry:
    """One managedFields entry. Its field set is decoded from ``fieldsV1`` only when a write needs
    it (most writes touch one or two managers' fields), and re-encoded only when it changed."""

    __slots__ = ("manager", "operation", "api_version", "time", "subresource", "_fields", "_raw")

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
            self._raw = fs.edit_tree(self._raw or {}, remove, remove_too, add)

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
_CACHED_KEY_MAX_BYTES = 16 * 1024


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
        if any(e.empty() for e in self.entries.values()):
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
    entries = out.entries
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
        api_version = item.get("apiVersion") or ""
        if type(api_version) is not str:
            api_version = str(api_version)
        subresource = item.get("subresource") or ""
        if type(subresource) is not str:
            subresource = str(subresource)
        entry = Entry(manager, operation, api_version, item.get("time"), fields, subresource, raw=fields_v1)
        # (Entry.identity, spelt out: this runs for every entry of every write.)
        identity = (manager, operation, api_version if operation == UPDATE else "", subresource)
        if identity in entries:
            return None  # duplicate manager entries do not decode upstream either
        entries[identity] = entry
    return out


def is_reset(raw: Any) -> bool:
    """``[]`` or ``[{}]``: the client asks to clear every entry."""
    return isinstance(raw, list) and (not raw or raw == [{}])


def manager_from_user_agent(user_agent: str | None) -> str:
    """prefixFromUserAgent: the User-Agent up to its first ``/``, printable ASCII, at most 128 bytes."""
    head = (user_agent or "").split("/", 1)[0]
    printable = "".join(c for c in head if 32 <= ord(c) < 127)
    return printable.encode()[:MAX_MANAGER_LENGTH].decode(errors="ignore")


def strip(obj: dict[str, Any], rt: ResourceType, subresource: str) -> dict[str, Any]:
    """The part of an object fields are tracked for: no apiVersion/kind, no server-set metadata,
    and only ``status`` through ``/status`` (the main resource resets it) when the kind has one."""
    if rt.status and subresource == "status":
        return {"status": obj["status"]} if "status" in obj else {}
    out = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    meta = out.get("metadata")
    if isinstance(meta, dict):
        meta = {k: v for k, v in meta.items() if k not in _STRIPPED_META}
        if meta:
            out["metadata"] = meta
        else:
            out.pop("metadata", None)
    if rt.status:
        out.pop("status", None)
    return out


_BUILTIN_SHAPES: dict[str, fs.BuiltinShapes] = {}


def shapes_for(rt: ResourceType) -> fs.Shapes:
    """How the kind's lists and maps are merged and owned (a built-in kind's, kept: they
    remember what they answered)."""
    if rt.custom:
        return fs.SchemaShapes(rt.schema)
    shapes = _BUILTIN_SHAPES.get(rt.kind)
    if shapes is None:
        shapes = _BUILTIN_SHAPES[rt.kind] = fs.BuiltinShapes(rt.kind)
    return shapes


def _cap(managers: Managers, api_version: str) -> None:
    """At most 10 Update entries: the oldest fold into ``ancient-changes`` (one per apiVersion)."""
    if len(managers.entries) <= MAX_UPDATE_MANAGERS:
        return  # (the usual case: fewer entries than the cap, whatever they are)
    updates = [e for e in managers.entries.values() if e.operation == UPDATE and e.manager != ANCIENT_CHANGES]
    if len(updates) <= MAX_UPDATE_MANAGERS:
        return
    updates.sort(key=lambda e: (e.time or "", e.manager))
    for entry in updates[: len(updates) - MAX_UPDATE_MANAGERS]:
        del managers.entries[entry.identity]
        ident = (ANCIENT_CHANGES, UPDATE, entry.api_version, "")
        ancient = managers.entries.setdefault(ident, Entry(ANCIENT_CHANGES, UPDATE, entry.api_version, None, set()))
        ancient.fields |= entry.fields


_CREATED_CACHE: dict[tuple[str, str, str, int, bytes], SharedFields] = {}
_CREATED_CACHE_SIZE = 512
# The same by the body's outline (:func:`_outline`): bodies that differ only in their scalars (an
# Event per Pod: its message, the Pod's name, uid and resourceVersion) own the same tree.
_CREATED_BY_OUTLINE: dict[tuple[str, str, str, int, bytes], SharedFields] = {}


def _outline(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` with every scalar held by an object replaced by None; lists are kept whole. What a
    create owns depends on nothing else: an object's keys, which values are objects or lists (and
    whether they are empty), and a list's items (their keys name the list's elements); never on a
    scalar field's value."""
    out: dict[str, Any] = {}
    for key, child in value.items():
        kind = type(child)
        out[key] = _outline(child) if kind is dict else child if kind is list else None
    return out


def _remember_created(cache: dict[tuple[str, str, str, int, bytes], SharedFields],
                      key: tuple[str, str, str, int, bytes], fields: SharedFields) -> SharedFields:
    if len(cache) >= _CREATED_CACHE_SIZE:
        cache.pop(next(iter(cache)))
    cache[key] = fields
    return fields


def _created_fields(rt: ResourceType, stripped: dict[str, Any]) -> SharedFields:
    """What a create owns. Objects made from one template (a ReplicaSet's Pods) own the same tree,
    so it is computed once per distinct body (the body's JSON, without name and uid, is the key),
    and once per distinct outline of bodies that differ only in their scalars."""
    try:
        # orjson: the key only needs to be canonical (keys sorted), and the C encoder is several
        # times faster than json.dumps on every create.
        text = orjson.dumps(stripped, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # orjson.JSONEncodeError (a non-string key, an integer beyond 64 bits)
        text = b""
    if not text or len(text) > _CACHED_KEY_MAX_BYTES:
        # A large object is not a template stamped out many times; a key of its size would only
        # hold its memory.
        return SharedFields(fs.added_fields_v1(stripped, shapes_for(rt)))
    # A custom resource's shapes come from its schema, which a CRD update replaces.
    kind = (rt.group, rt.version, rt.plural, id(rt.schema) if rt.custom else 0)
    key = (*kind, text)
    cached = _CREATED_CACHE.get(key)
    if cached is not None:
        return cached
    outline = (*kind, orjson.dumps(_outline(stripped), option=orjson.OPT_SORT_KEYS))
    cached = _CREATED_BY_OUTLINE.get(outline)
    if cached is not None:
        return cached  # not remembered by its JSON too: such bodies rarely come again
    fields = SharedFields(fs.added_fields_v1(stripped, shapes_for(rt)))
    _remember_created(_CREATED_BY_OUTLINE, outline, fields)
    return _remember_created(_CREATED_CACHE, key, fields)


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
    changed, removed = fs.compare_trees(before, after, shapes)
    api_version = rt.api_version
    ident = (manager, UPDATE, api_version, subresource)
    if not changed and not removed and managers is live:
        return live_raw or None  # nothing changed hands
    own = None
    for identity, entry in managers.entries.items():
        if identity == ident:
            own = entry
            continue
        raw = entry._raw
        if entry._fields is None and raw is not None and fs.misses(raw, changed) \
                and (not removed or fs.misses(raw, removed)):
            continue  # nothing this owner owns changed hands (the edit would hand its tree back)
        entry.edit(changed, removed, None)
    if own is None:
        updated = Entry(manager, UPDATE, api_version, now, None, subresource, raw={})
    else:
        updated = Entry(manager, UPDATE, api_version, now, None if own._fields is None else set(own._fields),
                        subresource, raw=own._raw)
    updated.edit(removed, None, changed)
    if not updated.empty():
        if own is not None and updated.same_fields(own):
            updated.time = own.time
        managers.entries[ident] = updated
    else:
        managers.entries.pop(ident, None)
    managers.drop_empty()
    _cap(managers, api_version)
    return managers.encode() if managers.entries else None


@dataclass
class Conflict:
    """A field another manager owns whose value an apply would change."""

    owner: Entry
    path: fs.Path


def conflict_error(conflicts: list[Conflict]) -> errors.StatusError:
    """409 ``Conflict`` worded as ``internal/conflict.go`` words it, one cause per field."""
    conflicts = sorted(conflicts, key=lambda c: (c.owner.sort_key(), [fs.element_sort_key(e) for e in c.path]))
    causes = [{"reason": "FieldManagerConflict", "message": f"conflict with {c.owner.label()}",
               "field": fs.path_string(c.path)} for c in conflicts]
    if len(conflicts) == 1:
        only = conflicts[0]
        message = f"Apply failed with 1 conflict: conflict with {only.owner.label()}: {fs.path_string(only.path)}"
    else:
        lines: list[str] = []
        seen: list[str] = []
        for c in conflicts:
            if c.owner.sort_key() not in seen:
                seen.append(c.owner.sort_key())
                lines.append(f"conflicts with {c.owner.label()}:")
            lines.append(f"- {fs.path_string(c.path)}")
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    status = errors.status(409, "Conflict", message, {"causes": causes})
    return errors.StatusError(status)


@dataclass
class ApplyResult:
    """What an apply produces: the object to store and its managedFields."""

    obj: dict[str, Any]
    managed_fields: list[dict[str, Any]]
    changed: bool


def _value_at(obj: Any, path: fs.Path, shapes: fs.Shapes) -> Any:
    node = obj
    fields: fs.Path = ()
    for element in path:
        if isinstance(node, dict) and element.startswith("f:"):
            name = element[2:]
            if name not in node:
                return _ABSENT
            node = node[name]
            fields += (name,)
        elif isinstance(node, list):
            shape = shapes.list_shape(fields)
            for item in node:
                if fs.item_element(item, shape) == element:
                    node = item
                    break
            else:
                return _ABSENT
        else:
            return _ABSENT
    return node


_ABSENT = object()


def _last_applied(live: dict[str, Any]) -> dict[str, Any] | None:
    raw = ((live.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED)
    if not isinstance(raw, str):
        return None
    try:
        parsed = json.loads(raw)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def apply(
    rt: ResourceType,
    live: dict[str, Any] | None,
    config: dict[str, Any],
    manager: str,
    now: str,
    *,
    force: bool,
    subresource: str = "",
) -> ApplyResult:
    """Server-side apply of ``config`` by ``manager`` onto ``live`` (None: the object is created).

    Returns the merged object (with apiVersion/kind/metadata of ``live`` kept) and its entries;
    raises the 409 conflict error when another manager owns a field this apply changes."""
    shapes = shapes_for(rt)
    live_obj = live or {"metadata": {}}
    live_meta = live_obj.get("metadata") or {}
    managers = decode(live_meta.get("managedFields") or [], trusted=True) or Managers()
    base = strip(live_obj, rt, subresource)
    applied = strip(config, rt, subresource)
    if live is not None and not managers.entries:
        # skipNonApplied: what the object has so far belongs to a stand-in Update manager.
        existing = fs.to_field_set(base, shapes)
        if existing:
            managers.entries[(BEFORE_FIRST_APPLY, UPDATE, rt.api_version, "")] = Entry(
                BEFORE_FIRST_APPLY, UPDATE, rt.api_version, now, existing)
    ident = (manager, APPLY, "", subresource)
    last = managers.entries.get(ident)
    last_fields = set(last.fields) if last else set()
    new_fields = fs.to_field_set(applied, shapes)
    merged = fs.merge(base, applied, shapes)
    # Prune: what this manager applied before and leaves out now goes, unless someone owns it.
    others_owned: fs.FieldSet = new_fields.copy()
    for entry in managers.others(ident):
        others_owned |= entry.fields
    dropped = [p for p in last_fields - new_fields if not fs.owns_at_or_under(others_owned, p)]
    pruned = fs.remove_paths(merged, dropped, shapes) if dropped else merged
    comparison = fs.compare(base, pruned, shapes)
    conflicts = [Conflict(entry, path) for entry in managers.others(ident)
                 for path in sorted(entry.fields & comparison.changed)]
    if conflicts and not force and manager == KUBECTL_MANAGER:
        force = _conflicts_match_last_applied(live_obj, conflicts, shapes)
    if conflicts and not force:
        raise conflict_error(conflicts)
    for entry in managers.others(ident):
        entry.fields = (entry.fields - comparison.changed) - comparison.removed
    changed_object = pruned != base
    time = last.time if last is not None and last_fields == new_fields and not changed_object else now
    if new_fields:
        managers.entries[ident] = Entry(manager, APPLY, rt.api_version, time, new_fields, subresource)
    else:
        managers.entries.pop(ident, None)
    managers.drop_empty()
    _cap(managers, rt.api_version)
    result = dict(pruned)
    for key in ("apiVersion", "kind"):
        if key in live_obj:
            result[key] = live_obj[key]
    meta = dict(result.get("metadata") or {})
    for key in _STRIPPED_META:
        if key in live_meta:
            meta[key] = live_meta[key]
    if rt.status and subresource != "status" and "status" in live_obj:
        result["status"] = live_obj["status"]
    if rt.status and subresource == "status":
        result = {**live_obj, "status": pruned.get("status")} if "status" in pruned else \
            {k: v for k, v in live_obj.items() if k != "status"}
        meta = dict(live_meta)
    if manager == KUBECTL_MANAGER and LAST_APPLIED in (live_meta.get("annotations") or {}):
        meta.setdefault("annotations", {})
        meta["annotations"] = dict(meta["annotations"])
        meta["annotations"][LAST_APPLIED] = _last_applied_text(config)
    meta["managedFields"] = managers.encode()
    result["metadata"] = meta
    return ApplyResult(result, managers.encode(), changed_object)


def _last_applied_text(config: dict[str, Any]) -> str:
    """The last-applied annotation kubectl would write for ``config`` (itself without the annotation)."""
    copy = json.loads(json.dumps(config))
    annotations = (copy.get("metadata") or {}).get("annotations")
    if isinstance(annotations, dict):
        annotations.pop(LAST_APPLIED, None)
        if not annotations:
            copy["metadata"].pop("annotations")
    return json.dumps(copy, separators=(",", ":"), sort_keys=True) + "\n"


def _conflicts_match_last_applied(live: dict[str, Any], conflicts: list[Conflict], shapes: fs.Shapes) -> bool:
    """lastAppliedManager: conflicts are waived when every conflicting field still holds the value
    the client-side apply annotation recorded (the same user moving to server-side apply)."""
    last = _last_applied(live)
    if last is None:
        return False
    for conflict in conflicts:
        recorded = _value_at(last, conflict.path, shapes)
        if recorded is _ABSENT or recorded != _value_at(live, conflict.path, shapes):
            return False
    return True
