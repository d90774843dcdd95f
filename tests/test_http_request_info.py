"""What a request path addresses (harness/apiserver/http/requestinfo.py), remembered per path, and which paths
are open without authentication."""

from __future__ import annotations

import pytest

from harness.apiserver.http import auth, requestinfo

PATHS = [
    "/api", "/apis", "/apis/apps", "/api/v1", "/apis/apps/v1", "/api/v1/pods", "/api/v1/namespaces",
    "/api/v1/namespaces/default", "/api/v1/namespaces/default/status", "/api/v1/namespaces/default/finalize",
    "/api/v1/namespaces/default/pods", "/api/v1/namespaces/default/pods/p",
    "/api/v1/namespaces/default/pods/p/eviction",
    "/api/v1/namespaces/default/pods/p/log/extra", "/api/v1/watch/namespaces/default/pods", "/api/v1/watch",
    "/apis/apps/v1/namespaces/ns/deployments/d/scale", "/apis/cluster.x-k8s.io/v1beta1/machines", "//api//v1//pods/",
    "/api/v1/nodes/n/status", "/healthz", "/", "", "/version", "/apis/apps/v1/watch/deployments",
]


@pytest.mark.parametrize("path", PATHS)
def test_a_remembered_path_reads_as_a_fresh_one(path: str) -> None:
    requestinfo._PARSED.clear()
    first = requestinfo.parse(path)
    assert first == requestinfo._parse(path)
    assert requestinfo.parse(path) is first


def test_pod_paths_read_as_the_apiserver_reads_them() -> None:
    info = requestinfo.parse("/api/v1/namespaces/default/pods/p/eviction")
    assert info == requestinfo.RequestInfo(requestinfo.RESOURCE, "", "v1", "default", "pods", "p", "eviction")
    assert requestinfo.parse("/api/v1/namespaces/default/status") == requestinfo.RequestInfo(
        requestinfo.RESOURCE, "", "v1", "", "namespaces", "default", "status")
    assert requestinfo.parse("/version") is None


def test_what_is_remembered_is_bounded() -> None:
    requestinfo._PARSED.clear()
    for i in range(requestinfo.PARSED_LIMIT + 10):
        requestinfo.parse(f"/api/v1/namespaces/default/pods/p-{i}")
    assert len(requestinfo._PARSED) <= requestinfo.PARSED_LIMIT
    assert requestinfo.parse("/api/v1/namespaces/default/pods/p-1").name == "p-1"


@pytest.mark.parametrize("path", [*PATHS, "/readyz", "/livez/ping", "/healthz/", "/healthzz", "/version/x", "/versions",
                                  "/api/v1/healthz", "/readyz/etcd/x"])
def test_the_open_paths_are_the_health_and_version_paths_and_those_below_them(path: str) -> None:
    expected = any(path == p or path.startswith(p + "/") for p in auth.OPEN_PATHS)
    assert auth.is_open(path) is expected
