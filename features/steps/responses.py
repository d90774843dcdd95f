"""Sentences about the API's answer to the scenario's action: accepted, or refused with a code,
reason, message, causes and Retry-After."""

from __future__ import annotations

from typing import Any

from pytest_bdd import then

from features.steps.context import ScenarioContext, sentence

RETRY_AFTER_HEADER = "Retry-After"
CREATED = 201


def _error(ctx: ScenarioContext) -> Any:
    assert ctx.error is not None, f"the request was accepted: {ctx.result}"
    return ctx.error


def _refused(ctx: ScenarioContext, code: int, reason: str) -> None:
    err = _error(ctx)
    assert (err.code, err.reason) == (code, reason), (
        f"refused with {err.code} {err.reason!r} ({err.message!r}), expected {code} {reason!r}"
    )


def _causes(ctx: ScenarioContext) -> list[dict[str, Any]]:
    return list(_error(ctx).details.get("causes") or [])


@then("the write is accepted")
def then_write_accepted(ctx: ScenarioContext) -> None:
    assert ctx.error is None, f"the write was refused: {ctx.error}"


@then("the eviction is accepted")
def then_eviction_accepted(ctx: ScenarioContext) -> None:
    assert ctx.error is None, f"the eviction was refused: {ctx.error}"
    result = ctx.result or {}
    assert (result.get("kind"), result.get("status"), result.get("code")) == ("Status", "Success", CREATED), (
        f"the eviction answered {result}, expected a 201 Success Status"
    )


@then(sentence('the eviction is refused with {code:Int} "{reason:Q}"'))
@then(sentence('the write is refused with {code:Int} "{reason:Q}"'))
def then_refused(ctx: ScenarioContext, code: int, reason: str) -> None:
    _refused(ctx, code, reason)


@then(sentence('the eviction is refused with {code:Int} "{reason:Q}" and the message:'))
@then(sentence('the write is refused with {code:Int} "{reason:Q}" and the message:'))
def then_refused_with_message(ctx: ScenarioContext, code: int, reason: str, docstring: str) -> None:
    _refused(ctx, code, reason)
    message = _error(ctx).message
    assert message == docstring.strip(), f"the message is\n  {message!r}\nexpected\n  {docstring.strip()!r}"


@then(sentence("the eviction is refused with {code:Int} and no reason, with the message:"))
def then_refused_without_reason(ctx: ScenarioContext, code: int, docstring: str) -> None:
    err = _error(ctx)
    assert err.code == code, f"refused with {err.code}, expected {code}"
    assert "reason" not in err.status or not err.status["reason"], f"the refusal has the reason {err.reason!r}"
    assert err.message == docstring.strip(), f"the message is\n  {err.message!r}\nexpected\n  {docstring.strip()!r}"


@then(sentence('the refusal names the cause "{reason:Q}" saying "{message:Q}"'))
def then_cause(ctx: ScenarioContext, reason: str, message: str) -> None:
    causes = _causes(ctx)
    assert {"reason": reason, "message": message} in [
        {"reason": c.get("reason"), "message": c.get("message")} for c in causes
    ], f"the causes are {causes}"


@then(sentence('the refusal names the cause "{reason:Q}" at "{field:Q}" saying "{message:Q}"'))
def then_cause_at_field(ctx: ScenarioContext, reason: str, field: str, message: str) -> None:
    causes = _causes(ctx)
    wanted = {"reason": reason, "message": message, "field": field}
    assert wanted in [{k: c.get(k) for k in wanted} for c in causes], f"the causes are {causes}, expected {wanted}"


@then(sentence('the refusal names the field "{field:Q}" as "{detail:Q}"'))
def then_field_cause(ctx: ScenarioContext, field: str, detail: str) -> None:
    causes = _causes(ctx)
    assert any(c.get("field") == field and str(c.get("message", "")).endswith(detail) for c in causes), (
        f"no cause at {field!r} ending with {detail!r}; the causes are {causes}"
    )


@then(sentence("the refusal asks to retry after {seconds:Int} seconds"))
def then_retry_after(ctx: ScenarioContext, seconds: int) -> None:
    err = _error(ctx)
    assert err.details.get("retryAfterSeconds") == seconds, f"details are {err.details}"
    assert err.headers.get(RETRY_AFTER_HEADER) == str(seconds), f"headers are {err.headers}"


@then("the refusal does not ask to retry later")
def then_no_retry_after(ctx: ScenarioContext) -> None:
    err = _error(ctx)
    assert not err.details.get("retryAfterSeconds"), f"details are {err.details}"
    assert RETRY_AFTER_HEADER not in err.headers, f"headers are {err.headers}"
