"""Sentences about the Cluster API core controllers around machine deletion: a Cluster with its
infrastructure cluster and control plane object, MachineDeployments and MachineSets that make Machines
from templates, scaling them down, deleting a Cluster, and what the audit trail shows of it.

Machines a MachineSet makes have generated names, so sentences name them by role: "the oldest /
middle / newest Machine of the MachineSet" (by creation, as the MachineSet had them when the scenario
set them up) and "the deleted Machine of the <kind>" (the one Machine of that MachineDeployment or
MachineSet that is marked for deletion). Templates are a FakeMachineTemplate and a
FakeBootstrapConfigTemplate named after the MachineDeployment or MachineSet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from pytest_bdd import given, then, when

from features.steps.context import ScenarioContext, sentence
from features.steps.machines import (
    CAPI_KINDS,
    FAKE_MACHINE_TEMPLATE,
    CapiScene,
    await_state,
    condition,
    deleting_reason,
    first_deletion_seq,
    parse_annotation,
    records_of,
    workload,
)
from harness.kube.client import MERGE, ApiError, find_in
from harness.kube.names.capi import (
    BOOTSTRAP_API_VERSION,
    CLUSTER_API_VERSION,
    CLUSTER_KIND,
    CLUSTERS_RESOURCE,
    CONTROL_PLANE_API_VERSION,
    CONTROL_PLANE_INITIALIZED,
    FAKE_CLUSTER_KIND,
    INFRASTRUCTURE_API_VERSION,
    KUBEADM_CONTROL_PLANE_KIND,
    MACHINE_DEPLOYMENT_KIND,
    MACHINE_DEPLOYMENT_NAME_LABEL,
    MACHINE_KIND,
    MACHINE_SET_KIND,
    MACHINE_SET_NAME_LABEL,
)
from harness.kube.names.core import KUBERNETES_VERSION

FAKE_BOOTSTRAP_CONFIG_TEMPLATE = "FakeBootstrapConfigTemplate"
CLUSTER_KINDS = {
    MACHINE_DEPLOYMENT_KIND: CLUSTER_API_VERSION,
    MACHINE_SET_KIND: CLUSTER_API_VERSION,
    FAKE_CLUSTER_KIND: INFRASTRUCTURE_API_VERSION,
    FAKE_MACHINE_TEMPLATE: INFRASTRUCTURE_API_VERSION,
    FAKE_BOOTSTRAP_CONFIG_TEMPLATE: BOOTSTRAP_API_VERSION,
}

INITIALIZED = "Initialized"
# A MachineSet's Machines in the order of their creation, named by role.
ROLES = ("oldest", "middle", "newest")
# How far apart "created a minute apart" is.
MINUTE = 60.0
SETUP_SECONDS = 900.0


@dataclass
class MachineRoles:
    """The Machines of each MachineSet by role, as the scenario set them up."""

    by_set: dict[str, list[str]] = field(default_factory=dict)

    def name(self, machine_set: str, role: str) -> str:
        machines = self.by_set.get(machine_set) or []
        assert role in ROLES, f"a Machine's role is one of {ROLES}, not {role!r}"
        index = {"oldest": 0, "middle": len(machines) // 2, "newest": len(machines) - 1}[role]
        assert machines, f"the scenario did not set up the Machines of the MachineSet {machine_set}"
        return machines[index]


@pytest.fixture
def roles() -> MachineRoles:
    """The Machines of the scenario's MachineSets, by role."""
    return MachineRoles()


def _register_kinds(ctx: ScenarioContext) -> None:
    ctx.kinds.update(CAPI_KINDS)
    ctx.kinds.update(CLUSTER_KINDS)


def _ref(api_version: str, kind: str, name: str) -> dict[str, str]:
    return {"apiVersion": api_version, "kind": kind, "name": name}


def _create_templates(ctx: ScenarioContext, capi: CapiScene, name: str) -> dict[str, Any]:
    """A FakeMachineTemplate and a FakeBootstrapConfigTemplate named ``name``; the Machine template spec."""
    for api_version, kind in ((INFRASTRUCTURE_API_VERSION, FAKE_MACHINE_TEMPLATE),
                              (BOOTSTRAP_API_VERSION, FAKE_BOOTSTRAP_CONFIG_TEMPLATE)):
        ctx.setup(lambda api_version=api_version, kind=kind: ctx.client.create({
            "apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": capi.namespace},
            "spec": {"template": {"spec": {}}}}))
    return {"clusterName": capi.cluster, "version": KUBERNETES_VERSION,
            "bootstrap": {"configRef": _ref(BOOTSTRAP_API_VERSION, FAKE_BOOTSTRAP_CONFIG_TEMPLATE, name)},
            "infrastructureRef": _ref(INFRASTRUCTURE_API_VERSION, FAKE_MACHINE_TEMPLATE, name)}


