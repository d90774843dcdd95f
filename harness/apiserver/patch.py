"""The three non-apply PATCH bodies kube-apiserver 1.32 accepts, applied to plain-dict objects.

* :func:`json_patch` — RFC 6902, with the quirks of ``gopkg.in/evanphx/json-patch.v4`` that the
  apiserver inherits (``replace`` of a missing object key adds it, negative array indices count from
  the end, a missing ``value`` means ``null``).
* :func:`merge_patch` — RFC 7386 as ``jsonpatch.MergePatch`` does it.
* :func:`strategic_merge_patch` — ``apimachinery/pkg/util/strategicpatch`` for built-in kinds, driven
  by a per-kind table of list/map patch strategies instead of Go struct tags.

Every function works on deep copies: the caller's document and patch are never mutated. Error
codes follow ``apiserver/pkg/endpoints/handlers/patch.go``: an undecodable JSON patch is 400, any
failure while applying one is 422 with the generic "rejected our request" message (the json-patch
detail is kept as the exception's ``__cause__`` for debugging only, as upstream drops it too).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from harness.apiserver.decoding import json_kind
from harness.kube.errors import (
    StatusError,
    bad_request,
    request_entity_too_large,
    unprocessable,
    unsupported_media_type,
)
from harness.kube.names.meta import APPLY_PATCH_CONTENT_TYPE as APPLY_YAML_CONTENT_TYPE
from harness.kube.names.meta import JSON_PATCH_CONTENT_TYPE
from harness.kube.names.meta import MERGE_PATCH_CONTENT_TYPE as MERGE_CONTENT_TYPE
from harness.kube.names.meta import PATCH_DIRECTIVE as _PATCH
from harness.kube.names.meta import STRATEGIC_MERGE_PATCH_CONTENT_TYPE as SMP_CONTENT_TYPE
from harness.kube.objects import clone

# ``maxJSONPatchOperations`` in handlers/patch.go.
MAX_JSON_PATCH_OPERATIONS = 10000
# json-patch's AccumulatedCopySizeLimit as the apiserver sets it (JSONPatchMaxCopyBytes): the JSON
# size of every value ``copy`` operations duplicate, summed over the patch, checked op by op.
MAX_JSON_PATCH_COPY_BYTES = 3 * 1024 * 1024


# Go-flavoured rendering of decoded JSON, used only to word error messages like upstream (the JSON kind
# names are the typed decoder's json_kind).


def _go_value(value: Any) -> str:
    """``fmt`` ``%v`` of a decoded JSON value (maps print with sorted keys, as Go does)."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go_value(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(_go_value(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "<nil>"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return str(value)


def _json_equal(left: Any, right: Any) -> bool:
    """Structural JSON equality where ``true`` is not ``1`` and ``1`` is not ``1.0``.

    json-patch compares scalars by their compact JSON text, so Python's ``True == 1`` and
    ``1 == 1.0`` must not leak through.
    """
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_json_equal(left[k], right[k]) for k in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(_json_equal(a, b) for a, b in zip(left, right, strict=True))
    return type(left) is type(right) and left == right


# ---------------------------------------------------------------------------------------------
# RFC 6902 JSON patch
# ---------------------------------------------------------------------------------------------


class JSONPatchApplyError(Exception):
    """A json-patch operation that could not be applied; carries the library's wording."""


_MISSING = object()
_POINTER_ESCAPE = re.compile(r"~[01]")
_GO_ATOI = re.compile(r"[+-]?[0-9]+")


def _pointer_tokens(path: str) -> list[str]:
    # "~1" then "~0" in a single left-to-right pass, so "~01" decodes to "~1" as RFC 6901 wants.
    return [_POINTER_ESCAPE.sub(lambda m: "/" if m.group() == "~1" else "~", part) for part in path.split("/")[1:]]


