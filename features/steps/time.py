"""Sentences about time passing: the world's virtual clock moves and the world reacts."""

from __future__ import annotations

from pytest_bdd import given, when

from features.steps.context import ScenarioContext, sentence


@when(sentence("{seconds:Int} seconds pass"))
def when_seconds_pass(ctx: ScenarioContext, seconds: int) -> None:
    ctx.mark = ctx.scene.audit_size()
    ctx.scene.advance(seconds)


@when(sentence("{minutes:Int} minutes pass"))
def when_minutes_pass(ctx: ScenarioContext, minutes: int) -> None:
    ctx.mark = ctx.scene.audit_size()
    ctx.scene.advance(minutes * 60)


@when(sentence("{hours:Int} hours pass"))
def when_hours_pass(ctx: ScenarioContext, hours: int) -> None:
    ctx.mark = ctx.scene.audit_size()
    ctx.scene.advance(hours * 3600)


@when(sentence("{days:Int} days pass"))
def when_days_pass(ctx: ScenarioContext, days: int) -> None:
    ctx.mark = ctx.scene.audit_size()
    ctx.scene.advance(days * 86400)


@given(sentence("{days:Int} days have passed"))
def given_days_passed(ctx: ScenarioContext, days: int) -> None:
    ctx.scene.advance(days * 86400)
