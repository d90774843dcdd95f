"""What a request path addresses, read the way the apiserver's RequestInfoFactory reads it.

``/api/v1/namespaces/<ns>/pods/<name>/eviction`` → group "", version v1, namespace, resource
"pods", name, subresource "eviction". ``namespaces/<name>/status`` and ``namespaces/<name>/finalize``
address the Namespace itself; the deprecated ``/watch/`` path segment turns a GET into a watch.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.apiserver.clusters import MANAGEMENT, WORKLOAD_PREFIX, workload_name

# What a path addresses besides a resource.
API_VERSIONS = "api-versions"  # /api
GROUP_LIST = "group-list"  # /apis
GROUP = "group"  # /apis/<group>
RESOURCE_LIST = "resource-list"  # /api/v1, /apis/<group>/<version>
RESOURCE = "resource"

LEGACY_PREFIX = "api"
GROUPS_PREFIX = "apis"
NAMESPACES = "namespaces"
NAMESPACE_SUBRESOURCES = ("status", "finalize")
WATCH_SEGMENT = "watch"


@dataclass(frozen=True)
class RequestInfo:
    """The parts of a Kubernetes API path (empty strings for absent parts)."""

    target: str
    group: str = ""
    version: str = ""
    namespace: str = ""
    resource: str = ""
    name: str = ""
    subresource: str = ""
    watch_path: bool = False


def split_cluster(path: str) -> tuple[str, str] | None:
    """(cluster, rest of the path) for a request path; None for a malformed cluster prefix.

    ``/clusters/<ns>/<name>/api/v1`` → (``<ns>/<name>``, ``/api/v1``); any other path belongs to
    the management cluster."""
    if not path.startswith(WORKLOAD_PREFIX):
        return MANAGEMENT, path
    parts = path[len(WORKLOAD_PREFIX):].split("/", 2)
    if len(parts) < 2 or not parts[0] or not parts[1]:
        return None
    rest = "/" + parts[2] if len(parts) == 3 else "/"
    return workload_name(parts[0], parts[1]), rest


# Parsed paths, remembered: clients send the same few paths again and again (a create's collection,
# a controller's objects), and a RequestInfo is immutable. Forgotten all at once when full.
_PARSED: dict[str, RequestInfo | None] = {}
PARSED_LIMIT = 4096


def parse(path: str) -> RequestInfo | None:
    """The API target of ``path`` (without a cluster prefix); None when it is no API path."""
    try:
        return _PARSED[path]
    except KeyError:
        pass
    info = _parse(path)
    if len(_PARSED) >= PARSED_LIMIT:
        _PARSED.clear()
    _PARSED[path] = info
    return info


def _parse(path: str) -> RequestInfo | None:
    segments = [s for s in path.strip("/").split("/") if s != ""] if path.strip("/") else []
    if not segments or segments[0] not in (LEGACY_PREFIX, GROUPS_PREFIX):
        return None
    if segments[0] == LEGACY_PREFIX:
        if len(segments) == 1:
            return RequestInfo(API_VERSIONS)
        group, version, rest = "", segments[1], segments[2:]
    else:
        if len(segments) == 1:
            return RequestInfo(GROUP_LIST)
        if len(segments) == 2:
            return RequestInfo(GROUP, group=segments[1])
        group, version, rest = segments[1], segments[2], segments[3:]
    if not rest:
        return RequestInfo(RESOURCE_LIST, group=group, version=version)
    watch_path = False
    if rest[0] == WATCH_SEGMENT:
        watch_path = True
        rest = rest[1:]
        if not rest:
            return None
    namespace = ""
    # namespaces/<ns>/<resource>... is namespaced content; namespaces/<name>[/status|/finalize] is
    # the Namespace object itself (cluster-scoped, so no namespace).
    if rest[0] == NAMESPACES and len(rest) > 2 and rest[2] not in NAMESPACE_SUBRESOURCES:
        namespace = rest[1]
        rest = rest[2:]
    if len(rest) > 3:
        return None
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    return RequestInfo(RESOURCE, group, version, namespace, resource, name, subresource, watch_path)
