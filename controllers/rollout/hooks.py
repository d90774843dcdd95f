"""The lifecycle hook sequence of seed 004, shared by the Deployment, StatefulSet and DaemonSet
controllers.

A workload's controller describes its new revision (:class:`Revision`) and how far it got (new
available replicas, and how many could be reached at all); :meth:`HookRunner.evaluate` runs the hook
algorithm and answers with a :class:`Gate`: how many new replicas the controller may have (the next
pending point), or that it must not scale at all (a hook group runs, or one aborted).

1. Hooks are grouped by progress point (:mod:`controllers.rollout.points`); the first group with a hook
   not yet finished is the current one.
2. While the new revision has fewer available replicas than the current group's point, the controller
   scales the new revision up to that point and no further (``Gate.cap``).
3. At the point, every pending hook of the group gets its Job (one per (owner, revision, hook), with a
   deterministic name, an ownerReference to the revision object, labels naming owner, revision and hook,
   and the ``K8S_ROLLOUT_*`` environment unless a container sets it); nothing scales until all of them
   finished (``Gate.frozen``).
4. A failed hook with ``failurePolicy: Abort`` (or a hook Job deleted before it finished) aborts the
   rollout: a Warning event, the still running hooks of its group are cancelled, no later hook runs and
   the workload stays frozen until the next rollout. With ``Ignore`` the failure is only a Warning event.
5. ``retainPolicy``: ``Always`` keeps every Job, ``OnFailure`` deletes the Jobs that succeeded, ``Never``
   deletes every Job once finished. A cancelled Job (rollover, an aborted sibling, a hook removed from the
   spec) is suspended (its pods go away) and counts as not succeeded.

The sequence of a revision is recorded as JSON in the annotation ``rollout.lifecycle-tck.io/hooks`` on
the revision object (ReplicaSet or ControllerRevision): revision number, rollout type, from/to objects
and each hook's phase. Everything else is read from the API, so a restarted controller (another process,
another instance) resumes exactly there; a hook never runs twice for one revision. A hook added to the
spec after the rollout passed its point is recorded as ``Skipped`` and not run retroactively. Creating a
workload is not an update: its first revision runs no hook (every hook is recorded as ``Skipped``).
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from controllers.rollout import conditions as cond
from controllers.rollout.api import (
    ENV_FROM_OBJECT,
    ENV_TO_OBJECT,
    ENV_TYPE,
    HOOK_NAME_LABEL,
    HOOK_OWNER_KIND_LABEL,
    HOOK_OWNER_NAME_LABEL,
    HOOK_REVISION_LABEL,
    HOOK_STATE_ANNOTATION,
    IGNORE,
    NEVER,
    ON_FAILURE,
    ROLLBACK,
    ROLLOUT,
    annotations,
    failure_policy,
    lifecycle_hooks,
    meta,
    owner_ref,
    progress_point,
    retain_policy,
)
from controllers.rollout.pods import POD, V1
from controllers.rollout.points import Group, groups, resolve
from harness.client import MERGE, NORMAL, WARNING, ApiError, Client, Controller, EventRecorder, Request, Result, find_in
from harness.kube.names.batch import BATCH_V1, JOB, JOB_COMPLETE, JOB_FAILED
from harness.kube.names.core import CONDITION_FALSE, CONDITION_TRUE
from harness.kube.names.events import FAILED_CREATE

# Hook phases recorded in the state annotation.
PENDING = "Pending"
RUNNING = "Running"
SUCCEEDED = "Succeeded"
FAILED = "Failed"
CANCELLED = "Cancelled"
SKIPPED = "Skipped"
FINISHED = (SUCCEEDED, FAILED, CANCELLED, SKIPPED)

# batch/v1 Job condition types.

# Events (on the workload).
EVENT_HOOK_STARTED = "LifecycleHookStarted"
EVENT_HOOK_STARTED_MESSAGE = 'Started lifecycle hook "{hook}" at progress point {point}: created Job "{job}"'
EVENT_HOOK_SUCCEEDED = "LifecycleHookSucceeded"
EVENT_HOOK_SUCCEEDED_MESSAGE = 'Lifecycle hook "{hook}" succeeded (Job "{job}")'
EVENT_HOOK_FAILED = cond.HOOK_FAILED
EVENT_HOOK_FAILED_MESSAGE = 'Lifecycle hook "{hook}" failed: {detail}; failurePolicy {policy}'
EVENT_HOOK_CANCELLED = "LifecycleHookCancelled"
EVENT_HOOK_CANCELLED_MESSAGE = 'Cancelled lifecycle hook "{hook}" (Job "{job}"): {why}'
EVENT_HOOK_SKIPPED = "LifecycleHookSkipped"
EVENT_HOOK_SKIPPED_MESSAGE = ('Lifecycle hook "{hook}" was added after its progress point {point} had passed; '
                              "it does not run for revision {revision}")

JOB_FAILED_DETAIL = 'Job "{job}" failed: {reason}: {message}'
JOB_DELETED_DETAIL = 'Job "{job}" was deleted before it finished'
WHY_ROLLOVER = "a newer revision is rolling out"
WHY_ABORTED = 'lifecycle hook "{hook}" aborted the rollout'
WHY_REMOVED = "the hook was removed from the spec"

MAX_NAME = 63
NAME_HASH = 8


def job_name(owner: str, revision: int, hook: str) -> str:
    """The deterministic Job name of (owner, revision, hook): ``<owner>-<revision>-<hook>``, shortened
    with a hash suffix when longer than 63 characters (so the Job's pod labels stay valid)."""
    name = f"{owner}-{revision}-{hook}"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:NAME_HASH]
    return f"{name[: MAX_NAME - NAME_HASH - 1].rstrip('-.')}-{digest}"


