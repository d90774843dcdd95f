"""The reference Deployment controller: upstream's rolling update and recreate (Kubernetes 1.32,
``pkg/controller/deployment``), with the lifecycle hooks of seed 004 (:mod:`controllers.rollout.hooks`).

ReplicaSets are named ``<deployment>-<pod-template-hash>``, carry the ``pod-template-hash`` label in
their selector and template, and the annotations ``deployment.kubernetes.io/revision``,
``desired-replicas``, ``max-replicas`` (plus the Deployment's own annotations, ``kubernetes.io/change-cause``
among them); the Deployment carries the revision of its new ReplicaSet. A template equal to an older
ReplicaSet's brings that ReplicaSet back with the next revision number (a rollback; the old numbers go to
``deployment.kubernetes.io/revision-history``). Rolling update: each sync either scales the new
ReplicaSet up (``maxSurge`` rounded up) or scales old ones down (``maxUnavailable`` rounded down, unhealthy
replicas first, oldest ReplicaSet first), never both; ``maxSurge`` and ``maxUnavailable`` both 0 means
``maxUnavailable`` 1. Recreate: old ReplicaSets go to 0, and once their pods are gone the new one goes to
the full count. Availability is the ReplicaSet controller's (Ready for ``minReadySeconds`` on the virtual
clock). Status and the ``Progressing``/``Available`` conditions are upstream's, ``progressDeadlineSeconds``
included; completed rollouts prune ReplicaSets beyond ``revisionHistoryLimit``.

Hooks: the new ReplicaSet is capped at the next pending progress point, and while a hook group runs
nothing scales (auto-pause); hook time does not count against ``progressDeadlineSeconds``; an aborting
hook sets ``Progressing=False`` with reason ``LifecycleHookFailed`` and freezes the rollout. With
Recreate and hooks, the new ReplicaSet is created at 0 replicas first, so the ``0%`` hook runs before the
old pods are stopped. Every sync reads the Deployment, its ReplicaSets and hook Jobs from the API: a
restarted controller carries on where the last one stopped.

Not modelled: adoption of orphaned ReplicaSets, proportional scaling of several active ReplicaSets while
paused (a paused Deployment scales only its new ReplicaSet), ``spec.rollbackTo`` (extensions/v1beta1 only).
"""

from __future__ import annotations

from typing import Any

from controllers.rollout import conditions as cond
from controllers.rollout.api import (
    DEPLOYMENT,
    DEPRECATED_ROLLBACK_TO_ANNOTATION,
    DESIRED_REPLICAS_ANNOTATION,
    HOOK_STATE_ANNOTATION,
    MAX_REPLICAS_ANNOTATION,
    RECREATE,
    REVISION_ANNOTATION,
    REVISION_HISTORY_ANNOTATION,
    annotations,
    lifecycle_hooks,
    meta,
    namespaced_name,
    owner_ref,
    progress_point,
    replicas,
    spec,
    status,
    template_without,
)
from controllers.rollout.fenceposts import deployment_fenceposts
from controllers.rollout.hooks import Gate, HookedController, Revision, requeue_for
from controllers.rollout.points import resolve
from controllers.rollout.revisions import revision_of, template_hash, templates_equal
from harness.client import MERGE, NORMAL, ApiError, Request, Result, find_in
from harness.client import owner_mapper as _owner_mapper
from harness.clock import parse_rfc3339
from harness.kube.conditions import find_condition
from harness.kube.names.apps import APPS_V1, POD_TEMPLATE_HASH_LABEL, REPLICA_SET
from harness.kube.names.core import CONDITION_FALSE, CONDITION_TRUE, LAST_APPLIED_CONFIGURATION_ANNOTATION
from harness.kube.ownerrefs import is_controlled_by

COMPONENT = "deployment-controller"
SCALING_REPLICA_SET = "ScalingReplicaSet"
SCALED_UP_NEW_MESSAGE = "Scaled up replica set {name} to {to}"
SCALED_MESSAGE = "Scaled {direction} replica set {name} to {to} from {frm}"
# progressDeadlineSeconds of math.MaxInt32 means "no deadline".
NO_DEADLINE = 2**31 - 1
# Annotations a Deployment does not pass on to its ReplicaSets (skipCopyAnnotation).
NOT_COPIED = (LAST_APPLIED_CONFIGURATION_ANNOTATION, REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION,
              DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION, DEPRECATED_ROLLBACK_TO_ANNOTATION,
              HOOK_STATE_ANNOTATION)
