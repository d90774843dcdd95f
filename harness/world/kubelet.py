"""The kubelet of every node of a cluster, simulated (plus the node lifecycle controller's node taints).

One :class:`Kubelet` runs all nodes: a pod belongs to the node named in ``spec.nodeName``. For a
bound pod on a healthy node it writes the status a real kubelet writes (Pending/ContainerCreating
while CSI volumes are not attached, then Running, then Ready), finishes pods that run to
completion, and ends graceful deletion with the final ``DELETE`` (grace period 0) once the grace
period is over. For every Node it posts the ``Ready``/pressure conditions and fills the status
fields a kubelet reports (addresses, nodeInfo, capacity, allocatable, ``volumesInUse``).

Knobs on the controller: ``ready_delay`` (seconds from container start to Ready, default 0) and
:meth:`Kubelet.set_node_health`. Knobs on objects (annotations):

- Pod ``harness.test/ready-delay`` (Go duration): overrides ``ready_delay`` for this pod.
- Pod ``harness.test/never-ready: "true"``: the pod runs but never becomes Ready.
- Pod ``harness.test/run-seconds`` (duration): the containers exit after running this long; the
  pod becomes Succeeded, or Failed when ``harness.test/exit-code`` is not "0" (restartPolicy
  Never; with Always/OnFailure a failed container is restarted after the CrashLoopBackOff delay).
- Pod ``harness.test/exit-code`` (integer, default "0"): the exit code of ``run-seconds``.
- Pod ``harness.test/shutdown-seconds`` (duration): on deletion, the containers stop after this
  long (exit code 0) instead of at the end of the grace period (exit code 137).
- Pod ``harness.test/ignore-termination: "true"``: the kubelet never finishes deleting the pod.
- Node ``harness.test/node-health``: ``True`` (default), ``False`` (kubelet posts NotReady) or
  ``Unknown`` (the kubelet stopped posting: nothing happens to the node's pods any more).
  :meth:`Kubelet.set_node_health` overrides the annotation.

A node whose health is not True gets the node lifecycle controller's NoSchedule taint
(``node.kubernetes.io/not-ready`` or ``node.kubernetes.io/unreachable``) and its pods are marked
not Ready, as ``MarkPodsNotReady`` does; a cordoned node gets ``node.kubernetes.io/unschedulable``.
The kubelet reports a CSI volume in ``volumesInUse`` from the moment a pod that needs it is
admitted until the pod stops, as the kubelet's volume manager does (``GetVolumesInUse``), and
starts the pod only once the volume is listed in ``volumesAttached``.
"""

from __future__ import annotations

import functools
import hashlib
import ipaddress
from collections.abc import Iterable
from typing import Any

from harness.client import ApiError, Client, Controller, Request, Result
from harness.client.interface import unanswered, update_status_unless_gone
from harness.clock import parse_rfc3339, rfc3339
from harness.kube.duration import duration_seconds
from harness.kube.names.core import (
    HOSTNAME_LABEL,
    KUBERNETES_VERSION,
    NO_SCHEDULE,
    NODE_READY,
    POD_FAILED,
    POD_PENDING,
    POD_READY,
    POD_RUNNING,
    POD_SUCCEEDED,
    UNSCHEDULABLE_TAINT,
)
from harness.kube.names.knobs import (
    EXIT_CODE_ANNOTATION,
    IGNORE_TERMINATION_ANNOTATION,
    NEVER_READY_ANNOTATION,
    NODE_HEALTH_ANNOTATION,
    READY_DELAY_ANNOTATION,
    RUN_SECONDS_ANNOTATION,
)
from harness.kube.names.storage import CSI_UNIQUE_NAME

# -- knobs ------------------------------------------------------------------------------------------
SHUTDOWN_SECONDS_ANNOTATION = "harness.test/shutdown-seconds"

HEALTHY = "True"
NOT_READY = "False"
UNREACHABLE = "Unknown"
NODE_HEALTH_VALUES = (HEALTHY, NOT_READY, UNREACHABLE)

# -- pods -------------------------------------------------------------------------------------------

POD_READY_TO_START_CONTAINERS = "PodReadyToStartContainers"
POD_INITIALIZED = "Initialized"
CONTAINERS_READY = "ContainersReady"
POD_SCHEDULED = "PodScheduled"
# The conditions the kubelet writes itself (_conditions); any other a pod has is kept after them.
_KUBELET_CONDITIONS = frozenset((POD_READY_TO_START_CONTAINERS, POD_INITIALIZED, POD_READY, CONTAINERS_READY,
                                 POD_SCHEDULED))
CONTAINERS_NOT_READY = "ContainersNotReady"
CONTAINERS_NOT_READY_MESSAGE = "containers with unready status: [{names}]"
POD_COMPLETED = "PodCompleted"
CONTAINER_CREATING = "ContainerCreating"
CRASH_LOOP_BACK_OFF = "CrashLoopBackOff"
CRASH_LOOP_MESSAGE = "back-off {delay} restarting failed container={container} pod={pod}_{namespace}({uid})"
COMPLETED = "Completed"
ERROR = "Error"
SIGKILL_EXIT_CODE = 137
# The kubelet's container restart back-off: 10 s doubling up to 5 min.
RESTART_BACKOFF_BASE = 10.0
RESTART_BACKOFF_MAX = 300.0
CONTAINER_RUNTIME = "containerd"

