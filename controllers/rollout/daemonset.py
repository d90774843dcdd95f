"""The reference DaemonSet controller: one pod per eligible Node and upstream's rolling update (Kubernetes
1.32, ``pkg/controller/daemon``), with the lifecycle hooks of seed 004 (:mod:`controllers.rollout.hooks`).

A Node is eligible when it is not being deleted, its labels match the template's ``nodeSelector``, and
every NoSchedule/NoExecute taint it has is tolerated by the template's tolerations or the ones upstream
adds to every daemon pod (not-ready, unreachable, disk/memory/pid pressure, unschedulable); node
affinity beyond that is not looked at. Pods are named ``<daemonset>-<random>``, carry
``controller-revision-hash`` (the template hash) and ``pod-template-generation``, the required node
affinity ``metadata.name In [<node>]`` and those tolerations; the world's scheduler binds them. Pods on
nodes that are not eligible, failed pods and duplicates are deleted. ControllerRevisions are kept as
upstream's history does (:mod:`controllers.rollout.controller_revisions`).

RollingUpdate: ``maxUnavailable`` and ``maxSurge`` both round UP against the number of eligible nodes,
both 0 means maxUnavailable 1. Without surge, old pods are deleted on as many nodes as the unavailable
budget allows (an unavailable old pod is always replaceable) and the manage loop puts a new pod there;
with surge, a new pod starts beside the old one and the old one goes once the new one is available.
OnDelete: only nodes without a pod get one. Availability is Ready for ``minReadySeconds`` on the
virtual clock. Nodes are visited by name; which node goes first is not part of the contract.

Status: desiredNumberScheduled, currentNumberScheduled, numberMisscheduled, numberReady,
updatedNumberScheduled, numberAvailable, numberUnavailable, observedGeneration, collisionCount.

Hooks: progress points count the nodes whose pod is at the update revision and available (never which
nodes); at most P nodes hold (or are about to get) an updated pod while hooks at P are pending, and
while a hook group runs (or after an Abort) no pod is created or deleted. Hook Jobs are owned by the
update revision's ControllerRevision.
"""

from __future__ import annotations

from typing import Any

from controllers.rollout.api import (
    CONTROLLER_HASH_LABEL,
    CONTROLLER_REVISION,
    CONTROLLER_REVISION_HASH_LABEL,
    ON_DELETE,
    meta,
    namespaced_name,
    owner_ref,
    spec,
    status,
)
from controllers.rollout.controller_revisions import (
    History,
    revision_number,
    revision_template,
    sync_history,
    truncate_history,
)
from controllers.rollout.fenceposts import daemon_set_fenceposts
from controllers.rollout.hooks import Gate, HookedController, Revision, read_state, requeue_for
from controllers.rollout.pods import (
    NODE,
    POD,
    V1,
    available_in,
    is_failed,
    is_running_and_ready,
    is_terminating,
)
from controllers.rollout.status import with_hook_condition, write_status
from harness.client import NORMAL, WARNING, ApiError, Client, Request, Result, find_in
from harness.client import owner_mapper as _owner_mapper
from harness.kube.names.apps import APPS_V1, DAEMON_SET
from harness.kube.names.core import NO_EXECUTE, NO_SCHEDULE
from harness.kube.names.events import (
    CREATED_POD_MESSAGE,
    DELETED_POD_MESSAGE,
    FAILED_CREATE,
    FAILED_CREATE_MESSAGE,
    SUCCESSFUL_CREATE,
    SUCCESSFUL_DELETE,
)
from harness.kube.ownerrefs import is_controlled_by

COMPONENT = "daemonset-controller"
POD_TEMPLATE_GENERATION_LABEL = "pod-template-generation"
TEMPLATE_GENERATION_ANNOTATION = "deprecated.daemonset.template.generation"
NODE_NAME_FIELD = "metadata.name"
# AddOrUpdateDaemonPodTolerations: what every daemon pod tolerates.
DEFAULT_TOLERATIONS = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": NO_EXECUTE},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": NO_EXECUTE},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": NO_SCHEDULE},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": NO_SCHEDULE},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": NO_SCHEDULE},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": NO_SCHEDULE},
)


