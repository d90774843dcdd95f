"""Sentences about the hook implementing controller (HIC) under test: starting, stopping and restarting it,
Machines carrying its hooks, faults on its requests, and what it wrote (from the audit trail).

The HIC under test is, in the default target, the reference HIC (``reference-hic``, harness/world/hic.py)
running in the world with the config ``features/hic/reference-hic-config.yaml``; with ``--target hic``
it is the command ``--hic-command`` run as a process against the served world (harness/targets/hic.py)
with the config ``--hic-config``. The sentences speak of "the HIC's hooks": the hooks its config claims,
at their lifecycle points with their owners; Machines made "for the HIC" carry the labels its selector
asks for. A Then-step that fails lists what the HIC wrote to the Machine: each write with its audit
number, virtual time, verb and the annotations it added or removed, whose they were, and whether the
Machine was being deleted then.

PYTEST_DONT_REWRITE: a failing step's message is the verdict a HIC's author reads, so pytest's
assertion introspection is kept out of it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from pytest_bdd import given, then, when

from features.steps.context import ScenarioContext, sentence
from features.steps.machines import (
    CapiScene,
    MachineSpec,
    _register_kinds,
    await_state,
    machine_objects,
    machine_records,
    node_of,
    records_of,
    start_machine,
)
from harness.kube.client import find_in
from harness.kube.names.capi import CLUSTER_API_VERSION, MACHINE_FINALIZER, MACHINE_KIND, MACHINES_RESOURCE
from harness.kube.names.core import SYSTEM_USER
from harness.kube.time import parse_rfc3339
from harness.resources import reference_hic_config
from harness.targets.conformance import NOT_APPLICABLE_SKIP
from harness.world.hic import LIFECYCLE_POINTS, HicConfig, Hook, load_config

HIC_AREA = "hic"
REFERENCE_HIC = "reference-hic"
# Another owner's hook, at each of the HIC's lifecycle points: not the HIC's to remove.
OTHER_HOOK_NAME = "another-owners-hook"
OTHER_OWNER = "another-owner"
# The faults a sentence names, as fault rules (harness/apiserver/faults.py).
FAULTS = {
    "409 Conflict": {"fault": "Conflict"},
    "429 TooManyRequests": {"fault": "TooManyRequests", "retryAfterSeconds": 1},
    "500 InternalError": {"fault": "InternalError"},
}
WRITE_VERBS = ["create", "update", "patch", "delete"]
# A HIC process lives on wall time: after the virtual deadline of a "within" step, its writes still
# in flight (a retry back-off, a re-list after a dropped watch) get this much wall time to land.
WALL_GRACE_SECONDS = 15.0
GRACE_POLL_SECONDS = 0.1
# Metadata the API server changes on every write: not something the HIC did.
SERVER_FIELDS = ("resourceVersion", "managedFields", "generation")
# How much of a HIC process's log a failure shows.
LOG_TAIL = 2000


# -- the HIC under test --------------------------------------------------------------------------------


@dataclass
class HicUnderTest:
    """The HIC a scenario checks: its config, who it is on the wire, and how to start and stop it."""

    ctx: ScenarioContext
    config: HicConfig
    user: str
    process: bool
    started: bool = False

    def start(self) -> None:
        scene: Any = self.ctx.scene
        if self.process:
            scene.start_hic()
        elif not self.started:
            scene.call(REFERENCE_HIC, "configure", self.config.to_dict())
        else:
            scene.set_enabled(REFERENCE_HIC, True)
            scene.call(REFERENCE_HIC, "restart")
        self.started = True
        self.ctx.scene.settle()

    def stop(self) -> None:
        scene: Any = self.ctx.scene
        if self.process:
            scene.stop_hic()
        else:
            scene.set_enabled(REFERENCE_HIC, False)
        self.ctx.scene.settle()

    def restart(self) -> None:
        self.stop()
        self.start()

    def grace(self, check: Any) -> bool:
        """For a HIC process: settle again, in wall time, up to WALL_GRACE_SECONDS, until ``check()``."""
        if not self.process:
            return bool(check())
        deadline = time.monotonic() + WALL_GRACE_SECONDS
        while not check():
            if time.monotonic() > deadline:
                return False
            threading.Event().wait(GRACE_POLL_SECONDS)
            self.ctx.scene.settle()
        return True


def hic_scene(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The scene of a scenario under ``--target hic``: a HicScene for the scenarios of features/hic/."""
    from harness.targets.hic import HicScene, check_hic_options

    command, config = request.config.getoption("--hic-command"), request.config.getoption("--hic-config")
    problem = check_hic_options(command, config)
    if problem:
        pytest.fail(problem, pytrace=False)
    server = request.getfixturevalue("world_server")
    with HicScene(command, config, server=server) as scene:
        yield scene


