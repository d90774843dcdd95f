"""The reference machine controller's deletion sequence (controllers/machine/deletion.py), driven through
Kubernetes objects in a World: phase order, hooks, the isDeleteNodeAllowed rules, the skip rules,
infrastructure/bootstrap/Node deletion, conditions, events and messages as Cluster API v1.10 writes them.

The module also holds :class:`CapiWorld`, the small scene the other ``test_machine_*`` modules build on.
"""

from __future__ import annotations

from typing import Any

import pytest

from controllers.machine.node_deletion import is_delete_node_allowed
from harness.client import ApiError
from harness.clock import rfc3339
from harness.kube import errors as api_errors
from harness.kube.names.capi import (
    BOOTSTRAP_API_VERSION,
    CLUSTER_API_VERSION,
    CONTROL_PLANE_API_VERSION,
    INFRASTRUCTURE_API_VERSION,
    MACHINE_FINALIZER,
    MACHINES_RESOURCE,
    PRE_DRAIN_DELETE_HOOK_PREFIX,
    PRE_TERMINATE_DELETE_HOOK_PREFIX,
)
from harness.kube.names.core import DEFAULT_NAMESPACE
from harness.world.providers.objects import fake_cluster, fake_machine
from harness.world.world import World

CLUSTER = "c1"
WORKLOAD = f"{DEFAULT_NAMESPACE}/{CLUSTER}"
CONTROLLER_USER = "system:serviceaccount:kube-system:machine"


