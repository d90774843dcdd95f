"""kubectl v1.32 against the facade: discovery, OpenAPI-backed apply, Tables, every patch type,
protobuf bodies from typed clients, and a drain that waits on the world's clock."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_http_fixtures import KUBECTL_TIMEOUT, Served, eventually, serving

from harness.world.world import World
from tests.manifests import demo_pod, example_crd

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
"""
CRD = example_crd("Widget", {"size": {"type": "integer"}}, short_names=["wd"],
                  printer_columns=[{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}])
WIDGET = """\
apiVersion: example.com/v1
kind: Widget
metadata: {name: w1, namespace: default}
spec: {size: 3}
"""
POD = demo_pod()
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"conditions": [{"type": "Ready", "status": "True"}], "nodeInfo": {"kubeletVersion": "v1.32.0"}}}


def _world(world: World) -> None:
    world.add_cluster("default/wc1")
    world.client().create(NODE)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    yield from serving(tmp_path, prepare=_world)


def test_version_reports_the_server_without_a_skew_warning(served: Served) -> None:
    result = served.kubectl("version")
    assert "Server Version: v1.32.0" in result.stdout
    assert "WARNING" not in result.stderr


def test_api_resources_lists_built_in_kinds_with_short_names(served: Served) -> None:
    rows = {line.split()[0]: line for line in served.kubectl("api-resources", "--no-headers").stdout.splitlines()}
    assert {"pods", "nodes", "poddisruptionbudgets", "deployments", "customresourcedefinitions"} <= set(rows)
    assert " po " in rows["pods"] and "policy/v1" in rows["poddisruptionbudgets"]


def test_apply_a_deployment_then_reapply_and_change_it(served: Served) -> None:
    assert "deployment.apps/web created" in served.kubectl("apply", "-f", "-", stdin=DEPLOYMENT).stdout
    assert "unchanged" in served.kubectl("apply", "-f", "-", stdin=DEPLOYMENT).stdout
    changed = DEPLOYMENT.replace("replicas: 2", "replicas: 4")
    assert "configured" in served.kubectl("apply", "-f", "-", stdin=changed).stdout
    deployment = served.kubectl_json("get", "deployment", "web")
    assert deployment["spec"]["replicas"] == 4 and deployment["metadata"]["generation"] == 2
    table = served.kubectl("get", "deployments").stdout.splitlines()
    assert table[0].split() == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]


def test_apply_a_crd_and_a_custom_resource_and_get_it_with_printer_columns(served: Served) -> None:
    served.kubectl("apply", "-f", "-", stdin=CRD)
    served.kubectl("wait", "--for", "condition=established", "crd/widgets.example.com", "--timeout=10s")
    assert "widget.example.com/w1 created" in served.kubectl("apply", "-f", "-", stdin=WIDGET).stdout
    table = served.kubectl("get", "wd").stdout.splitlines()
    # Explicit printer columns replace the default Age column, as upstream.
    assert table[0].split() == ["NAME", "SIZE"]
    assert table[1].split()[:2] == ["w1", "3"]
    rejected = served.kubectl("patch", "wd", "w1", "-p", '{"spec":{"size":4}}', check=False)
    assert rejected.returncode != 0 and "application/strategic-merge-patch+json is not supported" in rejected.stderr


def test_get_all_namespaces_shows_the_namespace_column_and_yaml_output(served: Served) -> None:
    served.kubectl("apply", "-f", "-", stdin=POD)
    lines = served.kubectl("get", "pods", "-A").stdout.splitlines()
    assert lines[0].split()[:3] == ["NAMESPACE", "NAME", "READY"]
    assert lines[1].split()[:2] == ["default", "p1"]
    yaml_text = served.kubectl("get", "pod", "p1", "-o", "yaml").stdout
    assert "kind: Pod" in yaml_text and "name: p1" in yaml_text


def test_label_annotate_and_every_patch_type(served: Served) -> None:
    served.kubectl("apply", "-f", "-", stdin=POD)
    served.kubectl("label", "pod", "p1", "tier=web")
    served.kubectl("annotate", "pod", "p1", "note=hello")
    served.kubectl("patch", "pod", "p1", "--type", "merge", "-p", '{"metadata":{"labels":{"merge":"yes"}}}')
    json_patch = '[{"op":"add","path":"/metadata/labels/json","value":"yes"}]'
    served.kubectl("patch", "pod", "p1", "--type", "json", "-p", json_patch)
    served.kubectl("patch", "pod", "p1", "--type", "strategic", "-p", '{"metadata":{"labels":{"smp":"yes"}}}')
    pod = served.kubectl_json("get", "pod", "p1")
    assert pod["metadata"]["labels"] == {"app": "demo", "tier": "web", "merge": "yes", "json": "yes", "smp": "yes"}
    assert pod["metadata"]["annotations"]["note"] == "hello"
    shown = served.kubectl("get", "pods", "--show-labels").stdout
    assert "tier=web" in shown