@pytest.fixture
def hic(ctx: ScenarioContext) -> HicUnderTest:
    """The HIC under test of this scenario."""
    scene: Any = ctx.scene
    if hasattr(scene, "hic_config"):
        return HicUnderTest(ctx, scene.hic_config, scene.hic_user, process=True)
    return HicUnderTest(ctx, load_config(reference_hic_config()), SYSTEM_USER.format(REFERENCE_HIC), process=False)


# -- what the HIC wrote ---------------------------------------------------------------------------------


def _annotations(obj: dict[str, Any] | None) -> dict[str, str]:
    return dict(((obj or {}).get("metadata") or {}).get("annotations") or {})


def _hook_of(config: HicConfig, key: str) -> Hook | None:
    return next((h for h in config.hooks if h.key == key), None)


def _whose(config: HicConfig, key: str, value: str) -> str:
    if _hook_of(config, key) is not None:
        return "the HIC's own hook"
    if any(key.startswith(prefix + "/") for prefix in LIFECYCLE_POINTS.values()):
        return f"a hook the HIC does not claim (owner {value!r})"
    return "not a hook"


def _deleting(obj: dict[str, Any] | None) -> bool:
    return bool(((obj or {}).get("metadata") or {}).get("deletionTimestamp"))


def _other_changes(old: dict[str, Any] | None, new: dict[str, Any] | None) -> list[str]:
    """What a write changed beyond annotations and the server's own fields: top-level and metadata keys."""
    if old is None or new is None:
        return ["created" if old is None else "deleted"]
    changed = [k for k in set(old) | set(new) if k != "metadata" and old.get(k) != new.get(k)]
    old_meta, new_meta = old.get("metadata") or {}, new.get("metadata") or {}
    changed += [f"metadata.{k}" for k in set(old_meta) | set(new_meta)
                if k not in ("annotations", *SERVER_FIELDS) and old_meta.get(k) != new_meta.get(k)]
    return sorted(changed)


def describe_write(config: HicConfig, record: dict[str, Any]) -> str:
    """One write as a person reads it: number, virtual time, verb, object, what changed, and whose."""
    old, new = record.get("old"), record.get("new")
    before, after = _annotations(old), _annotations(new)
    parts = []
    for key in sorted(set(before) - set(after)):
        parts.append(f"removed {key} ({_whose(config, key, before[key])})")
    for key in sorted(set(after) - set(before)):
        parts.append(f"added {key}={after[key]!r} ({_whose(config, key, after[key])})")
    for key in sorted(k for k in set(before) & set(after) if before[k] != after[k]):
        parts.append(f"changed {key} from {before[key]!r} to {after[key]!r}")
    parts += [f"changed {what}" for what in _other_changes(old, new)]
    state = "being deleted" if _deleting(old or new) else "not being deleted"
    return (f"#{record['seq']} at {record['time']} {record['verb']} Machine {record['namespace']}/{record['name']} "
            f"while it was {state}: {'; '.join(parts) or 'no change'}")


def hic_writes(ctx: ScenarioContext, hic: HicUnderTest, name: str | None = None,
               since: int = 0) -> list[dict[str, Any]]:
    """The HIC's writes to Machines (to the Machine ``name``), oldest first."""
    filters: dict[str, Any] = {"resource": MACHINES_RESOURCE, "since": since}
    if name is not None:
        filters["name"] = name
    return [r for r in ctx.scene.audit(**filters) if r["user"] == hic.user]


