"""Server-side apply as kubectl v1.32 and HTTP clients meet it: field ownership in
``managedFields``, 409 conflicts worded as kube-apiserver words them, ``--force-conflicts``,
fields an applier stops applying, and the move from client-side apply."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_http_fixtures import Served, serving

from tests.manifests import example_crd, manifests, workload

APPLY = "application/apply-patch+yaml"
CONFIG_MAP = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: default}
data: {key: one, other: two}
"""
DEPLOYMENT = manifests(workload("Deployment", "web", [{"name": "nginx", "image": "nginx:1.27",
                                                      "ports": [{"containerPort": 80}]}], replicas=2))


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    yield from serving(tmp_path)


def _entries(obj: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(e["manager"], e["operation"]): e for e in obj["metadata"].get("managedFields", [])}


def _apply(served: Served, path: str, body: dict[str, Any], manager: str, force: bool = False) -> Any:
    params = {"fieldManager": manager}
    if force:
        params["force"] = "true"
    with served.http() as http:
        return http.patch(path, content=json.dumps(body), params=params, headers={"Content-Type": APPLY})


CM_PATH = "/api/v1/namespaces/default/configmaps/settings"


def test_kubectl_server_side_apply_records_an_apply_entry_with_fields_v1(served: Served) -> None:
    out = served.kubectl("apply", "--server-side", "-f", "-", stdin=CONFIG_MAP)
    assert "configmap/settings serverside-applied" in out.stdout
    cm = served.kubectl_json("get", "configmap", "settings", "--show-managed-fields")
    entry = _entries(cm)[("kubectl", "Apply")]
    assert entry["fieldsType"] == "FieldsV1" and entry["apiVersion"] == "v1"
    assert entry["fieldsV1"] == {"f:data": {"f:key": {}, "f:other": {}}}


def test_kubectl_conflict_names_the_other_manager_and_force_conflicts_takes_the_field(served: Served) -> None:
    served.kubectl("apply", "--server-side", "-f", "-", stdin=CONFIG_MAP)
    response = _apply(served, CM_PATH, {"apiVersion": "v1", "kind": "ConfigMap",
                                        "metadata": {"name": "settings"}, "data": {"key": "mine"}}, "other-manager")
    assert response.status_code == 409
    status = response.json()
    assert status["reason"] == "Conflict"
    assert status["message"] == 'Apply failed with 1 conflict: conflict with "kubectl": .data.key'
    assert status["details"] == {"causes": [
        {"reason": "FieldManagerConflict", "message": 'conflict with "kubectl"', "field": ".data.key"}]}
    changed = CONFIG_MAP.replace("key: one, other: two", "key: three, other: four")
    refused = served.kubectl("apply", "--server-side", "--field-manager", "other-manager", "-f", "-",
                             stdin=changed, check=False)
    assert refused.returncode != 0
    assert "Apply failed with 2 conflicts: conflicts with \"kubectl\":" in refused.stderr
    assert "- .data.key" in refused.stderr and "- .data.other" in refused.stderr
    served.kubectl("apply", "--server-side", "--force-conflicts", "--field-manager", "other-manager", "-f", "-",
                   stdin=changed)
    cm = served.kubectl_json("get", "configmap", "settings", "--show-managed-fields")
    assert cm["data"] == {"key": "three", "other": "four"}
    entries = _entries(cm)
    assert ("kubectl", "Apply") not in entries
    assert entries[("other-manager", "Apply")]["fieldsV1"] == {"f:data": {"f:key": {}, "f:other": {}}}


def test_applying_the_same_value_shares_ownership_without_a_conflict(served: Served) -> None:
    served.kubectl("apply", "--server-side", "-f", "-", stdin=CONFIG_MAP)
    response = _apply(served, CM_PATH, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"},
                                        "data": {"key": "one"}}, "second")
    assert response.status_code == 200
    entries = _entries(response.json())
    assert entries[("second", "Apply")]["fieldsV1"] == {"f:data": {"f:key": {}}}
    assert entries[("kubectl", "Apply")]["fieldsV1"] == {"f:data": {"f:key": {}, "f:other": {}}}


def test_a_field_the_applier_stops_applying_is_removed_unless_another_manager_owns_it(served: Served) -> None:
    served.kubectl("apply", "--server-side", "-f", "-", stdin=CONFIG_MAP)
    _apply(served, CM_PATH, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"},
                             "data": {"other": "two"}}, "second")
    served.kubectl("apply", "--server-side", "-f", "-",
                   stdin=CONFIG_MAP.replace("data: {key: one, other: two}", "data: {}"))
    cm = served.kubectl_json("get", "configmap", "settings")
    assert cm["data"] == {"other": "two"}  # "key" had no other owner; "other" is still second's


def test_an_update_takes_ownership_silently_and_the_applier_then_conflicts(served: Served) -> None:
    served.kubectl("apply", "--server-side", "-f", "-", stdin=DEPLOYMENT)
    served.kubectl("scale", "deployment", "web", "--replicas=5")
    deployment = served.kubectl_json("get", "deployment", "web", "--show-managed-fields")
    assert deployment["spec"]["replicas"] == 5
    refused = served.kubectl("apply", "--server-side", "-f", "-", stdin=DEPLOYMENT, check=False)
    assert refused.returncode != 0
    assert ('Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" using apps/v1: '
            ".spec.replicas") in refused.stderr


