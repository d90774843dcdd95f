"""Table responses for ``kubectl get``: per-kind columns, CRD printer columns, row objects."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from test_http_fixtures import Served, serving

from harness.apiserver.http import columns, jsonpath
from harness.clock import EPOCH
from tests.manifests import crd

TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}
NS = "/api/v1/namespaces/default"
CRD = crd("Widget", printer_columns=[
    {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
    {"name": "Ready", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Ready")].status'},
    {"name": "Note", "type": "string", "jsonPath": ".spec.note", "priority": 1},
])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    yield from serving(tmp_path, simulators=[])


def _table(served: Served, path: str, **params: str) -> dict:
    with served.http() as http:
        response = http.get(path, headers=TABLE, params=params)
    assert response.status_code == 200, response.text
    table = response.json()
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    return table


def _names(table: dict) -> list[str]:
    return [c["name"] for c in table["columnDefinitions"]]


def test_pod_rows_show_ready_status_restarts_and_wide_columns(served: Served) -> None:
    pod = {"metadata": {"name": "p1"}, "spec": {"nodeName": "n1", "containers": [{"name": "a", "image": "i"},
                                                                                  {"name": "b", "image": "i"}]}}
    status = {"phase": "Running", "podIP": "10.0.0.7", "containerStatuses": [
        {"name": "a", "ready": True, "restartCount": 2, "state": {"running": {}}},
        {"name": "b", "ready": False, "restartCount": 0, "state": {"waiting": {"reason": "CrashLoopBackOff"}}},
    ]}
    with served.http() as http:
        created = http.post(f"{NS}/pods", json=pod).json()
        http.put(f"{NS}/pods/p1/status", json=dict(created, status=status)).raise_for_status()
    table = _table(served, "/api/v1/pods")
    assert _names(table) == ["Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node",
                             "Readiness Gates"]
    assert [c["priority"] for c in table["columnDefinitions"]] == [0, 0, 0, 0, 0, 1, 1, 1, 1]
    assert table["columnDefinitions"][0]["format"] == "name"
    row = table["rows"][0]
    assert row["cells"] == ["p1", "1/2", "CrashLoopBackOff", "2", "0s", "10.0.0.7", "n1", "<none>", "<none>"]
    # kubectl needs the metadata for -A and --show-labels.
    assert row["object"]["kind"] == "PartialObjectMetadata"
    assert row["object"]["metadata"]["namespace"] == "default"


def test_a_cordoned_node_shows_scheduling_disabled(served: Served) -> None:
    node = {"metadata": {"name": "n1", "labels": {"node-role.kubernetes.io/control-plane": ""}},
            "spec": {"unschedulable": True}}
    with served.http() as http:
        created = http.post("/api/v1/nodes", json=node).json()
        status = {"conditions": [{"type": "Ready", "status": "True"}], "nodeInfo": {"kubeletVersion": "v1.32.0"}}
        http.put("/api/v1/nodes/n1/status", json=dict(created, status=status)).raise_for_status()
    table = _table(served, "/api/v1/nodes")
    assert _names(table)[:5] == ["Name", "Status", "Roles", "Age", "Version"]
    assert table["rows"][0]["cells"][:5] == ["n1", "Ready,SchedulingDisabled", "control-plane", "0s", "v1.32.0"]


def test_pdb_deployment_and_namespace_columns(served: Served) -> None:
    pdb = {"metadata": {"name": "b"}, "spec": {"maxUnavailable": "50%", "selector": {"matchLabels": {"a": "b"}}}}
    deployment = {"metadata": {"name": "web"}, "spec": {
        "replicas": 3, "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "i:1"}]}},
    }}
    with served.http() as http:
        http.post("/apis/policy/v1/namespaces/default/poddisruptionbudgets", json=pdb).raise_for_status()
        http.post("/apis/apps/v1/namespaces/default/deployments", json=deployment).raise_for_status()
    pdbs = _table(served, "/apis/policy/v1/namespaces/default/poddisruptionbudgets")
    deployments = _table(served, "/apis/apps/v1/namespaces/default/deployments")
    namespaces = _table(served, "/api/v1/namespaces")
    assert _names(pdbs) == ["Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"]
    assert pdbs["rows"][0]["cells"] == ["b", "N/A", "50%", 0, "0s"]
    assert _names(deployments)[:5] == ["Name", "Ready", "Up-to-date", "Available", "Age"]
    assert deployments["rows"][0]["cells"] == ["web", "0/3", 0, 0, "0s", "c", "i:1", "app=web"]
    assert _names(namespaces) == ["Name", "Status", "Age"]
    assert ["default", "Active", "0s"] in [r["cells"] for r in namespaces["rows"]]


def test_crd_printer_columns_fill_custom_resource_rows(served: Served) -> None:
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"},
              "spec": {"size": 3, "note": "hi"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    with served.http() as http:
        http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=CRD).raise_for_status()
        http.post("/apis/example.com/v1/namespaces/default/widgets", json=widget).raise_for_status()
    table = _table(served, "/apis/example.com/v1/namespaces/default/widgets")
    assert _names(table) == ["Name", "Size", "Ready", "Note"]
    assert [c["priority"] for c in table["columnDefinitions"]] == [0, 0, 0, 1]
    assert table["rows"][0]["cells"] == ["w1", 3, "True", "hi"]


def test_kinds_without_printer_show_name_and_created_at(served: Served) -> None:
    with served.http() as http:
        http.post(f"{NS}/configmaps", json={"metadata": {"name": "c"}}).raise_for_status()
    table = _table(served, f"{NS}/configmaps/c", includeObject="Object")
    assert [(c["name"], c["type"]) for c in table["columnDefinitions"]] == [("Name", "string"), ("Created At", "date")]
    assert table["rows"][0]["cells"] == ["c", "2026-01-01T00:00:00Z"]
    assert table["rows"][0]["object"]["kind"] == "ConfigMap"


def test_objects_are_returned_when_no_table_is_asked_for(served: Served) -> None:
    with served.http() as http:
        listed = http.get("/api/v1/namespaces", headers={"Accept": "application/json"}).json()
        bad = http.get("/api/v1/namespaces", headers=TABLE, params={"includeObject": "Everything"})
    assert listed["kind"] == "NamespaceList"
    assert bad.status_code == 400


AGES = [
    ("zero", 0, "0s"), ("under-two-minutes", 119, "119s"), ("minutes-seconds", 200, "3m20s"), ("minutes", 600, "10m"),
    ("hours-minutes", 3 * 3600 + 120, "3h2m"), ("hours", 20 * 3600, "20h"),
    ("days-hours", 3 * 86400 + 4 * 3600, "3d4h"), ("days", 30 * 86400, "30d"), ("years", 3 * 365 * 86400, "3y"),
]


@pytest.mark.parametrize("case,seconds,text", AGES, ids=[case for case, _, _ in AGES])
def test_ages_are_printed_as_kubectl_prints_durations(case: str, seconds: int, text: str) -> None:
    assert columns.human_duration(seconds) == text


def test_a_terminating_pod_shows_terminating() -> None:
    pod = {"metadata": {"name": "p", "creationTimestamp": "2026-01-01T00:00:00Z",
                        "deletionTimestamp": "2026-01-01T00:00:30Z"},
           "spec": {"containers": [{"name": "c"}]}, "status": {"phase": "Running"}}
    cells = columns.PRINTERS[("", "Pod")].cells(pod, EPOCH + 60)
    assert cells[2] == "Terminating" and cells[4] == "60s"


def test_printer_column_paths_support_filters_and_escaped_keys() -> None:
    obj = {"metadata": {"labels": {"cluster.x-k8s.io/cluster-name": "c1"}},
           "status": {"conditions": [{"type": "A", "status": "False"}, {"type": "Ready", "status": "True"}]}}
    assert jsonpath.find('.status.conditions[?(@.type=="Ready")].status', obj) == ["True"]
    assert jsonpath.find(".metadata.labels.cluster\\.x-k8s\\.io/cluster-name", obj) == ["c1"]
    assert jsonpath.find(".metadata.labels['cluster.x-k8s.io/cluster-name']", obj) == ["c1"]
    assert jsonpath.find(".status.conditions[*].type", obj) == ["A", "Ready"]
    assert jsonpath.find("..type", obj) == []