@dataclass
class Revision:
    """The new revision of a workload, as the hook sequence needs it."""

    owner: dict[str, Any]            # the Deployment, StatefulSet or DaemonSet
    target: dict[str, Any]           # the ReplicaSet or ControllerRevision (owns the hook Jobs)
    number: int                      # the revision number
    hash_label: tuple[str, str]      # the revision's hash label, copied onto hook Jobs
    previous: str = ""               # "namespace/name" of the revision rolled out from ("" for the first)
    rollback: bool = False           # the revision existed before (a return to an older template)


@dataclass
class Gate:
    """What the workload controller may do after the hooks were looked at."""

    cap: int | None = None           # new replicas must not exceed this (the next pending point)
    frozen: bool = False             # no scaling at all (a hook group runs, or the rollout aborted)
    aborted: bool = False
    running: bool = False
    progressed: bool = False         # a hook group finished now (counts as progress for the deadline)
    retry: bool = False              # something failed that only a retry fixes (Job creation)
    condition: tuple[str, str, str] | None = None  # LifecycleHooks (status, reason, message)
    abort_message: str = ""
    target: dict[str, Any] | None = None  # the revision object as last written


@dataclass
class _State:
    revision: int
    type: str
    from_object: str
    to_object: str
    hooks: dict[str, dict[str, Any]] = field(default_factory=dict)
    aborted: str = ""
    completed: bool = False

    def to_json(self) -> str:
        body: dict[str, Any] = {"revision": self.revision, "type": self.type, "from": self.from_object,
                                "to": self.to_object, "hooks": self.hooks}
        if self.aborted:
            body["aborted"] = self.aborted
        if self.completed:
            body["completed"] = True
        return json.dumps(body, sort_keys=True, separators=(",", ":"))


def read_state(target: dict[str, Any]) -> dict[str, Any] | None:
    """The recorded hook sequence of a revision object (None when there is none or it is unreadable)."""
    raw = annotations(target).get(HOOK_STATE_ANNOTATION)
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _load(target: dict[str, Any]) -> _State | None:
    data = read_state(target)
    if data is None:
        return None
    try:
        return _State(int(data["revision"]), str(data.get("type", ROLLOUT)), str(data.get("from", "")),
                      str(data.get("to", "")), dict(data.get("hooks") or {}), str(data.get("aborted", "")),
                      bool(data.get("completed", False)))
    except (KeyError, TypeError, ValueError):
        return None


