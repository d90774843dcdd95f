"""Errors over HTTP are Kubernetes Status objects with ``Content-Type: application/json`` exactly."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from test_http_fixtures import Served, serve, serving

from harness.apiserver.http.bodies import MAX_BODY_BYTES
from harness.world.world import World

POD = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1"},
    "spec": {"containers": [{"name": "c", "image": "i"}]},
}
UNKNOWN_FORMAT = "the body of the request was in an unknown format - accepted media types include:"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    # No simulators: nothing but the API server acts on what the tests write.
    yield from serving(tmp_path, simulators=[])


def _status(response: httpx.Response, code: int, reason: str) -> dict:
    assert response.status_code == code, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["kind"] == "Status" and body["apiVersion"] == "v1" and body["status"] == "Failure"
    assert body["code"] == code and body.get("reason", "") == reason
    return body


def test_unknown_path_is_a_not_found_status(served: Served) -> None:
    with served.http() as http:
        body = _status(http.get("/no/such/path"), 404, "NotFound")
        assert body["message"] == "the server could not find the requested resource"
        _status(http.get("/apis/nope.example.com/v1/things"), 404, "NotFound")
        _status(http.get("/api/v1/namespaces/default/pods/p1/exec"), 404, "NotFound")


def test_missing_object_is_a_not_found_status_with_details(served: Served) -> None:
    with served.http() as http:
        body = _status(http.get("/apis/apps/v1/namespaces/default/deployments/web"), 404, "NotFound")
    assert body["message"] == 'deployments.apps "web" not found'
    assert body["details"] == {"name": "web", "group": "apps", "kind": "deployments"}


def test_unsupported_verb_is_a_method_not_allowed_status(served: Served) -> None:
    with served.http() as http:
        _status(http.post("/api/v1/namespaces/default/pods/p1", json=POD), 405, "MethodNotAllowed")
        _status(http.get("/api/v1/namespaces/default/pods/p1/eviction"), 405, "MethodNotAllowed")
        _status(http.put("/api/v1/namespaces/default/pods", json=POD), 405, "MethodNotAllowed")
        _status(http.request("OPTIONS", "/api/v1/pods"), 405, "MethodNotAllowed")


def test_body_over_three_mebibytes_is_rejected_with_413(served: Served) -> None:
    big = dict(POD, metadata={"name": "big", "annotations": {"a": "x" * (MAX_BODY_BYTES + 10)}})
    with served.http() as http:
        body = _status(http.post("/api/v1/namespaces/default/pods", json=big), 413, "RequestEntityTooLarge")
        assert body["message"] == "Request entity too large: limit is 3145728"
        # The connection stays usable and nothing was stored.
        _status(http.get("/api/v1/namespaces/default/pods/big"), 404, "NotFound")


def test_unknown_content_type_is_415(served: Served) -> None:
    with served.http() as http:
        response = http.post(
            "/api/v1/namespaces/default/pods", content=json.dumps(POD), headers={"Content-Type": "text/plain"}
        )
    body = _status(response, 415, "UnsupportedMediaType")
    assert body["message"].startswith(UNKNOWN_FORMAT)


def test_unknown_patch_type_is_415_listing_the_patch_types(served: Served) -> None:
    with served.http() as http:
        http.post("/api/v1/namespaces/default/pods", json=POD).raise_for_status()
        response = http.patch(
            "/api/v1/namespaces/default/pods/p1", content="{}", headers={"Content-Type": "application/json"}
        )
    body = _status(response, 415, "UnsupportedMediaType")
    assert "application/strategic-merge-patch+json" in body["message"]


def test_malformed_bodies_are_400(served: Served) -> None:
    with served.http() as http:
        json_response = http.post(
            "/api/v1/namespaces/default/pods", content=b"{not json", headers={"Content-Type": "application/json"}
        )
        yaml_response = http.post(
            "/api/v1/namespaces/default/pods", content=b"a: [b", headers={"Content-Type": "application/yaml"}
        )
        empty = http.post("/api/v1/namespaces/default/pods", content=b"", headers={"Content-Type": "application/json"})
        nan = http.post(
            "/api/v1/namespaces/default/pods", content=b'{"metadata": {"name": NaN}}',
            headers={"Content-Type": "application/json"},
        )
    for response in (json_response, yaml_response, empty, nan):
        _status(response, 400, "BadRequest")


def test_invalid_query_parameters_are_client_errors(served: Served) -> None:
    with served.http() as http:
        _status(http.get("/api/v1/pods", params={"limit": "many"}), 400, "BadRequest")
        _status(http.get("/api/v1/pods", params={"labelSelector": "a in (b"}), 400, "BadRequest")
        _status(http.get("/api/v1/pods", params={"fieldSelector": "spec.bogus=1"}), 400, "BadRequest")
        response = http.post("/api/v1/namespaces/default/pods", params={"dryRun": "Some"}, json=POD)
    body = _status(response, 422, "Invalid")
    assert body["message"] == (
        'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: "Some": supported values: "All"'
    )


def test_retry_after_header_is_sent_when_the_budget_is_not_yet_observed(served: Served) -> None:
    # Without a disruption controller the budget's status never catches up with its generation:
    # the eviction is refused with 429 and Retry-After: 10.
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "b"},
           "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "x"}}}}
    pod = dict(POD, metadata={"name": "p2", "labels": {"app": "x"}}, spec={"nodeName": "n1", **POD["spec"]})
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p2", "namespace": "default"}}
    with served.http() as http:
        created = http.post("/api/v1/namespaces/default/pods", json=pod).json()
        running = dict(created, status={"phase": "Running"})
        http.put("/api/v1/namespaces/default/pods/p2/status", json=running).raise_for_status()
        http.post("/apis/policy/v1/namespaces/default/poddisruptionbudgets", json=pdb).raise_for_status()
        response = http.post("/api/v1/namespaces/default/pods/p2/eviction", json=eviction)
    body = _status(response, 429, "TooManyRequests")
    assert response.headers["retry-after"] == "10"
    assert body["details"]["retryAfterSeconds"] == 10


def test_token_is_required_when_configured_but_health_and_version_stay_open(tmp_path: Path) -> None:
    running, stop = serve(tmp_path, token="s3cret", simulators=[])
    try:
        with httpx.Client(base_url=running.base_url, timeout=10) as anonymous:
            body = _status(anonymous.get("/api/v1/namespaces"), 401, "Unauthorized")
            assert body["message"] == "Unauthorized"
            _status(anonymous.get("/api/v1/namespaces", headers={"Authorization": "Bearer wrong"}), 401, "Unauthorized")
            _status(anonymous.get("/harness/v1/clock"), 401, "Unauthorized")
            for path in ("/readyz", "/livez", "/healthz", "/version"):
                assert anonymous.get(path).status_code == 200, path
        with running.http() as http:
            assert http.get("/api/v1/namespaces").status_code == 200
    finally:
        stop()


def _break_configmap_reads(world: World) -> None:
    def broken(*args: object, **kwargs: object) -> dict:
        raise RuntimeError("boom")

    world.management.get = broken  # type: ignore[method-assign]


def test_an_unexpected_exception_is_a_500_internal_error_status(tmp_path: Path) -> None:
    for running in serving(tmp_path, simulators=[], prepare=_break_configmap_reads):
        with running.http() as http:
            response = http.get("/api/v1/namespaces/default/configmaps/c")
            body = _status(response, 500, "InternalError")
            assert body["message"] == "Internal error occurred: RuntimeError: boom"
            assert http.get("/api/v1/namespaces/default/configmaps").status_code == 200
