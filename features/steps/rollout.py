"""Sentences about rolling out Deployments and the lifecycle hooks of seed 004.

A Deployment here runs pause containers that become Ready 5 seconds after they start (the kubelet's
``harness.test/ready-delay``), so each step of a rollout is a distinct recorded state. Hooks are Jobs
whose outcome and duration come from the Job simulator's knobs (``harness.test/job-result``,
``harness.test/job-duration``). The hook Job of (Deployment, revision, hook) is named
``<deployment>-<revision>-<hook>``.

What happened during a rollout is read back from the audit trail: every recorded state of the
Deployment's ReplicaSets and hook Jobs since the scenario's action, in order. That is how "the hooks ran
in this order" knows how many new replicas were available when each hook Job was created, and how the
invariants of DESIGN.md are checked at every recorded state rather than only at the end.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import parse
from pytest_bdd import (
    given,
    parsers,
    then,
    when,
)

from features.steps.context import (
    TYPES,
    ScenarioContext,
    sentence,
)
from features.steps.hook_jobs import (
    HookLedger,
    Key,
)
from features.steps.objects import PAUSE_IMAGE
from harness.kube.client import (
    JSON_PATCH,
    MERGE,
)
from harness.kube.names.apps import (
    CONTROLLER_HASH_LABEL,
    CONTROLLER_REVISION_HASH_LABEL,
    POD_TEMPLATE_HASH_LABEL,
    REVISION_ANNOTATION,
    REVISION_HISTORY_ANNOTATION,
)
from harness.kube.names.core import SYSTEM_USER
from harness.kube.names.faults import (
    INTERNAL_ERROR,
)
from harness.kube.names.knobs import JOB_DURATION_ANNOTATION, JOB_RESULT_ANNOTATION, READY_DELAY_ANNOTATION
from harness.kube.names.rollout_hooks import (
    HOOK_NAME_LABEL,
    HOOK_OWNER_KIND_LABEL,
    HOOK_OWNER_NAME_LABEL,
    HOOK_REVISION_LABEL,
    HOOK_RUNNING_REASON,
    LIFECYCLE_HOOKS_CONDITION,
)
from harness.spec.rollout import (
    daemon_set_bounds,
    deployment_bounds,
    revision_template,
    stateful_set_bounds,
)
from harness.targets.profiles import (
    UNDER_TEST_USERS,
    reference_controllers,
)

POD_READY_DELAY = "5s"
HOOK_IMAGE = "registry.k8s.io/busybox:1.36"
ROLLOUT_SECONDS = 600.0
REPLICA_SETS = "replicasets.apps"
JOBS = "jobs.batch"
DEPLOYMENTS = "deployments.apps"


# -- building ----------------------------------------------------------------------------------------


def deployment_manifest(ctx: ScenarioContext, ref: str, replicas: int, strategy: dict[str, Any]) -> dict[str, Any]:
    """A Deployment of pause containers labelled ``app=<name>`` whose Pods become Ready after 5 s."""
    target = ctx.ref("Deployment", ref)
    labels = {"app": target.name}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": target.name, "namespace": target.namespace},
        "spec": {
            "replicas": replicas, "strategy": strategy, "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels, "annotations": {READY_DELAY_ANNOTATION: POD_READY_DELAY}},
                         "spec": {"containers": [{"name": "app", "image": PAUSE_IMAGE}]}},
        },
    }


def _int_or_percent(text: str) -> int | str:
    return text if text.endswith("%") else int(text)


def hook_manifest(row: dict[str, str]) -> dict[str, Any]:
    """A lifecycle hook from a table row: hook, point, and optionally trigger, policy, retain, result, duration,
    env. Without a trigger column the hook has no ``trigger.type``: the API defaults it (seed 004: "Default is
    ProgressAvailable"), so every scenario relies on that default."""
    annotations = {JOB_RESULT_ANNOTATION: row.get("result") or "Succeeded",
                   JOB_DURATION_ANNOTATION: row.get("duration") or "10s"}
    container: dict[str, Any] = {"name": "hook", "image": HOOK_IMAGE}
    if row.get("env"):
        name, _, value = row["env"].partition("=")
        container["env"] = [{"name": name, "value": value}]
    hook: dict[str, Any] = {
        "name": row["hook"],
        "trigger": {"progressAvailableParams": {"progressPoint": _int_or_percent(row["point"])}},
        "jobSpec": {"backoffLimit": 0, "template": {
            "metadata": {"annotations": annotations},
            "spec": {"restartPolicy": "Never", "containers": [container]}}},
    }
    if row.get("trigger"):
        hook["trigger"]["type"] = row["trigger"]
    if row.get("policy"):
        hook["failurePolicy"] = row["policy"]
    if row.get("retain"):
        hook["retainPolicy"] = row["retain"]
    return hook


def _rows(datatable: list[list[str]]) -> list[dict[str, str]]:
    header = [h.strip() for h in datatable[0]]
    return [dict(zip(header, (c.strip() for c in row))) for row in datatable[1:]]


def _replica_sets(ctx: ScenarioContext, name: str, namespace: str) -> list[dict[str, Any]]:
    return [rs for rs in ctx.client.list("apps/v1", "ReplicaSet", namespace)["items"]
            if any(r.get("kind") == "Deployment" and r.get("name") == name
                   for r in rs["metadata"].get("ownerReferences") or [])]


def _revision(rs: dict[str, Any]) -> int:
    return int((rs["metadata"].get("annotations") or {}).get(REVISION_ANNOTATION, "0"))


def rolled_out(ctx: ScenarioContext, ref: str) -> bool:
    """The Deployment's rollout is complete: every replica updated and available, no old ones, and no
    hook running."""
    target = ctx.ref("Deployment", ref)
    deployment = ctx.find(target)
    if deployment is None:
        return False
    want = deployment["spec"].get("replicas", 1)
    status = deployment.get("status") or {}
    counts = [status.get(k, 0) for k in ("updatedReplicas", "replicas", "availableReplicas")]
    if counts != [want] * 3 or status.get("observedGeneration", 0) < deployment["metadata"]["generation"]:
        return False
    conditions = {c["type"]: c for c in status.get("conditions") or []}
    hooks = conditions.get(LIFECYCLE_HOOKS_CONDITION)
    return hooks is None or hooks.get("reason") != HOOK_RUNNING_REASON


def _create_rolled_out(ctx: ScenarioContext, ref: str, manifest: dict[str, Any]) -> None:
    ctx.setup(lambda: ctx.client.create(manifest))
    assert ctx.wait_until(lambda: rolled_out(ctx, ref), ROLLOUT_SECONDS), (
        f"the Deployment {ref} did not roll out: {ctx.find(ctx.ref('Deployment', ref))}")


# -- Given -------------------------------------------------------------------------------------------


@given(sentence('a Deployment "{ref:Q}" with {replicas:Int} replicas, maxSurge "{surge:Q}" and maxUnavailable '
                '"{unavailable:Q}" that has rolled out'))
def given_rolled_out(ctx: ScenarioContext, ref: str, replicas: int, surge: str, unavailable: str) -> None:
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": _int_or_percent(surge),
                                                           "maxUnavailable": _int_or_percent(unavailable)}}
    _create_rolled_out(ctx, ref, deployment_manifest(ctx, ref, replicas, strategy))


@given(sentence('a Deployment "{ref:Q}" with {replicas:Int} replicas and the Recreate strategy that has rolled out'))
def given_recreate_rolled_out(ctx: ScenarioContext, ref: str, replicas: int) -> None:
    _create_rolled_out(ctx, ref, deployment_manifest(ctx, ref, replicas, {"type": "Recreate"}))