def trail(ctx: ScenarioContext, hic: HicUnderTest, name: str | None = None, since: int = 0) -> str:
    """What the HIC wrote, one line per write (for failure messages)."""
    lines = [describe_write(hic.config, r) for r in hic_writes(ctx, hic, name, since)]
    who = f"the HIC ({hic.user})"
    text = f"{who} wrote:\n  " + "\n  ".join(lines) if lines else f"{who} wrote nothing to Machines"
    scene: Any = ctx.scene
    if hic.process:
        text += f"\nthe end of its log:\n{scene.hic.log_tail()[-LOG_TAIL:]}"
    return text


def _own_hooks(hic: HicUnderTest) -> dict[str, str]:
    return {h.key: h.owner for h in hic.config.hooks}


def _own_hooks_at(hic: HicUnderTest, point: str) -> list[str]:
    return [h.key for h in hic.config.hooks if h.point == point]


def _other_hooks(hic: HicUnderTest) -> dict[str, str]:
    points = sorted({h.point for h in hic.config.hooks})
    return {f"{LIFECYCLE_POINTS[p]}/{OTHER_HOOK_NAME}": OTHER_OWNER for p in points}


def _machine(ctx: ScenarioContext, capi: CapiScene, name: str) -> dict[str, Any] | None:
    return find_in(ctx.client, CLUSTER_API_VERSION, MACHINE_KIND, name, capi.namespace)


def _spec_for(hic: HicUnderTest, name: str, annotations: dict[str, str]) -> MachineSpec:
    return MachineSpec(name, annotations=dict(annotations), labels=hic.config.selected_labels())


def _names(prefix: str, count: int) -> list[str]:
    return [f"{prefix}-{n}" for n in range(1, count + 1)]


def add_fault(ctx: ScenarioContext, rule: dict[str, Any]) -> None:
    """Install a fault rule in the scenario's world, whatever its transport."""
    ctx.scene.add_fault(rule)


# -- Given -------------------------------------------------------------------------------------------


@given(sentence("the hook implementing controller under test is running"))
def given_hic_running(ctx: ScenarioContext, hic: HicUnderTest) -> None:
    _register_kinds(ctx)
    hic.start()


@given(sentence("the hook implementing controller under test has been stopped"))
def given_hic_stopped(hic: HicUnderTest) -> None:
    hic.stop()


@given(sentence('a running Machine "{name:Q}" that carries the HIC\'s hooks'))
def given_machine_with_hooks(ctx: ScenarioContext, capi: CapiScene, hic: HicUnderTest, name: str) -> None:
    start_machine(ctx, capi, _spec_for(hic, name, _own_hooks(hic)))


@given(sentence('a running Machine "{name:Q}" that carries the HIC\'s hooks and another owner\'s hook at each of '
                'their lifecycle points'))
def given_machine_with_other_hooks(ctx: ScenarioContext, capi: CapiScene, hic: HicUnderTest, name: str) -> None:
    start_machine(ctx, capi, _spec_for(hic, name, {**_own_hooks(hic), **_other_hooks(hic)}))


@given(sentence('a running Machine "{name:Q}" that the HIC selects'))
def given_selected_machine(ctx: ScenarioContext, capi: CapiScene, hic: HicUnderTest, name: str) -> None:
    start_machine(ctx, capi, _spec_for(hic, name, {}))


@given(sentence('{count:Int} running Machines "{prefix:Q}-1" to "{prefix2:Q}-{last:Int}" that carry the HIC\'s '
                'hooks'))
def given_many_machines(ctx: ScenarioContext, capi: CapiScene, hic: HicUnderTest, count: int, prefix: str,
                        prefix2: str, last: int) -> None:
    assert prefix == prefix2 and last == count, "name the Machines <prefix>-1 to <prefix>-<count>"
    names = _names(prefix, count)
    for name in names:
        for obj in machine_objects(capi, _spec_for(hic, name, _own_hooks(hic))):
            ctx.setup(lambda obj=obj: ctx.client.create(obj))

    def all_running() -> bool:
        return all(((_machine(ctx, capi, n) or {}).get("status") or {}).get("nodeRef") for n in names)

    await_state(ctx, f"the Machines {', '.join(names)} running", all_running)


@given(sentence('the API server answers the HIC\'s next {count:Int} writes to Machines with "{status:Q}"'))
def given_write_faults(ctx: ScenarioContext, hic: HicUnderTest, count: int, status: str) -> None:
    assert status in FAULTS, f"a fault is one of {', '.join(FAULTS)}, not {status!r}"
    add_fault(ctx, {**FAULTS[status], "users": [hic.user], "verbs": WRITE_VERBS, "resource": MACHINES_RESOURCE,
                    "count": count})