def _owned_machines(ctx: ScenarioContext, capi: CapiScene, kind: str, name: str) -> list[dict[str, Any]]:
    """The Machines a MachineDeployment or MachineSet made (by the label it gives them)."""
    label = {MACHINE_DEPLOYMENT_KIND: MACHINE_DEPLOYMENT_NAME_LABEL, MACHINE_SET_KIND: MACHINE_SET_NAME_LABEL}.get(kind)
    assert label, f"Machines are made by a MachineDeployment or a MachineSet, not a {kind}"
    return ctx.client.list(CLUSTER_API_VERSION, MACHINE_KIND, capi.namespace, label_selector=f"{label}={name}")["items"]


def _running_count(ctx: ScenarioContext, capi: CapiScene, kind: str, name: str) -> int:
    """How many of its Machines have a Ready Node."""
    count = 0
    for machine in _owned_machines(ctx, capi, kind, name):
        node = ((machine.get("status") or {}).get("nodeRef") or {}).get("name")
        if node and machine["metadata"].get("deletionTimestamp") is None:
            ready = condition(find_in(workload(ctx, capi), "v1", "Node", str(node), None), "Ready")
            count += bool(ready and ready.get("status") == "True")
    return count


def _await_running(ctx: ScenarioContext, capi: CapiScene, kind: str, name: str, count: int) -> None:
    await_state(ctx, f"{count} running Machines of the {kind} {name}",
                lambda: _running_count(ctx, capi, kind, name) >= count
                and len(_owned_machines(ctx, capi, kind, name)) == count, SETUP_SECONDS)


def _deleted_machine(ctx: ScenarioContext, capi: CapiScene, kind: str, name: str) -> dict[str, Any] | None:
    """The one Machine of the owner that is marked for deletion (None when none is)."""
    deleting = [m for m in _owned_machines(ctx, capi, kind, name) if m["metadata"].get("deletionTimestamp")]
    assert len(deleting) <= 1, f"more than one Machine of the {kind} {name} is being deleted: " \
                               f"{[m['metadata']['name'] for m in deleting]}"
    return deleting[0] if deleting else None


def _scale(ctx: ScenarioContext, capi: CapiScene, kind: str, name: str, count: int) -> Any:
    return ctx.client.patch(CLUSTER_API_VERSION, kind, name, {"spec": {"replicas": count}}, namespace=capi.namespace,
                            patch_type=MERGE)


# -- Given -------------------------------------------------------------------------------------------


@given(sentence('a Cluster "{name:Q}" with the infrastructure cluster FakeCluster "{infra:Q}" and the control plane '
                'KubeadmControlPlane "{kcp:Q}" running'))
def given_full_cluster(ctx: ScenarioContext, capi: CapiScene, name: str, infra: str, kcp: str) -> None:
    _register_kinds(ctx)
    capi.cluster = name
    namespace = capi.namespace
    template = f"{kcp}-template"
    ctx.setup(lambda: ctx.client.create({"apiVersion": INFRASTRUCTURE_API_VERSION, "kind": FAKE_MACHINE_TEMPLATE,
                                         "metadata": {"name": template, "namespace": namespace},
                                         "spec": {"template": {"spec": {}}}}))
    ctx.setup(lambda: ctx.client.create({"apiVersion": INFRASTRUCTURE_API_VERSION, "kind": FAKE_CLUSTER_KIND,
                                         "metadata": {"name": infra, "namespace": namespace}, "spec": {}}))
    ctx.setup(
        lambda: ctx.client.create(
            {
                "apiVersion": CONTROL_PLANE_API_VERSION,
                "kind": KUBEADM_CONTROL_PLANE_KIND,
                "metadata": {"name": kcp, "namespace": namespace},
                "spec": {
                    "replicas": 1,
                    "version": KUBERNETES_VERSION,
                    "kubeadmConfigSpec": {},
                    "machineTemplate": {
                        "infrastructureRef": _ref(INFRASTRUCTURE_API_VERSION, FAKE_MACHINE_TEMPLATE, template)
                    },
                },
            }
        )
    )
    ctx.setup(lambda: ctx.client.create({
        "apiVersion": CLUSTER_API_VERSION, "kind": CLUSTER_KIND, "metadata": {"name": name, "namespace": namespace},
        "spec": {"infrastructureRef": _ref(INFRASTRUCTURE_API_VERSION, FAKE_CLUSTER_KIND, infra),
                 "controlPlaneRef": _ref(CONTROL_PLANE_API_VERSION, KUBEADM_CONTROL_PLANE_KIND, kcp)}}))

    def control_plane_ready() -> bool:
        cluster = find_in(ctx.client, CLUSTER_API_VERSION, CLUSTER_KIND, name, namespace)
        return bool(((cluster or {}).get("status") or {}).get("controlPlaneReady"))

    await_state(ctx, f"the control plane of the Cluster {name} ready", control_plane_ready, SETUP_SECONDS)


