"""Admission for Machines and MachineDrainRules (controllers/machine/webhooks.py): defaulting, the webhooks'
validation with upstream's messages as kube-apiserver relays them, and the CRD schema rules (list sizes,
unique entries, enum)."""

from __future__ import annotations

from typing import Any

import pytest

from harness.client import ApiError
from harness.kube.names.capi import CLUSTER_API_VERSION
from harness.kube.names.core import DEFAULT_NAMESPACE
from harness.world.world import World

INFRA_REF = {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "FakeMachine", "name": "m"}
RULE_DENIED = 'admission webhook "validation.machinedrainrule.cluster.x-k8s.io" denied the request: '
MACHINE_DENIED = 'admission webhook "validation.machine.cluster.x-k8s.io" denied the request: '


@pytest.fixture(scope="module")
def world() -> World:
    return World(simulators=[], controllers=[])


def _machine(spec: dict[str, Any] | None = None, name: str = "m") -> dict[str, Any]:
    body: dict[str, Any] = {"clusterName": "c1", "bootstrap": {"dataSecretName": "data"},
                            "infrastructureRef": dict(INFRA_REF)}
    body.update(spec or {})
    return {
        "apiVersion": CLUSTER_API_VERSION,
        "kind": "Machine",
        "metadata": {"name": name, "namespace": DEFAULT_NAMESPACE},
        "spec": body,
    }


def _rule(spec: dict[str, Any], name: str = "r") -> dict[str, Any]:
    return {
        "apiVersion": CLUSTER_API_VERSION,
        "kind": "MachineDrainRule",
        "metadata": {"name": name, "namespace": DEFAULT_NAMESPACE},
        "spec": spec,
    }


def _refused(world: World, obj: dict[str, Any]) -> ApiError:
    with pytest.raises(ApiError) as caught:
        world.client().create(obj, dry_run=True)
    assert caught.value.code == 422
    assert caught.value.reason == "Invalid"
    return caught.value


# -- Machine -----------------------------------------------------------------------------------------------


def test_a_machine_gets_upstream_defaults(world: World) -> None:
    created = world.client().create(_machine({"version": "1.32.0"}), dry_run=True)
    assert created["spec"]["nodeDeletionTimeout"] == "10s"
    assert created["spec"]["version"] == "v1.32.0"
    assert created["spec"]["infrastructureRef"]["namespace"] == DEFAULT_NAMESPACE
    assert created["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"] == "c1"


def test_an_explicit_node_deletion_timeout_is_kept(world: World) -> None:
    created = world.client().create(_machine({"nodeDeletionTimeout": "0s"}), dry_run=True)
    assert created["spec"]["nodeDeletionTimeout"] == "0s"


def test_a_machine_without_bootstrap_data_is_refused(world: World) -> None:
    err = _refused(world, _machine({"bootstrap": {}}))
    assert err.message == (
        MACHINE_DENIED + 'Machine.cluster.x-k8s.io "m" is invalid: spec.bootstrap.data: Required value: expected '
        "either spec.bootstrap.dataSecretName or spec.bootstrap.configRef to be populated")
    assert err.details["causes"][0]["field"] == "spec.bootstrap.data"


def test_a_machine_referencing_another_namespace_is_refused(world: World) -> None:
    err = _refused(world, _machine({"infrastructureRef": {**INFRA_REF, "namespace": "other"}}))
    assert err.message.endswith('spec.infrastructureRef.namespace: Invalid value: "other": must match '
                                "metadata.namespace")


def test_a_machine_version_must_be_semantic(world: World) -> None:
    err = _refused(world, _machine({"version": "latest"}))
    assert err.message.endswith('spec.version: Invalid value: "vlatest": must be a valid semantic version')


def test_the_cluster_name_of_a_machine_is_immutable(world: World) -> None:
    client = world.client()
    client.create(_machine(name="immutable"))
    machine = client.get(CLUSTER_API_VERSION, "Machine", "immutable", DEFAULT_NAMESPACE)
    machine["spec"]["clusterName"] = "c2"
    with pytest.raises(ApiError) as caught:
        client.update(machine)
    assert caught.value.message.endswith("spec.clusterName: Forbidden: field is immutable")