# -- nodes ------------------------------------------------------------------------------------------
MEMORY_PRESSURE = "MemoryPressure"
DISK_PRESSURE = "DiskPressure"
PID_PRESSURE = "PIDPressure"
KUBELET_READY = "KubeletReady"
KUBELET_READY_MESSAGE = "kubelet is posting ready status"
KUBELET_NOT_READY = "KubeletNotReady"
KUBELET_NOT_READY_MESSAGE = "container runtime is down"
NODE_STATUS_UNKNOWN = "NodeStatusUnknown"
NODE_STATUS_UNKNOWN_MESSAGE = "Kubelet stopped posting node status."
NODE_STATUS_NEVER_UPDATED = "NodeStatusNeverUpdated"
NODE_STATUS_NEVER_UPDATED_MESSAGE = "Kubelet never posted node status."
PRESSURE_CONDITIONS = (
    (MEMORY_PRESSURE, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    (DISK_PRESSURE, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    (PID_PRESSURE, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
)
NODE_CONDITION_TYPES = (MEMORY_PRESSURE, DISK_PRESSURE, PID_PRESSURE, NODE_READY)

NOT_READY_TAINT = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
MANAGED_TAINTS = (NOT_READY_TAINT, UNREACHABLE_TAINT, UNSCHEDULABLE_TAINT)

OS_LABEL = "kubernetes.io/os"
ARCH_LABEL = "kubernetes.io/arch"
BETA_OS_LABEL = "beta.kubernetes.io/os"
BETA_ARCH_LABEL = "beta.kubernetes.io/arch"
KUBELET_PORT = 10250
NODE_CAPACITY = {
    "cpu": "4", "ephemeral-storage": "102625208Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
    "memory": "16374624Ki", "pods": "110",
}
NODE_ALLOCATABLE = {
    "cpu": "4", "ephemeral-storage": "102625208Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
    "memory": "16272224Ki", "pods": "110",
}
# Deterministic fake addresses: nodes from 172.18.0.2 (as kind numbers them), pods from 10.244.0.2.
NODE_IP_BASE = ipaddress.IPv4Address("172.18.0.2")
POD_IP_BASE = ipaddress.IPv4Address("10.244.0.2")

# -- volumes ----------------------------------------------------------------------------------------

PodKey = tuple[str, str]


# -- pod helpers other simulators share (the kubelet owns pod status) ---------------------------------


def pod_condition(pod: dict[str, Any], condition_type: str) -> dict[str, Any] | None:
    """The pod's status condition of ``condition_type``, or None."""
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == condition_type:
            return condition  # type: ignore[no-any-return]
    return None


def pod_is_ready(pod: dict[str, Any]) -> bool:
    """True when the pod's ``Ready`` condition is True (``podutil.IsPodReady``)."""
    condition = pod_condition(pod, POD_READY)
    return condition is not None and condition.get("status") == "True"


def pod_is_terminal(pod: dict[str, Any]) -> bool:
    """True when the pod's phase is Succeeded or Failed."""
    return (pod.get("status") or {}).get("phase") in (POD_SUCCEEDED, POD_FAILED)


def pod_csi_volumes(client: Client, pod: dict[str, Any]) -> list[tuple[str, str, str]]:
    """``(driver, volumeHandle, pv name)`` for each of the pod's PVC volumes (``persistentVolumeClaim``
    or generic ``ephemeral``) whose claim is bound to a CSI PersistentVolume. Claims that do not
    exist or are unbound, and non-CSI volumes, are left out."""
    meta = pod.get("metadata") or {}
    namespace = meta.get("namespace") or ""
    out: list[tuple[str, str, str]] = []
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
        if not claim and "ephemeral" in volume:
            claim = f"{meta.get('name', '')}-{volume.get('name', '')}"
        if not claim:
            continue
        try:
            pvc = client.get("v1", "PersistentVolumeClaim", claim, namespace)
            pv_name = (pvc.get("spec") or {}).get("volumeName")
            if not pv_name:
                continue
            pv = client.get("v1", "PersistentVolume", pv_name)
        except ApiError as err:
            if err.code == 404:
                continue
            raise
        csi = (pv.get("spec") or {}).get("csi") or {}
        if csi.get("driver") and csi.get("volumeHandle"):
            out.append((csi["driver"], csi["volumeHandle"], pv_name))
    return out


def _duration(value: Any) -> float | None:
    if value is None or value == "":
        return None
    try:
        return max(0.0, duration_seconds(value))
    except ValueError:
        return None


def _annotations(obj: dict[str, Any]) -> dict[str, str]:
    return (obj.get("metadata") or {}).get("annotations") or {}


# What a new pod status keeps of the old one (_base_status).
_KEPT_STATUS = frozenset(("qosClass", "podIP", "podIPs", "nominatedNodeName"))


def _by_name(entry: dict[str, Any]) -> Any:
    return entry["name"]


def _address(base: ipaddress.IPv4Address, offset: int) -> str:
    """``str(base + offset)`` without building an address object (the kubelet numbers every pod)."""
    value = int(base) + offset
    if not 0 <= value <= 0xFFFFFFFF:
        return str(base + offset)  # out of the address space: raises as ipaddress does
    return f"{value >> 24}.{value >> 16 & 255}.{value >> 8 & 255}.{value & 255}"


# A pod's containers name a few images, the same for thousands of pods: each is worked out once.
@functools.lru_cache(maxsize=1024)
def _normalize_image(image: str) -> str:
    """The fully qualified reference the container runtime reports (``nginx`` → ``docker.io/library/nginx:latest``)."""
    name = image
    first, _, rest = name.partition("/")
    if not rest:
        name = f"docker.io/library/{name}"
    elif "." not in first and ":" not in first and first != "localhost":
        name = f"docker.io/{name}"
    last = name.rsplit("/", 1)[-1]
    if "@" not in last and ":" not in last:
        name += ":latest"
    return name


def _digest(*parts: str) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()


@functools.lru_cache(maxsize=1024)
def _image_id(image: str) -> str:
    """A repo digest for a normalized image reference, stable per image."""
    repository = image.split("@", 1)[0]
    if ":" in repository.rsplit("/", 1)[-1]:
        repository = repository.rsplit(":", 1)[0]
    return f"{repository}@sha256:{_digest(image)}"


class Kubelet(Controller):
    """Every node's kubelet in one cluster, and the node lifecycle controller's taints."""

    name = "kubelet"

    def __init__(self, client: Client) -> None:
        super().__init__()
        self.client = client
        self.ready_delay = 0.0
        self._pods: dict[PodKey, dict[str, Any]] = {}
        self._pods_by_node: dict[str, set[PodKey]] = {}
        self._nodes: dict[str, dict[str, Any]] = {}
        self._health: dict[str, str] = {}
        self._acted_health: dict[str, str] = {}
        # CSI unique volume names of admitted, not yet stopped pods: what the node reports in use.
        self._volumes: dict[PodKey, list[str]] = {}
        self._waiting: dict[str, set[PodKey]] = {}
        # Exact container start and restart instants (status timestamps are truncated to seconds).
        self._started: dict[str, float] = {}
        self._restart_at: dict[str, float] = {}
        self._wakeups: dict[float, set[PodKey]] = {}
        self._node_ips: dict[str, str] = {}
        self._next_pod_ip = 0

    # -- wiring ------------------------------------------------------------------------------------

    def setup(self) -> None:
        self.watch(self.client, "v1", "Node", self._on_node)
        self.watch(self.client, "v1", "Pod", self._on_pod)

    def _on_node(self, event: str, node: dict[str, Any]) -> Iterable[Request]:
        name = node["metadata"]["name"]
        if event == "DELETED":
            self._nodes.pop(name, None)
            self._acted_health.pop(name, None)
            self._waiting.pop(name, None)
            return ()
        self._nodes[name] = node
        return (Request("", name),)

    def _on_pod(self, event: str, pod: dict[str, Any]) -> Iterable[Request]:
        meta = pod["metadata"]
        key = (meta.get("namespace") or "", meta["name"])
        node = (pod.get("spec") or {}).get("nodeName") or ""
        if event == "DELETED":
            self._pods.pop(key, None)
            if node:
                self._pods_by_node.get(node, set()).discard(key)
                self._waiting.get(node, set()).discard(key)
            uid = meta.get("uid", "")
            self._started.pop(uid, None)
            self._restart_at.pop(uid, None)
            if self._volumes.pop(key, None):
                return (Request("", node),)
            return ()
        self._pods[key] = pod
        if not node:
            return ()
        on_node = self._pods_by_node.get(node)
        if on_node is None:
            on_node = self._pods_by_node[node] = set()
        on_node.add(key)
        return (Request(*key),)

    # -- knobs -------------------------------------------------------------------------------------

    def set_node_health(self, node_name: str, status: str) -> None:
        """Make ``node_name``'s kubelet healthy (``True``), NotReady (``False``) or unreachable
        (``Unknown``); takes effect at the next settle and overrides the node's annotation."""
        if status not in NODE_HEALTH_VALUES:
            raise ValueError(f"node health must be one of {', '.join(NODE_HEALTH_VALUES)}, not {status!r}")
        self._health[node_name] = status
        self.enqueue(Request("", node_name))

    def node_health(self, node_name: str) -> str:
        """The health the kubelet of ``node_name`` simulates: the :meth:`set_node_health` value, else
        the node's ``harness.test/node-health`` annotation, else ``True``."""
        if node_name in self._health:
            return self._health[node_name]
        node = self._nodes.get(node_name)
        value = _annotations(node).get(NODE_HEALTH_ANNOTATION) if node else None
        return value if value in NODE_HEALTH_VALUES else HEALTHY

    # -- reconcile ---------------------------------------------------------------------------------

    def reconcile(self, request: Request) -> Result | None:
        if not request.namespace:
            self._sync_node(request.name)
            return None
        result = self._sync_pod((request.namespace, request.name))
        if result is not None and result.requeue_after > 0:
            self._wake_at((request.namespace, request.name), self.now() + result.requeue_after)
        return None

    def _wake_at(self, key: PodKey, due: float) -> None:
        """Look at the pod again at ``due``. Pods due at the same instant share one timer, so they are
        handled together (thousands of pods ending their grace period at once are one batch, and
        the controllers that watch them see the batch, not one pod at a time)."""
        assert self.manager is not None
        bucket = self._wakeups.get(due)
        if bucket is None:
            bucket = self._wakeups[due] = set()
            self.manager.scheduler.call_at(due, lambda: self._wake(due))
        bucket.add(key)

    def _wake(self, due: float) -> None:
        for key in sorted(self._wakeups.pop(due, ())):
            self.enqueue(Request(*key))

    # -- nodes -------------------------------------------------------------------------------------

    def _sync_node(self, name: str) -> None:
        node = self._nodes.get(name)
        if node is None:
            return
        health = self.node_health(name)
        if self._acted_health.get(name) != health:
            self._acted_health[name] = health
            self._waiting.pop(name, None)
            for key in sorted(self._pods_by_node.get(name, ())):
                self.enqueue(Request(*key))
        else:
            for key in sorted(self._waiting.pop(name, set())):
                self.enqueue(Request(*key))
        node = self._sync_node_spec(node, health)
        self._sync_node_status(node, health)

    def _sync_node_spec(self, node: dict[str, Any], health: str) -> dict[str, Any]:
        """Registration labels, and the node lifecycle controller's NoSchedule taints."""
        meta, spec = node["metadata"], node.get("spec") or {}
        labels = meta.get("labels") or {}
        wanted_labels = {
            HOSTNAME_LABEL: meta["name"], OS_LABEL: "linux", ARCH_LABEL: "amd64", BETA_OS_LABEL: "linux",
            BETA_ARCH_LABEL: "amd64",
        }
        missing = {k: v for k, v in wanted_labels.items() if k not in labels}
        wanted_taints = []
        if health == NOT_READY:
            wanted_taints.append(NOT_READY_TAINT)
        elif health == UNREACHABLE:
            wanted_taints.append(UNREACHABLE_TAINT)
        if spec.get("unschedulable"):
            wanted_taints.append(UNSCHEDULABLE_TAINT)
        taints = list(spec.get("taints") or [])
        kept = [t for t in taints if not (t.get("key") in MANAGED_TAINTS and t.get("effect") == NO_SCHEDULE)
                or t.get("key") in wanted_taints]
        present = {t.get("key") for t in kept if t.get("effect") == NO_SCHEDULE}
        kept += [{"key": key, "effect": NO_SCHEDULE} for key in wanted_taints if key not in present]
        if not missing and kept == taints:
            return node
        body: dict[str, Any] = {"metadata": {"resourceVersion": meta["resourceVersion"]}}
        if missing:
            body["metadata"]["labels"] = missing
        if kept != taints:
            body["spec"] = {"taints": kept or None}
        return self.client.patch("v1", "Node", meta["name"], body)

    def _sync_node_status(self, node: dict[str, Any], health: str) -> None:
        name = node["metadata"]["name"]
        old = node.get("status") or {}
        status = dict(old)
        now = rfc3339(self.now())
        if health == UNREACHABLE:
            status["conditions"] = self._unreachable_conditions(node, now)
        else:
            status.setdefault("addresses", [{"type": "InternalIP", "address": self._node_ip(node)},
                                            {"type": "Hostname", "address": name}])
            status.setdefault("capacity", dict(NODE_CAPACITY))
            status.setdefault("allocatable", dict(NODE_ALLOCATABLE))
            status.setdefault("daemonEndpoints", {"kubeletEndpoint": {"Port": KUBELET_PORT}})
            status.setdefault("nodeInfo", self._node_info(node))
            status["conditions"] = self._posted_conditions(old.get("conditions") or [], health, now)
            in_use = sorted({v for key in self._pods_by_node.get(name, ()) for v in self._volumes.get(key, ())})
            if in_use:
                status["volumesInUse"] = in_use
            else:
                status.pop("volumesInUse", None)
        if status == old:
            return
        updated = dict(node)
        updated["status"] = status
        self.client.update_status(updated)

    def _node_ip(self, node: dict[str, Any]) -> str:
        name = node["metadata"]["name"]
        for address in (node.get("status") or {}).get("addresses") or []:
            if address.get("type") == "InternalIP" and address.get("address"):
                return str(address["address"])
        if name not in self._node_ips:
            self._node_ips[name] = _address(NODE_IP_BASE, len(self._node_ips))
        return self._node_ips[name]

    @staticmethod
    def _node_info(node: dict[str, Any]) -> dict[str, str]:
        uid = node["metadata"].get("uid", "")
        return {
            "architecture": "amd64",
            "bootID": _digest(uid, "boot")[:32],
            "containerRuntimeVersion": "containerd://1.7.24",
            "kernelVersion": "6.8.0-1017-generic",
            "kubeProxyVersion": KUBERNETES_VERSION,
            "kubeletVersion": KUBERNETES_VERSION,
            "machineID": _digest(uid, "machine")[:32],
            "operatingSystem": "linux",
            "osImage": "Debian GNU/Linux 12 (bookworm)",
            "systemUUID": _digest(uid, "system")[:32],
        }

    @staticmethod
    def _posted_conditions(existing: list[dict[str, Any]], health: str, now: str) -> list[dict[str, Any]]:
        """What a running kubelet posts: the pressure conditions and Ready, each keeping its
        timestamps while it does not change."""
        wanted = [(t, "False", reason, message) for t, reason, message in PRESSURE_CONDITIONS]
        if health == HEALTHY:
            wanted.append((NODE_READY, "True", KUBELET_READY, KUBELET_READY_MESSAGE))
        else:
            wanted.append((NODE_READY, "False", KUBELET_NOT_READY, KUBELET_NOT_READY_MESSAGE))
        by_type = {c.get("type"): c for c in existing}
        out = [c for c in existing if c.get("type") not in NODE_CONDITION_TYPES]
        for condition_type, status, reason, message in wanted:
            old = by_type.get(condition_type)
            if old and (old.get("status"), old.get("reason"), old.get("message")) == (status, reason, message):
                out.append(old)
                continue
            transition = old["lastTransitionTime"] if old and old.get("status") == status else now
            out.append({"type": condition_type, "status": status, "lastHeartbeatTime": now,
                        "lastTransitionTime": transition, "reason": reason, "message": message})
        return out

    @staticmethod
    def _unreachable_conditions(node: dict[str, Any], now: str) -> list[dict[str, Any]]:
        """What the node lifecycle controller writes when the kubelet stops posting (or never did)."""
        existing = (node.get("status") or {}).get("conditions") or []
        by_type = {c.get("type"): c for c in existing}
        out = [c for c in existing if c.get("type") not in NODE_CONDITION_TYPES]
        never = NODE_READY not in by_type
        for condition_type in NODE_CONDITION_TYPES:
            old = by_type.get(condition_type)
            if old is not None and old.get("status") == "Unknown":
                out.append(old)
                continue
            if never or old is None:
                out.append({"type": condition_type, "status": "Unknown",
                            "lastHeartbeatTime": node["metadata"].get("creationTimestamp", now),
                            "lastTransitionTime": now, "reason": NODE_STATUS_NEVER_UPDATED,
                            "message": NODE_STATUS_NEVER_UPDATED_MESSAGE})
                continue
            out.append({**old, "status": "Unknown", "lastTransitionTime": now, "reason": NODE_STATUS_UNKNOWN,
                        "message": NODE_STATUS_UNKNOWN_MESSAGE})
        return out

    # -- pods --------------------------------------------------------------------------------------

    def _sync_pod(self, key: PodKey) -> Result | None:
        pod = self._pods.get(key)
        if pod is None:
            return None
        node_name = pod["spec"].get("nodeName") or ""
        node = self._nodes.get(node_name)
        if node is None:
            return None  # no kubelet runs for a node that does not exist
        health = self.node_health(node_name)
        if health == UNREACHABLE:
            self._mark_not_ready(pod)
            return None
        if pod["metadata"].get("deletionTimestamp"):
            return self._terminate(key, pod)
        if pod_is_terminal(pod):
            self._release_volumes(key, node_name)
            return None
        if health == NOT_READY:
            self._mark_not_ready(pod)
            return None
        if not self._containers_started(pod):
            return self._start(key, pod, node)
        return self._run(pod)

    def _mark_not_ready(self, pod: dict[str, Any]) -> None:
        """Set Ready to False, as the node lifecycle controller's ``MarkPodsNotReady`` does."""
        if not pod_is_ready(pod):
            return
        status = dict(pod["status"])
        now = rfc3339(self.now())
        status["conditions"] = [
            {**c, "status": "False", "lastTransitionTime": now} if c.get("type") == POD_READY else c
            for c in status.get("conditions") or []
        ]
        self._write_status(pod, status)

    @staticmethod
    def _containers_started(pod: dict[str, Any]) -> bool:
        for container in (pod.get("status") or {}).get("containerStatuses") or []:
            state = container.get("state") or {}
            if "running" in state or "terminated" in state or container.get("restartCount"):
                return True
            if (state.get("waiting") or {}).get("reason") == CRASH_LOOP_BACK_OFF:
                return True
        return False

    # -- start -------------------------------------------------------------------------------------

    def _start(self, key: PodKey, pod: dict[str, Any], node: dict[str, Any]) -> Result | None:
        node_name = node["metadata"]["name"]
        volumes = self._admit_volumes(key, pod, node_name)
        if volumes and self._volumes_pending(volumes, node):
            self._waiting.setdefault(node_name, set()).add(key)
            if not self._is_container_creating(pod):
                self._write_status(pod, self._creating_status(pod, node))
            return None
        now = self.now()
        uid = pod["metadata"].get("uid", "")
        self._started[uid] = now
        ready = self._ready_delay(pod) == 0 and not self._never_ready(pod)
        self._write_status(pod, self._running_status(pod, node, now, ready))
        return self._next_deadline(pod, now)

    @staticmethod
    def _volumes_pending(volumes: list[str], node: dict[str, Any]) -> bool:
        """Whether any of ``volumes`` is not yet attached to ``node``, or not reported in use by it."""
        node_status = node.get("status") or {}
        attached = {v.get("name") for v in node_status.get("volumesAttached") or []}
        reported = set(node_status.get("volumesInUse") or [])
        return any(v not in attached or v not in reported for v in volumes)

    def _admit_volumes(self, key: PodKey, pod: dict[str, Any], node_name: str) -> list[str]:
        """Resolve the pod's CSI volumes once; from then on the node reports them in use."""
        if key in self._volumes:
            return self._volumes[key]
        specs = (pod.get("spec") or {}).get("volumes") or []
        if not any("persistentVolumeClaim" in v or "ephemeral" in v for v in specs):
            return []
        names = sorted({CSI_UNIQUE_NAME.format(driver=d, handle=h) for d, h, _ in pod_csi_volumes(self.client, pod)})
        if names:
            self._volumes[key] = names
            self.enqueue(Request("", node_name))
        return names

    def _release_volumes(self, key: PodKey, node_name: str) -> None:
        if self._volumes.pop(key, None):
            self.enqueue(Request("", node_name))

    @staticmethod
    def _is_container_creating(pod: dict[str, Any]) -> bool:
        statuses = (pod.get("status") or {}).get("containerStatuses") or []
        return bool(statuses) and all(
            ((s.get("state") or {}).get("waiting") or {}).get("reason") == CONTAINER_CREATING for s in statuses
        )

    def _ready_delay(self, pod: dict[str, Any]) -> float:
        value = _duration(_annotations(pod).get(READY_DELAY_ANNOTATION))
        return value if value is not None else max(0.0, float(self.ready_delay))

    @staticmethod
    def _never_ready(pod: dict[str, Any]) -> bool:
        return str(_annotations(pod).get(NEVER_READY_ANNOTATION, "")).lower() == "true"

    # -- running -----------------------------------------------------------------------------------

    def _start_time(self, pod: dict[str, Any]) -> float:
        uid = pod["metadata"].get("uid", "")
        if uid in self._started:
            return self._started[uid]
        for container in (pod.get("status") or {}).get("containerStatuses") or []:
            running = (container.get("state") or {}).get("running") or {}
            if running.get("startedAt"):
                self._started[uid] = parse_rfc3339(running["startedAt"])
                return self._started[uid]
        return self.now()

    def _next_deadline(self, pod: dict[str, Any], started: float, never_ready: bool | None = None,
                       run: float | None | bool = False) -> Result | None:
        """When the pod's next change is due. ``never_ready`` and ``run`` (False: not given) are the
        pod's own, when the caller has read them already."""
        now = self.now()
        due = []
        if never_ready is None:
            never_ready = self._never_ready(pod)
        if not never_ready and not pod_is_ready(pod):
            due.append(started + self._ready_delay(pod))
        if run is False:
            run = _duration(_annotations(pod).get(RUN_SECONDS_ANNOTATION))
        if run is not None:
            due.append(started + run)
        # What is due now is handled by the reconcile our own status write triggers.
        later = [d - now for d in due if d > now]
        return Result(requeue_after=min(later)) if later else None

    def _run(self, pod: dict[str, Any]) -> Result | None:
        now = self.now()
        uid = pod["metadata"].get("uid", "")
        node = self._nodes[pod["spec"]["nodeName"]]
        if self._crash_looping(pod):
            restart_at = self._restart_at.get(uid, now)
            if now < restart_at:
                return Result(requeue_after=restart_at - now)
            self._restart_at.pop(uid, None)
            self._started[uid] = now
            ready = self._ready_delay(pod) == 0 and not self._never_ready(pod)
            self._write_status(pod, self._running_status(pod, node, now, ready, restart=True))
            return self._next_deadline(pod, now)
        started = self._start_time(pod)
        run = _duration(_annotations(pod).get(RUN_SECONDS_ANNOTATION))
        if run is not None and now >= started + run:
            return self._exit(pod, node, started, started + run)
        never_ready = self._never_ready(pod)
        want_ready = not never_ready and now >= started + self._ready_delay(pod)
        if want_ready != pod_is_ready(pod):
            self._write_status(pod, self._running_status(pod, node, started, want_ready))
        return self._next_deadline(pod, started, never_ready, run)

    @staticmethod
    def _crash_looping(pod: dict[str, Any]) -> bool:
        return any(((s.get("state") or {}).get("waiting") or {}).get("reason") == CRASH_LOOP_BACK_OFF
                   for s in (pod.get("status") or {}).get("containerStatuses") or [])

    def _exit(self, pod: dict[str, Any], node: dict[str, Any], started: float, finished: float) -> Result | None:
        """The containers exited on their own: finish the pod, or restart them per restartPolicy."""
        try:
            code = int(str(_annotations(pod).get(EXIT_CODE_ANNOTATION, "0")))
        except ValueError:
            code = 1
        policy = pod["spec"].get("restartPolicy", "Always")
        if policy == "Never" or (policy == "OnFailure" and code == 0):
            key = (pod["metadata"].get("namespace") or "", pod["metadata"]["name"])
            self._write_status(pod, self._terminated_status(pod, node, started, finished, code))
            self._release_volumes(key, pod["spec"]["nodeName"])
            return None
        restarts = self._restart_count(pod)
        delay = min(RESTART_BACKOFF_BASE * (2**restarts), RESTART_BACKOFF_MAX)
        uid = pod["metadata"].get("uid", "")
        self._restart_at[uid] = finished + delay
        self._write_status(pod, self._crash_loop_status(pod, started, finished, code, delay))
        return Result(requeue_after=max(1e-9, finished + delay - self.now()))

    @staticmethod
    def _restart_count(pod: dict[str, Any]) -> int:
        counts = [int(s.get("restartCount") or 0) for s in (pod.get("status") or {}).get("containerStatuses") or []]
        return max(counts, default=0)

    # -- termination -------------------------------------------------------------------------------

    def _terminate(self, key: PodKey, pod: dict[str, Any]) -> Result | None:
        meta = pod["metadata"]
        node_name = pod["spec"]["nodeName"]
        if pod_is_terminal(pod) or not self._containers_started(pod):
            self._release_volumes(key, node_name)
            self._final_delete(pod)
            return None
        if str(_annotations(pod).get(IGNORE_TERMINATION_ANNOTATION, "")).lower() == "true":
            return None
        deadline = parse_rfc3339(meta["deletionTimestamp"])
        begun = deadline - float(meta.get("deletionGracePeriodSeconds") or 0)
        end = deadline
        shutdown = _duration(_annotations(pod).get(SHUTDOWN_SECONDS_ANNOTATION))
        if shutdown is not None and begun + shutdown < deadline:
            end = begun + shutdown
        now = self.now()
        if now < end:
            return Result(requeue_after=end - now)
        code = 0 if end < deadline else SIGKILL_EXIT_CODE
        node = self._nodes[node_name]
        self._write_status(pod, self._terminated_status(pod, node, self._start_time(pod), now, code))
        self._release_volumes(key, node_name)
        self._final_delete(pod)
        return None

    def _final_delete(self, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        try:
            # The deleted Pod is not read: an in-process server then copies none for the answer.
            self.client.delete("v1", "Pod", meta["name"], meta.get("namespace"), grace_period_seconds=0,
                               preconditions={"uid": meta.get("uid", "")}, **unanswered(self.client))
        except ApiError as err:
            if err.code not in (404, 409):
                raise

    # -- status documents --------------------------------------------------------------------------

    def _write_status(self, pod: dict[str, Any], status: dict[str, Any]) -> None:
        update_status_unless_gone(self.client, pod, status, answer=False)

    def _pod_ip(self, pod: dict[str, Any], host_ip: str) -> str:
        if pod["spec"].get("hostNetwork"):
            return host_ip
        existing = (pod.get("status") or {}).get("podIP")
        if existing:
            return str(existing)
        ip = _address(POD_IP_BASE, self._next_pod_ip)
        self._next_pod_ip += 1
        return ip

    def _base_status(self, pod: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
        old = pod.get("status") or {}
        host_ip = self._node_ip(node)
        status: dict[str, Any] = {k: v for k, v in old.items() if k in _KEPT_STATUS}
        status["hostIP"] = host_ip
        host_ips = old.get("hostIPs")
        # The list read when it says the same (most writes): the server then takes it as stored
        # rather than decoding and comparing a new one.
        status["hostIPs"] = host_ips if host_ips == [{"ip": host_ip}] else [{"ip": host_ip}]
        status["startTime"] = old.get("startTime") or rfc3339(self.now())
        return status

    def _conditions(
        self, pod: dict[str, Any], sandbox: bool, initialized: tuple[str, str], ready: tuple[str, str, str]
    ) -> list[dict[str, Any]]:
        """The kubelet's five pod conditions (keeping transition times that did not change) followed
        by any others (DisruptionTarget, readiness gates)."""
        now = rfc3339(self.now())
        old = {c.get("type"): c for c in (pod.get("status") or {}).get("conditions") or []}
        ready_status, reason, message = ready
        wanted = (
            (POD_READY_TO_START_CONTAINERS, "True" if sandbox else "False", "", ""),
            (POD_INITIALIZED, initialized[0], initialized[1], ""),
            (POD_READY, ready_status, reason, message),
            (CONTAINERS_READY, ready_status, reason, message),
            (POD_SCHEDULED, "True", "", ""),
        )
        out = []
        for condition_type, status, why, text in wanted:
            previous = old.get(condition_type)
            transition = previous.get("lastTransitionTime") if previous and previous.get("status") == status else None
            condition: dict[str, Any] = {"type": condition_type, "status": status, "lastProbeTime": None,
                                         "lastTransitionTime": transition or now}
            if why:
                condition["reason"] = why
            if text:
                condition["message"] = text
            out.append(condition)
        out += [c for t, c in old.items() if t not in _KUBELET_CONDITIONS]
        return out

    @staticmethod
    def _not_ready(pod: dict[str, Any]) -> tuple[str, str, str]:
        names = " ".join(sorted(c.get("name", "") for c in pod["spec"].get("containers") or []))
        return "False", CONTAINERS_NOT_READY, CONTAINERS_NOT_READY_MESSAGE.format(names=names)

    def _container_base(self, pod: dict[str, Any], container: dict[str, Any]) -> dict[str, Any]:
        image = _normalize_image(str(container.get("image", "")))
        out: dict[str, Any] = {"name": container.get("name", ""), "image": image}
        mounts = []
        for mount in container.get("volumeMounts") or []:
            entry = {"name": mount.get("name"), "mountPath": mount.get("mountPath")}
            if mount.get("readOnly"):
                entry.update({"readOnly": True, "recursiveReadOnly": "Disabled"})
            mounts.append(entry)
        if mounts:
            out["volumeMounts"] = mounts
        return out

    def _container_id(self, pod: dict[str, Any], name: str, restarts: int) -> str:
        return f"{CONTAINER_RUNTIME}://{_digest(pod['metadata'].get('uid', ''), name, str(restarts))}"

    def _init_statuses(self, pod: dict[str, Any], started: str) -> list[dict[str, Any]]:
        out = []
        for container in pod["spec"].get("initContainers") or []:
            status = self._container_base(pod, container)
            status.update({"imageID": _image_id(status["image"]),
                           "containerID": self._container_id(pod, status["name"], 0), "lastState": {},
                           "restartCount": 0})
            if container.get("restartPolicy") == "Always":  # a sidecar keeps running
                status.update({"ready": True, "started": True, "state": {"running": {"startedAt": started}}})
            else:
                status.update({"ready": True, "started": False, "state": {"terminated": {
                    "exitCode": 0, "reason": COMPLETED, "startedAt": started, "finishedAt": started,
                    "containerID": status["containerID"]}}})
            out.append(status)
        return out

    def _creating_status(self, pod: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
        status = self._base_status(pod, node)
        status.pop("podIP", None)
        status.pop("podIPs", None)
        status["phase"] = POD_PENDING
        status["conditions"] = self._conditions(pod, False, ("True", ""), self._not_ready(pod))
        statuses = []
        for container in pod["spec"].get("containers") or []:
            entry = self._container_base(pod, container)
            entry.update({"imageID": "", "lastState": {}, "ready": False, "restartCount": 0, "started": False,
                          "state": {"waiting": {"reason": CONTAINER_CREATING}}})
            statuses.append(entry)
        status["containerStatuses"] = sorted(statuses, key=lambda s: s["name"])
        return status

    def _running_status(
        self, pod: dict[str, Any], node: dict[str, Any], started: float, ready: bool, *, restart: bool = False
    ) -> dict[str, Any]:
        status = self._base_status(pod, node)
        pod_ip = self._pod_ip(pod, status["hostIP"])
        status["phase"] = POD_RUNNING
        status["podIP"] = pod_ip
        status["podIPs"] = [{"ip": pod_ip}]
        readiness = ("True", "", "") if ready else self._not_ready(pod)
        status["conditions"] = self._conditions(pod, True, ("True", ""), readiness)
        started_at = rfc3339(started)
        old = {s.get("name"): s for s in (pod.get("status") or {}).get("containerStatuses") or []}
        statuses = []
        for container in pod["spec"].get("containers") or []:
            entry = self._container_base(pod, container)
            previous = old.get(entry["name"]) or {}
            restarts = int(previous.get("restartCount") or 0) + (1 if restart else 0)
            last_state = previous.get("lastState") or {}
            running_since = started_at
            if not restart and "running" in (previous.get("state") or {}):
                running_since = previous["state"]["running"].get("startedAt", started_at)
            entry.update({
                "containerID": self._container_id(pod, entry["name"], restarts),
                "imageID": _image_id(entry["image"]),
                "lastState": last_state, "ready": ready, "restartCount": restarts, "started": True,
                "state": {"running": {"startedAt": running_since}},
            })
            statuses.append(entry)
        status["containerStatuses"] = sorted(statuses, key=_by_name) if len(statuses) > 1 else statuses
        init = self._init_statuses(pod, started_at)
        if init:
            status["initContainerStatuses"] = init
        return status

    def _terminated_status(
        self, pod: dict[str, Any], node: dict[str, Any], started: float, finished: float, code: int
    ) -> dict[str, Any]:
        status = self._base_status(pod, node)
        succeeded = code == 0
        status["phase"] = POD_SUCCEEDED if succeeded else POD_FAILED
        if succeeded:
            status["conditions"] = self._conditions(pod, False, ("True", POD_COMPLETED), ("False", POD_COMPLETED, ""))
        else:
            status["conditions"] = self._conditions(pod, False, ("True", ""), self._not_ready(pod))
        old = {s.get("name"): s for s in (pod.get("status") or {}).get("containerStatuses") or []}
        statuses = []
        for container in pod["spec"].get("containers") or []:
            entry = self._container_base(pod, container)
            previous = old.get(entry["name"]) or {}
            restarts = int(previous.get("restartCount") or 0)
            container_id = previous.get("containerID") or self._container_id(pod, entry["name"], restarts)
            entry.update({
                "containerID": container_id,
                "imageID": previous.get("imageID") or _image_id(entry["image"]),
                "lastState": previous.get("lastState") or {}, "ready": False, "restartCount": restarts,
                "started": False,
                "state": {"terminated": {"exitCode": code, "reason": COMPLETED if succeeded else ERROR,
                                         "startedAt": rfc3339(started), "finishedAt": rfc3339(finished),
                                         "containerID": container_id}},
            })
            statuses.append(entry)
        status["containerStatuses"] = sorted(statuses, key=lambda s: s["name"])
        if "initContainerStatuses" in (pod.get("status") or {}):
            status["initContainerStatuses"] = pod["status"]["initContainerStatuses"]
        return status

    def _crash_loop_status(
        self, pod: dict[str, Any], started: float, finished: float, code: int, delay: float
    ) -> dict[str, Any]:
        status = dict(pod["status"])
        status["conditions"] = self._conditions(pod, True, ("True", ""), self._not_ready(pod))
        meta = pod["metadata"]
        statuses = []
        for previous in status.get("containerStatuses") or []:
            entry = dict(previous)
            container_id = previous.get("containerID", "")
            entry["lastState"] = {"terminated": {
                "exitCode": code, "reason": COMPLETED if code == 0 else ERROR, "startedAt": rfc3339(started),
                "finishedAt": rfc3339(finished), "containerID": container_id}}
            entry["state"] = {"waiting": {"reason": CRASH_LOOP_BACK_OFF, "message": CRASH_LOOP_MESSAGE.format(
                delay=f"{int(delay) // 60}m{int(delay) % 60}s" if delay >= 60 else f"{int(delay)}s",
                container=entry.get("name", ""), pod=meta["name"], namespace=meta.get("namespace", ""),
                uid=meta.get("uid", ""))}}
            entry["ready"] = False
            entry["started"] = False
            statuses.append(entry)
        status["containerStatuses"] = statuses
        return status