def _array_index(token: str, length: int, *, inserting: bool = False) -> int:
    """Resolve an array token; negative indices count from the end as json-patch v4 allows."""
    if not _GO_ATOI.fullmatch(token):
        raise JSONPatchApplyError(f"value was not a proper array index: '{token}'")
    index = int(token)
    size = length + 1 if inserting else length
    if index >= size or index < -size:
        raise JSONPatchApplyError(f"Unable to access invalid index: {index}: invalid index referenced")
    return index + size if index < 0 else index


def _parent(doc: Any, path: str) -> tuple[dict[str, Any] | list[Any], str] | None:
    """The container holding the pointer's last token, or None when any step is missing."""
    if not path.startswith("/"):
        return None
    tokens = _pointer_tokens(path)
    node = doc
    for token in tokens[:-1]:
        if isinstance(node, dict):
            node = node.get(token)
        elif isinstance(node, list):
            try:
                node = node[_array_index(token, len(node))]
            except JSONPatchApplyError:
                return None
        else:
            return None
        if not isinstance(node, (dict, list)):
            return None
    return node, tokens[-1]


def _read(container: dict[str, Any] | list[Any], key: str) -> Any:
    # An absent object key reads as null (json-patch returns a nil node without an error).
    if isinstance(container, dict):
        return container.get(key)
    return container[_array_index(key, len(container))]


def _insert(container: dict[str, Any] | list[Any], key: str, value: Any) -> None:
    if isinstance(container, dict):
        container[key] = value
    elif key == "-":
        container.append(value)
    else:
        container.insert(_array_index(key, len(container), inserting=True), value)


def _delete(container: dict[str, Any] | list[Any], key: str) -> None:
    if isinstance(container, dict):
        if key not in container:
            raise JSONPatchApplyError(f"Unable to remove nonexistent key: {key}: missing value")
        del container[key]
    else:
        del container[_array_index(key, len(container))]


def _op_string(operation: dict[str, Any], field: str) -> str | None:
    value = operation.get(field)
    return value if isinstance(value, str) else None


def _apply_operation(doc: Any, operation: dict[str, Any], copied: list[int] | None = None) -> Any:
    """Apply one operation to ``doc`` in place and return the (possibly replaced) root."""
    op = _op_string(operation, "op") or "unknown"
    if op not in {"add", "remove", "replace", "move", "copy", "test"}:
        raise JSONPatchApplyError(f"Unexpected kind: {op}")
    path = _op_string(operation, "path")
    if path is None:
        raise JSONPatchApplyError(f"{op} operation failed to decode path: missing value")
    value = clone(operation.get("value"))

    if op == "test":
        if path == "":
            target: Any = doc
        else:
            located = _parent(doc, path)
            if located is None:
                raise JSONPatchApplyError(f"test operation does not apply: is missing path: {path}: missing value")
            target = _read(*located)
        # A null (or absent) target passes only against a null (or absent) value.
        if target is None or operation.get("value") is None:
            if target is None and operation.get("value") is None:
                return doc
        elif _json_equal(target, operation["value"]):
            return doc
        raise JSONPatchApplyError(f"testing value {path} failed: test failed")

    if op == "replace" and path == "":
        if not isinstance(value, (dict, list)):
            raise JSONPatchApplyError("replace operation value must be object or array")
        return value

    if op in {"move", "copy"}:
        source = _op_string(operation, "from")
        if source is None:
            raise JSONPatchApplyError(f"{op} operation failed to decode from: missing value")
        located = _parent(doc, source)
        if located is None:
            raise JSONPatchApplyError(
                f"{op} operation does not apply: doc is missing from path: {source}: missing value"
            )
        source_value = _read(*located)
        if op == "copy" and copied is not None:
            # Counted before the value is duplicated: 17 copies of 800 bytes must not build 15 MB.
            copied[0] += len(json.dumps(source_value, separators=(",", ":"), ensure_ascii=False).encode())
            if copied[0] > MAX_JSON_PATCH_COPY_BYTES:
                raise JSONPatchApplyError(
                    f"unable to copy: accumulated copy size {copied[0]} exceeds {MAX_JSON_PATCH_COPY_BYTES}"
                )
        value = clone(source_value)
        if op == "move":
            _delete(*located)

    located = _parent(doc, path)
    if located is None:
        where = "destination path" if op in {"move", "copy"} else "path"
        raise JSONPatchApplyError(f'{op} operation does not apply: doc is missing {where}: "{path}": missing value')
    container, key = located
    if op == "remove":
        _delete(container, key)
    elif op == "replace":
        if isinstance(container, dict):
            # json-patch v4 quirk kept on purpose: replacing a missing object key adds it.
            container[key] = value
        else:
            container[_array_index(key, len(container))] = value
    else:
        _insert(container, key, value)
    return doc