@given(sentence('a Deployment "{ref:Q}" with {replicas:Int} replicas created with these lifecycle hooks that has '
                'rolled out:'))
def given_created_with_hooks(ctx: ScenarioContext, ref: str, replicas: int, datatable: list[list[str]]) -> None:
    manifest = deployment_manifest(ctx, ref, replicas, {"type": "RollingUpdate",
                                                        "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}})
    manifest["spec"]["lifecycleHooks"] = [hook_manifest(row) for row in _rows(datatable)]
    _create_rolled_out(ctx, ref, manifest)


@given(sentence('the Deployment "{ref:Q}" has the lifecycle hooks:'))
def given_hooks(ctx: ScenarioContext, ref: str, datatable: list[list[str]]) -> None:
    _set_spec(ctx, ref, {"lifecycleHooks": [hook_manifest(row) for row in _rows(datatable)]})


@given(sentence('the Deployment "{ref:Q}" has a progress deadline of {seconds:Int} seconds'))
def given_deadline(ctx: ScenarioContext, ref: str, seconds: int) -> None:
    _set_spec(ctx, ref, {"progressDeadlineSeconds": seconds})


@given(sentence('the Deployment "{ref:Q}" keeps a revision history of {limit:Int}'))
def given_history_limit(ctx: ScenarioContext, ref: str, limit: int) -> None:
    _set_spec(ctx, ref, {"revisionHistoryLimit": limit})


def _set_spec(ctx: ScenarioContext, ref: str, fields: dict[str, Any]) -> None:
    """A Given: merge ``fields`` into the Deployment's spec, and let the world settle."""
    target = ctx.ref("Deployment", ref)
    ctx.setup(lambda: ctx.client.patch("apps/v1", "Deployment", target.name, {"spec": fields},
                                       namespace=target.namespace, patch_type=MERGE))


@given(sentence('the Deployment "{ref:Q}" has been updated to the image "{image:Q}" and has rolled out'))
def given_updated(ctx: ScenarioContext, ref: str, image: str) -> None:
    ctx.setup(lambda: _set_image(ctx, ref, image))
    assert ctx.wait_until(lambda: rolled_out(ctx, ref), ROLLOUT_SECONDS), f"the Deployment {ref} did not roll out"


@given(sentence('a Job "{ref:Q}" that is not a hook Job'))
def given_foreign_job(ctx: ScenarioContext, ref: str) -> None:
    target = ctx.ref("Job", ref)
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": target.name, "namespace": target.namespace},
           "spec": {"template": {"metadata": {"annotations": {JOB_DURATION_ANNOTATION: "1h"}},
                                 "spec": {"restartPolicy": "Never",
                                          "containers": [{"name": "other", "image": HOOK_IMAGE}]}}}}
    ctx.setup(lambda: ctx.client.create(job))


# -- When --------------------------------------------------------------------------------------------


def _set_image(ctx: ScenarioContext, ref: str, image: str) -> Any:
    target = ctx.ref("Deployment", ref)
    patch = [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": image}]
    return ctx.client.patch("apps/v1", "Deployment", target.name, patch, namespace=target.namespace,
                            patch_type=JSON_PATCH)


@when(sentence('the Deployment "{ref:Q}" is updated to the image "{image:Q}"'))
def when_updated(ctx: ScenarioContext, ref: str, image: str) -> None:
    ctx.act(lambda: _set_image(ctx, ref, image))


@when(sentence('the Deployment "{ref:Q}" is rolled back to revision {revision:Int}'))
def when_rolled_back(ctx: ScenarioContext, ref: str, revision: int) -> None:
    """What ``kubectl rollout undo --to-revision`` does: the ReplicaSet's template, without its hash label,
    becomes the Deployment's."""
    target = ctx.ref("Deployment", ref)
    found = [rs for rs in _replica_sets(ctx, target.name, str(target.namespace)) if _revision(rs) == revision]
    assert found, f"the Deployment {ref} has no ReplicaSet of revision {revision}"
    template = json.loads(json.dumps(found[0]["spec"]["template"]))
    template["metadata"]["labels"].pop(POD_TEMPLATE_HASH_LABEL, None)
    patch = [{"op": "replace", "path": "/spec/template", "value": template}]
    ctx.act(lambda: ctx.client.patch("apps/v1", "Deployment", target.name, patch, namespace=target.namespace,
                                     patch_type=JSON_PATCH))


@when(sentence('the Deployment "{ref:Q}" is changed to {replicas:Int} replicas mid-rollout'))
def when_scaled(ctx: ScenarioContext, ref: str, replicas: int) -> None:
    target = ctx.ref("Deployment", ref)
    ctx.act(lambda: ctx.client.patch("apps/v1", "Deployment", target.name, {"spec": {"replicas": replicas}},
                                     namespace=target.namespace, patch_type=MERGE))


@when(sentence('the lifecycle hooks of the Deployment "{ref:Q}" become:'))
def when_hooks_replaced(ctx: ScenarioContext, ref: str, datatable: list[list[str]]) -> None:
    target = ctx.ref("Deployment", ref)
    hooks = [hook_manifest(row) for row in _rows(datatable)]
    ctx.act(lambda: ctx.client.patch("apps/v1", "Deployment", target.name, {"spec": {"lifecycleHooks": hooks}},
                                     namespace=target.namespace, patch_type=MERGE))


@when(sentence('a Deployment "{ref:Q}" with these lifecycle hooks is created:'))
def when_created_with_hooks(ctx: ScenarioContext, ref: str, datatable: list[list[str]]) -> None:
    manifest = deployment_manifest(ctx, ref, 3, {"type": "RollingUpdate"})
    manifest["spec"]["lifecycleHooks"] = [_raw_hook(row) for row in _rows(datatable)]
    ctx.act(lambda: ctx.client.create(manifest))


def _raw_hook(row: dict[str, str]) -> dict[str, Any]:
    """A hook exactly as a table row writes it (for refusals): "-" leaves a field out."""
    hook = hook_manifest({**row, "point": row.get("point", "1") if row.get("point") != "-" else "1"})
    if row.get("point") == "-":
        del hook["trigger"]["progressAvailableParams"]
    if row.get("trigger"):
        hook["trigger"]["type"] = row["trigger"]
    if row.get("restart"):
        hook["jobSpec"]["template"]["spec"]["restartPolicy"] = row["restart"]
    if row.get("containers") == "none":
        hook["jobSpec"]["template"]["spec"]["containers"] = []
    return hook


@when(sentence('the hook Job "{ref:Q}" is deleted by someone else'))
def when_job_deleted(ctx: ScenarioContext, ref: str) -> None:
    target = ctx.ref("Job", ref)
    ctx.act(lambda: ctx.client.delete("batch/v1", "Job", target.name, target.namespace,
                                      propagation_policy="Background"))


# The reference controllers of the three rollout profiles.
ROLLOUT_CONTROLLERS = reference_controllers(["rollout_deployment", "rollout_statefulset", "rollout_daemonset"])
WRITE_VERBS = ["create", "update", "patch", "delete", "deletecollection"]


def _rollout_writes_fail(ctx: ScenarioContext) -> None:
    """Every write of the rollout controllers answers 500 from now on: in-world they are their own
    users, as a process they share one (the process's reads still work, so it is up but cannot act)."""
    rule = {"fault": INTERNAL_ERROR, "verbs": WRITE_VERBS, "rate": 1.0,
            "users": [SYSTEM_USER.format(name) for name in ROLLOUT_CONTROLLERS] + list(UNDER_TEST_USERS)}
    ctx.scene.add_fault(rule)


def _faults_cleared(ctx: ScenarioContext) -> None:
    ctx.scene.clear_faults()


@when(sentence("the rollout controllers restart"))
def when_controllers_restart(ctx: ScenarioContext) -> None:
    """The reference Deployment, StatefulSet and DaemonSet controllers stop as a crash would and new
    instances with nothing in memory take over from a fresh list+watch (``Scene.restart_controllers``;
    as a process, the controller process is killed and a new one started)."""
    ctx.act(lambda: ctx.scene.restart_controllers(ROLLOUT_CONTROLLERS))


@given(sentence("the writes of the rollout controllers fail"))
def given_writes_fail(ctx: ScenarioContext) -> None:
    _rollout_writes_fail(ctx)


@when(sentence("the writes of the rollout controllers succeed again and the rollout controllers restart"))
def when_writes_succeed_and_restart(ctx: ScenarioContext) -> None:
    """Both at one virtual instant, before anything settles: the instance that could not write never gets
    another turn, and the new one finds what the old one could not record."""
    def restart() -> None:
        _faults_cleared(ctx)
        ctx.scene.restart_controllers(ROLLOUT_CONTROLLERS)

    ctx.act(restart)


@given(sentence('the hook Job "{job:Q}" has completed and the Deployment "{ref:Q}" has not moved on'))
def given_job_completed_not_moved_on(ctx: ScenarioContext, job: str, ref: str) -> None:
    """Waits until the hook Job has completed, then checks that nothing has moved since it was created: no
    ReplicaSet of the Deployment scaled and no other hook Job created (what a controller that could not
    write leaves behind)."""
    target = ctx.ref("Deployment", ref)
    assert _job_running(ctx, job), f"the hook Job {job} is not running"
    before = {rs["metadata"]["name"]: _count(rs, "replicas")
              for rs in _replica_sets(ctx, target.name, str(target.namespace))}
    since = ctx.scene.audit_size()
    assert ctx.wait_until(lambda: not _job_running(ctx, job), ROLLOUT_SECONDS), f"the hook Job {job} did not finish"
    after = {rs["metadata"]["name"]: _count(rs, "replicas")
             for rs in _replica_sets(ctx, target.name, str(target.namespace))}
    assert after == before, f"the Deployment moved on: its ReplicaSets went from {before} to {after}"
    created = [r["name"] for r in ctx.scene.audit(since=since, resource=JOBS, verb="create",
                                                  namespace=target.namespace)]
    assert not created, f"the Deployment moved on: hook Jobs {created} were created"


# -- reading the audit trail -------------------------------------------------------------------------


def _states(ctx: ScenarioContext, name: str, namespace: str) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """After each recorded write to the Deployment, its ReplicaSets or its hook Jobs since the beginning:
    (the record, {"deployment", "sets": {name: rs}, "jobs": {name: job}, "ledger": HookLedger, "run"}) as
    they stood; ``run`` is the hook run a Job record concerns."""
    world: dict[str, Any] = {"deployment": None, "sets": {}, "jobs": {}, "ledger": HookLedger(), "run": None}
    for record in ctx.scene.audit(namespace=namespace):
        resource, obj = record["resource"], record.get("new")
        world["run"] = None
        if resource == DEPLOYMENTS and record["name"] == name:
            world["deployment"] = obj
        elif resource == REPLICA_SETS:
            owner = any(r.get("kind") == "Deployment" and r.get("name") == name
                        for r in ((obj or record.get("old") or {}).get("metadata") or {}).get("ownerReferences") or [])
            if not owner:
                continue
            if obj is None:
                world["sets"].pop(record["name"], None)
            else:
                world["sets"][record["name"]] = obj
        elif resource == JOBS:
            labels = ((obj or record.get("old") or {}).get("metadata") or {}).get("labels") or {}
            if labels.get(HOOK_OWNER_NAME_LABEL) != name or labels.get(HOOK_OWNER_KIND_LABEL, "Deployment") != (
                    "Deployment"):
                continue
            if obj is None:
                world["jobs"].pop(record["name"], None)
            else:
                world["jobs"][record["name"]] = obj
            world["run"] = world["ledger"].see_job(record)
        else:
            continue
        deployment, new = world["deployment"], _newest(world["sets"])
        if deployment is not None:
            world["ledger"].see_spec(_key(new), deployment["spec"].get("lifecycleHooks") or [],
                                     int(deployment["spec"].get("replicas", 1)), _count(new, "availableReplicas"))
        yield record, world


def _key(revision_object: dict[str, Any] | None) -> Key | None:
    """The revision a ReplicaSet or ControllerRevision stands for: (its uid, its revision number)."""
    if revision_object is None:
        return None
    number = revision_object.get("revision") if "revision" in revision_object else _revision(revision_object)
    return str(revision_object["metadata"].get("uid", "")), str(number)


def _newest(sets: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    return max(sets.values(), key=_revision, default=None)


def _count(rs: dict[str, Any] | None, field: str) -> int:
    if rs is None:
        return 0
    if field == "replicas":
        return int(rs["spec"].get("replicas") or 0)
    return int((rs.get("status") or {}).get(field) or 0)


# -- Then --------------------------------------------------------------------------------------------


@then(sentence('within {seconds:Int} seconds the Deployment "{ref:Q}" has rolled out'))
def then_rolled_out(ctx: ScenarioContext, seconds: int, ref: str) -> None:
    found = ctx.wait_until(lambda: rolled_out(ctx, ref), seconds)
    assert found, f"the Deployment {ref} has not rolled out after {seconds} s: {ctx.find(ctx.ref('Deployment', ref))}"


@then(sentence('after {seconds:Int} seconds the Deployment "{ref:Q}" has still not rolled out'))
def then_not_rolled_out(ctx: ScenarioContext, seconds: int, ref: str) -> None:
    ctx.scene.advance(seconds)
    assert not rolled_out(ctx, ref), f"the Deployment {ref} rolled out"


@then(sentence('the hooks of the Deployment "{ref:Q}" ran in this order:'))
def then_hook_order(ctx: ScenarioContext, ref: str, datatable: list[list[str]]) -> None:
    """Each hook Job created since the action, in order, with the new and old ReplicaSets' replicas and the
    new one's available replicas as they stood when it was created."""
    target = ctx.ref("Deployment", ref)
    seen: list[dict[str, str]] = []
    for record, world in _states(ctx, target.name, str(target.namespace)):
        if record["resource"] != JOBS or record["verb"] != "create" or record["seq"] <= ctx.mark:
            continue
        job = record["new"]
        revision = job["metadata"]["labels"][HOOK_REVISION_LABEL]
        new = next((rs for rs in world["sets"].values() if str(_revision(rs)) == revision), None)
        olds = [rs for rs in world["sets"].values() if rs is not new]
        seen.append({"hook": job["metadata"]["labels"][HOOK_NAME_LABEL],
                     "new available": str(_count(new, "availableReplicas")),
                     "new replicas": str(_count(new, "replicas")),
                     "old replicas": str(sum(_count(rs, "replicas") for rs in olds))})
    expected = _rows(datatable)
    columns = list(expected[0]) if expected else ["hook"]
    actual = [{k: row[k] for k in columns} for row in seen]
    assert actual == expected, f"hooks ran as {seen}, expected {expected}"


@then(sentence('no hook of the Deployment "{ref:Q}" ran since'))
def then_no_hook(ctx: ScenarioContext, ref: str) -> None:
    target = ctx.ref("Deployment", ref)
    created = [r["name"] for r in ctx.writes(resource=JOBS, verb="create")
               if ((r.get("new") or {}).get("metadata", {}).get("labels") or {}).get(HOOK_OWNER_NAME_LABEL)
               == target.name]
    assert not created, f"hook Jobs were created: {created}"


@then(sentence("no Job was created since"))
def then_no_job(ctx: ScenarioContext) -> None:
    created = [f"{r['namespace']}/{r['name']}" for r in ctx.writes(resource=JOBS, verb="create")]
    assert not created, f"Jobs were created: {created}"


@then(sentence('nothing scaled the ReplicaSets of the Deployment "{ref:Q}"'))
def then_nothing_scaled(ctx: ScenarioContext, ref: str) -> None:
    target = ctx.ref("Deployment", ref)
    changed = []
    for record in ctx.writes(resource=REPLICA_SETS):
        old, new = record.get("old"), record.get("new")
        if new is None or any(r.get("name") != target.name for r in new["metadata"].get("ownerReferences") or []):
            continue
        if old is None or old["spec"].get("replicas") != new["spec"].get("replicas"):
            changed.append((record["verb"], record["name"]))
    assert not changed, f"ReplicaSets were created or scaled: {changed}"


@then(sentence('the rollout of the Deployment "{ref:Q}" peaked at {most:Int} replicas and bottomed out at '
               '{least:Int} available'))
def then_fenceposts(ctx: ScenarioContext, ref: str, most: int, least: int) -> None:
    target = ctx.ref("Deployment", ref)
    totals, available = [], []
    for record, world in _states(ctx, target.name, str(target.namespace)):
        if record["seq"] <= ctx.mark or record["resource"] != REPLICA_SETS:
            continue
        totals.append(sum(_count(rs, "replicas") for rs in world["sets"].values()))
        available.append(sum(_count(rs, "availableReplicas") for rs in world["sets"].values()))
    assert totals, "no ReplicaSet was written during the rollout"
    assert (max(totals), min(available)) == (most, least), (
        f"the rollout peaked at {max(totals)} replicas and bottomed out at {min(available)} available, "
        f"expected {most} and {least}")


@then(sentence('the rollout invariants held at every recorded state of the Deployment "{ref:Q}"'))
def then_invariants(ctx: ScenarioContext, ref: str) -> None:
    """DESIGN.md's invariants and seed 004's algorithm, at each recorded state since the action, from the
    objects and hook Jobs alone (:class:`HookLedger`): total replicas ≤ R + maxSurge; available ≥ R −
    maxUnavailable; the new ReplicaSet does not grow beyond P while hooks at P must still finish; no
    ReplicaSet is scaled while a hook of the new revision runs; and each hook starts at its point, alone
    with the hooks of its own point, after every earlier point finished."""
    target = ctx.ref("Deployment", ref)
    problems: list[str] = []
    checked = 0
    previous_counts: dict[str, int] = {}
    for record, world in _states(ctx, target.name, str(target.namespace)):
        deployment, ledger = world["deployment"], world["ledger"]
        counts = {n: _count(rs, "replicas") for n, rs in world["sets"].items()}
        scaled = [n for n, c in counts.items() if previous_counts.get(n, c) != c]
        before = previous_counts
        previous_counts = counts
        if record["seq"] <= ctx.mark or deployment is None:
            continue
        checked += 1
        spec = deployment["spec"]
        bounds = deployment_bounds(spec)
        want = bounds.desired
        new = _newest(world["sets"])
        key = _key(new)
        total = sum(counts.values())
        available = sum(_count(rs, "availableReplicas") for rs in world["sets"].values())
        where = f"at #{record['seq']} ({record['verb']} {record['resource']} {record['name']})"
        if total > bounds.most:
            problems.append(f"{where}: {total} replicas > {want} + {bounds.surge}")
        if available < bounds.least:
            problems.append(f"{where}: {available} available < {want} - {bounds.unavailable}")
        hooks = spec.get("lifecycleHooks") or []
        running = ledger.running(key)
        if scaled and running:
            problems.append(f"{where}: {scaled} scaled while hooks {running} ran")
        run = world["run"]
        if run is not None and record["verb"] == "create" and run.key == key:
            problems += [f"{where}: {p}" for p in ledger.start_problems(run, hooks, want,
                                                                         _count(new, "availableReplicas"))]
        pending = ledger.pending(key, hooks, want)
        if new is not None and pending is not None:
            grown = _count(new, "replicas") > before.get(new["metadata"]["name"], 0)
            if grown and _count(new, "replicas") > pending.count:
                problems.append(f"{where}: the new ReplicaSet grew to {_count(new, 'replicas')} replicas while hooks "
                                f"at {pending.text} ({pending.count}) must still finish")
    assert checked, "no state was recorded during the rollout"
    assert not problems, "invariants broken:\n" + "\n".join(problems)


@then(sentence('the hook Job "{ref:Q}" belongs to the ReplicaSet of revision {revision:Int} and is labelled with it'))
def then_job_owned(ctx: ScenarioContext, ref: str, revision: int) -> None:
    target = ctx.ref("Job", ref)
    job = ctx.get(target)
    labels = job["metadata"].get("labels") or {}
    owners = job["metadata"].get("ownerReferences") or []
    assert labels.get(HOOK_REVISION_LABEL) == str(revision), f"the Job's labels are {labels}"
    assert len(owners) == 1 and owners[0]["kind"] == "ReplicaSet", f"the Job's owners are {owners}"
    rs = ctx.client.get("apps/v1", "ReplicaSet", owners[0]["name"], target.namespace)
    assert _revision(rs) == revision and owners[0]["uid"] == rs["metadata"]["uid"], (
        f"the Job belongs to {owners[0]['name']} of revision {_revision(rs)}")
    assert labels.get(POD_TEMPLATE_HASH_LABEL) == rs["metadata"]["labels"][POD_TEMPLATE_HASH_LABEL]


@then(sentence('the hook "{hook:Q}" of the Deployment "{ref:Q}" ran as one Job whose name has at most '
               '{longest:Int} characters'))
def then_hook_job_name_fits(ctx: ScenarioContext, hook: str, ref: str, longest: int) -> None:
    """The hook's Jobs created since the action, found by their owner and hook labels (whatever their
    name): exactly one, and its name short enough for the ``batch.kubernetes.io/job-name`` label of its
    Pods."""
    target = ctx.ref("Deployment", ref)
    names = []
    for record in ctx.scene.audit(resource=JOBS, verb="create", namespace=target.namespace):
        labels = (record.get("new") or {}).get("metadata", {}).get("labels") or {}
        if record["seq"] > ctx.mark and labels.get(HOOK_OWNER_KIND_LABEL) == "Deployment" and labels.get(
                HOOK_OWNER_NAME_LABEL) == target.name and labels.get(HOOK_NAME_LABEL) == hook:
            names.append(record["name"])
    assert len(names) == 1, f"the hook {hook} ran as the Jobs {names}, expected one"
    assert len(names[0]) <= longest, f"the hook Job {names[0]!r} has {len(names[0])} characters, more than {longest}"


@then(sentence('the hook Job "{ref:Q}" has the environment:'))
def then_job_env(ctx: ScenarioContext, ref: str, datatable: list[list[str]]) -> None:
    job = ctx.get(ctx.ref("Job", ref))
    env = {e["name"]: e.get("value") for e in job["spec"]["template"]["spec"]["containers"][0].get("env") or []}
    for row in _rows(datatable):
        value = row["value"]
        if value.startswith("<revision ") and value.endswith(">"):
            number = int(value[len("<revision "):-1])
            namespace = str(ctx.ref("Job", ref).namespace)
            owner = job["metadata"]["labels"][HOOK_OWNER_NAME_LABEL]
            found = [rs for rs in _replica_sets(ctx, owner, namespace)
                     if number in (_revision(rs), *_history(rs))]
            kind = job["metadata"]["labels"].get(HOOK_OWNER_KIND_LABEL)
            if kind in WORKLOAD_RESOURCES:  # a StatefulSet's or DaemonSet's revision is a ControllerRevision
                found = [cr for cr in _revisions_of(ctx, kind, owner, namespace) if _cr_revision(cr) == number]
            assert found, f"no ReplicaSet or ControllerRevision had revision {number}"
            value = f"{namespace}/{found[0]['metadata']['name']}"
        assert env.get(row["name"]) == value, f"{row['name']} is {env.get(row['name'])!r}, expected {value!r}"


def _history(rs: dict[str, Any]) -> list[int]:
    text = (rs["metadata"].get("annotations") or {}).get(REVISION_HISTORY_ANNOTATION, "")
    return [int(h) for h in text.split(",") if h]


@then(sentence('the hook Job "{ref:Q}" is suspended'))
def then_job_suspended(ctx: ScenarioContext, ref: str) -> None:
    job = ctx.get(ctx.ref("Job", ref))
    assert job["spec"].get("suspend") is True, f"the Job is not suspended: {job['spec']}"


@then(sentence('the hook Job "{ref:Q}" was created {times:Int} time'))
@then(sentence('the hook Job "{ref:Q}" was created {times:Int} times'))
def then_job_created_times(ctx: ScenarioContext, ref: str, times: int) -> None:
    target = ctx.ref("Job", ref)
    created = [r for r in ctx.scene.audit(resource=JOBS, verb="create", name=target.name,
                                          namespace=target.namespace)]
    assert len(created) == times, f"the Job was created {len(created)} times"


@then(sentence('the Deployment "{ref:Q}" has {count:Int} ReplicaSets'))
def then_replica_set_count(ctx: ScenarioContext, ref: str, count: int) -> None:
    target = ctx.ref("Deployment", ref)
    sets = _replica_sets(ctx, target.name, str(target.namespace))
    assert len(sets) == count, f"the Deployment has {[s['metadata']['name'] for s in sets]}"


@then(sentence('the Deployment "{ref:Q}" is at revision {revision:Int}, whose ReplicaSet was revision {older:Int}'))
def then_rollback_revision(ctx: ScenarioContext, ref: str, revision: int, older: int) -> None:
    target = ctx.ref("Deployment", ref)
    deployment = ctx.get(target)
    assert (deployment["metadata"].get("annotations") or {}).get(REVISION_ANNOTATION) == str(revision)
    current = [rs for rs in _replica_sets(ctx, target.name, str(target.namespace)) if _revision(rs) == revision]
    assert current and older in _history(current[0]), (
        f"the ReplicaSet of revision {revision} does not record revision {older}: {current}")


def _job_span(ctx: ScenarioContext, name: str, namespace: str) -> tuple[int, int]:
    """(seq of the Job's creation, seq of the first record showing it finished) since the action."""
    created = finished = 0
    for record in ctx.scene.audit(resource=JOBS, name=name, namespace=namespace):
        if record["seq"] <= ctx.mark:
            continue
        if record["verb"] == "create" and not created:
            created = record["seq"]
        conditions = ((record.get("new") or {}).get("status") or {}).get("conditions") or []
        if not finished and any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
                                for c in conditions):
            finished = record["seq"]
    return created, finished


@then(sentence('the hook Jobs "{first:Q}" and "{second:Q}" ran at the same time'))
def then_jobs_parallel(ctx: ScenarioContext, first: str, second: str) -> None:
    a, b = ctx.ref("Job", first), ctx.ref("Job", second)
    (a_start, a_end), (b_start, b_end) = _job_span(ctx, a.name, str(a.namespace)), _job_span(ctx, b.name,
                                                                                             str(b.namespace))
    assert a_start and b_start and a_end and b_end, f"spans {(a_start, a_end)} and {(b_start, b_end)}"
    assert a_start < b_end and b_start < a_end, (
        f"the Jobs ran one after the other: {(a_start, a_end)}, {(b_start, b_end)}")


def _job_running(ctx: ScenarioContext, ref: str) -> bool:
    job = ctx.find(ctx.ref("Job", ref))
    if job is None:
        return False
    conditions = (job.get("status") or {}).get("conditions") or []
    return not any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True" for c in conditions)


@given(sentence('the Deployment "{ref:Q}" has been updated to the image "{image:Q}" and the hook Job "{job:Q}" '
                'is running'))
def given_updated_hook_running(ctx: ScenarioContext, ref: str, image: str, job: str) -> None:
    ctx.setup(lambda: _set_image(ctx, ref, image))
    assert ctx.wait_until(lambda: _job_running(ctx, job), ROLLOUT_SECONDS), f"the hook Job {job} is not running"


@when(sentence('a Deployment "{ref:Q}" with maxSurge "{surge:Q}" and maxUnavailable "{unavailable:Q}" is created'))
def when_created_with_fenceposts(ctx: ScenarioContext, ref: str, surge: str, unavailable: str) -> None:
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": _int_or_percent(surge),
                                                           "maxUnavailable": _int_or_percent(unavailable)}}
    manifest = deployment_manifest(ctx, ref, 3, strategy)
    ctx.act(lambda: ctx.client.create(manifest))


