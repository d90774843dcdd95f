"""The fake-provider objects tests and benchmarks create (harness/world/providers/objects.py): a Machine
that references its own FakeBootstrapConfig and FakeMachine, which the providers then make ready."""

from __future__ import annotations

from harness.kube.names.capi import CLUSTER_API_VERSION
from harness.kube.names.core import DEFAULT_NAMESPACE
from harness.world.providers.objects import fake_cluster, fake_machine, fake_templates, machine_template_spec
from harness.world.world import World


def test_a_machine_references_the_bootstrap_config_and_infrastructure_machine_made_with_it() -> None:
    bootstrap, infra, machine = fake_machine("m1", "c1", control_plane=True, annotations={"a": "b"},
                                             spec={"version": "v1.32.0"})
    assert machine["spec"]["bootstrap"]["configRef"] == {
        "apiVersion": bootstrap["apiVersion"], "kind": bootstrap["kind"], "name": "m1"}
    assert machine["spec"]["infrastructureRef"] == {"apiVersion": infra["apiVersion"], "kind": infra["kind"],
                                                    "name": "m1"}
    assert machine["spec"]["clusterName"] == "c1" and machine["spec"]["version"] == "v1.32.0"
    assert machine["metadata"]["labels"] == {"cluster.x-k8s.io/control-plane": ""}
    assert machine["metadata"]["annotations"] == {"a": "b"}
    assert "annotations" not in infra["metadata"]


def test_a_machine_on_a_fake_cluster_gets_a_node() -> None:
    world = World()
    client = world.client()
    for obj in fake_cluster("c1") + fake_machine("cp", "c1", control_plane=True):
        client.create(obj)
    world.advance(60)
    machine = client.get(CLUSTER_API_VERSION, "Machine", "cp", DEFAULT_NAMESPACE)
    assert machine["status"].get("nodeRef", {}).get("name")


def test_a_template_spec_names_the_templates() -> None:
    infra, bootstrap = fake_templates("t", "b")
    spec = machine_template_spec("c1", "v1.32.0", "t", "b")
    assert spec["infrastructureRef"]["kind"] == infra["kind"] and spec["infrastructureRef"]["name"] == "t"
    assert spec["bootstrap"]["configRef"]["kind"] == bootstrap["kind"]


def test_a_cluster_without_infrastructure_is_the_cluster_alone() -> None:
    (cluster,) = fake_cluster("c1", infrastructure=False)
    assert (cluster["kind"], cluster["spec"]) == ("Cluster", {})