class CapiWorld:
    """A World with the Cluster ``default/c1`` (FakeCluster infrastructure), a control plane Machine ``cp``
    and helpers to add Machines and Pods and read what the machine controller wrote."""

    def __init__(self, world: World | None = None, *, control_plane: bool = True) -> None:
        self.world = world or World()
        self.client = self.world.client()
        for obj in fake_cluster(CLUSTER):
            self.client.create(obj)
        self.world.settle()
        self.remote = self.world.client(WORKLOAD)
        if control_plane:
            self.machine("cp", control_plane=True)

    def machine(
        self,
        name: str,
        *,
        control_plane: bool = False,
        annotations: dict[str, str] | None = None,
        labels: dict[str, str] | None = None,
        spec: dict[str, Any] | None = None,
        infra_annotations: dict[str, str] | None = None,
        bootstrap_annotations: dict[str, str] | None = None,
        owner: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A Machine with its FakeBootstrapConfig and FakeMachine (same name), provisioned at once."""
        for obj in fake_machine(name, CLUSTER, control_plane=control_plane, labels=labels, annotations=annotations,
                                owner=owner, spec=spec, bootstrap_annotations=bootstrap_annotations or {},
                                infra_annotations=infra_annotations or {}):
            self.client.create(obj)
        self.world.settle()
        return self.get(name)

    def pod(self, name: str, node: str, *, namespace: str = DEFAULT_NAMESPACE, labels: dict[str, str] | None = None,
            annotations: dict[str, str] | None = None, owner: dict[str, Any] | None = None,
            volumes: list[dict[str, Any]] | None = None, grace: int | None = None) -> None:
        """A Pod bound to ``node`` (running once the kubelet simulator sees it)."""
        metadata: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels or {},
                                    "annotations": annotations or {}}
        if owner is not None:
            metadata["ownerReferences"] = [owner]
        spec: dict[str, Any] = {"nodeName": node, "containers": [{"name": "app", "image": "app:1"}]}
        if volumes:
            spec["volumes"] = volumes
        if grace is not None:
            spec["terminationGracePeriodSeconds"] = grace
        self.remote.create({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec})

    def get(self, name: str) -> dict[str, Any]:
        return self.client.get(CLUSTER_API_VERSION, "Machine", name, DEFAULT_NAMESPACE)

    def exists(self, name: str) -> bool:
        try:
            self.get(name)
        except ApiError as err:
            assert err.code == 404
            return False
        return True

    def delete(self, name: str) -> int:
        """Delete the Machine; the audit position before the deletion (for :meth:`writes`)."""
        mark = len(self.world.audit)
        self.client.delete(CLUSTER_API_VERSION, "Machine", name, DEFAULT_NAMESPACE)
        self.world.settle()
        return mark

    def annotate(self, name: str, annotations: dict[str, str | None]) -> None:
        self.client.patch(
            CLUSTER_API_VERSION,
            "Machine",
            name,
            {"metadata": {"annotations": annotations}},
            namespace=DEFAULT_NAMESPACE,
        )
        self.world.settle()

    def deleting(self, name: str) -> dict[str, Any]:
        """The v1beta2 Deleting condition."""
        for condition in ((self.get(name).get("status") or {}).get("v1beta2") or {}).get("conditions") or []:
            if condition["type"] == "Deleting":
                return dict(condition)
        raise AssertionError(f"Machine {name} has no Deleting condition")

    def condition(self, name: str, condition_type: str) -> dict[str, Any] | None:
        for condition in (self.get(name).get("status") or {}).get("conditions") or []:
            if condition["type"] == condition_type:
                return dict(condition)
        return None

    def node_exists(self, name: str) -> bool:
        try:
            self.remote.get("v1", "Node", name)
        except ApiError as err:
            assert err.code == 404
            return False
        return True

    def events(self, reason: str) -> list[dict[str, Any]]:
        return [e for e in self.client.list("v1", "Event", DEFAULT_NAMESPACE)["items"] if e.get("reason") == reason]

    def writes(self, since: int, *, user: str | None = CONTROLLER_USER) -> list[tuple[str, str, str, str, str]]:
        """(cluster, verb, resource, subresource, name) of every write after ``since`` (by ``user``)."""
        return [(r.cluster, r.verb, r.resource, r.subresource, r.name) for r in self.world.audit.query(since=since)
                if user is None or r.user == user]


@pytest.fixture
def capi() -> CapiWorld:
    return CapiWorld()


def _first(writes: list[tuple[str, str, str, str, str]], verb: str, resource: str, name: str,
           subresource: str = "") -> int:
    for i, (_cluster, v, r, s, n) in enumerate(writes):
        if (v, r, s, n) == (verb, resource, subresource, name):
            return i
    raise AssertionError(f"no {verb} {resource}/{subresource} {name} in {writes}")


# -- provisioning ----------------------------------------------------------------------------------------


def test_a_provisioned_machine_has_the_finalizer_and_a_node_ref_from_its_provider_id(capi: CapiWorld) -> None:
    machine = capi.machine("m1")
    assert MACHINE_FINALIZER in machine["metadata"]["finalizers"]
    assert machine["spec"]["providerID"] == "fake://default/m1"
    assert machine["status"]["nodeRef"]["name"] == "m1"
    assert machine["status"]["phase"] == "Running"
    node = capi.remote.get("v1", "Node", "m1")
    assert node["spec"]["providerID"] == "fake://default/m1"
    assert node["metadata"]["annotations"]["cluster.x-k8s.io/machine"] == "m1"


def test_a_machine_that_is_not_deleting_reports_not_deleting(capi: CapiWorld) -> None:
    condition = capi.deleting("cp")
    assert (condition["status"], condition["reason"], condition["message"]) == ("False", "NotDeleting", "")


# -- the whole sequence ------------------------------------------------------------------------------------


def test_deletion_runs_the_ten_phases_in_order(capi: CapiWorld) -> None:
    capi.machine(
        "m1", annotations={f"{PRE_DRAIN_DELETE_HOOK_PREFIX}/hic": "", f"{PRE_TERMINATE_DELETE_HOOK_PREFIX}/hic": ""}
    )
    capi.pod("web", "m1")
    capi.world.settle()
    since = capi.delete("m1")
    assert capi.deleting("m1")["reason"] == "WaitingForPreDrainHook"
    assert not capi.remote.get("v1", "Node", "m1")["spec"].get("unschedulable")
    capi.annotate("m1", {f"{PRE_DRAIN_DELETE_HOOK_PREFIX}/hic": None})
    capi.world.advance(60)
    assert capi.deleting("m1")["reason"] == "WaitingForPreTerminateHook"
    assert capi.client.get(INFRASTRUCTURE_API_VERSION, "FakeMachine", "m1", DEFAULT_NAMESPACE)
    capi.annotate("m1", {f"{PRE_TERMINATE_DELETE_HOOK_PREFIX}/hic": None})
    capi.world.advance(10)
    assert not capi.exists("m1")
    writes = capi.writes(since)
    order = [
        _first(writes, "patch", "nodes", "m1"),  # cordon
        _first(writes, "delete", "pods", "web"),  # eviction
        _first(writes, "delete", "fakemachines.infrastructure.cluster.x-k8s.io", "m1"),
        _first(writes, "delete", "fakebootstrapconfigs.bootstrap.cluster.x-k8s.io", "m1"),
        _first(writes, "delete", "nodes", "m1"),
        _first(writes, "patch", MACHINES_RESOURCE, "m1"),  # the finalizer goes
    ]
    assert order == sorted(order)
    assert writes[-1] == ("management", "patch", MACHINES_RESOURCE, "", "m1")


def test_the_deleting_condition_follows_each_phase(capi: CapiWorld) -> None:
    capi.machine("m1", infra_annotations={"harness.test/deletion-delay": "30s"},
                 bootstrap_annotations={"harness.test/deletion-delay": "30s"})
    capi.delete("m1")
    condition = capi.deleting("m1")
    assert (condition["status"], condition["reason"], condition["message"]) == (
        "True", "WaitingForInfrastructureDeletion", "Waiting for FakeMachine to be deleted")
    capi.world.advance(31)
    condition = capi.deleting("m1")
    assert (condition["reason"], condition["message"]) == (
        "WaitingForBootstrapDeletion", "Waiting for FakeBootstrapConfig to be deleted")
    assert capi.get("m1")["status"]["phase"] == "Deleting"
    assert capi.condition("m1", "InfrastructureReady") == {
        "type": "InfrastructureReady", "status": "False", "severity": "Info",
        "lastTransitionTime": capi.condition("m1", "InfrastructureReady")["lastTransitionTime"], "reason": "Deleted"}
    capi.world.advance(31)
    assert not capi.exists("m1")
    assert not capi.node_exists("m1")


def test_successful_drain_and_volume_detach_are_recorded_as_conditions_and_events(capi: CapiWorld) -> None:
    capi.machine("m1", infra_annotations={"harness.test/deletion-stuck": "true"})
    capi.delete("m1")
    for condition_type in ("PreDrainDeleteHookSucceeded", "DrainingSucceeded", "VolumeDetachSucceeded",
                           "PreTerminateDeleteHookSucceeded"):
        assert capi.condition("m1", condition_type)["status"] == "True"
    assert capi.events("SuccessfulDrainNode")[0]["message"] == 'success draining Machine\'s node "m1"'
    assert capi.events("NodeVolumesDetached")[0]["message"] == (
        'success waiting for node volumes detaching Machine\'s node "m1"')
    deletion = capi.get("m1")["status"]["deletion"]
    assert deletion["nodeDrainStartTime"] == deletion["waitForNodeVolumeDetachStartTime"] == rfc3339(capi.world.now())


# -- hooks -------------------------------------------------------------------------------------------------


def test_pre_drain_hooks_are_listed_sorted_and_their_values_ignored(capi: CapiWorld) -> None:
    capi.machine(
        "m1", annotations={f"{PRE_DRAIN_DELETE_HOOK_PREFIX}/zeta": "", f"{PRE_DRAIN_DELETE_HOOK_PREFIX}/alpha": "owner"}
    )
    capi.delete("m1")
    condition = capi.deleting("m1")
    assert condition["reason"] == "WaitingForPreDrainHook"
    assert condition["message"] == (
        "Waiting for pre-drain hooks to succeed (hooks: "
        f"{PRE_DRAIN_DELETE_HOOK_PREFIX}/alpha,{PRE_DRAIN_DELETE_HOOK_PREFIX}/zeta)"
    )
    hook = capi.condition("m1", "PreDrainDeleteHookSucceeded")
    assert (hook["status"], hook["reason"], hook["severity"], hook.get("message")) == (
        "False", "WaitingExternalHook", "Info", None)


def test_a_pre_drain_hook_never_times_out_and_is_not_polled(capi: CapiWorld) -> None:
    capi.machine("m1", annotations={f"{PRE_DRAIN_DELETE_HOOK_PREFIX}/hic": ""}, spec={"nodeDrainTimeout": "10s"})
    since = capi.delete("m1")
    capi.world.advance(2)  # the rate limiter's own 1 s retry of the deletion's echo
    writes_at_start = len(capi.writes(since))
    controller = capi.world.controller("machine")
    calls: list[str] = []
    reconcile = controller.reconcile
    controller.reconcile = lambda request: calls.append(request.name) or reconcile(request)
    capi.world.advance(24 * 3600)
    assert capi.deleting("m1")["reason"] == "WaitingForPreDrainHook"
    assert len(capi.writes(since)) == writes_at_start
    assert "m1" not in calls
    assert not capi.remote.get("v1", "Node", "m1")["spec"].get("unschedulable")


def test_removing_the_last_pre_drain_hook_resumes_deletion_from_the_watch_event(capi: CapiWorld) -> None:
    capi.machine("m1", annotations={f"{PRE_DRAIN_DELETE_HOOK_PREFIX}/a": "", f"{PRE_DRAIN_DELETE_HOOK_PREFIX}/b": ""})
    capi.delete("m1")
    capi.world.advance(100)
    capi.annotate("m1", {f"{PRE_DRAIN_DELETE_HOOK_PREFIX}/a": None})
    assert (
        capi.deleting("m1")["message"]
        == f"Waiting for pre-drain hooks to succeed (hooks: {PRE_DRAIN_DELETE_HOOK_PREFIX}/b)"
    )
    capi.annotate("m1", {f"{PRE_DRAIN_DELETE_HOOK_PREFIX}/b": None})
    # At most one pass per second (the reconcileDeleteCache): the second removal is seen 1 s later.
    capi.world.advance(1)
    assert capi.remote.get("v1", "Node", "m1")["spec"]["unschedulable"] is True


def test_seed_000_annotation_spellings_are_not_hooks(capi: CapiWorld) -> None:
    capi.machine("m1", annotations={"pre-drain.hook.machine.cluster-api.x-k8s.io/migrate": "my-controller",
                                    "pre-drain.delete.hook.machine.cluster-api.x-k8s.io/x": ""})
    capi.delete("m1")
    capi.world.advance(5)
    assert not capi.exists("m1")


def test_pre_terminate_hooks_hold_the_instance_after_drain(capi: CapiWorld) -> None:
    capi.machine("m1", annotations={f"{PRE_TERMINATE_DELETE_HOOK_PREFIX}/backup": "my-backup-controller"})
    capi.delete("m1")
    capi.world.advance(3600)
    condition = capi.deleting("m1")
    assert (condition["reason"], condition["message"]) == (
        "WaitingForPreTerminateHook",
        f"Waiting for pre-terminate hooks to succeed (hooks: {PRE_TERMINATE_DELETE_HOOK_PREFIX}/backup)",
    )
    assert capi.condition("m1", "DrainingSucceeded")["status"] == "True"
    fake = capi.client.get(INFRASTRUCTURE_API_VERSION, "FakeMachine", "m1", DEFAULT_NAMESPACE)
    assert not fake["metadata"].get("deletionTimestamp")
    hook = capi.condition("m1", "PreTerminateDeleteHookSucceeded")
    assert (hook["status"], hook["reason"]) == ("False", "WaitingExternalHook")


def test_an_overlong_hook_name_is_refused_by_the_api_server(capi: CapiWorld) -> None:
    key = f"{PRE_DRAIN_DELETE_HOOK_PREFIX}/{'x' * 64}"
    with pytest.raises(ApiError) as caught:
        capi.annotate("cp", {key: ""})
    assert caught.value.code == 422
    assert f'metadata.annotations: Invalid value: "{key}": name part must be no more than 63 characters' in (
        caught.value.message)


# -- isDeleteNodeAllowed -------------------------------------------------------------------------------------


def test_a_machine_without_a_node_skips_the_pre_drain_hook_drain_and_node_deletion(capi: CapiWorld) -> None:
    capi.machine("m1", annotations={f"{PRE_DRAIN_DELETE_HOOK_PREFIX}/hic": ""},
                 infra_annotations={"harness.test/provision-delay": "1h"})
    assert not capi.get("m1")["status"].get("nodeRef")
    capi.delete("m1")
    capi.world.advance(5)
    assert not capi.exists("m1")
    assert capi.events("SuccessfulDrainNode") == []


def test_a_node_found_by_provider_id_at_deletion_is_written_to_the_node_ref(capi: CapiWorld) -> None:
    machine = capi.machine("m1")
    machine["status"].pop("nodeRef")
    machine["spec"].pop("providerID")
    infra = capi.client.get(INFRASTRUCTURE_API_VERSION, "FakeMachine", "m1", DEFAULT_NAMESPACE)
    cluster = capi.client.get(CLUSTER_API_VERSION, "Cluster", CLUSTER, DEFAULT_NAMESPACE)
    allowed = is_delete_node_allowed(capi.client, lambda: capi.remote, cluster, machine, infra, lambda: 1)
    assert allowed is None
    assert machine["status"]["nodeRef"]["name"] == "m1"
    machine["status"].pop("nodeRef")
    assert is_delete_node_allowed(capi.client, lambda: capi.remote, cluster, machine, None, lambda: 1) == (
        "noderef is nil")


def test_the_last_control_plane_machine_keeps_its_node(capi: CapiWorld) -> None:
    capi.machine("m1", annotations={f"{PRE_DRAIN_DELETE_HOOK_PREFIX}/hic": ""})
    capi.delete("cp")
    capi.world.advance(5)
    assert not capi.exists("cp")
    assert capi.node_exists("cp")
    assert not capi.remote.get("v1", "Node", "cp")["spec"].get("unschedulable")


def test_a_worker_keeps_its_node_when_no_control_plane_machine_is_active(capi: CapiWorld) -> None:
    capi.machine("m1", annotations={f"{PRE_DRAIN_DELETE_HOOK_PREFIX}/hic": ""})
    capi.annotate("cp", {f"{PRE_TERMINATE_DELETE_HOOK_PREFIX}/hold": ""})
    capi.delete("cp")
    capi.delete("m1")
    capi.world.advance(5)
    assert not capi.exists("m1")
    assert capi.node_exists("m1")


def test_a_deleting_cluster_skips_drain_and_node_deletion(capi: CapiWorld) -> None:
    capi.machine("m1", annotations={f"{PRE_DRAIN_DELETE_HOOK_PREFIX}/hic": ""})
    capi.client.patch(
        CLUSTER_API_VERSION,
        "Cluster",
        CLUSTER,
        {"metadata": {"finalizers": ["test.example/hold"]}},
        namespace=DEFAULT_NAMESPACE,
    )
    capi.client.delete(CLUSTER_API_VERSION, "Cluster", CLUSTER, DEFAULT_NAMESPACE)
    capi.delete("m1")
    capi.world.advance(5)
    assert not capi.exists("m1")
    assert capi.node_exists("m1")


# -- drain and volume skip rules --------------------------------------------------------------------------


def test_the_exclude_node_draining_annotation_skips_the_drain(capi: CapiWorld) -> None:
    capi.machine("m1", annotations={"machine.cluster.x-k8s.io/exclude-node-draining": ""})
    capi.pod("lonely", "m1")
    capi.world.settle()
    capi.delete("m1")
    capi.world.advance(5)
    assert not capi.exists("m1")
    assert capi.events("SuccessfulDrainNode") == []


def test_an_expired_node_drain_timeout_skips_the_rest_of_the_drain(capi: CapiWorld) -> None:
    capi.machine("m1", spec={"nodeDrainTimeout": "30s"},
                 annotations={f"{PRE_TERMINATE_DELETE_HOOK_PREFIX}/hold": ""})
    capi.pod("stuck", "m1", annotations={"harness.test/ignore-termination": "true"})
    capi.world.settle()
    capi.delete("m1")
    capi.world.advance(25)
    assert capi.deleting("m1")["reason"] == "DrainingNode"
    capi.world.advance(20)
    assert capi.deleting("m1")["reason"] == "WaitingForPreTerminateHook"
    drained = capi.condition("m1", "DrainingSucceeded")
    assert (drained["status"], drained["reason"]) == ("False", "Draining")


# A KubeadmControlPlane controlling a Machine, by name only (no such object exists).
KCP_OWNER = {"apiVersion": CONTROL_PLANE_API_VERSION, "kind": "KubeadmControlPlane", "name": "cp", "uid": "kcp-uid",
             "controller": True}


def test_a_kcp_machine_without_the_cleanup_hook_skips_drain_and_volume_wait(capi: CapiWorld) -> None:
    capi.world.set_enabled("garbage-collector", False)  # the owner is a name only
    owner = dict(KCP_OWNER)
    capi.machine("cp2", control_plane=True, owner=owner, annotations={f"{PRE_TERMINATE_DELETE_HOOK_PREFIX}/hold": ""})
    capi.pod("static", "cp2")
    capi.world.settle()
    capi.delete("cp2")
    capi.world.advance(5)
    assert capi.deleting("cp2")["reason"] == "WaitingForPreTerminateHook"
    assert capi.condition("cp2", "DrainingSucceeded") is None
    assert capi.condition("cp2", "VolumeDetachSucceeded") is None
    assert not capi.remote.get("v1", "Node", "cp2")["spec"].get("unschedulable")


def test_a_kcp_machine_with_the_cleanup_hook_is_drained(capi: CapiWorld) -> None:
    capi.world.set_enabled("garbage-collector", False)  # the owner is a name only
    owner = dict(KCP_OWNER)
    capi.machine(
        "cp2", control_plane=True, owner=owner, annotations={f"{PRE_TERMINATE_DELETE_HOOK_PREFIX}/kcp-cleanup": ""}
    )
    capi.delete("cp2")
    assert capi.deleting("cp2")["reason"] == "WaitingForPreTerminateHook"
    assert capi.condition("cp2", "DrainingSucceeded")["status"] == "True"
    assert capi.remote.get("v1", "Node", "cp2")["spec"]["unschedulable"] is True


# -- infrastructure, bootstrap and Node deletion -----------------------------------------------------------


def test_the_bootstrap_config_is_deleted_only_after_the_infrastructure_is_gone(capi: CapiWorld) -> None:
    capi.machine("m1", infra_annotations={"harness.test/deletion-delay": "5m"})
    capi.delete("m1")
    capi.world.advance(299)
    config = capi.client.get(BOOTSTRAP_API_VERSION, "FakeBootstrapConfig", "m1", DEFAULT_NAMESPACE)
    assert not config["metadata"].get("deletionTimestamp")
    assert capi.node_exists("m1")
    capi.world.advance(5)
    assert not capi.exists("m1")


def test_a_stuck_infrastructure_deletion_waits_visibly(capi: CapiWorld) -> None:
    capi.machine("m1", infra_annotations={"harness.test/deletion-stuck": "true"})
    capi.delete("m1")
    capi.world.advance(3600)
    assert capi.deleting("m1")["message"] == "Waiting for FakeMachine to be deleted"
    assert capi.node_exists("m1")


def _refuse_node_deletion(capi: CapiWorld) -> None:
    def refuse(operation: str, rt: Any, new: Any, old: Any) -> list[api_errors.FieldError]:
        if operation == "DELETE":
            raise api_errors.internal("etcdserver: request timed out")
        return []

    server = capi.world.clusters.get(WORKLOAD)
    assert server is not None
    server.add_admission("", "Node", refuse)


def test_a_failing_node_deletion_is_retried_until_the_node_deletion_timeout(capi: CapiWorld) -> None:
    capi.machine("m1", spec={"nodeDeletionTimeout": "20s"})
    _refuse_node_deletion(capi)
    capi.delete("m1")
    capi.world.advance(5)
    condition = capi.deleting("m1")
    assert (condition["reason"], condition["message"]) == (
        "DeletingNode", "Error deleting Node, please check controller logs for errors")
    health = capi.condition("m1", "NodeHealthy")
    assert (health["status"], health["reason"], health["severity"]) == ("False", "DeletionFailed", "Warning")
    event = capi.events("FailedDeleteNode")[0]
    assert event["type"] == "Warning"
    assert event["message"] == (
        "error deleting Machine's node: error deleting node m1: Internal error occurred: etcdserver: request timed out")
    capi.world.advance(20)
    assert not capi.exists("m1")
    assert capi.node_exists("m1")


def test_a_zero_node_deletion_timeout_retries_forever(capi: CapiWorld) -> None:
    capi.machine("m1", spec={"nodeDeletionTimeout": "0s"})
    _refuse_node_deletion(capi)
    capi.delete("m1")
    capi.world.advance(3600)
    assert capi.deleting("m1")["reason"] == "DeletingNode"


# -- bad input ----------------------------------------------------------------------------------------------


def _machine_on(capi: CapiWorld, name: str, infra_kind: str, infra_name: str) -> None:
    """A Machine with a ready bootstrap secret whose infrastructure reference is ``infra_kind``/``infra_name``
    (which need not exist, nor be served)."""
    infra_ref = {"apiVersion": INFRASTRUCTURE_API_VERSION, "kind": infra_kind, "name": infra_name}
    capi.client.create({
        "apiVersion": CLUSTER_API_VERSION, "kind": "Machine",
        "metadata": {"name": name, "namespace": DEFAULT_NAMESPACE},
        "spec": {"clusterName": CLUSTER, "bootstrap": {"dataSecretName": "none"}, "infrastructureRef": infra_ref},
    })


def test_a_missing_infrastructure_machine_counts_as_deleted(capi: CapiWorld) -> None:
    _machine_on(capi, "ghost", "FakeMachine", "nowhere")
    capi.world.settle()
    assert capi.get("ghost")["status"]["phase"] == "Pending"
    capi.delete("ghost")
    capi.world.advance(5)
    assert not capi.exists("ghost")


def test_an_infrastructure_kind_the_server_does_not_serve_waits_visibly(capi: CapiWorld) -> None:
    _machine_on(capi, "odd", "NoSuchMachine", "x")
    capi.world.settle()
    capi.delete("odd")
    capi.world.advance(60)
    assert capi.deleting("odd")["message"] == "Waiting for NoSuchMachine to be deleted"


def test_a_paused_cluster_stops_deletion(capi: CapiWorld) -> None:
    capi.machine("m1")
    capi.client.patch(CLUSTER_API_VERSION, "Cluster", CLUSTER, {"spec": {"paused": True}}, namespace=DEFAULT_NAMESPACE)
    capi.delete("m1")
    capi.world.advance(60)
    assert capi.exists("m1")
    assert capi.deleting("m1")["reason"] == "NotDeleting"
    capi.client.patch(CLUSTER_API_VERSION, "Cluster", CLUSTER, {"spec": {"paused": False}}, namespace=DEFAULT_NAMESPACE)
    capi.world.advance(5)
    assert not capi.exists("m1")


def test_deletion_completes_without_controller_errors(capi: CapiWorld) -> None:
    capi.machine("m1")
    capi.delete("m1")
    capi.world.advance(5)
    assert not capi.exists("m1")
    assert capi.world.errors() == []