@then(sentence('the Deployment "{ref:Q}" has the hook "{hook:Q}" with failurePolicy "{policy:Q}", retainPolicy '
               '"{retain:Q}" and trigger type "{trigger:Q}"'))
def then_hook_defaults(ctx: ScenarioContext, ref: str, hook: str, policy: str, retain: str, trigger: str) -> None:
    deployment = ctx.get(ctx.ref("Deployment", ref))
    found = [h for h in deployment["spec"].get("lifecycleHooks") or [] if h.get("name") == hook]
    assert found, f"the Deployment has no hook {hook!r}: {deployment['spec'].get('lifecycleHooks')}"
    actual = (found[0].get("failurePolicy"), found[0].get("retainPolicy"), found[0]["trigger"].get("type"))
    assert actual == (policy, retain, trigger), f"the hook is {found[0]}"


# == StatefulSets and DaemonSets ======================================================================
#
# The same rollouts for the kinds whose revisions are ControllerRevisions. A StatefulSet's Pods are
# ``<name>-<ordinal>``; a DaemonSet runs one Pod per Node. Their recorded states are read like the
# Deployment's: the workload, its Pods, its ControllerRevisions and its hook Jobs after each write since
# the action. A Pod counts when it is not being deleted and has not ended; it is available when Ready
# (these scenarios use no minReadySeconds).

