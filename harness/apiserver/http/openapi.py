"""OpenAPI v2 and v3 with the real schemas: what ``kubectl explain`` and kubectl's validation read.

* ``/openapi/v3`` is an index of one document per served group-version; each URL carries a hash of
  its document, so a client's cache notices when kinds change. A group-version's document has a
  PATCH operation per kind that declares the ``fieldValidation`` query parameter and names the kind
  (``x-kubernetes-group-version-kind``): finding it, kubectl ``create``/``apply``/``replace`` send
  ``fieldValidation=Strict`` and leave validation to the server. Its ``components.schemas`` hold
  the kinds' schemas and every definition they reference (for ``kubectl explain``).
* ``/openapi/v2`` is the whole Swagger 2.0 document (every 1.32 definition plus the CRDs). Only
  JSON is served: a client that accepts nothing but the protobuf encoding gets 406.

Built-in schemas are the 1.32 definitions of :mod:`harness.apiserver.schemas`, turned back from
their JSON Schema form into OpenAPI (``$ref`` targets renamed, the ``null`` alternative dropped,
``IntOrString`` as ``format: int-or-string``); in v3 a ``$ref`` with siblings is wrapped in
``allOf`` as kube-apiserver publishes it. Custom resources publish their ``openAPIV3Schema`` with
``apiVersion``, ``kind`` and ``metadata`` (an ObjectMeta reference) added, as the apiextensions
server does. Documents are cached per registry generation.
"""

from __future__ import annotations

import copy
import functools
import hashlib
from typing import Any

from harness.apiserver import schemas
from harness.apiserver.http.responses import encode, path_not_found
from harness.apiserver.resources import Registry, ResourceType
from harness.kube.names.core import KUBERNETES_VERSION as SERVED_VERSION

OPENAPI_VERSION = "3.0.0"
SWAGGER_VERSION = "2.0"
TITLE = "Kubernetes"
V3_PREFIX = "/openapi/v3"
FIELD_VALIDATION = "fieldValidation"
GVK_EXTENSION = "x-kubernetes-group-version-kind"
ACTION_EXTENSION = "x-kubernetes-action"
V3_REF = "#/components/schemas/"
V2_REF = "#/definitions/"

_QUERY_PARAMETERS = (
    ("dryRun", "string"),
    ("fieldManager", "string"),
    (FIELD_VALIDATION, "string"),
    ("force", "boolean"),
)
_TYPE_META_DESCRIPTIONS = {
    "apiVersion": "APIVersion defines the versioned schema of this representation of an object.",
    "kind": "Kind is a string value representing the REST resource this object represents.",
}


def group_version_path(group: str, version: str) -> str:
    """The index key of a group-version: ``api/v1`` or ``apis/<group>/<version>``."""
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _schema_name(rt: ResourceType) -> str:
    if not rt.custom:
        name = schemas.definition_name(rt.api_version, rt.kind)
        if name is not None:
            return name
    return ".".join([*reversed(rt.group.split(".")), rt.version, rt.kind])


def _operation_id(rt: ResourceType) -> str:
    group = "".join(part.capitalize() for part in rt.group.split(".")[0].split("-")) or "Core"
    scope = "Namespaced" if rt.namespaced else ""
    return f"patch{group}{rt.version.capitalize()}{scope}{rt.kind}"


def _object_path(rt: ResourceType) -> str:
    base = f"/apis/{rt.group}/{rt.version}" if rt.group else f"/api/{rt.version}"
    scope = "/namespaces/{namespace}" if rt.namespaced else ""
    return f"{base}{scope}/{rt.plural}/{{name}}"


# -- schema conversion -----------------------------------------------------------------------------


