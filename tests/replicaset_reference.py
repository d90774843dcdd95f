"""The ReplicaSet simulator's controller as it was before its Pods were kept in a per-set index (main at
06b12cd): every sync ranked every active Pod of the set for deletion and counted every one for status.
tests/test_replicaset_index_equivalence.py runs it beside the simulator on random workloads and compares
what they write. Kept verbatim but for the names it imports and one later fix both share (an owned pod is matched again
when a ReplicationController's selector changes); not used by the harness."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from harness.client import NORMAL, WARNING, ApiError, Client, Controller, EventRecorder, Request, Result
from harness.client.interface import shared_reads, update_status_unless_gone
from harness.clock import parse_rfc3339, rfc3339
from harness.kube.names.apps import APPS_V1, REPLICA_FAILURE, REPLICA_SET
from harness.kube.names.core import POD_PENDING, POD_RUNNING
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
from harness.world.replicaset import (
    BURST_REPLICAS,
    COMPONENT,
    POD_DELETION_COST_ANNOTATION,
    RC_API_VERSION,
    RC_COMPONENT,
    RC_KIND,
    PodKey,
    _controller_ref,
    is_pod_active,
    pod_from_template,
    pod_ready_since,
)


@dataclass(slots=True)
class _PodFacts:
    """What the controller needs of a pod, worked out once per watch event rather than per sync."""

    active: bool
    ready_since: float | None
    labels: dict[str, str]
    # Whether the labels match the controlling ReplicaSet's (immutable) selector; None until known.
    matches: bool | None = None
    # The pod's own part of its scale-down rank, worked out when first needed.
    rank: tuple[Any, ...] | None = None


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
        self._selector_sources: dict[str, Any] = {}
        self._pods: dict[PodKey, dict[str, Any]] = {}
        self._facts: dict[PodKey, _PodFacts] = {}
        # Each cached pod's controller reference (None: no controller).
        self._refs: dict[PodKey, dict[str, Any] | None] = {}
        # Pods by their controller's uid, and pods without a controller, per namespace.
        self._owned: dict[str, set[PodKey]] = {}
        self._orphans: dict[str, set[PodKey]] = {}

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
        else:
            self._sets[key] = rs
            source = (rs.get("spec") or {}).get("selector")
            if meta["uid"] in self._selector_sources and self._selector_sources[meta["uid"]] != source:
                for pod_key in self._owned.get(meta["uid"], ()):  # the later fix, as the simulator has it
                    facts = self._facts.get(pod_key)
                    if facts is not None:
                        facts.matches = None
            self._selector_sources[meta["uid"]] = source
            self._selectors[meta["uid"]] = self._parse_selector(rs)
        return (Request(*key),)

    def _index_under(self, key: PodKey, ref: dict[str, Any] | None, add: bool) -> None:
        """File (or unfile) a pod under its controller's uid (``ref``), or as an orphan of its namespace."""
        # setdefault, without building an empty set at every call (twice for each pod event).
        if ref:
            uid = ref["uid"]
            bucket = self._owned.get(uid)
            if bucket is None:
                bucket = self._owned[uid] = set()
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

    def _facts_of(self, key: PodKey) -> _PodFacts:
        """What a sync reads of a cached pod, worked out once per pod version."""
        facts = self._facts.get(key)
        if facts is None:
            pod = self._pods[key]
            facts = _PodFacts(is_pod_active(pod), pod_ready_since(pod), pod["metadata"].get("labels") or {})
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
        selector = self._selectors.get(rs["metadata"]["uid"])
        if selector is None or selector.empty:
            return None  # upstream refuses an empty selector: it would adopt every pod
        claimed = self._claim(rs, selector)
        facts_of = self._facts_of
        active: list[PodKey] = []
        active_facts: list[_PodFacts] = []
        for key in claimed:
            facts = facts_of(key)
            if facts.active:
                active.append(key)
                active_facts.append(facts)
        failure: str | None = None
        if not rs["metadata"].get("deletionTimestamp"):
            # Creates only add pods (their events come later), deletes change none of the cached facts.
            failure = self._manage(rs, active)
        return self._write_status(rs, active, failure, active_facts)

    def _claim(self, rs: dict[str, Any], selector: LabelSelector) -> list[PodKey]:
        """Keys of owned pods that still match, plus adopted orphans; owned pods that stopped
        matching are released (``PodControllerRefManager.ClaimPods``)."""
        meta = rs["metadata"]
        namespace = meta.get("namespace") or ""
        deleting = bool(meta.get("deletionTimestamp"))
        out = []
        for key in list(self._owned.get(meta["uid"], ())):
            facts = self._facts_of(key)
            if facts.matches is None:
                facts.matches = selector.matches(facts.labels)
            if facts.matches:
                out.append(key)
            elif not deleting:
                pod = self._pods[key]
                self._set_owner_refs(pod, [r for r in pod["metadata"].get("ownerReferences") or []
                                           if r.get("uid") != meta["uid"]])
        if deleting:
            return out
        for key in sorted(self._orphans.get(namespace, ())):
            pod = self._pods[key]
            if pod["metadata"].get("deletionTimestamp") or not selector.matches(pod["metadata"].get("labels") or {}):
                continue
            ref = {"apiVersion": self.api_version, "kind": self.kind, "name": meta["name"], "uid": meta["uid"],
                   "controller": True, "blockOwnerDeletion": True}
            adopted = self._set_owner_refs(pod, list(pod["metadata"].get("ownerReferences") or []) + [ref])
            if adopted is not None:
                self._on_pod("MODIFIED", adopted)
                out.append(key)
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

    def _manage(self, rs: dict[str, Any], active: list[PodKey]) -> str | None:
        """Create or delete pods toward ``spec.replicas``; the error message of a failed create."""
        want = int((rs.get("spec") or {}).get("replicas", 1) or 0)
        diff = len(active) - want
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
            doomed = self._deletion_order([self._pods[k] for k in active])[: min(diff, BURST_REPLICAS)]
            for pod in doomed:
                meta = pod["metadata"]
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

    def _deletion_order(self, pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Pods to delete first come first (``ActivePodsWithRanks``, without the logarithmic buckets)."""
        per_node: dict[str, int] = {}
        for pod in pods:
            node = pod["spec"].get("nodeName") or ""
            per_node[node] = per_node.get(node, 0) + 1
        phase_rank = {POD_PENDING: 0, "Unknown": 1, POD_RUNNING: 2}

        def own_rank(pod: dict[str, Any], facts: _PodFacts) -> tuple[Any, ...]:
            meta, status = pod["metadata"], pod.get("status") or {}
            try:
                cost = int((meta.get("annotations") or {}).get(POD_DELETION_COST_ANNOTATION, "0"))
            except ValueError:
                cost = 0
            ready = facts.ready_since
            restarts = max((int(c.get("restartCount") or 0) for c in status.get("containerStatuses") or []), default=0)
            created = -parse_rfc3339(meta["creationTimestamp"]) if meta.get("creationTimestamp") else 0.0
            return (phase_rank.get(status.get("phase", POD_PENDING), 0), 0 if ready is None else 1, cost,
                    -(ready or 0.0), -restarts, created, meta["name"])

        def rank(pod: dict[str, Any]) -> tuple[Any, ...]:
            meta = pod["metadata"]
            facts = self._facts_of((meta.get("namespace") or "", meta["name"]))
            if facts.rank is None:
                facts.rank = own_rank(pod, facts)
            phase, ready, cost, ready_since, restarts, created, name = facts.rank
            node = pod["spec"].get("nodeName") or ""
            doubled_up = -per_node.get(node, 0) if node else 0
            return (1 if node else 0, phase, ready, cost, doubled_up, ready_since, restarts, created, name)

        return sorted(pods, key=rank)

    def _write_status(self, rs: dict[str, Any], active: list[PodKey], failure: str | None,
                      facts: list[_PodFacts]) -> Result | None:
        """Write the status of ``rs`` from its ``active`` pods (whose facts, in the same order, are ``facts``)."""
        spec = rs.get("spec") or {}
        min_ready = float(spec.get("minReadySeconds") or 0)
        now = self.now()
        template_labels = list((((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}).items())
        ready_since = [f.ready_since for f in facts if f.ready_since is not None]
        available = sum(1 for since in ready_since if min_ready <= 0 or since + min_ready <= now)
        if any(v is None for _k, v in template_labels):
            fully_labeled = sum(1 for f in facts if all(f.labels.get(k) == v for k, v in template_labels))
        else:
            # The same test in C: each (key, value) of the template is one of the pod's labels (a value that is
            # None, which a missing label would equal, is counted as above).
            wanted = dict(template_labels).items()
            fully_labeled = sum(1 for f in facts if wanted <= f.labels.items())
        old = rs.get("status") or {}
        status: dict[str, Any] = {"replicas": len(active)}
        if fully_labeled:
            status["fullyLabeledReplicas"] = fully_labeled
        if ready_since:
            status["readyReplicas"] = len(ready_since)
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
        waits = [since + min_ready - now for since in ready_since if since + min_ready > now]
        return Result(requeue_after=min(waits)) if waits else None



class ReplicationControllerController(ReplicaSetController):
    """Reconciles ReplicationControllers exactly as ReplicaSets (upstream shares the code)."""

    name = "replicationcontroller"
    api_version = RC_API_VERSION
    kind = RC_KIND
    component = RC_COMPONENT
