"""REST verbs over HTTP: create, get, list, update, the four patch types, delete, subresources,
dry run, YAML bodies, workload clusters, and settling before the response."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from test_http_fixtures import Served, serving

from harness.world.world import World

NS = "/api/v1/namespaces/default"
POD = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "labels": {"app": "a"}},
    "spec": {"containers": [{"name": "c", "image": "i:1"}, {"name": "d", "image": "j:1"}]},
}
DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
    "spec": {
        "replicas": 2, "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
    },
}


def _add_workload_cluster(world: World) -> None:
    world.add_cluster("default/wc1")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    yield from serving(tmp_path, simulators=[], prepare=_add_workload_cluster)


def _create_pod(http: httpx.Client, body: dict = POD) -> dict:
    response = http.post(f"{NS}/pods", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def test_create_returns_201_with_server_set_metadata(served: Served) -> None:
    with served.http() as http:
        pod = _create_pod(http)
    meta = pod["metadata"]
    assert meta["namespace"] == "default" and meta["uid"]
    assert isinstance(meta["resourceVersion"], str) and meta["resourceVersion"].isdigit()
    assert meta["creationTimestamp"].endswith("Z")


def test_yaml_body_is_accepted_and_timestamps_stay_strings(served: Served) -> None:
    body = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n"
        "  when: 2026-01-01T00:00:00Z\n  n: '1'\n"
    )
    with served.http() as http:
        response = http.post(f"{NS}/configmaps", content=body, headers={"Content-Type": "application/yaml"})
    assert response.status_code == 201, response.text
    assert response.json()["data"] == {"when": "2026-01-01T00:00:00Z", "n": "1"}


def test_list_filters_by_selectors_and_pages_with_continue(served: Served) -> None:
    with served.http() as http:
        for i in range(3):
            _create_pod(http, dict(POD, metadata={"name": f"p{i}", "labels": {"app": "a" if i < 2 else "b"}}))
        selected = http.get("/api/v1/pods", params={"labelSelector": "app=a"}).json()
        first = http.get(f"{NS}/pods", params={"limit": 2}).json()
        rest = http.get(f"{NS}/pods", params={"limit": 2, "continue": first["metadata"]["continue"]}).json()
        by_name = http.get(f"{NS}/pods", params={"fieldSelector": "metadata.name=p2"}).json()
    assert [p["metadata"]["name"] for p in selected["items"]] == ["p0", "p1"]
    assert [p["metadata"]["name"] for p in first["items"]] == ["p0", "p1"]
    assert [p["metadata"]["name"] for p in rest["items"]] == ["p2"]
    assert [p["metadata"]["name"] for p in by_name["items"]] == ["p2"]


def test_update_with_a_stale_resource_version_is_a_conflict(served: Served) -> None:
    with served.http() as http:
        pod = _create_pod(http)
        pod["metadata"]["labels"] = {"app": "b"}
        assert http.put(f"{NS}/pods/p1", json=pod).status_code == 200
        stale = http.put(f"{NS}/pods/p1", json=pod)
    assert stale.status_code == 409
    assert stale.json()["reason"] == "Conflict"


def test_each_patch_type_has_its_own_semantics(served: Served) -> None:
    with served.http() as http:
        _create_pod(http)
        smp = http.patch(
            f"{NS}/pods/p1", json={"spec": {"containers": [{"name": "d", "image": "j:2"}]}},
            headers={"Content-Type": "application/strategic-merge-patch+json"},
        ).json()
        merge = http.patch(
            f"{NS}/pods/p1", json={"metadata": {"labels": {"app": None, "tier": "web"}}},
            headers={"Content-Type": "application/merge-patch+json"},
        ).json()
        json_patch = http.patch(
            f"{NS}/pods/p1", json=[{"op": "add", "path": "/metadata/annotations", "value": {"k": "v"}}],
            headers={"Content-Type": "application/json-patch+json"},
        ).json()
        failed_test = http.patch(
            f"{NS}/pods/p1", json=[{"op": "test", "path": "/metadata/resourceVersion", "value": "1"}],
            headers={"Content-Type": "application/json-patch+json"},
        )
    # SMP merges containers by name; merge patch deletes with null; JSON patch adds.
    assert [(c["name"], c["image"]) for c in smp["spec"]["containers"]] == [("c", "i:1"), ("d", "j:2")]
    assert merge["metadata"]["labels"] == {"tier": "web"}
    assert json_patch["metadata"]["annotations"] == {"k": "v"}
    assert failed_test.status_code == 422
    assert failed_test.json()["message"] == "the server rejected our request due to an error in our request"


def test_apply_patch_creates_with_a_yaml_body_and_needs_a_field_manager(served: Served) -> None:
    applied = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n"
    with served.http() as http:
        headers = {"Content-Type": "application/apply-patch+yaml"}
        missing_manager = http.patch(f"{NS}/configmaps/cm", content=applied, headers=headers)
        created = http.patch(f"{NS}/configmaps/cm", params={"fieldManager": "me"}, content=applied, headers=headers)
        again = http.patch(
            f"{NS}/configmaps/cm", params={"fieldManager": "me", "force": "true"},
            json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"a": "c"}},
            headers=headers,
        )
    assert missing_manager.status_code == 422
    assert created.status_code == 201, created.text
    assert again.status_code == 200 and again.json()["data"] == {"a": "c"}


def test_dry_run_answers_without_storing(served: Served) -> None:
    with served.http() as http:
        dry = http.post(f"{NS}/pods", params={"dryRun": "All"}, json=POD)
        after = http.get(f"{NS}/pods/p1")
    assert dry.status_code == 201 and "resourceVersion" not in dry.json()["metadata"]
    assert after.status_code == 404


def test_delete_options_come_from_the_query_or_the_body(served: Served) -> None:
    finalized = dict(POD, metadata={"name": "f1", "finalizers": ["example.com/hold"]})
    with served.http() as http:
        _create_pod(http, finalized)
        _create_pod(http, dict(POD, metadata={"name": "f2", "finalizers": ["example.com/hold"]}))
        by_query = http.delete(f"{NS}/pods/f1", params={"propagationPolicy": "Foreground"})
        by_body = http.request("DELETE", f"{NS}/pods/f2", json={"propagationPolicy": "Orphan"})
        dry = http.delete(f"{NS}/pods/p9", params={"dryRun": "All"})
    assert by_query.status_code == 200
    assert "foregroundDeletion" in by_query.json()["metadata"]["finalizers"]
    assert "orphan" in by_body.json()["metadata"]["finalizers"]
    assert dry.status_code == 404


def test_delete_of_a_configmap_answers_a_success_status(served: Served) -> None:
    with served.http() as http:
        http.post(f"{NS}/configmaps", json={"metadata": {"name": "cm"}}).raise_for_status()
        response = http.delete(f"{NS}/configmaps/cm")
    body = response.json()
    assert response.status_code == 200
    assert body["kind"] == "Status" and body["status"] == "Success" and body["details"]["name"] == "cm"


def test_delete_collection_removes_only_matching_objects(served: Served) -> None:
    with served.http() as http:
        for name, app in (("a1", "x"), ("a2", "x"), ("b1", "y")):
            http.post(f"{NS}/configmaps", json={"metadata": {"name": name, "labels": {"app": app}}}).raise_for_status()
        response = http.delete(f"{NS}/configmaps", params={"labelSelector": "app=x"})
        left = http.get(f"{NS}/configmaps").json()
    assert response.status_code == 200
    assert [c["metadata"]["name"] for c in left["items"]] == ["b1"]


def test_status_subresource_changes_only_status(served: Served) -> None:
    with served.http() as http:
        pod = _create_pod(http)
        pod["status"] = {"phase": "Running"}
        pod["metadata"]["labels"] = {"changed": "ignored"}
        updated = http.put(f"{NS}/pods/p1/status", json=pod).json()
        patched = http.patch(
            f"{NS}/pods/p1/status", json={"status": {"phase": "Succeeded"}},
            headers={"Content-Type": "application/merge-patch+json"},
        ).json()
    assert updated["status"]["phase"] == "Running" and updated["metadata"]["labels"] == {"app": "a"}
    assert patched["status"]["phase"] == "Succeeded"


def test_scale_subresource_reads_and_writes_replicas(served: Served) -> None:
    path = "/apis/apps/v1/namespaces/default/deployments/web/scale"
    with served.http() as http:
        http.post("/apis/apps/v1/namespaces/default/deployments", json=DEPLOYMENT).raise_for_status()
        scale = http.get(path).json()
        scale["spec"]["replicas"] = 5
        put = http.put(path, json=scale).json()
        patched = http.patch(
            path, json={"spec": {"replicas": 1}}, headers={"Content-Type": "application/merge-patch+json"}
        ).json()
        deployment = http.get("/apis/apps/v1/namespaces/default/deployments/web").json()
    assert scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1"
    assert put["spec"]["replicas"] == 5 and patched["spec"]["replicas"] == 1
    assert deployment["spec"]["replicas"] == 1


def test_binding_assigns_a_pod_to_a_node(served: Served) -> None:
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p1"},
               "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"}}
    with served.http() as http:
        _create_pod(http)
        response = http.post(f"{NS}/pods/p1/binding", json=binding)
        pod = http.get(f"{NS}/pods/p1").json()
    assert response.status_code == 201 and response.json()["status"] == "Success"
    assert pod["spec"]["nodeName"] == "n1"


def test_the_bindings_collection_binds_the_pod_its_binding_names(served: Served) -> None:
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p1"},
               "target": {"apiVersion": "v1", "kind": "Node", "name": "n2"}}
    with served.http() as http:
        _create_pod(http)
        response = http.post(f"{NS}/bindings", json=binding)
        pod = http.get(f"{NS}/pods/p1").json()
    assert response.status_code == 201 and response.json()["status"] == "Success"
    assert pod["spec"]["nodeName"] == "n2"


def test_a_review_is_answered_with_its_status_and_not_stored(served: Served) -> None:
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
              "spec": {"resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "default"}}}
    with served.http() as http:
        response = http.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", json=review)
    assert response.status_code == 201, response.text
    assert response.json()["kind"] == "SelfSubjectAccessReview" and response.json()["status"]["allowed"] is True


def test_namespace_finalize_replaces_spec_finalizers(served: Served) -> None:
    with served.http() as http:
        http.post("/api/v1/namespaces", json={"metadata": {"name": "team"}}).raise_for_status()
        http.delete("/api/v1/namespaces/team").raise_for_status()
        terminating = http.get("/api/v1/namespaces/team").json()
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}, "spec": {"finalizers": []}}
        http.put("/api/v1/namespaces/team/finalize", json=body).raise_for_status()
        gone = http.get("/api/v1/namespaces/team")
    assert terminating["status"]["phase"] == "Terminating"
    assert gone.status_code == 404


def test_eviction_of_an_unscheduled_pod_answers_201_status(served: Served) -> None:
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p1", "namespace": "default"}}
    with served.http() as http:
        _create_pod(http)
        response = http.post(f"{NS}/pods/p1/eviction", json=eviction)
        gone = http.get(f"{NS}/pods/p1")
    assert response.status_code == 201
    assert response.json()["kind"] == "Status" and response.json()["status"] == "Success"
    assert gone.status_code == 404


def test_workload_cluster_is_served_under_its_prefix_and_kept_apart(served: Served) -> None:
    with served.http() as http:
        http.post(f"/clusters/default/wc1{NS}/configmaps", json={"metadata": {"name": "only-here"}}).raise_for_status()
        in_workload = http.get(f"/clusters/default/wc1{NS}/configmaps/only-here")
        in_management = http.get(f"{NS}/configmaps/only-here")
        unknown = http.get(f"/clusters/default/nope{NS}/configmaps")
        version = http.get("/clusters/default/wc1/version")
    assert in_workload.status_code == 200
    assert in_management.status_code == 404
    assert unknown.status_code == 404 and unknown.json()["kind"] == "Status"
    assert version.json()["gitVersion"] == "v1.32.0"


def test_a_write_is_answered_after_the_world_settles(tmp_path: Path) -> None:
    # With the namespace controller running, a deleted namespace is finalized and gone by the
    # time the DELETE is answered: the next read already sees it.
    for running in serving(tmp_path, simulators=["namespace"]):
        with running.http() as http:
            http.post("/api/v1/namespaces", json={"metadata": {"name": "team"}}).raise_for_status()
            http.post("/api/v1/namespaces/team/configmaps", json={"metadata": {"name": "c"}}).raise_for_status()
            http.delete("/api/v1/namespaces/team").raise_for_status()
            assert http.get("/api/v1/namespaces/team").status_code == 404
