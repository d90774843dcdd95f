"""What the hook Jobs a rollout leaves behind say, read from the audit trail.

Any implementation of seed 004 leaves the same evidence: one Job per (owner, revision, hook), owned by
the revision object (ReplicaSet or ControllerRevision) and labelled with the revision and the hook
(DESIGN.md "Rollout decisions"), created when the hook starts, finished (``Complete`` or ``Failed``),
suspended when cancelled, or deleted. :class:`HookLedger` follows those Jobs record by record, so a step
knows at every recorded state which hooks of a revision run, which finished, which must still run and at
what point (:mod:`harness.spec.rollout`), without reading anything a particular controller keeps for
itself.
"""

from __future__ import annotations

from dataclasses import (
    dataclass,
    field,
)
from typing import Any

from harness.kube.names.rollout_hooks import DEFAULT_FAILURE_POLICY, HOOK_NAME_LABEL, HOOK_REVISION_LABEL, IGNORE
from harness.spec.rollout import (
    Point,
    group_of,
    hook_groups,
    hook_point,
    next_point,
    resolve_point,
    runs_when_added,
)

SUCCEEDED = "Succeeded"
FAILED = "Failed"
CANCELLED = "Cancelled"
DELETED = "Deleted"
# A revision: (uid of its ReplicaSet or ControllerRevision, its revision number as text).
Key = tuple[str, str]


def outcome(job: dict[str, Any]) -> str | None:
    """How a hook Job ended: Succeeded, Failed, Cancelled (suspended), or None while it runs."""
    for condition in (job.get("status") or {}).get("conditions") or []:
        if condition.get("status") == "True" and condition.get("type") in ("Complete", "Failed"):
            return SUCCEEDED if condition["type"] == "Complete" else FAILED
    if (job.get("spec") or {}).get("suspend") is True:
        return CANCELLED
    return None


@dataclass
class HookRun:
    """One hook Job as recorded."""

    job: str
    hook: str
    key: Key
    created: int
    outcome: str | None = None


@dataclass
class HookLedger:
    """The hook runs of one workload and, per revision, when each hook appeared in its spec."""

    runs: dict[str, HookRun] = field(default_factory=dict)
    # Per revision: hook -> None (in the spec when the revision started) or the new available replicas
    # when it was added (it runs only if its point had not been passed then).
    arrivals: dict[Key, dict[str, tuple[int, bool] | None]] = field(default_factory=dict)

    def see_job(self, record: dict[str, Any]) -> HookRun | None:
        """Take a recorded write of a hook Job into account; the run it concerns."""
        job = record.get("new")
        run = self.runs.get(record["name"])
        if job is None:
            if run is not None and run.outcome is None:
                run.outcome = DELETED
            return run
        if run is None or record["verb"] == "create":
            labels = job["metadata"].get("labels") or {}
            owners = job["metadata"].get("ownerReferences") or [{}]
            run = HookRun(record["name"], str(labels.get(HOOK_NAME_LABEL, "")),
                          (str(owners[0].get("uid", "")), str(labels.get(HOOK_REVISION_LABEL, ""))), record["seq"])
            self.runs[record["name"]] = run
        if run.outcome is None:
            run.outcome = outcome(job)
        return run

    def see_spec(self, key: Key | None, hooks: list[dict[str, Any]], replicas: int, available: int) -> None:
        """Note which hooks the workload's spec names while ``key`` is its newest revision."""
        if key is None:
            return
        names = [str(h.get("name")) for h in hooks]
        if key not in self.arrivals:
            self.arrivals[key] = dict.fromkeys(names)
            return
        for name in names:
            self.arrivals[key].setdefault(name, (available, available >= replicas))

    def due(self, key: Key | None, hooks: list[dict[str, Any]], replicas: int) -> list[dict[str, Any]]:
        """The hooks of the spec that must run for revision ``key``: those present when it started, and
        those added later whose point had not been passed (DESIGN.md: not run retroactively)."""
        if key is None:
            return []
        arrivals = self.arrivals.get(key, {})
        due = []
        for hook in hooks:
            arrived = arrivals.get(str(hook.get("name")))
            if arrived is None or runs_when_added(resolve_point(hook_point(hook), replicas), arrived[0],
                                                  revision_complete=arrived[1]):
                due.append(hook)
        return due

    def of(self, key: Key | None) -> list[HookRun]:
        """The runs of revision ``key`` in creation order."""
        return sorted((r for r in self.runs.values() if r.key == key), key=lambda r: r.created)

    def running(self, key: Key | None) -> list[str]:
        """The hooks of revision ``key`` whose Job runs."""
        return sorted(r.hook for r in self.of(key) if r.outcome is None)

    def finished(self, key: Key | None, hooks: list[dict[str, Any]]) -> set[str]:
        """The hooks of revision ``key`` after which the rollout may go on: succeeded, or failed (or
        deleted before finishing) with ``failurePolicy: Ignore``."""
        policies = {str(h.get("name")): h.get("failurePolicy") or DEFAULT_FAILURE_POLICY for h in hooks}
        done = set()
        for run in self.of(key):
            if run.outcome == SUCCEEDED or (run.outcome in (FAILED, DELETED) and policies.get(run.hook) == IGNORE):
                done.add(run.hook)
        return done

    def pending(self, key: Key | None, hooks: list[dict[str, Any]], replicas: int) -> Point | None:
        """The point the new revision may not go beyond until its hooks finish; None: no hook holds it."""
        due = self.due(key, hooks, replicas)
        return next_point(due, replicas, self.finished(key, due))

    def start_problems(self, run: HookRun, hooks: list[dict[str, Any]], replicas: int, available: int) -> list[str]:
        """What is wrong with starting ``run`` now (seed 004 "Algorithm" steps 1-2): a hook that is not due,
        a point not reached, a hook of another point still running, or an earlier point not finished."""
        due = self.due(run.key, hooks, replicas)
        groups = hook_groups(due, replicas)
        index = group_of(groups, run.hook)
        if index is None:
            return [f"the hook {run.hook} started although it is not due for this revision"]
        problems = []
        point = groups[index].point
        if available < point.count:
            problems.append(f"the hook {run.hook} started with {available} new replicas available, before its "
                            f"point {point.text} ({point.count})")
        others = [r for r in self.of(run.key) if r is not run and r.outcome is None]
        apart = sorted(r.hook for r in others if group_of(groups, r.hook) != index)
        if apart:
            problems.append(f"the hook {run.hook} started while the hooks {apart} of another point ran")
        finished = self.finished(run.key, due)
        earlier = sorted(h for g in groups[:index] for h in g.hooks if h not in finished)
        if earlier:
            problems.append(f"the hook {run.hook} started before the hooks {earlier} of an earlier point finished")
        return problems
