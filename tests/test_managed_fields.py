"""managedFields bookkeeping (harness/apiserver/managedfields.py, fieldsets.py) against the rules
structured-merge-diff v4 and kube-apiserver 1.32 follow, without HTTP."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from harness.apiserver import builtins
from harness.apiserver import fieldsets as fs
from harness.apiserver import managedfields as mf
from harness.apiserver.resources import ResourceType
from harness.kube import errors

WIDGET_SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "size": {"type": "integer"},
                "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
                "args": {"type": "array", "items": {"type": "string"}},
                "ports": {"type": "array", "x-kubernetes-list-type": "map",
                          "x-kubernetes-list-map-keys": ["port", "protocol"],
                          "items": {"type": "object", "properties": {
                              "port": {"type": "integer"}, "protocol": {"type": "string", "default": "TCP"},
                              "name": {"type": "string"}}}},
                "extra": {"type": "object", "additionalProperties": {"type": "string"}},
                "ref": {"type": "object", "x-kubernetes-map-type": "atomic",
                        "properties": {"name": {"type": "string"}}},
            },
        }
    },
}
WIDGET = ResourceType("example.com", "v1", "Widget", "widgets", True, "widget", custom=True, schema=WIDGET_SCHEMA)


def _cm(data: dict[str, str], **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "d", "uid": "u1", **meta}, "data": data}


def _fields(managed: list[dict[str, Any]], manager: str, operation: str = mf.UPDATE) -> dict[str, Any]:
    for entry in managed:
        if entry["manager"] == manager and entry["operation"] == operation:
            return entry["fieldsV1"]
    raise AssertionError(f"no {operation} entry for {manager}: {managed}")


def test_fields_v1_round_trips_and_sorts_fields_keys_then_values() -> None:
    paths = {("f:spec", "f:b"), ("f:spec", "f:a"), ("f:list", 'k:{"name":"x"}'), ("f:list", 'k:{"name":"x"}', "f:v"),
             ("f:set", 'v:"b"'), ("f:set", 'v:"a"')}
    encoded = fs.encode(paths)
    assert list(encoded["f:spec"]) == ["f:a", "f:b"]
    assert encoded["f:list"] == {'k:{"name":"x"}': {".": {}, "f:v": {}}}
    assert list(encoded["f:set"]) == ['v:"a"', 'v:"b"']
    assert fs.decode(encoded) == paths


def test_paths_print_as_conflict_messages_print_them() -> None:
    assert fs.path_string(("f:spec", "f:containers", 'k:{"name":"nginx"}', "f:image")) == \
        '.spec.containers[name="nginx"].image'
    assert fs.path_string(("f:metadata", "f:finalizers", 'v:"a"')) == '.metadata.finalizers[="a"]'
    assert fs.path_string(("f:ports", 'k:{"containerPort":80,"protocol":"TCP"}')) == \
        '.ports[containerPort=80,protocol="TCP"]'


def test_a_create_owns_what_it_set_and_maps_it_created_carry_their_own_node() -> None:
    managed = mf.record_update(builtins.CONFIG_MAP, None, _cm({"a": "1"}, labels={"x": "y"}), "creator", "T1")
    assert managed == [{"manager": "creator", "operation": "Update", "apiVersion": "v1", "time": "T1",
                        "fieldsType": "FieldsV1",
                        "fieldsV1": {"f:data": {".": {}, "f:a": {}}, "f:metadata": {"f:labels": {".": {}, "f:x": {}}}}}]


def test_an_update_moves_ownership_of_what_it_changed_only() -> None:
    old = _cm({"a": "1", "b": "2"})
    old["metadata"]["managedFields"] = mf.record_update(builtins.CONFIG_MAP, None, old, "creator", "T1")
    new = copy.deepcopy(old)
    new["data"]["a"] = "changed"
    managed = mf.record_update(builtins.CONFIG_MAP, old, new, "editor", "T2")
    assert _fields(managed, "creator") == {"f:data": {".": {}, "f:b": {}}}
    assert _fields(managed, "editor") == {"f:data": {"f:a": {}}}


def test_a_no_op_update_keeps_entries_and_time() -> None:
    old = _cm({"a": "1"})
    old["metadata"]["managedFields"] = mf.record_update(builtins.CONFIG_MAP, None, old, "creator", "T1")
    assert mf.record_update(builtins.CONFIG_MAP, old, copy.deepcopy(old), "other", "T2") == \
        old["metadata"]["managedFields"]


def test_an_object_without_managed_fields_stays_untracked_by_updates() -> None:
    old = _cm({"a": "1"})
    new = _cm({"a": "2"})
    assert mf.record_update(builtins.CONFIG_MAP, old, new, "editor", "T2") is None


def test_an_empty_list_entry_resets_managed_fields() -> None:
    old = _cm({"a": "1"})
    old["metadata"]["managedFields"] = mf.record_update(builtins.CONFIG_MAP, None, old, "creator", "T1")
    new = copy.deepcopy(old)
    new["metadata"]["managedFields"] = [{}]
    assert mf.record_update(builtins.CONFIG_MAP, old, new, "editor", "T2") is None


def test_managed_fields_sent_in_an_update_replace_the_live_ones() -> None:
    old = _cm({"a": "1"})
    old["metadata"]["managedFields"] = mf.record_update(builtins.CONFIG_MAP, None, old, "creator", "T1")
    new = copy.deepcopy(old)
    new["metadata"]["managedFields"][0]["manager"] = "renamed"
    managed = mf.record_update(builtins.CONFIG_MAP, old, new, "editor", "T2")
    assert [e["manager"] for e in managed] == ["renamed"]


def test_at_most_ten_update_managers_the_oldest_fold_into_ancient_changes() -> None:
    obj = _cm({})
    obj["metadata"]["managedFields"] = mf.record_update(builtins.CONFIG_MAP, None, obj, "m00", "T00")
    for i in range(1, 12):
        new = copy.deepcopy(obj)
        new["data"][f"k{i}"] = "v"
        new["metadata"]["managedFields"] = mf.record_update(builtins.CONFIG_MAP, obj, new, f"m{i:02}", f"T{i:02}")
        obj = new
    managers = [e["manager"] for e in obj["metadata"]["managedFields"]]
    assert len(managers) == 11 and "ancient-changes" in managers
    assert "m01" not in managers and "m11" in managers


def test_apply_owns_leaves_map_entries_and_list_items_not_parent_structs() -> None:
    result = mf.apply(builtins.DEPLOYMENT, None, {
        "metadata": {"name": "w", "labels": {"app": "w"}},
        "spec": {"selector": {"matchLabels": {"app": "w"}}, "template": {"spec": {"containers": [
            {"name": "c", "image": "i", "env": [{"name": "A", "value": "1"}], "args": ["x"]}]}}},
    }, "me", "T1", force=False)
    fields = _fields(result.managed_fields, "me", mf.APPLY)
    assert fields["f:metadata"] == {"f:labels": {"f:app": {}}}
    assert fields["f:spec"]["f:selector"] == {}
    container = fields["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"c"}']
    assert container == {".": {}, "f:args": {}, "f:env": {'k:{"name":"A"}': {".": {}, "f:name": {}, "f:value": {}}},
                         "f:image": {}, "f:name": {}}


def test_finalizers_are_a_set_and_owner_references_are_keyed_by_uid() -> None:
    result = mf.apply(builtins.CONFIG_MAP, None, {"metadata": {"name": "c", "finalizers": ["a/b"],
                                                               "ownerReferences": [{"uid": "u", "name": "o"}]}},
                      "me", "T1", force=False)
    meta = _fields(result.managed_fields, "me", mf.APPLY)["f:metadata"]
    assert meta["f:finalizers"] == {'v:"a/b"': {}}
    assert meta["f:ownerReferences"] == {'k:{"uid":"u"}': {".": {}, "f:name": {}, "f:uid": {}}}


def test_custom_resources_follow_their_schema_list_and_map_types() -> None:
    config = {"spec": {"size": 1, "tags": ["a"], "args": ["x"], "ports": [{"port": 80}],
                       "extra": {"k": "v"}, "ref": {"name": "n"}}}
    result = mf.apply(WIDGET, None, config, "me", "T1", force=False)
    spec = _fields(result.managed_fields, "me", mf.APPLY)["f:spec"]
    assert spec == {"f:args": {}, "f:extra": {"f:k": {}},
                    "f:ports": {'k:{"port":80,"protocol":"TCP"}': {".": {}, "f:port": {}}},
                    "f:ref": {}, "f:size": {}, "f:tags": {'v:"a"': {}}}


def test_conflicts_from_several_managers_are_grouped_sorted_and_counted() -> None:
    live = _cm({"a": "1", "b": "1", "c": "1"})
    live["metadata"]["managedFields"] = [
        {"manager": "zeta", "operation": "Apply", "apiVersion": "v1", "time": "T1", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:data": {"f:c": {}}}},
        {"manager": "alpha", "operation": "Update", "apiVersion": "v1", "time": "T1", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:data": {"f:a": {}, "f:b": {}}}},
    ]
    with pytest.raises(errors.StatusError) as raised:
        mf.apply(builtins.CONFIG_MAP, live, {"data": {"a": "2", "b": "2", "c": "2"}}, "me", "T2", force=False)
    status = raised.value.status
    assert status["code"] == 409
    assert status["message"] == ('Apply failed with 3 conflicts: conflicts with "alpha" using v1:\n- .data.a\n'
                                 '- .data.b\nconflicts with "zeta":\n- .data.c')
    assert [c["field"] for c in status["details"]["causes"]] == [".data.a", ".data.b", ".data.c"]
    forced = mf.apply(builtins.CONFIG_MAP, live, {"data": {"a": "2", "b": "2", "c": "2"}}, "me", "T2", force=True)
    assert [e["manager"] for e in forced.managed_fields] == ["me"]


def test_a_no_op_apply_keeps_its_time() -> None:
    first = mf.apply(builtins.CONFIG_MAP, None, {"data": {"a": "1"}}, "me", "T1", force=False)
    live = {**_cm({"a": "1"}), "metadata": {**_cm({})["metadata"], "managedFields": first.managed_fields}}
    again = mf.apply(builtins.CONFIG_MAP, live, {"data": {"a": "1"}}, "me", "T9", force=False)
    assert not again.changed and again.managed_fields[0]["time"] == "T1"


def test_the_first_apply_on_an_untracked_object_hands_its_fields_to_before_first_apply() -> None:
    result = mf.apply(builtins.CONFIG_MAP, _cm({"a": "1"}), {"data": {"b": "2"}}, "me", "T1", force=False)
    assert _fields(result.managed_fields, "before-first-apply") == {"f:data": {"f:a": {}}}
    assert result.obj["data"] == {"a": "1", "b": "2"}


def test_kubectl_may_take_fields_still_holding_the_last_applied_value() -> None:
    live = _cm({"a": "1"}, annotations={mf.LAST_APPLIED: '{"data":{"a":"1"}}'})
    live["metadata"]["managedFields"] = mf.record_update(builtins.CONFIG_MAP, None, live, "kubectl-client-side-apply",
                                                         "T1")
    result = mf.apply(builtins.CONFIG_MAP, live, {"metadata": {"name": "c"}, "data": {"a": "2"}}, "kubectl", "T2",
                      force=False)
    assert result.obj["data"] == {"a": "2"}
    assert '"a":"2"' in result.obj["metadata"]["annotations"][mf.LAST_APPLIED]
    with pytest.raises(errors.StatusError):
        mf.apply(builtins.CONFIG_MAP, live, {"data": {"a": "2"}}, "someone-else", "T2", force=False)


def test_an_applied_list_item_dropped_later_is_removed_with_its_fields() -> None:
    config = {"spec": {"template": {"spec": {"containers": [
        {"name": "a", "image": "i", "ports": [{"containerPort": 80}]}, {"name": "b", "image": "j"}]}}}}
    first = mf.apply(builtins.DEPLOYMENT, None, config, "me", "T1", force=False)
    live = {**first.obj, "metadata": {"name": "w", "managedFields": first.managed_fields}}
    smaller = copy.deepcopy(config)
    del smaller["spec"]["template"]["spec"]["containers"][1]
    del smaller["spec"]["template"]["spec"]["containers"][0]["ports"]
    second = mf.apply(builtins.DEPLOYMENT, live, smaller, "me", "T2", force=False)
    assert second.obj["spec"]["template"]["spec"]["containers"] == [{"name": "a", "image": "i"}]


def test_status_writes_are_recorded_against_the_status_subresource() -> None:
    old = {"metadata": {"name": "d", "uid": "u"}, "spec": {"replicas": 1}}
    old["metadata"]["managedFields"] = mf.record_update(builtins.DEPLOYMENT, None, old, "creator", "T1")
    new = {**copy.deepcopy(old), "status": {"replicas": 1}}
    managed = mf.record_update(builtins.DEPLOYMENT, old, new, "controller", "T2", subresource="status")
    entry = next(e for e in managed if e["manager"] == "controller")
    # status is a value struct of the Go type: present in the zero value, so no "." of its own
    assert entry["subresource"] == "status" and entry["fieldsV1"] == {"f:status": {"f:replicas": {}}}


def test_an_update_that_adds_conditions_owns_the_list_node_and_each_condition() -> None:
    old = {"metadata": {"name": "d", "uid": "u"}, "spec": {"replicas": 1}}
    old["metadata"]["managedFields"] = mf.record_update(builtins.DEPLOYMENT, None, old, "creator", "T1")
    new = {**copy.deepcopy(old), "status": {"conditions": [{"type": "Available", "status": "True"}]}}
    managed = mf.record_update(builtins.DEPLOYMENT, old, new, "controller", "T2", subresource="status")
    entry = next(e for e in managed if e["manager"] == "controller")
    assert entry["fieldsV1"] == {"f:status": {"f:conditions": {
        ".": {}, 'k:{"type":"Available"}': {".": {}, "f:status": {}, "f:type": {}}}}}


def test_the_manager_comes_from_the_user_agent_prefix() -> None:
    assert mf.manager_from_user_agent("kubectl/v1.32.0 (linux/amd64) kubernetes/abc") == "kubectl"
    assert mf.manager_from_user_agent("OpenAPI-Generator/32.0.1/python") == "OpenAPI-Generator"
    assert mf.manager_from_user_agent(None) == ""


@pytest.mark.parametrize("obj", [
    {"metadata": {"labels": {"a": "b"}}, "data": {"x": "1"}},
    {"spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}},
     "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}], "resources": {},
                              "env": [{"name": "E", "value": "v"}]}], "securityContext": {},
              "tolerations": [{"key": "k"}]}}, "strategy": {"rollingUpdate": {"maxSurge": 1}}}},
    {"metadata": {"finalizers": ["a", "b"], "ownerReferences": [{"uid": "u", "kind": "K"}]}, "spec": {}},
])
def test_a_create_encodes_what_a_comparison_with_nothing_adds(obj: dict[str, Any]) -> None:
    shapes = fs.BuiltinShapes("Deployment")
    assert fs.added_fields_v1(obj, shapes) == fs.encode(fs.compare({}, obj, shapes).added)
    assert list(fs.added_fields_v1(obj, shapes)) == list(fs.encode(fs.compare({}, obj, shapes).added))


@pytest.mark.parametrize(("remove", "add"), [
    ({("f:data", "f:a")}, set()),
    ({("f:data", "f:a"), ("f:data", "f:b")}, set()),
    ({("f:data",)}, {("f:data", "f:z")}),
    (set(), {("f:spec", "f:list", 'k:{"name":"x"}', "f:v")}),
    ({("f:spec", "f:list", 'k:{"name":"x"}'), ("f:spec", "f:list", 'k:{"name":"x"}', "f:v")}, set()),
    (set(), {("f:data", "f:a", "f:deeper"), ("f:a",)}),
    ({("f:spec", "f:list", 'k:{"name":"x"}', "f:v")}, {("f:spec", "f:other",)}),
])
def test_editing_an_encoded_tree_matches_editing_the_decoded_set(remove: set[fs.Path], add: set[fs.Path]) -> None:
    fields = {("f:data",), ("f:data", "f:a"), ("f:data", "f:b"), ("f:spec", "f:list", 'k:{"name":"x"}'),
              ("f:spec", "f:list", 'k:{"name":"x"}', "f:v"), ("f:spec", "f:r")}
    tree = fs.encode(fields)
    edited = fs.edit_tree(tree, fs.encode(remove), None, fs.encode(add))
    expected = fs.encode((fields - remove) | add)
    assert json.dumps(edited) == json.dumps(expected)  # same tree, same key order at every level
    assert fs.decode(edited) == (fields - remove) | add
    assert tree == fs.encode(fields)  # the original is untouched


def _pod_with_ports(*ports: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "i",
                                     "ports": [{"containerPort": p, "protocol": "TCP"} for p in ports]}]}}


def _port_keys(managed: list[dict[str, Any]], manager: str) -> list[str]:
    entry = next(e for e in managed if e["manager"] == manager)
    container = entry["fieldsV1"]["f:spec"]["f:containers"]['k:{"name":"c"}']
    return [key for key in container["f:ports"] if key != "."]


def test_key_fields_sort_by_value_numbers_by_number() -> None:
    # structured-merge-diff orders keys by value.Compare: ports 80 < 443 < 8080 (as text, 443 < 80 < 8080).
    created = _pod_with_ports(8080, 80, 443)
    managed = mf.record_update(builtins.POD, None, created, "creator", "T1")
    assert managed is not None
    assert _port_keys(managed, "creator") == [
        'k:{"containerPort":80,"protocol":"TCP"}', 'k:{"containerPort":443,"protocol":"TCP"}',
        'k:{"containerPort":8080,"protocol":"TCP"}']
    # An update that adds ports sorts the nodes it adds the same way.
    old = copy.deepcopy(created)
    old["metadata"]["managedFields"] = managed
    new = _pod_with_ports(8080, 80, 443, 9090, 100)
    new["metadata"]["managedFields"] = managed
    updated = mf.record_update(builtins.POD, old, new, "editor", "T2")
    assert updated is not None
    assert _port_keys(updated, "editor") == [
        'k:{"containerPort":100,"protocol":"TCP"}', 'k:{"containerPort":9090,"protocol":"TCP"}']


def test_elements_sort_as_structured_merge_diff_compares_them() -> None:
    ordered = ['f:a', 'f:b', 'k:{"port":9,"protocol":"TCP"}', 'k:{"port":10,"protocol":"TCP"}',
               'k:{"port":10,"protocol":"UDP"}', 'k:{"name":"a"}', 'k:{"name":"a b"}', 'v:1.5', 'v:2', 'v:"a"',
               'v:false', 'v:true', 'v:[1]', 'v:{"a":1}', 'v:null', 'i:2', 'i:10']
    shuffled = list(reversed(ordered))
    # Keys with different field names sort by the names first ("name" < "port").
    expected = ['f:a', 'f:b', 'k:{"name":"a"}', 'k:{"name":"a b"}', 'k:{"port":9,"protocol":"TCP"}',
                'k:{"port":10,"protocol":"TCP"}', 'k:{"port":10,"protocol":"UDP"}', 'v:1.5', 'v:2', 'v:"a"',
                'v:false', 'v:true', 'v:[1]', 'v:{"a":1}', 'v:null', 'i:2', 'i:10']
    assert sorted(shuffled, key=fs.element_sort_key) == expected


def test_elements_a_client_sent_that_do_not_parse_still_sort_after_the_others_of_their_kind() -> None:
    # fieldsV1 a client sends back is only checked for its element kinds: a key, value or index that
    # is not JSON (or not a key's object) must not stop the node from being sorted (a 500).
    elements = ['k:notjson', 'k:[1]', 'k:{"port":80}', 'v:nope', 'v:1', 'i:x', 'i:2', 'f:a']
    assert sorted(elements, key=fs.element_sort_key) == [
        'f:a', 'k:{"port":80}', 'k:[1]', 'k:notjson', 'v:1', 'v:nope', 'i:2', 'i:x']