def json_patch(doc: dict[str, Any], operations: Any) -> dict[str, Any]:
    """Apply an RFC 6902 JSON patch to a copy of ``doc`` and return the patched copy.

    Promises the apiserver's status codes: a body that does not decode as a list of operation
    objects is 400, more than 10000 operations is 413, and any failure while applying (a failed
    ``test``, a missing path, an unknown ``op``, a bad index) is 422 ``Invalid`` with the message
    "the server rejected our request due to an error in our request". A ``null`` body is a no-op.
    """
    if operations is None:
        return clone(doc)
    if not isinstance(operations, list):
        raise bad_request(f"json: cannot unmarshal {json_kind(operations)} into Go value of type jsonpatch.Patch")
    for operation in operations:
        if operation is not None and not isinstance(operation, dict):
            raise bad_request(
                f"json: cannot unmarshal {json_kind(operation)} into Go value of type jsonpatch.Operation"
            )
    if len(operations) > MAX_JSON_PATCH_OPERATIONS:
        raise request_entity_too_large(
            f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {len(operations)}"
        )
    result: Any = clone(doc)
    copied = [0]
    for operation in operations:
        try:
            result = _apply_operation(result, operation or {}, copied)
        except (JSONPatchApplyError, IndexError) as err:
            raise unprocessable() from err
    if not isinstance(result, dict):
        raise bad_request(
            f"json: cannot unmarshal {json_kind(result)} into Go value of type map[string]interface {{}}"
        )
    return result


# ---------------------------------------------------------------------------------------------
# RFC 7386 JSON merge patch
# ---------------------------------------------------------------------------------------------


def _prune_nulls(value: Any) -> Any:
    # Nulls inside a value that lands where nothing was merged mean "absent", at every depth.
    if isinstance(value, dict):
        return {k: _prune_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_prune_nulls(v) for v in value]
    return value


