"""Sentences about PodDisruptionBudgets: their spec ("minAvailable 2", "maxUnavailable 34%"), the status
the disruption controller (or a test) writes, and what that status reports."""

from __future__ import annotations

import re
from typing import Any

from pytest_bdd import given, then, when

from features.steps.context import ScenarioContext, labels_of, sentence
from harness.kube.names.policy import PDB_KIND, POLICY_V1
from harness.kube.time import rfc3339

BUDGET_FIELDS = ("minAvailable", "maxUnavailable")
_INT = re.compile(r"-?\d+")


def budget(text: str) -> dict[str, Any]:
    """``minAvailable 2``, ``maxUnavailable 34%`` or both joined by ``and``, as PDB spec fields."""
    spec: dict[str, Any] = {}
    for part in text.split(" and "):
        field, _, value = part.strip().partition(" ")
        assert field in BUDGET_FIELDS, f"a budget is minAvailable or maxUnavailable, not {part!r}"
        spec[field] = int(value) if _INT.fullmatch(value) else value
    return spec


def _manifest(ctx: ScenarioContext, ref: str, spec: dict[str, Any]) -> dict[str, Any]:
    target = ctx.ref(PDB_KIND, ref)
    return {"apiVersion": POLICY_V1, "kind": PDB_KIND, "metadata": {"name": target.name, "namespace": target.namespace},
            "spec": spec}


def _selecting(text: str, selector: str) -> dict[str, Any]:
    return {**budget(text), "selector": {"matchLabels": labels_of(selector)}}


def _status(ctx: ScenarioContext, ref: str) -> dict[str, Any]:
    return ctx.get(ctx.ref(PDB_KIND, ref)).get("status") or {}


def _write_status(ctx: ScenarioContext, ref: str, **changes: Any) -> None:
    """Write the budget's status as the disruption controller would: observed, with ``changes``."""
    pdb = ctx.get(ctx.ref(PDB_KIND, ref))
    status = dict(pdb.get("status") or {})
    status["observedGeneration"] = pdb["metadata"].get("generation")
    status.update(changes)
    pdb["status"] = status
    ctx.setup(lambda: ctx.client.update_status(pdb))


# -- Given -------------------------------------------------------------------------------------------


@given(sentence('a PodDisruptionBudget "{ref:Q}" with {spec} selecting "{selector:Q}"'))
def given_pdb(ctx: ScenarioContext, ref: str, spec: str, selector: str) -> None:
    ctx.setup(lambda: ctx.client.create(_manifest(ctx, ref, _selecting(spec, selector))))


@given(sentence(
    'a PodDisruptionBudget "{ref:Q}" with {spec} selecting "{selector:Q}" and unhealthyPodEvictionPolicy {policy:Word}'
))
def given_pdb_with_policy(ctx: ScenarioContext, ref: str, spec: str, selector: str, policy: str) -> None:
    ctx.setup(lambda: ctx.client.create(
        _manifest(ctx, ref, {**_selecting(spec, selector), "unhealthyPodEvictionPolicy": policy})))


@given(sentence('a PodDisruptionBudget "{ref:Q}" with {spec} and no selector'))
def given_pdb_without_selector(ctx: ScenarioContext, ref: str, spec: str) -> None:
    ctx.setup(lambda: ctx.client.create(_manifest(ctx, ref, budget(spec))))


@given(sentence('a PodDisruptionBudget "{ref:Q}" with {spec} and an empty selector'))
def given_pdb_with_empty_selector(ctx: ScenarioContext, ref: str, spec: str) -> None:
    ctx.setup(lambda: ctx.client.create(_manifest(ctx, ref, {**budget(spec), "selector": {}})))


def _change(ctx: ScenarioContext, ref: str, spec: str) -> dict[str, Any]:
    pdb = ctx.get(ctx.ref(PDB_KIND, ref))
    for field in BUDGET_FIELDS:
        pdb["spec"].pop(field, None)
    pdb["spec"].update(budget(spec))
    return ctx.client.update(pdb)


@given(sentence('the PodDisruptionBudget "{ref:Q}" is changed to {spec}'))
def given_pdb_changed(ctx: ScenarioContext, ref: str, spec: str) -> None:
    ctx.setup(lambda: _change(ctx, ref, spec))


@given(sentence('the status of the PodDisruptionBudget "{ref:Q}" allows {allowed:Int} disruptions'))
def given_status_allows(ctx: ScenarioContext, ref: str, allowed: int) -> None:
    _write_status(ctx, ref, disruptionsAllowed=allowed)


