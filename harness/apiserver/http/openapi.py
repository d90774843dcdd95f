"""A minimal OpenAPI v3: what kubectl needs to let the server validate fields.

kubectl ``create -f``/``apply -f`` look in ``/openapi/v3/<api/v1|apis/g/v>`` for a PATCH
operation tagged with the object's ``x-kubernetes-group-version-kind`` that declares the
``fieldValidation`` query parameter; finding it, they send ``fieldValidation=Strict`` and skip
client-side validation. The PATCH operations declare no request body, so client-side apply
computes its patch from compiled-in types (as it does without OpenAPI) rather than from schemas
we do not serve. ``/openapi/v2`` is not served (clients only fall back to it).
"""

from __future__ import annotations

import hashlib
from typing import Any

from harness.apiserver.http.responses import encode, path_not_found
from harness.apiserver.resources import Registry, ResourceType
from harness.kube.names.core import KUBERNETES_VERSION as SERVED_VERSION

OPENAPI_VERSION = "3.0.0"
TITLE = "Kubernetes"
V3_PREFIX = "/openapi/v3"
FIELD_VALIDATION = "fieldValidation"
GVK_EXTENSION = "x-kubernetes-group-version-kind"
ACTION_EXTENSION = "x-kubernetes-action"

_QUERY_PARAMETERS = (
    ("dryRun", "string"),
    ("fieldManager", "string"),
    (FIELD_VALIDATION, "string"),
    ("force", "boolean"),
)


def group_version_path(group: str, version: str) -> str:
    """The index key of a group-version: ``api/v1`` or ``apis/<group>/<version>``."""
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _schema_name(rt: ResourceType) -> str:
    if rt.custom:
        return ".".join([*reversed(rt.group.split(".")), rt.version, rt.kind])
    if rt.group == "apiextensions.k8s.io":
        return f"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.{rt.version}.{rt.kind}"
    return f"io.k8s.api.{rt.group.split('.')[0] or 'core'}.{rt.version}.{rt.kind}"


def _operation_id(rt: ResourceType) -> str:
    group = "".join(part.capitalize() for part in rt.group.split(".")[0].split("-")) or "Core"
    scope = "Namespaced" if rt.namespaced else ""
    return f"patch{group}{rt.version.capitalize()}{scope}{rt.kind}"


def _object_path(rt: ResourceType) -> str:
    base = f"/apis/{rt.group}/{rt.version}" if rt.group else f"/api/{rt.version}"
    scope = "/namespaces/{namespace}" if rt.namespaced else ""
    return f"{base}{scope}/{rt.plural}/{{name}}"


def _path_item(rt: ResourceType) -> dict[str, Any]:
    gvk = {"group": rt.group, "version": rt.version, "kind": rt.kind}
    ref = {"$ref": f"#/components/schemas/{_schema_name(rt)}"}
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


def document(registry: Registry, group: str, version: str) -> dict[str, Any]:
    """The OpenAPI v3 document of one served group-version (404 when not served)."""
    kinds = sorted(registry.in_group_version(group, version), key=lambda rt: rt.plural)
    if not kinds:
        raise path_not_found()
    return {
        "openapi": OPENAPI_VERSION,
        "info": {"title": TITLE, "version": SERVED_VERSION},
        "paths": {_object_path(rt): _path_item(rt) for rt in kinds},
        "components": {
            "schemas": {
                _schema_name(rt): {
                    "type": "object",
                    GVK_EXTENSION: [{"group": rt.group, "version": rt.version, "kind": rt.kind}],
                }
                for rt in kinds
            }
        },
    }


def index(registry: Registry, prefix: str) -> dict[str, Any]:
    """``/openapi/v3``: one entry per group-version; the URL carries a hash of the document, so a
    client's cache notices when kinds change. ``prefix`` is the cluster's path prefix."""
    paths: dict[str, Any] = {}
    for group, versions in registry.groups().items():
        for version in versions:
            digest = hashlib.sha512(encode(document(registry, group, version))).hexdigest().upper()
            key = group_version_path(group, version)
            paths[key] = {"serverRelativeURL": f"{prefix}{V3_PREFIX}/{key}?hash={digest}"}
    return {"paths": paths}


def resolve(registry: Registry, prefix: str, rest: str) -> dict[str, Any]:
    """The document at ``/openapi/v3<rest>``: the index for an empty ``rest``, else a group-version."""
    parts = [p for p in rest.strip("/").split("/") if p]
    if not parts:
        return index(registry, prefix)
    if parts[0] == "api" and len(parts) == 2:
        return document(registry, "", parts[1])
    if parts[0] == "apis" and len(parts) == 3:
        return document(registry, parts[1], parts[2])
    raise path_not_found()
