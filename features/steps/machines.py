"""Sentences about Cluster API Machines and their deletion: a Cluster with its workload cluster, running
Machines (with their FakeMachine, FakeBootstrapConfig and Node), lifecycle hooks and who removes them,
and what a Machine being deleted shows -- its conditions, events, the stages and writes of its deletion.

Every Machine lives in the namespace ``default`` of the management cluster and belongs to the scenario's
Cluster (the one the Background creates). Its FakeMachine and FakeBootstrapConfig have its name; the fake
infrastructure provider gives it a Node of the same name in the workload cluster ``default/<cluster>``.

Hook owners (hook implementing controllers) are played by the steps: a hook owner acts as the user named
by the owner, an administrator as ``kubernetes-admin`` (what kubectl with an admin kubeconfig sends).
Annotations are written ``key: value`` (or ``key`` for an empty value).
"""

from __future__ import annotations

from dataclasses import (
    dataclass,
    field,
)
from typing import Any

import pytest
from pytest_bdd import (
    given,
    then,
    when,
)

from features.steps.context import (
    ScenarioContext,
    labels_of,
    sentence,
)
from harness.kube.client import (
    MERGE,
    ApiError,
    Client,
    find_in,
)
from harness.kube.names.capi import (
    BOOTSTRAP_API_VERSION,
    CLUSTER_API_VERSION,
    CLUSTER_KIND,
    CLUSTER_NAME_LABEL,
    CONTROL_PLANE_API_VERSION,
    CONTROL_PLANE_LABEL,
    DELETING,
    DRAINING_NODE_REASON,
    DRAINING_SUCCEEDED,
    FAKE_BOOTSTRAP_CONFIG_KIND,
    FAKE_MACHINE_KIND,
    INFRASTRUCTURE_API_VERSION,
    KUBEADM_CONTROL_PLANE_KIND,
    MACHINE_DRAIN_RULE_KIND,
    MACHINE_KIND,
    PRE_DRAIN_DELETE_HOOK_PREFIX,
    PRE_TERMINATE_DELETE_HOOK_PREFIX,
    WAITING_FOR_PRE_TERMINATE_HOOK_REASON,
    WAITING_FOR_VOLUME_DETACH_REASON,
)
from harness.kube.names.core import DISRUPTION_TARGET, EVICTION_BY_EVICTION_API, KUBERNETES_VERSION
from harness.kube.names.knobs import DELETION_DELAY_ANNOTATION, DELETION_STUCK_ANNOTATION, PROVISION_DELAY_ANNOTATION
from harness.kube.time import parse_rfc3339

# -- Cluster API facts the sentences name ------------------------------------------------------------
FAKE_MACHINE_TEMPLATE = "FakeMachineTemplate"
# The kinds the machine deletion sentences name, beyond Kubernetes' (all namespaced).
CAPI_KINDS = {
    CLUSTER_KIND: CLUSTER_API_VERSION,
    MACHINE_KIND: CLUSTER_API_VERSION,
    MACHINE_DRAIN_RULE_KIND: CLUSTER_API_VERSION,
    FAKE_MACHINE_KIND: INFRASTRUCTURE_API_VERSION,
    FAKE_BOOTSTRAP_CONFIG_KIND: BOOTSTRAP_API_VERSION,
    KUBEADM_CONTROL_PLANE_KIND: CONTROL_PLANE_API_VERSION,
}
# Audit resources (plural.group) of the kinds whose writes the sentences look at.
AUDIT_RESOURCES = {
    MACHINE_KIND: "machines.cluster.x-k8s.io",
    FAKE_MACHINE_KIND: "fakemachines.infrastructure.cluster.x-k8s.io",
    FAKE_BOOTSTRAP_CONFIG_KIND: "fakebootstrapconfigs.bootstrap.cluster.x-k8s.io",
    "Node": "nodes",
    "Pod": "pods",
    "VolumeAttachment": "volumeattachments.storage.k8s.io",
}


# v1beta2 Deleting condition (status.v1beta2.conditions) and the reasons the steps act on.
WAITING_FOR_HOOKS = {"pre-drain": "WaitingForPreDrainHook", "pre-terminate": WAITING_FOR_PRE_TERMINATE_HOOK_REASON}
# What the eviction API writes on a Pod before deleting it.

# Knobs of the fake providers (harness/world/providers/knobs.py).
NEVER = "100000h"

ADMINISTRATOR = "kubernetes-admin"
# How long Given-steps wait (virtual seconds) for the world to bring Machines and Clusters up.
SETUP_SECONDS = 600.0
# How long a simulated hook owner works before it removes its hook, and how long it keeps watching.
HOOK_OWNER_WORK_SECONDS = 30.0
HOOK_OWNERS_WATCH_SECONDS = 3600.0
# Two hook owners removing their hooks "one then the other" do so this far apart.
OWNERS_APART_SECONDS = 10.0
# Markers a condition message in a feature may carry, filled from the audit trail (see README.md).
DRAIN_START = "<drain start>"
VOLUME_WAIT_START = "<volume wait start>"
# Machine settings a "with:" table may give.
TIMEOUT_SETTINGS = ("nodeDrainTimeout", "nodeVolumeDetachTimeout", "nodeDeletionTimeout")


@dataclass
class CapiScene:
    """The scenario's Cluster API side: its Cluster and the Nodes of its Machines."""

    namespace: str = "default"
    cluster: str = ""
    nodes: dict[str, str] = field(default_factory=dict)

    @property
    def workload(self) -> str:
        return f"{self.namespace}/{self.cluster}"


@pytest.fixture
def capi() -> CapiScene:
    """What the scenario knows of its Cluster API objects."""
    return CapiScene()


# -- helpers shared with drain.py and volume_detach.py ------------------------------------------------


def workload(ctx: ScenarioContext, capi: CapiScene, user: str = "admin") -> Client:
    """A client of the scenario's workload cluster."""
    assert capi.cluster, "the scenario has no Cluster (its Background creates one)"
    return ctx.scene.client(capi.workload, user)


def node_of(capi: CapiScene, machine: str) -> str:
    """The name of the Machine's Node (its own name, as the fake infrastructure provider names it)."""
    return capi.nodes.get(machine, machine)


def parse_annotation(text: str) -> tuple[str, str]:
    """``key: value`` (or ``key``) as ``(key, value)``."""
    key, _, value = text.partition(":")
    return key.strip(), value.strip()


def await_state(ctx: ScenarioContext, what: str, check: Any, seconds: float = SETUP_SECONDS) -> None:
    """Advance virtual time until ``check()`` holds; fail naming ``what`` otherwise."""
    assert ctx.wait_until(check, seconds), f"the world did not bring about {what} in {seconds:.0f} s"


def conditions_of(obj: dict[str, Any] | None, *, v1beta2: bool = False) -> list[dict[str, Any]]:
    """v1beta1 ``status.conditions``, or v1beta2 ``status.v1beta2.conditions``."""
    status = (obj or {}).get("status") or {}
    if v1beta2:
        status = status.get("v1beta2") or {}
    return list(status.get("conditions") or [])


def condition(obj: dict[str, Any] | None, condition_type: str, *, v1beta2: bool = False) -> dict[str, Any] | None:
    for item in conditions_of(obj, v1beta2=v1beta2):
        if item.get("type") == condition_type:
            return item
    return None


