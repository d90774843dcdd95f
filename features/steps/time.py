"""Sentences about time passing: the world's virtual clock moves and the world reacts."""

from __future__ import annotations

from pytest_bdd import when

from features.steps.context import ScenarioContext, sentence


@when(sentence("{seconds:Int} seconds pass"))
def when_seconds_pass(ctx: ScenarioContext, seconds: int) -> None:
    ctx.mark = ctx.scene.audit_size()
    ctx.scene.advance(seconds)


@when(sentence("{minutes:Int} minutes pass"))
def when_minutes_pass(ctx: ScenarioContext, minutes: int) -> None:
    ctx.mark = ctx.scene.audit_size()
    ctx.scene.advance(minutes * 60)
