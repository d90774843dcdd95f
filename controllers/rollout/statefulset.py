"""The reference StatefulSet controller: upstream's ordered pod management and rolling update (Kubernetes
1.32, ``pkg/controller/statefulset``), with the lifecycle hooks of seed 004 (:mod:`controllers.rollout.hooks`).

Pods are named ``<statefulset>-<ordinal>`` and carry ``controller-revision-hash`` (the name of their
ControllerRevision), ``statefulset.kubernetes.io/pod-name`` and ``apps.kubernetes.io/pod-index``; the
scheduler and kubelet of the world run them. ControllerRevisions are kept as upstream's history does
(:mod:`controllers.rollout.controller_revisions`); a template equal to an older revision's is a rollback.

- ``podManagementPolicy: OrderedReady``: pods are created one at a time in ordinal order, each only once
  its predecessors are Running and available; surplus pods go one at a time, highest ordinal first.
  ``Parallel``: all at once.
- ``RollingUpdate``: ordinals at or above ``partition`` move to the update revision, highest ordinal
  first; a pod is deleted only while fewer than ``maxUnavailable`` pods (all ordinals; floored, at
  least 1, default 1) are unavailable, and with OrderedReady only while every pod is available. Ordinals
  below the partition are (re)created at the current revision. ``OnDelete``: the controller recreates
  deleted pods at the update revision and replaces nothing itself.
- Availability is Ready for ``minReadySeconds`` on the virtual clock.
- Status: replicas, readyReplicas, availableReplicas, currentReplicas, updatedReplicas, currentRevision,
  updateRevision, observedGeneration, collisionCount; the current revision becomes the update revision
  once every replica is updated and ready.

Hooks: the new available replicas are the pods at the update revision that are available; the
effective partition is ``max(partition, replicas - P)`` for the next pending point P, and while a hook
group runs (or after an Abort) no pod is created or deleted. A user partition that leaves fewer than P
ordinals to update makes the point unreachable: ``LifecycleHooks=False`` with reason
``LifecycleHookUnreachable`` says so. Hook Jobs are owned by the update revision's ControllerRevision.
With OnDelete, hooks run at their points but nothing caps the update (the user deletes the pods).

Not modelled: volumeClaimTemplates and PersistentVolumeClaim retention, ``ordinals.start``, adoption of
orphaned pods, the ``Available`` condition of newer releases.
"""

from __future__ import annotations

from typing import Any