PODS = "pods"
CONTROLLER_REVISIONS = "controllerrevisions.apps"
WORKLOAD_RESOURCES = {"StatefulSet": "statefulsets.apps", "DaemonSet": "daemonsets.apps"}
SET_TYPES = {**TYPES, "Set": parse.with_pattern(r"StatefulSet|DaemonSet")(lambda text: text)}


def set_sentence(pattern: str) -> parsers.StepParser:
    """A sentence whose ``{kind:Set}`` is StatefulSet or DaemonSet (the Deployment has its own sentences)."""
    return parsers.parse(pattern, extra_types=SET_TYPES)


def _template(ctx: ScenarioContext, name: str) -> dict[str, Any]:
    labels = {"app": name}
    return {"metadata": {"labels": labels, "annotations": {READY_DELAY_ANNOTATION: POD_READY_DELAY}},
            "spec": {"containers": [{"name": "app", "image": PAUSE_IMAGE}]}}


def stateful_set_manifest(ctx: ScenarioContext, ref: str, replicas: int, policy: str,
                          unavailable: str) -> dict[str, Any]:
    """A StatefulSet of pause containers labelled ``app=<name>`` whose Pods become Ready after 5 s."""
    target = ctx.ref("StatefulSet", ref)
    return {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": target.name, "namespace": target.namespace},
            "spec": {"replicas": replicas, "serviceName": target.name, "podManagementPolicy": policy,
                     "updateStrategy": {"type": "RollingUpdate",
                                        "rollingUpdate": {"maxUnavailable": _int_or_percent(unavailable)}},
                     "selector": {"matchLabels": {"app": target.name}}, "template": _template(ctx, target.name)}}