@given(sentence('the API server drops the HIC\'s next watch of Machines after {events:Int} event and answers its '
                'next watch from a resourceVersion with "410 Expired"'))
def given_watch_faults(ctx: ScenarioContext, hic: HicUnderTest, events: int) -> None:
    add_fault(ctx, {"fault": "DropWatch", "users": [hic.user], "resource": MACHINES_RESOURCE, "count": 1,
                    "afterEvents": events})
    add_fault(ctx, {"fault": "Expired", "users": [hic.user], "verbs": ["watch"], "resource": MACHINES_RESOURCE,
                    "count": 1})


@given(sentence("the HIC claims to add its hooks to the Machines it selects"))
def given_hic_adds_hooks(hic: HicUnderTest) -> None:
    if not hic.config.adds_hooks:
        # Reported as not applicable (a capability the HIC does not claim), never as skipped or passed.
        pytest.skip(NOT_APPLICABLE_SKIP + "the HIC's config does not claim to add its hooks (addsHooks: false)")


@given(sentence("the HIC manages a hook at each lifecycle point"))
def given_hic_at_each_point(hic: HicUnderTest) -> None:
    missing = sorted(set(LIFECYCLE_POINTS) - {h.point for h in hic.config.hooks})
    if missing:
        # A capability the HIC does not claim: not applicable, never skipped or passed (MD_HIC_006 is a MAY).
        pytest.skip(NOT_APPLICABLE_SKIP + f"the HIC's config claims no hook at {', '.join(missing)}")


@given(sentence("the HIC manages a pre-drain hook"))
def given_hic_pre_drain(hic: HicUnderTest) -> None:
    if not _own_hooks_at(hic, "pre-drain"):
        pytest.skip(NOT_APPLICABLE_SKIP + "the HIC's config claims no pre-drain hook")


@given(sentence('the HIC has finished with the Machine "{name:Q}"'))
def given_hic_finished(ctx: ScenarioContext, capi: CapiScene, hic: HicUnderTest, name: str) -> None:
    check = lambda: _hooks_gone(ctx, capi, hic, name)  # noqa: E731
    assert ctx.wait_until(check, 600.0) or hic.grace(check), (
        f"the HIC did not remove its hooks from the Machine {name}; {trail(ctx, hic, name)}")


# -- When --------------------------------------------------------------------------------------------


@when(sentence("the hook implementing controller under test is started again"))
def when_hic_started(ctx: ScenarioContext, hic: HicUnderTest) -> None:
    ctx.act(hic.start)


@when(sentence("the hook implementing controller under test is killed and started again"))
def when_hic_restarted(ctx: ScenarioContext, hic: HicUnderTest) -> None:
    ctx.act(hic.restart)


@when(sentence('the Machines "{prefix:Q}-1" to "{prefix2:Q}-{last:Int}" are deleted'))
def when_many_deleted(ctx: ScenarioContext, capi: CapiScene, prefix: str, prefix2: str, last: int) -> None:
    def delete_all() -> None:
        for name in _names(prefix, last):
            ctx.client.delete(CLUSTER_API_VERSION, MACHINE_KIND, name, capi.namespace)
    ctx.act(delete_all)


@when(sentence('a Machine "{name:Q}" that the HIC selects is created'))
def when_selected_machine_created(ctx: ScenarioContext, capi: CapiScene, hic: HicUnderTest, name: str) -> None:
    def create() -> None:
        for obj in machine_objects(capi, _spec_for(hic, name, {})):
            ctx.client.create(obj)
    ctx.act(create)


# -- Then --------------------------------------------------------------------------------------------


def _removal(ctx: ScenarioContext, hic: HicUnderTest, name: str, key: str) -> dict[str, Any] | None:
    """The write that removed ``key`` from the Machine (or removed the Machine while it still had it)."""
    for record in ctx.scene.audit(resource=MACHINES_RESOURCE, name=name):
        if key in _annotations(record["old"]) and key not in _annotations(record["new"]) and record["new"] is not None:
            return record
    return None


