"""The ReplicaSet controller, simulated: keeps ``spec.replicas`` active pods and reports status.

As upstream's: only active pods count (not terminal, no deletionTimestamp), so an evicted or
deleted pod is replaced at once while it is still terminating; surplus pods are deleted in
upstream's order (unscheduled, then Pending before Running, not Ready before Ready, lower
``controller.kubernetes.io/pod-deletion-cost``, more pods of the set on the same node, more
recently Ready, more restarts, newer); orphan pods matching the selector are adopted and owned
pods that stop matching are released; a deleting ReplicaSet manages nothing. Status carries
``replicas``, ``fullyLabeledReplicas``, ``readyReplicas``, ``availableReplicas`` (Ready for
``minReadySeconds`` on the virtual clock) and ``observedGeneration``; a failed pod creation sets
the ``ReplicaFailure`` condition. Knob: ``record_events`` (default True), ``enabled``.

Each set's pods are kept as its syncs read them (harness/world/replicaset_pods.py): a sync works on the
pods that changed since the last one and ranks only those it deletes, so scaling N pods by bursts of 500
costs O(N) in all, not O(N) per burst; what it writes is what ranking and counting every pod gave.

:class:`ReplicationControllerController` does the same for core/v1 ReplicationControllers, whose
selector is a plain label map (upstream runs one implementation for both kinds too).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from harness.client import NORMAL, WARNING, ApiError, Client, Controller, EventRecorder, Request, Result
from harness.client.interface import shared_reads, update_status_unless_gone
from harness.clock import parse_rfc3339, rfc3339
from harness.kube.names.apps import APPS_V1, REPLICA_FAILURE, REPLICA_SET
from harness.kube.names.core import POD_PENDING, POD_READY, POD_RUNNING
from harness.kube.names.events import (
    CREATED_POD_MESSAGE,
    DELETED_POD_MESSAGE,
    FAILED_CREATE,
    FAILED_CREATE_MESSAGE,
    FAILED_DELETE,
    SUCCESSFUL_CREATE,
    SUCCESSFUL_DELETE,
)
from harness.kube.selectors import LabelSelector, label_selector_from_dict
from harness.world.kubelet import pod_condition, pod_is_terminal
from harness.world.replicaset_pods import OwnRank, PodFacts, PodKey, Ranking, SetPods

COMPONENT = "replicaset-controller"
RC_API_VERSION = "v1"
RC_KIND = "ReplicationController"
RC_COMPONENT = "replication-controller"
# Upstream creates or deletes at most this many pods per sync (burstReplicas).
BURST_REPLICAS = 500
POD_DELETION_COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"

# Scale-down rank of a pod's phase: Pending first, then Unknown, then Running (anything else as Pending).
_PHASE_RANK = {POD_PENDING: 0, "Unknown": 1, POD_RUNNING: 2}


def _controller_ref(obj: dict[str, Any]) -> dict[str, Any] | None:
    """``controller_of`` without its copies, for reading: the stored object's own controller reference."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller"):
            return ref  # type: ignore[no-any-return]
    return None




def is_pod_active(pod: dict[str, Any]) -> bool:
    """Counts toward replicas: not terminal and not being deleted (``controller.IsPodActive``)."""
    return not pod_is_terminal(pod) and not pod["metadata"].get("deletionTimestamp")


def pod_ready_since(pod: dict[str, Any]) -> float | None:
    """When the pod last became Ready, or None if it is not Ready."""
    condition = pod_condition(pod, POD_READY)
    if condition is None or condition.get("status") != "True":
        return None
    stamp = condition.get("lastTransitionTime")
    return parse_rfc3339(stamp) if stamp else 0.0


def is_pod_available(pod: dict[str, Any], min_ready_seconds: float, now: float) -> bool:
    """Ready for at least ``min_ready_seconds`` (``podutil.IsPodAvailable``)."""
    since = pod_ready_since(pod)
    if since is None:
        return False
    return min_ready_seconds <= 0 or since + min_ready_seconds <= now


