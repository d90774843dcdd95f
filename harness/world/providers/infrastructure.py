"""The fake infrastructure provider (``infrastructure.cluster.x-k8s.io/v1beta1``): FakeMachines and
FakeClusters, as a Cluster API infrastructure provider serves DockerMachines and DockerClusters.

A FakeMachine is provisioned once a Machine owns it (controller owner reference, which the machine
controller sets) and that Machine has bootstrap data (``spec.bootstrap.dataSecretName``): the provider
puts a Node into the Machine's workload cluster (``Machine.spec.clusterName``), named as the FakeMachine
with ``spec.providerID: fake://<namespace>/<fakemachine-name>`` (the kubelet simulator of that cluster
keeps it Ready) -- or adopts an existing Node with that providerID -- then sets the FakeMachine's
``spec.providerID`` and ``status.ready: true`` (with the Node's addresses). A control plane Machine's
Node gets the ``node-role.kubernetes.io/control-plane`` label, as kubeadm gives it.

The provider keeps the finalizer ``fakemachine.infrastructure.cluster.x-k8s.io`` on each FakeMachine and
removes it when the FakeMachine is deleted: the instance is gone. It never deletes the Node: that is the
machine controller's job, as in Cluster API. A FakeCluster gets ``spec.controlPlaneEndpoint`` and
``status.ready: true`` (finalizer ``fakecluster.infrastructure.cluster.x-k8s.io``).

Knobs (annotations, see :mod:`harness.world.providers.knobs`): ``harness.test/provision-delay``,
``harness.test/deletion-delay`` and ``harness.test/deletion-stuck: "true"`` on a FakeMachine or a
FakeCluster.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from harness.client import MERGE, ApiError, Client, Controller, Request, Result
from harness.kube.names.capi import (
    CLUSTER_API_VERSION,
    CONTROL_PLANE_LABEL,
    FAKE_CLUSTER_KIND,
    FAKE_MACHINE_KIND,
    MACHINE_KIND,
)
from harness.world.providers import knobs
from harness.world.providers.workload import WorkloadClients

API_GROUP = "infrastructure.cluster.x-k8s.io"
API_VERSION = API_GROUP + "/v1beta1"
FAKE_MACHINE_FINALIZER = "fakemachine.infrastructure.cluster.x-k8s.io"
FAKE_CLUSTER_FINALIZER = "fakecluster.infrastructure.cluster.x-k8s.io"
PROVIDER_ID = "fake://{namespace}/{name}"
CONTROL_PLANE_ENDPOINT_HOST = "{name}.{namespace}.fake.invalid"
CONTROL_PLANE_ENDPOINT_PORT = 6443
NODE_ROLE_CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane"
# How soon a FakeMachine whose workload cluster is not reachable yet is looked at again.
RETRY_SECONDS = 5.0


def provider_id(namespace: str, name: str) -> str:
    """The providerID of the FakeMachine ``namespace/name``."""
    return PROVIDER_ID.format(namespace=namespace, name=name)


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("metadata") or {}


def _owner_machine(obj: dict[str, Any]) -> str | None:
    for ref in _meta(obj).get("ownerReferences") or []:
        if ref.get("kind") == MACHINE_KIND and ref.get("controller"):
            return str(ref.get("name", ""))
    return None


class FakeInfrastructureProvider(Controller):
    """Provisions FakeMachines (with their Nodes) and FakeClusters; releases them when deleted."""

    name = "fake-infrastructure"

    def __init__(self, client: Client) -> None:
        super().__init__()
        self.client = client
        self.workloads = WorkloadClients(client)
        # (namespace, cluster) -> providerID -> Node name, seeded by one list and kept by a Node watch.
        self._nodes: dict[tuple[str, str], dict[str, str]] = {}
        self._node_mappers: dict[tuple[str, str], Any] = {}

    def setup(self) -> None:
        self.watch(self.client, API_VERSION, FAKE_MACHINE_KIND, self._on_fake_machine)
        self.watch(self.client, API_VERSION, FAKE_CLUSTER_KIND, self._on_fake_cluster)
        self.watch(self.client, CLUSTER_API_VERSION, MACHINE_KIND, self._on_machine)

    # Keys: FakeMachines as ("m:<namespace>", name), FakeClusters as ("c:<namespace>", name).
    @staticmethod
    def _on_fake_machine(_event: str, obj: dict[str, Any]) -> Iterable[Request]:
        return (Request("m:" + (_meta(obj).get("namespace") or ""), _meta(obj).get("name", "")),)

    @staticmethod
    def _on_fake_cluster(_event: str, obj: dict[str, Any]) -> Iterable[Request]:
        return (Request("c:" + (_meta(obj).get("namespace") or ""), _meta(obj).get("name", "")),)

    @staticmethod
    def _on_machine(_event: str, machine: dict[str, Any]) -> Iterable[Request]:
        ref = (machine.get("spec") or {}).get("infrastructureRef") or {}
        if ref.get("kind") != FAKE_MACHINE_KIND or str(ref.get("apiVersion", "")).split("/")[0] != API_GROUP:
            return ()
        return (Request("m:" + (ref.get("namespace") or _meta(machine).get("namespace") or ""), ref.get("name", "")),)

    def reconcile(self, request: Request) -> Result | None:
        kind, _, namespace = request.namespace.partition(":")
        if kind == "c":
            return self._reconcile_cluster(namespace, request.name)
        return self._reconcile_machine(namespace, request.name)

    # -- shared lifecycle --------------------------------------------------------------------------

    def _release(self, api_kind: str, obj: dict[str, Any], finalizer: str) -> Result | None:
        """A deleting object: drop the finalizer once the deletion delay is over (never when stuck)."""
        finalizers = list(_meta(obj).get("finalizers") or [])
        if finalizer not in finalizers or knobs.deletion_stuck(obj):
            return None
        due = knobs.gone_at(obj)
        if self.now() < due:
            return Result(requeue_after=due - self.now())
        finalizers.remove(finalizer)
        try:
            self.client.patch(API_VERSION, api_kind, _meta(obj)["name"], {"metadata": {"finalizers": finalizers}},
                              namespace=_meta(obj).get("namespace"), patch_type=MERGE)
        except ApiError as err:
            if err.code != 404:
                raise
        return None

    def _ensure_finalizer(self, api_kind: str, obj: dict[str, Any], finalizer: str) -> bool:
        """Add the finalizer; True when it had to be added (the watch brings the object back)."""
        finalizers = list(_meta(obj).get("finalizers") or [])
        if finalizer in finalizers:
            return False
        body = {"metadata": {"finalizers": finalizers + [finalizer]}}
        self.client.patch(API_VERSION, api_kind, _meta(obj)["name"], body, namespace=_meta(obj).get("namespace"),
                          patch_type=MERGE)
        return True

    # -- FakeCluster -------------------------------------------------------------------------------

    def _reconcile_cluster(self, namespace: str, name: str) -> Result | None:
        try:
            fake = self.client.get(API_VERSION, FAKE_CLUSTER_KIND, name, namespace)
        except ApiError as err:
            if err.code == 404:
                return None
            raise
        if _meta(fake).get("deletionTimestamp"):
            return self._release(FAKE_CLUSTER_KIND, fake, FAKE_CLUSTER_FINALIZER)
        if self._ensure_finalizer(FAKE_CLUSTER_KIND, fake, FAKE_CLUSTER_FINALIZER):
            return None
        due = knobs.ready_at(fake)
        if self.now() < due:
            return Result(requeue_after=due - self.now())
        if not (fake.get("spec") or {}).get("controlPlaneEndpoint", {}).get("host"):
            endpoint = {"host": CONTROL_PLANE_ENDPOINT_HOST.format(name=name, namespace=namespace),
                        "port": CONTROL_PLANE_ENDPOINT_PORT}
            fake = self.client.patch(API_VERSION, FAKE_CLUSTER_KIND, name, {"spec": {"controlPlaneEndpoint": endpoint}},
                                     namespace=namespace, patch_type=MERGE)
        if not (fake.get("status") or {}).get("ready"):
            fake["status"] = {**(fake.get("status") or {}), "ready": True}
            self.client.update_status(fake)
        return None

    # -- FakeMachine -------------------------------------------------------------------------------

    def _reconcile_machine(self, namespace: str, name: str) -> Result | None:
        try:
            fake = self.client.get(API_VERSION, FAKE_MACHINE_KIND, name, namespace)
        except ApiError as err:
            if err.code == 404:
                return None
            raise
        if _meta(fake).get("deletionTimestamp"):
            return self._release(FAKE_MACHINE_KIND, fake, FAKE_MACHINE_FINALIZER)
        if self._ensure_finalizer(FAKE_MACHINE_KIND, fake, FAKE_MACHINE_FINALIZER):
            return None
        if (fake.get("status") or {}).get("ready") and (fake.get("spec") or {}).get("providerID"):
            return None
        owner = _owner_machine(fake)
        if owner is None:
            return None  # waiting for the machine controller to own it
        try:
            machine = self.client.get(CLUSTER_API_VERSION, MACHINE_KIND, owner, namespace)
        except ApiError as err:
            if err.code == 404:
                return None
            raise
        if not ((machine.get("spec") or {}).get("bootstrap") or {}).get("dataSecretName"):
            return None  # waiting for bootstrap data; the Machine's update brings it back
        due = knobs.ready_at(fake)
        if self.now() < due:
            return Result(requeue_after=due - self.now())
        cluster = str((machine.get("spec") or {}).get("clusterName", ""))
        remote = self.workloads.get(namespace, cluster)
        if remote is None:
            return Result(requeue_after=RETRY_SECONDS)
        wanted_id = provider_id(namespace, name)
        try:
            index = self._node_index(namespace, cluster, remote)
            control_plane = CONTROL_PLANE_LABEL in (_meta(machine).get("labels") or {})
            node = self._ensure_node(remote, index, name, wanted_id, control_plane)
        except ConnectionError:
            return Result(requeue_after=RETRY_SECONDS)
        if node is None:
            return Result(requeue_after=RETRY_SECONDS)
        if (fake.get("spec") or {}).get("providerID") != wanted_id:
            fake = self.client.patch(API_VERSION, FAKE_MACHINE_KIND, name, {"spec": {"providerID": wanted_id}},
                                     namespace=namespace, patch_type=MERGE)
        status = dict(fake.get("status") or {})
        status["ready"] = True
        addresses = [{"type": a["type"], "address": a["address"]}
                     for a in (node.get("status") or {}).get("addresses") or [] if a.get("type") and a.get("address")]
        status["addresses"] = addresses or [{"type": "Hostname", "address": name}]
        fake["status"] = status
        self.client.update_status(fake)
        return None

    def forget_watches(self, cluster: str) -> None:
        """A workload cluster went away: drop its watch and what it told."""
        super().forget_watches(cluster)
        namespace, _, name = cluster.partition("/")
        self._nodes.pop((namespace, name), None)
        self._node_mappers.pop((namespace, name), None)

    def _node_index(self, namespace: str, cluster: str, remote: Client) -> dict[str, str]:
        """providerID -> Node name in the workload cluster: listed once, then followed through a watch."""
        key = (namespace, cluster)
        index = self._nodes.get(key)
        if index is None:
            index = self._nodes[key] = {}
            for node in remote.list("v1", "Node")["items"]:
                self._index(index, "ADDED", node)

            def mapper(event: str, node: dict[str, Any]) -> Iterable[Request]:
                self._index(index, event, node)
                pid = str((node.get("spec") or {}).get("providerID") or "")
                prefix = PROVIDER_ID.format(namespace=namespace, name="")
                return (Request("m:" + namespace, pid[len(prefix):]),) if pid.startswith(prefix) else ()

            self._node_mappers[key] = mapper
            self.watch(remote, "v1", "Node", mapper)
        return index

    @staticmethod
    def _index(index: dict[str, str], event: str, node: dict[str, Any]) -> None:
        pid = str((node.get("spec") or {}).get("providerID") or "")
        if not pid:
            return
        if event == "DELETED":
            if index.get(pid) == _meta(node).get("name"):
                del index[pid]
        else:
            index[pid] = str(_meta(node).get("name", ""))

    def _ensure_node(
        self, remote: Client, index: dict[str, str], name: str, wanted_id: str, control_plane: bool
    ) -> dict[str, Any] | None:
        """The workload cluster's Node for this instance: an existing one with the providerID, else one
        created under the instance's name (None when the name is taken by another instance's Node)."""
        known = index.get(wanted_id)
        if known:
            try:
                node = remote.get("v1", "Node", known)
                if (node.get("spec") or {}).get("providerID") == wanted_id:
                    return node
            except ApiError as err:
                if err.code != 404:
                    raise
        labels = {NODE_ROLE_CONTROL_PLANE_LABEL: ""} if control_plane else {}
        body = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
                "spec": {"providerID": wanted_id}}
        try:
            return remote.create(body)
        except ApiError as err:
            if err.code != 409:
                raise
        existing = remote.get("v1", "Node", name)
        if (existing.get("spec") or {}).get("providerID"):
            return None
        return remote.patch("v1", "Node", name, {"spec": {"providerID": wanted_id}}, patch_type=MERGE)