def test_list_items_are_keyed_by_their_merge_keys(served: Served) -> None:
    served.kubectl("apply", "--server-side", "-f", "-", stdin=DEPLOYMENT)
    deployment = served.kubectl_json("get", "deployment", "web", "--show-managed-fields")
    fields = _entries(deployment)[("kubectl", "Apply")]["fieldsV1"]
    container = fields["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"nginx"}']
    assert container["."] == {} and "f:image" in container
    assert 'k:{"containerPort":80,"protocol":"TCP"}' in container["f:ports"]
    assert fields["f:spec"]["f:selector"] == {}  # a LabelSelector is atomic


def test_client_side_apply_then_server_side_apply_migrates_ownership(served: Served) -> None:
    served.kubectl("apply", "-f", "-", stdin=CONFIG_MAP)
    cm = served.kubectl_json("get", "configmap", "settings", "--show-managed-fields")
    assert ("kubectl-client-side-apply", "Update") in _entries(cm)
    changed = CONFIG_MAP.replace("key: one", "key: moved")
    served.kubectl("apply", "--server-side", "-f", "-", stdin=changed)
    cm = served.kubectl_json("get", "configmap", "settings", "--show-managed-fields")
    assert cm["data"]["key"] == "moved"
    entries = _entries(cm)
    assert ("kubectl", "Apply") in entries
    assert ("kubectl-client-side-apply", "Update") not in entries
    annotation = json.loads(cm["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"])
    assert annotation["data"]["key"] == "moved"


def test_create_records_an_update_entry_named_after_the_user_agent(served: Served) -> None:
    with served.http(headers={"User-Agent": "my-controller/v0.1 (linux)"}) as http:
        created = http.post("/api/v1/namespaces/default/configmaps",
                            json={"metadata": {"name": "made", "labels": {"a": "b"}}, "data": {"k": "v"}}).json()
    (entry,) = created["metadata"]["managedFields"]
    assert entry["manager"] == "my-controller" and entry["operation"] == "Update"
    assert entry["fieldsV1"] == {"f:data": {".": {}, "f:k": {}}, "f:metadata": {"f:labels": {".": {}, "f:a": {}}}}


def test_managed_fields_reset_with_an_empty_list_entry(served: Served) -> None:
    served.kubectl("apply", "--server-side", "-f", "-", stdin=CONFIG_MAP)
    served.kubectl("patch", "configmap", "settings", "--type", "merge", "-p", '{"metadata":{"managedFields":[{}]}}')
    cm = served.kubectl_json("get", "configmap", "settings", "--show-managed-fields")
    assert "managedFields" not in cm["metadata"]


def test_apply_with_managed_fields_in_the_body_is_refused(served: Served) -> None:
    response = _apply(served, CM_PATH, {"apiVersion": "v1", "kind": "ConfigMap",
                                        "metadata": {"name": "settings", "managedFields": []}}, "m")
    assert response.status_code == 400
    assert response.json()["message"] == "metadata.managedFields must be nil"


def test_an_apply_in_another_version_is_refused_naming_both(served: Served) -> None:
    response = _apply(served, CM_PATH, {"apiVersion": "v2", "kind": "ConfigMap", "metadata": {"name": "settings"}},
                      "m")
    assert response.status_code == 400
    assert response.json()["message"] == ("Incorrect version specified in apply patch. Specified patch version: v2, "
                                           "expected: v1")


CRD = example_crd("Gadget", {
    "size": {"type": "integer"},
    "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port"],
              "items": {"type": "object", "properties": {"port": {"type": "integer"}, "name": {"type": "string"}}}},
})
GADGET = """\
apiVersion: example.com/v1
kind: Gadget
metadata: {name: g1, namespace: default}
spec:
  size: 1
  ports: [{port: 80, name: web}]
"""


def test_custom_resources_are_keyed_by_their_list_map_keys_and_conflict_like_built_ins(served: Served) -> None:
    served.kubectl("apply", "-f", "-", stdin=CRD)
    served.kubectl("wait", "--for", "condition=established", "crd/gadgets.example.com", "--timeout=10s")
    served.kubectl("apply", "--server-side", "-f", "-", stdin=GADGET)
    gadget = served.kubectl_json("get", "gadget", "g1", "--show-managed-fields")
    assert _entries(gadget)[("kubectl", "Apply")]["fieldsV1"] == {"f:spec": {
        "f:ports": {'k:{"port":80}': {".": {}, "f:name": {}, "f:port": {}}}, "f:size": {}}}
    other = GADGET.replace("size: 1", "size: 2").replace("[{port: 80, name: web}]", "[{port: 81, name: alt}]")
    refused = served.kubectl("apply", "--server-side", "--field-manager", "scaler", "-f", "-", stdin=other, check=False)
    assert refused.returncode != 0
    assert 'Apply failed with 1 conflict: conflict with "kubectl": .spec.size' in refused.stderr
    served.kubectl("apply", "--server-side", "--force-conflicts", "--field-manager", "scaler", "-f", "-", stdin=other)
    gadget = served.kubectl_json("get", "gadget", "g1")
    assert gadget["spec"]["size"] == 2
    assert sorted(p["port"] for p in gadget["spec"]["ports"]) == [80, 81]  # a map list merges by key
