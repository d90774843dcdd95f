"""Sentences about evicting Pods through the eviction subresource."""

from __future__ import annotations

from pytest_bdd import then, when

from features.steps.context import ScenarioContext, sentence
from harness.kube.names.core import SYSTEM_USER
from harness.kube.names.policy import PDB_RESOURCE

# The disruption controller's own status writes are not the eviction's.
DISRUPTION_CONTROLLER_USER = SYSTEM_USER.format("disruption")


@when(sentence('the Pod "{ref:Q}" is evicted'))
def when_evicted(ctx: ScenarioContext, ref: str) -> None:
    target = ctx.ref("Pod", ref)
    ctx.act(lambda: ctx.client.evict(target.name, str(target.namespace)))


@when(sentence('the Pod "{ref:Q}" is evicted in dry-run mode'))
def when_evicted_dry_run(ctx: ScenarioContext, ref: str) -> None:
    target = ctx.ref("Pod", ref)
    ctx.act(lambda: ctx.client.evict(target.name, str(target.namespace), dry_run=True))


@when(sentence('the Pod "{ref:Q}" is evicted with a grace period of {grace:Int} seconds'))
def when_evicted_with_grace(ctx: ScenarioContext, ref: str, grace: int) -> None:
    target = ctx.ref("Pod", ref)
    ctx.act(lambda: ctx.client.evict(target.name, str(target.namespace),
                                     delete_options={"gracePeriodSeconds": grace}))


@then(sentence('the eviction did not write the PodDisruptionBudget "{ref:Q}"'))
def then_budget_untouched(ctx: ScenarioContext, ref: str) -> None:
    target = ctx.ref("PodDisruptionBudget", ref)
    writes = [w for w in ctx.writes(resource=PDB_RESOURCE, name=target.name, namespace=str(target.namespace))
              if w["user"] != DISRUPTION_CONTROLLER_USER]
    assert not writes, "the budget was written: " + ", ".join(
        f"{w['verb']} {w['subresource']} by {w['user']}: {(w['new'] or {}).get('status')}" for w in writes
    )