def deleting_reason(obj: dict[str, Any] | None) -> str | None:
    """The reason of the Deleting condition while it is True (None otherwise)."""
    item = condition(obj, DELETING, v1beta2=True)
    if item is None or item.get("status") != "True":
        return None
    return str(item.get("reason") or "")


def machine_records(ctx: ScenarioContext, capi: CapiScene, name: str) -> list[dict[str, Any]]:
    """Every audited write of the Machine, oldest first."""
    return ctx.scene.audit(resource=AUDIT_RESOURCES[MACHINE_KIND], name=name, namespace=capi.namespace)


def records_of(ctx: ScenarioContext, kind: str, name: str, namespace: str = "") -> list[dict[str, Any]]:
    """Every audited write of an object of ``kind`` named ``name`` (any cluster), oldest first."""
    resource = AUDIT_RESOURCES.get(kind)
    records = ctx.scene.audit(resource=resource, name=name) if resource else ctx.scene.audit(name=name)
    return [r for r in records if not namespace or r["namespace"] == namespace]


def first_deletion_seq(records: list[dict[str, Any]]) -> int | None:
    """The write that first marked the object for deletion (or removed it)."""
    for record in records:
        new, old = record["new"], record["old"]
        if new is None and old is not None:
            return int(record["seq"])
        if new is not None and new["metadata"].get("deletionTimestamp") and not (
                old and old["metadata"].get("deletionTimestamp")):
            return int(record["seq"])
    return None


def removal_seq(records: list[dict[str, Any]]) -> int | None:
    """The write that removed the object from storage."""
    for record in records:
        if record["new"] is None and record["old"] is not None:
            return int(record["seq"])
    return None


def deletion_time(ctx: ScenarioContext, capi: CapiScene, name: str) -> float:
    """When the Machine was marked for deletion."""
    for record in machine_records(ctx, capi, name):
        stamp = (record["new"] or {}).get("metadata", {}).get("deletionTimestamp")
        if stamp:
            return parse_rfc3339(stamp)
    raise AssertionError(f"the Machine {name} was never marked for deletion")


def stage_time(ctx: ScenarioContext, capi: CapiScene, name: str, reason: str) -> tuple[int, str]:
    """The first write showing the Machine at the deletion stage ``reason``: ``(seq, time)``."""
    for record in machine_records(ctx, capi, name):
        if deleting_reason(record["new"]) == reason:
            return int(record["seq"]), str(record["time"])
    raise AssertionError(f"the Machine {name} never reported the deletion stage {reason!r}")


def fill_markers(ctx: ScenarioContext, capi: CapiScene, name: str, text: str) -> str:
    """Replace ``<drain start>``/``<volume wait start>`` with when the Machine reached that stage."""
    if DRAIN_START in text:
        text = text.replace(DRAIN_START, stage_time(ctx, capi, name, DRAINING_NODE_REASON)[1])
    if VOLUME_WAIT_START in text:
        text = text.replace(VOLUME_WAIT_START, stage_time(ctx, capi, name, WAITING_FOR_VOLUME_DETACH_REASON)[1])
    return text


def _spec(obj: dict[str, Any] | None) -> dict[str, Any]:
    return (obj or {}).get("spec") or {}


def _is_eviction(record: dict[str, Any]) -> bool:
    """A status write adding the condition the eviction API gives a Pod before deleting it."""
    def target(obj: dict[str, Any] | None) -> bool:
        return any(c.get("type") == DISRUPTION_TARGET and c.get("status") == "True"
                   and c.get("reason") == EVICTION_BY_EVICTION_API
                   for c in ((obj or {}).get("status") or {}).get("conditions") or [])
    return record["subresource"] == "status" and target(record["new"]) and not target(record["old"])


def eviction_records(ctx: ScenarioContext, capi: CapiScene, *, node: str | None = None,
                     pod: tuple[str, str] | None = None) -> list[dict[str, Any]]:
    """The evictions in the workload cluster (of Pods on ``node``, or of ``pod``), oldest first."""
    filters: dict[str, Any] = {"cluster": capi.workload, "resource": AUDIT_RESOURCES["Pod"]}
    if pod is not None:
        filters.update(namespace=pod[0], name=pod[1])
    return [r for r in ctx.scene.audit(**filters)
            if _is_eviction(r) and (node is None or _spec(r["new"]).get("nodeName") == node)]


def pods_removed_from_node(ctx: ScenarioContext, capi: CapiScene, node: str) -> list[dict[str, Any]]:
    """The writes that removed Pods of ``node`` from the workload cluster, oldest first."""
    return [r for r in ctx.scene.audit(cluster=capi.workload, resource=AUDIT_RESOURCES["Pod"])
            if r["new"] is None and r["old"] is not None and _spec(r["old"]).get("nodeName") == node]


def detachments_from_node(ctx: ScenarioContext, capi: CapiScene, node: str,
                          pv: str | None = None) -> list[dict[str, Any]]:
    """The writes that removed VolumeAttachments to ``node`` (of ``pv``), oldest first."""
    out = []
    for record in ctx.scene.audit(cluster=capi.workload, resource=AUDIT_RESOURCES["VolumeAttachment"]):
        spec = _spec(record["old"])
        if record["new"] is None and record["old"] is not None and spec.get("nodeName") == node and (
                pv is None or (spec.get("source") or {}).get("persistentVolumeName") == pv):
            out.append(record)
    return out


# -- creating Machines ---------------------------------------------------------------------------------


def _register_kinds(ctx: ScenarioContext) -> None:
    ctx.kinds.update(CAPI_KINDS)


def _ref(api_version: str, kind: str, name: str) -> dict[str, str]:
    return {"apiVersion": api_version, "kind": kind, "name": name}


@dataclass
class MachineSpec:
    """What a sentence says about a Machine to create."""

    name: str
    control_plane: bool = False
    annotations: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    spec: dict[str, Any] = field(default_factory=dict)
    finalizers: list[str] = field(default_factory=list)
    owner: dict[str, Any] | None = None
    provision_delay: str | None = None


def machine_objects(capi: CapiScene, wanted: MachineSpec) -> list[dict[str, Any]]:
    """The FakeBootstrapConfig, the FakeMachine and the Machine that references both."""
    namespace, name = capi.namespace, wanted.name
    cluster_label = {CLUSTER_NAME_LABEL: capi.cluster}
    bootstrap = {"apiVersion": BOOTSTRAP_API_VERSION, "kind": FAKE_BOOTSTRAP_CONFIG_KIND,
                 "metadata": {"name": name, "namespace": namespace, "labels": dict(cluster_label)}, "spec": {}}
    infra: dict[str, Any] = {"apiVersion": INFRASTRUCTURE_API_VERSION, "kind": FAKE_MACHINE_KIND,
                             "metadata": {"name": name, "namespace": namespace, "labels": dict(cluster_label)},
                             "spec": {}}
    if wanted.provision_delay:
        infra["metadata"]["annotations"] = {PROVISION_DELAY_ANNOTATION: wanted.provision_delay}
    labels = {**cluster_label, **wanted.labels}
    if wanted.control_plane:
        labels[CONTROL_PLANE_LABEL] = ""
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels}
    if wanted.annotations:
        meta["annotations"] = dict(wanted.annotations)
    if wanted.finalizers:
        meta["finalizers"] = list(wanted.finalizers)
    if wanted.owner is not None:
        meta["ownerReferences"] = [wanted.owner]
    machine = {
        "apiVersion": CLUSTER_API_VERSION, "kind": MACHINE_KIND, "metadata": meta,
        "spec": {"clusterName": capi.cluster, "version": KUBERNETES_VERSION,
                 "bootstrap": {"configRef": _ref(BOOTSTRAP_API_VERSION, FAKE_BOOTSTRAP_CONFIG_KIND, name)},
                 "infrastructureRef": _ref(INFRASTRUCTURE_API_VERSION, FAKE_MACHINE_KIND, name), **wanted.spec},
    }
    return [bootstrap, infra, machine]


