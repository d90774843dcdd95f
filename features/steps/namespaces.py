"""Sentences about Namespaces: their lifecycle phase, their finalizer, and being held in Terminating."""

from __future__ import annotations

from pytest_bdd import given, then

from features.steps.context import ScenarioContext, sentence


@given(sentence(
    'a Namespace "{name:Q}" held in Terminating by a ConfigMap "{ref:Q}" with the finalizer "{finalizer:Q}"'
))
def given_terminating_namespace(ctx: ScenarioContext, name: str, ref: str, finalizer: str) -> None:
    ctx.setup(lambda: ctx.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}))
    content = ctx.ref("ConfigMap", ref)
    ctx.setup(lambda: ctx.client.create({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": content.name, "namespace": content.namespace, "finalizers": [finalizer]},
    }))
    ctx.setup(lambda: ctx.client.delete("v1", "Namespace", name))
    phase = (ctx.get(ctx.ref("Namespace", name)).get("status") or {}).get("phase")
    assert phase == "Terminating", f"the Namespace {name} is {phase}, not Terminating"


@then(sentence('the Namespace "{name:Q}" is in phase "{phase:Q}"'))
def then_namespace_phase(ctx: ScenarioContext, name: str, phase: str) -> None:
    namespace = ctx.get(ctx.ref("Namespace", name))
    actual = (namespace.get("status") or {}).get("phase")
    assert actual == phase, f"the Namespace {name} is in phase {actual!r}, expected {phase!r}"


@then(sentence('the Namespace "{name:Q}" has the spec finalizer "{finalizer:Q}"'))
def then_namespace_spec_finalizer(ctx: ScenarioContext, name: str, finalizer: str) -> None:
    namespace = ctx.get(ctx.ref("Namespace", name))
    finalizers = (namespace.get("spec") or {}).get("finalizers") or []
    assert finalizer in finalizers, f"spec.finalizers of the Namespace {name} are {finalizers}"
