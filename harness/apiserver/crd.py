"""CustomResourceDefinitions made real: what kube-apiserver's apiextensions half does, in one place.

:func:`install` wires three things into an :class:`~harness.apiserver.server.APIServer`:

* an admission plugin on ``CustomResourceDefinition`` writes that does what the CRD strategy,
  defaulting and validation do (``SetDefaults_CustomResourceDefinitionSpec``, ``PrepareForCreate``,
  ``ValidateCustomResourceDefinition``), and, at once, what the naming and establishing controllers
  would do a moment later: ``status.acceptedNames`` and the ``NamesAccepted``/``Established``
  conditions. Doing this as a mutation at admission (the server stores the object the plugins saw)
  gives one write per create, so watchers see a single ``ADDED`` already established. Upstream the
  create response still lacks the conditions and a ``MODIFIED`` follows; no client depends on that
  gap, and ``kubectl wait --for condition=established`` passes at once either way;
* a delete preparer that, on the first DELETE of a CRD, adds the ``customresourcecleanup`` finalizer
  and the ``Terminating`` condition, as the CRD storage's ``Delete`` does (the CRD-cleanup
  controller in ``harness/world/crd_cleanup.py`` then deletes the instances and the finalizer);
* a write hook that keeps ``server.registry`` in step with the stored CRDs: one
  :class:`ResourceType` per served version, registered as soon as the CRD is written (kinds are
  discoverable and usable immediately) and removed, with the instances' storage, once the CRD is gone.

Custom resources get one admission plugin per kind: creation is refused while the CRD terminates
(405, as the CR handler does), the version's ``openAPIV3Schema`` ``default``s are applied on every
write (structural defaulting, including pruning ``null`` for non-nullable fields), and values whose
JSON type contradicts the schema, ``enum`` violations and missing ``required`` properties are
rejected with the messages the apiextensions validator writes. Unknown fields are pruned before
that, when the request is decoded (:func:`harness.apiserver.decoding.prune_custom`: structural
pruning with ``x-kubernetes-preserve-unknown-fields`` and embedded resources, metadata decoded as
ObjectMeta, ``fieldValidation`` as for built-in kinds).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import orjson

from harness.apiserver import builtins
from harness.apiserver.resources import ResourceType
from harness.kube import errors, validation
from harness.kube.conditions import set_status_condition
from harness.kube.errors import FieldError
from harness.kube.names.apiextensions import CRD_KIND, SCOPE_CLUSTER, SCOPE_NAMESPACED
from harness.kube.objects import IdentityMemo, JsonMemo, clone, kept_json
from harness.kube.validation import FIELD_IMMUTABLE_MSG

if TYPE_CHECKING:
    from harness.apiserver.server import APIServer

CRD_GROUP = builtins.APIEXTENSIONS
CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"

SCOPES = (SCOPE_CLUSTER, SCOPE_NAMESPACED)  # upstream's order in the NotSupported message
NONE_CONVERTER = "None"

# Condition types, reasons and messages (apiextensions v1 types, naming/establishing controllers,
# CRD storage Delete, CRD finalizer).
ESTABLISHED = "Established"
NAMES_ACCEPTED = "NamesAccepted"
TERMINATING = "Terminating"
REASON_NO_CONFLICTS = "NoConflicts"
MESSAGE_NO_CONFLICTS = "no conflicts found"
REASON_INITIAL_NAMES_ACCEPTED = "InitialNamesAccepted"
MESSAGE_INITIAL_NAMES_ACCEPTED = "the initial names have been accepted"
REASON_DELETION_PENDING = "InstanceDeletionPending"
MESSAGE_DELETION_PENDING = "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon"
REASON_DELETION_IN_PROGRESS = "InstanceDeletionInProgress"
MESSAGE_DELETION_IN_PROGRESS = "CustomResource deletion is in progress"
REASON_DELETION_COMPLETED = "InstanceDeletionCompleted"
MESSAGE_DELETION_COMPLETED = "removed all instances"

# Validation messages (apiextensions validation.go, 1.32).
NAME_MESSAGE = 'must be spec.names.plural+"."+spec.group'
GROUP_DOT_MESSAGE = "should be a domain with at least one dot"
STORAGE_MESSAGE = "must have exactly one version marked as storage version"
UNIQUE_VERSIONS_MESSAGE = "must contain unique version names"
SCHEMA_REQUIRED_MESSAGE = "schemas are required"
MIXED_CASE_PREFIX = "may have mixed case, but should otherwise match: "
KIND_LIST_KIND_MESSAGE = "kind and listKind may not be the same"
STORED_VERSIONS_EMPTY_MESSAGE = "must have at least one stored version"
STORED_VERSION_MISSING_MESSAGE = "must appear in spec.versions"
STORAGE_VERSION_NOT_STORED_MESSAGE = "must have the storage version "
TERMINATING_MESSAGE = "{verb} not allowed while custom resource definition is terminating"

# The keys of a custom resource that are not checked against the schema: the apiserver owns them.
_UNCHECKED_ROOT_KEYS = ("apiVersion", "kind", "metadata")

_JSON_TYPES = ("string", "integer", "number", "boolean", "object", "array")


# -- small accessors -------------------------------------------------------------------------------


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _is_crd(rt: ResourceType) -> bool:
    return rt.group == CRD_GROUP and rt.kind == CRD_KIND


def _invalid_rendered(field_path: str, rendered: str, detail: str) -> FieldError:
    # A Go-rendered value (``[]string(nil)``) that JSON rendering would mangle: put it in the detail,
    # which gives the same ``Invalid value: <rendered>: <detail>`` body.
    return FieldError(field_path, errors.FIELD_VALUE_INVALID, f"{rendered}: {detail}")


def storage_version(crd: dict[str, Any]) -> str:
    """The name of the version marked ``storage: true`` ("" when there is none)."""
    for version in _list(_dict(crd.get("spec")).get("versions")):
        if _dict(version).get("storage") is True:
            return _str(version.get("name"))
    return ""


def is_condition_true(crd: dict[str, Any], condition_type: str) -> bool:
    """Whether ``status.conditions`` has ``condition_type`` with status ``"True"``."""
    for condition in _list(_dict(crd.get("status")).get("conditions")):
        if _dict(condition).get("type") == condition_type:
            return condition.get("status") == "True"
    return False


def set_condition(
    crd: dict[str, Any], condition_type: str, status: str, reason: str, message: str, now: str
) -> bool:
    """Set a condition in place as ``SetCRDCondition`` does: the transition time changes only when
    the status does. Returns whether anything changed."""
    conditions = _dict(crd.setdefault("status", {})).setdefault("conditions", [])
    if not isinstance(conditions, list):
        conditions = crd["status"]["conditions"] = []
    return set_status_condition(
        conditions, {"type": condition_type, "status": status, "reason": reason, "message": message}, now
    )


# -- the kinds a CRD serves ------------------------------------------------------------------------


def _version_part(crd: dict[str, Any], version: dict[str, Any], key: str) -> Any:
    # v1 keeps schema, subresources and columns per version; a top-level value (v1beta1 style
    # objects stored as v1) is the fallback.
    value = version.get(key)
    if value is None:
        value = _dict(crd.get("spec")).get(key)
    return value


# The resource types made of each CRD spec, by the spec's identity (held, so its id stays its own): the
# worlds replaying the packaged CRDs share their specs (harness/world/crd_snapshot.py), and each world
# registered the same kinds from them again (about 18 CRD writes per World). A ResourceType is frozen and
# its schema is the stored spec's own (a stored object is never changed in place), so the worlds may share
# them: each keeps its own registry of them.
_TYPES_OF_SPEC: IdentityMemo[dict[str, Any], tuple[ResourceType, ...]] = IdentityMemo(256)


def resource_types(crd: dict[str, Any]) -> list[ResourceType]:
    """One :class:`ResourceType` per served version of ``crd``, in ``spec.versions`` order."""
    return list(_TYPES_OF_SPEC.get(_dict(crd.get("spec")), _resource_types))


def _resource_types(spec: dict[str, Any]) -> tuple[ResourceType, ...]:
    crd = {"spec": spec}  # what _version_part falls back to
    names = _dict(spec.get("names"))
    group, kind, plural = _str(spec.get("group")), _str(names.get("kind")), _str(names.get("plural"))
    if not group or not kind or not plural:
        return []
    out = []
    for version in _list(spec.get("versions")):
        version = _dict(version)
        if not version.get("served") or not _str(version.get("name")):
            continue
        subresources = _dict(_version_part(crd, version, "subresources"))
        columns = tuple(
            (_str(c.get("name")), _str(c.get("type")), _str(c.get("jsonPath")), int(c.get("priority") or 0),
             _str(c.get("description")))
            for c in map(_dict, _list(_version_part(crd, version, "additionalPrinterColumns")))
        )
        selectable = tuple(_str(f.get("jsonPath")) for f in map(_dict, _list(_version_part(crd, version,
                                                                                              "selectableFields"))))
        schema = _dict(_version_part(crd, version, "schema")).get("openAPIV3Schema")
        out.append(ResourceType(
            group, _str(version["name"]), kind, plural, _str(spec.get("scope")) == SCOPE_NAMESPACED,
            _str(names.get("singular")) or kind.lower(),
            tuple(_str(s) for s in _list(names.get("shortNames"))),
            tuple(_str(c) for c in _list(names.get("categories"))),
            status="status" in subresources, scale="scale" in subresources, custom=True, columns=columns,
            selectable_fields=selectable, schema=schema if isinstance(schema, dict) else None,
        ))
    return tuple(out)


# -- CRD defaulting, status and validation ---------------------------------------------------------


def apply_crd_defaults(crd: dict[str, Any]) -> None:
    """``SetDefaults_CustomResourceDefinitionSpec`` in place: singular, listKind, conversion."""
    spec = crd.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    names = spec.setdefault("names", {})
    if isinstance(names, dict):
        kind = _str(names.get("kind"))
        if not names.get("singular"):
            names["singular"] = kind.lower()
        if not names.get("listKind") and kind:
            names["listKind"] = kind + "List"
    if spec.get("conversion") is None:
        spec["conversion"] = {"strategy": NONE_CONVERTER}


def accepted_names(crd: dict[str, Any]) -> dict[str, Any]:
    """``spec.names`` as the naming controller accepts it, in the API's field order."""
    names = _dict(_dict(crd.get("spec")).get("names"))
    out: dict[str, Any] = {"plural": _str(names.get("plural"))}
    if names.get("singular"):
        out["singular"] = names["singular"]
    if names.get("shortNames"):
        out["shortNames"] = list(names["shortNames"])
    out["kind"] = _str(names.get("kind"))
    if names.get("listKind"):
        out["listKind"] = names["listKind"]
    if names.get("categories"):
        out["categories"] = list(names["categories"])
    return out