def _node_ready(node: dict[str, Any] | None) -> bool:
    ready = condition(node, "Ready")
    return ready is not None and ready.get("status") == "True"


def start_machine(ctx: ScenarioContext, capi: CapiScene, wanted: MachineSpec, *, running: bool = True) -> None:
    """Create a Machine (and its objects); when ``running``, wait until it has a Ready Node."""
    for obj in machine_objects(capi, wanted):
        ctx.setup(lambda obj=obj: ctx.client.create(obj))
    if not running:
        return

    def has_ready_node() -> bool:
        machine = find_in(ctx.client, CLUSTER_API_VERSION, MACHINE_KIND, wanted.name, capi.namespace)
        node_ref = ((machine or {}).get("status") or {}).get("nodeRef") or {}
        if not node_ref.get("name"):
            return False
        capi.nodes[wanted.name] = str(node_ref["name"])
        return _node_ready(find_in(workload(ctx, capi), "v1", "Node", node_ref["name"], None))

    await_state(ctx, f"the Machine {wanted.name} running with a Ready Node", has_ready_node)


def _workload_reachable(ctx: ScenarioContext, capi: CapiScene) -> bool:
    try:
        workload(ctx, capi).list("v1", "Namespace")
    except (ConnectionError, ApiError):
        return False
    return True


def machine_settings(rows: list[list[str]]) -> MachineSpec:
    """A ``| setting | value |`` table: annotation, label, finalizer and the three timeouts."""
    wanted = MachineSpec(name="")
    for setting, value in (row[:2] for row in rows[1:]):
        if setting == "annotation":
            key, val = parse_annotation(value)
            wanted.annotations[key] = val
        elif setting == "label":
            wanted.labels.update(labels_of(value))
        elif setting == "finalizer":
            wanted.finalizers.append(value)
        elif setting in TIMEOUT_SETTINGS:
            wanted.spec[setting] = value
        else:
            raise AssertionError(f"a Machine setting is annotation, label, finalizer or one of {TIMEOUT_SETTINGS}, "
                                 f"not {setting!r}")
    return wanted


def _kubeadm_control_plane(ctx: ScenarioContext, capi: CapiScene, name: str) -> dict[str, Any]:
    """A KubeadmControlPlane no controller acts on: no Cluster names it (no cluster-name label, no owner)."""
    existing = find_in(ctx.client, CONTROL_PLANE_API_VERSION, KUBEADM_CONTROL_PLANE_KIND, name, capi.namespace)
    if existing is not None:
        return existing
    return ctx.setup(lambda: ctx.client.create({  # type: ignore[no-any-return]
        "apiVersion": CONTROL_PLANE_API_VERSION, "kind": KUBEADM_CONTROL_PLANE_KIND,
        "metadata": {"name": name, "namespace": capi.namespace},
        "spec": {"replicas": 1, "version": KUBERNETES_VERSION, "kubeadmConfigSpec": {},
                 "machineTemplate": {"infrastructureRef": _ref(INFRASTRUCTURE_API_VERSION, FAKE_MACHINE_TEMPLATE,
                                                               f"{name}-template")}},
    }))


def _owned_by(owner: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}


def _set_annotation(ctx: ScenarioContext, capi: CapiScene, machine: str, key: str, value: str | None,
                    user: str = "admin") -> dict[str, Any]:
    client = ctx.scene.client(user=user)
    return client.patch(CLUSTER_API_VERSION, MACHINE_KIND, machine, {"metadata": {"annotations": {key: value}}},
                        namespace=capi.namespace, patch_type=MERGE)


def _machine(ctx: ScenarioContext, capi: CapiScene, name: str) -> dict[str, Any]:
    machine = find_in(ctx.client, CLUSTER_API_VERSION, MACHINE_KIND, name, capi.namespace)
    assert machine is not None, f"the Machine {name} does not exist"
    return machine


# -- Given -------------------------------------------------------------------------------------------


@given(sentence('a Cluster "{name:Q}" whose control plane Machine "{machine:Q}" is running'))
def given_cluster(ctx: ScenarioContext, capi: CapiScene, name: str, machine: str) -> None:
    _register_kinds(ctx)
    capi.cluster = name
    ctx.setup(lambda: ctx.client.create({"apiVersion": CLUSTER_API_VERSION, "kind": CLUSTER_KIND,
                                         "metadata": {"name": name, "namespace": capi.namespace}, "spec": {}}))
    await_state(ctx, f"the workload cluster of {name}", lambda: _workload_reachable(ctx, capi))
    start_machine(ctx, capi, MachineSpec(machine, control_plane=True))


@given(sentence('a running Machine "{name:Q}"'))
def given_machine(ctx: ScenarioContext, capi: CapiScene, name: str) -> None:
    start_machine(ctx, capi, MachineSpec(name))


@given(sentence('a running Machine "{name:Q}" annotated "{annotation:Q}"'))
def given_annotated_machine(ctx: ScenarioContext, capi: CapiScene, name: str, annotation: str) -> None:
    start_machine(ctx, capi, MachineSpec(name, annotations=dict([parse_annotation(annotation)])))


@given(sentence('a running Machine "{name:Q}" with:'))
def given_machine_with(ctx: ScenarioContext, capi: CapiScene, name: str, datatable: list[list[str]]) -> None:
    wanted = machine_settings(datatable)
    wanted.name = name
    start_machine(ctx, capi, wanted)


@given(sentence('a running control plane Machine "{name:Q}"'))
def given_control_plane_machine(ctx: ScenarioContext, capi: CapiScene, name: str) -> None:
    start_machine(ctx, capi, MachineSpec(name, control_plane=True))


@given(sentence('a running control plane Machine "{name:Q}" annotated "{annotation:Q}"'))
def given_annotated_control_plane_machine(ctx: ScenarioContext, capi: CapiScene, name: str, annotation: str) -> None:
    start_machine(ctx, capi, MachineSpec(name, control_plane=True, annotations=dict([parse_annotation(annotation)])))


@given(sentence('a running control plane Machine "{name:Q}" owned by the KubeadmControlPlane "{kcp:Q}"'))
def given_kcp_machine(ctx: ScenarioContext, capi: CapiScene, name: str, kcp: str) -> None:
    owner = _owned_by(_kubeadm_control_plane(ctx, capi, kcp))
    start_machine(ctx, capi, MachineSpec(name, control_plane=True, owner=owner))