def _hic_removal(ctx: ScenarioContext, hic: HicUnderTest, name: str, key: str) -> dict[str, Any]:
    """The write that removed the HIC's hook ``key``, asserted to be the HIC's own and made once the
    Machine was being deleted."""
    record = _removal(ctx, hic, name, key)
    assert record is not None, f"nobody removed the hook {key} from the Machine {name}; {trail(ctx, hic, name)}"
    assert record["user"] == hic.user, (
        f"the hook {key} was removed from the Machine {name} by {record['user']}, not by the HIC; "
        f"{trail(ctx, hic, name)}")
    assert _deleting(record["old"]), (
        f"the HIC removed its hook {key} from the Machine {name} before the Machine was being deleted "
        f"(write #{record['seq']} at {record['time']}); {trail(ctx, hic, name)}")
    return record


def _hooks_gone(ctx: ScenarioContext, capi: CapiScene, hic: HicUnderTest, name: str) -> bool:
    machine = _machine(ctx, capi, name)
    return machine is None or not set(_own_hooks(hic)) & set(_annotations(machine))


def _check_removals(ctx: ScenarioContext, capi: CapiScene, hic: HicUnderTest, name: str) -> None:
    """Each of the HIC's hooks was removed by the HIC, once the Machine was being deleted and its work was done."""
    deleted_at = None
    for record in machine_records(ctx, capi, name):
        stamp = ((record["new"] or {}).get("metadata") or {}).get("deletionTimestamp")
        if stamp:
            deleted_at = parse_rfc3339(stamp)
            break
    for key in _own_hooks(hic):
        record = _hic_removal(ctx, hic, name, key)
        removed_at = parse_rfc3339(record["time"])
        if deleted_at is not None and hic.config.work_seconds:
            assert removed_at >= deleted_at + hic.config.work_seconds, (
                f"the HIC removed its hook {key} {removed_at - deleted_at:.0f} s after the Machine {name} was "
                f"marked for deletion, before its {hic.config.work_seconds:.0f} s of work could be done; "
                f"{trail(ctx, hic, name)}")


@then(sentence('within {minutes:Int} minutes the HIC has removed its hooks from the Machine "{name:Q}"'))
def then_hooks_removed(ctx: ScenarioContext, capi: CapiScene, hic: HicUnderTest, minutes: int, name: str) -> None:
    check = lambda: _hooks_gone(ctx, capi, hic, name)  # noqa: E731
    done = ctx.wait_until(check, minutes * 60.0) or hic.grace(check)
    assert done, (f"the HIC did not remove its hooks from the Machine {name} within {minutes} minutes; "
        f"{trail(ctx, hic, name)}")
    _check_removals(ctx, capi, hic, name)


@then(sentence('within {minutes:Int} minutes the Machines "{prefix:Q}-1" to "{prefix2:Q}-{last:Int}" are gone'))
def then_many_gone(ctx: ScenarioContext, capi: CapiScene, hic: HicUnderTest, minutes: int, prefix: str,
                   prefix2: str, last: int) -> None:
    names = _names(prefix, last)
    check = lambda: all(_machine(ctx, capi, n) is None for n in names)  # noqa: E731
    done = ctx.wait_until(check, minutes * 60.0) or hic.grace(check)
    left = [n for n in names if _machine(ctx, capi, n) is not None]
    assert done, f"the Machines {', '.join(left)} are still there after {minutes} minutes; {trail(ctx, hic)}"
    for name in names:
        _check_removals(ctx, capi, hic, name)


@then(sentence('the Machine "{name:Q}" still carries the HIC\'s hooks'))
def then_still_hooks(ctx: ScenarioContext, capi: CapiScene, hic: HicUnderTest, name: str) -> None:
    machine = _machine(ctx, capi, name)
    assert machine is not None, f"the Machine {name} is gone; {trail(ctx, hic, name)}"
    missing = sorted(set(_own_hooks(hic)) - set(_annotations(machine)))
    assert not missing, f"the Machine {name} lost the hooks {', '.join(missing)}; {trail(ctx, hic, name)}"