def daemon_set_manifest(ctx: ScenarioContext, ref: str, surge: str, unavailable: str) -> dict[str, Any]:
    """A DaemonSet of pause containers labelled ``app=<name>`` whose Pods become Ready after 5 s."""
    target = ctx.ref("DaemonSet", ref)
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": target.name, "namespace": target.namespace},
            "spec": {"updateStrategy": {"type": "RollingUpdate",
                                        "rollingUpdate": {"maxSurge": _int_or_percent(surge),
                                                          "maxUnavailable": _int_or_percent(unavailable)}},
                     "selector": {"matchLabels": {"app": target.name}}, "template": _template(ctx, target.name)}}


def _owned_by(obj: dict[str, Any] | None, kind: str, name: str) -> bool:
    return any(r.get("kind") == kind and r.get("name") == name
               for r in ((obj or {}).get("metadata") or {}).get("ownerReferences") or [])


def _live(pod: dict[str, Any]) -> bool:
    return not pod["metadata"].get("deletionTimestamp") and (pod.get("status") or {}).get("phase") not in (
        "Succeeded", "Failed")


def _ready(pod: dict[str, Any]) -> bool:
    return _live(pod) and any(c.get("type") == "Ready" and c.get("status") == "True"
                              for c in (pod.get("status") or {}).get("conditions") or [])


