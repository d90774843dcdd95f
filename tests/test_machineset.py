"""The reference MachineSet controller and its webhook: Machines from templates, status counts, delete
policies (controllers/machineset)."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.machineset import delete_policy
from controllers.machineset.api import format_label_value
from controllers.machineset.webhooks import default_machine_set, validate_machine_set
from harness.apiserver.faults import injector_of
from harness.client import MERGE, find_in
from harness.kube.errors import StatusError
from harness.kube.names.capi import BOOTSTRAP_API_VERSION, CLUSTER_API_VERSION, INFRASTRUCTURE_API_VERSION
from harness.kube.names.core import DEFAULT_NAMESPACE
from harness.world.providers.objects import fake_cluster, fake_templates, machine_template_spec
from harness.world.world import SYSTEM_USER, World


def _world_with_machine_set(replicas: int, **spec: Any) -> World:
    world = World(controllers=["machine", "cluster", "machineset"])
    client = world.client()
    worker = {"metadata": {"labels": {"tier": "worker"}}, "spec": {}}
    for obj in fake_cluster("c1", infrastructure=False) + fake_templates("t", "b", infra_template=worker):
        client.create(obj)
    world.advance(5)
    client.create(
        {
            "apiVersion": CLUSTER_API_VERSION,
            "kind": "MachineSet",
            "metadata": {"name": "ms-0", "namespace": DEFAULT_NAMESPACE},
            "spec": {
                "clusterName": "c1",
                "replicas": replicas,
                "selector": {},
                **spec,
                "template": {
                    "metadata": {"annotations": {"note": "x"}},
                    "spec": machine_template_spec("c1", "v1.32.0", "t", "b"),
                },
            },
        }
    )
    world.advance(120)
    return world


def test_machines_are_named_after_the_machineset_and_cloned_from_its_templates() -> None:
    world = _world_with_machine_set(2)
    client = world.client()
    machines = client.list(CLUSTER_API_VERSION, "Machine", DEFAULT_NAMESPACE)["items"]
    assert len(machines) == 2
    for machine in machines:
        name = machine["metadata"]["name"]
        assert name.startswith("ms-0-") and len(name) == len("ms-0-") + 5
        assert machine["metadata"]["labels"]["cluster.x-k8s.io/set-name"] == "ms-0"
        assert machine["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"] == "c1"
        assert machine["metadata"]["annotations"]["note"] == "x"
        owner = machine["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["name"], owner["controller"]) == ("MachineSet", "ms-0", True)
        infra = client.get(INFRASTRUCTURE_API_VERSION, "FakeMachine", name, DEFAULT_NAMESPACE)
        assert infra["metadata"]["annotations"]["cluster.x-k8s.io/cloned-from-name"] == "t"
        assert infra["metadata"]["annotations"]["cluster.x-k8s.io/cloned-from-groupkind"] == \
            "FakeMachineTemplate.infrastructure.cluster.x-k8s.io"
        assert infra["metadata"]["labels"]["tier"] == "worker"
        bootstrap = client.get(BOOTSTRAP_API_VERSION, "FakeBootstrapConfig", name, DEFAULT_NAMESPACE)
        assert bootstrap["metadata"]["annotations"]["cluster.x-k8s.io/cloned-from-name"] == "b"
        assert machine["spec"]["bootstrap"]["configRef"]["kind"] == "FakeBootstrapConfig"


def test_status_counts_machines_ready_and_available() -> None:
    world = _world_with_machine_set(3)
    ms = world.client().get(CLUSTER_API_VERSION, "MachineSet", "ms-0", DEFAULT_NAMESPACE)
    status = ms["status"]
    assert (status["replicas"], status["fullyLabeledReplicas"], status["readyReplicas"],
            status["availableReplicas"]) == (3, 3, 3, 3)
    assert status["selector"] == "cluster.x-k8s.io/cluster-name=c1,cluster.x-k8s.io/set-name=ms-0"
    assert "cluster.x-k8s.io/machineset" in ms["metadata"]["finalizers"]
    assert ms["metadata"]["ownerReferences"][0]["kind"] == "Cluster"


def test_a_deleted_machineset_deletes_its_machines_before_it_goes() -> None:
    world = _world_with_machine_set(2)
    world.client().delete(CLUSTER_API_VERSION, "MachineSet", "ms-0", DEFAULT_NAMESPACE)
    world.advance(120)
    assert world.client().list(CLUSTER_API_VERSION, "Machine", DEFAULT_NAMESPACE)["items"] == []
    assert world.client().list(CLUSTER_API_VERSION, "MachineSet", DEFAULT_NAMESPACE)["items"] == []


def test_disable_machine_create_stops_scale_up() -> None:
    world = _world_with_machine_set(1)
    client = world.client()
    client.patch(
        CLUSTER_API_VERSION,
        "MachineSet",
        "ms-0",
        {"metadata": {"annotations": {"cluster.x-k8s.io/disable-machine-create": "true"}}, "spec": {"replicas": 3}},
        namespace=DEFAULT_NAMESPACE,
        patch_type=MERGE,
    )
    world.advance(60)
    assert len(client.list(CLUSTER_API_VERSION, "Machine", DEFAULT_NAMESPACE)["items"]) == 1


def _machine(name: str, created: str, **extra: Any) -> dict[str, Any]:
    machine: dict[str, Any] = {"metadata": {"name": name, "creationTimestamp": created},
                               "status": {"nodeRef": {"name": name}}}
    machine["metadata"].update(extra)
    return machine


def test_delete_policies_rank_deleting_then_annotated_then_unhealthy_then_by_age() -> None:
    now = 1_000_000.0
    old, new = "1970-01-01T00:00:00Z", "1970-01-12T00:00:00Z"
    machines = [_machine("a-old", old), _machine("b-new", new)]
    assert [m["metadata"]["name"] for m in delete_policy.machines_to_delete(
        machines, 1, delete_policy.oldest_priority, now)] == ["a-old"]
    assert [m["metadata"]["name"] for m in delete_policy.machines_to_delete(
        machines, 1, delete_policy.newest_priority, now)] == ["b-new"]
    annotated = _machine("c", new, annotations={"cluster.x-k8s.io/delete-machine": ""})
    unhealthy = {"metadata": {"name": "d", "creationTimestamp": old}, "status": {}}
    deleting = _machine("e", new, deletionTimestamp=new)
    ranked = delete_policy.machines_to_delete(machines + [annotated, unhealthy, deleting], 3,
                                              delete_policy.random_priority, now)
    assert [m["metadata"]["name"] for m in ranked] == ["e", "c", "d"]
    with pytest.raises(Exception, match="Unsupported delete policy Largest"):
        delete_policy.priority_for("Largest")


def test_webhook_defaults_selector_delete_policy_and_replicas() -> None:
    ms: dict[str, Any] = {"metadata": {"name": "ms-0", "namespace": DEFAULT_NAMESPACE},
                          "spec": {"clusterName": "c1", "selector": {}, "template": {"spec": {"version": "1.32.0"}}}}
    default_machine_set(ms)
    assert ms["spec"]["replicas"] == 1 and ms["spec"]["deletePolicy"] == "Random"
    assert ms["spec"]["selector"]["matchLabels"] == {"cluster.x-k8s.io/set-name": "ms-0"}
    assert ms["spec"]["template"]["metadata"]["labels"]["cluster.x-k8s.io/set-name"] == "ms-0"
    assert ms["spec"]["template"]["spec"]["version"] == "v1.32.0"
    assert validate_machine_set(ms, None) == []


def test_a_machineset_whose_selector_misses_its_template_labels_is_refused() -> None:
    world = World(controllers=[])
    with pytest.raises(StatusError) as refused:
        world.client().create(
            {
                "apiVersion": CLUSTER_API_VERSION,
                "kind": "MachineSet",
                "metadata": {"name": "ms-0", "namespace": DEFAULT_NAMESPACE},
                "spec": {
                    "clusterName": "c1",
                    "selector": {"matchLabels": {"app": "a"}},
                    "template": {"metadata": {"labels": {"app": "b"}}, "spec": {}},
                },
            }
        )
    assert refused.value.code == 422
    assert refused.value.message.startswith(
        'admission webhook "validation.machineset.cluster.x-k8s.io" denied the request: ')
    assert 'must match spec.selector "app=a"' in refused.value.message


def test_long_names_become_hashed_label_values() -> None:
    assert format_label_value("short") == "short"
    long_name = "m" * 64
    value = format_label_value(long_name)
    assert value.startswith("hash_") and value.endswith("_z") and len(value) < 63


def test_machines_that_could_not_be_listed_are_neither_replaced_nor_forgotten() -> None:
    world = _world_with_machine_set(2)
    client = world.client()
    before = sorted(
        m["metadata"]["name"] for m in client.list(CLUSTER_API_VERSION, "Machine", DEFAULT_NAMESPACE)["items"]
    )
    # The MachineSet controller's next list of Machines fails: upstream then skips scaling and status.
    injector_of(world.clusters).add({"fault": "InternalError", "users": [SYSTEM_USER.format("machineset")],
                                     "verbs": ["list"], "resource": "machines", "count": 1})
    client.patch(
        CLUSTER_API_VERSION,
        "MachineSet",
        "ms-0",
        {"metadata": {"annotations": {"touch": "1"}}},
        namespace=DEFAULT_NAMESPACE,
        patch_type=MERGE,
    )
    world.settle()
    assert (
        sorted(m["metadata"]["name"] for m in client.list(CLUSTER_API_VERSION, "Machine", DEFAULT_NAMESPACE)["items"])
        == before
    )
    assert client.get(CLUSTER_API_VERSION, "MachineSet", "ms-0", DEFAULT_NAMESPACE)["status"]["replicas"] == 2
    injector_of(world.clusters).add({"fault": "InternalError", "users": [SYSTEM_USER.format("machineset")],
                                     "verbs": ["list"], "resource": "machines", "count": 1})
    client.delete(CLUSTER_API_VERSION, "MachineSet", "ms-0", DEFAULT_NAMESPACE)
    world.settle()
    assert (
        "cluster.x-k8s.io/machineset"
        in client.get(CLUSTER_API_VERSION, "MachineSet", "ms-0", DEFAULT_NAMESPACE)["metadata"]["finalizers"]
    )
    world.advance(600)
    assert client.list(CLUSTER_API_VERSION, "Machine", DEFAULT_NAMESPACE)["items"] == []
    assert find_in(client, CLUSTER_API_VERSION, "MachineSet", "ms-0", DEFAULT_NAMESPACE) is None