@then(sentence('within {seconds:Int} seconds the Machine "{name:Q}" carries the HIC\'s hooks'))
def then_hooks_added(ctx: ScenarioContext, capi: CapiScene, hic: HicUnderTest, seconds: int, name: str) -> None:
    check = lambda: set(_own_hooks(hic)) <= set(_annotations(_machine(ctx, capi, name)))  # noqa: E731
    done = ctx.wait_until(check, float(seconds)) or hic.grace(check)
    assert done, (f"the HIC did not add its hooks to the Machine {name} within {seconds} seconds; "
        f"{trail(ctx, hic, name)}")
    values = _annotations(_machine(ctx, capi, name))
    wrong = {k: values[k] for k, v in _own_hooks(hic).items() if values.get(k) != v}
    assert not wrong, (f"the HIC's hooks on the Machine {name} do not carry their owners: {wrong}; "
        f"{trail(ctx, hic, name)}")


@then(sentence('the Machine "{name:Q}" still carries another owner\'s hooks and waits for them'))
def then_other_hooks_kept(ctx: ScenarioContext, capi: CapiScene, hic: HicUnderTest, name: str) -> None:
    machine = _machine(ctx, capi, name)
    assert machine is not None, (f"the Machine {name} is gone although another owner's hook held it; "
        f"{trail(ctx, hic, name)}")
    missing = sorted(set(_other_hooks(hic)) - set(_annotations(machine)))
    assert not missing, (f"another owner's hooks {', '.join(missing)} were removed from the Machine {name}; "
        f"{trail(ctx, hic, name)}")
    assert MACHINE_FINALIZER in (machine["metadata"].get("finalizers") or []), (
        f"the Machine {name} lost its finalizer; {trail(ctx, hic, name)}")


@then(sentence('the HIC wrote nothing to the Machine "{name:Q}" but its own hooks'))
def then_only_own_hooks_added(ctx: ScenarioContext, capi: CapiScene, hic: HicUnderTest, name: str) -> None:
    for record in hic_writes(ctx, hic, name):
        before, after = _annotations(record["old"]), _annotations(record["new"])
        added = set(after) - set(before)
        others = (set(before) - set(after)) | {k for k in set(before) & set(after) if before[k] != after[k]}
        fine = (not others and added <= set(_own_hooks(hic)) and not _other_changes(record["old"], record["new"]))
        assert fine, (f"the HIC wrote to the Machine {name} more than its own hooks: "
            f"{describe_write(hic.config, record)}; {trail(ctx, hic, name)}")


@then(sentence("the HIC removed no hook it does not manage"))
def then_no_foreign_removal(ctx: ScenarioContext, hic: HicUnderTest) -> None:
    for record in hic_writes(ctx, hic):
        removed = set(_annotations(record["old"])) - set(_annotations(record["new"]))
        foreign = sorted(k for k in removed if _hook_of(hic.config, k) is None)
        assert not foreign, (f"the HIC removed {', '.join(foreign)}, which it does not manage: "
            f"{describe_write(hic.config, record)}; {trail(ctx, hic)}")


@then(sentence('the HIC made no further write to the Machine "{name:Q}"'))
def then_no_further_write(ctx: ScenarioContext, hic: HicUnderTest, name: str) -> None:
    ctx.scene.advance(60)
    later = hic_writes(ctx, hic, name, since=ctx.mark)
    assert not later, (f"the HIC wrote to the Machine {name} again after it was restarted: " + "; ".join(
        describe_write(hic.config, r) for r in later))


@then(sentence('the HIC removed its pre-drain hooks from the Machine "{name:Q}" once it was being deleted, before its '
               'Node was cordoned'))
def then_pre_drain_removed_before_cordon(ctx: ScenarioContext, capi: CapiScene, hic: HicUnderTest, name: str) -> None:
    """Seed 000 "Determining when to take action": a pre-drain HIC acts once the Machine has a
    deletionTimestamp. Judged on the HIC's own removal write, against the cordon the machine controller wrote."""
    node = node_of(capi, name)
    cordons = [r["seq"] for r in records_of(ctx, "Node", node)
               if ((r["new"] or {}).get("spec") or {}).get("unschedulable")]
    for key in _own_hooks_at(hic, "pre-drain"):
        record = _hic_removal(ctx, hic, name, key)
        assert not cordons or cordons[0] > record["seq"], (
            f"the Node {node} was cordoned (#{cordons[0]}) before the HIC removed its pre-drain hook {key} "
            f"(#{record['seq']}); {trail(ctx, hic, name)}")