def _establish(crd: dict[str, Any], now: str) -> None:
    """``PrepareForCreate`` (status reset, storedVersions) plus what the naming and establishing
    controllers write once they see the new CRD."""
    crd["status"] = {"conditions": [], "acceptedNames": accepted_names(crd), "storedVersions": []}
    stored = storage_version(crd)
    if stored:
        crd["status"]["storedVersions"].append(stored)
    set_condition(crd, NAMES_ACCEPTED, "True", REASON_NO_CONFLICTS, MESSAGE_NO_CONFLICTS, now)
    set_condition(crd, ESTABLISHED, "True", REASON_INITIAL_NAMES_ACCEPTED, MESSAGE_INITIAL_NAMES_ACCEPTED, now)


def _follow_update(crd: dict[str, Any], old: dict[str, Any]) -> None:
    """``PrepareForUpdate`` (a new storage version joins storedVersions) and the naming controller
    accepting changed names."""
    status = crd.setdefault("status", {})
    if not isinstance(status, dict):
        return
    stored = storage_version(crd)
    versions = status.setdefault("storedVersions", [])
    if stored and isinstance(versions, list) and stored not in versions:
        versions.append(stored)
    if _dict(_dict(crd.get("spec")).get("names")) != _dict(_dict(old.get("spec")).get("names")):
        status["acceptedNames"] = accepted_names(crd)


