"""The Job controller, simulated (batch/v1 as in Kubernetes 1.32, NonIndexed completion mode).

For a Job that is not suspended it runs up to ``parallelism`` pods (never more than the
completions still missing), created from the template with the ``batch.kubernetes.io/job-tracking``
finalizer and a controller ownerReference (``generateName: <job>-``). Finished pods are counted
the 1.32 way: first recorded in ``status.uncountedTerminatedPods``, then their finalizer is
removed and they move to ``succeeded``/``failed``. A failed pod (or one deleted before it
succeeded) is replaced after the pod failure back-off (10 s doubling, at most 10 min) until
``failed > backoffLimit``. The Job then gets ``FailureTarget`` and, once no pod is terminating,
``Failed`` (reason ``BackoffLimitExceeded``); past ``activeDeadlineSeconds`` it fails with
``DeadlineExceeded``; with enough successes it gets ``SuccessCriteriaMet`` and then ``Complete``
(reason ``CompletionsReached``) and ``completionTime``. Status also carries ``active``, ``ready``,
``terminating`` and ``startTime``. Suspending deletes the active pods (condition ``Suspended``).

What a pod does comes from the Job's pod template annotations, copied onto each pod for the
kubelet: ``harness.test/job-result`` (``Succeeded`` (default) or ``Failed``) becomes
``harness.test/exit-code`` ("0" or "1") and ``harness.test/job-duration`` (Go duration, default
"0s") becomes ``harness.test/run-seconds``. Pod garbage collection after the Job is deleted is the
garbage collector's; this controller only removes its finalizer from pods whose Job is gone or
deleting. Knobs: ``record_events`` (default True), ``enabled``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from harness.apiserver.http.streaming import LOG_ANNOTATION
from harness.client import NORMAL, STRATEGIC, WARNING, ApiError, Client, Controller, EventRecorder, Request, Result
from harness.clock import parse_rfc3339, rfc3339
from harness.kube.duration import duration_seconds, format_seconds
from harness.kube.names.batch import BATCH_V1, JOB, JOB_COMPLETE, JOB_FAILED
from harness.kube.names.core import POD_FAILED, POD_PENDING, POD_READY, POD_RUNNING, POD_SUCCEEDED
from harness.kube.names.events import CREATED_POD_MESSAGE, DELETED_POD_MESSAGE, SUCCESSFUL_CREATE, SUCCESSFUL_DELETE
from harness.kube.names.knobs import (
    EXIT_CODE_ANNOTATION,
    JOB_DURATION_ANNOTATION,
    JOB_RESULT_ANNOTATION,
    RUN_SECONDS_ANNOTATION,
)
from harness.kube.ownerrefs import controller_of
from harness.world.kubelet import pod_condition, pod_is_ready, pod_is_terminal
from harness.world.replicaset import is_pod_active, pod_from_template

COMPONENT = "job-controller"

JOB_RESULT_SUCCEEDED = "Succeeded"
JOB_RESULT_FAILED = "Failed"

JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
REMOVE_FINALIZER_DIRECTIVE = "$deleteFromPrimitiveList/finalizers"

FAILURE_TARGET = "FailureTarget"
SUCCESS_CRITERIA_MET = "SuccessCriteriaMet"
SUSPENDED = "Suspended"
COMPLETIONS_REACHED = "CompletionsReached"
COMPLETIONS_REACHED_MESSAGE = "Reached expected number of succeeded pods"
BACKOFF_LIMIT_EXCEEDED = "BackoffLimitExceeded"
BACKOFF_LIMIT_EXCEEDED_MESSAGE = "Job has reached the specified backoff limit"
DEADLINE_EXCEEDED = "DeadlineExceeded"
DEADLINE_EXCEEDED_MESSAGE = "Job was active longer than specified deadline"
JOB_SUSPENDED = "JobSuspended"
JOB_SUSPENDED_MESSAGE = "Job suspended"
JOB_RESUMED = "JobResumed"
JOB_RESUMED_MESSAGE = "Job resumed"

COMPLETED_EVENT = "Completed"
COMPLETED_EVENT_MESSAGE = "Job completed"

# Pod failure back-off (``DefaultJobPodFailureBackOff``, ``MaxJobPodFailureBackOff``).
POD_FAILURE_BACKOFF = 10.0
MAX_POD_FAILURE_BACKOFF = 600.0
MAX_POD_CREATE_DELETE_PER_SYNC = 500

PodKey = tuple[str, str]


def job_pod_log(pod: dict[str, Any], result: str, exit_code: str) -> str:
    """What a simulated Job pod logs (``kubectl logs job/<name>``): the environment its containers
    were given (a hook Job's ``K8S_ROLLOUT_*``), one ``NAME=value`` a line, then how it ends."""
    lines = []
    for container in (pod.get("spec") or {}).get("containers") or []:
        for env in container.get("env") or [] if isinstance(container, dict) else []:
            if isinstance(env, dict) and "value" in env:
                lines.append(f"{env.get('name')}={env.get('value')}")
    lines.append(f"result: {result} (exit code {exit_code})")
    return "\n".join(lines) + "\n"


def job_condition(job: dict[str, Any], condition_type: str) -> dict[str, Any] | None:
    """The Job's condition of ``condition_type`` with status True, or None."""
    for condition in (job.get("status") or {}).get("conditions") or []:
        if condition.get("type") == condition_type and condition.get("status") == "True":
            return condition  # type: ignore[no-any-return]
    return None


def job_finished(job: dict[str, Any]) -> bool:
    """True once the Job has the Complete or Failed condition (``util.IsJobFinished``)."""
    return job_condition(job, JOB_COMPLETE) is not None or job_condition(job, JOB_FAILED) is not None


def _has_finalizer(pod: dict[str, Any]) -> bool:
    return JOB_TRACKING_FINALIZER in (pod["metadata"].get("finalizers") or [])


def _finish_time(pod: dict[str, Any]) -> float:
    """When the pod finished (``getFinishedTime``): its containers' latest finishedAt, else the
    Ready=False transition, else deletionTimestamp − grace, else creation."""
    status = pod.get("status") or {}
    finished = []
    for container in status.get("containerStatuses") or []:
        terminated = (container.get("state") or {}).get("terminated") or {}
        if not terminated.get("finishedAt"):
            finished = []
            break
        finished.append(parse_rfc3339(terminated["finishedAt"]))
    if finished:
        return max(finished)
    ready = pod_condition(pod, POD_READY)
    if ready is not None and ready.get("status") == "False" and ready.get("lastTransitionTime"):
        return parse_rfc3339(ready["lastTransitionTime"])
    meta = pod["metadata"]
    if meta.get("deletionTimestamp"):
        return parse_rfc3339(meta["deletionTimestamp"]) - float(meta.get("deletionGracePeriodSeconds") or 0)
    return parse_rfc3339(meta["creationTimestamp"]) if meta.get("creationTimestamp") else 0.0


def _condition(condition_type: str, reason: str, message: str, now: str, status: str = "True") -> dict[str, Any]:
    return {"type": condition_type, "status": status, "lastProbeTime": now, "lastTransitionTime": now,
            "reason": reason, "message": message}


class JobController(Controller):
    """Runs Jobs' pods and tracks their outcome."""

    name = "job"

    def __init__(self, client: Client) -> None:
        super().__init__()
        self.client = client
        self.record_events = True
        self.events = EventRecorder(client, COMPONENT)
        self._jobs: dict[PodKey, dict[str, Any]] = {}
        self._pods: dict[PodKey, dict[str, Any]] = {}
        # Pods by the (namespace, name) of their controlling Job.
        self._by_job: dict[PodKey, set[PodKey]] = {}
        # Per Job uid: (failures since the last success, time of the last failure).
        self._backoff: dict[str, tuple[int, float | None]] = {}

    def setup(self) -> None:
        self.watch(self.client, BATCH_V1, JOB, self._on_job)
        self.watch(self.client, "v1", "Pod", self._on_pod)

    # -- caches ------------------------------------------------------------------------------------

    def _on_job(self, event: str, job: dict[str, Any]) -> Iterable[Request]:
        key = (job["metadata"].get("namespace") or "", job["metadata"]["name"])
        if event == "DELETED":
            self._jobs.pop(key, None)
            self._backoff.pop(job["metadata"].get("uid", ""), None)
        else:
            self._jobs[key] = job
        return (Request(*key),)

    @staticmethod
    def _job_of(pod: dict[str, Any] | None) -> PodKey | None:
        if pod is None:
            return None
        ref = controller_of(pod)
        if ref is None or ref.get("kind") != JOB or not str(ref.get("apiVersion", "")).startswith("batch/"):
            return None
        return (pod["metadata"].get("namespace") or "", ref.get("name", ""))

    def _on_pod(self, event: str, pod: dict[str, Any]) -> Iterable[Request]:
        meta = pod["metadata"]
        key = (meta.get("namespace") or "", meta["name"])
        old_job = self._job_of(self._pods.get(key))
        if old_job is not None:
            self._by_job.get(old_job, set()).discard(key)
        if event == "DELETED":
            self._pods.pop(key, None)
        else:
            self._pods[key] = pod
        job = self._job_of(pod)
        if job is None:
            return [Request(*old_job)] if old_job is not None else []  # most pods: no Job's, before or now
        if event != "DELETED":
            self._by_job.setdefault(job, set()).add(key)
        return [Request(*j) for j in {old_job, job} if j is not None]

    # -- reconcile ---------------------------------------------------------------------------------

    def reconcile(self, request: Request) -> Result | None:
        key = (request.namespace, request.name)
        job = self._jobs.get(key)
        pods = [self._pods[k] for k in sorted(self._by_job.get(key, ()))]
        if job is None:
            self._release_orphans(pods)
            return None
        uid = job["metadata"]["uid"]
        mine = [p for p in pods if (controller_of(p) or {}).get("uid") == uid]
        self._release_orphans([p for p in pods if p not in mine])
        if job_finished(job):
            self._backoff.pop(uid, None)
            self._release_orphans(mine)
            return None
        return _JobSync(self, job, mine).run()

    def _release_orphans(self, pods: list[dict[str, Any]]) -> None:
        """Remove the tracking finalizer from pods no unfinished Job tracks (``syncOrphanPod``)."""
        for pod in pods:
            if _has_finalizer(pod):
                self.remove_finalizer(pod)

    def remove_finalizer(self, pod: dict[str, Any]) -> bool:
        """Remove the tracking finalizer (a strategic-merge delete, so it cannot conflict); True if it
        is gone (or the pod is)."""
        meta = pod["metadata"]
        body = {"metadata": {REMOVE_FINALIZER_DIRECTIVE: [JOB_TRACKING_FINALIZER]}}
        try:
            self.client.patch("v1", "Pod", meta["name"], body, namespace=meta.get("namespace"), patch_type=STRATEGIC)
        except ApiError as err:
            if err.code == 404:
                return True
            raise
        return True

    def create_pod(self, job: dict[str, Any]) -> dict[str, Any]:
        """Create one pod from the Job's template, with the tracking finalizer and the kubelet knobs."""
        template = (job.get("spec") or {}).get("template") or {}
        pod = pod_from_template(job, template)
        meta = pod["metadata"]
        meta["finalizers"] = list(meta.get("finalizers") or []) + [JOB_TRACKING_FINALIZER]
        annotations = dict(meta.get("annotations") or {})
        result = annotations.get(JOB_RESULT_ANNOTATION, JOB_RESULT_SUCCEEDED)
        try:
            duration = duration_seconds(annotations.get(JOB_DURATION_ANNOTATION, "0s"))
        except ValueError:
            duration = 0.0
        annotations.setdefault(RUN_SECONDS_ANNOTATION, format_seconds(duration))
        annotations.setdefault(EXIT_CODE_ANNOTATION, "1" if result == JOB_RESULT_FAILED else "0")
        annotations.setdefault(LOG_ANNOTATION, job_pod_log(pod, result, annotations[EXIT_CODE_ANNOTATION]))
        meta["annotations"] = annotations
        created = self.client.create(pod)
        self._on_pod("ADDED", created)
        if self.record_events:
            message = CREATED_POD_MESSAGE.format(name=created["metadata"]["name"])
            self.events.event(job, NORMAL, SUCCESSFUL_CREATE, message)
        return created

    def delete_pod(self, job: dict[str, Any], pod: dict[str, Any]) -> bool:
        """Delete a pod of the Job (its finalizer stays); True if the delete went through."""
        meta = pod["metadata"]
        try:
            self.client.delete("v1", "Pod", meta["name"], meta.get("namespace"))
        except ApiError as err:
            if err.code == 404:
                return True
            raise
        if self.record_events:
            self.events.event(job, NORMAL, SUCCESSFUL_DELETE, DELETED_POD_MESSAGE.format(name=meta["name"]))
        return True

    def backoff(self, uid: str) -> tuple[int, float | None]:
        """The Job's pod failure back-off record: failures since the last success, last failure time."""
        return self._backoff.get(uid, (0, None))

    def set_backoff(self, uid: str, record: tuple[int, float | None]) -> None:
        """Keep the back-off record (only once the status that counts those failures is written)."""
        self._backoff[uid] = record


class _JobSync:
    """One sync of one Job (``syncJob``), split into the steps upstream takes."""

    def __init__(self, controller: JobController, job: dict[str, Any], pods: list[dict[str, Any]]) -> None:
        self.c = controller
        self.job = job
        self.spec = job.get("spec") or {}
        self.status: dict[str, Any] = dict(job.get("status") or {})
        self.pods = pods
        self.now = controller.now()
        self.now_text = rfc3339(self.now)
        uncounted = dict(self.status.get("uncountedTerminatedPods") or {})
        self.uncounted_succeeded: list[str] = list(uncounted.get("succeeded") or [])
        self.uncounted_failed: list[str] = list(uncounted.get("failed") or [])
        self.requeue: float | None = None

    @property
    def suspended(self) -> bool:
        return bool(self.spec.get("suspend"))

    def _is_failed(self, pod: dict[str, Any]) -> bool:
        """``isPodFailed``: Failed, or (unless only failed pods are replaced) deleted before succeeding."""
        phase = (pod.get("status") or {}).get("phase")
        if phase == POD_FAILED:
            return True
        if self.spec.get("podReplacementPolicy") == "Failed" or self.spec.get("podFailurePolicy"):
            return False
        return bool(pod["metadata"].get("deletionTimestamp")) and phase != POD_SUCCEEDED

    def run(self) -> Result | None:
        uid = self.job["metadata"]["uid"]
        active_pods = [p for p in self.pods if is_pod_active(p)]
        terminating = sum(1 for p in self.pods if p["metadata"].get("deletionTimestamp") and not pod_is_terminal(p))
        ready = sum(1 for p in active_pods if pod_is_ready(p))
        counted = set(self.uncounted_succeeded) | set(self.uncounted_failed)
        new_succeeded = [p for p in self.pods if _has_finalizer(p) and p["metadata"]["uid"] not in counted
                         and (p.get("status") or {}).get("phase") == POD_SUCCEEDED]
        new_failed = [p for p in self.pods if _has_finalizer(p) and p["metadata"]["uid"] not in counted
                      and self._is_failed(p)]
        succeeded = int(self.status.get("succeeded") or 0) + len(new_succeeded) + len(self.uncounted_succeeded)
        failed = int(self.status.get("failed") or 0) + len(new_failed) + len(self.uncounted_failed)
        if not self.status.get("startTime") and not self.suspended:
            self.status["startTime"] = self.now_text
        backoff = self._next_backoff(uid, new_succeeded, new_failed)

        finished = job_condition(self.job, SUCCESS_CRITERIA_MET)
        if finished is None:
            target = job_condition(self.job, FAILURE_TARGET)
            if target is not None:
                finished = _condition(JOB_FAILED, target.get("reason", ""), target.get("message", ""),
                                      self.now_text)
        if finished is None:
            limit = int(self.spec.get("backoffLimit", 6))
            if failed > limit or self._past_backoff_limit_on_failure(limit):
                finished = _condition(FAILURE_TARGET, BACKOFF_LIMIT_EXCEEDED, BACKOFF_LIMIT_EXCEEDED_MESSAGE,
                                      self.now_text)
            elif self._past_active_deadline():
                finished = _condition(FAILURE_TARGET, DEADLINE_EXCEEDED, DEADLINE_EXCEEDED_MESSAGE, self.now_text)
            elif self.spec.get("activeDeadlineSeconds") is not None and not self.suspended:
                start = parse_rfc3339(self.status["startTime"])
                self._requeue(start + float(self.spec["activeDeadlineSeconds"]) - self.now)

        active = len(active_pods)
        suspend_changed = False
        if finished is not None:
            for pod in active_pods:
                self.c.delete_pod(self.job, pod)
                if pod_is_ready(pod):
                    ready -= 1
            terminating += active
            active = 0
        else:
            manage_called = False
            if not self.job["metadata"].get("deletionTimestamp"):
                active, ready, terminating = self._manage(active_pods, succeeded, ready, terminating, backoff)
                manage_called = True
            completions = self.spec.get("completions")
            if completions is None:
                complete = succeeded > 0 and active == 0
            else:
                complete = succeeded >= int(completions) and active == 0
            if complete:
                finished = _condition(SUCCESS_CRITERIA_MET, COMPLETIONS_REACHED, COMPLETIONS_REACHED_MESSAGE,
                                      self.now_text)
            elif manage_called:
                suspend_changed = self._suspend_condition()

        changed = suspend_changed or (active, ready, terminating) != (
            self.status.get("active", 0), self.status.get("ready"), self.status.get("terminating"))
        if active:
            self.status["active"] = active
        else:
            self.status.pop("active", None)
        self.status["ready"] = ready
        self.status["terminating"] = terminating
        self._track(finished, new_succeeded, new_failed, terminating, changed, backoff)
        return Result(requeue_after=self.requeue) if self.requeue else None

    def _requeue(self, delay: float) -> None:
        if delay > 0 and (self.requeue is None or delay < self.requeue):
            self.requeue = delay

    def _next_backoff(
        self, uid: str, new_succeeded: list[dict[str, Any]], new_failed: list[dict[str, Any]]
    ) -> tuple[int, float | None]:
        """``newBackoffRecord``: failures since the last success and when the last one happened."""
        failures, last = self.c.backoff(uid)
        failed_times = sorted(_finish_time(p) for p in new_failed)
        if not new_succeeded:
            if not new_failed:
                return failures, last
            return failures + len(new_failed), failed_times[-1]
        last_success = max(_finish_time(p) for p in new_succeeded)
        after = [t for t in failed_times if t > last_success]
        return len(after), (after[-1] if after else None)

    def _remaining_backoff(self, record: tuple[int, float | None]) -> float:
        failures, last = record
        if failures == 0 or last is None:
            return 0.0
        delay = POD_FAILURE_BACKOFF
        for _ in range(1, failures):
            delay *= 2
            if delay >= MAX_POD_FAILURE_BACKOFF:
                delay = MAX_POD_FAILURE_BACKOFF
                break
        elapsed = self.now - last
        return 0.0 if delay < elapsed else delay - elapsed

    def _past_backoff_limit_on_failure(self, limit: int) -> bool:
        template_spec = (self.spec.get("template") or {}).get("spec") or {}
        if template_spec.get("restartPolicy") != "OnFailure":
            return False
        restarts = 0
        for pod in self.pods:
            if (pod.get("status") or {}).get("phase") in (POD_RUNNING, POD_PENDING):
                for container in ((pod.get("status") or {}).get("initContainerStatuses") or []) + (
                        (pod.get("status") or {}).get("containerStatuses") or []):
                    restarts += int(container.get("restartCount") or 0)
        return restarts > 0 if limit == 0 else restarts >= limit

    def _past_active_deadline(self) -> bool:
        deadline = self.spec.get("activeDeadlineSeconds")
        if deadline is None or not self.status.get("startTime") or self.suspended:
            return False
        return self.now - parse_rfc3339(self.status["startTime"]) >= float(deadline)

    def _manage(
        self, active_pods: list[dict[str, Any]], succeeded: int, ready: int, terminating: int,
        backoff: tuple[int, float | None],
    ) -> tuple[int, int, int]:
        """Delete or create pods toward the wanted number of active pods (``manageJob``)."""
        active = len(active_pods)
        if self.suspended:
            for pod in active_pods:
                self.c.remove_finalizer(pod)
                self.c.delete_pod(self.job, pod)
                if pod_is_ready(pod):
                    ready -= 1
            return 0, ready, terminating + active
        parallelism = int(self.spec.get("parallelism", 1))
        completions = self.spec.get("completions")
        if completions is None:
            want = active if succeeded > 0 else parallelism
        else:
            want = max(0, min(int(completions) - succeeded, parallelism))
        if active > want:
            # Not ready before ready, unscheduled before scheduled, pending before running.
            order = sorted(active_pods, key=lambda p: (pod_is_ready(p), bool(p["spec"].get("nodeName")),
                                                       (p.get("status") or {}).get("phase") == POD_RUNNING))
            doomed = order[: min(active - want, MAX_POD_CREATE_DELETE_PER_SYNC)]
            for pod in doomed:
                self.c.remove_finalizer(pod)
                self.c.delete_pod(self.job, pod)
                if pod_is_ready(pod):
                    ready -= 1
            return active - len(doomed), ready, terminating + len(doomed)
        waiting = terminating if self.spec.get("podReplacementPolicy") == "Failed" else 0
        missing = want - waiting - active
        if missing > 0:
            remaining = self._remaining_backoff(backoff)
            if remaining > 0:
                self._requeue(remaining)
                return active, ready, terminating
            for _ in range(min(missing, MAX_POD_CREATE_DELETE_PER_SYNC)):
                self.c.create_pod(self.job)
                active += 1
        return active, ready, terminating

    def _suspend_condition(self) -> bool:
        """``ensureJobConditionStatus`` for Suspended; True if the conditions changed."""
        conditions = list(self.status.get("conditions") or [])
        existing = next((c for c in conditions if c.get("type") == SUSPENDED), None)
        if self.suspended:
            if existing is not None and existing.get("status") == "True":
                return False
            if existing is None:
                conditions.append(_condition(SUSPENDED, JOB_SUSPENDED, JOB_SUSPENDED_MESSAGE, self.now_text))
            else:
                conditions = [_condition(SUSPENDED, JOB_SUSPENDED, JOB_SUSPENDED_MESSAGE, self.now_text)
                              if c is existing else c for c in conditions]
            self.status["conditions"] = conditions
            if self.c.record_events:
                self.c.events.event(self.job, NORMAL, SUSPENDED, JOB_SUSPENDED_MESSAGE)
            return True
        if existing is None or existing.get("status") == "False":
            return False
        conditions = [_condition(SUSPENDED, JOB_RESUMED, JOB_RESUMED_MESSAGE, self.now_text, status="False")
                      if c is existing else c for c in conditions]
        self.status["conditions"] = conditions
        # A resumed Job's active deadline counts from now.
        self.status["startTime"] = self.now_text
        if self.c.record_events:
            self.c.events.event(self.job, NORMAL, "Resumed", JOB_RESUMED_MESSAGE)
        return True

    def _track(
        self, finished: dict[str, Any] | None, new_succeeded: list[dict[str, Any]], new_failed: list[dict[str, Any]],
        terminating: int, needs_flush: bool, backoff: tuple[int, float | None],
    ) -> None:
        """``trackJobStatusAndRemoveFinalizers``: record finished pods as uncounted, remove their
        finalizers, count them, then add the terminal condition when nothing is left to wait for."""
        with_finalizer = {p["metadata"]["uid"] for p in self.pods if _has_finalizer(p)}
        if self._count_released(with_finalizer):
            needs_flush = True
        deleting = bool(self.job["metadata"].get("deletionTimestamp"))
        release: list[dict[str, Any]] = []
        for pod in self.pods:
            if not _has_finalizer(pod):
                continue
            uid = pod["metadata"]["uid"]
            phase = (pod.get("status") or {}).get("phase")
            considered_failed = self._is_failed(pod)
            if not (deleting or finished is not None or phase == POD_SUCCEEDED or considered_failed):
                continue
            release.append(pod)
            if phase == POD_SUCCEEDED and uid not in self.uncounted_failed:
                if uid not in self.uncounted_succeeded:
                    self.uncounted_succeeded.append(uid)
                    needs_flush = True
            elif (considered_failed or (finished is not None and finished["type"] != SUCCESS_CRITERIA_MET)) and (
                    uid not in self.uncounted_failed):
                self.uncounted_failed.append(uid)
                needs_flush = True
        conditions = list(self.status.get("conditions") or [])
        if finished is not None and finished["type"] == FAILURE_TARGET:
            conditions.append(finished)
            needs_flush = True
            finished = _condition(JOB_FAILED, finished["reason"], finished["message"], self.now_text)
        elif finished is not None and finished["type"] == SUCCESS_CRITERIA_MET:
            if job_condition(self.job, SUCCESS_CRITERIA_MET) is None:
                conditions.append(finished)
                needs_flush = True
            finished = _condition(JOB_COMPLETE, finished["reason"], finished["message"], self.now_text)
        if conditions:
            self.status["conditions"] = conditions
        if needs_flush:
            self._flush()
            self.c.set_backoff(self.job["metadata"]["uid"], backoff)
            needs_flush = False
        for pod in release:
            if self.c.remove_finalizer(pod):
                with_finalizer.discard(pod["metadata"]["uid"])
        if self._count_released(with_finalizer):
            needs_flush = True
        if finished is not None and not self.uncounted_succeeded and not self.uncounted_failed and terminating == 0:
            self.status["conditions"] = list(self.status.get("conditions") or []) + [finished]
            if finished["type"] == JOB_COMPLETE:
                self.status["completionTime"] = finished["lastTransitionTime"]
            self._flush()
            if self.c.record_events:
                if finished["type"] == JOB_COMPLETE:
                    self.c.events.event(self.job, NORMAL, COMPLETED_EVENT, COMPLETED_EVENT_MESSAGE)
                else:
                    self.c.events.event(self.job, WARNING, finished["reason"], finished["message"])
        elif needs_flush:
            self._flush()

    def _count_released(self, with_finalizer: set[str]) -> bool:
        """``cleanUncountedPodsWithoutFinalizers``: uncounted pods whose finalizer is gone join the counters."""
        changed = False
        for field, uids in (("succeeded", self.uncounted_succeeded), ("failed", self.uncounted_failed)):
            keep = [u for u in uids if u in with_finalizer]
            if len(keep) != len(uids):
                self.status[field] = int(self.status.get(field) or 0) + len(uids) - len(keep)
                uids[:] = keep
                changed = True
        return changed

    def _flush(self) -> None:
        uncounted: dict[str, Any] = {}
        if self.uncounted_succeeded:
            uncounted["succeeded"] = list(self.uncounted_succeeded)
        if self.uncounted_failed:
            uncounted["failed"] = list(self.uncounted_failed)
        self.status["uncountedTerminatedPods"] = uncounted
        updated = dict(self.job)
        updated["status"] = dict(self.status)
        self.job = self.c.client.update_status(updated)