def _tolerates(tolerations: list[dict[str, Any]], taint: dict[str, Any]) -> bool:
    for toleration in tolerations:
        if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
            continue
        key = toleration.get("key") or ""
        if (toleration.get("operator") or "Equal") == "Exists":
            if not key or key == taint.get("key"):
                return True
        elif key == taint.get("key") and (toleration.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


def pod_tolerations(template: dict[str, Any]) -> list[dict[str, Any]]:
    """The template's tolerations plus the daemon pod defaults it does not have."""
    own = list((template.get("spec") or {}).get("tolerations") or [])
    keys = {(t.get("key"), t.get("effect")) for t in own}
    return own + [dict(t) for t in DEFAULT_TOLERATIONS if (t["key"], t["effect"]) not in keys]


def should_run(template: dict[str, Any], node: dict[str, Any]) -> bool:
    """Whether a daemon pod of ``template`` belongs on ``node`` (see the module docstring)."""
    if meta(node).get("deletionTimestamp"):
        return False
    labels = meta(node).get("labels") or {}
    selector = (template.get("spec") or {}).get("nodeSelector") or {}
    if any(labels.get(k) != v for k, v in selector.items()):
        return False
    tolerations = pod_tolerations(template)
    return all(_tolerates(tolerations, taint) for taint in spec(node).get("taints") or []
               if taint.get("effect") in (NO_SCHEDULE, NO_EXECUTE))


def node_of(pod: dict[str, Any]) -> str:
    """The node a daemon pod is for: its nodeName, else its node affinity's ``metadata.name``."""
    if spec(pod).get("nodeName"):
        return str(spec(pod)["nodeName"])
    required = ((spec(pod).get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution") or {}
    for term in required.get("nodeSelectorTerms") or []:
        for field in term.get("matchFields") or []:
            if field.get("key") == NODE_NAME_FIELD and field.get("values"):
                return str(field["values"][0])
    return ""


def pod_hash(pod: dict[str, Any]) -> str:
    """The template hash a daemon pod was created with."""
    return str((meta(pod).get("labels") or {}).get(CONTROLLER_REVISION_HASH_LABEL, ""))


def _oldest_first(pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(pods, key=lambda p: (meta(p).get("creationTimestamp") or "", meta(p).get("name", "")))


class DaemonSetController(HookedController):
    """Reconciles DaemonSets (see the module docstring)."""

    name = "daemonset"
    kind = DAEMON_SET
    component = COMPONENT

    def __init__(self, client: Client) -> None:
        super().__init__(client)
        self._known: set[Request] = set()

    def setup(self) -> None:
        self.watch(self.client, APPS_V1, DAEMON_SET, self._on_daemon_set)
        self.watch(self.client, V1, POD, _owner_mapper(DAEMON_SET))
        self.watch(self.client, APPS_V1, CONTROLLER_REVISION, _owner_mapper(DAEMON_SET))
        self.watch(self.client, V1, NODE, self._every_daemon_set)
        self.watch_hook_jobs()

    def _on_daemon_set(self, event: str, ds: dict[str, Any]) -> list[Request]:
        """Remember which DaemonSets exist (a Node event concerns all of them, and Nodes change often)."""
        request = Request.of(ds)
        if event == "DELETED":
            self._known.discard(request)
        else:
            self._known.add(request)
        return [request]

    def _every_daemon_set(self, _event: str, _node: dict[str, Any]) -> list[Request]:
        return sorted(self._known)

    # -- reconcile ---------------------------------------------------------------------------------------

    def reconcile(self, request: Request) -> Result | None:
        ds = find_in(self.client, APPS_V1, DAEMON_SET, request.name, request.namespace)
        if ds is None or meta(ds).get("deletionTimestamp"):
            return None
        selector = (spec(ds).get("selector") or {}).get("matchLabels") or {}
        history = sync_history(self.client, ds, dict(selector))
        if history is None:
            return Result(requeue=True)
        for cr in history.revisions:
            if cr is not history.update:
                self.hooks.cancel_revision(ds, cr)
        template = spec(ds).get("template") or {}
        eligible = sorted(meta(n)["name"] for n in self.client.list(V1, NODE)["items"] if should_run(template, n))
        by_node = self._pods_by_node(ds)
        update_hash = str((meta(history.update).get("labels") or {}).get(CONTROLLER_HASH_LABEL, ""))
        gate = self._gate(ds, history, eligible, by_node, update_hash)
        update = gate.target or history.update
        wait: float | None = None
        if not gate.frozen:
            wait = self._manage(ds, update, update_hash, eligible, by_node, gate.cap)
        return self._sync_status(ds, history, update_hash, eligible, gate, wait)

    def _pods_by_node(self, ds: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
        by_node: dict[str, list[dict[str, Any]]] = {}
        for pod in self.client.list(V1, POD, meta(ds).get("namespace"))["items"]:
            if is_controlled_by(pod, ds):
                by_node.setdefault(node_of(pod), []).append(pod)
        return by_node

    def _available(self, ds: dict[str, Any], pod: dict[str, Any]) -> bool:
        return available_in(pod, int(spec(ds).get("minReadySeconds") or 0), self.now()) == 0.0

    # -- hooks -------------------------------------------------------------------------------------------

    def _gate(self, ds: dict[str, Any], history: History, eligible: list[str],
              by_node: dict[str, list[dict[str, Any]]], update_hash: str) -> Gate:
        update = history.update
        available = sum(1 for node in eligible if any(
            pod_hash(p) == update_hash and not is_terminating(p) and self._available(ds, p)
            for p in by_node.get(node, [])))
        outdated = any(pod_hash(p) != update_hash for node in eligible for p in by_node.get(node, []))
        previous = history.previous()
        revision = Revision(
            owner=ds, target=update, number=revision_number(update),
            hash_label=(CONTROLLER_REVISION_HASH_LABEL, update_hash),
            previous=namespaced_name(previous) if previous is not None else "",
            rollback=history.rollback,
        )
        fresh = history.fresh or (read_state(update) is None and outdated)
        return self.hooks.evaluate(revision, len(eligible), available, fresh=fresh)

    # -- pods --------------------------------------------------------------------------------------------

    def _manage(self, ds: dict[str, Any], update: dict[str, Any], update_hash: str, eligible: list[str],
                by_node: dict[str, list[dict[str, Any]]], cap: int | None) -> float | None:
        """One step of the manage loop and the rolling update; seconds until a pod becomes available
        (None when nothing waits for minReadySeconds)."""
        strategy = spec(ds).get("updateStrategy") or {}
        rolling = strategy.get("rollingUpdate") or {}
        surge, max_unavailable = daemon_set_fenceposts(rolling.get("maxSurge"), rolling.get("maxUnavailable"),
                                                       len(eligible))
        if strategy.get("type") == ON_DELETE:
            surge = 0
        min_ready = int(spec(ds).get("minReadySeconds") or 0)
        now = self.now()
        wanted = set(eligible)
        for node, pods in by_node.items():  # pods on nodes they do not belong on
            if node not in wanted:
                for pod in pods:
                    if not is_terminating(pod):
                        self._delete(ds, pod)
        # (new, old) pod of each eligible node; failed pods and duplicates go.
        nodes: dict[str, tuple[dict[str, Any] | None, dict[str, Any] | None]] = {}
        for node in eligible:
            live = [p for p in by_node.get(node, []) if not is_terminating(p)]
            for pod in [p for p in live if is_failed(p)]:
                self._delete(ds, pod)
            live = _oldest_first([p for p in live if not is_failed(p)])
            new = [p for p in live if pod_hash(p) == update_hash]
            old = [p for p in live if pod_hash(p) != update_hash]
            extra = new[1:] + old[1:]
            if new and old and surge == 0 and strategy.get("type") != ON_DELETE:
                extra.append(old[0])
                old = []
            for pod in extra:
                self._delete(ds, pod)
            nodes[node] = (new[0] if new else None, old[0] if old else None)
        updated = sum(1 for new, _ in nodes.values() if new is not None)
        room = len(eligible) if cap is None else cap - updated
        empty = [node for node, (new, old) in nodes.items() if new is None and old is None]
        for node in empty:
            if room <= 0:
                break
            self._create(ds, update, update_hash, node)
            room -= 1
        # Every empty node gets (or waits for) an updated pod, so it takes a place under the cap.
        room = len(eligible) if cap is None else cap - updated - len(empty)
        if strategy.get("type") == ON_DELETE:
            return self._wait(nodes, min_ready, now)
        if surge == 0:
            unavailable = 0
            allowed: list[dict[str, Any]] = []
            candidates: list[dict[str, Any]] = []
            for new, old in nodes.values():
                if new is None and old is None or new is not None and old is not None:
                    unavailable += 1
                elif new is not None:
                    if available_in(new, min_ready, now) != 0.0:
                        unavailable += 1
                elif old is not None:
                    if available_in(old, min_ready, now) != 0.0:
                        allowed.append(old)
                    elif unavailable < max_unavailable:
                        candidates.append(old)
            remaining = min(max(0, max_unavailable - unavailable), len(candidates))
            for pod in (allowed + candidates[:remaining])[:max(0, room)]:
                self._delete(ds, pod)
        else:
            surged = 0
            allowed_nodes: list[str] = []
            candidate_nodes: list[str] = []
            for node, (new, old) in nodes.items():
                if old is None:
                    continue
                if new is None:
                    if available_in(old, min_ready, now) != 0.0:
                        allowed_nodes.append(node)
                    elif surged < surge:
                        candidate_nodes.append(node)
                elif available_in(new, min_ready, now) != 0.0:
                    surged += 1
                else:
                    self._delete(ds, old)
            remaining = min(max(0, surge - surged), len(candidate_nodes))
            for node in (allowed_nodes + candidate_nodes[:remaining])[:max(0, room)]:
                self._create(ds, update, update_hash, node)
        return self._wait(nodes, min_ready, now)

    @staticmethod
    def _wait(nodes: dict[str, tuple[dict[str, Any] | None, dict[str, Any] | None]], min_ready: int,
              now: float) -> float | None:
        left = [t for pair in nodes.values() for p in pair if p is not None
                and (t := available_in(p, min_ready, now)) is not None and t > 0]
        return min(left) if left else None

    def _create(self, ds: dict[str, Any], update: dict[str, Any], update_hash: str, node: str) -> None:
        template = revision_template(update)
        template_meta = template.get("metadata") or {}
        generation = str(meta(ds).get("annotations", {}).get(TEMPLATE_GENERATION_ANNOTATION)
                         or meta(ds).get("generation", 1))
        labels = {**(template_meta.get("labels") or {}), CONTROLLER_REVISION_HASH_LABEL: update_hash,
                  POD_TEMPLATE_GENERATION_LABEL: generation}
        pod_meta: dict[str, Any] = {"generateName": f"{meta(ds)['name']}-", "namespace": meta(ds).get("namespace"),
                                    "labels": labels, "ownerReferences": [owner_ref(ds)]}
        if template_meta.get("annotations"):
            pod_meta["annotations"] = dict(template_meta["annotations"])
        pod_spec = dict(template.get("spec") or {})
        affinity = dict(pod_spec.get("affinity") or {})
        node_affinity = dict(affinity.get("nodeAffinity") or {})
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [
            {"matchFields": [{"key": NODE_NAME_FIELD, "operator": "In", "values": [node]}]}]}
        affinity["nodeAffinity"] = node_affinity
        pod_spec["affinity"] = affinity
        pod_spec["tolerations"] = pod_tolerations(template)
        try:
            created = self.client.create({"apiVersion": V1, "kind": POD, "metadata": pod_meta, "spec": pod_spec})
        except ApiError as err:
            self.events.event(ds, WARNING, FAILED_CREATE, FAILED_CREATE_MESSAGE.format(error=err.message))
            raise
        self.events.event(ds, NORMAL, SUCCESSFUL_CREATE, CREATED_POD_MESSAGE.format(name=meta(created)["name"]))

    def _delete(self, ds: dict[str, Any], pod: dict[str, Any]) -> None:
        if not self.delete_pod(pod):
            return
        self.events.event(ds, NORMAL, SUCCESSFUL_DELETE, DELETED_POD_MESSAGE.format(name=meta(pod)["name"]))

    # -- status ------------------------------------------------------------------------------------------

    def _sync_status(self, ds: dict[str, Any], history: History, update_hash: str, eligible: list[str],
                     gate: Gate, wait: float | None) -> Result | None:
        """Recount the pods as they are now, write the status, prune history; what to requeue for."""
        by_node = self._pods_by_node(ds)
        wanted = set(eligible)

        def live(node: str) -> list[dict[str, Any]]:
            return [p for p in by_node.get(node, []) if not is_terminating(p)]

        scheduled = [n for n in eligible if live(n)]
        available = sum(1 for n in eligible if any(self._available(ds, p) for p in live(n)))
        new_status: dict[str, Any] = {
            "currentNumberScheduled": len(scheduled),
            "numberMisscheduled": sum(1 for n in by_node if n not in wanted and live(n)),
            "desiredNumberScheduled": len(eligible),
            "numberReady": sum(1 for n in eligible if any(is_running_and_ready(p) for p in live(n))),
            "observedGeneration": meta(ds).get("generation", 1),
            "updatedNumberScheduled": sum(1 for n in eligible if any(pod_hash(p) == update_hash for p in live(n))),
            "numberAvailable": available,
            "numberUnavailable": len(eligible) - available,
        }
        if status(ds).get("collisionCount") is not None:
            new_status["collisionCount"] = status(ds)["collisionCount"]
        new_status = {k: v for k, v in new_status.items()
                      if v or k in ("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled",
                                    "numberReady", "collisionCount")}
        now = self.now()
        conditions = with_hook_condition(ds, gate.condition, now)
        if conditions:
            new_status["conditions"] = conditions
        go_on, result = write_status(self.client, ds, new_status)
        if not go_on:
            return result
        live_hashes = {pod_hash(p) for pods in by_node.values() for p in pods}
        live_names = {meta(cr)["name"] for cr in history.revisions
                      if (meta(cr).get("labels") or {}).get(CONTROLLER_HASH_LABEL) in live_hashes}
        truncate_history(self.client, ds, history, live_names)
        return requeue_for(gate, wait)
