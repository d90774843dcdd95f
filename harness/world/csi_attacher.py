"""CSI volume attachment: the attach/detach controller and the external-attacher in one simulator.

Per node, the *attach/detach controller* side wants one VolumeAttachment for every CSI volume of a
non-terminated pod bound to the node (a PVC, or a generic ephemeral volume's PVC, whose PV has
``spec.csi``). It creates ``csi-<sha256hex(volumeHandle + driver + nodeName)>`` (the kubelet CSI
plugin's ``getAttachmentName``) with ``{attacher, nodeName, source.persistentVolumeName}``. It detaches
(DELETEs the VolumeAttachment) once no pod needs the volume *and* the kubelet no longer lists it in
``status.volumesInUse``, unless the node is not Ready and the volume has waited ``max_wait_for_unmount``
(6 min) to be unmounted, or the node has the ``node.kubernetes.io/out-of-service`` taint (upstream's
forced detach). A deleted Node's VolumeAttachments are deleted. It detaches and reports only what it
attached: a VolumeAttachment created by someone else is left to the external-attacher side.

The *external-attacher* side adds the finalizer ``external-attacher/<driver, sanitized>``, sets
``status.attached=true``, and on deletion sets it false and removes the finalizer, so the object goes.
The node's ``status.volumesAttached`` lists ``{name: kubernetes.io/csi/<driver>^<volumeHandle>,
devicePath: ""}`` from attachment until the VolumeAttachment is gone (upstream drops the entry
just before it deletes the VolumeAttachment; keeping it through the detach makes a slow or stuck
detach visible there too). Entries it did not write are left alone.

A pod is terminated for this purpose when its phase is Succeeded/Failed, or when it is deleting and
no container is running (``IsPodTerminated``). Every CSI volume is attached (CSIDriver
``attachRequired: false`` is not consulted, as the kubelet simulator waits for every CSI volume).

Knobs: attributes ``attach_delay`` and ``detach_delay`` (seconds, default 0: the external-attacher's
ControllerPublish/Unpublish time) and ``max_wait_for_unmount`` (360). Annotations on the
PersistentVolume:

- ``harness.test/detach-delay`` (Go duration): overrides ``detach_delay`` for this volume.
- ``harness.test/detach-stuck: "true"``: ControllerUnpublish never succeeds: the VolumeAttachment is
  deleted but keeps its finalizer, ``status.attached=true`` and a ``detachError``; the node keeps
  the ``volumesAttached`` entry. Removing the annotation lets the detach finish.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Iterable
from typing import Any

from harness.client import ApiError, Client, Controller, Request, Result, find_in
from harness.clock import parse_rfc3339, rfc3339
from harness.kube.duration import duration_seconds
from harness.kube.names.core import NODE_READY, POD_FAILED, POD_SUCCEEDED
from harness.kube.names.knobs import DETACH_DELAY_ANNOTATION, DETACH_STUCK_ANNOTATION
from harness.kube.names.storage import CSI_UNIQUE_NAME, STORAGE_V1, VOLUME_ATTACHMENT
from harness.world.kubelet import pod_csi_volumes

ATTACHMENT_NAME = "csi-{digest}"
FINALIZER_PREFIX = "external-attacher/"
OUT_OF_SERVICE_TAINT = "node.kubernetes.io/out-of-service"
# The attach/detach controller's maxWaitForUnmountDuration.
MAX_WAIT_FOR_UNMOUNT = 360.0

DETACH_STUCK_MESSAGE = (
    "rpc error: code = DeadlineExceeded desc = ControllerUnpublishVolume is stuck (harness.test/detach-stuck)"
)

PodKey = tuple[str, str]


def attachment_name(volume_handle: str, driver: str, node_name: str) -> str:
    """The VolumeAttachment name the attach/detach controller uses: ``csi-`` and the SHA-256 hex of
    volumeHandle, driver and node name concatenated in that order."""
    digest = hashlib.sha256(f"{volume_handle}{driver}{node_name}".encode()).hexdigest()
    return ATTACHMENT_NAME.format(digest=digest)


def attacher_finalizer(driver: str) -> str:
    """``external-attacher/<driver>`` with every character outside ``[a-zA-Z0-9-]`` turned into ``-``
    (and an ``X`` appended when that leaves a trailing ``-``), as the external-attacher names it."""
    name = re.sub(r"[^a-zA-Z0-9-]", "-", driver)
    if name.endswith("-"):
        name += "X"
    return FINALIZER_PREFIX + name


def _pod_claims(pod: dict[str, Any]) -> tuple[str, ...]:
    volumes = (pod.get("spec") or {}).get("volumes")
    if not volumes:
        return ()
    meta = pod.get("metadata") or {}
    claims = []
    for volume in volumes:
        claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
        if not claim and "ephemeral" in volume:
            claim = f"{meta.get('name', '')}-{volume.get('name', '')}"
        if claim:
            claims.append(claim)
    return tuple(sorted(set(claims)))


def _pod_terminated(pod: dict[str, Any]) -> bool:
    status = pod.get("status") or {}
    if status.get("phase") in (POD_SUCCEEDED, POD_FAILED):
        return True
    if not (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    statuses = [
        *(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or []),
        *(status.get("ephemeralContainerStatuses") or []),
    ]
    return not any("running" in (s.get("state") or {}) for s in statuses)


def _node_ready(node: dict[str, Any]) -> bool:
    for condition in (node.get("status") or {}).get("conditions") or []:
        if condition.get("type") == NODE_READY:
            return condition.get("status") == "True"
    return False


def _out_of_service(node: dict[str, Any]) -> bool:
    return any(t.get("key") == OUT_OF_SERVICE_TAINT for t in (node.get("spec") or {}).get("taints") or [])


class CSIAttacher(Controller):
    name = "csi-attacher"

    def __init__(self, client: Client) -> None:
        super().__init__()
        self.client = client
        self.attach_delay = 0.0
        self.detach_delay = 0.0
        self.max_wait_for_unmount = MAX_WAIT_FOR_UNMOUNT
        # Indexes built from watch events, so that a change reaches only the nodes it concerns.
        self._pods: dict[PodKey, tuple[str, tuple[str, ...]]] = {}  # pod → (node, claims), pods with claims
        self._node_pods: dict[str, set[PodKey]] = {}
        self._claim_pods: dict[PodKey, set[PodKey]] = {}  # (namespace, claim) → pods
        self._node_vas: dict[str, set[str]] = {}
        self._pv_nodes: dict[str, set[str]] = {}
        self._va_pv: dict[str, tuple[str, str]] = {}  # VA name → (node, PV name)
        # What the controller learnt: VA name → (node, unique volume name), to clear volumesAttached.
        self._unique: dict[str, tuple[str, str]] = {}
        self._detach_requested: dict[str, float] = {}  # VA name → when detaching was first wanted
        self._on_pod = self._pod_event
        self._on_claim = self._claim_event
        self._on_pv = self._pv_event
        self._on_va = self._va_event
        self._on_node = self._node_event

    def setup(self) -> None:
        # Nodes last: within one batch of events the other indexes are up to date when a node's arrives.
        self.watch(self.client, "v1", "Pod", self._on_pod)
        self.watch(self.client, "v1", "PersistentVolumeClaim", self._on_claim)
        self.watch(self.client, "v1", "PersistentVolume", self._on_pv)
        self.watch(self.client, STORAGE_V1, VOLUME_ATTACHMENT, self._on_va)
        self.watch(self.client, "v1", "Node", self._on_node)

    # -- event mapping -------------------------------------------------------------------------------

    def _pod_event(self, event: str, pod: dict[str, Any]) -> Iterable[Request]:
        meta = pod.get("metadata") or {}
        key = (meta.get("namespace") or "", meta.get("name") or "")
        old = self._pods.pop(key, None)
        if old is not None:
            self._node_pods.get(old[0], set()).discard(key)
            for claim in old[1]:
                self._claim_pods.get((key[0], claim), set()).discard(key)
        claims = _pod_claims(pod) if event != "DELETED" else ()
        if not claims and old is None:
            return []  # a pod without claims, now as before: nothing indexed, no node to wake
        node = (pod.get("spec") or {}).get("nodeName") or ""
        if claims:
            self._pods[key] = (node, claims)
            self._node_pods.setdefault(node, set()).add(key)
            for claim in claims:
                self._claim_pods.setdefault((key[0], claim), set()).add(key)
        nodes = {n for n in (node if claims else "", old[0] if old else "") if n}
        return [Request("", n) for n in sorted(nodes)]

    def _claim_nodes(self, namespace: str, claim: str) -> set[str]:
        return {self._pods[p][0] for p in self._claim_pods.get((namespace, claim), ()) if self._pods[p][0]}

    def _claim_event(self, _event: str, pvc: dict[str, Any]) -> Iterable[Request]:
        meta = pvc.get("metadata") or {}
        return [Request("", n) for n in sorted(self._claim_nodes(meta.get("namespace") or "", meta.get("name") or ""))]

    def _pv_event(self, _event: str, pv: dict[str, Any]) -> Iterable[Request]:
        nodes = set(self._pv_nodes.get((pv.get("metadata") or {}).get("name") or "", ()))
        claim_ref = (pv.get("spec") or {}).get("claimRef") or {}
        if claim_ref.get("name"):
            nodes |= self._claim_nodes(claim_ref.get("namespace") or "", claim_ref["name"])
        return [Request("", n) for n in sorted(nodes)]

    def _va_event(self, event: str, va: dict[str, Any]) -> Iterable[Request]:
        name = (va.get("metadata") or {}).get("name") or ""
        spec = va.get("spec") or {}
        node, pv = spec.get("nodeName") or "", (spec.get("source") or {}).get("persistentVolumeName") or ""
        if event == "DELETED":
            self._forget_va(name)
        else:
            self._index_va(name, node, pv)
        return [Request("", node)] if node else []

    def _node_event(self, event: str, node: dict[str, Any]) -> Iterable[Request]:
        name = (node.get("metadata") or {}).get("name") or ""
        if event == "DELETED" or self._node_pods.get(name) or self._node_vas.get(name):
            return [Request("", name)]
        return []

    def _index_va(self, name: str, node: str, pv: str) -> None:
        self._va_pv[name] = (node, pv)
        self._node_vas.setdefault(node, set()).add(name)
        if pv:
            self._pv_nodes.setdefault(pv, set()).add(node)

    def _forget_va(self, name: str) -> None:
        node, pv = self._va_pv.pop(name, ("", ""))
        self._node_vas.get(node, set()).discard(name)
        if pv and not any(p == pv and n == node for n, p in self._va_pv.values()):
            self._pv_nodes.get(pv, set()).discard(node)

    # -- reconcile -----------------------------------------------------------------------------------

    def reconcile(self, request: Request) -> Result | None:
        """Bring the node's VolumeAttachments and ``volumesAttached`` in line with its pods."""
        node_name = request.name
        node = find_in(self.client, "v1", "Node", node_name)
        vas = {}
        for name in sorted(self._node_vas.get(node_name, ())):
            va = find_in(self.client, STORAGE_V1, VOLUME_ATTACHMENT, name)
            if va is not None and (va.get("spec") or {}).get("nodeName") == node_name:
                vas[name] = va
        desired = {} if node is None else self._desired(node_name)
        waits: list[float] = []
        attached: set[str] = set()
        gone: set[str] = set()
        for name, (driver, handle, pv_name) in desired.items():
            self._unique[name] = (node_name, CSI_UNIQUE_NAME.format(driver=driver, handle=handle))
            self._detach_requested.pop(name, None)
            if name not in vas:
                vas[name] = self._create(name, driver, node_name, pv_name)
        for name, va in vas.items():
            pv = self._pv_of(va)
            # Only what the attach/detach controller attached is its to detach and report; a
            # VolumeAttachment someone else created meets the external-attacher alone.
            managed = name in self._unique
            unique = self._unique_of(name, node_name, va, pv) if managed else ""
            if not va["metadata"].get("deletionTimestamp"):
                if node is not None:
                    va, wait = self._attach(va)
                    if wait:
                        waits.append(wait)
                if not managed:
                    continue
                wait = None if name in desired else self._may_detach(name, node, unique)
                if name in desired or wait is not None:
                    if wait:
                        waits.append(wait)
                    if (va.get("status") or {}).get("attached") and unique:
                        attached.add(unique)
                    continue
                va = self._delete(va)
                if va is None:
                    gone.add(name)
                    continue
            still_there, wait = self._detach(va, pv)
            if wait:
                waits.append(wait)
            if not still_there:
                gone.add(name)
            elif unique and (va.get("status") or {}).get("attached"):
                attached.add(unique)
        # VolumeAttachments that went away (here or earlier) take their volumesAttached entry along.
        removed = set()
        for name, (owner_node, unique) in list(self._unique.items()):
            if owner_node == node_name and (name in gone or (name not in vas and name not in desired)):
                removed.add(unique)
                del self._unique[name]
                self._detach_requested.pop(name, None)
        for name in gone:
            self._forget_va(name)
        if node is not None:
            self._sync_volumes_attached(node, attached, removed - attached)
        return Result(requeue_after=min(waits)) if waits else None

    def _desired(self, node_name: str) -> dict[str, tuple[str, str, str]]:
        """VA name → (driver, volume handle, PV name) for the node's non-terminated pods."""
        out: dict[str, tuple[str, str, str]] = {}
        for namespace, name in sorted(self._node_pods.get(node_name, ())):
            pod = find_in(self.client, "v1", "Pod", name, namespace)
            if pod is None or (pod.get("spec") or {}).get("nodeName") != node_name or _pod_terminated(pod):
                continue
            for driver, handle, pv_name in pod_csi_volumes(self.client, pod):
                out[attachment_name(handle, driver, node_name)] = (driver, handle, pv_name)
        return out

    def _unique_of(self, name: str, node_name: str, va: dict[str, Any], pv: dict[str, Any] | None) -> str:
        """The unique volume name of a managed VA (from its PV, or remembered when the PV is gone)."""
        csi = ((pv or {}).get("spec") or {}).get("csi") or {}
        if csi.get("volumeHandle"):
            driver = (va.get("spec") or {}).get("attacher") or csi.get("driver") or ""
            unique = CSI_UNIQUE_NAME.format(driver=driver, handle=csi["volumeHandle"])
            self._unique[name] = (node_name, unique)
            return unique
        return self._unique.get(name, ("", ""))[1]

    def _may_detach(self, name: str, node: dict[str, Any] | None, unique: str) -> float | None:
        """None when the volume may be detached now; otherwise seconds until a forced detach would be
        due (0: only a change of the node can allow it)."""
        now = self.now()
        requested = self._detach_requested.setdefault(name, now)
        if node is None or not unique or unique not in ((node.get("status") or {}).get("volumesInUse") or []):
            return None
        if _out_of_service(node):
            return None
        if _node_ready(node):
            return 0.0
        remaining = requested + self.max_wait_for_unmount - now
        # Upstream compares with a strict "greater than"; a tick later keeps the virtual clock exact.
        return None if remaining < 0 else remaining + 0.001

    # -- the external-attacher -----------------------------------------------------------------------

    def _attach(self, va: dict[str, Any]) -> tuple[dict[str, Any], float]:
        """Finalizer, then ``attached=true`` once ``attach_delay`` has passed since creation."""
        meta = va["metadata"]
        finalizer = attacher_finalizer((va.get("spec") or {}).get("attacher") or "")
        if finalizer not in (meta.get("finalizers") or []):
            va = self._patch_va(va, {"metadata": {"finalizers": [*(meta.get("finalizers") or []), finalizer],
                                                  "resourceVersion": meta["resourceVersion"]}})
        if (va.get("status") or {}).get("attached"):
            return va, 0.0
        remaining = parse_rfc3339(meta["creationTimestamp"]) + self.attach_delay - self.now()
        if remaining > 0:
            return va, remaining
        return self._patch_va(va, {"status": {"attached": True}}, status=True), 0.0

    def _detach(self, va: dict[str, Any], pv: dict[str, Any] | None) -> tuple[bool, float]:
        """ControllerUnpublish of a deleting VA: (still there, seconds to wait)."""
        meta = va["metadata"]
        annotations = ((pv or {}).get("metadata") or {}).get("annotations") or {}
        if annotations.get(DETACH_STUCK_ANNOTATION) == "true":
            if not (va.get("status") or {}).get("detachError"):
                self._patch_va(va, {"status": {"detachError": {"time": rfc3339(self.now()),
                                                               "message": DETACH_STUCK_MESSAGE}}}, status=True)
            return True, 0.0
        delay = self.detach_delay
        if annotations.get(DETACH_DELAY_ANNOTATION):
            with contextlib.suppress(ValueError):  # an unreadable knob leaves the default
                delay = max(0.0, duration_seconds(annotations[DETACH_DELAY_ANNOTATION]))
        remaining = parse_rfc3339(meta["deletionTimestamp"]) + delay - self.now()
        if remaining > 0:
            return True, remaining
        finalizer = attacher_finalizer((va.get("spec") or {}).get("attacher") or "")
        if (va.get("status") or {}).get("attached") or (va.get("status") or {}).get("detachError"):
            va = self._patch_va(va, {"status": {"attached": False, "detachError": None}}, status=True)
        finalizers = [f for f in va["metadata"].get("finalizers") or [] if f != finalizer]
        if finalizers == list(va["metadata"].get("finalizers") or []):
            return bool(finalizers), 0.0  # someone else's finalizer holds it
        try:
            self.client.patch(STORAGE_V1, VOLUME_ATTACHMENT, meta["name"], {
                "metadata": {"finalizers": finalizers or None, "resourceVersion": va["metadata"]["resourceVersion"]}})
        except ApiError as err:
            if err.code != 404:
                raise
            return False, 0.0
        return bool(finalizers), 0.0

    # -- requests ------------------------------------------------------------------------------------

    def _pv_of(self, va: dict[str, Any]) -> dict[str, Any] | None:
        pv_name = ((va.get("spec") or {}).get("source") or {}).get("persistentVolumeName")
        return find_in(self.client, "v1", "PersistentVolume", pv_name) if pv_name else None

    def _create(self, name: str, driver: str, node_name: str, pv_name: str) -> dict[str, Any]:
        body = {"apiVersion": STORAGE_V1, "kind": VOLUME_ATTACHMENT, "metadata": {"name": name},
                "spec": {"attacher": driver, "nodeName": node_name, "source": {"persistentVolumeName": pv_name}}}
        try:
            va = self.client.create(body)
        except ApiError as err:
            if err.code != 409:
                raise
            va = self.client.get(STORAGE_V1, VOLUME_ATTACHMENT, name)
        self._index_va(name, node_name, pv_name)
        return va

    def _delete(self, va: dict[str, Any]) -> dict[str, Any] | None:
        """DELETE the VA; the object as it now stands (deleting, held by finalizers), or None if gone."""
        name = va["metadata"]["name"]
        try:
            self.client.delete(STORAGE_V1, VOLUME_ATTACHMENT, name)
        except ApiError as err:
            if err.code != 404:
                raise
        return find_in(self.client, STORAGE_V1, VOLUME_ATTACHMENT, name)

    def _patch_va(self, va: dict[str, Any], body: dict[str, Any], *, status: bool = False) -> dict[str, Any]:
        return self.client.patch(STORAGE_V1, VOLUME_ATTACHMENT, va["metadata"]["name"], body,
                                 subresource="status" if status else "")

    def _sync_volumes_attached(self, node: dict[str, Any], attached: set[str], removed: set[str]) -> None:
        current = (node.get("status") or {}).get("volumesAttached") or []
        names = [v.get("name") for v in current]
        wanted = [v for v in current if v.get("name") not in removed]
        wanted += [{"name": u, "devicePath": ""} for u in sorted(attached) if u not in names]
        if wanted == current:
            return
        try:
            self.client.patch("v1", "Node", node["metadata"]["name"], {"status": {"volumesAttached": wanted or None}},
                              subresource="status")
        except ApiError as err:
            if err.code != 404:
                raise
