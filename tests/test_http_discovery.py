"""Discovery, OpenAPI, version and health over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from test_http_fixtures import Served, serving

from harness.apiserver.http.discovery import AGGREGATED_CONTENT_TYPE
from tests.manifests import crd

AGGREGATED_ACCEPT = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
)
OPENAPI_V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
CRD = crd("Widget", status_subresource=True)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    yield from serving(tmp_path, simulators=[])


def _entries(resource_list: dict) -> dict[str, dict]:
    return {r["name"]: r for r in resource_list["resources"]}


def test_legacy_discovery_lists_resources_and_subresources(served: Served) -> None:
    with served.http() as http:
        api = http.get("/api").json()
        core = _entries(http.get("/api/v1").json())
        apps = _entries(http.get("/apis/apps/v1").json())
    assert api["kind"] == "APIVersions" and api["versions"] == ["v1"]
    assert core["pods"]["singularName"] == "pod" and core["pods"]["namespaced"] is True
    assert core["pods"]["shortNames"] == ["po"]
    assert core["pods/eviction"] == {
        "name": "pods/eviction", "singularName": "", "namespaced": True, "group": "policy", "version": "v1",
        "kind": "Eviction", "verbs": ["create"],
    }
    assert core["pods/status"]["kind"] == "Pod" and "singularName" in core["pods/status"]
    assert core["pods/binding"]["kind"] == "Binding"
    assert core["namespaces/finalize"]["verbs"] == ["update"]
    assert apps["deployments/scale"]["group"] == "autoscaling" and apps["deployments/scale"]["kind"] == "Scale"


def test_every_listed_group_version_answers(served: Served) -> None:
    with served.http() as http:
        groups = http.get("/apis").json()
        assert groups["kind"] == "APIGroupList"
        for group in groups["groups"]:
            assert http.get(f"/apis/{group['name']}").status_code == 200
            for version in group["versions"]:
                assert http.get(f"/apis/{version['groupVersion']}").status_code == 200, version


def test_aggregated_discovery_names_its_kind_in_the_content_type(served: Served) -> None:
    with served.http() as http:
        core = http.get("/api", headers={"Accept": AGGREGATED_ACCEPT})
        groups = http.get("/apis", headers={"Accept": AGGREGATED_ACCEPT})
    assert core.headers["content-type"] == AGGREGATED_CONTENT_TYPE
    assert groups.headers["content-type"] == AGGREGATED_CONTENT_TYPE
    pods = next(r for r in core.json()["items"][0]["versions"][0]["resources"] if r["resource"] == "pods")
    assert pods["responseKind"] == {"group": "", "version": "v1", "kind": "Pod"} and pods["scope"] == "Namespaced"
    subresources = {s["subresource"]: s for s in pods["subresources"]}
    assert subresources["eviction"]["responseKind"] == {"group": "policy", "version": "v1", "kind": "Eviction"}
    for item in groups.json()["items"]:
        for version in item["versions"]:
            for resource in version["resources"]:
                assert resource["responseKind"]["kind"]
                assert all(s["responseKind"]["kind"] for s in resource.get("subresources", []))


def test_a_new_crd_is_discoverable_at_once(served: Served) -> None:
    with served.http() as http:
        assert http.get("/apis/example.com/v1").status_code == 404
        http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=CRD).raise_for_status()
        widgets = _entries(http.get("/apis/example.com/v1").json())
        names = [g["name"] for g in http.get("/apis").json()["groups"]]
        aggregated = http.get("/apis", headers={"Accept": AGGREGATED_ACCEPT}).json()
    assert widgets["widgets"]["kind"] == "Widget" and "widgets/status" in widgets
    assert "example.com" in names
    assert any(item["metadata"].get("name") == "example.com" for item in aggregated["items"])


def test_openapi_v3_declares_field_validation_on_every_kinds_patch(served: Served) -> None:
    with served.http() as http:
        index = http.get("/openapi/v3").json()
        core_url = index["paths"]["api/v1"]["serverRelativeURL"]
        document = http.get(core_url).json()
        v2 = http.get("/openapi/v2")
    assert core_url.startswith("/openapi/v3/api/v1?hash=")
    patches = [item["patch"] for item in document["paths"].values() if "patch" in item]
    pod = next(p for p in patches if p["x-kubernetes-group-version-kind"]["kind"] == "Pod")
    assert pod["x-kubernetes-group-version-kind"] == {"group": "", "version": "v1", "kind": "Pod"}
    assert {"name": "fieldValidation", "in": "query"}.items() <= next(
        p for p in pod["parameters"] if p["name"] == "fieldValidation"
    ).items()
    assert v2.status_code == 200
    assert v2.json()["definitions"]["io.k8s.api.core.v1.Pod"]["x-kubernetes-group-version-kind"] == [
        {"group": "", "kind": "Pod", "version": "v1"}
    ]


def test_openapi_v3_documents_carry_the_kinds_schemas_and_what_they_reference(served: Served) -> None:
    with served.http() as http:
        index = http.get("/openapi/v3").json()
        apps = http.get(index["paths"]["apis/apps/v1"]["serverRelativeURL"]).json()
        protobuf_only = http.get("/openapi/v2", headers={"Accept": OPENAPI_V2_PROTOBUF})
    schemas = apps["components"]["schemas"]
    spec = schemas["io.k8s.api.apps.v1.DeploymentSpec"]
    assert spec["properties"]["replicas"] == {
        "description": spec["properties"]["replicas"]["description"], "format": "int32", "type": "integer",
    }
    template_ref = "#/components/schemas/io.k8s.api.core.v1.PodTemplateSpec"
    assert spec["properties"]["template"]["allOf"] == [{"$ref": template_ref}]
    assert "io.k8s.api.core.v1.Container" in schemas and "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in schemas
    assert schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["format"] == "int-or-string"
    assert protobuf_only.status_code == 406 and protobuf_only.json()["reason"] == "NotAcceptable"


def test_openapi_v3_publishes_a_crd_schema_with_object_meta(served: Served) -> None:
    with served.http() as http:
        assert http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=CRD).status_code == 201
        index = http.get("/openapi/v3").json()
        document = http.get(index["paths"]["apis/example.com/v1"]["serverRelativeURL"]).json()
    widget = document["components"]["schemas"]["com.example.v1.Widget"]
    assert widget["x-kubernetes-group-version-kind"] == [{"group": "example.com", "version": "v1", "kind": "Widget"}]
    assert widget["properties"]["metadata"]["allOf"] == [
        {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
    ]
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in document["components"]["schemas"]


def test_openapi_index_of_a_workload_cluster_points_under_its_prefix(tmp_path: Path) -> None:
    for running in serving(tmp_path, simulators=[], prepare=lambda world: world.add_cluster("ns1/wc")):
        with running.http() as http:
            index = http.get("/clusters/ns1/wc/openapi/v3").json()
            url = index["paths"]["apis/apps/v1"]["serverRelativeURL"]
            assert url.startswith("/clusters/ns1/wc/openapi/v3/apis/apps/v1?hash=")
            assert http.get(url).status_code == 200


def test_version_and_health(served: Served) -> None:
    with served.http() as http:
        version = http.get("/version").json()
        health = [http.get(path) for path in ("/readyz", "/livez", "/healthz")]
    assert (version["major"], version["minor"], version["gitVersion"]) == ("1", "32", "v1.32.0")
    assert version["platform"] == "linux/amd64"
    assert all(r.status_code == 200 and r.text == "ok" for r in health)


def test_the_pod_streams_a_kubelet_answers_are_listed_with_their_verbs(served: Served) -> None:
    # `kubectl api-resources --subresource` and aggregated discovery list what is served, as 1.32 does.
    with served.http() as http:
        core = _entries(http.get("/api/v1").json())
        aggregated = http.get("/api", headers={"Accept": AGGREGATED_ACCEPT}).json()
    assert core["pods/log"]["kind"] == "Pod" and core["pods/log"]["verbs"] == ["get"]
    for sub, kind in (("exec", "PodExecOptions"), ("attach", "PodAttachOptions"),
                      ("portforward", "PodPortForwardOptions")):
        assert (core[f"pods/{sub}"]["kind"], core[f"pods/{sub}"]["verbs"]) == (kind, ["create", "get"])
    assert "serviceaccounts/token" not in core  # not served, so not listed
    pods = next(r for r in aggregated["items"][0]["versions"][0]["resources"] if r["resource"] == "pods")
    verbs = {s["subresource"]: s["verbs"] for s in pods["subresources"]}
    assert verbs == {"status": ["get", "patch", "update"], "eviction": ["create"], "binding": ["create"],
                     "log": ["get"], "exec": ["create", "get"], "attach": ["create", "get"],
                     "portforward": ["create", "get"]}
