"""The disruption controller: computes every PodDisruptionBudget's status, as kube-controller-manager's
``disruption`` controller (``pkg/controller/disruption/disruption.go``) does.

For each PDB it selects the pods of its namespace (policy/v1: a nil selector selects nothing, ``{}``
everything; terminal pods count) and writes, through ``pdbs/status``:

* ``expectedPods`` and ``desiredHealthy``: ``minAvailable: N`` uses the number of selected pods and
  N; ``minAvailable: "P%"`` and ``maxUnavailable`` use the *expected scale*, the sum of the
  ``spec.replicas`` of the pods' controllers (a Deployment's for its ReplicaSets; ReplicaSets,
  StatefulSets, ReplicationControllers; anything else through its scale subresource), with
  percentages rounded up; ``desiredHealthy = max(0, expectedScale - maxUnavailable)``;
* ``currentHealthy``: selected pods not deleting, Ready, and not in ``disruptedPods`` for less
  than two minutes;
* ``disruptionsAllowed = currentHealthy - desiredHealthy``, 0 when negative or when no pods are
  expected;
* ``disruptedPods`` without the pods that are gone, deleting, or overdue (a Warning
  ``NotDeleted`` on the pod; the PDB is synced again when the next entry falls due);
* ``observedGeneration`` and the ``DisruptionAllowed`` condition (True/SufficientPods or
  False/InsufficientPods).

Pods without a controller are left out of the expected scale (Warning ``UnmanagedPods``); a pod
whose controller cannot be found, or whose controller has no scale subresource (DaemonSet, Job),
fails the sync: ``disruptionsAllowed`` becomes 0 and the condition False/SyncFailed with the error.
A status that would not change is not written. A pod matched by several PDBs gets a Warning
``MultiplePodDisruptionBudgets``; a PDB that selects no pods a Normal ``NoPods``.

Knobs: none beyond switching the simulator off (``World.set_enabled("disruption", False)``), which
leaves PDB status stale: a new PDB then answers every eviction with the 429 "still being processed".
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from harness.apiserver.pdb import (
    DISRUPTION_ALLOWED,
    SYNC_FAILED,
    conditions_are_up_to_date,
    counts_pods_directly,
    desired_healthy,
    disruptions_allowed,
    is_pod_ready,
    pdb_selects,
    update_disruption_allowed_condition,
)
from harness.client import NORMAL, WARNING, ApiError, Client, Controller, EventRecorder, Request, Result, find_in
from harness.client.interface import unanswered
from harness.clock import parse_rfc3339, rfc3339
from harness.kube.conditions import set_status_condition
from harness.kube.groupversion import parse_group_version
from harness.kube.intstr import IntOrStringError
from harness.kube.names.apiextensions import APIEXTENSIONS_V1, CRD_KIND
from harness.kube.names.apps import APPS_V1
from harness.kube.names.core import CONDITION_FALSE
from harness.kube.names.policy import PDB_KIND, POLICY_V1
from harness.kube.ownerrefs import controller_of
from harness.kube.selectors import label_selector_from_dict

# The controller's event source (upstream records as the controller manager).
COMPONENT = "controllermanager"
# DeletionTimeout: how long an eviction's disruptedPods entry keeps a pod out of currentHealthy.
DELETION_TIMEOUT = 120.0
# A due entry is dropped only once strictly overdue; recheck a moment later (the rate limiter's base delay).
RECHECK_FLOOR = 0.005

# Event reasons and messages.
NO_PODS = "NoPods"
NO_PODS_MSG = "No matching pods found"
FAILED_TO_GET_PODS_MSG = "Failed to get pods: {}"
UNMANAGED_PODS = "UnmanagedPods"
UNMANAGED_PODS_MSG = (
    "Pods selected by this PodDisruptionBudget (selector: {}) were found to be unmanaged. As a result, the status "
    "of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods "
    'please set ".spec.minAvailable" field of the PDB to an integer value.'
)
CALCULATE_FAILED = "CalculateExpectedPodCountFailed"
CALCULATE_FAILED_MSG = "Failed to calculate the number of expected pods: {}"
NOT_DELETED = "NotDeleted"
# Upstream prints the PDB's namespace twice (its format passes pdb.Namespace for both verbs).
NOT_DELETED_MSG = "Pod was expected by PDB {}/{} to be deleted but it wasn't"
MULTIPLE_PDBS = "MultiplePodDisruptionBudgets"
MULTIPLE_PDBS_MSG = 'Pod "{}"/"{}" matches multiple PodDisruptionBudgets.  Chose "{}" arbitrarily.'

# Sync errors.
NO_CONTROLLERS_MSG = 'found no controllers for pod "{}"'
NO_SCALE_MSG = "{} does not implement the scale subresource"
NO_KIND_MATCH_MSG = 'no matches for kind "{}" in version "{}"'

Scale = tuple[str, int]  # (controller UID, replicas)


class SyncError(Exception):
    """A sync failure that ends in failSafe; its text becomes the SyncFailed message."""


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("metadata") or {}




def _group_of(api_version: str) -> tuple[str, str]:
    """``schema.ParseGroupVersion``: ``(group, version)``; ``v1`` is the core group."""
    try:
        return parse_group_version(api_version)
    except ValueError as err:
        raise SyncError(str(err)) from err


def _verify_group_kind(ref: dict[str, Any], kind: str, groups: tuple[str, ...]) -> bool:
    group, _ = _group_of(ref.get("apiVersion") or "")
    return ref.get("kind") == kind and group in groups


def _replicas(obj: dict[str, Any]) -> int:
    # spec.replicas is defaulted to 1 by every workload's defaulting.
    value = (obj.get("spec") or {}).get("replicas")
    return 1 if value is None else int(value)


def go_label_selector(selector: dict[str, Any] | None) -> str:
    """A ``*metav1.LabelSelector`` as Go's ``%v`` prints it (its generated ``String()``)."""
    if selector is None:
        return "nil"
    labels = selector.get("matchLabels") or {}
    label_text = "".join(f"{k}: {labels[k]}," for k in sorted(labels))
    expressions = ""
    for expr in selector.get("matchExpressions") or []:
        values = " ".join(str(v) for v in expr.get("values") or [])
        expressions += (
            f"LabelSelectorRequirement{{Key:{expr.get('key', '')},Operator:{expr.get('operator', '')},"
            f"Values:[{values}],}},"
        )
    return (
        f"&LabelSelector{{MatchLabels:map[string]string{{{label_text}}},"
        f"MatchExpressions:[]LabelSelectorRequirement{{{expressions}}},}}"
    )


