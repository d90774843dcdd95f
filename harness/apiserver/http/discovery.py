"""Discovery documents: legacy (``APIVersions``, ``APIGroupList``, ``APIGroup``,
``APIResourceList``) and aggregated v2 (``APIGroupDiscoveryList``).

Built from the cluster's registry on every request, so a CRD that registers new kinds shows up at
once. A client that asks for aggregated discovery gets it with a Content-Type naming the v2 kind;
any other Accept gets the legacy shape (which clients accept as a fallback).
"""

from __future__ import annotations

import re
from typing import Any

from harness.apiserver import subresources
from harness.apiserver.http.negotiation import MediaType
from harness.apiserver.http.responses import path_not_found
from harness.apiserver.resources import Registry, ResourceType
from harness.kube.names.apiextensions import SCOPE_CLUSTER, SCOPE_NAMESPACED

DISCOVERY_GROUP = "apidiscovery.k8s.io"
DISCOVERY_VERSION = "v2"
DISCOVERY_LIST_KIND = "APIGroupDiscoveryList"
AGGREGATED_CONTENT_TYPE = f"application/json;g={DISCOVERY_GROUP};v={DISCOVERY_VERSION};as={DISCOVERY_LIST_KIND}"
FRESHNESS_CURRENT = "Current"

_KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Sort key putting versions in Kubernetes preference order: GA, then beta, then alpha, newest
    first; versions that do not look like Kubernetes versions last, alphabetically."""
    match = _KUBE_VERSION.match(version)
    if match is None:
        return (3, 0, 0, version)
    major, stage, minor = match.groups()
    rank = {None: 0, "beta": 1, "alpha": 2}[stage]
    return (rank, -int(major), -int(minor or 0), version)


def wants_aggregated(accept: list[MediaType]) -> bool:
    """True when the client prefers aggregated v2 discovery over the legacy documents."""
    for media in accept:
        if not media.accepts_json():
            continue
        if "as" not in media.params:
            return False
        if (media.params.get("g"), media.params.get("v"), media.params.get("as")) == (
            DISCOVERY_GROUP, DISCOVERY_VERSION, DISCOVERY_LIST_KIND,
        ):
            return True
    return False


def _versions(registry: Registry, group: str) -> list[str]:
    return sorted(registry.groups().get(group, []), key=version_priority)


def _subresources(rt: ResourceType) -> list[tuple[str, str, str, str, tuple[str, ...]]]:
    """(name, group, version, kind, verbs) of each subresource of ``rt``, from the subresource table."""
    out = []
    for sub in subresources.of(rt):
        group, version, kind = sub.response_kind(rt)
        out.append((sub.name, group, version, kind, sub.verbs))
    return out


# -- legacy ----------------------------------------------------------------------------------------


def api_versions(server_address: str) -> dict[str, Any]:
    """``GET /api``."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def _group(registry: Registry, group: str) -> dict[str, Any]:
    versions = [{"groupVersion": f"{group}/{v}", "version": v} for v in _versions(registry, group)]
    return {"name": group, "versions": versions, "preferredVersion": versions[0]}


def group_list(registry: Registry) -> dict[str, Any]:
    """``GET /apis``: every named group with its versions, preferred first."""
    groups = [_group(registry, g) for g in registry.groups() if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(registry: Registry, group: str) -> dict[str, Any]:
    """``GET /apis/<group>``; 404 when the group is not served."""
    if not group or group not in registry.groups():
        raise path_not_found()
    return {"kind": "APIGroup", "apiVersion": "v1", **_group(registry, group)}


def _api_resource(rt: ResourceType) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": rt.plural,
        "singularName": rt.singular,
        "namespaced": rt.namespaced,
        "kind": rt.kind,
        "verbs": list(rt.verbs),
    }
    if rt.short_names:
        entry["shortNames"] = list(rt.short_names)
    if rt.categories:
        entry["categories"] = list(rt.categories)
    return entry


def resource_list(registry: Registry, group: str, version: str) -> dict[str, Any]:
    """``GET /api/v1`` or ``/apis/<group>/<version>``: resources and their subresources by name;
    404 when the group-version is not served."""
    kinds = registry.in_group_version(group, version)
    if not kinds:
        raise path_not_found()
    entries = []
    for rt in kinds:
        entries.append(_api_resource(rt))
        for sub, sub_group, sub_version, kind, verbs in _subresources(rt):
            entry: dict[str, Any] = {"name": f"{rt.plural}/{sub}", "singularName": "", "namespaced": rt.namespaced}
            if (sub_group, sub_version) != (rt.group, rt.version):
                entry["group"] = sub_group
                entry["version"] = sub_version
            entry["kind"] = kind
            entry["verbs"] = list(verbs)
            entries.append(entry)
    entries.sort(key=lambda e: e["name"])
    body: dict[str, Any] = {"kind": "APIResourceList"}
    if group:
        body["apiVersion"] = "v1"  # the core list is written without one
    body["groupVersion"] = f"{group}/{version}" if group else version
    body["resources"] = entries
    return body


# -- aggregated ------------------------------------------------------------------------------------


def _gvk(group: str, version: str, kind: str) -> dict[str, str]:
    return {"group": group, "version": version, "kind": kind}


def _discovery_resource(rt: ResourceType) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "resource": rt.plural,
        "responseKind": _gvk(rt.group, rt.version, rt.kind),
        "scope": SCOPE_NAMESPACED if rt.namespaced else SCOPE_CLUSTER,
        "singularResource": rt.singular,
        "verbs": list(rt.verbs),
    }
    if rt.short_names:
        entry["shortNames"] = list(rt.short_names)
    if rt.categories:
        entry["categories"] = list(rt.categories)
    subresources = [
        {"subresource": sub, "responseKind": _gvk(g, v, kind), "verbs": list(verbs)}
        for sub, g, v, kind, verbs in _subresources(rt)
    ]
    if subresources:
        entry["subresources"] = subresources
    return entry


def _discovery_group(registry: Registry, group: str) -> dict[str, Any]:
    metadata: dict[str, Any] = {"creationTimestamp": None}
    if group:
        metadata["name"] = group
    versions = []
    for version in _versions(registry, group):
        resources = sorted(
            (_discovery_resource(rt) for rt in registry.in_group_version(group, version)), key=lambda r: r["resource"]
        )
        versions.append({"version": version, "resources": resources, "freshness": FRESHNESS_CURRENT})
    return {"metadata": metadata, "versions": versions}


def aggregated(registry: Registry, *, legacy: bool) -> dict[str, Any]:
    """``APIGroupDiscoveryList`` for ``/api`` (``legacy``: the core group only) or ``/apis``."""
    groups = [""] if legacy else [g for g in registry.groups() if g]
    return {
        "kind": DISCOVERY_LIST_KIND,
        "apiVersion": f"{DISCOVERY_GROUP}/{DISCOVERY_VERSION}",
        "metadata": {},
        "items": [_discovery_group(registry, g) for g in groups],
    }


def root_paths(registry: Registry, extra: tuple[str, ...]) -> dict[str, Any]:
    """``GET /``: every API path the cluster serves, plus ``extra`` (health, version, OpenAPI)."""
    paths = {"/api", "/api/v1", "/apis", *extra}
    for group, versions in registry.groups().items():
        if group:
            paths.add(f"/apis/{group}")
            paths.update(f"/apis/{group}/{v}" for v in versions)
    return {"paths": sorted(paths)}