# -- MachineDrainRule ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("behavior", ["Skip", "WaitCompleted"])
def test_an_order_is_refused_with_skip_and_wait_completed(world: World, behavior: str) -> None:
    err = _refused(world, _rule({"drain": {"behavior": behavior, "order": 5}}))
    assert err.message == (
        RULE_DENIED + 'MachineDrainRule.cluster.x-k8s.io "r" is invalid: spec.drain.order: Invalid value: 5: order '
        'must not be set if drain behavior is "Skip" or "WaitCompleted"')


def test_an_order_is_accepted_with_drain(world: World) -> None:
    created = world.client().create(_rule({"drain": {"behavior": "Drain", "order": -5}}), dry_run=True)
    assert created["spec"]["drain"]["order"] == -5


def test_an_invalid_selector_is_refused_with_the_selector_shown(world: World) -> None:
    selector = {"matchLabels": {"a": "b"}, "matchExpressions": [{"key": "app", "operator": "Near", "values": ["x"]}]}
    err = _refused(world, _rule({"drain": {"behavior": "Skip"}, "machines": [{"clusterSelector": selector}]}))
    assert err.message == (
        RULE_DENIED + 'MachineDrainRule.cluster.x-k8s.io "r" is invalid: spec.machines[0].clusterSelector: Invalid '
        'value: v1.LabelSelector{MatchLabels:map[string]string{"a":"b"}, MatchExpressions:[]v1.LabelSelectorRequirement'
        '{v1.LabelSelectorRequirement{Key:"app", Operator:"Near", Values:[]string{"x"}}}}: "Near" is not a valid label '
        "selector operator")


def test_every_invalid_selector_is_reported(world: World) -> None:
    bad = {"matchExpressions": [{"key": "k", "operator": "Exists", "values": ["v"]}]}
    entries = [{"selector": bad}, {"namespaceSelector": bad}]
    err = _refused(world, _rule({"drain": {"behavior": "Drain"}, "pods": entries}))
    assert [c["field"] for c in err.details["causes"]] == ["spec.pods[0].selector", "spec.pods[1].namespaceSelector"]


@pytest.mark.parametrize("field", ["machines", "pods"])
def test_duplicate_entries_are_refused(world: World, field: str) -> None:
    entry = {"selector": {"matchLabels": {"app": "db"}}}
    err = _refused(world, _rule({"drain": {"behavior": "Drain"}, field: [entry, dict(entry)]}))
    assert err.message == (
        f'MachineDrainRule.cluster.x-k8s.io "r" is invalid: spec.{field}: Invalid value: "array": entries in {field} '
        "must be unique")


def test_an_empty_selector_list_and_an_empty_entry_are_refused(world: World) -> None:
    err = _refused(world, _rule({"drain": {"behavior": "Drain"}, "machines": []}))
    assert err.message.endswith("spec.machines: Invalid value: 0: spec.machines in body should have at least 1 items")
    err = _refused(world, _rule({"drain": {"behavior": "Drain"}, "pods": [{}]}))
    assert err.message.endswith(
        "spec.pods[0]: Invalid value: 0: spec.pods[0] in body should have at least 1 properties")


def test_more_than_32_entries_are_refused(world: World) -> None:
    entries = [{"selector": {"matchLabels": {"i": str(i)}}} for i in range(33)]
    err = _refused(world, _rule({"drain": {"behavior": "Drain"}, "pods": entries}))
    assert err.message.endswith("spec.pods: Too many: 33: must have at most 32 items")


def test_an_unknown_behavior_is_refused_by_the_schema(world: World) -> None:
    err = _refused(world, _rule({"drain": {"behavior": "Evict"}}))
    assert err.message == ('MachineDrainRule.cluster.x-k8s.io "r" is invalid: spec.drain.behavior: Unsupported value: '
                           '"Evict": supported values: "Drain", "Skip", "WaitCompleted"')
