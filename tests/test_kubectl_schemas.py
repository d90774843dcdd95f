"""kubectl v1.32 and the schemas: every built-in resource in ``api-resources``, ``explain`` from
``/openapi/v3``, and a manifest with a typo refused as a real cluster refuses it (kubectl sends
``fieldValidation=Strict``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from test_http_fixtures import Served, serving

from tests.manifests import example_crd

# What `kubectl api-resources` lists on a kind 1.32 cluster (digest §1), minus the resources only a
# real node or the token authenticator answers (componentstatuses, tokenreviews).
EXPECTED_RESOURCES = {
    "bindings", "configmaps", "endpoints", "events", "limitranges", "namespaces", "nodes", "persistentvolumeclaims",
    "persistentvolumes", "pods", "podtemplates", "replicationcontrollers", "resourcequotas", "secrets",
    "serviceaccounts", "services", "mutatingwebhookconfigurations", "validatingadmissionpolicies",
    "validatingadmissionpolicybindings", "validatingwebhookconfigurations", "customresourcedefinitions",
    "apiservices", "controllerrevisions", "daemonsets", "deployments", "replicasets", "statefulsets",
    "horizontalpodautoscalers", "cronjobs", "jobs", "certificatesigningrequests", "leases", "endpointslices",
    "flowschemas", "prioritylevelconfigurations", "ingressclasses", "ingresses", "networkpolicies", "runtimeclasses",
    "poddisruptionbudgets", "clusterrolebindings", "clusterroles", "rolebindings", "roles", "priorityclasses",
    "csidrivers", "csinodes", "csistoragecapacities", "storageclasses", "volumeattachments",
    "selfsubjectaccessreviews", "subjectaccessreviews", "localsubjectaccessreviews", "selfsubjectrulesreviews",
    "selfsubjectreviews",
}
TYPO = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: typo, namespace: default}
dta: {a: b}
"""
ROLE = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: "reader:pods", namespace: default}
rules:
- {apiGroups: [""], resources: [pods], verbs: [get, list]}
"""


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    yield from serving(tmp_path, simulators=[])


def test_api_resources_lists_every_built_in_resource(served: Served) -> None:
    lines = served.kubectl("api-resources", "--no-headers").stdout.splitlines()
    rows = {line.split()[0]: line for line in lines}
    assert set(rows) >= EXPECTED_RESOURCES, sorted(EXPECTED_RESOURCES - set(rows))
    assert " rc " in rows["replicationcontrollers"] and " hpa " in rows["horizontalpodautoscalers"]
    assert "rbac.authorization.k8s.io/v1" in rows["roles"] and "autoscaling/v2" in rows["horizontalpodautoscalers"]


def test_explain_reads_the_schemas(served: Served) -> None:
    pod_spec = served.kubectl("explain", "pods.spec").stdout
    assert "KIND:       Pod" in pod_spec and "FIELD: spec <PodSpec>" in pod_spec
    assert "containers\t<[]Container> -required-" in pod_spec
    deployment = served.kubectl("explain", "deployment").stdout
    assert "GROUP:      apps" in deployment and "Deployment enables declarative updates" in deployment
    replicas = served.kubectl("explain", "deployment.spec.replicas").stdout
    assert "FIELD: replicas <integer>" in replicas


def test_apply_of_a_manifest_with_a_typo_fails_as_on_a_real_cluster(served: Served) -> None:
    result = served.kubectl("apply", "-f", "-", stdin=TYPO, check=False)
    assert result.returncode != 0
    assert 'strict decoding error: unknown field "dta"' in result.stderr
    assert served.kubectl("get", "configmaps", "-n", "default", "-o", "name").stdout.strip() == ""
    # --validate=false sends Ignore: the typo is pruned, the ConfigMap created without it.
    served.kubectl("apply", "--validate=false", "-f", "-", stdin=TYPO)
    created = served.kubectl_json("get", "configmap", "typo", "-n", "default")
    assert "dta" not in created and "data" not in created


def test_rbac_objects_are_stored_and_listed(served: Served) -> None:
    assert "role.rbac.authorization.k8s.io/reader:pods created" in served.kubectl("apply", "-f", "-",
                                                                                stdin=ROLE).stdout
    listed = served.kubectl_json("get", "roles", "-n", "default")
    assert [item["metadata"]["name"] for item in listed["items"]] == ["reader:pods"]
    assert listed["items"][0]["rules"][0]["verbs"] == ["get", "list"]


def test_auth_can_i_and_whoami_are_answered(served: Served) -> None:
    assert served.kubectl("auth", "can-i", "create", "deployments", "-n", "default").stdout.strip() == "yes"
    rules = served.kubectl("auth", "can-i", "--list", "-n", "default").stdout
    assert "*.*" in rules
    whoami = served.kubectl("auth", "whoami", "-o", "json", check=False)
    assert whoami.returncode == 0, whoami.stderr
    assert "system:masters" in whoami.stdout
    # Nothing was stored: the reviews cannot even be listed.
    assert served.kubectl("get", "selfsubjectaccessreviews", check=False).returncode != 0


WIDGET_CRD = example_crd("Widget", {"size": {"type": "integer", "description": "How big."}},
                         spec_description="What the widget should be.")


def test_explain_reads_a_custom_resource_schema_and_apply_prunes_by_it(served: Served) -> None:
    served.kubectl("apply", "-f", "-", stdin=WIDGET_CRD)
    explained = served.kubectl("explain", "widgets.spec").stdout
    assert "What the widget should be." in explained and "size\t<integer>" in explained
    typo = ("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1, namespace: default}\n"
            "spec: {size: 1, colr: red}\n")
    refused = served.kubectl("apply", "-f", "-", stdin=typo, check=False)
    assert refused.returncode != 0 and 'unknown field "spec.colr"' in refused.stderr