@given(sentence(
    'a running control plane Machine "{name:Q}" owned by the KubeadmControlPlane "{kcp:Q}" annotated "{annotation:Q}"'
))
def given_annotated_kcp_machine(ctx: ScenarioContext, capi: CapiScene, name: str, kcp: str, annotation: str) -> None:
    owner = _owned_by(_kubeadm_control_plane(ctx, capi, kcp))
    start_machine(ctx, capi, MachineSpec(name, control_plane=True, owner=owner,
                                         annotations=dict([parse_annotation(annotation)])))


@given(sentence('a Machine "{name:Q}" that never gets a Node'))
def given_machine_without_node(ctx: ScenarioContext, capi: CapiScene, name: str) -> None:
    start_machine(ctx, capi, MachineSpec(name, provision_delay=NEVER), running=False)


@given(sentence('a Machine "{name:Q}" that never gets a Node, annotated "{annotation:Q}"'))
def given_annotated_machine_without_node(ctx: ScenarioContext, capi: CapiScene, name: str, annotation: str) -> None:
    start_machine(ctx, capi, MachineSpec(name, provision_delay=NEVER, annotations=dict([parse_annotation(annotation)])),
                  running=False)


@given(sentence('the Machine "{name:Q}" has been annotated "{annotation:Q}"'))
def given_machine_annotated(ctx: ScenarioContext, capi: CapiScene, name: str, annotation: str) -> None:
    key, value = parse_annotation(annotation)
    ctx.setup(lambda: _set_annotation(ctx, capi, name, key, value))


@given(sentence('the Machine "{name:Q}" has been waiting for its {point:Word} hooks for {minutes:Int} minutes'))
def given_waiting_for_hooks(ctx: ScenarioContext, capi: CapiScene, name: str, point: str, minutes: int) -> None:
    assert point in WAITING_FOR_HOOKS, f"a lifecycle point is one of {sorted(WAITING_FOR_HOOKS)}, not {point!r}"
    ctx.setup(lambda: ctx.client.delete(CLUSTER_API_VERSION, MACHINE_KIND, name, capi.namespace))
    await_state(ctx, f"the Machine {name} waiting for its {point} hooks",
                lambda: deleting_reason(_machine(ctx, capi, name)) == WAITING_FOR_HOOKS[point], 300)
    ctx.scene.advance(minutes * 60)


@given(sentence('the hook owner "{owner:Q}" has annotated the Machine "{name:Q}" with "{annotation:Q}"'))
def given_owner_annotated(ctx: ScenarioContext, capi: CapiScene, owner: str, name: str, annotation: str) -> None:
    key, value = parse_annotation(annotation)
    ctx.setup(lambda: _set_annotation(ctx, capi, name, key, value, user=owner))


@given(sentence('the hook owner "{owner:Q}" has finished its work and removed the annotation "{key:Q}"'))
def given_owner_removed_hook(ctx: ScenarioContext, capi: CapiScene, owner: str, key: str) -> None:
    machine = _only_machine_with(ctx, capi, key)
    ctx.setup(lambda: _set_annotation(ctx, capi, machine, key, None, user=owner))


@given(sentence('the {kind:Kind} "{ref:Q}" takes {minutes:Int} minutes to delete'))
def given_slow_deletion(ctx: ScenarioContext, kind: str, ref: str, minutes: int) -> None:
    target = ctx.ref(kind, ref)
    ctx.setup(lambda: ctx.client.patch(target.api_version, kind, target.name,
                                       {"metadata": {"annotations": {DELETION_DELAY_ANNOTATION: f"{minutes}m"}}},
                                       namespace=target.namespace, patch_type=MERGE))


@given(sentence('the {kind:Kind} "{ref:Q}" never finishes deleting'))
def given_stuck_deletion(ctx: ScenarioContext, kind: str, ref: str) -> None:
    target = ctx.ref(kind, ref)
    ctx.setup(lambda: ctx.client.patch(target.api_version, kind, target.name,
                                       {"metadata": {"annotations": {DELETION_STUCK_ANNOTATION: "true"}}},
                                       namespace=target.namespace, patch_type=MERGE))


@given(sentence('the {kind:Kind} "{ref:Q}" has been deleted and is gone'))
def given_deleted_and_gone(ctx: ScenarioContext, kind: str, ref: str) -> None:
    target = ctx.ref(kind, ref)
    ctx.setup(lambda: ctx.client.delete(target.api_version, kind, target.name, target.namespace))
    await_state(ctx, f"{target} gone", lambda: ctx.find(target) is None, 60)


@given(sentence('the Cluster "{name:Q}" is being deleted'))
def given_cluster_deleting(ctx: ScenarioContext, capi: CapiScene, name: str) -> None:
    # A finalizer of the test's own keeps the Cluster (and its workload cluster) while it is being deleted.
    hold = "example.com/hold-for-the-scenario"
    ctx.setup(lambda: ctx.client.patch(CLUSTER_API_VERSION, CLUSTER_KIND, name, {"metadata": {"finalizers": [hold]}},
                                       namespace=capi.namespace, patch_type=MERGE))
    ctx.setup(lambda: ctx.client.delete(CLUSTER_API_VERSION, CLUSTER_KIND, name, capi.namespace))
    cluster = find_in(ctx.client, CLUSTER_API_VERSION, CLUSTER_KIND, name, capi.namespace)
    assert cluster is not None and cluster["metadata"].get("deletionTimestamp"), f"the Cluster {name} is not deleting"


# -- When --------------------------------------------------------------------------------------------


def _only_machine_with(ctx: ScenarioContext, capi: CapiScene, key: str) -> str:
    machines = ctx.client.list(CLUSTER_API_VERSION, MACHINE_KIND, capi.namespace)["items"]
    holders = [m["metadata"]["name"] for m in machines if key in (m["metadata"].get("annotations") or {})]
    assert len(holders) == 1, f"expected one Machine with the annotation {key!r}, found {holders}"
    return holders[0]


@when(sentence('the hook owner "{owner:Q}" finishes its work and removes the annotation "{key:Q}"'))
def when_owner_removes_hook(ctx: ScenarioContext, capi: CapiScene, owner: str, key: str) -> None:
    machine = _only_machine_with(ctx, capi, key)
    ctx.act(lambda: _set_annotation(ctx, capi, machine, key, None, user=owner))


@when(sentence('the hook owner "{owner:Q}" gives up after {minutes:Int} minutes and removes the annotation "{key:Q}"'))
def when_owner_gives_up(ctx: ScenarioContext, capi: CapiScene, owner: str, minutes: int, key: str) -> None:
    machine = _only_machine_with(ctx, capi, key)
    ctx.scene.advance(minutes * 60)
    ctx.act(lambda: _set_annotation(ctx, capi, machine, key, None, user=owner))


@when(sentence('the hook owner "{owner:Q}" sees "{mark:Q}" on the Machine "{name:Q}" and removes the annotation '
               '"{key:Q}"'))
def when_owner_sees_mark(ctx: ScenarioContext, capi: CapiScene, owner: str, mark: str, name: str, key: str) -> None:
    annotations = _machine(ctx, capi, name)["metadata"].get("annotations") or {}
    assert mark in annotations, f"the Machine {name} has no {mark!r} yet: {annotations}"
    ctx.act(lambda: _set_annotation(ctx, capi, name, key, None, user=owner))


