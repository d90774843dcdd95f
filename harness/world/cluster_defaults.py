"""What a fresh cluster has before anyone writes to it, as kind or envtest-with-controllers have it
(reference/apiserver-for-any-client.md §6), for ``serve`` (scenario worlds start empty):

* :class:`ServiceAccounts` (kube-controller-manager's serviceaccounts controller): the ``default``
  ServiceAccount in every active namespace, made again when it is deleted;
* :class:`RootCAPublisher` (the root-ca-cert-publisher): the ``kube-root-ca.crt`` ConfigMap, whose
  ``ca.crt`` is the CA the server's certificate is signed by, in every active namespace; edits are
  reverted and a deleted one comes back. Without a CA (``serve --insecure-http``) it publishes nothing;
* :class:`PVCProtection` and :class:`PVProtection`: the ``StorageObjectInUseProtection`` admission
  (the ``kubernetes.io/pvc-protection`` / ``kubernetes.io/pv-protection`` finalizer on every new
  claim and volume) and the controllers that release them: a deleting claim once no Pod that has
  not terminated uses it, a deleting volume once it is not ``Bound``;
* :func:`add_nodes`: Ready Nodes, as a cluster's kubelets register them.

Each is a simulator like the others (switchable, ``--controllers``), installed per cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from harness.client import Client, Controller, Request, Result, find_in
from harness.clock import rfc3339
from harness.kube.names.core import KUBERNETES_VERSION

DEFAULT_SERVICE_ACCOUNT = "default"
ROOT_CA_CONFIGMAP = "kube-root-ca.crt"
ROOT_CA_KEY = "ca.crt"
ROOT_CA_DESCRIPTION_ANNOTATION = "kubernetes.io/description"
ROOT_CA_DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as "
    "the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of "
    "Kubernetes clusters."
)
PVC_PROTECTION = "kubernetes.io/pvc-protection"
PV_PROTECTION = "kubernetes.io/pv-protection"
TERMINATED_PHASES = ("Succeeded", "Failed")
NODE_NAME = "lifecycle-tck-node-{}"
# The nodes' kubelets run the Kubernetes release the kit follows.
KUBELET_VERSION = KUBERNETES_VERSION
Admission = tuple[str, str, Callable[..., list[Any]]]


def _active(namespace: dict[str, Any] | None) -> bool:
    return namespace is not None and not namespace["metadata"].get("deletionTimestamp") and (
        (namespace.get("status") or {}).get("phase") != "Terminating")


def _namespace_of(_event: str, obj: dict[str, Any]) -> Iterable[Request]:
    return [Request("", (obj.get("metadata") or {}).get("namespace") or "")]


class ServiceAccounts(Controller):
    """The ``default`` ServiceAccount of every active namespace."""

    name = "serviceaccount"

    def __init__(self, client: Client) -> None:
        super().__init__()
        self.client = client

    def setup(self) -> None:
        self.watch(self.client, "v1", "Namespace")
        self.watch(self.client, "v1", "ServiceAccount", _namespace_of)

    def reconcile(self, request: Request) -> Result | None:
        if not _active(find_in(self.client, "v1", "Namespace", request.name)):
            return None
        if find_in(self.client, "v1", "ServiceAccount", DEFAULT_SERVICE_ACCOUNT, request.name) is None:
            self.client.create({"apiVersion": "v1", "kind": "ServiceAccount",
                                "metadata": {"name": DEFAULT_SERVICE_ACCOUNT, "namespace": request.name}})
        return None


class RootCAPublisher(Controller):
    """The ``kube-root-ca.crt`` ConfigMap of every active namespace, kept as published."""

    name = "root-ca-cert-publisher"

    def __init__(self, client: Client) -> None:
        super().__init__()
        self.client = client
        # The CA PEM, asked for at each reconcile: the world sets it (serve makes the CA).
        self.ca_source: Callable[[], bytes | None] = lambda: None

    def setup(self) -> None:
        self.watch(self.client, "v1", "Namespace")
        self.watch(self.client, "v1", "ConfigMap", _namespace_of, field_selector=f"metadata.name={ROOT_CA_CONFIGMAP}")

    def reconcile(self, request: Request) -> Result | None:
        ca = self.ca_source()
        if not ca or not _active(find_in(self.client, "v1", "Namespace", request.name)):
            return None
        data = {ROOT_CA_KEY: ca.decode()}
        annotations = {ROOT_CA_DESCRIPTION_ANNOTATION: ROOT_CA_DESCRIPTION}
        current = find_in(self.client, "v1", "ConfigMap", ROOT_CA_CONFIGMAP, request.name)
        if current is None:
            self.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                "metadata": {"name": ROOT_CA_CONFIGMAP, "namespace": request.name,
                                             "annotations": annotations},
                                "data": data})
        elif current.get("data") != data or (current["metadata"].get("annotations") or {}).get(
                ROOT_CA_DESCRIPTION_ANNOTATION) != ROOT_CA_DESCRIPTION:
            current["data"] = data
            current["metadata"]["annotations"] = {**(current["metadata"].get("annotations") or {}), **annotations}
            current.pop("binaryData", None)
            self.client.update(current)
        return None


def _protect(finalizer: str, switch: Controller) -> Callable[..., list[Any]]:
    """A mutating admission plugin adding ``finalizer`` to new objects while ``switch`` is enabled."""

    def admit(operation: str, _rt: Any, new: dict[str, Any] | None, _old: dict[str, Any] | None) -> list[Any]:
        if operation == "CREATE" and new is not None and switch.enabled:
            meta = new.setdefault("metadata", {})
            finalizers = list(meta.get("finalizers") or [])
            if finalizer not in finalizers:
                meta["finalizers"] = [*finalizers, finalizer]
        return []

    return admit


def _release(client: Client, obj: dict[str, Any], finalizer: str) -> None:
    meta = obj["metadata"]
    meta["finalizers"] = [f for f in meta.get("finalizers") or [] if f != finalizer]
    client.update(obj)


def _claims_of(_event: str, pod: dict[str, Any]) -> Iterable[Request]:
    namespace = pod["metadata"].get("namespace") or ""
    return [Request(namespace, volume["persistentVolumeClaim"]["claimName"])
            for volume in (pod.get("spec") or {}).get("volumes") or []
            if isinstance(volume, dict) and isinstance(volume.get("persistentVolumeClaim"), dict)
            and volume["persistentVolumeClaim"].get("claimName")]


class PVCProtection(Controller):
    """``kubernetes.io/pvc-protection``: added to new claims, removed from a deleting claim once no
    Pod that has not terminated uses it."""

    name = "pvc-protection"

    def __init__(self, client: Client) -> None:
        super().__init__()
        self.client = client

    def admission_plugins(self) -> list[Admission]:
        """What the apiserver runs for this controller (StorageObjectInUseProtection)."""
        return [("", "PersistentVolumeClaim", _protect(PVC_PROTECTION, self))]

    def setup(self) -> None:
        self.watch(self.client, "v1", "PersistentVolumeClaim")
        self.watch(self.client, "v1", "Pod", _claims_of)

    def reconcile(self, request: Request) -> Result | None:
        claim = find_in(self.client, "v1", "PersistentVolumeClaim", request.name, request.namespace)
        if claim is None or not claim["metadata"].get("deletionTimestamp"):
            return None
        if PVC_PROTECTION not in (claim["metadata"].get("finalizers") or []):
            return None
        for pod in self.client.list("v1", "Pod", request.namespace)["items"]:
            if (pod.get("status") or {}).get("phase") not in TERMINATED_PHASES and request in _claims_of("", pod):
                return None  # in use: a Pod event brings the claim back here
        _release(self.client, claim, PVC_PROTECTION)
        return None


class PVProtection(Controller):
    """``kubernetes.io/pv-protection``: added to new volumes, removed from a deleting volume once it
    is not ``Bound``."""

    name = "pv-protection"

    def __init__(self, client: Client) -> None:
        super().__init__()
        self.client = client

    def admission_plugins(self) -> list[Admission]:
        """What the apiserver runs for this controller (StorageObjectInUseProtection)."""
        return [("", "PersistentVolume", _protect(PV_PROTECTION, self))]

    def setup(self) -> None:
        self.watch(self.client, "v1", "PersistentVolume")

    def reconcile(self, request: Request) -> Result | None:
        volume = find_in(self.client, "v1", "PersistentVolume", request.name)
        if volume is None or not volume["metadata"].get("deletionTimestamp"):
            return None
        if PV_PROTECTION not in (volume["metadata"].get("finalizers") or []):
            return None
        if (volume.get("status") or {}).get("phase") == "Bound":
            return None
        _release(self.client, volume, PV_PROTECTION)
        return None


def node_manifest(name: str) -> dict[str, Any]:
    """A Node as a kubelet registers it (its well-known labels; the status follows)."""
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                                              "kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
                                              "beta.kubernetes.io/arch": "amd64"}},
        "spec": {},
    }


def _node_status(node: dict[str, Any], now: float, index: int) -> dict[str, Any]:
    resources = {"cpu": "8", "memory": "16Gi", "pods": "110", "ephemeral-storage": "100Gi"}
    name = node["metadata"]["name"]
    stamp = rfc3339(now)
    node["status"] = {
        **(node.get("status") or {}),
        "capacity": resources, "allocatable": resources,
        "addresses": [{"type": "InternalIP", "address": f"172.18.0.{index + 1}"},
                      {"type": "Hostname", "address": name}],
        "nodeInfo": {"kubeletVersion": KUBELET_VERSION, "kubeProxyVersion": KUBELET_VERSION,
                     "operatingSystem": "linux", "architecture": "amd64",
                     "containerRuntimeVersion": "containerd://1.7.0", "osImage": "lifecycle-tck",
                     "kernelVersion": "6.0.0", "machineID": name, "systemUUID": name, "bootID": name},
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                        "message": "kubelet is posting ready status", "lastHeartbeatTime": stamp,
                        "lastTransitionTime": stamp}],
    }
    return node


def add_nodes(client: Client, count: int, now: float) -> list[str]:
    """Register ``count`` Ready Nodes (``lifecycle-tck-node-1``, ...), as kubelets joining a
    cluster do (the kubelet simulator, when it runs, keeps posting their status); their names."""
    names = []
    for index in range(1, count + 1):
        name = NODE_NAME.format(index)
        node = find_in(client, "v1", "Node", name) or client.create(node_manifest(name))
        client.update_status(_node_status(node, now, index))
        names.append(name)
    return names