from controllers.rollout.api import (
    CONTROLLER_REVISION,
    CONTROLLER_REVISION_HASH_LABEL,
    ON_DELETE,
    PARALLEL,
    POD_INDEX_LABEL,
    STATEFUL_SET_POD_NAME_LABEL,
    meta,
    namespaced_name,
    owner_ref,
    replicas,
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
from controllers.rollout.fenceposts import stateful_set_max_unavailable
from controllers.rollout.hooks import Gate, HookedController, Revision, read_state, requeue_for
from controllers.rollout.pods import POD, V1, available_in, is_failed, is_running_and_ready, is_terminating
from controllers.rollout.status import with_hook_condition, write_status
from harness.client import NORMAL, WARNING, ApiError, Request, Result, find_in
from harness.client import owner_mapper as _owner_mapper
from harness.kube.names.apps import APPS_V1, STATEFUL_SET
from harness.kube.names.events import FAILED_CREATE, SUCCESSFUL_CREATE, SUCCESSFUL_DELETE
from harness.kube.ownerrefs import is_controlled_by

COMPONENT = "statefulset-controller"
# recordPodEvent's wording.
POD_EVENT_MESSAGE = "{verb} Pod {pod} in StatefulSet {sts} successful"
POD_EVENT_FAILED_MESSAGE = "{verb} Pod {pod} in StatefulSet {sts} failed error: {error}"
PARTITION_WHY = "spec.updateStrategy.rollingUpdate.partition is {partition}"


def ordinal_of(sts_name: str, pod: dict[str, Any]) -> int | None:
    """The ordinal of ``<sts>-<ordinal>`` (None for a name of another shape)."""
    name = meta(pod).get("name", "")
    prefix = f"{sts_name}-"
    if not name.startswith(prefix) or not name[len(prefix):].isdigit():
        return None
    return int(name[len(prefix):])


def pod_revision(pod: dict[str, Any]) -> str:
    """The ControllerRevision name a pod was created from."""
    return str((meta(pod).get("labels") or {}).get(CONTROLLER_REVISION_HASH_LABEL, ""))


def rolling(sts: dict[str, Any]) -> dict[str, Any]:
    """``spec.updateStrategy.rollingUpdate`` (empty when unset or OnDelete)."""
    strategy = spec(sts).get("updateStrategy") or {}
    if strategy.get("type") == ON_DELETE:
        return {}
    return strategy.get("rollingUpdate") or {}


def is_on_delete(sts: dict[str, Any]) -> bool:
    """The StatefulSet uses the OnDelete strategy."""
    return (spec(sts).get("updateStrategy") or {}).get("type") == ON_DELETE


def user_partition(sts: dict[str, Any]) -> int:
    """The user's partition, within 0..replicas."""
    return max(0, min(int(rolling(sts).get("partition") or 0), replicas(sts)))


class StatefulSetController(HookedController):
    """Reconciles StatefulSets (see the module docstring)."""

    name = "statefulset"
    kind = STATEFUL_SET
    component = COMPONENT

    def setup(self) -> None:
        self.watch(self.client, APPS_V1, STATEFUL_SET)
        self.watch(self.client, V1, POD, _owner_mapper(STATEFUL_SET))
        self.watch(self.client, APPS_V1, CONTROLLER_REVISION, _owner_mapper(STATEFUL_SET))
        self.watch_hook_jobs()

    # -- reconcile ---------------------------------------------------------------------------------------

    def reconcile(self, request: Request) -> Result | None:
        sts = find_in(self.client, APPS_V1, STATEFUL_SET, request.name, request.namespace)
        if sts is None or meta(sts).get("deletionTimestamp"):
            return None
        selector = (spec(sts).get("selector") or {}).get("matchLabels") or {}
        history = sync_history(self.client, sts, dict(selector))
        if history is None:
            return Result(requeue=True)
        name = meta(sts)["name"]
        pods = [p for p in self.client.list(V1, POD, request.namespace)["items"] if is_controlled_by(p, sts)]
        by_ordinal = {o: p for p in pods if (o := ordinal_of(name, p)) is not None}
        update = history.update
        current = history.named(str(status(sts).get("currentRevision") or "")) or update
        for cr in history.revisions:
            if cr is not update:
                self.hooks.cancel_revision(sts, cr)
        gate = self._gate(sts, history, current, by_ordinal)
        update = gate.target or update
        wait: float | None = None
        if not gate.frozen:
            wait = self._manage(sts, current, update, by_ordinal, gate.cap)
        return self._sync_status(sts, history, current, update, gate, wait)

    # -- hooks -------------------------------------------------------------------------------------------

    def _available_updated(self, sts: dict[str, Any], update: dict[str, Any], by_ordinal: dict[int, Any]) -> int:
        min_ready = int(spec(sts).get("minReadySeconds") or 0)
        now = self.now()
        return sum(1 for o, p in by_ordinal.items() if o < replicas(sts) and pod_revision(p) == meta(update)["name"]
                   and available_in(p, min_ready, now) == 0.0)

    def _gate(self, sts: dict[str, Any], history: History, current: dict[str, Any],
              by_ordinal: dict[int, Any]) -> Gate:
        update = history.update
        previous = current if current is not update else history.previous()
        revision = Revision(
            owner=sts, target=update, number=revision_number(update),
            hash_label=(CONTROLLER_REVISION_HASH_LABEL, meta(update)["name"]),
            previous=namespaced_name(previous) if previous is not None else "",
            rollback=history.rollback,
        )
        want = replicas(sts)
        partition = user_partition(sts)
        fresh = history.fresh or (read_state(update) is None and current is not update)
        return self.hooks.evaluate(revision, want, self._available_updated(sts, update, by_ordinal),
                                   reachable=want - partition, fresh=fresh,
                                   unreachable_why=PARTITION_WHY.format(partition=partition))

    # -- pods --------------------------------------------------------------------------------------------

    def _manage(self, sts: dict[str, Any], current: dict[str, Any], update: dict[str, Any],
                by_ordinal: dict[int, dict[str, Any]], cap: int | None) -> float | None:
        """Create, replace and delete pods one step as the strategy allows; seconds until a pod becomes
        available (None when nothing waits for minReadySeconds)."""
        want = replicas(sts)
        ordered = spec(sts).get("podManagementPolicy") != PARALLEL
        min_ready = int(spec(sts).get("minReadySeconds") or 0)
        now = self.now()
        partition = user_partition(sts)
        if cap is not None:
            partition = max(partition, want - min(cap, want))
        wait: list[float] = []

        def revision_for(ordinal: int) -> dict[str, Any]:
            if is_on_delete(sts) or ordinal >= partition:
                return update
            return current

        for ordinal in range(want):  # failed pods are replaced
            pod = by_ordinal.get(ordinal)
            if pod is not None and is_failed(pod) and not is_terminating(pod):
                self._delete(sts, pod)
                return None
        for ordinal in range(want):
            pod = by_ordinal.get(ordinal)
            if pod is None:
                self._create(sts, ordinal, revision_for(ordinal))
                if ordered:
                    return None
                continue
            left = available_in(pod, min_ready, now)
            if left is not None and left > 0:
                wait.append(left)
            if ordered and (is_terminating(pod) or left != 0.0):
                return min(wait) if wait else None
        condemned = sorted((o for o in by_ordinal if o >= want), reverse=True)
        for ordinal in condemned:
            pod = by_ordinal[ordinal]
            if is_terminating(pod):
                if ordered:
                    return None
                continue
            self._delete(sts, pod)
            if ordered:
                return None
        if is_on_delete(sts):
            return min(wait) if wait else None
        unavailable = sum(1 for o in range(want) if by_ordinal.get(o) is None
                          or available_in(by_ordinal[o], min_ready, now) != 0.0)
        budget = stateful_set_max_unavailable(rolling(sts).get("maxUnavailable"), want) - unavailable
        if ordered and unavailable:
            budget = 0
        for ordinal in range(want - 1, partition - 1, -1):
            pod = by_ordinal.get(ordinal)
            if pod is None or is_terminating(pod) or pod_revision(pod) == meta(update)["name"]:
                continue
            if budget <= 0:
                break
            self._delete(sts, pod)
            budget -= 1
        return min(wait) if wait else None

    def _create(self, sts: dict[str, Any], ordinal: int, revision: dict[str, Any]) -> None:
        name = f"{meta(sts)['name']}-{ordinal}"
        template = revision_template(revision)
        template_meta = template.get("metadata") or {}
        labels = {**(template_meta.get("labels") or {}), CONTROLLER_REVISION_HASH_LABEL: meta(revision)["name"],
                  STATEFUL_SET_POD_NAME_LABEL: name, POD_INDEX_LABEL: str(ordinal)}
        pod_meta: dict[str, Any] = {"name": name, "namespace": meta(sts).get("namespace"), "labels": labels,
                                    "ownerReferences": [owner_ref(sts)]}
        if template_meta.get("annotations"):
            pod_meta["annotations"] = dict(template_meta["annotations"])
        pod_spec = dict(template.get("spec") or {})
        pod_spec["hostname"] = name
        if spec(sts).get("serviceName"):
            pod_spec["subdomain"] = spec(sts)["serviceName"]
        try:
            self.client.create({"apiVersion": V1, "kind": POD, "metadata": pod_meta, "spec": pod_spec})
        except ApiError as err:
            if err.code == 409:
                return  # the old pod of this ordinal is still going away
            self.events.event(sts, WARNING, FAILED_CREATE, POD_EVENT_FAILED_MESSAGE.format(
                verb="create", pod=name, sts=meta(sts)["name"], error=err.message))
            raise
        self.events.event(sts, NORMAL, SUCCESSFUL_CREATE, POD_EVENT_MESSAGE.format(
            verb="create", pod=name, sts=meta(sts)["name"]))

    def _delete(self, sts: dict[str, Any], pod: dict[str, Any]) -> None:
        if not self.delete_pod(pod):
            return
        self.events.event(sts, NORMAL, SUCCESSFUL_DELETE, POD_EVENT_MESSAGE.format(
            verb="delete", pod=meta(pod)["name"], sts=meta(sts)["name"]))

    # -- status ------------------------------------------------------------------------------------------

    def _sync_status(self, sts: dict[str, Any], history: History, current: dict[str, Any], update: dict[str, Any],
                     gate: Gate, wait: float | None) -> Result | None:
        """Recount the pods as they are now, write the status, prune history; what to requeue for."""
        name = meta(sts)["name"]
        pods = [p for p in self.client.list(V1, POD, meta(sts).get("namespace"))["items"]
                if is_controlled_by(p, sts) and ordinal_of(name, p) is not None]
        min_ready = int(spec(sts).get("minReadySeconds") or 0)
        now = self.now()
        update_name, current_name = meta(update)["name"], meta(current)["name"]
        live = [p for p in pods if not is_terminating(p)]
        counts = {
            "replicas": len(pods),
            "readyReplicas": sum(1 for p in pods if is_running_and_ready(p)),
            "availableReplicas": sum(1 for p in pods if available_in(p, min_ready, now) == 0.0),
            "currentReplicas": sum(1 for p in live if pod_revision(p) == current_name),
            "updatedReplicas": sum(1 for p in live if pod_revision(p) == update_name),
        }
        want = replicas(sts)
        if not is_on_delete(sts) and counts["updatedReplicas"] == want and counts["readyReplicas"] >= want \
                and len(pods) == want:
            current_name = update_name  # completeRollingUpdate
            counts["currentReplicas"] = counts["updatedReplicas"]
        new_status: dict[str, Any] = {"observedGeneration": meta(sts).get("generation", 1), **counts,
                                      "currentRevision": current_name, "updateRevision": update_name,
                                      "collisionCount": int(status(sts).get("collisionCount") or 0)}
        conditions = with_hook_condition(sts, gate.condition, now)
        if conditions:
            new_status["conditions"] = conditions
        go_on, result = write_status(self.client, sts, new_status)
        if not go_on:
            return result
        truncate_history(self.client, sts, history, {pod_revision(p) for p in pods} | {current_name})
        return requeue_for(gate, wait)