@when(sentence('the hook owners remove the annotations "{first:Q}" and then "{second:Q}"'))
def when_owners_remove_in_order(ctx: ScenarioContext, capi: CapiScene, first: str, second: str) -> None:
    machine = _only_machine_with(ctx, capi, first)
    owners = _machine(ctx, capi, machine)["metadata"].get("annotations") or {}

    def remove_both() -> Any:
        _set_annotation(ctx, capi, machine, first, None, user=owners.get(first) or "admin")
        ctx.scene.advance(OWNERS_APART_SECONDS)
        return _set_annotation(ctx, capi, machine, second, None, user=owners.get(second) or "admin")

    ctx.act(remove_both)


@when(sentence('an administrator removes the annotation "{key:Q}" from the Machine "{name:Q}" with kubectl'))
def when_admin_removes(ctx: ScenarioContext, capi: CapiScene, key: str, name: str) -> None:
    # kubectl annotate machine <name> <key>- sends this merge patch.
    ctx.act(lambda: _set_annotation(ctx, capi, name, key, None, user=ADMINISTRATOR))


@when(sentence('the Machine "{name:Q}" is annotated "{annotation:Q}"'))
def when_machine_annotated(ctx: ScenarioContext, capi: CapiScene, name: str, annotation: str) -> None:
    key, value = parse_annotation(annotation)
    ctx.act(lambda: _set_annotation(ctx, capi, name, key, value))


def _hook_keys(machine: dict[str, Any], prefix: str) -> list[str]:
    return sorted(k for k in machine["metadata"].get("annotations") or {} if k.startswith(prefix))


@when(sentence('the Machine "{name:Q}" is deleted while its hook owners are at work'))
def when_deleted_with_hook_owners(ctx: ScenarioContext, capi: CapiScene, name: str) -> None:
    """Each hook owner acts when its point is reached -- pre-drain owners once the Machine is marked for
    deletion, pre-terminate owners once the Machine waits for them -- works a while, then removes its hook."""
    ctx.act(lambda: ctx.client.delete(CLUSTER_API_VERSION, MACHINE_KIND, name, capi.namespace))
    due: dict[str, float] = {}
    deadline = ctx.scene.now() + HOOK_OWNERS_WATCH_SECONDS
    while ctx.scene.now() < deadline:
        machine = find_in(ctx.client, CLUSTER_API_VERSION, MACHINE_KIND, name, capi.namespace)
        if machine is None:
            return
        reached = _hook_keys(machine, PRE_DRAIN_DELETE_HOOK_PREFIX)
        if deleting_reason(machine) == WAITING_FOR_PRE_TERMINATE_HOOK_REASON:
            reached += _hook_keys(machine, PRE_TERMINATE_DELETE_HOOK_PREFIX)
        owners = machine["metadata"].get("annotations") or {}
        for key in reached:
            due.setdefault(key, ctx.scene.now() + HOOK_OWNER_WORK_SECONDS)
            if ctx.scene.now() >= due[key]:
                _set_annotation(ctx, capi, name, key, None, user=owners.get(key) or "admin")
                ctx.scene.settle()
        ctx.scene.advance(1)


@when(sentence('a replacement control plane Machine "{name:Q}" is created and its Node joins the cluster'))
def when_replacement_joins(ctx: ScenarioContext, capi: CapiScene, name: str) -> None:
    ctx.mark = ctx.scene.audit_size()
    start_machine(ctx, capi, MachineSpec(name, control_plane=True))


@when(sentence('a Machine "{name:Q}" of the Cluster "{cluster:Q}" is created without a nodeDeletionTimeout'))
def when_machine_created(ctx: ScenarioContext, capi: CapiScene, name: str, cluster: str) -> None:
    assert cluster == capi.cluster, f"the scenario's Cluster is {capi.cluster!r}"
    objects = machine_objects(capi, MachineSpec(name))
    for obj in objects[:-1]:
        ctx.setup(lambda obj=obj: ctx.client.create(obj))
    ctx.act(lambda: ctx.client.create(objects[-1]))


@when(sentence('a Machine "{name:Q}" of the Cluster "{cluster:Q}" annotated "{annotation:Q}" is created'))
def when_annotated_machine_created(ctx: ScenarioContext, capi: CapiScene, name: str, cluster: str,
                                   annotation: str) -> None:
    assert cluster == capi.cluster, f"the scenario's Cluster is {capi.cluster!r}"
    objects = machine_objects(capi, MachineSpec(name, annotations=dict([parse_annotation(annotation)])))
    for obj in objects[:-1]:
        ctx.setup(lambda obj=obj: ctx.client.create(obj))
    ctx.act(lambda: ctx.client.create(objects[-1]))


# -- Then: the Machine's state ------------------------------------------------------------------------


def _deleting_condition(ctx: ScenarioContext, capi: CapiScene, name: str) -> dict[str, Any]:
    machine = _machine(ctx, capi, name)
    item = condition(machine, DELETING, v1beta2=True)
    assert item is not None, (
        f"the Machine {name} has no v1beta2 Deleting condition: {conditions_of(machine, v1beta2=True)}"
    )
    return item


def _assert_deleting(ctx: ScenarioContext, capi: CapiScene, name: str, reason: str, message: str | None) -> None:
    item = _deleting_condition(ctx, capi, name)
    assert (item.get("status"), item.get("reason")) == ("True", reason), (
        f"the Machine {name} is Deleting {item.get('status')}/{item.get('reason')} "
        f"({item.get('message')!r}), expected True/{reason}"
    )
    if message is not None:
        expected = fill_markers(ctx, capi, name, message)
        assert item.get("message") == expected, (
            f"the Deleting message of the Machine {name} is\n{item.get('message')}\nexpected\n{expected}"
        )


@then(sentence('the Machine "{name:Q}" is deleting with reason "{reason:Q}"'))
def then_deleting(ctx: ScenarioContext, capi: CapiScene, name: str, reason: str) -> None:
    _assert_deleting(ctx, capi, name, reason, None)


@then(sentence('the Machine "{name:Q}" is deleting with reason "{reason:Q}" and the message "{message:Q}"'))
def then_deleting_with_message(ctx: ScenarioContext, capi: CapiScene, name: str, reason: str, message: str) -> None:
    _assert_deleting(ctx, capi, name, reason, message)


@then(sentence('the Machine "{name:Q}" is deleting with reason "{reason:Q}" and the message:'))
def then_deleting_with_long_message(ctx: ScenarioContext, capi: CapiScene, name: str, reason: str,
                                    docstring: str) -> None:
    _assert_deleting(ctx, capi, name, reason, docstring)


@then(sentence('within {seconds:Int} seconds the Machine "{name:Q}" is deleting with reason "{reason:Q}"'))
def then_deleting_within(ctx: ScenarioContext, capi: CapiScene, seconds: int, name: str, reason: str) -> None:
    def reached() -> bool:
        return deleting_reason(find_in(ctx.client, CLUSTER_API_VERSION, MACHINE_KIND, name, capi.namespace)) == reason

    if not ctx.wait_until(reached, seconds):
        _assert_deleting(ctx, capi, name, reason, None)


@then(sentence('the Machine "{name:Q}" is not deleting'))
def then_not_deleting(ctx: ScenarioContext, capi: CapiScene, name: str) -> None:
    item = _deleting_condition(ctx, capi, name)
    assert (item.get("status"), item.get("reason")) == ("False", "NotDeleting"), (
        f"the Machine {name} has the Deleting condition {item}, expected False/NotDeleting"
    )