@given(sentence('a Cluster "{name:Q}" with a managed topology'))
def given_topology_cluster(ctx: ScenarioContext, capi: CapiScene, name: str) -> None:
    _register_kinds(ctx)
    capi.cluster = name
    ctx.setup(
        lambda: ctx.client.create(
            {
                "apiVersion": CLUSTER_API_VERSION,
                "kind": CLUSTER_KIND,
                "metadata": {"name": name, "namespace": capi.namespace},
                "spec": {"topology": {"class": f"{name}-class", "version": KUBERNETES_VERSION}},
            }
        )
    )

    def reachable() -> bool:
        try:
            workload(ctx, capi).list("v1", "Namespace")
        except (ConnectionError, ApiError):
            return False
        return True

    await_state(ctx, f"the workload cluster of {name}", reachable)


def _machine_deployment(ctx: ScenarioContext, capi: CapiScene, name: str, count: int,
                        annotations: dict[str, str]) -> None:
    _register_kinds(ctx)
    template_spec = _create_templates(ctx, capi, name)
    template: dict[str, Any] = {"spec": template_spec}
    if annotations:
        template["metadata"] = {"annotations": annotations}
    ctx.setup(lambda: ctx.client.create({
        "apiVersion": CLUSTER_API_VERSION, "kind": MACHINE_DEPLOYMENT_KIND,
        "metadata": {"name": name, "namespace": capi.namespace},
        "spec": {"clusterName": capi.cluster, "replicas": count, "selector": {}, "template": template}}))
    _await_running(ctx, capi, MACHINE_DEPLOYMENT_KIND, name, count)


@given(sentence('a MachineDeployment "{name:Q}" of the Cluster with {count:Int} running Machines'))
def given_machine_deployment(ctx: ScenarioContext, capi: CapiScene, name: str, count: int) -> None:
    _machine_deployment(ctx, capi, name, count, {})


@given(sentence('a MachineDeployment "{name:Q}" of the Cluster with {count:Int} running Machines annotated '
                '"{annotation:Q}"'))
def given_annotated_machine_deployment(ctx: ScenarioContext, capi: CapiScene, name: str, count: int,
                                       annotation: str) -> None:
    _machine_deployment(ctx, capi, name, count, dict([parse_annotation(annotation)]))


@given(sentence('a MachineDeployment "{name:Q}" of the Cluster with one running Machine annotated "{annotation:Q}"'))
def given_annotated_single_machine_deployment(ctx: ScenarioContext, capi: CapiScene, name: str,
                                              annotation: str) -> None:
    _machine_deployment(ctx, capi, name, 1, dict([parse_annotation(annotation)]))


@given(sentence('a MachineSet "{name:Q}" of the Cluster with the delete policy "{policy:Q}" and {count:Int} running '
                'Machines created a minute apart'))
def given_machine_set(ctx: ScenarioContext, capi: CapiScene, roles: MachineRoles, name: str, policy: str,
                      count: int) -> None:
    _register_kinds(ctx)
    template_spec = _create_templates(ctx, capi, name)
    ctx.setup(
        lambda: ctx.client.create(
            {
                "apiVersion": CLUSTER_API_VERSION,
                "kind": MACHINE_SET_KIND,
                "metadata": {"name": name, "namespace": capi.namespace},
                "spec": {
                    "clusterName": capi.cluster,
                    "replicas": 1,
                    "deletePolicy": policy,
                    "selector": {},
                    "template": {"spec": template_spec},
                },
            }
        )
    )
    _await_running(ctx, capi, MACHINE_SET_KIND, name, 1)
    for wanted in range(2, count + 1):
        ctx.scene.advance(MINUTE)
        ctx.setup(lambda wanted=wanted: _scale(ctx, capi, MACHINE_SET_KIND, name, wanted))
        _await_running(ctx, capi, MACHINE_SET_KIND, name, wanted)
    machines = sorted(_owned_machines(ctx, capi, MACHINE_SET_KIND, name),
                      key=lambda m: (m["metadata"]["creationTimestamp"], m["metadata"]["name"]))
    roles.by_set[name] = [m["metadata"]["name"] for m in machines]