def _cr_revision(cr: dict[str, Any]) -> int:
    return int(cr.get("revision") or 0)


def _revision_id(kind: str, cr: dict[str, Any] | None) -> str:
    """What a Pod's ``controller-revision-hash`` label says for this revision: the ControllerRevision's
    name for a StatefulSet, its hash for a DaemonSet."""
    if cr is None:
        return ""
    if kind == "StatefulSet":
        return str(cr["metadata"]["name"])
    return str((cr["metadata"].get("labels") or {}).get(CONTROLLER_HASH_LABEL, ""))


def _pod_revision(pod: dict[str, Any]) -> str:
    return str((pod["metadata"].get("labels") or {}).get(CONTROLLER_REVISION_HASH_LABEL, ""))


def _set_states(ctx: ScenarioContext, kind: str, name: str, namespace: str
                ) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """After each recorded write to the workload, its Pods, ControllerRevisions or hook Jobs:
    (the record, {"workload", "pods", "revisions", "jobs", "ledger": HookLedger, "run"}) as they stood."""
    world: dict[str, Any] = {"workload": None, "pods": {}, "revisions": {}, "jobs": {}, "ledger": HookLedger(),
                             "run": None}
    for record in ctx.scene.audit(namespace=namespace):
        resource, obj = record["resource"], record.get("new")
        world["run"] = None
        if resource == WORKLOAD_RESOURCES[kind] and record["name"] == name:
            world["workload"] = obj
        elif resource in (PODS, CONTROLLER_REVISIONS):
            if not _owned_by(obj or record.get("old"), kind, name):
                continue
            bucket = world["pods" if resource == PODS else "revisions"]
            if obj is None:
                bucket.pop(record["name"], None)
            else:
                bucket[record["name"]] = obj
        elif resource == JOBS:
            labels = ((obj or record.get("old") or {}).get("metadata") or {}).get("labels") or {}
            if labels.get(HOOK_OWNER_NAME_LABEL) != name or labels.get(HOOK_OWNER_KIND_LABEL) != kind:
                continue
            if obj is None:
                world["jobs"].pop(record["name"], None)
            else:
                world["jobs"][record["name"]] = obj
            world["run"] = world["ledger"].see_job(record)
        else:
            continue
        workload, update = world["workload"], _update_revision(world)
        if workload is not None:
            want = _set_desired(kind, workload)
            world["ledger"].see_spec(_key(update), workload["spec"].get("lifecycleHooks") or [], want,
                                     _counts(kind, world, _revision_id(kind, update))[2])
        yield record, world


def _set_desired(kind: str, workload: dict[str, Any]) -> int:
    """The replicas a StatefulSet declares, or the Nodes a DaemonSet should run on."""
    if kind == "StatefulSet":
        return int(workload["spec"].get("replicas", 1))
    return int((workload.get("status") or {}).get("desiredNumberScheduled") or 0)


def _update_revision(world: dict[str, Any]) -> dict[str, Any] | None:
    return max(world["revisions"].values(), key=_cr_revision, default=None)


def _counts(kind: str, world: dict[str, Any], revision: str) -> tuple[int, int, int]:
    """(live Pods, available Pods, available Pods at ``revision``) of a recorded state."""
    pods = [p for p in world["pods"].values() if _live(p)]
    return (len(pods), sum(1 for p in pods if _ready(p)),
            sum(1 for p in pods if _ready(p) and _pod_revision(p) == revision))


def set_rolled_out(ctx: ScenarioContext, kind: str, ref: str) -> bool:
    """The workload's rollout is complete: every replica (every eligible Node) updated and available, the
    generation observed, and no hook running."""
    obj = ctx.find(ctx.ref(kind, ref))
    if obj is None:
        return False
    status = obj.get("status") or {}
    if status.get("observedGeneration", 0) < obj["metadata"]["generation"]:
        return False
    if kind == "StatefulSet":
        want = obj["spec"].get("replicas", 1)
        done = (status.get("updatedReplicas", 0) == want == status.get("availableReplicas", 0)
                == status.get("replicas", 0) and status.get("currentRevision") == status.get("updateRevision"))
    else:
        want = status.get("desiredNumberScheduled", 0)
        done = (want > 0 and status.get("updatedNumberScheduled", 0) == want == status.get("numberAvailable", 0)
                and not status.get("numberMisscheduled"))
    hooks = next((c for c in status.get("conditions") or [] if c.get("type") == LIFECYCLE_HOOKS_CONDITION), None)
    return done and (hooks is None or hooks.get("reason") != HOOK_RUNNING_REASON)


def _create_set_rolled_out(ctx: ScenarioContext, kind: str, ref: str, manifest: dict[str, Any]) -> None:
    ctx.setup(lambda: ctx.client.create(manifest))
    assert ctx.wait_until(lambda: set_rolled_out(ctx, kind, ref), ROLLOUT_SECONDS * 2), (
        f"the {kind} {ref} did not roll out: {ctx.find(ctx.ref(kind, ref))}")


