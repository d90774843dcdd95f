"""Behaviour of CustomResourceDefinitions (harness/apiserver/crd.py) and the CRD cleanup simulator
(harness/world/crd_cleanup.py): registration, status, validation, schema defaulting and checks,
and deletion of a CRD with its instances."""

from __future__ import annotations

from typing import Any

import pytest

from harness.apiserver.crd import resource_types
from harness.client import STRATEGIC, ApiError, InProcessClient
from harness.world.world import World

CRD = ("apiextensions.k8s.io/v1", "CustomResourceDefinition")
WIDGET = ("example.com/v1", "Widget")
NAME = "widgets.example.com"

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["color"],
            "properties": {
                "color": {"type": "string", "enum": ["red", "blue"]},
                "size": {"type": "integer", "default": 3},
                "ratio": {"type": "number"},
                "enabled": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "limits": {"type": "object", "default": {}, "properties": {
                    "cpu": {"type": "string", "default": "100m"},
                    "replicas": {"type": "integer", "default": 1},
                }},
                "port": {"x-kubernetes-int-or-string": True},
            },
        },
        "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
    },
}


def crd(name: str = NAME, *, group: str = "example.com", plural: str = "widgets", kind: str = "Widget",
        scope: str = "Namespaced", versions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": CRD[0], "kind": CRD[1], "metadata": {"name": name},
        "spec": {
            "group": group, "scope": scope,
            "names": {"plural": plural, "kind": kind, "shortNames": ["wd"]},
            "versions": versions if versions is not None else [{
                "name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": SCHEMA},
                "subresources": {"status": {}},
                "additionalPrinterColumns": [{"name": "Color", "type": "string", "jsonPath": ".spec.color"}],
                "selectableFields": [{"jsonPath": ".spec.color"}],
            }],
        },
    }


