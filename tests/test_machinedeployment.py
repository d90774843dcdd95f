"""The reference MachineDeployment controller: rollout arithmetic, the rolling and on-delete strategies,
revisions and its webhook (controllers/machineset)."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.machineset import rollout
from controllers.machineset.webhooks import default_machine_deployment, validate_machine_deployment
from harness.client import MERGE
from harness.kube.names.capi import CLUSTER_API_VERSION
from harness.kube.names.core import DEFAULT_NAMESPACE
from harness.world.providers.objects import fake_cluster, fake_templates, machine_template_spec
from harness.world.world import World


@pytest.mark.parametrize(("surge", "unavailable", "desired", "expected"), [
    (1, 0, 3, (1, 0)),
    ("25%", "25%", 10, (3, 2)),    # surge rounds up, unavailable down
    ("1%", "1%", 2, (1, 0)),
    (0, "1%", 2, (0, 1)),          # both zero: one unavailable
    (0, 0, 5, (0, 1)),
])
def test_fenceposts_round_surge_up_and_unavailability_down(surge: Any, unavailable: Any, desired: int,
                                                           expected: tuple[int, int]) -> None:
    assert rollout.resolve_fenceposts(surge, unavailable, desired) == expected


def _md(replicas: int, strategy: str = "RollingUpdate", surge: Any = 1) -> dict[str, Any]:
    md: dict[str, Any] = {"metadata": {"name": "md"}, "spec": {"replicas": replicas, "strategy": {"type": strategy}}}
    if strategy == "RollingUpdate":
        md["spec"]["strategy"]["rollingUpdate"] = {"maxSurge": surge, "maxUnavailable": 0}
    return md


def test_new_machineset_grows_within_the_surge_and_never_beyond_the_replicas() -> None:
    old = {"spec": {"replicas": 3}}
    assert rollout.new_ms_new_replicas(_md(3), [old], 0) == 1
    assert rollout.new_ms_new_replicas(_md(3, surge="100%"), [old], 0) == 3
    assert rollout.new_ms_new_replicas(_md(3), [old, {"spec": {"replicas": 1}}], 1) == 1
    assert rollout.new_ms_new_replicas(_md(3, "OnDelete"), [{"spec": {"replicas": 2}}], 0) == 1


def test_webhook_defaults_the_rolling_update_strategy_and_the_selector() -> None:
    md: dict[str, Any] = {"metadata": {"name": "md-0", "namespace": DEFAULT_NAMESPACE},
                          "spec": {"clusterName": "c1", "selector": {}, "template": {"spec": {}}}}
    default_machine_deployment(md)
    spec = md["spec"]
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    assert (spec["replicas"], spec["minReadySeconds"], spec["revisionHistoryLimit"],
            spec["progressDeadlineSeconds"]) == (1, 0, 1, 600)
    assert spec["selector"]["matchLabels"] == {"cluster.x-k8s.io/deployment-name": "md-0",
                                               "cluster.x-k8s.io/cluster-name": "c1"}
    assert validate_machine_deployment(md, None) == []
    md["spec"]["strategy"]["rollingUpdate"]["maxSurge"] = "lots"
    assert [e.field for e in validate_machine_deployment(md, None)] == ["spec.strategy.rollingUpdate.maxSurge"]


def _world_with_deployment(replicas: int, strategy: dict[str, Any] | None = None) -> World:
    world = World(controllers=["machine", "cluster", "machineset", "machinedeployment"])
    client = world.client()
    for obj in fake_cluster("c1", infrastructure=False) + fake_templates("t", "b"):
        client.create(obj)
    world.advance(5)
    spec: dict[str, Any] = {"clusterName": "c1", "replicas": replicas, "selector": {},
                            "template": {"spec": machine_template_spec("c1", "v1.32.0", "t", "b")}}
    if strategy is not None:
        spec["strategy"] = strategy
    client.create(
        {
            "apiVersion": CLUSTER_API_VERSION,
            "kind": "MachineDeployment",
            "metadata": {"name": "md-0", "namespace": DEFAULT_NAMESPACE},
            "spec": spec,
        }
    )
    world.advance(120)
    return world


def _upgrade(world: World) -> None:
    client = world.client()
    client.patch(
        CLUSTER_API_VERSION,
        "MachineDeployment",
        "md-0",
        {"spec": {"template": {"spec": {"version": "v1.32.1"}}}},
        namespace=DEFAULT_NAMESPACE,
        patch_type=MERGE,
    )


def test_rolling_update_replaces_machines_one_by_one_without_losing_availability() -> None:
    world = _world_with_deployment(3)
    mark = len(world.audit)
    _upgrade(world)
    world.advance(900)
    client = world.client()
    machines = client.list(CLUSTER_API_VERSION, "Machine", DEFAULT_NAMESPACE)["items"]
    assert sorted(m["spec"]["version"] for m in machines) == ["v1.32.1"] * 3
    md = client.get(CLUSTER_API_VERSION, "MachineDeployment", "md-0", DEFAULT_NAMESPACE)
    assert md["metadata"]["annotations"]["machinedeployment.clusters.x-k8s.io/revision"] == "2"
    assert (md["status"]["updatedReplicas"], md["status"]["availableReplicas"]) == (3, 3)
    # maxSurge 1, maxUnavailable 0: Machines not being deleted stay between 3 and 4 all along.
    counts = []
    present: set[str] = set()
    for record in world.audit.query(since=0, resource="machines.cluster.x-k8s.io"):
        if record.new is None:
            present.discard(record.name)
        elif not (record.new.get("metadata") or {}).get("deletionTimestamp"):
            present.add(record.name)
        else:
            present.discard(record.name)
        if record.seq > mark:
            counts.append(len(present))
    assert (min(counts), max(counts)) == (3, 4)
    sets = client.list(CLUSTER_API_VERSION, "MachineSet", DEFAULT_NAMESPACE)["items"]
    assert len(sets) == 2  # revisionHistoryLimit 1 keeps one old MachineSet, scaled to 0
    assert sorted(s["spec"]["replicas"] for s in sets) == [0, 3]


def test_on_delete_rolls_out_only_as_old_machines_are_deleted() -> None:
    world = _world_with_deployment(2, {"type": "OnDelete"})
    _upgrade(world)
    world.advance(120)
    client = world.client()
    machines = client.list(CLUSTER_API_VERSION, "Machine", DEFAULT_NAMESPACE)["items"]
    assert sorted(m["spec"]["version"] for m in machines) == ["v1.32.0", "v1.32.0"]
    client.delete(CLUSTER_API_VERSION, "Machine", machines[0]["metadata"]["name"], DEFAULT_NAMESPACE)
    world.advance(300)
    versions = sorted(
        m["spec"]["version"] for m in client.list(CLUSTER_API_VERSION, "Machine", DEFAULT_NAMESPACE)["items"]
    )
    assert versions == ["v1.32.0", "v1.32.1"]