def _v1beta1(ctx: ScenarioContext, capi: CapiScene, name: str, condition_type: str) -> dict[str, Any]:
    machine = _machine(ctx, capi, name)
    item = condition(machine, condition_type)
    assert item is not None, f"the Machine {name} has no condition {condition_type!r}: {conditions_of(machine)}"
    return item


@then(sentence('the Machine "{name:Q}" has the condition "{type:Q}" "{status:Q}"'))
def then_machine_condition(ctx: ScenarioContext, capi: CapiScene, name: str, type: str, status: str) -> None:
    item = _v1beta1(ctx, capi, name, type)
    assert item.get("status") == status, f"the condition {type} of the Machine {name} is {item}, expected {status}"


@then(sentence('the Machine "{name:Q}" has the condition "{type:Q}" "{status:Q}" with reason "{reason:Q}" and '
               'severity "{severity:Q}"'))
def then_machine_condition_severity(ctx: ScenarioContext, capi: CapiScene, name: str, type: str, status: str,
                                    reason: str, severity: str) -> None:
    item = _v1beta1(ctx, capi, name, type)
    actual = (item.get("status"), item.get("reason"), item.get("severity"))
    assert actual == (status, reason, severity), (
        f"the condition {type} of the Machine {name} is {item}, expected {status}/{reason}/{severity}"
    )


@then(sentence('the Machine "{name:Q}" has the condition "{type:Q}" "{status:Q}" with reason "{reason:Q}" and the '
               'message:'))
def then_machine_condition_message(ctx: ScenarioContext, capi: CapiScene, name: str, type: str, status: str,
                                   reason: str, docstring: str) -> None:
    item = _v1beta1(ctx, capi, name, type)
    expected = fill_markers(ctx, capi, name, docstring)
    assert (item.get("status"), item.get("reason")) == (status, reason), (
        f"the condition {type} of the Machine {name} is {item}, expected {status}/{reason}"
    )
    assert item.get("message") == expected, (
        f"the {type} message of the Machine {name} is\n{item.get('message')}\nexpected\n{expected}"
    )


@then(sentence('the Machine "{name:Q}" is in phase "{phase:Q}"'))
def then_machine_phase(ctx: ScenarioContext, capi: CapiScene, name: str, phase: str) -> None:
    machine = find_in(ctx.client, CLUSTER_API_VERSION, MACHINE_KIND, name, capi.namespace)
    assert machine is not None, f"the Machine {name} is gone"
    actual = (machine.get("status") or {}).get("phase")
    assert actual == phase, f"the Machine {name} is in phase {actual!r}, expected {phase!r}"


@then(sentence('the Machine "{name:Q}" still has the annotation "{key:Q}"'))
def then_has_annotation(ctx: ScenarioContext, capi: CapiScene, name: str, key: str) -> None:
    annotations = _machine(ctx, capi, name)["metadata"].get("annotations") or {}
    assert key in annotations, f"the Machine {name} no longer has {key!r}: {annotations}"


def _removed(ctx: ScenarioContext, capi: CapiScene, name: str, present: Any) -> bool:
    """Whether the audit trail shows a write that took something (``present(obj)``) off the Machine: what
    a Machine that is gone must show to count as having lost it (a Machine that never had it, or never
    existed, does not)."""
    return any(present(r.get("old")) and not present(r.get("new")) for r in _machine_records(ctx, capi, name)
               if r.get("old") is not None and r.get("new") is not None)


def _machine_records(ctx: ScenarioContext, capi: CapiScene, name: str) -> list[dict[str, Any]]:
    return ctx.scene.audit(resource=AUDIT_RESOURCES[MACHINE_KIND], name=name, namespace=capi.namespace)


@then(sentence('within {seconds:Int} seconds the Machine "{name:Q}" no longer has the finalizer "{finalizer:Q}"'))
def then_lacks_finalizer_within(ctx: ScenarioContext, capi: CapiScene, seconds: int, name: str,
                                finalizer: str) -> None:
    def has(obj: dict[str, Any] | None) -> bool:
        return finalizer in (((obj or {}).get("metadata") or {}).get("finalizers") or [])

    def gone() -> bool:
        machine = find_in(ctx.client, CLUSTER_API_VERSION, MACHINE_KIND, name, capi.namespace)
        # Gone counts only when a recorded write took the finalizer off (a Machine that never had it, or
        # never existed, does not pass).
        return _removed(ctx, capi, name, has) if machine is None else not has(machine)

    assert ctx.wait_until(gone, seconds), (
        f"the Machine {name} still has the finalizer {finalizer!r}, or is gone without a write removing it")


@then(sentence('the Machine "{name:Q}" has the nodeDeletionTimeout "{value:Q}"'))
def then_node_deletion_timeout(ctx: ScenarioContext, capi: CapiScene, name: str, value: str) -> None:
    assert ctx.error is None, f"the Machine was refused: {ctx.error}"
    actual = (_machine(ctx, capi, name).get("spec") or {}).get("nodeDeletionTimeout")
    assert actual == value, f"the Machine {name} has spec.nodeDeletionTimeout {actual!r}, expected {value!r}"


@then(sentence('the {kind:Kind} "{ref:Q}" exists and is not marked for deletion'))
def then_exists_unmarked(ctx: ScenarioContext, kind: str, ref: str) -> None:
    target = ctx.ref(kind, ref)
    obj = ctx.find(target)
    assert obj is not None, f"{target} does not exist"
    assert not obj["metadata"].get("deletionTimestamp"), (
        f"{target} is marked for deletion at {obj['metadata']['deletionTimestamp']}"
    )


# -- Then: events and writes ---------------------------------------------------------------------------


def _events_about(ctx: ScenarioContext, capi: CapiScene, name: str) -> list[dict[str, Any]]:
    events = ctx.client.list("v1", "Event", capi.namespace)["items"]
    return [e for e in events if (e.get("involvedObject") or {}).get("kind") == MACHINE_KIND
            and (e.get("involvedObject") or {}).get("name") == name]


@then(sentence('a Normal event "{reason:Q}" is recorded for the Machine "{name:Q}" with the message:'))
def then_normal_event(ctx: ScenarioContext, capi: CapiScene, reason: str, name: str, docstring: str) -> None:
    about = _events_about(ctx, capi, name)
    wanted = ("Normal", reason, docstring)
    assert wanted in [(e.get("type"), e.get("reason"), e.get("message")) for e in about], (
        f"no event {wanted} about the Machine {name}; events: "
        f"{[(e.get('type'), e.get('reason'), e.get('message')) for e in about]}"
    )


@then(sentence('no Warning event is recorded for the Machine "{name:Q}"'))
def then_no_warning(ctx: ScenarioContext, capi: CapiScene, name: str) -> None:
    warnings = [(e.get("reason"), e.get("message")) for e in _events_about(ctx, capi, name)
                if e.get("type") == "Warning" and not ctx.transient(e.get("message"))]
    assert not warnings, f"Warning events about the Machine {name}: {warnings}"


@then(sentence('nothing was written to the Machine "{name:Q}"'))
def then_machine_untouched(ctx: ScenarioContext, capi: CapiScene, name: str) -> None:
    writes = ctx.writes(resource=AUDIT_RESOURCES[MACHINE_KIND], name=name, namespace=capi.namespace)
    assert not writes, "the Machine was written: " + ", ".join(
        f"{w['verb']}{'/' + w['subresource'] if w['subresource'] else ''} by {w['user']} at {w['time']}" for w in writes
    )