def pod_from_template(owner: dict[str, Any], template: dict[str, Any]) -> dict[str, Any]:
    """A pod for ``owner`` from its pod template, as ``controller.GetPodFromTemplate`` builds it:
    template labels, annotations and finalizers, ``generateName: <owner>-`` and a controller
    ownerReference that blocks owner deletion."""
    meta = owner["metadata"]
    template_meta = template.get("metadata") or {}
    pod_meta: dict[str, Any] = {"generateName": f"{meta['name']}-", "namespace": meta.get("namespace")}
    for field in ("labels", "annotations", "finalizers"):
        if template_meta.get(field):
            pod_meta[field] = (dict if field != "finalizers" else list)(template_meta[field])
    pod_meta["ownerReferences"] = [{
        "apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": meta["name"], "uid": meta["uid"],
        "controller": True, "blockOwnerDeletion": True,
    }]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": dict(template.get("spec") or {})}


def own_rank(pod: dict[str, Any], facts: PodFacts) -> OwnRank:
    """The pod's own part of its scale-down rank: phase (Pending, Unknown, Running), not Ready before
    Ready, deletion cost, more recently Ready, more restarts, newer, name (the Node's part is the set's)."""
    meta, status = pod["metadata"], pod.get("status") or {}
    try:
        cost = int((meta.get("annotations") or {}).get(POD_DELETION_COST_ANNOTATION, "0"))
    except ValueError:
        cost = 0
    ready = facts.ready_since
    restarts = max((int(c.get("restartCount") or 0) for c in status.get("containerStatuses") or []), default=0)
    created = -parse_rfc3339(meta["creationTimestamp"]) if meta.get("creationTimestamp") else 0.0
    return (_PHASE_RANK.get(status.get("phase", POD_PENDING), 0), 0 if ready is None else 1, cost,
            -(ready or 0.0), -restarts, created, meta["name"])