def widget(name: str, spec: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    return {"apiVersion": WIDGET[0], "kind": WIDGET[1], "metadata": {"name": name, "namespace": "default", **meta},
            "spec": spec if spec is not None else {"color": "red"}}


def refused(fn: Any, *args: Any, **kwargs: Any) -> ApiError:
    with pytest.raises(ApiError) as info:
        fn(*args, **kwargs)
    return info.value


@pytest.fixture
def world() -> World:
    return World(simulators=["crd-cleanup"])


@pytest.fixture
def client(world: World) -> InProcessClient:
    return world.client()


def test_a_new_kind_is_usable_at_once(client: InProcessClient) -> None:
    client.create(crd())

    created = client.create(widget("w1"))

    assert created["apiVersion"] == "example.com/v1" and created["kind"] == "Widget"
    assert [w["metadata"]["name"] for w in client.list(*WIDGET, "default")["items"]] == ["w1"]
    served = {(r["apiVersion"], r["kind"]): r for r in client.discover()}
    assert served[WIDGET]["plural"] == "widgets"
    assert served[WIDGET]["namespaced"] is True
    assert served[WIDGET]["subresources"] == ["status"]


def test_a_created_crd_is_established_with_accepted_names(client: InProcessClient) -> None:
    created = client.create(crd())

    status = created["status"]
    assert status["acceptedNames"] == {"plural": "widgets", "singular": "widget", "shortNames": ["wd"],
                                       "kind": "Widget", "listKind": "WidgetList"}
    assert status["storedVersions"] == ["v1"]
    conditions = {c["type"]: c for c in status["conditions"]}
    assert conditions["NamesAccepted"]["status"] == "True"
    assert conditions["NamesAccepted"]["reason"] == "NoConflicts"
    assert conditions["NamesAccepted"]["message"] == "no conflicts found"
    assert conditions["Established"]["status"] == "True"
    assert conditions["Established"]["reason"] == "InitialNamesAccepted"
    assert conditions["Established"]["message"] == "the initial names have been accepted"
    assert created["spec"]["names"]["listKind"] == "WidgetList"
    assert created["spec"]["conversion"] == {"strategy": "None"}
    assert "finalizers" not in created["metadata"]


def test_the_crd_name_must_be_plural_dot_group(client: InProcessClient) -> None:
    err = refused(client.create, crd("gadgets.example.com"))

    assert err.code == 422
    assert err.message == (
        'CustomResourceDefinition.apiextensions.k8s.io "gadgets.example.com" is invalid: metadata.name: '
        'Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group'
    )


def test_a_crd_needs_exactly_one_storage_version(client: InProcessClient) -> None:
    version = {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object"}}}
    err = refused(client.create, crd(versions=[version, {**version, "name": "v2"}]))

    assert err.code == 422
    causes = [(c["field"], c["message"]) for c in err.details["causes"]]
    assert [f for f, m in causes if m.endswith("must have exactly one version marked as storage version")] == [
        "spec.versions"]


def test_a_crd_scope_and_kind_are_checked(client: InProcessClient) -> None:
    bad = crd(scope="Global")
    del bad["spec"]["names"]["kind"]
    err = refused(client.create, bad)

    messages = [f"{c['field']}: {c['message']}" for c in err.details["causes"]]
    assert 'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"' in messages
    assert "spec.names.kind: Required value" in messages
    assert "spec.names.singular: Required value" in messages


def test_a_cluster_scoped_kind_serves_cluster_scoped_objects(client: InProcessClient) -> None:
    client.create(crd("gizmos.example.com", plural="gizmos", kind="Gizmo", scope="Cluster"))

    created = client.create({"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": "g"},
                             "spec": {"color": "blue"}})

    assert "namespace" not in created["metadata"]
    assert client.get("example.com/v1", "Gizmo", "g")["spec"]["color"] == "blue"


def test_schema_defaults_are_applied_on_create(client: InProcessClient) -> None:
    client.create(crd())

    created = client.create(widget("w1", {"color": "red", "limits": {"cpu": "2"}}))
    bare = client.create(widget("w2", {"color": "blue", "size": None}))

    assert created["spec"] == {"color": "red", "size": 3, "limits": {"cpu": "2", "replicas": 1}}
    assert bare["spec"] == {"color": "blue", "size": 3, "limits": {"cpu": "100m", "replicas": 1}}


def test_a_value_of_the_wrong_type_is_refused(client: InProcessClient) -> None:
    client.create(crd())

    err = refused(client.create, widget("w1", {"color": "red", "size": "big"}))

    assert err.code == 422
    assert err.message == (
        'Widget.example.com "w1" is invalid: spec.size: Invalid value: "string": '
        'spec.size in body must be of type integer: "string"'
    )
    assert err.details["causes"] == [{
        "reason": "FieldValueTypeInvalid", "field": "spec.size",
        "message": 'Invalid value: "string": spec.size in body must be of type integer: "string"',
    }]


def test_nested_and_array_type_errors_name_their_path(client: InProcessClient) -> None:
    client.create(crd())

    err = refused(client.create, widget("w1", {"color": "red", "tags": ["a", 7], "limits": {"replicas": 1.5},
                                               "enabled": "yes", "ratio": 2, "port": "http"}))

    fields = sorted(c["field"] for c in err.details["causes"])
    assert fields == ["spec.enabled", "spec.limits.replicas", "spec.tags[1]"]
    assert 'spec.tags[1] in body must be of type string: "integer"' in err.message


def test_a_value_outside_the_enum_is_refused(client: InProcessClient) -> None:
    client.create(crd())

    err = refused(client.create, widget("w1", {"color": "green"}))

    assert err.message == (
        'Widget.example.com "w1" is invalid: spec.color: Unsupported value: "green": supported values: "red", "blue"'
    )


def test_a_missing_required_property_is_refused(client: InProcessClient) -> None:
    client.create(crd())

    err = refused(client.create, widget("w1", {"size": 1}))

    assert err.message == 'Widget.example.com "w1" is invalid: spec.color: Required value'


def test_schema_checks_apply_to_updates(client: InProcessClient) -> None:
    client.create(crd())
    created = client.create(widget("w1"))

    created["spec"]["size"] = "huge"
    err = refused(client.update, created)

    assert err.code == 422
    assert "spec.size in body must be of type integer" in err.message


def test_custom_resources_refuse_strategic_merge_patches(client: InProcessClient) -> None:
    client.create(crd())
    client.create(widget("w1"))

    err = refused(client.patch, *WIDGET, "w1", {"spec": {"size": 4}}, namespace="default", patch_type=STRATEGIC)

    assert err.code == 415


def test_the_status_subresource_separates_status_from_spec(client: InProcessClient) -> None:
    client.create(crd())
    created = client.create(widget("w1"))
    assert created["metadata"]["generation"] == 1

    created["status"] = {"phase": "Ready"}
    updated = client.update(created)
    assert "status" not in updated
    assert updated["metadata"]["generation"] == 1

    updated["status"] = {"phase": "Ready"}
    assert client.update_status(updated)["status"] == {"phase": "Ready"}


def test_deleting_a_crd_deletes_its_instances_and_then_the_kind(world: World, client: InProcessClient) -> None:
    client.create(crd())
    client.create(widget("plain"))
    client.create(widget("held", finalizers=["example.com/hold"]))

    client.delete(*CRD, NAME)
    world.settle()

    terminating = client.get(*CRD, NAME)
    assert terminating["metadata"]["finalizers"] == ["customresourcecleanup.apiextensions.k8s.io"]
    condition = {c["type"]: c for c in terminating["status"]["conditions"]}["Terminating"]
    assert (condition["status"], condition["reason"], condition["message"]) == (
        "True", "InstanceDeletionInProgress", "CustomResource deletion is in progress")
    assert [w["metadata"]["name"] for w in client.list(*WIDGET)["items"]] == ["held"]
    err = refused(client.create, widget("late"))
    assert (err.code, err.message) == (405, "create not allowed while custom resource definition is terminating")

    client.patch(*WIDGET, "held", {"metadata": {"finalizers": None}}, namespace="default")
    world.advance(5)

    assert refused(client.get, *CRD, NAME).code == 404
    assert refused(client.list, *WIDGET).code == 404
    assert WIDGET not in {(r["apiVersion"], r["kind"]) for r in client.discover()}
    assert world.management.store.count(("example.com", "widgets")) == 0
    assert world.errors() == []


def test_a_crd_removed_by_force_takes_its_stored_instances_along(world: World, client: InProcessClient) -> None:
    client.create(crd())
    client.create(widget("w1", finalizers=["example.com/hold"]))
    world.set_enabled("crd-cleanup", False)
    client.delete(*CRD, NAME)
    client.patch(*CRD, NAME, {"metadata": {"finalizers": None}})
    assert refused(client.get, *CRD, NAME).code == 404

    client.create(crd())

    assert client.list(*WIDGET)["items"] == []


def test_serving_follows_crd_updates(client: InProcessClient) -> None:
    created = client.create(crd())
    v2 = {"name": "v2", "served": True, "storage": False, "schema": {"openAPIV3Schema": SCHEMA}}
    created["spec"]["versions"].append(v2)
    updated = client.update(created)
    assert updated["metadata"]["generation"] == 2

    client.create(widget("w1"))
    assert client.get("example.com/v2", "Widget", "w1", "default")["apiVersion"] == "example.com/v2"

    updated["spec"]["versions"][1]["served"] = False
    client.update(updated)
    assert refused(client.get, "example.com/v2", "Widget", "w1", "default").code == 404
    assert client.get(*WIDGET, "w1", "default")["metadata"]["name"] == "w1"


def test_the_group_of_a_crd_is_immutable(client: InProcessClient) -> None:
    created = client.create(crd())
    created["spec"]["group"] = "example.org"
    created["metadata"]["name"] = NAME

    err = refused(client.update, created)

    assert "spec.group: Invalid value: \"example.org\": field is immutable" in err.message


def test_printer_columns_and_selectable_fields_reach_the_resource_type(client: InProcessClient) -> None:
    created = client.create(crd())

    (served,) = resource_types(created)

    assert served.columns == (("Color", "string", ".spec.color", 0, ""),)
    assert served.selectable_fields == (".spec.color",)
    assert served.short_names == ("wd",)
    client.create(widget("r", {"color": "red"}))
    client.create(widget("b", {"color": "blue"}))
    selected = client.list(*WIDGET, "default", field_selector="spec.color=blue")["items"]
    assert [w["metadata"]["name"] for w in selected] == ["b"]