def _job_condition(job: dict[str, Any], condition_type: str) -> dict[str, Any] | None:
    for condition in (job.get("status") or {}).get("conditions") or []:
        if condition.get("type") == condition_type and condition.get("status") == CONDITION_TRUE:
            return condition  # type: ignore[no-any-return]
    return None


def _inject_env(pod_spec: dict[str, Any], env: dict[str, str]) -> None:
    for key in ("initContainers", "containers"):
        for container in pod_spec.get(key) or []:
            if not isinstance(container, dict):
                continue
            present = {e.get("name") for e in container.get("env") or [] if isinstance(e, dict)}
            extra = [{"name": k, "value": v} for k, v in env.items() if k not in present]
            if extra:
                container["env"] = list(container.get("env") or []) + extra


class HookRunner:
    """Runs the hooks of one workload kind (see the module docstring)."""

    def __init__(self, client: Client, events: EventRecorder) -> None:
        self.client = client
        self.events = events

    # -- the sequence -------------------------------------------------------------------------------

    def evaluate(self, rev: Revision, replicas: int, available: int, *, reachable: int | None = None,
                 unreachable_why: str = "", fresh: bool = True) -> Gate:
        """Advance the hook sequence of ``rev`` given ``available`` new available replicas out of
        ``replicas``; ``reachable`` is how many new replicas the strategy can update at most (a
        StatefulSet partition limits it). Creates, reads, cancels and deletes hook Jobs as needed and
        records the sequence on the revision object. ``fresh``: the revision starts rolling out now
        (it was just created, or an older one was brought back)."""
        hooks = {str(h.get("name")): h for h in lifecycle_hooks(rev.owner) if h.get("name")}
        state = _load(rev.target)
        if state is None or state.revision != rev.number:
            if not hooks and state is None:
                return Gate(target=rev.target)
            # A revision that starts now runs every hook; one found without a record (hooks added to a
            # workload that had none) treats them as added late: points already passed do not run.
            # Creating a workload (its first revision) is not an update: seed 004's hooks run when an update
            # reaches its points, so revision 1 runs none (features/behaviors.yaml RH_CREATE_001's decision).
            creation = rev.number == 1 and not rev.rollback
            phases = {name: {"phase": SKIPPED if creation else PENDING} for name in hooks} if fresh else {}
            state = _State(rev.number, ROLLBACK if rev.rollback else ROLLOUT, rev.previous,
                           f"{meta(rev.target).get('namespace', '')}/{meta(rev.target)['name']}",
                           phases, completed=creation or (not fresh and available >= replicas))
        before = state.to_json()
        gate = self._run(rev, state, hooks, replicas, available,
                         replicas if reachable is None else reachable, unreachable_why)
        gate.target = rev.target
        if state.to_json() != before:
            gate.target = self._save(rev.target, state)
        return gate

    def _run(self, rev: Revision, state: _State, hooks: dict[str, dict[str, Any]], replicas: int,
             available: int, reachable: int, unreachable_why: str) -> Gate:
        self._sync_hook_set(rev, state, hooks, replicas, available)
        self._enforce_retention(rev, state, hooks)
        if state.aborted:
            return self._aborted_gate(state)
        live = [(name, progress_point(h)) for name, h in hooks.items() if progress_point(h) is not None]
        progressed = False
        for group in groups(live, replicas):
            progressed = self._refresh(rev, state, hooks, group) or progressed
            if state.aborted:
                self._cancel_group(rev, state, group, WHY_ABORTED.format(hook=state.aborted))
                self._enforce_retention(rev, state, hooks)
                return self._aborted_gate(state)
            phases = [state.hooks[n]["phase"] for n in group.names]
            if all(p in FINISHED for p in phases):
                continue
            point = group.point
            names = ", ".join(sorted(group.names))
            if point.count > available:
                if point.count > reachable:
                    message = cond.HOOK_UNREACHABLE_MESSAGE.format(
                        point=point.text, count=point.count, replicas=replicas, reachable=reachable,
                        why=unreachable_why or "the update strategy", hooks=names)
                    return Gate(cap=point.count, progressed=progressed,
                                condition=(CONDITION_FALSE, cond.HOOK_UNREACHABLE, message))
                message = cond.HOOK_WAITING_MESSAGE.format(point=point.text, count=point.count, replicas=replicas,
                                                           hooks=names)
                return Gate(cap=point.count, progressed=progressed,
                            condition=(CONDITION_TRUE, cond.HOOK_WAITING, message))
            failure = self._start(rev, state, hooks, group)
            if failure is not None:
                return Gate(frozen=True, retry=True, progressed=progressed,
                            condition=(CONDITION_FALSE, cond.HOOK_JOB_FAILED_CREATE, failure))
            message = cond.HOOK_RUNNING_MESSAGE.format(point=point.text, count=available, replicas=replicas,
                                                       hooks=names)
            return Gate(frozen=True, running=True, progressed=progressed,
                        condition=(CONDITION_TRUE, cond.HOOK_RUNNING, message))
        if available >= replicas and not state.completed:
            state.completed = True
        if not hooks and not state.hooks:
            return Gate(progressed=progressed)
        message = cond.HOOKS_COMPLETED_MESSAGE.format(revision=rev.number)
        return Gate(progressed=progressed, condition=(CONDITION_TRUE, cond.HOOKS_COMPLETED, message))

    def _aborted_gate(self, state: _State) -> Gate:
        entry = state.hooks.get(state.aborted) or {}
        message = cond.HOOK_FAILED_MESSAGE.format(hook=state.aborted, point=entry.get("point", ""),
                                                  detail=entry.get("detail", ""), revision=state.revision)
        return Gate(frozen=True, aborted=True, condition=(CONDITION_FALSE, cond.HOOK_FAILED, message),
                    abort_message=message)

    def _sync_hook_set(self, rev: Revision, state: _State, hooks: dict[str, dict[str, Any]], replicas: int,
                       available: int) -> None:
        """Hooks added to the spec since the revision started: pending unless their point has passed;
        hooks removed from the spec: cancelled if running, forgotten otherwise."""
        for name, hook in hooks.items():
            if name in state.hooks or progress_point(hook) is None:
                continue
            point = resolve(progress_point(hook), replicas)
            if state.completed or point.count < available:
                state.hooks[name] = {"phase": SKIPPED, "point": point.text}
                self.events.event(rev.owner, NORMAL, EVENT_HOOK_SKIPPED, EVENT_HOOK_SKIPPED_MESSAGE.format(
                    hook=name, point=point.text, revision=rev.number))
            else:
                state.hooks[name] = {"phase": PENDING}
        for name in [n for n in state.hooks if n not in hooks]:
            entry = state.hooks[name]
            if entry["phase"] == RUNNING:
                self._cancel(rev, state, name, WHY_REMOVED)
            if entry["phase"] in (PENDING, SKIPPED):
                del state.hooks[name]

    def _refresh(self, rev: Revision, state: _State, hooks: dict[str, dict[str, Any]], group: Group) -> bool:
        """Read the Jobs of the group's running hooks and record their outcome; whether one finished."""
        finished = False
        namespace = meta(rev.owner).get("namespace")
        for name in group.names:
            entry = state.hooks[name]
            if entry["phase"] != RUNNING:
                continue
            job = find_in(self.client, BATCH_V1, JOB, entry["job"], namespace)
            if job is not None and not self._ours(job, rev):
                job = None
            detail = ""
            if job is None:
                detail = JOB_DELETED_DETAIL.format(job=entry["job"])
            elif _job_condition(job, JOB_COMPLETE) is not None:
                entry["phase"] = SUCCEEDED
                finished = True
                self.events.event(rev.owner, NORMAL, EVENT_HOOK_SUCCEEDED,
                                  EVENT_HOOK_SUCCEEDED_MESSAGE.format(hook=name, job=entry["job"]))
                continue
            else:
                failed = _job_condition(job, JOB_FAILED)
                if failed is None:
                    continue
                detail = JOB_FAILED_DETAIL.format(job=entry["job"], reason=failed.get("reason", ""),
                                                  message=failed.get("message", ""))
            policy = failure_policy(hooks.get(name) or {})
            entry.update(phase=FAILED, detail=detail)
            finished = True
            if job is None:
                entry["deleted"] = True
            self.events.event(rev.owner, WARNING, EVENT_HOOK_FAILED,
                              EVENT_HOOK_FAILED_MESSAGE.format(hook=name, detail=detail, policy=policy))
            if policy != IGNORE and not state.aborted:
                state.aborted = name
        return finished

    def _start(self, rev: Revision, state: _State, hooks: dict[str, dict[str, Any]], group: Group) -> str | None:
        """Create the Jobs of the group's pending hooks; the condition message of a creation that failed."""
        for name in sorted(group.names):
            entry = state.hooks[name]
            if entry["phase"] != PENDING:
                continue
            job = self._job(rev, state, name, hooks[name])
            job_ref = job["metadata"]["name"]
            try:
                self.client.create(job)
            except ApiError as err:
                existing = find_in(self.client, BATCH_V1, JOB, job_ref, meta(rev.owner).get("namespace")) \
                    if err.code == 409 else None
                if existing is None or not self._ours(existing, rev):
                    message = cond.HOOK_JOB_FAILED_CREATE_MESSAGE.format(job=job_ref, hook=name, error=err.message)
                    self.events.event(rev.owner, WARNING, FAILED_CREATE, message)
                    return message
            entry.update(phase=RUNNING, job=job_ref, point=group.point.text)
            self.events.event(rev.owner, NORMAL, EVENT_HOOK_STARTED, EVENT_HOOK_STARTED_MESSAGE.format(
                hook=name, point=group.point.text, job=job_ref))
        return None

    def _job(self, rev: Revision, state: _State, name: str, hook: dict[str, Any]) -> dict[str, Any]:
        owner_meta = meta(rev.owner)
        job_spec = copy.deepcopy(hook.get("jobSpec") or {})
        template = job_spec.setdefault("template", {})
        pod_spec = template.setdefault("spec", {})
        _inject_env(pod_spec, {ENV_FROM_OBJECT: state.from_object, ENV_TO_OBJECT: state.to_object,
                               ENV_TYPE: state.type})
        labels = {HOOK_OWNER_KIND_LABEL: rev.owner["kind"], HOOK_OWNER_NAME_LABEL: owner_meta["name"],
                  HOOK_REVISION_LABEL: str(rev.number), HOOK_NAME_LABEL: name, rev.hash_label[0]: rev.hash_label[1]}
        return {
            "apiVersion": BATCH_V1, "kind": JOB,
            "metadata": {"name": job_name(owner_meta["name"], rev.number, name),
                         "namespace": owner_meta.get("namespace"), "labels": labels,
                         "ownerReferences": [owner_ref(rev.target)]},
            "spec": job_spec,
        }

    @staticmethod
    def _ours(job: dict[str, Any], rev: Revision) -> bool:
        """A Job of this revision (a foreign Job with the same name is not a hook Job)."""
        labels = meta(job).get("labels") or {}
        return labels.get(HOOK_REVISION_LABEL) == str(rev.number) and any(
            r.get("uid") == meta(rev.target).get("uid") for r in meta(job).get("ownerReferences") or [])

    # -- cancellation and retention --------------------------------------------------------------------

    def _cancel_group(self, rev: Revision, state: _State, group: Group, why: str) -> None:
        for name in group.names:
            if state.hooks[name]["phase"] == RUNNING:
                self._cancel(rev, state, name, why)

    def _cancel(self, rev: Revision, state: _State, name: str, why: str) -> None:
        """Suspend a running hook's Job (its pods go away) and record it as cancelled."""
        entry = state.hooks[name]
        job_ref = entry.get("job", "")
        try:
            self.client.patch(BATCH_V1, JOB, job_ref, {"spec": {"suspend": True}},
                              namespace=meta(rev.owner).get("namespace"), patch_type=MERGE)
        except ApiError as err:
            if err.code != 404:
                raise
        entry.update(phase=CANCELLED, detail=why)
        self.events.event(rev.owner, NORMAL, EVENT_HOOK_CANCELLED,
                          EVENT_HOOK_CANCELLED_MESSAGE.format(hook=name, job=job_ref, why=why))

    def cancel_revision(self, owner: dict[str, Any], target: dict[str, Any]) -> dict[str, Any] | None:
        """Rollover: cancel the running hooks of an older revision object; the object as written (None
        when nothing changed)."""
        state = _load(target)
        if state is None or not any(e.get("phase") in (RUNNING, PENDING) for e in state.hooks.values()):
            return None
        rev = Revision(owner, target, state.revision, ("", ""))
        for name, entry in state.hooks.items():
            if entry.get("phase") == RUNNING:
                self._cancel(rev, state, name, WHY_ROLLOVER)
            elif entry.get("phase") == PENDING:
                entry.update(phase=CANCELLED, detail=WHY_ROLLOVER)
        hooks = {str(h.get("name")): h for h in lifecycle_hooks(owner) if h.get("name")}
        self._enforce_retention(rev, state, hooks)
        return self._save(target, state)

    def _enforce_retention(self, rev: Revision, state: _State, hooks: dict[str, dict[str, Any]]) -> None:
        """Delete the finished Jobs their retainPolicy does not keep (once; recorded as ``removed``)."""
        namespace = meta(rev.owner).get("namespace")
        for name, entry in state.hooks.items():
            if entry.get("phase") not in (SUCCEEDED, FAILED, CANCELLED) or entry.get("removed") or not entry.get("job"):
                continue
            policy = retain_policy(hooks.get(name) or {})
            keep = not (policy == NEVER or (policy == ON_FAILURE and entry["phase"] == SUCCEEDED))
            if keep or entry.get("deleted"):
                continue
            try:
                self.client.delete(BATCH_V1, JOB, entry["job"], namespace, propagation_policy="Background")
            except ApiError as err:
                if err.code != 404:
                    raise
            entry["removed"] = True

    def _save(self, target: dict[str, Any], state: _State) -> dict[str, Any]:
        body = {"metadata": {"annotations": {HOOK_STATE_ANNOTATION: state.to_json()}}}
        return self.client.patch(target["apiVersion"], target["kind"], meta(target)["name"], body,
                                 namespace=meta(target).get("namespace"), patch_type=MERGE)