def _validate_names(names: dict[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for key in ("plural", "singular"):
        value = _str(names.get(key))
        if value:
            msgs = validation.is_dns1035_label(value)
            if msgs:
                errs.append(errors.invalid(f"{path}.{key}", value, ",".join(msgs)))
    for key in ("kind", "listKind"):
        value = _str(names.get(key))
        if value:
            msgs = validation.is_dns1035_label(value.lower())
            if msgs:
                errs.append(errors.invalid(f"{path}.{key}", value, MIXED_CASE_PREFIX + ",".join(msgs)))
    for key in ("shortNames", "categories"):
        for i, value in enumerate(_list(names.get(key))):
            msgs = validation.is_dns1035_label(_str(value))
            if msgs:
                errs.append(errors.invalid(f"{path}.{key}[{i}]", value, ",".join(msgs)))
    kind = _str(names.get("kind"))
    if kind and kind == names.get("listKind"):
        errs.append(errors.invalid(f"{path}.listKind", kind, KIND_LIST_KIND_MESSAGE))
    return errs


def _validate_spec(spec: dict[str, Any]) -> list[FieldError]:
    errs: list[FieldError] = []
    group = _str(spec.get("group"))
    group_msgs = validation.is_dns1123_subdomain(group) if group else []
    if not group:
        errs.append(errors.required("spec.group"))
    elif group_msgs:
        errs.append(errors.invalid("spec.group", group, ",".join(group_msgs)))
    elif len(group.split(".")) < 2:
        errs.append(errors.invalid("spec.group", group, GROUP_DOT_MESSAGE))
    scope = _str(spec.get("scope"))
    if not scope:
        errs.append(errors.required("spec.scope"))
    elif scope not in SCOPES:
        errs.append(errors.not_supported("spec.scope", scope, list(SCOPES)))
    versions = _list(spec.get("versions"))
    storage_count = 0
    seen: set[str] = set()
    unique = True
    for i, version in enumerate(versions):
        version = _dict(version)
        name = _str(version.get("name"))
        if version.get("storage") is True:
            storage_count += 1
        if name in seen:
            unique = False
        seen.add(name)
        msgs = validation.is_dns1035_label(name)
        if msgs:
            errs.append(errors.invalid(f"spec.versions[{i}].name", name, ",".join(msgs)))
        schema = _dict(version.get("schema")).get("openAPIV3Schema")
        if not isinstance(schema, dict):
            errs.append(errors.required(f"spec.versions[{i}].schema.openAPIV3Schema", SCHEMA_REQUIRED_MESSAGE))
    if not unique:
        errs.append(errors.invalid("spec.versions", versions, UNIQUE_VERSIONS_MESSAGE))
    if storage_count != 1:
        errs.append(errors.invalid("spec.versions", versions, STORAGE_MESSAGE))
    names = _dict(spec.get("names"))
    for key in ("plural", "singular", "kind", "listKind"):
        if not _str(names.get(key)):
            errs.append(errors.required(f"spec.names.{key}"))
    errs.extend(_validate_names(names, "spec.names"))
    return errs


def _validate_stored_versions(crd: dict[str, Any]) -> list[FieldError]:
    path = "status.storedVersions"
    stored = [_str(v) for v in _list(_dict(crd.get("status")).get("storedVersions"))]
    if not stored:
        return [_invalid_rendered(path, "[]string(nil)", STORED_VERSIONS_EMPTY_MESSAGE)]
    errs: list[FieldError] = []
    remaining = {v: i for i, v in enumerate(stored)}
    for version in map(_dict, _list(_dict(crd.get("spec")).get("versions"))):
        name = _str(version.get("name"))
        if version.get("storage") is True and name not in remaining:
            rendered = "[]string{" + ", ".join(json.dumps(v) for v in stored) + "}"
            errs.append(_invalid_rendered(path, rendered, STORAGE_VERSION_NOT_STORED_MESSAGE + name))
        remaining.pop(name, None)
    for name, i in remaining.items():
        errs.append(errors.invalid(f"{path}[{i}]", name, STORED_VERSION_MISSING_MESSAGE))
    return errs


def validate_crd(crd: dict[str, Any], old: dict[str, Any] | None = None) -> list[FieldError]:
    """The checks of ``ValidateCustomResourceDefinition`` (``...Update`` when ``old`` is given) that
    clients meet: the name rule, group, scope, versions (exactly one storage version, schemas
    present), required and well-formed names, stored versions, and on update the immutable group
    and plural (plus scope and kind once established). Metadata itself is the server's."""
    meta = _dict(crd.get("metadata"))
    spec = _dict(crd.get("spec"))
    names = _dict(spec.get("names"))
    errs: list[FieldError] = []
    name = _str(meta.get("name"))
    if name != f"{_str(names.get('plural'))}.{_str(spec.get('group'))}":
        errs.append(errors.invalid("metadata.name", name, NAME_MESSAGE))
    errs.extend(_validate_spec(spec))
    if old is not None:
        old_spec = _dict(old.get("spec"))
        old_names = _dict(old_spec.get("names"))
        immutable = [("spec.group", spec.get("group"), old_spec.get("group")),
                     ("spec.names.plural", names.get("plural"), old_names.get("plural"))]
        if is_condition_true(old, ESTABLISHED):
            immutable[:0] = [("spec.scope", spec.get("scope"), old_spec.get("scope")),
                             ("spec.names.kind", names.get("kind"), old_names.get("kind"))]
        errs.extend(errors.invalid(path, new, FIELD_IMMUTABLE_MSG) for path, new, was in immutable if new != was)
    errs.extend(_validate_names(_dict(_dict(crd.get("status")).get("acceptedNames")), "status.acceptedNames"))
    errs.extend(_validate_stored_versions(crd))
    return errs


# -- custom resources: structural defaulting and schema checks -------------------------------------


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _type_matches(expected: str, value: Any) -> bool:
    actual = _json_type(value)
    if actual == expected:
        return True
    # kube-openapi accepts an integral float for integer and an integer for number.
    if expected == "integer" and actual == "number":
        return float(value).is_integer()
    return expected == "number" and actual == "integer"


def _json_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True) or (
        isinstance(a, (int, float)) and isinstance(b, (int, float)) and a == b
    )


def apply_defaults(obj: dict[str, Any], schema: dict[str, Any]) -> None:
    """Structural defaulting in place, top-down: an absent property with a ``default`` gets a copy
    of it, and a ``null`` in a non-nullable property is replaced by its default or dropped; then
    defaulting descends into properties, array items and ``additionalProperties`` values."""
    for key, sub in _dict(schema.get("properties")).items():
        if key in _UNCHECKED_ROOT_KEYS:
            continue
        _default_property(obj, key, _dict(sub))


def _default_property(container: dict[str, Any], key: str, schema: dict[str, Any]) -> None:
    if key in container and container[key] is None and not schema.get("nullable"):
        del container[key]
    if key not in container and "default" in schema:
        container[key] = clone(schema["default"])
    if key in container:
        _default_value(container[key], schema)


def _default_value(value: Any, schema: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for key, sub in _dict(schema.get("properties")).items():
            _default_property(value, key, _dict(sub))
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict):
            for key in list(value):
                _default_property(value, key, additional)
    elif isinstance(value, list):
        items = _dict(schema.get("items"))
        if items:
            for item in value:
                _default_value(item, items)


def validate_against_schema(obj: dict[str, Any], schema: dict[str, Any]) -> list[FieldError]:
    """Type, ``enum`` and ``required`` errors of ``obj`` against an ``openAPIV3Schema``, rendered as
    the apiextensions validator renders kube-openapi's results (metadata is not checked here)."""
    errs: list[FieldError] = []
    for key in sorted(_list(schema.get("required"))):
        if isinstance(key, str) and key not in _UNCHECKED_ROOT_KEYS and key not in obj:
            errs.append(errors.required(key))
    tag = kept_json(schema)
    for key, sub in sorted(_dict(schema.get("properties")).items()):
        if key in obj and key not in _UNCHECKED_ROOT_KEYS:
            _check_property(obj[key], _dict(sub), key, errs, tag)
    return errs


# A custom resource is written over and over with the same spec (a Machine's at each of its status and
# finalizer writes): a top-level property found valid is remembered by the JSON of its schema (the
# root schema's, with the property's name) and its own, as the built-in kinds' kept specs are
# (harness.kube.validation.checked_once). The errors of ``_check`` are a function of those alone. The
# schema's JSON is encoded once per schema object (objects.kept_json): the worlds that replay the
# packaged CRDs share their schemas (harness/world/crd_snapshot.py), and a stored CRD is never changed
# in place.
_VALID_PROPERTIES = JsonMemo(1024)
# The same for defaulting and validation together (:func:`default_and_validate`): a top-level property
# that defaulting leaves as it is and that is valid.
_SETTLED_PROPERTIES = JsonMemo(1024)


def default_and_validate(obj: dict[str, Any], schema: dict[str, Any]) -> list[FieldError]:
    """:func:`apply_defaults` then :func:`validate_against_schema`, what every write of a custom
    resource goes through, except for a top-level property whose value (a non-empty object or array)
    was seen before against the same schema, left unchanged by defaulting and found valid: its defaults
    and checks are skipped (they would change nothing and find nothing). A custom resource written again
    with the spec it has stored is the common case: the stored spec was defaulted when first written."""
    tag = kept_json(schema)
    if tag is None:
        apply_defaults(obj, schema)
        return validate_against_schema(obj, schema)
    properties = _dict(schema.get("properties"))
    # The key a property's value would be remembered under (its JSON before defaulting), or None once known.
    pending: dict[str, tuple[Any, bytes] | None] = {}
    for key, sub in properties.items():
        if key in _UNCHECKED_ROOT_KEYS:
            continue
        value = obj.get(key)
        if type(value) in (dict, list) and value:
            memo_key, known = _SETTLED_PROPERTIES.find((tag, key), value)
            if known:
                pending[key] = None
                continue
            if memo_key is not None:
                pending[key] = memo_key
        _default_property(obj, key, _dict(sub))
    errs: list[FieldError] = []
    for key in sorted(_list(schema.get("required"))):
        if isinstance(key, str) and key not in _UNCHECKED_ROOT_KEYS and key not in obj:
            errs.append(errors.required(key))
    for key, sub in sorted(properties.items()):
        if key not in obj or key in _UNCHECKED_ROOT_KEYS:
            continue
        if key in pending and pending[key] is None:
            continue
        found: list[FieldError] = []
        _check(obj[key], _dict(sub), key, found)
        if found:
            errs.extend(found)
            continue
        memo_key = pending.get(key)
        if memo_key is not None and _same_json_bytes(obj[key], memo_key[1]):
            # Defaulting left the value as it came, and it is valid: the next write of it needs neither.
            _SETTLED_PROPERTIES.remember(memo_key, obj[key], True)
    return errs


def _same_json_bytes(value: Any, encoded: bytes) -> bool:
    try:
        return orjson.dumps(value) == encoded
    except TypeError:  # orjson.JSONEncodeError: a default that is not plain JSON
        return False


def _check_property(value: Any, schema: dict[str, Any], key: str, errs: list[FieldError],
                    tag: bytes | None) -> None:
    """``_check`` of the top-level property ``key``, unless the same value passed against the same
    schema before (then it has no errors)."""
    if tag is None or not isinstance(value, (dict, list)) or not value:
        _check(value, schema, key, errs)
        return
    memo_key, known = _VALID_PROPERTIES.find((tag, key), value)
    if known:
        return
    found: list[FieldError] = []
    _check(value, schema, key, found)
    if found:
        errs.extend(found)
    else:
        _VALID_PROPERTIES.remember(memo_key, value, True)


def _check(value: Any, schema: dict[str, Any], path: str, errs: list[FieldError]) -> None:
    if value is None and schema.get("nullable"):
        return
    expected = schema.get("type")
    if schema.get("x-kubernetes-int-or-string"):
        expected = None if isinstance(value, (int, str)) and not isinstance(value, bool) else expected
    if isinstance(expected, str) and expected in _JSON_TYPES and not _type_matches(expected, value):
        actual = _json_type(value)
        errs.append(FieldError(path, errors.FIELD_VALUE_TYPE_INVALID,
                               f'{path} in body must be of type {expected}: "{actual}"', actual))
        return
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and not any(_json_equal(value, allowed) for allowed in enum):
        supported = [a if isinstance(a, str) else json.dumps(a) for a in enum]
        errs.append(errors.not_supported(path, value, supported))
    if isinstance(value, dict):
        for key in sorted(_list(schema.get("required"))):
            if isinstance(key, str) and key not in value:
                errs.append(errors.required(f"{path}.{key}"))
        properties = _dict(schema.get("properties"))
        for key, sub in sorted(properties.items()):
            if key in value:
                _check(value[key], _dict(sub), f"{path}.{key}", errs)
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict):
            for key in sorted(value):
                if key not in properties:
                    _check(value[key], additional, f"{path}.{key}", errs)
    elif isinstance(value, list):
        items = _dict(schema.get("items"))
        if items:
            for i, item in enumerate(value):
                _check(item, items, f"{path}[{i}]", errs)