# -- Then: the course of the deletion, from the audit trail -----------------------------------------------


def _stages(ctx: ScenarioContext, capi: CapiScene, name: str) -> list[str]:
    """The Deleting reasons the Machine's writes showed, repeats collapsed (under chaos, not the ones
    that only report a request an injected fault failed)."""
    out: list[str] = []
    for record in machine_records(ctx, capi, name):
        reason = deleting_reason(record["new"])
        if reason and ctx.transient((condition(record["new"], DELETING, v1beta2=True) or {}).get("message")):
            continue
        if reason and (not out or out[-1] != reason):
            out.append(reason)
    return out


@then(sentence('the Machine "{name:Q}" went through these deletion stages, in order:'))
def then_stages_in_order(ctx: ScenarioContext, capi: CapiScene, name: str, datatable: list[list[str]]) -> None:
    expected = [row[0] for row in datatable[1:]]
    seen = _stages(ctx, capi, name)
    position = 0
    for reason in seen:
        if position < len(expected) and reason == expected[position]:
            position += 1
    assert position == len(expected), f"the Machine {name} went through {seen}, expected {expected} in this order"
    if ctx.chaos:
        # A read that an injected fault fails makes upstream's controller report the stage of what it could not
        # read ("Waiting for FakeMachine to be deleted" after the FakeMachine was gone): in order is all that holds.
        return
    later = {r: i for i, r in enumerate(expected)}
    ranks = [later[r] for r in seen if r in later]
    assert ranks == sorted(ranks), f"the Machine {name} went back to an earlier stage: {seen}"


@then(sentence('the Machine "{name:Q}" never reported the deletion stage "{reason:Q}"'))
def then_never_stage(ctx: ScenarioContext, capi: CapiScene, name: str, reason: str) -> None:
    seen = _stages(ctx, capi, name)
    assert reason not in seen, f"the Machine {name} went through {seen}"


def _wait_for_stage(ctx: ScenarioContext, capi: CapiScene, name: str, reason: str, until: float) -> float | None:
    while True:
        if deleting_reason(find_in(ctx.client, CLUSTER_API_VERSION, MACHINE_KIND, name, capi.namespace)) == reason:
            return ctx.scene.now()
        if ctx.scene.now() >= until:
            return None
        ctx.scene.advance(min(1.0, until - ctx.scene.now()))


def _stays_then_moves(ctx: ScenarioContext, capi: CapiScene, name: str, start: float, stage: str, earliest: int,
                      latest: int, then_stage: str) -> None:
    while ctx.scene.now() < start + earliest - 1:
        current = deleting_reason(find_in(ctx.client, CLUSTER_API_VERSION, MACHINE_KIND, name, capi.namespace))
        assert current == stage, (
            f"the Machine {name} is at {current!r} {ctx.scene.now() - start:.0f} s in, expected {stage!r} until "
            f"{earliest} s"
        )
        ctx.scene.advance(1)
    moved = _wait_for_stage(ctx, capi, name, then_stage, start + latest + 1)
    assert moved is not None, (
        f"the Machine {name} did not reach {then_stage!r} by {latest} s: it is at "
        f"{deleting_reason(find_in(ctx.client, CLUSTER_API_VERSION, MACHINE_KIND, name, capi.namespace))!r}"
    )


@then(sentence('the Machine "{name:Q}" moves from "{stage:Q}" to "{then_stage:Q}" between {earliest:Int} and '
               '{latest:Int} seconds after its deletion'))
def then_moves_after_deletion(ctx: ScenarioContext, capi: CapiScene, name: str, stage: str, then_stage: str,
                              earliest: int, latest: int) -> None:
    _stays_then_moves(ctx, capi, name, deletion_time(ctx, capi, name), stage, earliest, latest, then_stage)


@then(sentence('the Machine "{name:Q}" stays at "{stage:Q}" for {earliest:Int} to {latest:Int} seconds, then moves '
               'to "{then_stage:Q}"'))
def then_stays_then_moves(ctx: ScenarioContext, capi: CapiScene, name: str, stage: str, earliest: int, latest: int,
                          then_stage: str) -> None:
    entered = _wait_for_stage(ctx, capi, name, stage, ctx.scene.now() + SETUP_SECONDS)
    assert entered is not None, f"the Machine {name} never reached {stage!r}"
    _stays_then_moves(ctx, capi, name, parse_rfc3339(stage_time(ctx, capi, name, stage)[1]), stage, earliest, latest,
                      then_stage)


@then(sentence('the Machine "{name:Q}" is gone between {earliest:Int} and {latest:Int} seconds after its deletion'))
def then_gone_between(ctx: ScenarioContext, capi: CapiScene, name: str, earliest: int, latest: int) -> None:
    start = deletion_time(ctx, capi, name)

    def present() -> bool:
        return find_in(ctx.client, CLUSTER_API_VERSION, MACHINE_KIND, name, capi.namespace) is not None

    while ctx.scene.now() < start + earliest - 1:
        assert present(), f"the Machine {name} went {ctx.scene.now() - start:.0f} s after its deletion"
        ctx.scene.advance(1)
    assert ctx.wait_until(lambda: not present(), start + latest + 1 - ctx.scene.now()), (
        f"the Machine {name} still exists {latest} s after its deletion: "
        f"{deleting_reason(find_in(ctx.client, CLUSTER_API_VERSION, MACHINE_KIND, name, capi.namespace))!r}"
    )


def _hook_removal_seq(ctx: ScenarioContext, capi: CapiScene, name: str, key: str) -> dict[str, Any]:
    for record in machine_records(ctx, capi, name):
        old = ((record["old"] or {}).get("metadata") or {}).get("annotations") or {}
        new = ((record["new"] or {}).get("metadata") or {}).get("annotations") or {}
        if key in old and key not in new and record["new"] is not None:
            return record
    raise AssertionError(f"the annotation {key!r} was never removed from the Machine {name}")


@then(sentence('the FakeMachine "{name:Q}" was marked for deletion only after the annotation "{key:Q}" was removed '
               'from the Machine "{name2:Q}"'))
def then_infrastructure_deleted_after(ctx: ScenarioContext, capi: CapiScene, name: str, key: str, name2: str) -> None:
    """The machine controller's doing, not the scenario's: it deleted the infrastructure only once the last
    pre-terminate hook (``key``) was gone, not when an earlier one went (seed 000 "Hook ordering")."""
    removal = _hook_removal_seq(ctx, capi, name2, key)
    deleted = first_deletion_seq(records_of(ctx, FAKE_MACHINE_KIND, name, capi.namespace))
    assert deleted is not None, f"the FakeMachine {name} was never marked for deletion"
    assert deleted > removal["seq"], (
        f"the FakeMachine {name} was marked for deletion (#{deleted}) while the Machine {name2} still carried "
        f"{key!r} (removed at #{removal['seq']})")


@then(sentence('the {kind:Kind} "{ref:Q}" was deleted'))
def then_was_deleted(ctx: ScenarioContext, kind: str, ref: str) -> None:
    target = ctx.ref(kind, ref)
    assert first_deletion_seq(records_of(ctx, kind, target.name, target.namespace or "")) is not None, (
        f"{target} was never deleted"
    )