@given(sentence('the {role:Word} Machine of the MachineSet "{name:Q}" has been annotated "{annotation:Q}"'))
def given_role_annotated(ctx: ScenarioContext, capi: CapiScene, roles: MachineRoles, role: str, name: str,
                         annotation: str) -> None:
    key, value = parse_annotation(annotation)
    machine = roles.name(name, role)
    ctx.setup(
        lambda: ctx.client.patch(
            CLUSTER_API_VERSION,
            MACHINE_KIND,
            machine,
            {"metadata": {"annotations": {key: value}}},
            namespace=capi.namespace,
            patch_type=MERGE,
        )
    )


# -- When --------------------------------------------------------------------------------------------


@when(sentence('the {kind:Kind} "{name:Q}" is scaled to {count:Int} replicas'))
def when_scaled(ctx: ScenarioContext, capi: CapiScene, kind: str, name: str, count: int) -> None:
    ctx.act(lambda: _scale(ctx, capi, kind, name, count))


@when(sentence('the hook owner "{owner:Q}" removes the annotation "{key:Q}" from the deleted Machine of the '
               '{kind:Kind} "{name:Q}"'))
def when_owner_removes_from_deleted(ctx: ScenarioContext, capi: CapiScene, owner: str, key: str, kind: str,
                                    name: str) -> None:
    machine = _deleted_machine(ctx, capi, kind, name)
    assert machine is not None, f"no Machine of the {kind} {name} is being deleted"
    client = ctx.scene.client(user=owner)
    ctx.act(lambda: client.patch(CLUSTER_API_VERSION, MACHINE_KIND, machine["metadata"]["name"],
                                 {"metadata": {"annotations": {key: None}}}, namespace=capi.namespace,
                                 patch_type=MERGE))


# -- Then --------------------------------------------------------------------------------------------


@then(sentence('the {role:Word} Machine of the MachineSet "{name:Q}" is marked for deletion and the other Machines '
               'are not'))
def then_role_deleted(ctx: ScenarioContext, capi: CapiScene, roles: MachineRoles, role: str, name: str) -> None:
    wanted = roles.name(name, role)
    deleting = sorted(m["metadata"]["name"] for m in _owned_machines(ctx, capi, MACHINE_SET_KIND, name)
                      if m["metadata"].get("deletionTimestamp"))
    assert deleting == [wanted], (
        f"expected only the {role} Machine {wanted} of {roles.by_set.get(name)} marked for deletion, got {deleting}")


@then(sentence('one Machine of the {kind:Kind} "{name:Q}" is marked for deletion and the other Machines are not'))
def then_one_deleted(ctx: ScenarioContext, capi: CapiScene, kind: str, name: str) -> None:
    machines = _owned_machines(ctx, capi, kind, name)
    deleting = [m["metadata"]["name"] for m in machines if m["metadata"].get("deletionTimestamp")]
    assert len(deleting) == 1, f"expected one of {[m['metadata']['name'] for m in machines]} marked, got {deleting}"


@then(sentence('within {seconds:Int} seconds the deleted Machine of the {kind:Kind} "{name:Q}" is deleting with '
               'reason "{reason:Q}"'))
def then_deleted_machine_reason(ctx: ScenarioContext, capi: CapiScene, seconds: int, kind: str, name: str,
                                reason: str) -> None:
    assert ctx.wait_until(lambda: deleting_reason(_deleted_machine(ctx, capi, kind, name)) == reason, seconds), (
        f"the deleted Machine of the {kind} {name} is at {deleting_reason(_deleted_machine(ctx, capi, kind, name))!r}"
    )