@given(sentence('the status of the PodDisruptionBudget "{ref:Q}" lists {count:Int} disrupted Pods'))
def given_status_lists_disrupted(ctx: ScenarioContext, ref: str, count: int) -> None:
    now = rfc3339(ctx.scene.now())
    _write_status(ctx, ref, disruptedPods={f"evicted-{i}": now for i in range(count)})


@given(sentence('the PodDisruptionBudget "{ref:Q}" has recorded the Pod "{pod:Q}" as disrupted'))
def given_recorded_disruption(ctx: ScenarioContext, ref: str, pod: str) -> None:
    disrupted = dict(_status(ctx, ref).get("disruptedPods") or {})
    disrupted[pod] = rfc3339(ctx.scene.now())
    _write_status(ctx, ref, disruptedPods=disrupted)


# -- When --------------------------------------------------------------------------------------------


@when(sentence('a PodDisruptionBudget "{ref:Q}" with {spec} selecting "{selector:Q}" is created'))
def when_pdb_created(ctx: ScenarioContext, ref: str, spec: str, selector: str) -> None:
    manifest = _manifest(ctx, ref, _selecting(spec, selector))
    ctx.act(lambda: ctx.client.create(manifest))


@when(sentence('the PodDisruptionBudget "{ref:Q}" is changed to {spec}'))
def when_pdb_changed(ctx: ScenarioContext, ref: str, spec: str) -> None:
    ctx.act(lambda: _change(ctx, ref, spec))


# -- Then --------------------------------------------------------------------------------------------


@then(sentence(
    'the PodDisruptionBudget "{ref:Q}" reports expectedPods {expected:Int}, desiredHealthy {desired:Int}, '
    'currentHealthy {healthy:Int} and disruptionsAllowed {allowed:Int}'
))
def then_reports(ctx: ScenarioContext, ref: str, expected: int, desired: int, healthy: int, allowed: int) -> None:
    status = _status(ctx, ref)
    actual = {k: status.get(k) for k in ("expectedPods", "desiredHealthy", "currentHealthy", "disruptionsAllowed")}
    wanted = {"expectedPods": expected, "desiredHealthy": desired, "currentHealthy": healthy,
              "disruptionsAllowed": allowed}
    assert actual == wanted, f"the budget reports {actual}, expected {wanted} (status: {status})"


@then(sentence('the PodDisruptionBudget "{ref:Q}" allows {allowed:Int} disruptions'))
@then(sentence('the PodDisruptionBudget "{ref:Q}" allows {allowed:Int} disruption'))
def then_allows(ctx: ScenarioContext, ref: str, allowed: int) -> None:
    status = _status(ctx, ref)
    assert status.get("disruptionsAllowed") == allowed, (
        f"disruptionsAllowed is {status.get('disruptionsAllowed')!r}, expected {allowed} (status: {status})"
    )


@then(sentence('the PodDisruptionBudget "{ref:Q}" records the Pod "{pod:Q}" as disrupted'))
def then_records_disrupted(ctx: ScenarioContext, ref: str, pod: str) -> None:
    disrupted = _status(ctx, ref).get("disruptedPods") or {}
    assert pod in disrupted, f"disruptedPods is {disrupted}, without {pod!r}"


@then(sentence('the PodDisruptionBudget "{ref:Q}" records no disrupted Pods'))
def then_records_none(ctx: ScenarioContext, ref: str) -> None:
    disrupted = _status(ctx, ref).get("disruptedPods") or {}
    assert not disrupted, f"disruptedPods is {disrupted}"


@then(sentence('the PodDisruptionBudget "{ref:Q}" has observed its generation'))
def then_observed(ctx: ScenarioContext, ref: str) -> None:
    pdb = ctx.get(ctx.ref(PDB_KIND, ref))
    observed = (pdb.get("status") or {}).get("observedGeneration")
    assert observed == pdb["metadata"].get("generation"), (
        f"observedGeneration {observed!r}, generation {pdb['metadata'].get('generation')!r}"
    )


@then(sentence(
    'the PodDisruptionBudget "{ref:Q}" has generation {generation:Int} and observedGeneration {observed:Int}'
))
def then_generations(ctx: ScenarioContext, ref: str, generation: int, observed: int) -> None:
    pdb = ctx.get(ctx.ref(PDB_KIND, ref))
    actual = (pdb["metadata"].get("generation"), (pdb.get("status") or {}).get("observedGeneration"))
    assert actual == (generation, observed), f"generation and observedGeneration are {actual}"