def _convert(node: Any, ref_prefix: str, v3: bool) -> Any:
    """A JSON Schema node of the 1.32 definitions as an OpenAPI schema node."""
    if isinstance(node, list):
        return [_convert(item, ref_prefix, v3) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "$ref" and isinstance(value, str):
            out[key] = ref_prefix + value[len(schemas.REF_PREFIX):]
        elif key == "type" and isinstance(value, list):
            kinds = [k for k in value if k != "null"]
            if len(kinds) == 1:
                out[key] = kinds[0]
        elif key in ("properties", "patternProperties") and isinstance(value, dict):
            out[key] = {k: _convert(v, ref_prefix, v3) for k, v in value.items()}
        else:
            out[key] = _convert(value, ref_prefix, v3)
    if v3 and "$ref" in out and len(out) > 1:
        out = {"allOf": [{"$ref": out.pop("$ref")}], **out}
    return out


def _definition(name: str, ref_prefix: str, v3: bool) -> dict[str, Any]:
    node = schemas.definitions()[name]
    if name == schemas.INT_OR_STRING:
        return {"description": "IntOrString is a type that can hold an int32 or a string.", "type": "string",
                "format": "int-or-string"}
    if name == schemas.QUANTITY:
        return {"description": "Quantity is a fixed-point representation of a number.", "type": "string"}
    out = _convert(node, ref_prefix, v3)
    if GVK_EXTENSION in out:
        # The JSON Schema form pins apiVersion and kind with an enum; the OpenAPI does not.
        props = out.get("properties") or {}
        for key in ("apiVersion", "kind"):
            if isinstance(props.get(key), dict):
                props[key].pop("enum", None)
    return out


def _references(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        ref = schemas.ref_name(node)
        if ref is not None and ref not in found and ref in schemas.definitions():
            found.add(ref)
            _references(schemas.definitions()[ref], found)
        for value in node.values():
            _references(value, found)
    elif isinstance(node, list):
        for item in node:
            _references(item, found)


@functools.lru_cache(maxsize=512)
def _closure(name: str) -> frozenset[str]:
    """A definition and every definition it references, transitively."""
    found = {name}
    _references(schemas.definitions()[name], found)
    return frozenset(found)


def _custom_schema(rt: ResourceType, ref_prefix: str) -> dict[str, Any]:
    schema = copy.deepcopy(rt.schema) if isinstance(rt.schema, dict) else {"type": "object"}
    schema.setdefault("type", "object")
    properties = schema.setdefault("properties", {})
    for key, text in _TYPE_META_DESCRIPTIONS.items():
        properties[key] = {"description": text, "type": "string"}
    properties["metadata"] = {"$ref": ref_prefix + schemas.OBJECT_META,
                              "description": "Standard object's metadata."}
    if ref_prefix == V3_REF:
        properties["metadata"] = {"allOf": [{"$ref": ref_prefix + schemas.OBJECT_META}],
                                  "description": "Standard object's metadata."}
    schema[GVK_EXTENSION] = [{"group": rt.group, "version": rt.version, "kind": rt.kind}]
    return schema


def _schemas_for(kinds: list[ResourceType], ref_prefix: str, v3: bool) -> dict[str, Any]:
    names: set[str] = set()
    custom: dict[str, Any] = {}
    for rt in kinds:
        if rt.custom:
            custom[_schema_name(rt)] = _custom_schema(rt, ref_prefix)
            names |= _closure(schemas.OBJECT_META)
        else:
            name = schemas.definition_name(rt.api_version, rt.kind)
            if name is not None:
                names |= _closure(name)
    out = {name: _definition(name, ref_prefix, v3) for name in sorted(names)}
    out.update(custom)
    return out


# -- v3 --------------------------------------------------------------------------------------------


def _path_item(rt: ResourceType) -> dict[str, Any]:
    gvk = {"group": rt.group, "version": rt.version, "kind": rt.kind}
    ref = {"$ref": f"{V3_REF}{_schema_name(rt)}"}
    path_params = [{"name": "name", "in": "path", "required": True, "schema": {"type": "string", "uniqueItems": True}}]
    if rt.namespaced:
        path_params.append(
            {"name": "namespace", "in": "path", "required": True, "schema": {"type": "string", "uniqueItems": True}}
        )
    return {
        "patch": {
            "operationId": _operation_id(rt),
            "description": f"partially update the specified {rt.kind}",
            "parameters": [
                {"name": name, "in": "query", "schema": {"type": kind, "uniqueItems": True}}
                for name, kind in _QUERY_PARAMETERS
            ],
            "responses": {
                "200": {"description": "OK", "content": {"application/json": {"schema": ref}}},
                "201": {"description": "Created", "content": {"application/json": {"schema": ref}}},
            },
            ACTION_EXTENSION: "patch",
            GVK_EXTENSION: gvk,
        },
        "parameters": path_params,
    }


@functools.lru_cache(maxsize=256)
def _v3_document(registry: Registry, generation: int, group: str, version: str) -> bytes:
    kinds = sorted(registry.in_group_version(group, version), key=lambda rt: rt.plural)
    if not kinds:
        raise path_not_found()
    return encode({
        "openapi": OPENAPI_VERSION,
        "info": {"title": TITLE, "version": SERVED_VERSION},
        "paths": {_object_path(rt): _path_item(rt) for rt in kinds},
        "components": {"schemas": _schemas_for(kinds, V3_REF, True)},
    })


def document(registry: Registry, group: str, version: str) -> bytes:
    """The OpenAPI v3 document of one served group-version, encoded (404 when not served)."""
    return _v3_document(registry, registry.generation, group, version)


def index(registry: Registry, prefix: str) -> bytes:
    """``/openapi/v3``: one entry per group-version, its URL carrying the document's hash.
    ``prefix`` is the cluster's path prefix."""
    paths: dict[str, Any] = {}
    for group, versions in registry.groups().items():
        for version in versions:
            digest = hashlib.sha512(document(registry, group, version)).hexdigest().upper()
            key = group_version_path(group, version)
            paths[key] = {"serverRelativeURL": f"{prefix}{V3_PREFIX}/{key}?hash={digest}"}
    return encode({"paths": paths})


def resolve(registry: Registry, prefix: str, rest: str) -> bytes:
    """The encoded document at ``/openapi/v3<rest>``: the index for an empty ``rest``, else a
    group-version's document."""
    parts = [p for p in rest.strip("/").split("/") if p]
    if not parts:
        return index(registry, prefix)
    if parts[0] == "api" and len(parts) == 2:
        return document(registry, "", parts[1])
    if parts[0] == "apis" and len(parts) == 3:
        return document(registry, parts[1], parts[2])
    raise path_not_found()


# -- v2 --------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=16)
def _v2_document(registry: Registry, generation: int) -> bytes:
    kinds = sorted(registry.all(), key=lambda rt: (rt.group, rt.version, rt.plural))
    definitions = {name: _definition(name, V2_REF, False) for name in sorted(schemas.definitions())}
    definitions.update(_schemas_for([rt for rt in kinds if rt.custom], V2_REF, False))
    paths: dict[str, Any] = {}
    for rt in kinds:
        paths[_object_path(rt)] = {"patch": {
            "operationId": _operation_id(rt),
            "parameters": [{"name": name, "in": "query", "type": kind, "uniqueItems": True}
                           for name, kind in _QUERY_PARAMETERS],
            "responses": {"200": {"description": "OK", "schema": {"$ref": f"{V2_REF}{_schema_name(rt)}"}}},
            ACTION_EXTENSION: "patch",
            GVK_EXTENSION: {"group": rt.group, "version": rt.version, "kind": rt.kind},
        }}
    return encode({
        "swagger": SWAGGER_VERSION,
        "info": {"title": TITLE, "version": SERVED_VERSION},
        "paths": paths,
        "definitions": definitions,
    })


def swagger(registry: Registry) -> bytes:
    """``/openapi/v2``: the Swagger 2.0 document of everything the cluster serves, encoded."""
    return _v2_document(registry, registry.generation)