class ReplicaSetController(Controller):
    """Reconciles ReplicaSets: pod count, adoption and status."""

    name = "replicaset"
    # What this controller reconciles: the ReplicationController one (below) differs only here.
    api_version = APPS_V1
    kind = REPLICA_SET
    component = COMPONENT

    def __init__(self, client: Client) -> None:
        super().__init__()
        self.client = client
        self.record_events = True
        self.events = EventRecorder(client, self.component)
        self._sets: dict[PodKey, dict[str, Any]] = {}
        self._selectors: dict[str, LabelSelector | None] = {}
        # Each set's selector as its spec gives it, to tell when it changes.
        self._selector_sources: dict[str, Any] = {}
        self._pods: dict[PodKey, dict[str, Any]] = {}
        self._facts: dict[PodKey, PodFacts] = {}
        # Each cached pod's controller reference (None: no controller).
        self._refs: dict[PodKey, dict[str, Any] | None] = {}
        # Pods by their controller's uid, and pods without a controller, per namespace.
        self._owned: dict[str, set[PodKey]] = {}
        self._orphans: dict[str, set[PodKey]] = {}
        # The owned pods of each set synced so far, as its syncs read them, by the set's uid.
        self._states: dict[str, SetPods] = {}

    def setup(self) -> None:
        self.watch(self.client, self.api_version, self.kind, self._on_set)
        self.watch(self.client, "v1", "Pod", self._on_pod)

    # -- caches ------------------------------------------------------------------------------------

    def _on_set(self, event: str, rs: dict[str, Any]) -> Iterable[Request]:
        meta = rs["metadata"]
        key = (meta.get("namespace") or "", meta["name"])
        if event == "DELETED":
            self._sets.pop(key, None)
            self._selectors.pop(meta.get("uid", ""), None)
            self._selector_sources.pop(meta.get("uid", ""), None)
            self._states.pop(meta.get("uid", ""), None)
        else:
            uid = meta["uid"]
            self._sets[key] = rs
            source = (rs.get("spec") or {}).get("selector")
            if uid in self._selector_sources and self._selector_sources[uid] != source:
                # A new selector (a ReplicationController's may change): every owned pod is matched
                # against it again at the next sync, as upstream's claim matches each pod at each sync.
                self._states.pop(uid, None)
                for pod_key in self._owned.get(uid, ()):
                    facts = self._facts.get(pod_key)
                    if facts is not None:
                        facts.matches = None
            self._selector_sources[uid] = source
            self._selectors[uid] = self._parse_selector(rs)
        return (Request(*key),)

    def _index_under(self, key: PodKey, ref: dict[str, Any] | None, add: bool) -> None:
        """File (or unfile) a pod under its controller's uid (``ref``), or as an orphan of its namespace."""
        # setdefault, without building an empty set at every call (twice for each pod event).
        if ref:
            uid = ref["uid"]
            bucket = self._owned.get(uid)
            if bucket is None:
                bucket = self._owned[uid] = set()
            state = self._states.get(uid)
            if state is not None:
                if add:
                    state.file(key)
                else:
                    state.drop(key)
        else:
            bucket = self._orphans.get(key[0])
            if bucket is None:
                bucket = self._orphans[key[0]] = set()
        if add:
            bucket.add(key)
        else:
            bucket.discard(key)

    def _on_pod(self, event: str, pod: dict[str, Any]) -> Iterable[Request]:
        meta = pod["metadata"]
        key = (meta.get("namespace") or "", meta["name"])
        known = key in self._pods
        # Each version's controller reference, read once (stored objects never change).
        old_ref = self._refs.get(key)
        ref = _controller_ref(pod)
        # The facts of the version replaced are stale; the new version's are worked out when a sync
        # first needs them (most pod events of a drain come and go before their set syncs, and the
        # ReplicationController's copy of this controller syncs none of a ReplicaSet's pods).
        self._facts.pop(key, None)
        # Unfiled and filed again even under the same controller: taking a key out of a set and putting
        # it back can move it in the set's iteration order, which a sync's order of writes follows.
        if known:
            self._index_under(key, old_ref, add=False)
        if event == "DELETED":
            self._pods.pop(key, None)
            self._refs.pop(key, None)
        else:
            self._pods[key] = pod
            self._refs[key] = ref
            self._index_under(key, ref, add=True)
        requests = []
        kind, api_version = self.kind, self.api_version
        if old_ref is not None and old_ref.get("kind") == kind and old_ref.get("apiVersion") == api_version:
            requests.append(Request(key[0], old_ref.get("name", "")))
        if ref is not None and ref.get("kind") == kind and ref.get("apiVersion") == api_version:
            requests.append(Request(key[0], ref.get("name", "")))
        if ref is None and event != "DELETED":
            labels = meta.get("labels") or {}
            for rs_key, rs in self._sets.items():
                selector = self._selectors.get(rs["metadata"]["uid"])
                if rs_key[0] == key[0] and selector is not None and not selector.empty and selector.matches(labels):
                    requests.append(Request(*rs_key))
        return requests

    def _facts_of(self, key: PodKey) -> PodFacts:
        """What a sync reads of a cached pod, worked out once per pod version."""
        facts = self._facts.get(key)
        if facts is None:
            pod = self._pods[key]
            facts = PodFacts(is_pod_active(pod), pod_ready_since(pod), pod["metadata"].get("labels") or {})
            self._facts[key] = facts
        return facts

    def _parse_selector(self, rs: dict[str, Any]) -> LabelSelector | None:
        selector = (rs.get("spec") or {}).get("selector") or {}
        if self.kind == RC_KIND:
            selector = {"matchLabels": selector}  # a ReplicationController's selector is a label map
        try:
            return label_selector_from_dict(selector)
        except ValueError:
            return None

    # -- reconcile ---------------------------------------------------------------------------------

    def reconcile(self, request: Request) -> Result | None:
        rs = self._sets.get((request.namespace, request.name))
        if rs is None:
            return None
        meta = rs["metadata"]
        selector = self._selectors.get(meta["uid"])
        if selector is None or selector.empty:
            return None  # upstream refuses an empty selector: it would adopt every pod
        uid = meta["uid"]
        state = self._states.get(uid)
        if state is None:
            state = self._states[uid] = SetPods(meta.get("namespace") or "", self._owned.get(uid, set()))
        # The claim's order of the owned pods, which the ranking's ties follow (pods of another namespace only).
        claim_order = list(self._owned.get(uid, ())) if state.foreign else None
        self._classify(state, selector)
        failure: str | None = None
        if not meta.get("deletionTimestamp"):
            self._release(rs, state)
            adopted = self._adopt(rs, selector, state)
            if claim_order is not None:
                claim_order = [k for k in claim_order + adopted if k in state.active]
            # Creates only add pods (their events come later), deletes change none of the counts.
            failure = self._manage(rs, state, claim_order)
        return self._write_status(rs, state, failure)

    def _classify(self, state: SetPods, selector: LabelSelector) -> None:
        """Classify the pods whose versions the set has not seen: matching and active ones are counted,
        those that stopped matching are to be released (``PodControllerRefManager.ClaimPods``)."""
        if not state.dirty:
            return
        facts_of, pods = self._facts_of, self._pods
        ranked = state.ranking is not None
        for key in state.dirty:
            facts = facts_of(key)
            if facts.matches is None:
                facts.matches = selector.matches(facts.labels)
            if key in state.active:
                state.uncount(key)  # counted when adopted, before its labels were matched
            if not facts.matches:
                state.unmatched.add(key)
            elif facts.active:
                pod = pods[key]
                own = self._own_rank(pod, facts) if ranked else None
                state.count(key, facts, pod["spec"].get("nodeName") or "", own)
        state.dirty.clear()

    def _release(self, rs: dict[str, Any], state: SetPods) -> None:
        """Release the owned pods that stopped matching, in the order the owned pods are filed."""
        if not state.unmatched:
            return
        uid = rs["metadata"]["uid"]
        for key in [k for k in self._owned.get(uid, ()) if k in state.unmatched]:
            pod = self._pods[key]
            self._set_owner_refs(pod, [r for r in pod["metadata"].get("ownerReferences") or [] if r.get("uid") != uid])

    def _adopt(self, rs: dict[str, Any], selector: LabelSelector, state: SetPods) -> list[PodKey]:
        """Adopt the orphans that match (by key order); their keys. They count at once, and their labels
        are matched at the next sync, as any owned pod's new version."""
        meta = rs["metadata"]
        out = []
        for key in sorted(self._orphans.get(meta.get("namespace") or "", ())):
            pod = self._pods[key]
            if pod["metadata"].get("deletionTimestamp") or not selector.matches(pod["metadata"].get("labels") or {}):
                continue
            ref = {"apiVersion": self.api_version, "kind": self.kind, "name": meta["name"], "uid": meta["uid"],
                   "controller": True, "blockOwnerDeletion": True}
            adopted = self._set_owner_refs(pod, list(pod["metadata"].get("ownerReferences") or []) + [ref])
            if adopted is not None:
                self._on_pod("MODIFIED", adopted)
                out.append(key)
                facts = self._facts_of(key)
                if facts.active:
                    state.count(key, facts, adopted["spec"].get("nodeName") or "",
                                self._own_rank(adopted, facts) if state.ranking is not None else None)
        return out

    def _set_owner_refs(self, pod: dict[str, Any], refs: list[dict[str, Any]]) -> dict[str, Any] | None:
        meta = pod["metadata"]
        body = {"metadata": {"ownerReferences": refs or None, "resourceVersion": meta["resourceVersion"]}}
        try:
            return self.client.patch("v1", "Pod", meta["name"], body, namespace=meta.get("namespace"))
        except ApiError as err:
            if err.code in (404, 409):
                return None  # gone or changed: the next event brings it back
            raise

    def _manage(self, rs: dict[str, Any], state: SetPods, claim_order: list[PodKey] | None) -> str | None:
        """Create or delete pods toward ``spec.replicas``; the error message of a failed create."""
        want = int((rs.get("spec") or {}).get("replicas", 1) or 0)
        diff = len(state.active) - want
        if diff < 0:
            template = (rs.get("spec") or {}).get("template") or {}
            for _ in range(min(-diff, BURST_REPLICAS)):
                try:
                    # Only read (kept with the watched Pods, which are the store's own): no copy needed.
                    pod = self.client.create(pod_from_template(rs, template), **shared_reads(self.client))
                except ApiError as err:
                    message = FAILED_CREATE_MESSAGE.format(error=err.message)
                    if self.record_events:
                        self.events.event(rs, WARNING, FAILED_CREATE, message)
                    return err.message
                self._on_pod("ADDED", pod)
                if self.record_events:
                    message = CREATED_POD_MESSAGE.format(name=pod["metadata"]["name"])
                    self.events.event(rs, NORMAL, SUCCESSFUL_CREATE, message)
        elif diff > 0:
            for key in self._doomed(state, min(diff, BURST_REPLICAS), claim_order):
                meta = self._pods[key]["metadata"]
                try:
                    self.client.delete("v1", "Pod", meta["name"], meta.get("namespace"))
                except ApiError as err:
                    if err.code == 404:
                        continue
                    if self.record_events:
                        self.events.event(rs, WARNING, FAILED_DELETE, f"Error deleting: {err.message}")
                    raise
                if self.record_events:
                    self.events.event(rs, NORMAL, SUCCESSFUL_DELETE, DELETED_POD_MESSAGE.format(name=meta["name"]))
        return None

    def _own_rank(self, pod: dict[str, Any], facts: PodFacts) -> OwnRank:
        """The pod's own part of its scale-down rank, once per pod version."""
        if facts.rank is None:
            facts.rank = own_rank(pod, facts)
        return facts.rank

    def _doomed(self, state: SetPods, count: int, claim_order: list[PodKey] | None) -> list[PodKey]:
        """The first ``count`` active pods of the deletion order (``ActivePodsWithRanks``, without the
        logarithmic buckets). Ranked from the second scale-down sync of the set on without looking at
        the pods that did not change."""
        ranking = state.ranking
        if ranking is None:
            # Filed at the first scale-down: a set that only grows never ranks its pods.
            ranking = state.ranking = Ranking()
            pods = self._pods
            for key, facts in state.active.items():
                pod = pods[key]
                ranking.add(key, pod["spec"].get("nodeName") or "", self._own_rank(pod, facts))
        if claim_order is None:
            return ranking.first(count)
        # Pods of another namespace can share a name with the set's own, the rank's last word: ties then keep
        # the claim's order, as a stable sort of every active pod does.
        return sorted(claim_order, key=ranking.rank)[:count]

    def _write_status(self, rs: dict[str, Any], state: SetPods, failure: str | None) -> Result | None:
        """Write the status of ``rs`` from its active pods' counts."""
        spec = rs.get("spec") or {}
        min_ready = float(spec.get("minReadySeconds") or 0)
        now = self.now()
        template_labels = list((((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}).items())
        fully_labeled = state.fully_labeled(template_labels)
        available, wait = state.availability(min_ready, now)
        old = rs.get("status") or {}
        status: dict[str, Any] = {"replicas": len(state.active)}
        if fully_labeled:
            status["fullyLabeledReplicas"] = fully_labeled
        if state.ready_total:
            status["readyReplicas"] = state.ready_total
        if available:
            status["availableReplicas"] = available
        status["observedGeneration"] = rs["metadata"].get("generation", 1)
        conditions = [c for c in old.get("conditions") or [] if c.get("type") != REPLICA_FAILURE]
        if failure is not None:
            # A standing failure keeps its first message: generated pod names make each one differ, and
            # rewriting it would wake this controller again at the same instant.
            previous = next((c for c in old.get("conditions") or [] if c.get("type") == REPLICA_FAILURE), None)
            conditions.append(previous or {"type": REPLICA_FAILURE, "status": "True",
                                           "lastTransitionTime": rfc3339(now), "reason": FAILED_CREATE,
                                           "message": failure})
        if conditions:
            status["conditions"] = conditions
        if status != old:
            update_status_unless_gone(self.client, rs, status)
        if failure is not None:
            return Result(requeue=True)  # retry the creation with back-off
        # Come back when the next Ready pod becomes available.
        return Result(requeue_after=wait) if wait is not None else None



class ReplicationControllerController(ReplicaSetController):
    """Reconciles ReplicationControllers exactly as ReplicaSets (upstream shares the code)."""

    name = "replicationcontroller"
    api_version = RC_API_VERSION
    kind = RC_KIND
    component = RC_COMPONENT