@then(sentence('the Node of the deleted Machine of the {kind:Kind} "{name:Q}" was never cordoned'))
def then_deleted_machine_not_cordoned(ctx: ScenarioContext, capi: CapiScene, kind: str, name: str) -> None:
    machine = _deleted_machine(ctx, capi, kind, name)
    assert machine is not None, f"no Machine of the {kind} {name} is being deleted"
    node = str(((machine.get("status") or {}).get("nodeRef") or {}).get("name") or machine["metadata"]["name"])
    cordons = [r for r in records_of(ctx, "Node", node)
               if ((r["new"] or {}).get("spec") or {}).get("unschedulable")]
    assert not cordons, f"the Node {node} was cordoned at {cordons[0]['time']}"


@then(sentence('within {seconds:Int} seconds the {kind:Kind} "{name:Q}" has {count:Int} running Machines and none '
               'being deleted'))
def then_running_machines(ctx: ScenarioContext, capi: CapiScene, seconds: int, kind: str, name: str,
                          count: int) -> None:
    def settled() -> bool:
        machines = _owned_machines(ctx, capi, kind, name)
        return len(machines) == count and _running_count(ctx, capi, kind, name) == count

    assert ctx.wait_until(settled, seconds), (
        f"the {kind} {name} has {[m['metadata']['name'] for m in _owned_machines(ctx, capi, kind, name)]}")


@then(sentence('the Cluster "{name:Q}" is deleting with reason "{reason:Q}"'))
def then_cluster_deleting(ctx: ScenarioContext, capi: CapiScene, name: str, reason: str) -> None:
    cluster = find_in(ctx.client, CLUSTER_API_VERSION, CLUSTER_KIND, name, capi.namespace)
    assert deleting_reason(cluster) == reason, (
        f"the Cluster {name} is deleting with {condition(cluster, 'Deleting', v1beta2=True)}")


@then(sentence('the Cluster "{name:Q}" reports its control plane initialized'))
def then_control_plane_initialized(ctx: ScenarioContext, capi: CapiScene, name: str) -> None:
    cluster = find_in(ctx.client, CLUSTER_API_VERSION, CLUSTER_KIND, name, capi.namespace)
    v1beta1 = condition(cluster, CONTROL_PLANE_INITIALIZED)
    v1beta2 = condition(cluster, CONTROL_PLANE_INITIALIZED, v1beta2=True)
    assert v1beta1 is not None and v1beta1.get("status") == "True", f"v1beta1 {CONTROL_PLANE_INITIALIZED}: {v1beta1}"
    assert v1beta2 is not None and v1beta2.get("status") == "True" and v1beta2.get("reason") == INITIALIZED, (
        f"v1beta2 {CONTROL_PLANE_INITIALIZED}: {v1beta2}")


def _annotated_seq(ctx: ScenarioContext, capi: CapiScene, name: str, key: str) -> int | None:
    for record in ctx.scene.audit(resource=CLUSTERS_RESOURCE, name=name, namespace=capi.namespace):
        if key in (((record["new"] or {}).get("metadata") or {}).get("annotations") or {}):
            return int(record["seq"])
    return None


@then(sentence('the {kind:Kind} "{ref:Q}" was deleted only after the Cluster "{name:Q}" was annotated "{key:Q}"'))
def then_deleted_after_annotated(ctx: ScenarioContext, capi: CapiScene, kind: str, ref: str, name: str,
                                 key: str) -> None:
    target = ctx.ref(kind, ref)
    deleted = first_deletion_seq(records_of(ctx, kind, target.name, target.namespace or ""))
    annotated = _annotated_seq(ctx, capi, name, key)
    assert deleted is not None, f"{target} was never deleted"
    assert annotated is not None and annotated < deleted, (
        f"{target} was deleted (#{deleted}) before the Cluster {name} carried {key!r} ({annotated})")


@then(sentence('the Cluster "{name:Q}" never carried the annotation "{key:Q}"'))
def then_never_annotated(ctx: ScenarioContext, capi: CapiScene, name: str, key: str) -> None:
    assert _annotated_seq(ctx, capi, name, key) is None, f"the Cluster {name} carried {key!r}"


@then(sentence('the Cluster "{name:Q}" never reported the deletion stage "{reason:Q}"'))
def then_cluster_never_stage(ctx: ScenarioContext, capi: CapiScene, name: str, reason: str) -> None:
    seen = [deleting_reason(r["new"]) for r in ctx.scene.audit(resource=CLUSTERS_RESOURCE, name=name,
                                                               namespace=capi.namespace)]
    assert reason not in seen, f"the Cluster {name} reported {reason!r}"