def _merge_objects(target: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
            continue
        current = target.get(key)
        if not isinstance(current, dict):
            target[key] = _prune_nulls(value)
        elif isinstance(value, dict):
            target[key] = _merge_objects(current, value)
        else:
            target[key] = value
    return target


def merge_patch(doc: dict[str, Any], patch: Any) -> dict[str, Any]:
    """Apply an RFC 7386 merge patch to a copy of ``doc`` and return it.

    ``null`` deletes a key, objects merge recursively, anything else (arrays included) replaces.
    A patch that is not a JSON object is 400 ``Invalid JSON Patch``, as ``jsonpatch.MergePatch``.
    """
    if not isinstance(patch, dict):
        raise bad_request("Invalid JSON Patch")
    return _merge_objects(clone(doc), clone(patch))


# ---------------------------------------------------------------------------------------------
# Strategic merge patch: the schema table
# ---------------------------------------------------------------------------------------------

# A field's patch strategy as its Go struct tag spells it, and the merge key for lists of maps.
# Lists that are absent from a table are atomic (replaced wholesale): tolerations, taints,
# args, command, containerStatuses, volumesAttached, volumesInUse and so on.
Strategy = tuple[str, str | None]
StrategyTable = dict[tuple[str, ...], Strategy]

MERGE = "merge"
MERGE_RETAIN_KEYS = "merge,retainKeys"
RETAIN_KEYS = "retainKeys"
REPLACE = "replace"


def _mount(prefix: tuple[str, ...], table: StrategyTable) -> StrategyTable:
    return {prefix + path: strategy for path, strategy in table.items()}


def _compose(*tables: StrategyTable) -> StrategyTable:
    out: StrategyTable = {}
    for table in tables:
        out.update(table)
    return out


_OBJECT_META: StrategyTable = {
    ("finalizers",): (MERGE, None),
    ("ownerReferences",): (MERGE, "uid"),
}

_CONTAINER: StrategyTable = {
    ("ports",): (MERGE, "containerPort"),
    ("env",): (MERGE, "name"),
    ("volumeMounts",): (MERGE, "mountPath"),
    ("volumeDevices",): (MERGE, "devicePath"),
}

_POD_SPEC: StrategyTable = _compose(
    {
        ("volumes",): (MERGE_RETAIN_KEYS, "name"),
        ("containers",): (MERGE, "name"),
        ("initContainers",): (MERGE, "name"),
        ("ephemeralContainers",): (MERGE, "name"),
        ("imagePullSecrets",): (MERGE, "name"),
        ("hostAliases",): (MERGE, "ip"),
        ("topologySpreadConstraints",): (MERGE, "topologyKey"),
        ("schedulingGates",): (MERGE, "name"),
        ("resourceClaims",): (MERGE_RETAIN_KEYS, "name"),
    },
    _mount(("containers",), _CONTAINER),
    _mount(("initContainers",), _CONTAINER),
    _mount(("ephemeralContainers",), _CONTAINER),
)

_POD_STATUS: StrategyTable = {
    ("conditions",): (MERGE, "type"),
    ("podIPs",): (MERGE, "ip"),
    ("hostIPs",): (MERGE, "ip"),
    ("resourceClaimStatuses",): (MERGE_RETAIN_KEYS, "name"),
}

_POD_TEMPLATE_SPEC: StrategyTable = _compose(_mount(("metadata",), _OBJECT_META), _mount(("spec",), _POD_SPEC))

_CONDITIONS_BY_TYPE: StrategyTable = {("status", "conditions"): (MERGE, "type")}

_WORKLOAD: StrategyTable = _compose(_mount(("spec", "template"), _POD_TEMPLATE_SPEC), _CONDITIONS_BY_TYPE)

_KIND_TABLES: dict[str, StrategyTable] = {
    "Pod": _compose(_mount(("spec",), _POD_SPEC), _mount(("status",), _POD_STATUS)),
    "PodTemplate": _mount(("template",), _POD_TEMPLATE_SPEC),
    "Deployment": _compose(_WORKLOAD, {("spec", "strategy"): (RETAIN_KEYS, None)}),
    "ReplicaSet": _WORKLOAD,
    "StatefulSet": _WORKLOAD,
    "DaemonSet": _WORKLOAD,
    "ReplicationController": _WORKLOAD,
    "Job": _WORKLOAD,
    "CronJob": _compose(
        _mount(("spec", "jobTemplate", "metadata"), _OBJECT_META),
        _mount(("spec", "jobTemplate", "spec", "template"), _POD_TEMPLATE_SPEC),
    ),
    "Node": {
        ("spec", "podCIDRs"): (MERGE, None),
        ("status", "conditions"): (MERGE, "type"),
        ("status", "addresses"): (MERGE, "type"),
    },
    "Namespace": _CONDITIONS_BY_TYPE,
    "Service": _compose({("spec", "ports"): (MERGE, "port")}, _CONDITIONS_BY_TYPE),
    "PersistentVolumeClaim": _CONDITIONS_BY_TYPE,
    # policy/v1 tags the selector patchStrategy=replace: a patch swaps the whole selector.
    "PodDisruptionBudget": _compose({("spec", "selector"): (REPLACE, None)}, _CONDITIONS_BY_TYPE),
    "ServiceAccount": {("secrets",): (MERGE, "name")},
    "CSINode": {("spec", "drivers"): (MERGE, "name")},
    # Built-ins whose only strategies are the ObjectMeta ones.
    "ConfigMap": {},
    "Secret": {},
    "Event": {},
    "Endpoints": {},
    "PersistentVolume": {},
    "VolumeAttachment": {},
    "StorageClass": {},
    "CSIDriver": {},
    "ControllerRevision": {},
    "CustomResourceDefinition": {},
    "Lease": {},
    "PriorityClass": {},
    "LimitRange": {},
    "ResourceQuota": {},
}

# Every kind carries ObjectMeta at ``metadata``.
STRATEGIES: dict[str, StrategyTable] = {
    kind: _compose(_mount(("metadata",), _OBJECT_META), table) for kind, table in _KIND_TABLES.items()
}


def supports_strategic(kind: str) -> bool:
    """True when ``kind`` is a built-in kind this server can strategic-merge-patch.

    Custom resources (and unknown kinds) answer False; for them the caller must reply 415.
    """
    return kind in STRATEGIES


# ---------------------------------------------------------------------------------------------
# Strategic merge patch: the algorithm
# ---------------------------------------------------------------------------------------------

_RETAIN_KEYS = "$retainKeys"
_DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList"
_SET_ELEMENT_ORDER = "$setElementOrder"

_DROP = object()


class _SMP:
    """One strategic-merge application against one kind's strategy table."""

    def __init__(self, table: StrategyTable) -> None:
        self.table = table

    def strategy(self, path: tuple[str, ...]) -> Strategy:
        return self.table.get(path, ("", None))

    # -- cleaning values that land without anything to merge into -------------------------------

    def clean(self, value: Any) -> Any:
        """Strip directives and nulls from a value that is taken as-is; ``_DROP`` if it vanishes.

        A map carrying ``$patch`` vanishes entirely (``removeDirectives`` upstream), so
        ``$patch: delete`` of an absent map is a no-op and ``[{"$patch": "replace"}]`` is ``[]``.
        """
        if isinstance(value, dict):
            if _PATCH in value:
                return _DROP
            out: dict[str, Any] = {}
            for key, item in value.items():
                if item is None or _is_directive_key(key):
                    continue
                cleaned = self.clean(item)
                if cleaned is not _DROP:
                    out[key] = cleaned
            return out
        if isinstance(value, list):
            return [c for c in (self.clean(v) for v in value) if c is not _DROP]
        return value

    # -- maps -----------------------------------------------------------------------------------

    def merge_map(self, original: dict[str, Any], patch: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
        if _PATCH in patch:
            directive = patch[_PATCH]
            if directive == "replace":
                rest = {k: v for k, v in patch.items() if k != _PATCH}
                return self.clean(rest)
            if directive == "delete":
                # Upstream leaves an empty map in place of the deleted one.
                return {}
            if directive != "merge":
                raise bad_request(f"unknown patch type: {_go_value(directive)} in map: {_go_value(patch)}")
            # Upstream rejects "merge" in a map; this fake accepts it as the no-op it describes.
            patch = {k: v for k, v in patch.items() if k != _PATCH}

        self.apply_retain_keys(original, patch)
        patch = dict(patch)
        self.apply_set_element_order(original, patch, path)

        deletions: list[tuple[str, Any]] = []
        for key, value in patch.items():
            if key.startswith(_DELETE_FROM_PRIMITIVE_LIST):
                deletions.append((_directive_field(key, _DELETE_FROM_PRIMITIVE_LIST), value))
                continue
            if _is_directive_key(key) or key.startswith("$"):
                continue
            self.merge_field(original, key, value, path, delete_list=False)
        # Parallel deletion lists run after additions so the outcome does not depend on key order.
        for field, value in deletions:
            self.merge_field(original, field, value, path, delete_list=True)
        return original

    def merge_field(
        self, original: dict[str, Any], key: str, value: Any, path: tuple[str, ...], *, delete_list: bool
    ) -> None:
        if value is None:
            original.pop(key, None)
            return
        if key not in original or _shape(original[key]) != _shape(value):
            # Nothing to merge into: a deletion list is a no-op, anything else is taken as-is.
            if delete_list:
                return
            cleaned = self.clean(value)
            if cleaned is _DROP:
                original.pop(key, None)
            else:
                original[key] = cleaned
            return
        current = original[key]
        field_path = path + (key,)
        strategy, merge_key = self.strategy(field_path)
        if isinstance(current, dict):
            if strategy == REPLACE:
                replaced = self.clean(value)
                original[key] = {} if replaced is _DROP else replaced
            else:
                original[key] = self.merge_map(current, value, field_path)
        elif isinstance(current, list):
            if delete_list or MERGE in strategy.split(","):
                original[key] = self.merge_list(current, value, field_path, merge_key, delete_list=delete_list)
            else:
                original[key] = self.clean(value)
        else:
            original[key] = value

    def apply_retain_keys(self, original: dict[str, Any], patch: dict[str, Any]) -> None:
        if _RETAIN_KEYS not in patch:
            return
        retain = patch.pop(_RETAIN_KEYS)
        if not isinstance(retain, list):
            raise bad_request("invalid patch format of retainKeys")
        keep = {k for k in retain if isinstance(k, str)}
        for key, value in patch.items():
            if value is None or key.startswith((_DELETE_FROM_PRIMITIVE_LIST, _SET_ELEMENT_ORDER)):
                continue
            if key not in keep:
                raise bad_request("invalid patch format of retainKeys")
        for key in [k for k in original if k not in keep]:
            del original[key]

    def apply_set_element_order(self, original: dict[str, Any], patch: dict[str, Any], path: tuple[str, ...]) -> None:
        """Process ``$setElementOrder/<field>`` together with ``<field>``, removing both from ``patch``."""
        for directive in [k for k in patch if k.startswith(_SET_ELEMENT_ORDER)]:
            order = patch.pop(directive)
            field = _directive_field(directive, _SET_ELEMENT_ORDER)
            if not isinstance(order, list):
                raise bad_request(f"expected a []interface {{}}, but received a {json_kind(order)}")
            current = original.get(field)
            incoming = patch.get(field, _MISSING)
            if current is not None and not isinstance(current, list):
                raise bad_request(f"expected a []interface {{}}, but received a {json_kind(current)}")
            if incoming is None:
                # An explicit null wins: the main loop deletes the field.
                continue
            if incoming is not _MISSING and not isinstance(incoming, list):
                raise bad_request(f"expected a []interface {{}}, but received a {json_kind(incoming)}")
            field_path = path + (field,)
            strategy, merge_key = self.strategy(field_path)
            if incoming is not _MISSING:
                _check_order_consistency(incoming, order, merge_key)
            if current is None and incoming is _MISSING:
                continue
            if incoming is _MISSING:
                merged = list(current or [])
            elif current is None:
                merged = self.clean(incoming)
            elif MERGE in strategy.split(","):
                merged = self.merge_list(current, incoming, field_path, merge_key, delete_list=False)
            else:
                merged = self.clean(incoming)
            position = _position_function(merge_key)
            for item in order:
                _require_merge_key(item, merge_key)
            in_order = {position(item) for item in order}
            listed = [item for item in merged if _require_merge_key(item, merge_key) and position(item) in in_order]
            unlisted = [item for item in merged if position(item) not in in_order]
            original[field] = _normalize_order(listed, unlisted, order, current or [], position)
            patch.pop(field, None)

    # -- lists ----------------------------------------------------------------------------------

    def merge_list(
        self,
        original: list[Any],
        patch: list[Any],
        path: tuple[str, ...],
        merge_key: str | None,
        *,
        delete_list: bool,
    ) -> list[Any]:
        if not original and not patch:
            return original
        maps = _element_shape(original + patch, path)
        position = _position_function(merge_key if maps else None)
        if not maps:
            if delete_list:
                doomed = {position(v) for v in patch}
                return [v for v in original if position(v) not in doomed]
            merged: list[Any] = []
            seen: set[Any] = set()
            for value in original + patch:
                if position(value) not in seen:
                    seen.add(position(value))
                    merged.append(value)
            order_source = patch
        else:
            if not merge_key:
                raise bad_request(f"cannot merge lists without merge key for {'.'.join(path)}")
            original, patch = self.apply_list_directives(original, patch, merge_key)
            merged = self.merge_keyed_items(original, patch, path, merge_key)
            order_source = patch
        in_patch = {position(item) for item in order_source}
        listed = [item for item in merged if _require_merge_key(item, merge_key if maps else None)
                  and position(item) in in_patch]
        unlisted = [item for item in merged if position(item) not in in_patch]
        return _normalize_order(listed, unlisted, order_source, original, position)

    def apply_list_directives(
        self, original: list[Any], patch: list[Any], merge_key: str
    ) -> tuple[list[Any], list[Any]]:
        """Handle ``$patch`` items: delete by key, or replace the whole list with the plain items."""
        plain: list[Any] = []
        replace = False
        for item in patch:
            if _PATCH not in item:
                plain.append(item)
                continue
            directive = item[_PATCH]
            if directive == "delete":
                if merge_key not in item:
                    raise _no_merge_key(item, merge_key)
                original = [o for o in original if not _has_key_value(o, merge_key, item[merge_key])]
            elif directive == "replace":
                replace = True
            elif directive == "merge":
                raise bad_request("merging lists cannot yet be specified in the patch")
            else:
                raise bad_request(f"unknown patch type: {_go_value(directive)} in map: {_go_value(item)}")
        if replace:
            return [c for c in (self.clean(i) for i in plain) if c is not _DROP], []
        return original, plain

    def merge_keyed_items(
        self, original: list[Any], patch: list[Any], path: tuple[str, ...], merge_key: str
    ) -> list[Any]:
        merged = list(original)
        for item in patch:
            if merge_key not in item:
                raise _no_merge_key(item, merge_key)
            for index, existing in enumerate(merged):
                if _has_key_value(existing, merge_key, item[merge_key]):
                    merged[index] = self.merge_map(existing, item, path)
                    break
            else:
                cleaned = self.clean(item)
                if cleaned is not _DROP:
                    merged.append(cleaned)
        return merged


def _is_directive_key(key: str) -> bool:
    return key in (_PATCH, _RETAIN_KEYS) or key.startswith((_SET_ELEMENT_ORDER, _DELETE_FROM_PRIMITIVE_LIST))


def _directive_field(key: str, prefix: str) -> str:
    head, sep, field = key.partition("/")
    if not sep or head != prefix:
        if prefix == _SET_ELEMENT_ORDER:
            raise bad_request("invalid patch format of setElementOrder list")
        raise bad_request("invalid patch format of primitive list")
    return field


def _shape(value: Any) -> type:
    # Merging recurses only when both sides are maps or both are lists; any other pairing replaces.
    if isinstance(value, dict):
        return dict
    if isinstance(value, list):
        return list
    return object


def _element_shape(items: list[Any], path: tuple[str, ...]) -> bool:
    """True for a list of maps, False for a list of scalars; mixed or nested lists are errors."""
    if any(isinstance(i, list) for i in items):
        # ErrNoListOfLists is one of the two SMP errors upstream maps to 422.
        raise unprocessable()
    maps = [isinstance(i, dict) for i in items]
    if any(maps) and not all(maps):
        raise bad_request(f"list element types are not identical: {_go_value(items)} at {'.'.join(path)}")
    return bool(maps) and all(maps)


def _no_merge_key(item: Any, merge_key: str) -> StatusError:
    return bad_request(f"map: {_go_value(item)} does not contain declared merge key: {merge_key}")


def _require_merge_key(item: Any, merge_key: str | None) -> bool:
    if merge_key and not (isinstance(item, dict) and merge_key in item):
        raise _no_merge_key(item, merge_key)
    return True


def _scalar_identity(value: Any) -> Any:
    # Keep true/1/1.0 apart, as Go's interface equality does; unhashables compare by JSON text.
    if isinstance(value, (dict, list)):
        return ("json", _go_value(value))
    return (type(value).__name__, value)


def _has_key_value(item: Any, merge_key: str, value: Any) -> bool:
    return isinstance(item, dict) and merge_key in item and _scalar_identity(item[merge_key]) == _scalar_identity(value)


def _position_function(merge_key: str | None) -> Callable[[Any], Any]:
    """How list items are identified when ordering: by merge-key value, or by value for scalars."""
    if merge_key:
        return lambda item: _scalar_identity(item.get(merge_key)) if isinstance(item, dict) else ("none", None)
    return _scalar_identity


def _check_order_consistency(patch_list: list[Any], order: list[Any], merge_key: str | None) -> None:
    """The patch list's items must appear in ``$setElementOrder`` and in the same relative order."""
    if not patch_list or not order:
        return
    position = _position_function(merge_key)
    items = [i for i in patch_list if not (isinstance(i, dict) and _PATCH in i)]
    for item in items + list(order):
        _require_merge_key(item, merge_key)
    cursor = 0
    for wanted in order:
        if cursor < len(items) and position(items[cursor]) == position(wanted):
            cursor += 1
    if cursor < len(items):
        raise bad_request(
            f"The order in patch list:\n{_go_value(patch_list)}\n doesn't match {_SET_ELEMENT_ORDER} list:\n"
            f"{_go_value(order)}\n"
        )


def _normalize_order(
    listed: list[Any],
    unlisted: list[Any],
    order: list[Any],
    server_order: list[Any],
    position: Callable[[Any], Any],
) -> list[Any]:
    """Upstream's ordering: patch-listed items in the patch's order, the server-only items in the
    live order, then the two interleaved so a server-only item goes before a listed item only when
    both occur in the live list and it came first there. New items therefore lead the list."""
    def index_in(sequence: list[Any]) -> Callable[[Any], int]:
        first: dict[Any, int] = {}
        for i, item in enumerate(sequence):
            first.setdefault(position(item), i)
        return lambda item: first.get(position(item), -1)

    in_order = index_in(order)
    in_server = index_in(server_order)
    listed = sorted(listed, key=in_order)
    unlisted = sorted(unlisted, key=in_server)
    out: list[Any] = []
    i = j = 0
    while i < len(unlisted) or j < len(listed):
        if j >= len(listed):
            out.append(unlisted[i])
            i += 1
        elif i >= len(unlisted):
            out.append(listed[j])
            j += 1
        else:
            left, right = in_server(unlisted[i]), in_server(listed[j])
            if left >= 0 and right >= 0 and left < right:
                out.append(unlisted[i])
                i += 1
            else:
                out.append(listed[j])
                j += 1
    return out


def strategic_merge_patch(doc: dict[str, Any], patch: Any, kind: str) -> dict[str, Any]:
    """Apply a Kubernetes strategic merge patch for built-in ``kind`` to a copy of ``doc``.

    Promises upstream's semantics for the fields in :data:`STRATEGIES`: keyed lists merge item by
    item on their merge key, ``metadata.finalizers`` is unioned (``[]`` is a no-op), unlisted lists
    and ``patchStrategy=replace`` maps are replaced, ``null`` deletes, and the directives
    ``$patch`` (replace/delete/merge), ``$retainKeys``, ``$deleteFromPrimitiveList/<f>`` and
    ``$setElementOrder/<f>`` are honoured and never appear in the result. New list items come
    first unless ``$setElementOrder`` says otherwise, as upstream orders them.

    Errors: 415 for kinds without strategic-merge support, 400 for a patch that is not an object
    or is malformed (missing merge key, bad directive format).
    """
    if not supports_strategic(kind):
        raise unsupported_media_type(
            SMP_CONTENT_TYPE, [JSON_PATCH_CONTENT_TYPE, MERGE_CONTENT_TYPE, APPLY_YAML_CONTENT_TYPE]
        )
    if patch is None:
        # Decoding JSON null into a map leaves it empty: an empty patch.
        return clone(doc)
    if not isinstance(patch, dict):
        raise bad_request(
            f"json: cannot unmarshal {json_kind(patch)} into Go value of type map[string]interface {{}}"
        )
    engine = _SMP(STRATEGIES[kind])
    return engine.merge_map(clone(doc), clone(patch), ())
