"""Typed decoding of built-in kinds, pruning and ``fieldValidation``: each refused write is the
Status kube-apiserver 1.32 answers (code, reason, the Go decoder's message), stores nothing, and
the collection still lists afterwards."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_http_fixtures import Served, serving

from harness.apiserver import builtins, decoding
from harness.apiserver.resources import ResourceType
from harness.apiserver.server import APIServer
from harness.apiserver.subresources import scale
from harness.clock import VirtualClock
from harness.kube.errors import StatusError
from harness.kube.names.meta import MERGE_PATCH_CONTENT_TYPE
from tests.manifests import crd

CONTAINERS = [{"name": "c", "image": "i"}]
LABELS = {"app": "web"}


def _deployment(spec: dict[str, Any]) -> dict[str, Any]:
    full = {"replicas": 1, "selector": {"matchLabels": LABELS},
            "template": {"metadata": {"labels": LABELS}, "spec": {"containers": CONTAINERS}}}
    full.update(spec)
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": full}


def _unmarshal(kind: str, text: str) -> str:
    return f'{kind} in version "v1" cannot be handled as a {kind}: json: cannot unmarshal {text}'


# (resource, namespace, body, code, reason, message)
REFUSED_CREATES: list[tuple[str, ResourceType, str | None, dict[str, Any], int, str, str]] = [
    ("namespace-name-number", builtins.NAMESPACE, None, {"metadata": {"name": 5}}, 400, "BadRequest",
     _unmarshal("Namespace", "number into Go struct field ObjectMeta.metadata.name of type string")),
    ("namespace-name-bool", builtins.NAMESPACE, None, {"metadata": {"name": True}}, 400, "BadRequest",
     _unmarshal("Namespace", "bool into Go struct field ObjectMeta.metadata.name of type string")),
    ("pod-nodename-list", builtins.POD, "default",
     {"metadata": {"name": "p"}, "spec": {"nodeName": ["n"], "containers": CONTAINERS}}, 400, "BadRequest",
     _unmarshal("Pod", "array into Go struct field PodSpec.spec.nodeName of type string")),
    ("api-version-list", builtins.CONFIG_MAP, "default", {"apiVersion": ["v1"], "metadata": {"name": "c"}}, 400,
     "BadRequest",
     "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse "
     'error: json: cannot unmarshal array into Go struct field .apiVersion of type string ({"apiVersion":["v1"],'
     '"metadata ...)'),
    ("generate-name-number", builtins.CONFIG_MAP, "default", {"metadata": {"generateName": 7}}, 400, "BadRequest",
     _unmarshal("ConfigMap", "number into Go struct field ObjectMeta.metadata.generateName of type string")),
    ("labels-not-a-map", builtins.CONFIG_MAP, "default", {"metadata": {"name": "c", "labels": ["a"]}}, 400,
     "BadRequest",
     _unmarshal("ConfigMap", "array into Go struct field ObjectMeta.metadata.labels of type map[string]string")),
    ("label-value-not-a-string", builtins.CONFIG_MAP, "default", {"metadata": {"name": "c", "labels": {"a": 1}}},
     400, "BadRequest",
     _unmarshal("ConfigMap", "number into Go struct field ObjectMeta.metadata.labels of type string")),
    ("annotations-not-a-map", builtins.CONFIG_MAP, "default", {"metadata": {"name": "c", "annotations": "x"}}, 400,
     "BadRequest",
     _unmarshal("ConfigMap", "string into Go struct field ObjectMeta.metadata.annotations of type map[string]string")),
    ("resource-version-number", builtins.CONFIG_MAP, "default", {"metadata": {"name": "c", "resourceVersion": 3}},
     400, "BadRequest",
     _unmarshal("ConfigMap", "number into Go struct field ObjectMeta.metadata.resourceVersion of type string")),
    ("data-value-number", builtins.CONFIG_MAP, "default", {"metadata": {"name": "c"}, "data": {"k": 1}}, 400,
     "BadRequest", _unmarshal("ConfigMap", "number into Go struct field ConfigMap.data of type string")),
    ("fractional-replicas", builtins.DEPLOYMENT, "default", _deployment({"replicas": 1.5}), 400, "BadRequest",
     'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal number 1.5 into Go '
     "struct field DeploymentSpec.spec.replicas of type int32"),
    ("replicas-out-of-range", builtins.DEPLOYMENT, "default", _deployment({"replicas": 99999999999}), 400,
     "BadRequest",
     'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal number 99999999999 '
     "into Go struct field DeploymentSpec.spec.replicas of type int32"),
    ("container-args-number", builtins.POD, "default",
     {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i", "args": [1]}]}}, 400,
     "BadRequest", _unmarshal("Pod", "number into Go struct field Container.spec.containers.args of type string")),
    ("negative-replicas", builtins.DEPLOYMENT, "default", _deployment({"replicas": -1}), 422, "Invalid",
     'Deployment.apps "d" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0'),
    ("template-null", builtins.DEPLOYMENT, "default", _deployment({"template": None}), 422, "Invalid",
     'Deployment.apps "d" is invalid: [spec.template.metadata.labels: Invalid value: map[string]string(nil): '
     "`selector` does not match template `labels`, spec.template.spec.containers: Required value]"),
]


@pytest.fixture
def server() -> APIServer:
    return APIServer("test", VirtualClock())


def _refused(call: Any) -> StatusError:
    with pytest.raises(StatusError) as caught:
        call()
    return caught.value


def _names(server: APIServer, rt: ResourceType, namespace: str | None) -> list[str]:
    return [item["metadata"]["name"] for item in server.list(rt, namespace)["items"]]


@pytest.mark.parametrize(("case", "rt", "namespace", "body", "code", "reason", "message"), REFUSED_CREATES,
                         ids=[c[0] for c in REFUSED_CREATES])
def test_a_wrongly_typed_create_is_refused_and_stores_nothing(
    server: APIServer, case: str, rt: ResourceType, namespace: str | None, body: dict[str, Any], code: int,
    reason: str, message: str,
) -> None:
    before = _names(server, rt, namespace)
    rv = server.store._rv
    err = _refused(lambda: server.create(rt, namespace, body))
    assert (err.code, err.reason, err.message) == (code, reason, message)
    assert _names(server, rt, namespace) == before
    assert server.store._rv == rv


@pytest.mark.parametrize(("status", "message"), [
    (5, "number into Go struct field Pod.status of type v1.PodStatus"),
    ({"conditions": "x"}, "string into Go struct field PodStatus.status.conditions of type []v1.PodCondition"),
    ({"containerStatuses": [1]},
     "number into Go struct field PodStatus.status.containerStatuses of type v1.ContainerStatus"),
])
def test_a_status_merge_patch_is_decoded_on_its_result(server: APIServer, status: Any, message: str) -> None:
    server.create(builtins.POD, "default", {"metadata": {"name": "p"}, "spec": {"containers": CONTAINERS}})
    stored = server.get(builtins.POD, "default", "p")
    err = _refused(lambda: server.patch(builtins.POD, "default", "p", {"status": status}, MERGE_PATCH_CONTENT_TYPE,
                                        subresource="status"))
    assert (err.code, err.reason) == (422, "Invalid")
    assert err.message.startswith(' "" is invalid: patch: Invalid value: "{')
    assert err.message.endswith(f'": json: cannot unmarshal {message}')
    assert err.details["causes"][0]["field"] == "patch"
    assert server.get(builtins.POD, "default", "p") == stored
    assert _names(server, builtins.POD, "default") == ["p"]


def test_unknown_fields_are_pruned_and_warned_about_by_default(server: APIServer) -> None:
    body = {"metadata": {"name": "p", "bogus": 1},
            "spec": {"bogus": 2, "containers": [{"name": "c", "image": "i", "imagePullPolicyy": "x"}]}}
    with decoding.request_scope("") as scope:
        created = server.create(builtins.POD, "default", body)
    assert scope.warnings == ['unknown field "metadata.bogus"', 'unknown field "spec.bogus"',
                              'unknown field "spec.containers[0].imagePullPolicyy"']
    assert "bogus" not in created["metadata"] and "bogus" not in created["spec"]
    assert "imagePullPolicyy" not in server.get(builtins.POD, "default", "p")["spec"]["containers"][0]


def test_ignore_prunes_silently(server: APIServer) -> None:
    with decoding.request_scope("Ignore", b'{"metadata":{"name":"a","name":"c"},"x":1}') as scope:
        created = server.create(builtins.CONFIG_MAP, "default", {"metadata": {"name": "c"}, "x": 1})
    assert scope.warnings == []
    assert "x" not in created


def test_strict_refuses_unknown_and_duplicate_fields(server: APIServer) -> None:
    raw = b'{"metadata":{"name":"a","name":"c"},"spec":{"bogus":1}}'
    with decoding.request_scope("Strict", raw):
        err = _refused(lambda: server.create(builtins.DEPLOYMENT, "default", {**_deployment({"bogus": 1})}))
    assert (err.code, err.reason, err.message) == (
        400, "BadRequest",
        'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field '
        '"spec.bogus", duplicate field "metadata.name"',
    )
    assert _names(server, builtins.DEPLOYMENT, "default") == []


def test_strict_refuses_an_unknown_field_in_a_patch_result_with_422(server: APIServer) -> None:
    server.create(builtins.CONFIG_MAP, "default", {"metadata": {"name": "c"}})
    with decoding.request_scope("Strict"):
        err = _refused(lambda: server.patch(builtins.CONFIG_MAP, "default", "c", {"bogus": 1},
                                            MERGE_PATCH_CONTENT_TYPE))
    assert (err.code, err.reason) == (422, "Invalid")
    assert err.message.endswith('": strict decoding error: unknown field "bogus"')


def test_a_custom_resource_metadata_is_decoded_as_object_meta(server: APIServer) -> None:
    server.create(builtins.CUSTOM_RESOURCE_DEFINITION, None,
                  crd("Widget", spec_properties={"size": {"type": "integer"}}))
    rt = server.registry.by_plural("example.com", "v1", "widgets")
    err = _refused(lambda: server.create(rt, "default", {"metadata": {"name": 5}}))
    assert (err.code, err.reason, err.message) == (
        400, "BadRequest",
        'Widget in version "v1" cannot be handled as a Widget: json: cannot unmarshal number into Go struct field '
        "ObjectMeta.name of type string",
    )
    with decoding.request_scope("") as scope:
        created = server.create(rt, "default", {"metadata": {"name": "w", "bogus": 1},
                                                "spec": {"size": 1, "colour": "red"}, "extra": True})
    assert created["spec"] == {"size": 1}
    assert "extra" not in created and "bogus" not in created["metadata"]
    assert scope.warnings == ['unknown field "metadata.bogus"', 'unknown field "spec.colour"',
                              'unknown field "extra"']


def test_custom_resource_pruning_keeps_preserved_and_embedded_fields() -> None:
    schema = {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "map": {"type": "object", "additionalProperties": {"type": "object", "properties": {"a": {}}}},
            "port": {"x-kubernetes-int-or-string": True},
            "items": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "string"}}}},
            "embedded": {"type": "object", "x-kubernetes-embedded-resource": True,
                         "properties": {"spec": {"type": "object"}}},
        }}}}
    obj = {"apiVersion": "example.com/v1", "kind": "W", "metadata": {"name": "w"},
           "spec": {"free": {"anything": {"deep": 1}}, "map": {"k": {"a": 1, "b": 2}}, "port": "http",
                    "items": [{"n": "x", "drop": 1}],
                    "embedded": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "junk": 1},
                                 "spec": {}, "other": 1}}}
    pruned, unknown = decoding.prune_custom(obj, schema)
    assert pruned["spec"]["free"] == {"anything": {"deep": 1}}
    assert pruned["spec"]["map"] == {"k": {"a": 1}}
    assert pruned["spec"]["port"] == "http"
    assert pruned["spec"]["items"] == [{"n": "x"}]
    assert pruned["spec"]["embedded"] == {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}}
    assert unknown == ["spec.map.k.b", "spec.items[0].drop", "spec.embedded.metadata.junk", "spec.embedded.other"]


# -- over HTTP -------------------------------------------------------------------------------------

NS = "/api/v1/namespaces"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    yield from serving(tmp_path, simulators=[])


def test_over_http_a_numeric_namespace_name_is_a_400_and_namespaces_still_list(served: Served) -> None:
    with served.http() as http:
        before = http.get(NS).json()["items"]
        answer = http.post(NS, json={"metadata": {"name": 5}})
        assert answer.status_code == 400
        body = answer.json()
        assert (body["kind"], body["reason"], body["message"]) == (
            "Status", "BadRequest",
            _unmarshal("Namespace", "number into Go struct field ObjectMeta.metadata.name of type string"),
        )
        listed = http.get(NS)
        assert listed.status_code == 200
        assert listed.json()["items"] == before


def test_over_http_warn_sends_one_warning_header_per_unknown_field(served: Served) -> None:
    with served.http() as http:
        answer = http.post(f"{NS}/default/configmaps", json={"metadata": {"name": "c"}, "bogus": 1,
                                                             "data": {"a": "b"}})
        assert answer.status_code == 201, answer.text
        assert answer.headers.get_list("warning") == ['299 - "unknown field \\"bogus\\""']
        assert "bogus" not in answer.json()


def test_over_http_strict_refuses_a_duplicate_field(served: Served) -> None:
    raw = b'{"metadata":{"name":"c","name":"d"}}'
    with served.http() as http:
        answer = http.post(f"{NS}/default/configmaps", content=raw, params={"fieldValidation": "Strict"},
                           headers={"Content-Type": "application/json"})
        assert answer.status_code == 400
        assert answer.json()["message"] == (
            'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field '
            '"metadata.name"'
        )
        assert http.get(f"{NS}/default/configmaps").json()["items"] == []


def test_over_http_an_unsupported_field_validation_is_a_422(served: Served) -> None:
    with served.http() as http:
        answer = http.post(f"{NS}/default/configmaps", json={"metadata": {"name": "c"}},
                           params={"fieldValidation": "x"})
        assert answer.status_code == 422
        assert answer.json()["message"] == (
            'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "x": supported values: '
            '"", "Ignore", "Strict", "Warn"'
        )


def test_over_http_a_status_patch_with_a_wrong_type_is_a_422_and_pods_still_list(served: Served) -> None:
    with served.http() as http:
        http.post(f"{NS}/default/pods", json={"metadata": {"name": "p"}, "spec": {"containers": CONTAINERS}})
        answer = http.patch(f"{NS}/default/pods/p/status", content=json.dumps({"status": 5}),
                            headers={"Content-Type": "application/merge-patch+json"})
        assert answer.status_code == 422
        assert answer.json()["message"].endswith(
            '": json: cannot unmarshal number into Go struct field Pod.status of type v1.PodStatus')
        listed = http.get(f"{NS}/default/pods")
        assert listed.status_code == 200
        assert [p["metadata"]["name"] for p in listed.json()["items"]] == ["p"]


def test_null_drops_an_optional_field_but_keeps_a_zero_time() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": None},
           "spec": {"nodeName": None, "containers": CONTAINERS},
           "status": {"conditions": [{"type": "Ready", "status": "True", "lastProbeTime": None}]}}
    decoded, unknown = decoding.decode_builtin("v1", "Pod", pod)
    assert unknown == []
    assert decoded["metadata"] == {"name": "p"} and "nodeName" not in decoded["spec"]
    assert decoded["status"]["conditions"] == [{"type": "Ready", "status": "True", "lastProbeTime": None}]


def test_over_http_a_list_api_version_quotes_the_body_as_sent(served: Served) -> None:
    raw = b'{"apiVersion": ["v1"], "kind": "ConfigMap", "metadata": {"name": "c"}}'
    with served.http() as http:
        answer = http.post(f"{NS}/default/configmaps", content=raw, headers={"Content-Type": "application/json"})
    assert answer.status_code == 400
    assert answer.json()["message"] == (
        "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse "
        'error: json: cannot unmarshal array into Go struct field .apiVersion of type string ({"apiVersion": '
        '["v1"], "kind": ...)'
    )


def test_a_summary_is_hex_for_a_body_that_is_not_a_json_object() -> None:
    assert decoding.summarize(b"") == "<empty>"
    assert decoding.summarize(b"apiVersion: v1") == b"apiVersion: v1".hex()
    assert decoding.summarize(b"x" * 31) == "78" * 30 + " ..."


def test_a_scale_with_a_string_replica_count_is_the_decoders_400(server: APIServer) -> None:
    server.create(builtins.DEPLOYMENT, "default", _deployment({}))
    err = _refused(lambda: scale.update_scale(server, builtins.DEPLOYMENT, "default", "d", {"spec": {"replicas": "x"}}))
    assert (err.code, err.message) == (
        400, 'Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal string into Go struct field '
             "ScaleSpec.spec.replicas of type int32",
    )
    assert server.get(builtins.DEPLOYMENT, "default", "d")["spec"]["replicas"] == 1


def _containers(value: Any) -> list[int]:
    """The ids of every dict and list in ``value``."""
    if isinstance(value, dict):
        return [id(value)] + [i for item in value.values() for i in _containers(item)]
    if isinstance(value, list):
        return [id(value)] + [i for item in value for i in _containers(item)]
    return []


@pytest.mark.parametrize(("rt", "body"), [
    (builtins.CONTROLLER_REVISION,  # ``data`` is a RawExtension: kept as it came, not walked by type
     {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "r", "labels": {"a": "b"}},
      "data": {"spec": {"template": {"x": [1, {"y": 2}]}}}, "revision": 1}),
    (builtins.POD,
     {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "annotations": {"k": "v"}},
      "spec": {"containers": [{"name": "c", "image": "i", "args": ["a"]}]}}),
])
def test_a_decoded_body_shares_nothing_with_the_request(rt: ResourceType, body: dict[str, Any]) -> None:
    # The write path stores the decoded body without copying it again: a caller that changes its
    # own dict afterwards must not change what was stored.
    decoded = decoding.decode(rt, body)
    assert decoded == body
    assert not set(_containers(decoded)) & set(_containers(body))


def test_a_stored_object_does_not_change_with_the_creators_dict(server: APIServer) -> None:
    body = {"metadata": {"name": "r"}, "data": {"spec": {"x": [1]}}, "revision": 1}
    server.create(builtins.CONTROLLER_REVISION, "default", body)
    body["data"]["spec"]["x"].append(2)
    body["data"]["spec"]["y"] = True
    stored = server.get(builtins.CONTROLLER_REVISION, "default", "r")
    assert stored["data"] == {"spec": {"x": [1]}}


def _pod_for_status(server: APIServer) -> dict[str, Any]:
    server.create(builtins.POD, "default", {"metadata": {"name": "p"}, "spec": {"containers": CONTAINERS}})
    return server.get(builtins.POD, "default", "p")


def test_a_status_write_repeating_the_stored_object_decodes_only_what_differs(server: APIServer) -> None:
    # The parts of a status write's body equal to the stored object are not decoded again; what
    # differs (a wrong type, an unknown field) is still refused or warned about as upstream does.
    pod = _pod_for_status(server)
    pod["status"] = {"phase": "Running"}
    with decoding.request_scope("") as scope:
        updated = server.update(builtins.POD, "default", "p", pod, subresource="status")
    assert scope.warnings == []
    assert updated["status"]["phase"] == "Running" and updated["spec"] == pod["spec"]

    pod = server.get(builtins.POD, "default", "p")
    pod["spec"]["bogus"] = 1
    with decoding.request_scope("") as scope:
        server.update(builtins.POD, "default", "p", pod, subresource="status")
    assert scope.warnings == ['unknown field "spec.bogus"']

    pod = server.get(builtins.POD, "default", "p")
    pod["spec"]["terminationGracePeriodSeconds"] = 30.5
    err = _refused(lambda: server.update(builtins.POD, "default", "p", pod, subresource="status"))
    assert (err.code, err.reason) == (400, "BadRequest")
    assert "cannot unmarshal number 30.5" in err.message


def test_a_status_write_does_not_change_the_stored_version_it_replaces(server: APIServer) -> None:
    # The new version shares the unchanged parts of the stored one (nothing changes a stored
    # object in place): each audit record keeps the versions as they were written.
    pod = _pod_for_status(server)
    pod["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    server.update(builtins.POD, "default", "p", pod, subresource="status")
    pod = server.get(builtins.POD, "default", "p")
    pod["status"]["phase"] = "Succeeded"
    pod["metadata"]["labels"] = {"ignored": "by-a-status-write"}
    server.update(builtins.POD, "default", "p", pod, subresource="status")
    stored = server.get(builtins.POD, "default", "p")
    assert stored["status"]["phase"] == "Succeeded" and "labels" not in stored["metadata"]
    first, second = [r for r in server.audit if r.subresource == "status"]
    assert first.old is not None and first.new is not None and second.old is first.new
    assert first.old["status"].get("phase") != "Running"
    assert first.new["status"]["phase"] == "Running" and second.new["status"]["phase"] == "Succeeded"
    assert first.new["metadata"]["resourceVersion"] != second.new["metadata"]["resourceVersion"]
    assert first.old["spec"] == second.new["spec"]


def _pod_with_spec(spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


def test_a_pod_spec_decoded_again_is_a_fresh_equal_copy() -> None:
    # A workload's Pods share their template's spec: the decoded spec is remembered, each write
    # gets its own copy of it (which the server then defaults and stores).
    spec = {"containers": [{"name": "c", "image": "i", "env": [{"name": "A", "value": "1"}],
                            "ports": [{"containerPort": 80}]}], "terminationGracePeriodSeconds": 30}
    first = decoding.decode(builtins.POD, _pod_with_spec(spec))
    first["spec"]["containers"][0]["env"].append({"name": "B"})
    first["spec"]["nodeName"] = "n"
    second = decoding.decode(builtins.POD, _pod_with_spec(json.loads(json.dumps(spec))))
    assert second["spec"] == spec
    assert not set(_containers(second)) & set(_containers(first))


@pytest.mark.parametrize(("again", "message"), [
    ({"containers": [{"name": "c", "image": "i"}], "terminationGracePeriodSeconds": 30.0},
     "json: cannot unmarshal number 30.0 into Go struct field PodSpec.spec.terminationGracePeriodSeconds of type "
     "int64"),
    ({"containers": [{"name": "c", "image": "i"}], "terminationGracePeriodSeconds": True},
     "json: cannot unmarshal bool into Go struct field PodSpec.spec.terminationGracePeriodSeconds of type int64"),
    ({"containers": ({"name": "c", "image": "i"},), "terminationGracePeriodSeconds": 30},
     "json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type []v1.Container"),
])
def test_a_pod_spec_like_a_decoded_one_is_still_refused_for_its_own_types(again: Any, message: str) -> None:
    # 30, 30.0 and true are equal in Python, a tuple prints as the list it is not: none of them is
    # taken for the spec decoded before.
    decoding.decode(builtins.POD, _pod_with_spec({"containers": [{"name": "c", "image": "i"}],
                                                  "terminationGracePeriodSeconds": 30}))
    with pytest.raises(StatusError) as refused:
        decoding.decode(builtins.POD, _pod_with_spec(again))
    assert refused.value.code == 400
    assert refused.value.status["message"].endswith(message)


def test_an_unknown_field_in_a_pod_spec_is_reported_at_every_write() -> None:
    spec = {"containers": [{"name": "c", "image": "i", "bogus": 1}]}
    for _ in range(2):
        with decoding.request_scope() as scope:
            decoded = decoding.decode(builtins.POD, _pod_with_spec(json.loads(json.dumps(spec))))
        assert scope.warnings == ['unknown field "spec.containers[0].bogus"']
        assert decoded["spec"] == {"containers": [{"name": "c", "image": "i"}]}


def _pod_with_conditions(conditions: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "status": {"conditions": conditions}}


CONDITIONS = [{"type": "Ready", "status": "True", "lastProbeTime": None, "lastTransitionTime": "2026-01-01T00:00:00Z"},
              {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}]


def test_a_conditions_list_decoded_again_is_a_fresh_equal_copy() -> None:
    # Every Pod a kubelet starts at one instant writes the same conditions: the decoded list is
    # remembered, each write gets its own copy (a null probe time kept, as decoding it keeps it).
    first = decoding.decode(builtins.POD, _pod_with_conditions(CONDITIONS))
    first["status"]["conditions"][0]["status"] = "False"
    first["status"]["conditions"].append({"type": "Initialized"})
    second = decoding.decode(builtins.POD, _pod_with_conditions(json.loads(json.dumps(CONDITIONS))))
    assert second["status"]["conditions"] == CONDITIONS
    assert not set(_containers(second)) & set(_containers(first))


@pytest.mark.parametrize(("again", "message"), [
    ([{"type": "Ready", "status": True}],
     "json: cannot unmarshal bool into Go struct field PodCondition.status.conditions.status of type string"),
    (({"type": "Ready", "status": "True"},),
     "json: cannot unmarshal object into Go struct field PodStatus.status.conditions of type []v1.PodCondition"),
    ([{"type": "Ready", "status": "True", "lastTransitionTime": "yesterday"}],
     'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"'),
])
def test_a_conditions_list_like_a_decoded_one_is_still_refused_for_its_own_types(again: Any, message: str) -> None:
    decoding.decode(builtins.POD, _pod_with_conditions([{"type": "Ready", "status": "True"}]))
    with pytest.raises(StatusError) as refused:
        decoding.decode(builtins.POD, _pod_with_conditions(again))
    assert refused.value.status["message"].endswith(message)


def test_a_budgets_condition_with_a_fractional_generation_is_refused_after_a_whole_one() -> None:
    # 1 and 1.0 are equal in Python; the remembered list with 1 does not stand for one with 1.0.
    def budget(generation: Any) -> dict[str, Any]:
        return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "b"},
                "status": {"conditions": [{"type": "DisruptionAllowed", "status": "True", "reason": "SufficientPods",
                                           "message": "", "observedGeneration": generation,
                                           "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}
    decoded = decoding.decode(builtins.POD_DISRUPTION_BUDGET, budget(1))
    assert decoded["status"]["conditions"][0]["observedGeneration"] == 1
    with pytest.raises(StatusError) as refused:
        decoding.decode(builtins.POD_DISRUPTION_BUDGET, budget(1.0))
    assert refused.value.status["message"].endswith(
        "json: cannot unmarshal number 1.0 into Go struct field Condition.status.conditions.observedGeneration of "
        "type int64")


def test_an_unknown_field_in_a_conditions_list_is_reported_at_every_write() -> None:
    conditions = [{"type": "Ready", "status": "True", "bogus": 1}]
    for _ in range(2):
        with decoding.request_scope() as scope:
            decoded = decoding.decode(builtins.POD, _pod_with_conditions(json.loads(json.dumps(conditions))))
        assert scope.warnings == ['unknown field "status.conditions[0].bogus"']
        assert decoded["status"]["conditions"] == [{"type": "Ready", "status": "True"}]


def test_a_status_write_sending_back_the_stored_parts_themselves_reuses_them(server: APIServer) -> None:
    # A writer that read the stored object and replaced only its status sends back the stored
    # metadata and spec themselves: they are taken as stored (the metadata as a copy of its own).
    _pod_for_status(server)
    stored = server.store.get(server.skey(builtins.POD), ("default", "p"))
    body = dict(stored)
    body["status"] = {"phase": "Running"}
    decoded = decoding.decode(builtins.POD, body, status_of=stored)
    assert decoded["spec"] is stored["spec"]
    assert decoded["metadata"] == stored["metadata"] and decoded["metadata"] is not stored["metadata"]
    assert decoded["status"] == {"phase": "Running"}
    assert list(decoded) == list(body)


def test_empty_structs_maps_and_lists_decode_to_empty_ones_of_their_own() -> None:
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {}, "finalizers": []},
            "spec": {"containers": [], "nodeSelector": {}, "securityContext": {}},
            "status": {"containerStatuses": [{"name": "c", "lastState": {}, "state": {}}]}}
    decoded = decoding.decode(builtins.POD, body)
    assert decoded == body
    assert not set(_containers(decoded)) & set(_containers(body))
    # A wrong type in an empty one's place is still refused.
    body["spec"]["securityContext"] = []
    with pytest.raises(StatusError) as refused:
        decoding.decode(builtins.POD, body)
    assert refused.value.status["message"].endswith(
        "json: cannot unmarshal array into Go struct field PodSpec.spec.securityContext of type v1.PodSecurityContext")


@pytest.mark.parametrize(("disrupted", "message"), [
    ({"web-0": "2026-01-01T00:00:00Z", "web-1": "2026-01-01T00:00:01.5+02:00"}, ""),
    ({"web-0": "2026-01-01T00:00:00Z", "web-1": None}, ""),
    ({"web-0": "2026-01-01T00:00:00Z", "web-1": "soon"},
     'parsing time "soon" as "2006-01-02T15:04:05Z07:00": cannot parse "soon" as "2006"'),
    ({"web-0": 5}, "json: cannot unmarshal number into Go struct field PodDisruptionBudgetStatus.status.disruptedPods "
                   "of type string"),
])
def test_a_budgets_disrupted_pods_are_times(disrupted: dict[str, Any], message: str) -> None:
    body = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "b"},
            "status": {"disruptedPods": disrupted, "disruptionsAllowed": 0}}
    if not message:
        decoded = decoding.decode(builtins.POD_DISRUPTION_BUDGET, body)
        assert decoded["status"]["disruptedPods"] == disrupted
        assert decoded["status"]["disruptedPods"] is not disrupted
        return
    with pytest.raises(StatusError) as refused:
        decoding.decode(builtins.POD_DISRUPTION_BUDGET, body)
    assert refused.value.status["message"].endswith(message)