def job_mapper(owner_kind: str) -> Any:
    """A watch mapper from a hook Job to its workload's key (by the Job's owner labels)."""
    def mapper(_event: str, job: dict[str, Any]) -> list[Request]:
        labels = meta(job).get("labels") or {}
        if labels.get(HOOK_OWNER_KIND_LABEL) != owner_kind or not labels.get(HOOK_OWNER_NAME_LABEL):
            return []
        return [Request(meta(job).get("namespace") or "", labels[HOOK_OWNER_NAME_LABEL])]

    return mapper


class HookedController(Controller):
    """What the workload controllers (Deployment, StatefulSet, DaemonSet) share around their hooks: the
    client, an event recorder under the controller's ``component`` name, the :class:`HookRunner`, and the
    watch of the hook Jobs run for ``kind``."""

    kind = ""
    component = ""

    def __init__(self, client: Client) -> None:
        super().__init__()
        self.client = client
        self.events = EventRecorder(client, self.component)
        self.hooks = HookRunner(client, self.events)

    def watch_hook_jobs(self) -> None:
        """Watch the hook Jobs of this controller's kind (by their owner-kind label), to their workload."""
        self.watch(self.client, BATCH_V1, JOB, job_mapper(self.kind),
                   label_selector=f"{HOOK_OWNER_KIND_LABEL}={self.kind}")

    def delete_pod(self, pod: dict[str, Any]) -> bool:
        """Delete one of the workload's pods; False when it was gone already (a 404)."""
        try:
            self.client.delete(V1, POD, meta(pod)["name"], meta(pod).get("namespace"))
        except ApiError as err:
            if err.code != 404:
                raise
            return False
        return True


def requeue_for(gate: Gate, wait: float | None) -> Result | None:
    """The end of a reconcile that ran the hooks: again at once when something only a retry fixes failed,
    else after ``wait`` seconds when a hook or readiness is awaited."""
    if gate.retry:
        return Result(requeue=True)
    if wait is not None:
        return Result(requeue_after=wait)
    return None

