"""Behaviour of the JSON, merge and strategic-merge patch functions (apiserver 1.32 semantics)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from harness.apiserver import patch
from harness.kube.errors import StatusError
from harness.kube.names.meta import (
    APPLY_PATCH_CONTENT_TYPE,
    JSON_PATCH_CONTENT_TYPE,
    MERGE_PATCH_CONTENT_TYPE,
    STRATEGIC_MERGE_PATCH_CONTENT_TYPE,
)

REJECTED = "the server rejected our request due to an error in our request"


def pod(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns", "resourceVersion": "7", "labels": {"app": "a", "tier": "web"}},
        "spec": {"containers": [{"name": "main", "image": "nginx"}], **spec},
    }


def node(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "spec": {}, "status": {}}
    base.update(fields)
    return base


def raises_status(code: int, fn: Any, *args: Any) -> StatusError:
    with pytest.raises(StatusError) as info:
        fn(*args)
    assert info.value.code == code, info.value.status
    return info.value


# ---------------------------------------------------------------------------------------------
# JSON patch
# ---------------------------------------------------------------------------------------------


def test_json_patch_add_remove_replace() -> None:
    result = patch.json_patch(
        pod(),
        [
            {"op": "add", "path": "/metadata/labels/new", "value": "x"},
            {"op": "remove", "path": "/metadata/labels/tier"},
            {"op": "replace", "path": "/spec/containers/0/image", "value": "busybox"},
        ],
    )
    assert result["metadata"]["labels"] == {"app": "a", "new": "x"}
    assert result["spec"]["containers"][0]["image"] == "busybox"


def test_json_patch_move_and_copy() -> None:
    result = patch.json_patch(
        pod(),
        [
            {"op": "copy", "from": "/metadata/labels/app", "path": "/metadata/labels/copied"},
            {"op": "move", "from": "/metadata/labels/tier", "path": "/metadata/annotations"},
        ],
    )
    assert result["metadata"]["labels"] == {"app": "a", "copied": "a"}
    assert result["metadata"]["annotations"] == "web"


def test_json_patch_does_not_mutate_input() -> None:
    original = pod()
    snapshot = copy.deepcopy(original)
    operations = [{"op": "add", "path": "/spec/containers/-", "value": {"name": "side"}}]
    ops_snapshot = copy.deepcopy(operations)
    result = patch.json_patch(original, operations)
    assert original == snapshot
    assert operations == ops_snapshot
    result["spec"]["containers"][1]["name"] = "changed"
    assert operations == ops_snapshot


def test_json_patch_pointer_escapes() -> None:
    doc = {"metadata": {"annotations": {"example.com/a~b": "1"}}}
    result = patch.json_patch(
        doc,
        [
            {"op": "replace", "path": "/metadata/annotations/example.com~1a~0b", "value": "2"},
            {"op": "add", "path": "/metadata/annotations/x~01", "value": "3"},
        ],
    )
    assert result["metadata"]["annotations"] == {"example.com/a~b": "2", "x~1": "3"}


def test_json_patch_dash_appends_and_index_inserts() -> None:
    doc = {"metadata": {"finalizers": ["a", "c"]}}
    result = patch.json_patch(
        doc,
        [
            {"op": "add", "path": "/metadata/finalizers/-", "value": "d"},
            {"op": "add", "path": "/metadata/finalizers/1", "value": "b"},
        ],
    )
    assert result["metadata"]["finalizers"] == ["a", "b", "c", "d"]


def test_json_patch_negative_index_counts_from_end() -> None:
    doc = {"metadata": {"finalizers": ["a", "b", "c"]}}
    result = patch.json_patch(doc, [{"op": "remove", "path": "/metadata/finalizers/-1"}])
    assert result["metadata"]["finalizers"] == ["a", "b"]


def test_json_patch_failed_test_is_422() -> None:
    ops = [
        {"op": "test", "path": "/metadata/resourceVersion", "value": "6"},
        {"op": "replace", "path": "/metadata/labels/app", "value": "b"},
    ]
    err = raises_status(422, patch.json_patch, pod(), ops)
    assert err.reason == "Invalid"
    assert err.message == REJECTED
    assert "details" not in err.status


def test_json_patch_passing_test_lets_the_rest_apply() -> None:
    ops = [
        {"op": "test", "path": "/metadata/resourceVersion", "value": "7"},
        {"op": "replace", "path": "/metadata/labels/app", "value": "b"},
    ]
    assert patch.json_patch(pod(), ops)["metadata"]["labels"]["app"] == "b"


def test_json_patch_test_null_matches_missing_key() -> None:
    assert patch.json_patch(pod(), [{"op": "test", "path": "/metadata/labels/absent", "value": None}])
    raises_status(422, patch.json_patch, pod(), [{"op": "test", "path": "/metadata/labels/absent", "value": "x"}])


def test_json_patch_test_distinguishes_bool_from_int() -> None:
    doc = {"spec": {"paused": True, "replicas": 1}}
    raises_status(422, patch.json_patch, doc, [{"op": "test", "path": "/spec/paused", "value": 1}])
    raises_status(422, patch.json_patch, doc, [{"op": "test", "path": "/spec/replicas", "value": True}])
    assert patch.json_patch(doc, [{"op": "test", "path": "/spec/replicas", "value": 1}]) == doc


def test_json_patch_test_compares_whole_subtrees() -> None:
    ops = [{"op": "test", "path": "/metadata/labels", "value": {"tier": "web", "app": "a"}}]
    assert patch.json_patch(pod(), ops)["metadata"]["labels"] == {"app": "a", "tier": "web"}


def test_json_patch_remove_missing_key_is_422() -> None:
    err = raises_status(422, patch.json_patch, pod(), [{"op": "remove", "path": "/metadata/labels/absent"}])
    assert err.message == REJECTED
    assert "nonexistent key" in str(err.__cause__)


def test_json_patch_replace_under_missing_parent_is_422() -> None:
    err = raises_status(422, patch.json_patch, pod(), [{"op": "replace", "path": "/spec/x/y", "value": 1}])
    assert "replace operation does not apply" in str(err.__cause__)


def test_json_patch_replace_of_missing_object_key_adds_it() -> None:
    # json-patch v4, which the apiserver uses, treats this replace as an add.
    result = patch.json_patch(pod(), [{"op": "replace", "path": "/metadata/labels/absent", "value": "x"}])
    assert result["metadata"]["labels"]["absent"] == "x"


def test_json_patch_replace_past_array_end_is_422() -> None:
    raises_status(422, patch.json_patch, pod(), [{"op": "replace", "path": "/spec/containers/5", "value": {}}])


def test_json_patch_unknown_op_is_422() -> None:
    err = raises_status(422, patch.json_patch, pod(), [{"op": "frobnicate", "path": "/spec"}])
    assert "Unexpected kind: frobnicate" in str(err.__cause__)


def test_json_patch_missing_path_is_422() -> None:
    raises_status(422, patch.json_patch, pod(), [{"op": "add", "value": 1}])


def test_json_patch_add_without_value_sets_null() -> None:
    assert patch.json_patch(pod(), [{"op": "add", "path": "/spec/x"}])["spec"]["x"] is None


def test_json_patch_move_to_missing_destination_is_422() -> None:
    raises_status(422, patch.json_patch, pod(), [{"op": "move", "from": "/metadata/labels", "path": "/a/b/c"}])


def test_json_patch_body_not_a_list_is_400() -> None:
    err = raises_status(400, patch.json_patch, pod(), {"op": "add", "path": "/x", "value": 1})
    assert err.reason == "BadRequest"
    assert err.message == "json: cannot unmarshal object into Go value of type jsonpatch.Patch"


def test_json_patch_operation_not_an_object_is_400() -> None:
    err = raises_status(400, patch.json_patch, pod(), ["add"])
    assert err.message == "json: cannot unmarshal string into Go value of type jsonpatch.Operation"


def test_json_patch_over_10000_operations_is_413() -> None:
    ops = [{"op": "test", "path": "/kind", "value": "Pod"}] * 10001
    err = raises_status(413, patch.json_patch, pod(), ops)
    assert err.message == "The allowed maximum operations in a JSON patch is 10000, got 10001"
    assert patch.json_patch(pod(), ops[:10000]) == pod()


def test_json_patch_null_body_is_a_no_op() -> None:
    assert patch.json_patch(pod(), None) == pod()


def test_json_patch_replace_root() -> None:
    assert patch.json_patch(pod(), [{"op": "replace", "path": "", "value": {"kind": "X"}}]) == {"kind": "X"}


# ---------------------------------------------------------------------------------------------
# Merge patch
# ---------------------------------------------------------------------------------------------


def test_merge_patch_null_deletes_key() -> None:
    result = patch.merge_patch(pod(), {"metadata": {"labels": {"tier": None}}})
    assert result["metadata"]["labels"] == {"app": "a"}


def test_merge_patch_merges_nested_objects() -> None:
    result = patch.merge_patch(pod(), {"metadata": {"annotations": {"a": "1"}, "labels": {"new": "x"}}})
    assert result["metadata"]["annotations"] == {"a": "1"}
    assert result["metadata"]["labels"] == {"app": "a", "tier": "web", "new": "x"}


def test_merge_patch_replaces_lists() -> None:
    result = patch.merge_patch(pod(), {"spec": {"containers": [{"name": "other"}]}})
    assert result["spec"]["containers"] == [{"name": "other"}]


def test_merge_patch_empty_finalizers_clears_them() -> None:
    doc = {"metadata": {"finalizers": ["a"]}}
    assert patch.merge_patch(doc, {"metadata": {"finalizers": []}}) == {"metadata": {"finalizers": []}}


def test_merge_patch_prunes_nulls_in_new_values() -> None:
    result = patch.merge_patch(pod(), {"spec": {"newMap": {"keep": 1, "drop": None}}})
    assert result["spec"]["newMap"] == {"keep": 1}


def test_merge_patch_non_object_replaces_scalar_values() -> None:
    result = patch.merge_patch({"spec": {"x": {"a": 1}}}, {"spec": {"x": 5}})
    assert result == {"spec": {"x": 5}}


@pytest.mark.parametrize("body", [None, [1, 2], "text", 3])
def test_merge_patch_non_object_is_400(body: Any) -> None:
    err = raises_status(400, patch.merge_patch, pod(), body)
    assert err.message == "Invalid JSON Patch"


def test_merge_patch_does_not_mutate_input() -> None:
    original, body = pod(), {"metadata": {"labels": {"app": None}}}
    patch.merge_patch(original, body)
    assert original == pod()
    assert body == {"metadata": {"labels": {"app": None}}}


# ---------------------------------------------------------------------------------------------
# Strategic merge patch: metadata
# ---------------------------------------------------------------------------------------------


def with_finalizers(*names: str) -> dict[str, Any]:
    doc = pod()
    doc["metadata"]["finalizers"] = list(names)
    return doc


def test_strategic_patch_unions_finalizers() -> None:
    result = patch.strategic_merge_patch(with_finalizers("a", "b"), {"metadata": {"finalizers": ["b", "c"]}}, "Pod")
    assert result["metadata"]["finalizers"] == ["a", "b", "c"]


def test_strategic_patch_new_finalizer_goes_first() -> None:
    # Upstream orders items new to the live list ahead of the server-only ones.
    result = patch.strategic_merge_patch(with_finalizers("a"), {"metadata": {"finalizers": ["z"]}}, "Pod")
    assert result["metadata"]["finalizers"] == ["z", "a"]


def test_strategic_patch_deduplicates_finalizers() -> None:
    result = patch.strategic_merge_patch(with_finalizers("a", "a"), {"metadata": {"finalizers": ["a", "a"]}}, "Pod")
    assert result["metadata"]["finalizers"] == ["a"]


def test_strategic_patch_empty_finalizers_is_a_no_op() -> None:
    result = patch.strategic_merge_patch(with_finalizers("a", "b"), {"metadata": {"finalizers": []}}, "Pod")
    assert result["metadata"]["finalizers"] == ["a", "b"]


def test_strategic_patch_null_finalizers_removes_them() -> None:
    result = patch.strategic_merge_patch(with_finalizers("a"), {"metadata": {"finalizers": None}}, "Pod")
    assert "finalizers" not in result["metadata"]


def test_delete_from_primitive_list_removes_finalizer() -> None:
    body = {"metadata": {"$deleteFromPrimitiveList/finalizers": ["b"]}}
    result = patch.strategic_merge_patch(with_finalizers("a", "b", "c"), body, "Pod")
    assert result["metadata"] == {**with_finalizers("a", "c")["metadata"]}


def test_delete_from_primitive_list_of_absent_list_adds_nothing() -> None:
    result = patch.strategic_merge_patch(pod(), {"metadata": {"$deleteFromPrimitiveList/finalizers": ["x"]}}, "Pod")
    assert result["metadata"] == pod()["metadata"]


def test_delete_from_primitive_list_with_additions() -> None:
    body = {
        "metadata": {
            "$setElementOrder/finalizers": ["a", "b", "d"],
            "$deleteFromPrimitiveList/finalizers": ["c"],
            "finalizers": ["d"],
        }
    }
    result = patch.strategic_merge_patch(with_finalizers("a", "b", "c"), body, "Pod")
    assert result["metadata"]["finalizers"] == ["a", "b", "d"]


def test_malformed_delete_from_primitive_list_is_400() -> None:
    err = raises_status(400, patch.strategic_merge_patch, pod(), {"metadata": {"$deleteFromPrimitiveList": []}}, "Pod")
    assert err.message == "invalid patch format of primitive list"


def test_owner_references_merge_by_uid() -> None:
    doc = pod()
    doc["metadata"]["ownerReferences"] = [{"uid": "u1", "name": "rs", "controller": True}]
    body = {"metadata": {"ownerReferences": [{"uid": "u1", "blockOwnerDeletion": True}, {"uid": "u2", "name": "x"}]}}
    refs = patch.strategic_merge_patch(doc, body, "Pod")["metadata"]["ownerReferences"]
    assert refs == [
        {"uid": "u1", "name": "rs", "controller": True, "blockOwnerDeletion": True},
        {"uid": "u2", "name": "x"},
    ]


def test_labels_null_deletes_key() -> None:
    result = patch.strategic_merge_patch(pod(), {"metadata": {"labels": {"tier": None, "new": "1"}}}, "Pod")
    assert result["metadata"]["labels"] == {"app": "a", "new": "1"}


def test_template_metadata_finalizers_also_union() -> None:
    deployment = {"kind": "Deployment", "spec": {"template": {"metadata": {"finalizers": ["a"]}, "spec": {}}}}
    body = {"spec": {"template": {"metadata": {"finalizers": []}}}}
    result = patch.strategic_merge_patch(deployment, body, "Deployment")
    assert result["spec"]["template"]["metadata"]["finalizers"] == ["a"]


# ---------------------------------------------------------------------------------------------
# Strategic merge patch: PodSpec
# ---------------------------------------------------------------------------------------------


def test_containers_merge_by_name() -> None:
    body = {"spec": {"containers": [{"name": "main", "image": "nginx:2"}, {"name": "side", "image": "envoy"}]}}
    containers = patch.strategic_merge_patch(pod(), body, "Pod")["spec"]["containers"]
    assert containers == [{"name": "main", "image": "nginx:2"}, {"name": "side", "image": "envoy"}]


def test_new_container_comes_before_existing_ones() -> None:
    containers = patch.strategic_merge_patch(pod(), {"spec": {"containers": [{"name": "side"}]}}, "Pod")["spec"][
        "containers"
    ]
    assert [c["name"] for c in containers] == ["side", "main"]


def test_patch_order_wins_for_listed_items() -> None:
    doc = pod(containers=[{"name": "1"}, {"name": "2", "image": "b"}, {"name": "3"}])
    body = {"spec": {"containers": [{"name": "3", "image": "c"}, {"name": "1", "image": "a"}]}}
    containers = patch.strategic_merge_patch(doc, body, "Pod")["spec"]["containers"]
    assert containers == [{"name": "2", "image": "b"}, {"name": "3", "image": "c"}, {"name": "1", "image": "a"}]


def test_init_and_ephemeral_containers_merge_by_name() -> None:
    doc = pod(initContainers=[{"name": "init", "image": "a"}], ephemeralContainers=[{"name": "dbg", "image": "b"}])
    body = {"spec": {"initContainers": [{"name": "init", "args": ["x"]}], "ephemeralContainers": [{"name": "dbg2"}]}}
    spec = patch.strategic_merge_patch(doc, body, "Pod")["spec"]
    assert spec["initContainers"] == [{"name": "init", "image": "a", "args": ["x"]}]
    assert [c["name"] for c in spec["ephemeralContainers"]] == ["dbg2", "dbg"]


def test_env_merges_by_name_inside_container() -> None:
    doc = pod(containers=[{"name": "main", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}])
    body = {"spec": {"containers": [{"name": "main", "env": [{"name": "B", "value": "3"}]}]}}
    env = patch.strategic_merge_patch(doc, body, "Pod")["spec"]["containers"][0]["env"]
    assert env == [{"name": "A", "value": "1"}, {"name": "B", "value": "3"}]


def test_ports_merge_by_container_port() -> None:
    doc = pod(containers=[{"name": "main", "ports": [{"containerPort": 80, "name": "http"}]}])
    body = {"spec": {"containers": [{"name": "main", "ports": [{"containerPort": 80, "protocol": "TCP"}]}]}}
    ports = patch.strategic_merge_patch(doc, body, "Pod")["spec"]["containers"][0]["ports"]
    assert ports == [{"containerPort": 80, "name": "http", "protocol": "TCP"}]


def test_volume_mounts_merge_by_mount_path_and_devices_by_device_path() -> None:
    doc = pod(containers=[{"name": "main", "volumeMounts": [{"mountPath": "/a", "name": "v1"}],
                           "volumeDevices": [{"devicePath": "/dev/x", "name": "d1"}]}])
    body = {"spec": {"containers": [{"name": "main", "volumeMounts": [{"mountPath": "/a", "readOnly": True}],
                                     "volumeDevices": [{"devicePath": "/dev/y", "name": "d2"}]}]}}
    container = patch.strategic_merge_patch(doc, body, "Pod")["spec"]["containers"][0]
    assert container["volumeMounts"] == [{"mountPath": "/a", "name": "v1", "readOnly": True}]
    assert [d["devicePath"] for d in container["volumeDevices"]] == ["/dev/y", "/dev/x"]


def test_image_pull_secrets_merge_by_name() -> None:
    doc = pod(imagePullSecrets=[{"name": "a"}])
    result = patch.strategic_merge_patch(doc, {"spec": {"imagePullSecrets": [{"name": "b"}]}}, "Pod")
    assert result["spec"]["imagePullSecrets"] == [{"name": "b"}, {"name": "a"}]


def test_tolerations_are_replaced() -> None:
    doc = pod(tolerations=[{"key": "a", "operator": "Exists"}, {"key": "b", "operator": "Exists"}])
    body = {"spec": {"tolerations": [{"key": "c", "operator": "Exists"}]}}
    assert patch.strategic_merge_patch(doc, body, "Pod")["spec"]["tolerations"] == [{"key": "c", "operator": "Exists"}]


def test_args_and_command_are_replaced() -> None:
    doc = pod(containers=[{"name": "main", "command": ["sh"], "args": ["-c", "a"]}])
    body = {"spec": {"containers": [{"name": "main", "command": ["bash"], "args": ["b"]}]}}
    container = patch.strategic_merge_patch(doc, body, "Pod")["spec"]["containers"][0]
    assert container["command"] == ["bash"]
    assert container["args"] == ["b"]


def test_missing_merge_key_is_400() -> None:
    body = {"spec": {"containers": [{"image": "x"}]}}
    err = raises_status(400, patch.strategic_merge_patch, pod(), body, "Pod")
    assert err.message == "map: map[image:x] does not contain declared merge key: name"


def test_new_container_nulls_and_directives_are_discarded() -> None:
    body = {"spec": {"containers": [{"name": "side", "image": None, "$retainKeys": ["name"],
                                     "env": [{"name": "A", "$patch": "delete"}, {"name": "B", "value": None}]}]}}
    side = patch.strategic_merge_patch(pod(), body, "Pod")["spec"]["containers"][0]
    assert side == {"name": "side", "env": [{"name": "B"}]}


def test_retain_keys_clears_unlisted_volume_source() -> None:
    doc = pod(volumes=[{"name": "data", "emptyDir": {}}])
    body = {"spec": {"volumes": [{"name": "data", "$retainKeys": ["configMap", "name"], "configMap": {"name": "cm"}}]}}
    volumes = patch.strategic_merge_patch(doc, body, "Pod")["spec"]["volumes"]
    assert volumes == [{"name": "data", "configMap": {"name": "cm"}}]


def test_retain_keys_rejects_patch_key_not_listed() -> None:
    doc = pod(volumes=[{"name": "data", "emptyDir": {}}])
    body = {"spec": {"volumes": [{"name": "data", "$retainKeys": ["name"], "configMap": {"name": "cm"}}]}}
    err = raises_status(400, patch.strategic_merge_patch, doc, body, "Pod")
    assert err.message == "invalid patch format of retainKeys"


def test_deployment_template_containers_merge_by_name() -> None:
    deployment = {
        "kind": "Deployment",
        "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "app", "image": "v1"}]}}},
    }
    body = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "v2"}]}}}}
    result = patch.strategic_merge_patch(deployment, body, "Deployment")
    assert result["spec"]["template"]["spec"]["containers"] == [{"name": "app", "image": "v2"}]
    assert result["spec"]["replicas"] == 1


@pytest.mark.parametrize("kind", ["ReplicaSet", "StatefulSet", "DaemonSet", "Job"])
def test_workload_templates_merge_env_by_name(kind: str) -> None:
    doc = {"kind": kind, "spec": {"template": {"spec": {"containers": [{"name": "c", "env": [{"name": "A"}]}]}}}}
    body = {"spec": {"template": {"spec": {"containers": [{"name": "c", "env": [{"name": "B"}]}]}}}}
    env = patch.strategic_merge_patch(doc, body, kind)["spec"]["template"]["spec"]["containers"][0]["env"]
    assert env == [{"name": "B"}, {"name": "A"}]


# ---------------------------------------------------------------------------------------------
# Strategic merge patch: status and other kinds
# ---------------------------------------------------------------------------------------------


def test_pod_conditions_merge_by_type() -> None:
    doc = pod()
    doc["status"] = {"conditions": [{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"}]}
    changed = [{"type": "Ready", "status": "False"}, {"type": "DisruptionTarget", "status": "True"}]
    body = {"status": {"conditions": changed}}
    conditions = patch.strategic_merge_patch(doc, body, "Pod")["status"]["conditions"]
    assert {c["type"]: c["status"] for c in conditions} == {
        "Ready": "False", "PodScheduled": "True", "DisruptionTarget": "True"}


def test_container_statuses_are_replaced() -> None:
    doc = pod()
    doc["status"] = {"containerStatuses": [{"name": "main", "ready": True}, {"name": "side", "ready": True}]}
    body = {"status": {"containerStatuses": [{"name": "main", "ready": False}]}}
    statuses = patch.strategic_merge_patch(doc, body, "Pod")["status"]["containerStatuses"]
    assert statuses == [{"name": "main", "ready": False}]


def test_cordon_sets_unschedulable() -> None:
    result = patch.strategic_merge_patch(node(), {"spec": {"unschedulable": True}}, "Node")
    assert result["spec"] == {"unschedulable": True}


def test_uncordon_null_removes_unschedulable() -> None:
    result = patch.strategic_merge_patch(node(spec={"unschedulable": True, "podCIDR": "10.0.0.0/24"}),
                                         {"spec": {"unschedulable": None}}, "Node")
    assert result["spec"] == {"podCIDR": "10.0.0.0/24"}


def test_node_taints_are_replaced() -> None:
    doc = node(spec={"taints": [{"key": "a", "effect": "NoSchedule"}, {"key": "b", "effect": "NoSchedule"}]})
    body = {"spec": {"taints": [{"key": "c", "effect": "NoExecute"}]}}
    assert patch.strategic_merge_patch(doc, body, "Node")["spec"]["taints"] == [{"key": "c", "effect": "NoExecute"}]


def test_node_conditions_and_addresses_merge_by_type() -> None:
    doc = node(status={"conditions": [{"type": "Ready", "status": "True"}, {"type": "DiskPressure", "status": "False"}],
                       "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}]})
    body = {"status": {"conditions": [{"type": "Ready", "status": "False"}],
                       "addresses": [{"type": "Hostname", "address": "n1"}]}}
    status = patch.strategic_merge_patch(doc, body, "Node")["status"]
    assert {c["type"]: c["status"] for c in status["conditions"]} == {"Ready": "False", "DiskPressure": "False"}
    assert len(status["conditions"]) == 2
    assert {a["type"] for a in status["addresses"]} == {"InternalIP", "Hostname"}


def test_node_volume_lists_are_replaced() -> None:
    doc = node(status={"volumesAttached": [{"name": "v1", "devicePath": "/a"}], "volumesInUse": ["v1", "v2"]})
    body = {"status": {"volumesAttached": [{"name": "v2", "devicePath": "/b"}], "volumesInUse": ["v2"]}}
    status = patch.strategic_merge_patch(doc, body, "Node")["status"]
    assert status == {"volumesAttached": [{"name": "v2", "devicePath": "/b"}], "volumesInUse": ["v2"]}


@pytest.mark.parametrize(
    "kind", ["Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "PodDisruptionBudget", "Namespace"]
)
def test_status_conditions_merge_by_type(kind: str) -> None:
    doc = {"kind": kind, "status": {"conditions": [{"type": "A", "status": "True"}, {"type": "B", "status": "True"}]}}
    body = {"status": {"conditions": [{"type": "B", "status": "False"}]}}
    conditions = patch.strategic_merge_patch(doc, body, kind)["status"]["conditions"]
    assert conditions == [{"type": "A", "status": "True"}, {"type": "B", "status": "False"}]


def test_custom_resource_definition_conditions_are_replaced() -> None:
    doc = {"status": {"conditions": [{"type": "Established"}, {"type": "NamesAccepted"}]}}
    body = {"status": {"conditions": [{"type": "Established", "status": "True"}]}}
    result = patch.strategic_merge_patch(doc, body, "CustomResourceDefinition")
    assert result["status"]["conditions"] == [{"type": "Established", "status": "True"}]


def test_pdb_selector_is_replaced_not_merged() -> None:
    pdb = {"spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "a", "tier": "web"}}}}
    body = {"spec": {"selector": {"matchLabels": {"app": "b"}}}}
    result = patch.strategic_merge_patch(pdb, body, "PodDisruptionBudget")
    assert result["spec"] == {"minAvailable": 1, "selector": {"matchLabels": {"app": "b"}}}


def test_service_ports_merge_by_port() -> None:
    svc = {"spec": {"ports": [{"port": 80, "targetPort": 8080}, {"port": 443, "targetPort": 8443}]}}
    body = {"spec": {"ports": [{"port": 80, "targetPort": 9090}]}}
    ports = patch.strategic_merge_patch(svc, body, "Service")["spec"]["ports"]
    assert ports == [{"port": 80, "targetPort": 9090}, {"port": 443, "targetPort": 8443}]


def test_configmap_data_merges_as_a_map() -> None:
    cm = {"data": {"a": "1", "b": "2"}}
    result = patch.strategic_merge_patch(cm, {"data": {"b": None, "c": "3"}}, "ConfigMap")
    assert result["data"] == {"a": "1", "c": "3"}


# ---------------------------------------------------------------------------------------------
# Strategic merge patch: directives
# ---------------------------------------------------------------------------------------------


def test_patch_delete_directive_removes_list_item() -> None:
    doc = pod(containers=[{"name": "main"}, {"name": "side"}])
    body = {"spec": {"containers": [{"name": "side", "$patch": "delete"}]}}
    assert patch.strategic_merge_patch(doc, body, "Pod")["spec"]["containers"] == [{"name": "main"}]


def test_patch_delete_directive_removes_all_duplicates() -> None:
    doc = pod(containers=[{"name": "1"}, {"name": "1"}, {"name": "2", "image": "a"}, {"name": "3"}, {"name": "3"}])
    body = {"spec": {"containers": [{"name": "1", "$patch": "delete"}, {"name": "3", "$patch": "delete"}]}}
    assert patch.strategic_merge_patch(doc, body, "Pod")["spec"]["containers"] == [{"name": "2", "image": "a"}]


def test_patch_delete_directive_without_merge_key_is_400() -> None:
    body = {"spec": {"containers": [{"$patch": "delete"}]}}
    err = raises_status(400, patch.strategic_merge_patch, pod(), body, "Pod")
    assert "does not contain declared merge key: name" in err.message


def test_patch_delete_directive_on_map_empties_it() -> None:
    result = patch.strategic_merge_patch(pod(), {"metadata": {"labels": {"$patch": "delete"}}}, "Pod")
    assert result["metadata"]["labels"] == {}


def test_patch_delete_directive_on_absent_map_adds_nothing() -> None:
    result = patch.strategic_merge_patch(pod(), {"metadata": {"annotations": {"$patch": "delete"}}}, "Pod")
    assert "annotations" not in result["metadata"]


def test_patch_replace_directive_on_list() -> None:
    doc = pod(containers=[{"name": "main", "image": "a"}, {"name": "side"}])
    body = {"spec": {"containers": [{"$patch": "replace"}, {"name": "only", "image": "b"}]}}
    assert patch.strategic_merge_patch(doc, body, "Pod")["spec"]["containers"] == [{"name": "only", "image": "b"}]


def test_patch_replace_directive_alone_empties_list() -> None:
    body = {"spec": {"containers": [{"$patch": "replace"}]}}
    assert patch.strategic_merge_patch(pod(), body, "Pod")["spec"]["containers"] == []


def test_patch_replace_directive_on_map() -> None:
    body = {"metadata": {"labels": {"$patch": "replace", "only": "x"}}}
    assert patch.strategic_merge_patch(pod(), body, "Pod")["metadata"]["labels"] == {"only": "x"}


def test_patch_merge_directive_in_map_is_accepted_and_stripped() -> None:
    body = {"metadata": {"labels": {"$patch": "merge", "new": "x"}}}
    labels = patch.strategic_merge_patch(pod(), body, "Pod")["metadata"]["labels"]
    assert labels == {"app": "a", "tier": "web", "new": "x"}


def test_patch_merge_directive_in_list_is_400() -> None:
    body = {"spec": {"containers": [{"$patch": "merge"}]}}
    err = raises_status(400, patch.strategic_merge_patch, pod(), body, "Pod")
    assert err.message == "merging lists cannot yet be specified in the patch"


def test_unknown_patch_directive_is_400() -> None:
    err = raises_status(400, patch.strategic_merge_patch, pod(), {"metadata": {"$patch": "explode"}}, "Pod")
    assert err.message.startswith("unknown patch type: explode in map: map[")


def test_setelementorder_directive_is_stripped() -> None:
    # The shape kubectl's client-side apply sends.
    body = {
        "metadata": {"labels": {"new": "x"}},
        "spec": {
            "$setElementOrder/containers": [{"name": "main"}],
            "containers": [{"name": "main", "image": "nginx:2"}],
        },
    }
    result = patch.strategic_merge_patch(pod(), body, "Pod")
    assert result["spec"] == {"containers": [{"name": "main", "image": "nginx:2"}]}
    assert result["metadata"]["labels"]["new"] == "x"


def test_setelementorder_without_list_in_patch_reorders_live_list() -> None:
    doc = pod(containers=[{"name": "1"}, {"name": "3", "v": 3}, {"name": "4", "v": 4}, {"name": "2", "v": 2}])
    body = {"spec": {"$setElementOrder/containers": [{"name": "4"}, {"name": "2"}, {"name": "3"}, {"name": "1"}]}}
    containers = patch.strategic_merge_patch(doc, body, "Pod")["spec"]["containers"]
    assert [c["name"] for c in containers] == ["4", "2", "3", "1"]


def test_setelementorder_places_new_items_and_keeps_server_only_ones() -> None:
    doc = pod(containers=[{"name": "1", "other": "a"}, {"name": "2", "value": 2}])
    body = {"spec": {"$setElementOrder/containers": [{"name": "4"}, {"name": "1"}, {"name": "2"}, {"name": "3"}],
                     "containers": [{"name": "4", "value": 4}, {"name": "3", "value": 3}]}}
    containers = patch.strategic_merge_patch(doc, body, "Pod")["spec"]["containers"]
    assert containers == [{"name": "4", "value": 4}, {"name": "1", "other": "a"}, {"name": "2", "value": 2},
                          {"name": "3", "value": 3}]


def test_setelementorder_interleaves_server_only_items() -> None:
    doc = pod(containers=[{"name": "1"}, {"name": "2"}, {"name": "7"}, {"name": "9"}, {"name": "8"},
                          {"name": "3"}, {"name": "4"}])
    body = {"spec": {"$setElementOrder/containers": [{"name": "2"}, {"name": "1"}, {"name": "4"}, {"name": "3"}]}}
    containers = patch.strategic_merge_patch(doc, body, "Pod")["spec"]["containers"]
    assert [c["name"] for c in containers] == ["2", "1", "7", "9", "8", "4", "3"]


def test_setelementorder_on_primitive_list() -> None:
    body = {"metadata": {"$setElementOrder/finalizers": ["c", "a", "b"], "finalizers": ["c"]}}
    result = patch.strategic_merge_patch(with_finalizers("a", "d", "b"), body, "Pod")
    assert result["metadata"]["finalizers"] == ["c", "a", "d", "b"]


def test_setelementorder_with_delete_directive_removes_and_reorders() -> None:
    # kubectl apply after dropping container "a" and swapping the init containers.
    doc = pod(containers=[{"name": "a"}, {"name": "b"}], initContainers=[{"name": "c"}, {"name": "d"}])
    body = {"spec": {"$setElementOrder/containers": [{"name": "b"}],
                     "$setElementOrder/initContainers": [{"name": "d"}, {"name": "c"}],
                     "containers": [{"$patch": "delete", "name": "a"}]}}
    spec = patch.strategic_merge_patch(doc, body, "Pod")["spec"]
    assert spec == {"containers": [{"name": "b"}], "initContainers": [{"name": "d"}, {"name": "c"}]}


def test_setelementorder_inconsistent_with_patch_list_is_400() -> None:
    doc = pod(containers=[{"name": "1"}, {"name": "3"}, {"name": "2"}])
    body = {"spec": {"$setElementOrder/containers": [{"name": "1"}, {"name": "2"}, {"name": "3"}],
                     "containers": [{"name": "3", "v": 3}, {"name": "1", "v": 1}]}}
    err = raises_status(400, patch.strategic_merge_patch, doc, body, "Pod")
    assert "doesn't match $setElementOrder list" in err.message


def test_directive_keys_never_appear_in_result() -> None:
    body = {
        "metadata": {"$setElementOrder/finalizers": ["x"], "finalizers": ["x"], "$retainKeys": ["finalizers", "name"],
                     "name": "p"},
        "spec": {"newThing": {"$retainKeys": ["a"], "a": 1, "nested": [{"$patch": "delete", "name": "z"}]},
                 "$deleteFromPrimitiveList/absent": ["q"]},
    }
    result = patch.strategic_merge_patch(pod(), body, "Pod")

    def keys(value: Any) -> list[str]:
        if isinstance(value, dict):
            return list(value) + [k for v in value.values() for k in keys(v)]
        if isinstance(value, list):
            return [k for v in value for k in keys(v)]
        return []

    assert not [k for k in keys(result) if k.startswith("$")]
    assert result["metadata"] == {"name": "p", "finalizers": ["x"]}
    assert result["spec"]["newThing"] == {"a": 1, "nested": []}


# ---------------------------------------------------------------------------------------------
# Strategic merge patch: plumbing
# ---------------------------------------------------------------------------------------------


def test_strategic_patch_does_not_mutate_input() -> None:
    original = with_finalizers("a")
    body = {"metadata": {"finalizers": ["b"], "labels": {"app": None}}, "spec": {"containers": [{"name": "x"}]}}
    body_snapshot = copy.deepcopy(body)
    result = patch.strategic_merge_patch(original, body, "Pod")
    assert original == with_finalizers("a")
    assert body == body_snapshot
    result["spec"]["containers"][0]["name"] = "mutated"
    assert body == body_snapshot


def test_strategic_patch_on_custom_kind_is_415() -> None:
    err = raises_status(415, patch.strategic_merge_patch, {"spec": {}}, {"spec": {"a": 1}}, "Widget")
    assert err.reason == "UnsupportedMediaType"
    assert MERGE_PATCH_CONTENT_TYPE in err.message


@pytest.mark.parametrize("body", [[{"op": "add"}], "text", 5])
def test_strategic_patch_non_object_is_400(body: Any) -> None:
    err = raises_status(400, patch.strategic_merge_patch, pod(), body, "Pod")
    assert "cannot unmarshal" in err.message


def test_strategic_patch_null_body_is_a_no_op() -> None:
    assert patch.strategic_merge_patch(pod(), None, "Pod") == pod()


def test_type_change_replaces_value() -> None:
    result = patch.strategic_merge_patch({"spec": {"x": {"a": 1}}}, {"spec": {"x": ["b"]}}, "ConfigMap")
    assert result["spec"]["x"] == ["b"]


def test_list_of_lists_is_422() -> None:
    doc = with_finalizers("a")
    raises_status(422, patch.strategic_merge_patch, doc, {"metadata": {"finalizers": [["b"]]}}, "Pod")


@pytest.mark.parametrize(
    "kind",
    ["Pod", "Node", "Deployment", "PodDisruptionBudget", "Job", "StatefulSet", "DaemonSet", "ReplicaSet", "Namespace",
     "ConfigMap", "Service", "PersistentVolume", "PersistentVolumeClaim", "VolumeAttachment", "Event", "Secret",
     "ControllerRevision", "CustomResourceDefinition"],
)
def test_supports_strategic_for_builtin_kinds(kind: str) -> None:
    assert patch.supports_strategic(kind)


def test_supports_strategic_is_false_for_custom_kinds() -> None:
    assert not patch.supports_strategic("Widget")
    assert not patch.supports_strategic("")


def test_content_type_constants() -> None:
    assert STRATEGIC_MERGE_PATCH_CONTENT_TYPE == "application/strategic-merge-patch+json"
    assert MERGE_PATCH_CONTENT_TYPE == "application/merge-patch+json"
    assert JSON_PATCH_CONTENT_TYPE == "application/json-patch+json"
    assert APPLY_PATCH_CONTENT_TYPE == "application/apply-patch+yaml"