def _set_workload_image(ctx: ScenarioContext, kind: str, ref: str, image: str) -> Any:
    target = ctx.ref(kind, ref)
    patch = [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": image}]
    return ctx.client.patch("apps/v1", kind, target.name, patch, namespace=target.namespace, patch_type=JSON_PATCH)


@given(set_sentence('a StatefulSet "{ref:Q}" with {replicas:Int} replicas, the {policy:Word} pod management policy '
                    'and maxUnavailable "{unavailable:Q}" that has rolled out'))
def given_stateful_set(ctx: ScenarioContext, ref: str, replicas: int, policy: str, unavailable: str) -> None:
    _create_set_rolled_out(ctx, "StatefulSet", ref, stateful_set_manifest(ctx, ref, replicas, policy, unavailable))


@given(set_sentence('a DaemonSet "{ref:Q}" with maxSurge "{surge:Q}" and maxUnavailable "{unavailable:Q}" that has '
                    'rolled out'))
def given_daemon_set(ctx: ScenarioContext, ref: str, surge: str, unavailable: str) -> None:
    _create_set_rolled_out(ctx, "DaemonSet", ref, daemon_set_manifest(ctx, ref, surge, unavailable))


@given(set_sentence('the {kind:Set} "{ref:Q}" has the lifecycle hooks:'))
def given_set_hooks(ctx: ScenarioContext, kind: str, ref: str, datatable: list[list[str]]) -> None:
    target = ctx.ref(kind, ref)
    hooks = [hook_manifest(row) for row in _rows(datatable)]
    ctx.setup(lambda: ctx.client.patch("apps/v1", kind, target.name, {"spec": {"lifecycleHooks": hooks}},
                                       namespace=target.namespace, patch_type=MERGE))


@given(set_sentence('the StatefulSet "{ref:Q}" has the partition {partition:Int}'))
def given_partition(ctx: ScenarioContext, ref: str, partition: int) -> None:
    target = ctx.ref("StatefulSet", ref)
    body = {"spec": {"updateStrategy": {"rollingUpdate": {"partition": partition}}}}
    ctx.setup(lambda: ctx.client.patch("apps/v1", "StatefulSet", target.name, body, namespace=target.namespace,
                                       patch_type=MERGE))


@given(set_sentence('the {kind:Set} "{ref:Q}" has been updated to the image "{image:Q}" and has rolled out'))
def given_set_updated(ctx: ScenarioContext, kind: str, ref: str, image: str) -> None:
    ctx.setup(lambda: _set_workload_image(ctx, kind, ref, image))
    assert ctx.wait_until(lambda: set_rolled_out(ctx, kind, ref), ROLLOUT_SECONDS * 2), (
        f"the {kind} {ref} did not roll out")


@given(set_sentence('the {kind:Set} "{ref:Q}" has been updated to the image "{image:Q}" and the hook Job "{job:Q}" '
                    'is running'))
def given_set_updated_hook_running(ctx: ScenarioContext, kind: str, ref: str, image: str, job: str) -> None:
    ctx.setup(lambda: _set_workload_image(ctx, kind, ref, image))
    assert ctx.wait_until(lambda: _job_running(ctx, job), ROLLOUT_SECONDS), f"the hook Job {job} is not running"


@when(set_sentence('a {kind:Set} "{ref:Q}" with these lifecycle hooks is created:'))
def when_set_created_with_hooks(ctx: ScenarioContext, kind: str, ref: str, datatable: list[list[str]]) -> None:
    """A StatefulSet of 3 replicas (OrderedReady) or a DaemonSet whose hooks are the table's rows as written
    (for refusals; see the Deployment's sentence)."""
    if kind == "StatefulSet":
        manifest = stateful_set_manifest(ctx, ref, 3, "OrderedReady", "1")
    else:
        manifest = daemon_set_manifest(ctx, ref, "0", "1")
    manifest["spec"]["lifecycleHooks"] = [_raw_hook(row) for row in _rows(datatable)]
    ctx.act(lambda: ctx.client.create(manifest))


@when(set_sentence('the {kind:Set} "{ref:Q}" is updated to the image "{image:Q}"'))
def when_set_updated(ctx: ScenarioContext, kind: str, ref: str, image: str) -> None:
    ctx.act(lambda: _set_workload_image(ctx, kind, ref, image))


def _revisions_of(ctx: ScenarioContext, kind: str, name: str, namespace: str) -> list[dict[str, Any]]:
    return [cr for cr in ctx.client.list("apps/v1", "ControllerRevision", namespace)["items"]
            if _owned_by(cr, kind, name)]


@when(set_sentence('the StatefulSet "{ref:Q}" is rolled back to revision {revision:Int}'))
def when_set_rolled_back(ctx: ScenarioContext, ref: str, revision: int) -> None:
    """What ``kubectl rollout undo statefulset --to-revision`` does: the ControllerRevision's template
    becomes the StatefulSet's."""
    target = ctx.ref("StatefulSet", ref)
    found = [cr for cr in _revisions_of(ctx, "StatefulSet", target.name, str(target.namespace))
             if _cr_revision(cr) == revision]
    assert found, f"the StatefulSet {ref} has no ControllerRevision of revision {revision}"
    patch = [{"op": "replace", "path": "/spec/template", "value": revision_template(found[0])}]
    ctx.act(lambda: ctx.client.patch("apps/v1", "StatefulSet", target.name, patch, namespace=target.namespace,
                                     patch_type=JSON_PATCH))


@then(set_sentence('within {seconds:Int} seconds the {kind:Set} "{ref:Q}" has rolled out'))
def then_set_rolled_out(ctx: ScenarioContext, seconds: int, kind: str, ref: str) -> None:
    found = ctx.wait_until(lambda: set_rolled_out(ctx, kind, ref), seconds)
    assert found, f"the {kind} {ref} has not rolled out after {seconds} s: {ctx.find(ctx.ref(kind, ref))}"


@then(set_sentence('after {seconds:Int} seconds the {kind:Set} "{ref:Q}" has still not rolled out'))
def then_set_not_rolled_out(ctx: ScenarioContext, seconds: int, kind: str, ref: str) -> None:
    ctx.scene.advance(seconds)
    assert not set_rolled_out(ctx, kind, ref), f"the {kind} {ref} rolled out"


@then(set_sentence('the hooks of the {kind:Set} "{ref:Q}" ran in this order:'))
def then_set_hook_order(ctx: ScenarioContext, kind: str, ref: str, datatable: list[list[str]]) -> None:
    """Each hook Job created since the action, in order, with the number of available Pods at the hook's
    revision (``new available``) as it stood when the Job was created."""
    target = ctx.ref(kind, ref)
    seen: list[dict[str, str]] = []
    for record, world in _set_states(ctx, kind, target.name, str(target.namespace)):
        if record["resource"] != JOBS or record["verb"] != "create" or record["seq"] <= ctx.mark:
            continue
        labels = record["new"]["metadata"]["labels"]
        seen.append({"hook": labels[HOOK_NAME_LABEL],
                     "new available": str(_counts(kind, world, labels[CONTROLLER_REVISION_HASH_LABEL])[2])})
    expected = _rows(datatable)
    columns = list(expected[0]) if expected else ["hook"]
    actual = [{k: row[k] for k in columns} for row in seen]
    assert actual == expected, f"hooks ran as {seen}, expected {expected}"


@then(set_sentence('no hook of the {kind:Set} "{ref:Q}" ran since'))
def then_set_no_hook(ctx: ScenarioContext, kind: str, ref: str) -> None:
    target = ctx.ref(kind, ref)
    created = [r["name"] for r in ctx.writes(resource=JOBS, verb="create")
               if ((r.get("new") or {}).get("metadata", {}).get("labels") or {}).get(HOOK_OWNER_NAME_LABEL)
               == target.name]
    assert not created, f"hook Jobs were created: {created}"


def _pod_changes(ctx: ScenarioContext, kind: str, name: str) -> list[tuple[str, str]]:
    """(created|deleted, Pod) of the workload's Pods since the action: creations, and deletions as the moment
    a Pod is marked for deletion (its final removal is the kubelet's)."""
    changes = []
    for record in ctx.writes(resource=PODS):
        old, new = record.get("old"), record.get("new")
        if not _owned_by(new or old, kind, name):
            continue
        if old is None and new is not None:
            changes.append(("created", record["name"]))
        elif new is not None and new["metadata"].get("deletionTimestamp") and not (old or {}).get(
                "metadata", {}).get("deletionTimestamp"):
            changes.append(("deleted", record["name"]))
    return changes


@then(set_sentence('nothing created or deleted Pods of the {kind:Set} "{ref:Q}"'))
def then_no_pod_changes(ctx: ScenarioContext, kind: str, ref: str) -> None:
    changes = _pod_changes(ctx, kind, ctx.ref(kind, ref).name)
    assert not changes, f"Pods changed: {changes}"


@then(set_sentence('the StatefulSet "{ref:Q}" replaced its Pods in the order "{order:Q}"'))
def then_replacement_order(ctx: ScenarioContext, ref: str, order: str) -> None:
    deleted = [pod for change, pod in _pod_changes(ctx, "StatefulSet", ctx.ref("StatefulSet", ref).name)
               if change == "deleted"]
    expected = [p.strip() for p in order.split(",")]
    assert deleted == expected, f"the Pods were replaced in the order {deleted}, expected {expected}"


@then(set_sentence('within {seconds:Int} seconds the StatefulSet "{ref:Q}" has updated exactly the Pods "{pods:Q}"'))
def then_updated_exactly(ctx: ScenarioContext, seconds: int, ref: str, pods: str) -> None:
    target = ctx.ref("StatefulSet", ref)
    expected = sorted(p.strip() for p in pods.split(","))

    def updated() -> list[str]:
        sts = ctx.get(target)
        revision = (sts.get("status") or {}).get("updateRevision")
        return sorted(p["metadata"]["name"] for p in ctx.client.list("v1", "Pod", target.namespace)["items"]
                      if _owned_by(p, "StatefulSet", target.name) and _ready(p) and _pod_revision(p) == revision)

    assert ctx.wait_until(lambda: updated() == expected, seconds), f"the updated Pods are {updated()}"


@then(set_sentence('the rollout of the {kind:Set} "{ref:Q}" peaked at {most:Int} Pods and bottomed out at '
                   '{least:Int} available'))
def then_set_fenceposts(ctx: ScenarioContext, kind: str, ref: str, most: int, least: int) -> None:
    target = ctx.ref(kind, ref)
    totals, available = [], []
    for record, world in _set_states(ctx, kind, target.name, str(target.namespace)):
        if record["seq"] <= ctx.mark or record["resource"] != PODS:
            continue
        live, ready, _ = _counts(kind, world, "")
        totals.append(live)
        available.append(ready)
    assert totals, "no Pod was written during the rollout"
    assert (max(totals), min(available)) == (most, least), (
        f"the rollout peaked at {max(totals)} Pods and bottomed out at {min(available)} available, "
        f"expected {most} and {least}")


@then(set_sentence('the rollout invariants held at every recorded state of the {kind:Set} "{ref:Q}"'))
def then_set_invariants(ctx: ScenarioContext, kind: str, ref: str) -> None:
    """DESIGN.md's invariants and seed 004's algorithm at each recorded state since the action, from the
    objects and hook Jobs alone: live Pods ≤ replicas (StatefulSet) or eligible Nodes + maxSurge
    (DaemonSet); available Pods ≥ the least the strategy allows; available Pods at the update revision ≤ P
    while hooks at P must still finish; no Pod created or marked for deletion while a hook of the update
    revision runs; each hook starts at its point, alone with its own point's hooks, after earlier points."""
    target = ctx.ref(kind, ref)
    problems: list[str] = []
    checked = 0
    for record, world in _set_states(ctx, kind, target.name, str(target.namespace)):
        workload, ledger = world["workload"], world["ledger"]
        update = _update_revision(world)
        key = _key(update)
        if record["seq"] <= ctx.mark or workload is None:
            continue
        checked += 1
        want = _set_desired(kind, workload)
        bounds = (stateful_set_bounds(workload["spec"]) if kind == "StatefulSet"
                  else daemon_set_bounds(workload["spec"], want))
        live, ready, updated = _counts(kind, world, _revision_id(kind, update))
        where = f"at #{record['seq']} ({record['verb']} {record['resource']} {record['name']})"
        if live > bounds.most:
            problems.append(f"{where}: {live} Pods > {bounds.most}")
        if ready < bounds.least:
            problems.append(f"{where}: {ready} available < {bounds.least}")
        running = ledger.running(key)
        if running and record["resource"] == PODS:
            old, new = record.get("old"), record.get("new")
            if (old is None and new is not None) or (new is not None and new["metadata"].get("deletionTimestamp")
                                                     and not (old or {}).get("metadata", {}).get("deletionTimestamp")):
                problems.append(f"{where}: a Pod changed while hooks {running} ran")
        hooks = workload["spec"].get("lifecycleHooks") or []
        run = world["run"]
        if run is not None and record["verb"] == "create" and run.key == key:
            problems += [f"{where}: {p}" for p in ledger.start_problems(run, hooks, want, updated)]
        pending = ledger.pending(key, hooks, want)
        if pending is not None and updated > pending.count:
            problems.append(f"{where}: {updated} updated Pods are available while hooks at {pending.text} "
                            f"({pending.count}) must still finish")
    assert checked, "no state was recorded during the rollout"
    assert not problems, "invariants broken:\n" + "\n".join(problems)


@then(set_sentence('the hook Job "{ref:Q}" belongs to the ControllerRevision of revision {revision:Int} and is '
                   'labelled with it'))
def then_job_owned_by_revision(ctx: ScenarioContext, ref: str, revision: int) -> None:
    target = ctx.ref("Job", ref)
    job = ctx.get(target)
    labels = job["metadata"].get("labels") or {}
    owners = job["metadata"].get("ownerReferences") or []
    assert labels.get(HOOK_REVISION_LABEL) == str(revision), f"the Job's labels are {labels}"
    assert len(owners) == 1 and owners[0]["kind"] == "ControllerRevision", f"the Job's owners are {owners}"
    cr = ctx.client.get("apps/v1", "ControllerRevision", owners[0]["name"], target.namespace)
    assert _cr_revision(cr) == revision and owners[0]["uid"] == cr["metadata"]["uid"], (
        f"the Job belongs to {owners[0]['name']} of revision {_cr_revision(cr)}")
    kind = labels.get(HOOK_OWNER_KIND_LABEL, "")
    assert labels.get(CONTROLLER_REVISION_HASH_LABEL) == _revision_id(kind, cr), f"the Job's labels are {labels}"


@then(set_sentence('the {kind:Set} "{ref:Q}" has the status:'))
def then_set_status(ctx: ScenarioContext, kind: str, ref: str, datatable: list[list[str]]) -> None:
    status = ctx.get(ctx.ref(kind, ref)).get("status") or {}
    for row in _rows(datatable):
        actual = status.get(row["field"], 0)
        assert str(actual) == row["value"], f"status.{row['field']} is {actual!r}, expected {row['value']}: {status}"