def test_delete_waits_until_the_last_finalizer_goes(served: Served) -> None:
    # kubectl delete watches the object by name and returns on its DELETED event, which comes
    # when another client removes the finalizer.
    held = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "held", "finalizers": ["example.com/hold"]}}
    served.kubectl("apply", "-f", "-", stdin=json.dumps(held))
    command = [*served.kubectl_command(), "delete", "configmap", "held", "--timeout=30s"]
    path = "/api/v1/namespaces/default/configmaps/held"
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as delete, \
            served.http() as http:
        assert eventually(lambda: "deletionTimestamp" in http.get(path).json()["metadata"], timeout=20)
        assert delete.poll() is None, "kubectl delete returned while the finalizer held the object"
        http.patch(path, json={"metadata": {"finalizers": None}},
                   headers={"Content-Type": "application/merge-patch+json"}).raise_for_status()
        out, err = delete.communicate(timeout=KUBECTL_TIMEOUT)
    assert delete.returncode == 0, err
    assert 'configmap "held" deleted' in out
    missing = served.kubectl("get", "configmap", "held", check=False)
    assert missing.returncode != 0 and 'configmaps "held" not found' in missing.stderr


def test_typed_creates_send_protobuf_bodies(served: Served) -> None:
    served.kubectl("create", "namespace", "team")
    served.kubectl("create", "configmap", "cm", "-n", "team", "--from-literal=a=b")
    served.kubectl("create", "secret", "generic", "s", "-n", "team", "--from-literal=x=y")
    served.kubectl("create", "pdb", "budget", "-n", "team", "--selector=app=x", "--min-available=1")
    assert served.kubectl_json("get", "configmap", "cm", "-n", "team")["data"] == {"a": "b"}
    assert served.kubectl_json("get", "secret", "s", "-n", "team")["data"] == {"x": "eQ=="}
    pdb = served.kubectl_json("get", "pdb", "budget", "-n", "team")
    assert pdb["spec"] == {"minAvailable": 1, "selector": {"matchLabels": {"app": "x"}}}


def test_cordon_and_uncordon_show_in_node_status(served: Served) -> None:
    served.kubectl("cordon", "n1")
    assert "Ready,SchedulingDisabled" in served.kubectl("get", "nodes").stdout
    served.kubectl("uncordon", "n1")
    assert "SchedulingDisabled" not in served.kubectl("get", "nodes").stdout


def test_contexts_reach_workload_clusters(served: Served) -> None:
    contexts = served.kubectl("config", "get-contexts", "-o", "name").stdout.split()
    assert sorted(contexts) == ["default/wc1", "management"]
    assert served.kubectl("config", "current-context").stdout.strip() == "management"
    served.kubectl("--context", "default/wc1", "create", "configmap", "only-here")
    # apply validates through the workload cluster's own OpenAPI documents (under its prefix).
    assert "created" in served.kubectl("--context", "default/wc1", "apply", "-f", "-", stdin=DEPLOYMENT).stdout
    assert "only-here" in served.kubectl("--context", "default/wc1", "get", "configmaps").stdout
    assert "only-here" not in served.kubectl("get", "configmaps").stdout


def test_drain_evicts_through_the_budget_and_finishes_when_the_clock_moves(served: Served) -> None:
    # The pod runs on n1 with a 30 s grace period; kubectl drain evicts it (a protobuf Eviction)
    # and polls until it is gone, which happens once the world's clock passes the grace period.
    served.kubectl("apply", "-f", "-", stdin=demo_pod(node_name="n1"))
    command = [*served.kubectl_command(), "drain", "n1", "--force", "--timeout=30s"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as drain:
        with served.http() as http:
            pod_path = "/api/v1/namespaces/default/pods/p1"
            evicted = eventually(lambda: "deletionTimestamp" in http.get(pod_path).json()["metadata"], timeout=20)
            assert evicted, "the pod was never evicted"
            http.post("/harness/v1/clock/advance", json={"seconds": 60}).raise_for_status()
        out, err = drain.communicate(timeout=KUBECTL_TIMEOUT)
    assert drain.returncode == 0, err
    assert "evicting pod default/p1" in err + out and "node/n1 drained" in out
    audit = served.http().get("/harness/v1/audit", params={"resource": "pods"}).json()["items"]
    assert any(r["subresource"] == "eviction" or r["verb"] == "delete" for r in audit)
    assert json.loads(served.kubectl("get", "pods", "-o", "json").stdout)["items"] == []