class DisruptionController(Controller):
    """Keeps ``status`` of every PodDisruptionBudget of one cluster current."""

    name = "disruption"

    def __init__(self, client: Client) -> None:
        super().__init__()
        self.client = client
        self.recorder = EventRecorder(client, COMPONENT)
        # An informer's cache, kept from this controller's own watches: the PDBs and pods of each
        # namespace, and which pods each PDB selects, so neither mapping an event nor syncing a
        # PDB lists or scans a namespace.
        self._pdb_cache: dict[str, dict[str, dict[str, Any]]] = {}
        self._pod_cache: dict[str, dict[str, dict[str, Any]]] = {}
        # What countHealthyPods reads of each cached pod, (deleting, Ready), taken once per pod
        # event: a PDB syncs after every change of any of its pods, and re-reading each member's
        # conditions then made the syncs of a drain grow with the PDB's size times its pods' events.
        self._health: dict[str, dict[str, tuple[bool, bool]]] = {}
        self._members: dict[tuple[str, str], set[str]] = {}
        self._selected_by: dict[tuple[str, str], set[str]] = {}
        # PDBs by one (key, value) of their matchLabels, so a pod is only checked against the PDBs
        # that could select it; PDBs without matchLabels are checked against every pod.
        self._anchored: dict[str, dict[tuple[str, str], set[str]]] = {}
        self._unanchored: dict[str, set[str]] = {}

    def setup(self) -> None:
        self.watch(self.client, POLICY_V1, PDB_KIND, self._remember_pdb)
        self.watch(self.client, "v1", "Pod", self._pdbs_for_pod)
        for kind in ("ReplicaSet", "Deployment", "StatefulSet"):
            self.watch(self.client, APPS_V1, kind, self._pdbs_in_namespace)

    # -- event mapping ------------------------------------------------------------------------------

    def _remember_pdb(self, event: str, pdb: dict[str, Any]) -> Iterable[Request]:
        meta = _meta(pdb)
        namespace, name = meta.get("namespace") or "", meta.get("name", "")
        cached = self._pdb_cache.setdefault(namespace, {})
        previous = cached.get(name)
        if previous is not None:
            self._unanchor(namespace, name, previous)
        if event == "DELETED":
            cached.pop(name, None)
            for pod in self._members.pop((namespace, name), set()):
                self._selected_by.get((namespace, pod), set()).discard(name)
        else:
            cached[name] = pdb
            self._anchor(namespace, name, pdb)
            old_selector = (previous.get("spec") or {}).get("selector") if previous is not None else None
            if previous is None or old_selector != (pdb.get("spec") or {}).get("selector"):
                self._reindex_pdb(namespace, name, pdb)
        return (Request(namespace, name),)

    @staticmethod
    def _anchor_of(pdb: dict[str, Any]) -> tuple[str, str] | None:
        selector = (pdb.get("spec") or {}).get("selector")
        labels = selector.get("matchLabels") if isinstance(selector, dict) else None
        if isinstance(labels, dict) and labels:
            key = min(labels)
            return (str(key), str(labels[key]))
        return None

    def _anchor(self, namespace: str, name: str, pdb: dict[str, Any]) -> None:
        anchor = self._anchor_of(pdb)
        if anchor is None:
            self._unanchored.setdefault(namespace, set()).add(name)
        else:
            self._anchored.setdefault(namespace, {}).setdefault(anchor, set()).add(name)

    def _unanchor(self, namespace: str, name: str, pdb: dict[str, Any]) -> None:
        anchor = self._anchor_of(pdb)
        if anchor is None:
            self._unanchored.get(namespace, set()).discard(name)
        else:
            self._anchored.get(namespace, {}).get(anchor, set()).discard(name)

    def _candidates(self, namespace: str, labels: dict[str, str]) -> set[str]:
        """The PDBs of a namespace that could select a pod with ``labels``."""
        anchored = self._anchored.get(namespace, {})
        out = set(self._unanchored.get(namespace, set()))
        for item in labels.items():
            out |= anchored.get(item, set())
        return out

    def _reindex_pdb(self, namespace: str, name: str, pdb: dict[str, Any]) -> None:
        """Recompute which cached pods a (new or re-selected) PDB selects."""
        for pod in self._members.get((namespace, name), set()):
            self._selected_by.get((namespace, pod), set()).discard(name)
        members = {pod_name for pod_name, pod in self._pod_cache.get(namespace, {}).items()
                   if pdb_selects(pdb, _meta(pod).get("labels"))}
        self._members[(namespace, name)] = members
        for pod in members:
            self._selected_by.setdefault((namespace, pod), set()).add(name)

    def _remember_pod(self, event: str, pod: dict[str, Any]) -> tuple[set[str], set[str]]:
        """Update the pod cache; returns the names of the PDBs selecting the pod before and now (the
        caller only reads them: they may be the set the index holds)."""
        meta = _meta(pod)
        namespace, name = meta.get("namespace") or "", meta.get("name", "")
        selected = self._selected_by.get((namespace, name))
        # setdefault, without building two empty dicts at every pod event.
        pods = self._pod_cache.get(namespace)
        if pods is None:
            pods = self._pod_cache[namespace] = {}
        health = self._health.get(namespace)
        if health is None:
            health = self._health[namespace] = {}
        now: set[str]
        if event == "DELETED":
            pods.pop(name, None)
            health.pop(name, None)
            now = set()
        else:
            previous = pods.get(name)
            pods[name] = pod
            health[name] = (bool(meta.get("deletionTimestamp")), is_pod_ready(pod))
            if previous is not None and _meta(previous).get("labels") == meta.get("labels"):
                # Selection reads only the labels, and every PDB change re-selected the cached pods:
                # a new version with the same labels (a status write, a deletion) is selected as before
                # (most pod events: the set the index holds is answered, not a copy).
                return (selected, selected) if selected else (set(), set())
            pdbs = self._pdb_cache.get(namespace)
            if pdbs:
                labels = meta.get("labels") or {}
                now = {pdb_name for pdb_name in self._candidates(namespace, labels)
                       if pdb_name in pdbs and pdb_selects(pdbs[pdb_name], labels)}
            else:
                now = set()  # no PDB in the namespace selects it (most pods of most worlds)
        before = set(selected) if selected else set()
        if not before and not now:
            self._selected_by.pop((namespace, name), None)
            return before, now
        for pdb_name in before - now:
            self._members.get((namespace, pdb_name), set()).discard(name)
        for pdb_name in now - before:
            self._members.setdefault((namespace, pdb_name), set()).add(name)
        if now:
            self._selected_by[(namespace, name)] = now
        else:
            self._selected_by.pop((namespace, name), None)
        return before, now

    def _pdbs(self, namespace: str) -> list[dict[str, Any]]:
        cached = self._pdb_cache.get(namespace, {})
        return [cached[name] for name in sorted(cached)]

    def _pdbs_in_namespace(self, _event: str, obj: dict[str, Any]) -> Iterable[Request]:
        namespace = _meta(obj).get("namespace") or ""
        return [Request(namespace, _meta(pdb)["name"]) for pdb in self._pdbs(namespace)]

    def _pdbs_for_pod(self, event: str, pod: dict[str, Any]) -> Iterable[Request]:
        meta = _meta(pod)
        namespace = meta.get("namespace") or ""
        before, now = self._remember_pod(event, pod)
        if len(now) > 1 and self.enabled and event != "DELETED":
            self.recorder.event(pod, WARNING, MULTIPLE_PDBS,
                                MULTIPLE_PDBS_MSG.format(namespace, meta.get("name", ""), min(now)))
        if not now and not before:
            return ()
        # A relabelled pod also wakes the PDBs it used to match. (Most pod events: the same one
        # budget before and now, the index's own set: read, not united.)
        names = now if now is before or not before else before if not now else now | before
        if len(names) == 1:
            return [Request(namespace, name) for name in names]
        return [Request(namespace, name) for name in sorted(names)]

    # -- sync ---------------------------------------------------------------------------------------

    def reconcile(self, request: Request) -> Result | None:
        try:
            pdb = self.client.get(POLICY_V1, PDB_KIND, request.name, request.namespace)
        except ApiError as err:
            if err.code == 404:
                return None
            raise
        try:
            return self._try_sync(pdb)
        except ApiError as err:
            if err.code == 409:
                raise  # a conflict is retried without failSafe
            self._fail_safe(pdb, err.message)
        except SyncError as err:
            self._fail_safe(pdb, str(err))
        return None

    def _try_sync(self, pdb: dict[str, Any]) -> Result | None:
        namespace = _meta(pdb).get("namespace") or ""
        raw_selector = (pdb.get("spec") or {}).get("selector")
        try:
            selector = label_selector_from_dict(raw_selector) if isinstance(raw_selector, dict) else None
        except ValueError as err:
            self.recorder.event(pdb, WARNING, NO_PODS, FAILED_TO_GET_PODS_MSG.format(err))
            raise SyncError(str(err)) from None
        # The names of the selected pods (in no order): a sync counts them, and reads in name order
        # only the few it must (the disrupted ones, or every pod when the expected count is a scale).
        cached = self._pod_cache.get(namespace, {})
        names: list[str] = []
        if selector is not None:
            members = self._members.get((namespace, _meta(pdb)["name"]), set())
            names = [name for name in members if name in cached]
        if not names:
            self.recorder.event(pdb, NORMAL, NO_PODS, NO_PODS_MSG)
        try:
            expected, desired, unmanaged = self._expected_pod_count(pdb, names, cached)
        except (SyncError, ApiError) as err:
            text = err.message if isinstance(err, ApiError) else str(err)
            self.recorder.event(pdb, WARNING, CALCULATE_FAILED, CALCULATE_FAILED_MSG.format(text))
            raise
        if unmanaged:
            message = UNMANAGED_PODS_MSG.format(go_label_selector(raw_selector))
            self.recorder.event(pdb, WARNING, UNMANAGED_PODS, message)
        now = self.client.now()
        disrupted, recheck = self._build_disrupted_pods(names, cached, pdb, now)
        healthy = _count_healthy(names, cached, disrupted, now, self._health.get(namespace, {}))
        self._update_status(pdb, healthy, desired, expected, disrupted, now)
        if recheck is not None:
            return Result(requeue_after=max(recheck - now, RECHECK_FLOOR))
        return None

    def _expected_pod_count(
        self, pdb: dict[str, Any], names: list[str], cached: dict[str, dict[str, Any]]
    ) -> tuple[int, int, list[str]]:
        """``getExpectedPodCount``: (expectedPods, desiredHealthy, unmanaged pod names) of the
        selected pods ``names`` (cached in ``cached``)."""
        spec = pdb.get("spec") or {}
        if spec.get("maxUnavailable") is None and spec.get("minAvailable") is None:
            return 0, 0, []
        if counts_pods_directly(spec):
            expected, unmanaged = len(names), []
        else:
            expected, unmanaged = self._expected_scale([cached[name] for name in sorted(names)])
        try:
            return expected, desired_healthy(spec, expected), unmanaged
        except IntOrStringError as err:
            raise SyncError(str(err)) from None

    def _expected_scale(self, pods: list[dict[str, Any]]) -> tuple[int, list[str]]:
        """``getExpectedScale``: the summed replicas of the pods' distinct controllers, and the
        names of pods without one."""
        scales: dict[str, int] = {}
        unmanaged: list[str] = []
        for pod in pods:
            ref = controller_of(pod)
            name = _meta(pod).get("name", "")
            if ref is None:
                unmanaged.append(name)
                continue
            if ref.get("uid") in scales:
                continue
            namespace = _meta(pod).get("namespace") or ""
            for finder in (self._replication_controller, self._deployment, self._replica_set, self._stateful_set,
                           self._scale_controller):
                found = finder(ref, namespace)
                if found is not None:
                    scales[found[0]] = found[1]
                    break
            else:
                raise SyncError(NO_CONTROLLERS_MSG.format(name))
        return sum(scales.values()), unmanaged

    # -- controller finders (in upstream's order) ---------------------------------------------------

    def _owned(self, api_version: str, kind: str, ref: dict[str, Any], namespace: str) -> dict[str, Any] | None:
        """The referenced object, if it exists with the referenced UID."""
        obj = find_in(self.client, api_version, kind, ref.get("name", ""), namespace)
        if obj is None or _meta(obj).get("uid") != ref.get("uid"):
            return None
        return obj

    def _replication_controller(self, ref: dict[str, Any], namespace: str) -> Scale | None:
        if not _verify_group_kind(ref, "ReplicationController", ("",)):
            return None
        rc = self._owned("v1", "ReplicationController", ref, namespace)
        return None if rc is None else (_meta(rc)["uid"], _replicas(rc))

    def _owned_replica_set(self, ref: dict[str, Any], namespace: str) -> dict[str, Any] | None:
        """The ReplicaSet ``ref`` names, if it is one and exists with the referenced UID."""
        if not _verify_group_kind(ref, "ReplicaSet", ("apps", "extensions")):
            return None
        return self._owned(APPS_V1, "ReplicaSet", ref, namespace)

    def _deployment(self, ref: dict[str, Any], namespace: str) -> Scale | None:
        rs = self._owned_replica_set(ref, namespace)
        if rs is None:
            return None
        owner = controller_of(rs)
        if owner is None or not _verify_group_kind(owner, "Deployment", ("apps", "extensions")):
            return None
        deployment = self._owned(APPS_V1, "Deployment", owner, namespace)
        return None if deployment is None else (_meta(deployment)["uid"], _replicas(deployment))

    def _replica_set(self, ref: dict[str, Any], namespace: str) -> Scale | None:
        rs = self._owned_replica_set(ref, namespace)
        if rs is None:
            return None
        owner = controller_of(rs)
        if owner is not None and owner.get("kind") == "Deployment":
            return None  # the Deployment finder speaks for it
        return _meta(rs)["uid"], _replicas(rs)

    def _stateful_set(self, ref: dict[str, Any], namespace: str) -> Scale | None:
        if not _verify_group_kind(ref, "StatefulSet", ("apps",)):
            return None
        sts = self._owned(APPS_V1, "StatefulSet", ref, namespace)
        return None if sts is None else (_meta(sts)["uid"], _replicas(sts))

    def _scale_controller(self, ref: dict[str, Any], namespace: str) -> Scale | None:
        """The generic finder: the owner's ``/scale``; an owner kind without one is an error."""
        api_version = ref.get("apiVersion") or ""
        group, version = _group_of(api_version)
        kind = ref.get("kind", "")
        resource = next(
            (r for r in self.client.discover() if r["group"] == group and r["kind"] == kind), None
        )
        if resource is None:
            raise SyncError(NO_KIND_MATCH_MSG.format(kind, api_version))
        group_resource = f"{resource['plural']}.{group}" if group else resource["plural"]
        if "scale" not in resource["subresources"]:
            raise SyncError(NO_SCALE_MSG.format(group_resource))
        owner = self._owned(resource["apiVersion"], kind, ref, namespace)
        if owner is None:
            return None
        return _meta(owner)["uid"], self._scale_replicas(owner, group_resource)

    def _scale_replicas(self, owner: dict[str, Any], group_resource: str) -> int:
        """``spec.replicas`` of the owner's Scale: at the CRD's ``specReplicasPath`` for a custom resource."""
        crd = find_in(self.client, APIEXTENSIONS_V1, CRD_KIND, group_resource, "") if "." in group_resource else None
        path = ".spec.replicas"
        for version in ((crd or {}).get("spec") or {}).get("versions") or []:
            scale = (version.get("subresources") or {}).get("scale") or {}
            if scale.get("specReplicasPath"):
                path = scale["specReplicasPath"]
                break
        value: Any = owner
        for part in path.lstrip(".").split("."):
            value = value.get(part) if isinstance(value, dict) else None
        return int(value) if isinstance(value, int) and not isinstance(value, bool) else 0

    # -- status -------------------------------------------------------------------------------------

    def _build_disrupted_pods(
        self, names: list[str], cached: dict[str, dict[str, Any]], pdb: dict[str, Any], now: float
    ) -> tuple[dict[str, str], float | None]:
        """``buildDisruptedPodMap``: the entries still pending, and when the earliest falls due. The
        selected pods ``names`` are visited in name order, only those the budget records (a pod's
        cache key is its name)."""
        recorded = (pdb.get("status") or {}).get("disruptedPods") or {}
        kept: dict[str, str] = {}
        recheck: float | None = None
        if not recorded:
            return kept, None
        namespace = _meta(pdb).get("namespace") or ""
        if len(recorded) < len(names):
            selected = set(names)
            visited = sorted(name for name in recorded if name in selected)
        else:
            visited = sorted(name for name in names if name in recorded)
        for name in visited:
            pod = cached[name]
            meta = _meta(pod)
            if meta.get("deletionTimestamp"):
                continue
            stamp = recorded[name]
            expiry = _parse_time(stamp) + DELETION_TIMEOUT
            if expiry < now:
                self.recorder.event(pod, WARNING, NOT_DELETED, NOT_DELETED_MSG.format(namespace, namespace))
                continue
            if recheck is None or expiry < recheck:
                recheck = expiry
            kept[meta["name"]] = stamp
        return kept, recheck

    def _update_status(
        self, pdb: dict[str, Any], healthy: int, desired: int, expected: int, disrupted: dict[str, str], now: float
    ) -> None:
        """``updatePdbStatus``: write the computed status unless nothing (conditions included) changes."""
        allowed = disruptions_allowed(healthy, desired, expected)
        status = pdb.get("status") or {}
        generation = int(_meta(pdb).get("generation") or 0)
        if (
            int(status.get("currentHealthy") or 0) == healthy
            and int(status.get("desiredHealthy") or 0) == desired
            and int(status.get("expectedPods") or 0) == expected
            and int(status.get("disruptionsAllowed") or 0) == allowed
            and (status.get("disruptedPods") or {}) == disrupted
            and int(status.get("observedGeneration") or 0) == generation
            and conditions_are_up_to_date(pdb)
        ):
            return
        # PodDisruptionBudgetStatus field order; observedGeneration and disruptedPods are omitempty.
        new_status: dict[str, Any] = {}
        if generation:
            new_status["observedGeneration"] = generation
        if disrupted:
            new_status["disruptedPods"] = disrupted
        new_status.update(disruptionsAllowed=allowed, currentHealthy=healthy, desiredHealthy=desired,
                          expectedPods=expected, conditions=list(status.get("conditions") or []))
        update_disruption_allowed_condition(new_status, rfc3339(now))
        pdb["status"] = new_status
        self.client.update_status(pdb, **unanswered(self.client))

    def _fail_safe(self, pdb: dict[str, Any], message: str) -> None:
        """``failSafe``: no disruptions allowed, DisruptionAllowed False/SyncFailed with the error."""
        status = dict(pdb.get("status") or {})
        status["disruptionsAllowed"] = 0
        conditions = list(status.get("conditions") or [])
        set_status_condition(conditions, {
            "type": DISRUPTION_ALLOWED, "status": CONDITION_FALSE, "reason": SYNC_FAILED, "message": message,
            "observedGeneration": int(status.get("observedGeneration") or 0),
        }, rfc3339(self.client.now()))
        status["conditions"] = conditions
        pdb["status"] = status
        self.client.update_status(pdb, **unanswered(self.client))


def _parse_time(stamp: Any) -> float:
    try:
        return parse_rfc3339(str(stamp))
    except ValueError:
        return float("-inf")  # an unreadable stamp is long overdue


def _count_healthy(
    names: list[str], cached: dict[str, dict[str, Any]], disrupted: dict[str, str], now: float,
    health: dict[str, tuple[bool, bool]] | None = None,
) -> int:
    """``countHealthyPods`` of the selected pods ``names`` (cached in ``cached``): not deleting, not
    recently disrupted, Ready. ``health``: (deleting, Ready) of pods by name, as the controller's cache
    took them from the same pod objects."""
    health = health or {}
    # The pods disrupted recently (a stamp parsed once, not once per pod that has it).
    recent = {name for name, stamp in disrupted.items() if _parse_time(stamp) + DELETION_TIMEOUT > now} \
        if disrupted else ()
    healthy = 0
    for name in names:
        known = health.get(name)
        if known is None:
            pod = cached[name]
            known = (bool(_meta(pod).get("deletionTimestamp")), is_pod_ready(pod))
        if known[0] or not known[1] or name in recent:
            continue
        healthy += 1
    return healthy