@then(sentence('the {kind:Kind} "{ref:Q}" was deleted only after the {other_kind:Kind} "{other:Q}" was gone'))
def then_deleted_after_gone(ctx: ScenarioContext, kind: str, ref: str, other_kind: str, other: str) -> None:
    target, before = ctx.ref(kind, ref), ctx.ref(other_kind, other)
    deleted = first_deletion_seq(records_of(ctx, kind, target.name, target.namespace or ""))
    gone = removal_seq(records_of(ctx, other_kind, before.name, before.namespace or ""))
    assert deleted is not None, f"{target} was never deleted"
    assert gone is not None and gone < deleted, f"{target} was deleted (#{deleted}) before {before} was gone ({gone})"


@then(sentence('the {kind:Kind} "{ref:Q}" was deleted only after the Node "{node:Q}" was Ready'))
def then_deleted_after_node_ready(ctx: ScenarioContext, kind: str, ref: str, node: str) -> None:
    target = ctx.ref(kind, ref)
    deleted = first_deletion_seq(records_of(ctx, kind, target.name, target.namespace or ""))
    ready = [r["seq"] for r in records_of(ctx, "Node", node) if _node_ready(r["new"])]
    assert deleted is not None, f"{target} was never deleted"
    assert ready and ready[0] < deleted, f"{target} was deleted (#{deleted}) before the Node {node} was Ready"


# The observations of "went through these steps": (kind of the objects, what a write shows).
def _is_cordon(record: dict[str, Any]) -> bool:
    return bool(((record["new"] or {}).get("spec") or {}).get("unschedulable")) and not (
        ((record["old"] or {}).get("spec") or {}).get("unschedulable"))


def _hooks_gone(prefix: str) -> Any:
    def check(record: dict[str, Any]) -> bool:
        old = ((record["old"] or {}).get("metadata") or {}).get("annotations") or {}
        new = ((record["new"] or {}).get("metadata") or {}).get("annotations") or {}
        return record["new"] is not None and any(k.startswith(prefix) for k in old) and not any(
            k.startswith(prefix) for k in new)
    return check


def _marked(record: dict[str, Any]) -> bool:
    new, old = record["new"], record["old"]
    if new is None:
        return old is not None and not old["metadata"].get("deletionTimestamp")
    return bool(new["metadata"].get("deletionTimestamp")) and not (old and old["metadata"].get("deletionTimestamp"))


def _removed(record: dict[str, Any]) -> bool:
    return record["new"] is None and record["old"] is not None


def _observation_seqs(ctx: ScenarioContext, capi: CapiScene, name: str, observation: str) -> list[int]:
    node = node_of(capi, name)
    machine = machine_records(ctx, capi, name)
    table: dict[str, Any] = {
        "the Machine is marked for deletion": lambda: [r for r in machine if _marked(r)],
        "its pre-drain hooks are removed": lambda: [r for r in machine if _hooks_gone(PRE_DRAIN_DELETE_HOOK_PREFIX)(r)],
        "its Node is cordoned": lambda: [r for r in records_of(ctx, "Node", node) if _is_cordon(r)],
        "its Pods are evicted": lambda: eviction_records(ctx, capi, node=node),
        "its Pods are gone": lambda: pods_removed_from_node(ctx, capi, node),
        "its volumes are detached": lambda: detachments_from_node(ctx, capi, node),
        "its pre-terminate hooks are removed": lambda: [r for r in machine
                                                        if _hooks_gone(PRE_TERMINATE_DELETE_HOOK_PREFIX)(r)],
        "its FakeMachine is deleted": lambda: [r for r in records_of(ctx, FAKE_MACHINE_KIND, name, capi.namespace)
                                               if _marked(r)],
        "its FakeMachine is gone": lambda: [r for r in records_of(ctx, FAKE_MACHINE_KIND, name, capi.namespace)
                                            if _removed(r)],
        "its FakeBootstrapConfig is deleted": lambda: [
            r for r in records_of(ctx, FAKE_BOOTSTRAP_CONFIG_KIND, name, capi.namespace) if _marked(r)],
        "its FakeBootstrapConfig is gone": lambda: [
            r for r in records_of(ctx, FAKE_BOOTSTRAP_CONFIG_KIND, name, capi.namespace) if _removed(r)],
        "its Node is deleted": lambda: [r for r in records_of(ctx, "Node", node) if _marked(r)],
        "the Machine is gone": lambda: [r for r in machine if _removed(r)],
    }
    assert observation in table, f"an observation is one of {sorted(table)}, not {observation!r}"
    return [int(r["seq"]) for r in table[observation]()]


@then(sentence('the deletion of the Machine "{name:Q}" went through these steps, in order:'))
def then_steps_in_order(ctx: ScenarioContext, capi: CapiScene, name: str, datatable: list[list[str]]) -> None:
    previous: tuple[str, int] | None = None
    for step, observation in (row[:2] for row in datatable[1:]):
        seqs = _observation_seqs(ctx, capi, name, observation)
        assert seqs, f"step {step}: the audit trail never shows that {observation}"
        if previous is not None:
            assert previous[1] < min(seqs), (
                f"step {step}: {observation} (first at #{min(seqs)}) happened before {previous[0]} was over "
                f"(#{previous[1]})"
            )
        previous = (observation, max(seqs))


@then(sentence('the Machine "{name:Q}" started waiting for its pre-terminate hooks only after its Node was drained'))
def then_pre_terminate_after_drain(ctx: ScenarioContext, capi: CapiScene, name: str) -> None:
    waiting, _ = stage_time(ctx, capi, name, WAITING_FOR_PRE_TERMINATE_HOOK_REASON)
    node = node_of(capi, name)
    evicted = {(r["namespace"], r["name"]) for r in eviction_records(ctx, capi, node=node)}
    assert evicted, f"no Pod was evicted from the Node {node}"
    gone = {(r["namespace"], r["name"]): int(r["seq"]) for r in pods_removed_from_node(ctx, capi, node)}
    late = sorted(f"{ns}/{pod}" for ns, pod in evicted if gone.get((ns, pod), waiting + 1) > waiting)
    assert not late, f"the Machine {name} waited for pre-terminate hooks (#{waiting}) before {late} were gone"
    drained = [r["seq"] for r in machine_records(ctx, capi, name)
               if (condition(r["new"], DRAINING_SUCCEEDED) or {}).get("status") == "True"]
    assert drained and drained[0] <= waiting, f"DrainingSucceeded was not True when the Machine {name} started waiting"


# -- Then: the Machine's Node ----------------------------------------------------------------------------


@then(sentence('the Node of "{machine:Q}" exists'))
def then_node_exists(ctx: ScenarioContext, capi: CapiScene, machine: str) -> None:
    node = node_of(capi, machine)
    assert find_in(workload(ctx, capi), "v1", "Node", node, None) is not None, f"the Node {node} does not exist"


@then(sentence('the Node of "{machine:Q}" is gone'))
def then_node_gone(ctx: ScenarioContext, capi: CapiScene, machine: str) -> None:
    node = node_of(capi, machine)
    assert find_in(workload(ctx, capi), "v1", "Node", node, None) is None, f"the Node {node} still exists"