# Status fields that are omitempty.
STATUS_COUNTS = ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas")


def _creation(obj: dict[str, Any]) -> tuple[float, str]:
    stamp = meta(obj).get("creationTimestamp")
    return (parse_rfc3339(stamp) if stamp else 0.0, meta(obj).get("name", ""))


def _count(sets: list[dict[str, Any]], field: str) -> int:
    return sum(int(status(rs).get(field) or 0) for rs in sets)


def _spec_count(sets: list[dict[str, Any]]) -> int:
    return sum(replicas(rs, 0) for rs in sets)


def fenceposts(deployment: dict[str, Any]) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) of a rolling Deployment resolved against its replicas; (0, 0) for Recreate."""
    strategy = spec(deployment).get("strategy") or {}
    if strategy.get("type") == RECREATE:
        return 0, 0
    rolling = strategy.get("rollingUpdate") or {}
    return deployment_fenceposts(rolling.get("maxSurge", "25%"), rolling.get("maxUnavailable", "25%"),
                                 replicas(deployment))


def max_unavailable(deployment: dict[str, Any]) -> int:
    """``MaxUnavailable``: 0 for Recreate or no replicas, at most the replicas."""
    want = replicas(deployment)
    if want == 0 or (spec(deployment).get("strategy") or {}).get("type") == RECREATE:
        return 0
    return min(fenceposts(deployment)[1], want)


def new_replicas_for_rolling(deployment: dict[str, Any], all_sets: list[dict[str, Any]], new_count: int) -> int:
    """``NewRSNewReplicas`` for RollingUpdate: scale up toward replicas within replicas + maxSurge."""
    want = replicas(deployment)
    surge = fenceposts(deployment)[0]
    current = _spec_count(all_sets)
    max_total = want + surge
    if current >= max_total:
        return new_count
    return new_count + min(max_total - current, want - new_count)


class DeploymentController(HookedController):
    """Reconciles Deployments (see the module docstring)."""

    name = "deployment"
    kind = DEPLOYMENT
    component = COMPONENT

    def setup(self) -> None:
        self.watch(self.client, APPS_V1, DEPLOYMENT)
        self.watch(self.client, APPS_V1, REPLICA_SET, _owner_mapper(DEPLOYMENT))
        self.watch_hook_jobs()

    # -- reconcile ---------------------------------------------------------------------------------------

    def reconcile(self, request: Request) -> Result | None:
        deployment = find_in(self.client, APPS_V1, DEPLOYMENT, request.name, request.namespace)
        if deployment is None:
            return None
        listed = self.client.list(APPS_V1, REPLICA_SET, request.namespace)["items"]
        owned = sorted((rs for rs in listed if is_controlled_by(rs, deployment)), key=_creation)
        selector = spec(deployment).get("selector") or {}
        if meta(deployment).get("deletionTimestamp") or not (selector.get("matchLabels")
                                                             or selector.get("matchExpressions")):
            new, olds = self._split(deployment, owned)
            return self._sync_status(deployment, new, olds, Gate(), None)
        if spec(deployment).get("paused"):
            return self._paused(deployment, owned)
        if (spec(deployment).get("strategy") or {}).get("type") == RECREATE:
            return self._recreate(deployment, owned)
        return self._rolling(deployment, owned)

    # -- replica sets ------------------------------------------------------------------------------------

    def _split(self, deployment: dict[str, Any], owned: list[dict[str, Any]]
               ) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
        """(the ReplicaSet whose template is the Deployment's, the others), oldest first."""
        template = spec(deployment).get("template") or {}
        new = next((rs for rs in owned if templates_equal(
            template_without(spec(rs).get("template") or {}, POD_TEMPLATE_HASH_LABEL), template)), None)
        return new, [rs for rs in owned if rs is not new]

    def _rs_annotations(self, deployment: dict[str, Any], revision: int, current: dict[str, str]) -> dict[str, str]:
        out = {k: v for k, v in current.items()}
        for key, value in annotations(deployment).items():
            if key not in NOT_COPIED:
                out[key] = value
        out[REVISION_ANNOTATION] = str(revision)
        surge = fenceposts(deployment)[0]
        out[DESIRED_REPLICAS_ANNOTATION] = str(replicas(deployment))
        out[MAX_REPLICAS_ANNOTATION] = str(replicas(deployment) + surge)
        return out

    def _ensure_new(self, deployment: dict[str, Any], new: dict[str, Any] | None, olds: list[dict[str, Any]],
                    initial: int, conditions: list[dict[str, Any]]) -> tuple[dict[str, Any] | None, bool]:
        """``getNewReplicaSet``: bring an existing new ReplicaSet to the next revision, or create it with
        ``initial`` replicas. Returns (the ReplicaSet, whether its rollout starts now)."""
        max_old = max((revision_of(annotations(rs), REVISION_ANNOTATION) for rs in olds), default=0)
        revision = max_old + 1
        now = self.now()
        if new is not None:
            current = annotations(new)
            old_revision = revision_of(current, REVISION_ANNOTATION)
            fresh = old_revision < revision
            wanted = self._rs_annotations(deployment, revision if fresh else old_revision, current)
            if fresh and old_revision > 0:
                history = [h for h in current.get(REVISION_HISTORY_ANNOTATION, "").split(",") if h]
                wanted[REVISION_HISTORY_ANNOTATION] = ",".join(history + [str(old_revision)])
            if wanted != current:
                new = self.client.patch(APPS_V1, REPLICA_SET, meta(new)["name"],
                                        {"metadata": {"annotations": wanted}}, namespace=meta(new).get("namespace"),
                                        patch_type=MERGE)
            if find_condition(conditions, cond.PROGRESSING) is None and self._has_deadline(deployment):
                cond.set_condition(conditions, cond.new_condition(
                    cond.PROGRESSING, CONDITION_TRUE, cond.FOUND_NEW_RS,
                    cond.FOUND_NEW_RS_MESSAGE.format(name=meta(new)["name"]), now))
            return new, fresh
        template = spec(deployment).get("template") or {}
        collisions = status(deployment).get("collisionCount")
        pod_hash = template_hash(template, collisions)
        labels = dict((template.get("metadata") or {}).get("labels") or {})
        labels[POD_TEMPLATE_HASH_LABEL] = pod_hash
        rs_template = template_without(template, POD_TEMPLATE_HASH_LABEL)
        rs_template.setdefault("metadata", {})["labels"] = dict(labels)
        selector = dict(spec(deployment).get("selector") or {})
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), POD_TEMPLATE_HASH_LABEL: pod_hash}
        name = f"{meta(deployment)['name']}-{pod_hash}"
        body = {
            "apiVersion": APPS_V1, "kind": REPLICA_SET,
            "metadata": {"name": name, "namespace": meta(deployment).get("namespace"), "labels": labels,
                         "annotations": self._rs_annotations(deployment, revision, {}),
                         "ownerReferences": [owner_ref(deployment)]},
            "spec": {"replicas": initial, "minReadySeconds": int(spec(deployment).get("minReadySeconds") or 0),
                     "selector": selector, "template": rs_template},
        }
        try:
            created = self.client.create(body)
        except ApiError as err:
            if err.code != 409:
                raise
            existing = find_in(self.client, APPS_V1, REPLICA_SET, name, meta(deployment).get("namespace"))
            if existing is not None and is_controlled_by(existing, deployment) and templates_equal(
                    template_without(spec(existing).get("template") or {}, POD_TEMPLATE_HASH_LABEL), template):
                return existing, True
            # A hash collision: the next sync hashes with a higher collisionCount (as upstream does).
            self._bump_collisions(deployment)
            return None, False
        if initial > 0:
            self.events.event(deployment, NORMAL, SCALING_REPLICA_SET,
                              SCALED_UP_NEW_MESSAGE.format(name=name, to=initial))
        if self._has_deadline(deployment):
            cond.set_condition(
                conditions,
                cond.new_condition(
                    cond.PROGRESSING,
                    CONDITION_TRUE,
                    cond.NEW_RS_CREATED,
                    cond.NEW_RS_CREATED_MESSAGE.format(name=name),
                    now,
                ),
            )
        return created, True

    def _bump_collisions(self, deployment: dict[str, Any]) -> None:
        updated = dict(deployment)
        new_status = dict(status(deployment))
        new_status["collisionCount"] = int(new_status.get("collisionCount") or 0) + 1
        updated["status"] = new_status
        self.client.update_status(updated)

    def _sync_revision(self, deployment: dict[str, Any], new: dict[str, Any] | None) -> dict[str, Any]:
        """The Deployment carries its new ReplicaSet's revision annotation."""
        if new is None:
            return deployment
        revision = annotations(new).get(REVISION_ANNOTATION)
        if revision and annotations(deployment).get(REVISION_ANNOTATION) != revision:
            patched = self.client.patch(APPS_V1, DEPLOYMENT, meta(deployment)["name"],
                                        {"metadata": {"annotations": {REVISION_ANNOTATION: revision}}},
                                        namespace=meta(deployment).get("namespace"), patch_type=MERGE)
            deployment = {**deployment, "metadata": patched["metadata"]}
        return deployment

    def _scale(self, deployment: dict[str, Any], rs: dict[str, Any], count: int) -> bool:
        """Set a ReplicaSet's replicas (and its desired/max annotations); records the event."""
        current = replicas(rs, 0)
        wanted = self._rs_annotations(deployment, revision_of(annotations(rs), REVISION_ANNOTATION),
                                      annotations(rs))
        wanted = {k: v for k, v in wanted.items() if k in (DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION)}
        if current == count and all(annotations(rs).get(k) == v for k, v in wanted.items()):
            return False
        self.client.patch(APPS_V1, REPLICA_SET, meta(rs)["name"],
                          {"metadata": {"annotations": wanted}, "spec": {"replicas": count}},
                          namespace=meta(rs).get("namespace"), patch_type=MERGE)
        if current != count:
            direction = "up" if count > current else "down"
            self.events.event(deployment, NORMAL, SCALING_REPLICA_SET,
                              SCALED_MESSAGE.format(direction=direction, name=meta(rs)["name"], to=count, frm=current))
        return current != count

    # -- hooks ------------------------------------------------------------------------------------------

    def _first_point(self, deployment: dict[str, Any]) -> int | None:
        points = [resolve(progress_point(h), replicas(deployment)).count
                  for h in lifecycle_hooks(deployment) if progress_point(h) is not None]
        return min(points) if points else None

    def _gate(self, deployment: dict[str, Any], new: dict[str, Any], olds: list[dict[str, Any]],
              fresh: bool) -> Gate:
        for old in olds:
            self.hooks.cancel_revision(deployment, old)
        previous = max(olds, key=lambda rs: revision_of(annotations(rs), REVISION_ANNOTATION), default=None)
        revision = Revision(
            owner=deployment, target=new, number=revision_of(annotations(new), REVISION_ANNOTATION),
            hash_label=(POD_TEMPLATE_HASH_LABEL, (meta(new).get("labels") or {}).get(POD_TEMPLATE_HASH_LABEL, "")),
            previous=namespaced_name(previous) if previous is not None else "",
            rollback=bool(annotations(new).get(REVISION_HISTORY_ANNOTATION)),
        )
        return self.hooks.evaluate(revision, replicas(deployment), int(status(new).get("availableReplicas") or 0),
                                   fresh=fresh)

    # -- strategies -------------------------------------------------------------------------------------

    def _rolling(self, deployment: dict[str, Any], owned: list[dict[str, Any]]) -> Result | None:
        conditions = list(status(deployment).get("conditions") or [])
        new, olds = self._split(deployment, owned)
        initial = 0
        if new is None:
            initial = new_replicas_for_rolling(deployment, olds, 0)
            first = self._first_point(deployment)
            if first is not None:
                initial = min(initial, first)
        new, fresh = self._ensure_new(deployment, new, olds, initial, conditions)
        if new is None:
            return Result(requeue=True)
        deployment = self._sync_revision(deployment, new)
        gate = self._gate(deployment, new, olds, fresh)
        new = gate.target or new
        if gate.frozen:
            return self._sync_status(deployment, new, olds, gate, conditions)
        all_sets = olds + [new]
        if self._reconcile_new(deployment, all_sets, new, gate.cap):
            return self._sync_status(deployment, new, olds, gate, conditions)
        if self._reconcile_old(deployment, all_sets, new, olds):
            return self._sync_status(deployment, new, olds, gate, conditions)
        return self._sync_status(deployment, new, olds, gate, conditions, cleanup=True)

    def _reconcile_new(self, deployment: dict[str, Any], all_sets: list[dict[str, Any]], new: dict[str, Any],
                       cap: int | None) -> bool:
        want = replicas(deployment)
        current = replicas(new, 0)
        if current == want and cap is None:
            return self._scale(deployment, new, current)
        if current > want:
            return self._scale(deployment, new, want)
        target = new_replicas_for_rolling(deployment, all_sets, current)
        if cap is not None:
            target = min(target, max(cap, current))
        return self._scale(deployment, new, target)

    def _reconcile_old(self, deployment: dict[str, Any], all_sets: list[dict[str, Any]], new: dict[str, Any],
                       olds: list[dict[str, Any]]) -> bool:
        """``reconcileOldReplicaSets``: unhealthy old replicas first, then old ones within maxUnavailable."""
        if _spec_count(olds) == 0:
            return False
        min_available = replicas(deployment) - max_unavailable(deployment)
        new_unavailable = replicas(new, 0) - int(status(new).get("availableReplicas") or 0)
        max_scaled_down = _spec_count(all_sets) - min_available - new_unavailable
        if max_scaled_down <= 0:
            return False
        scaled = 0
        for rs in olds:  # cleanupUnhealthyReplicas, oldest first
            if scaled >= max_scaled_down:
                break
            count = replicas(rs, 0)
            unhealthy = count - int(status(rs).get("availableReplicas") or 0)
            if count == 0 or unhealthy <= 0:
                continue
            down = min(max_scaled_down - scaled, unhealthy)
            self._scale(deployment, rs, count - down)
            rs["spec"] = {**spec(rs), "replicas": count - down}
            scaled += down
        available = _count(all_sets, "availableReplicas")
        if available > min_available:  # scaleDownOldReplicaSetsForRollingUpdate
            total = available - min_available
            done = 0
            for rs in olds:
                if done >= total:
                    break
                count = replicas(rs, 0)
                if count == 0:
                    continue
                down = min(count, total - done)
                self._scale(deployment, rs, count - down)
                done += down
            scaled += done
        return scaled > 0

    def _recreate(self, deployment: dict[str, Any], owned: list[dict[str, Any]]) -> Result | None:
        conditions = list(status(deployment).get("conditions") or [])
        new, olds = self._split(deployment, owned)
        fresh = False
        hooked = self._first_point(deployment) is not None
        if new is not None or hooked:
            # With hooks the new revision exists before anything scales, so the 0% hook runs first.
            new, fresh = self._ensure_new(deployment, new, olds, 0, conditions)
            if new is None:
                return Result(requeue=True)
            deployment = self._sync_revision(deployment, new)
        gate = Gate()
        if new is not None:
            gate = self._gate(deployment, new, olds, fresh)
            new = gate.target or new
            if gate.frozen:
                return self._sync_status(deployment, new, olds, gate, conditions)
        scaled = False
        for rs in olds:
            scaled = self._scale(deployment, rs, 0) or scaled
        if scaled or any(int(status(rs).get("replicas") or 0) > 0 for rs in olds):
            return self._sync_status(deployment, new, olds, gate, conditions)
        want = replicas(deployment) if gate.cap is None else min(replicas(deployment), gate.cap)
        if new is None:
            new, fresh = self._ensure_new(deployment, None, olds, want, conditions)
            if new is None:
                return Result(requeue=True)
            deployment = self._sync_revision(deployment, new)
            return self._sync_status(deployment, new, olds, gate, conditions)
        if gate.cap is not None and replicas(new, 0) > want:
            want = replicas(new, 0)  # a cap never scales the new revision down
        if self._scale(deployment, new, want):
            return self._sync_status(deployment, new, olds, gate, conditions)
        return self._sync_status(deployment, new, olds, gate, conditions, cleanup=True)

    def _paused(self, deployment: dict[str, Any], owned: list[dict[str, Any]]) -> Result | None:
        new, olds = self._split(deployment, owned)
        if new is not None:
            active = [rs for rs in olds if replicas(rs, 0) > 0]
            if not active:
                self._scale(deployment, new, replicas(deployment))
        return self._sync_status(deployment, new, olds, Gate(), None, paused=True)

    # -- status -----------------------------------------------------------------------------------------

    @staticmethod
    def _has_deadline(deployment: dict[str, Any]) -> bool:
        deadline = spec(deployment).get("progressDeadlineSeconds")
        return deadline is not None and int(deadline) != NO_DEADLINE

    def _calculate(self, deployment: dict[str, Any], new: dict[str, Any] | None,
                   olds: list[dict[str, Any]]) -> dict[str, Any]:
        all_sets = olds + ([new] if new is not None else [])
        available = _count(all_sets, "availableReplicas")
        counts = {
            "replicas": _count(all_sets, "replicas"),
            "updatedReplicas": int(status(new).get("replicas") or 0) if new is not None else 0,
            "readyReplicas": _count(all_sets, "readyReplicas"),
            "availableReplicas": available,
            "unavailableReplicas": max(0, replicas(deployment) - available),
        }
        out: dict[str, Any] = {"observedGeneration": meta(deployment).get("generation", 1)}
        out.update({k: v for k, v in counts.items() if v})
        if status(deployment).get("collisionCount") is not None:
            out["collisionCount"] = status(deployment)["collisionCount"]
        return out

    def _sync_status(self, deployment: dict[str, Any], new: dict[str, Any] | None, olds: list[dict[str, Any]],
                     gate: Gate, conditions: list[dict[str, Any]] | None, *, cleanup: bool = False,
                     paused: bool = False) -> Result | None:
        """Write the status (counts and conditions, starting from ``conditions`` when this sync already
        set some); what to requeue for."""
        now = self.now()
        old_status = status(deployment)
        new_status = self._calculate(deployment, new, olds)
        conditions = [dict(c) for c in (old_status.get("conditions") or [] if conditions is None else conditions)]
        if new_status.get("availableReplicas", 0) >= replicas(deployment) - max_unavailable(deployment):
            cond.set_condition(conditions, cond.new_condition(cond.AVAILABLE, CONDITION_TRUE, cond.MIN_AVAILABLE,
                                                              cond.MIN_AVAILABLE_MESSAGE, now))
        else:
            cond.set_condition(conditions, cond.new_condition(cond.AVAILABLE, CONDITION_FALSE, cond.MIN_UNAVAILABLE,
                                                              cond.MIN_UNAVAILABLE_MESSAGE, now))
        requeue: float | None = None
        if paused or spec(deployment).get("paused") is not True:
            requeue = self._progressing(deployment, new, old_status, new_status, conditions, gate, paused, now)
        if gate.condition is not None:
            cond.set_hook_condition(conditions, *gate.condition, now)
        elif not lifecycle_hooks(deployment):
            cond.remove(conditions, cond.LIFECYCLE_HOOKS)
        if conditions:
            new_status["conditions"] = conditions
        if new_status != old_status:
            try:
                self.client.update_status({**deployment, "status": new_status})
            except ApiError as err:
                if err.code == 404:
                    return None
                if err.code == 409:
                    return Result(requeue=True)
                raise
        if cleanup and self._complete(deployment, new_status):
            self._cleanup(deployment, olds)
        return requeue_for(gate, requeue)

    @staticmethod
    def _complete(deployment: dict[str, Any], new_status: dict[str, Any]) -> bool:
        """``DeploymentComplete``: every replica updated and available, no old ones, generation observed."""
        want = replicas(deployment)
        return (int(new_status.get("updatedReplicas", 0)) == want and int(new_status.get("replicas", 0)) == want
                and int(new_status.get("availableReplicas", 0)) == want
                and int(new_status.get("observedGeneration", 0)) >= int(meta(deployment).get("generation", 1)))

    def _progressing(self, deployment: dict[str, Any], new: dict[str, Any] | None, old_status: dict[str, Any],
                     new_status: dict[str, Any], conditions: list[dict[str, Any]], gate: Gate, paused: bool,
                     now: float) -> float | None:
        """The Progressing condition (``syncRolloutStatus``, ``checkPausedConditions``); when to look again
        for the progress deadline."""
        name = meta(deployment)["name"]
        current = find_condition(conditions, cond.PROGRESSING)
        if paused:
            if current is None or current.get("reason") != cond.PAUSED:
                cond.set_condition(conditions, cond.new_condition(cond.PROGRESSING, "Unknown", cond.PAUSED,
                                                                  cond.PAUSED_MESSAGE, now))
            return None
        if current is not None and current.get("reason") == cond.PAUSED:
            cond.set_condition(conditions, cond.new_condition(cond.PROGRESSING, "Unknown", cond.RESUMED,
                                                              cond.RESUMED_MESSAGE, now))
            current = find_condition(conditions, cond.PROGRESSING)
        if not self._has_deadline(deployment):
            cond.remove(conditions, cond.PROGRESSING)
            return None
        if gate.aborted:
            cond.set_condition(conditions, cond.new_condition(cond.PROGRESSING, CONDITION_FALSE, cond.HOOK_FAILED,
                                                              gate.abort_message, now))
            return None
        complete_before = (new_status.get("replicas", 0) == new_status.get("updatedReplicas", 0)
                           and current is not None and current.get("reason") == cond.NEW_RS_AVAILABLE)
        if complete_before:
            return None
        rs_name = meta(new)["name"] if new is not None else ""
        if self._complete(deployment, new_status):
            cond.set_condition(conditions, cond.new_condition(cond.PROGRESSING, CONDITION_TRUE, cond.NEW_RS_AVAILABLE,
                                                              cond.NEW_RS_AVAILABLE_MESSAGE.format(name=rs_name), now))
            return None
        if self._progressed(old_status, new_status) or gate.progressed:
            message = (cond.RS_PROGRESSING_MESSAGE.format(name=rs_name) if new is not None
                       else cond.DEPLOYMENT_PROGRESSING_MESSAGE.format(name=name))
            cond.refresh_progressing(conditions, cond.new_condition(cond.PROGRESSING, CONDITION_TRUE, cond.RS_UPDATED,
                                                                    message, now))
            current = find_condition(conditions, cond.PROGRESSING)
        if gate.running or gate.frozen:
            return None  # hook time does not count against the progress deadline
        if current is None or current.get("reason") in (cond.TIMED_OUT, cond.NEW_RS_AVAILABLE, cond.HOOK_FAILED):
            return None
        deadline = int(spec(deployment)["progressDeadlineSeconds"])
        since = parse_rfc3339(current.get("lastUpdateTime") or current.get("lastTransitionTime") or "")
        if since + deadline < now:
            message = (cond.TIMED_OUT_MESSAGE.format(name=rs_name) if new is not None
                       else cond.DEPLOYMENT_TIMED_OUT_MESSAGE.format(name=name))
            cond.set_condition(conditions, cond.new_condition(cond.PROGRESSING, CONDITION_FALSE, cond.TIMED_OUT,
                                                              message, now))
            return None
        return since + deadline - now + 1.0

    @staticmethod
    def _progressed(old: dict[str, Any], new: dict[str, Any]) -> bool:
        """``DeploymentProgressing``: more updated, fewer old, more ready or more available replicas."""
        def olds(s: dict[str, Any]) -> int:
            return int(s.get("replicas") or 0) - int(s.get("updatedReplicas") or 0)
        return (int(new.get("updatedReplicas") or 0) > int(old.get("updatedReplicas") or 0)
                or olds(new) < olds(old)
                or int(new.get("readyReplicas") or 0) > int(old.get("readyReplicas") or 0)
                or int(new.get("availableReplicas") or 0) > int(old.get("availableReplicas") or 0))

    def _cleanup(self, deployment: dict[str, Any], olds: list[dict[str, Any]]) -> None:
        """Delete the oldest empty old ReplicaSets beyond ``revisionHistoryLimit``."""
        limit = spec(deployment).get("revisionHistoryLimit")
        if limit is None:
            return
        empty = [rs for rs in olds if replicas(rs, 0) == 0 and int(status(rs).get("replicas") or 0) == 0
                 and not meta(rs).get("deletionTimestamp")]
        empty.sort(key=lambda rs: revision_of(annotations(rs), REVISION_ANNOTATION))
        for rs in empty[: max(0, len(empty) - int(limit))]:
            try:
                self.client.delete(APPS_V1, REPLICA_SET, meta(rs)["name"], meta(rs).get("namespace"))
            except ApiError as err:
                if err.code != 404:
                    raise