# -- wiring ----------------------------------------------------------------------------------------


def install(server: APIServer) -> None:
    """Make CustomResourceDefinitions real in ``server`` (see the module docstring)."""
    registered: dict[str, list[ResourceType]] = {}
    admitted_kinds: set[tuple[str, str]] = set()

    def admit_crd(
        operation: str, rt: ResourceType, new: dict[str, Any] | None, old: dict[str, Any] | None
    ) -> list[FieldError]:
        if new is None:
            return []
        apply_crd_defaults(new)
        if operation == "CREATE":
            _establish(new, server.now())
            return validate_crd(new)
        if old is not None:
            _follow_update(new, old)
        return validate_crd(new, old)

    def prepare_delete(rt: ResourceType, stored: dict[str, Any]) -> dict[str, Any] | None:
        marked = clone(stored)
        finalizers = marked["metadata"].setdefault("finalizers", [])
        if CLEANUP_FINALIZER not in finalizers:
            finalizers.append(CLEANUP_FINALIZER)
        set_condition(marked, TERMINATING, "True", REASON_DELETION_PENDING, MESSAGE_DELETION_PENDING, server.now())
        return marked

    def admit_custom(
        operation: str, rt: ResourceType, new: dict[str, Any] | None, old: dict[str, Any] | None
    ) -> list[FieldError]:
        if new is None or not rt.custom:
            return []
        if operation == "CREATE":
            crd = server.store.get(server.skey(builtins.CUSTOM_RESOURCE_DEFINITION), ("", rt.qualified))
            if crd is not None and is_condition_true(crd, TERMINATING):
                raise errors.StatusError(errors.status(
                    405, "MethodNotAllowed", TERMINATING_MESSAGE.format(verb="create"),
                    {"group": rt.group, "kind": rt.plural},
                ))
        if not rt.schema:
            return []
        return default_and_validate(new, rt.schema)

    def follow_crds(verb: str, rt: ResourceType, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        if not _is_crd(rt):
            return
        crd = new if new is not None else old
        if crd is None:
            return
        name = _str(_dict(crd.get("metadata")).get("name"))
        for served in registered.pop(name, []):
            server.registry.remove(served)
        if new is None:
            spec = _dict(crd.get("spec"))
            server.store.drop_resource((_str(spec.get("group")), _str(_dict(spec.get("names")).get("plural"))))
            return
        wanted = resource_types(new)
        for served in wanted:
            server.registry.add(served)
            if (served.group, served.kind) not in admitted_kinds:
                admitted_kinds.add((served.group, served.kind))
                server.add_admission(served.group, served.kind, admit_custom)
        registered[name] = wanted

    server.add_admission(CRD_GROUP, CRD_KIND, admit_crd)
    server.on_delete(CRD_GROUP, CRD_KIND, prepare_delete)
    server.on_write(follow_crds)
