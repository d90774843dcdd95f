"""Sentences about optimistic concurrency and what writes do to an object: a client's stale copy,
writes without a resourceVersion, preconditions, generation, and spec/status separation."""

from __future__ import annotations

from typing import Any

from pytest_bdd import given, then, when

from features.steps.context import ObjectRef, ScenarioContext, labels_of, sentence
from features.steps.objects import minimal
from harness.kube.names.apiextensions import APIEXTENSIONS_V1

CONFLICT_PRECONDITION_MESSAGE = (
    'Operation cannot be fulfilled on {resource} "{name}": the ResourceVersion in the precondition ({read}) does not '
    "match the ResourceVersion in record ({current}). The object might have been modified"
)


def _key(target: ObjectRef) -> tuple[str, str | None, str]:
    return (target.kind, target.namespace, target.name)


def _copy(ctx: ScenarioContext, kind: str, ref: str) -> dict[str, Any]:
    target = ctx.ref(kind, ref)
    assert _key(target) in ctx.copies, f"the client holds no copy of {target}"
    return ctx.copies[_key(target)]


def _deployment(ctx: ScenarioContext, ref: str) -> dict[str, Any]:
    return ctx.get(ctx.ref("Deployment", ref))


# -- Given -------------------------------------------------------------------------------------------


@given(sentence('a client has read the {kind:Kind} "{ref:Q}"'))
def given_client_read(ctx: ScenarioContext, kind: str, ref: str) -> None:
    target = ctx.ref(kind, ref)
    ctx.copies[_key(target)] = ctx.get(target)


@given(sentence('a client has a {kind:Kind} "{ref:Q}" that the cluster does not have'))
def given_client_has_unknown(ctx: ScenarioContext, kind: str, ref: str) -> None:
    target = ctx.ref(kind, ref)
    assert ctx.find(target) is None, f"{target} exists"
    ctx.copies[_key(target)] = minimal(target)


@given(sentence('the custom resource kind "{kind:Kind}" of "{api_version:Q}" is served, with a status subresource'))
def given_custom_kind(ctx: ScenarioContext, kind: str, api_version: str) -> None:
    group, _, version = api_version.partition("/")
    plural = kind.lower() + "s"
    ctx.setup(lambda: ctx.client.create({
        "apiVersion": APIEXTENSIONS_V1, "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group, "scope": "Namespaced",
            "names": {"kind": kind, "plural": plural, "singular": kind.lower(), "listKind": f"{kind}List"},
            "versions": [{
                "name": version, "served": True, "storage": True, "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
            }],
        },
    }))
    ctx.kinds[kind] = api_version


# -- When --------------------------------------------------------------------------------------------


@when(sentence('the client writes its copy of the {kind:Kind} "{ref:Q}" back'))
def when_copy_written(ctx: ScenarioContext, kind: str, ref: str) -> None:
    copy = _copy(ctx, kind, ref)
    ctx.act(lambda: ctx.client.update(copy))


@when(sentence(
    'the client writes its copy of the {kind:Kind} "{ref:Q}" back without a resourceVersion, labelled "{labels:Q}"'
))
def when_copy_written_unconditionally(ctx: ScenarioContext, kind: str, ref: str, labels: str) -> None:
    copy = dict(_copy(ctx, kind, ref))
    copy["metadata"] = {k: v for k, v in copy["metadata"].items() if k != "resourceVersion"}
    copy["metadata"]["labels"] = labels_of(labels)
    ctx.act(lambda: ctx.client.update(copy))


@when(sentence('the client deletes the {kind:Kind} "{ref:Q}" on the condition that it is unchanged'))
def when_deleted_on_condition(ctx: ScenarioContext, kind: str, ref: str) -> None:
    target = ctx.ref(kind, ref)
    read = _copy(ctx, kind, ref)["metadata"]["resourceVersion"]
    ctx.act(lambda: ctx.client.delete(target.api_version, kind, target.name, target.namespace,
                                      preconditions={"resourceVersion": read}))


@when(sentence('the Deployment "{ref:Q}" is changed to {replicas:Int} replicas'))
def when_deployment_scaled(ctx: ScenarioContext, ref: str, replicas: int) -> None:
    deployment = _deployment(ctx, ref)
    deployment["spec"]["replicas"] = replicas
    ctx.act(lambda: ctx.client.update(deployment))


@when(sentence('the Deployment "{ref:Q}" reports {replicas:Int} replicas in its status'))
def when_deployment_reports(ctx: ScenarioContext, ref: str, replicas: int) -> None:
    deployment = _deployment(ctx, ref)
    deployment["status"] = {**(deployment.get("status") or {}), "replicas": replicas}
    ctx.act(lambda: ctx.client.update_status(deployment))


def _with_replicas(deployment: dict[str, Any], spec: int, status: int) -> dict[str, Any]:
    deployment["spec"]["replicas"] = spec
    deployment["status"] = {**(deployment.get("status") or {}), "replicas": status}
    return deployment


@when(sentence(
    'a client writes the Deployment "{ref:Q}" through the object with {spec:Int} replicas in its spec and '
    "{status:Int} in its status"
))
def when_written_through_object(ctx: ScenarioContext, ref: str, spec: int, status: int) -> None:
    deployment = _with_replicas(_deployment(ctx, ref), spec, status)
    ctx.act(lambda: ctx.client.update(deployment))


@when(sentence(
    'a client writes the Deployment "{ref:Q}" through its status with {spec:Int} replicas in its spec and '
    "{status:Int} in its status"
))
def when_written_through_status(ctx: ScenarioContext, ref: str, spec: int, status: int) -> None:
    deployment = _with_replicas(_deployment(ctx, ref), spec, status)
    ctx.act(lambda: ctx.client.update_status(deployment))


@when(sentence('a Deployment "{ref:Q}" with {replicas:Int} replicas in its status is created'))
def when_created_with_status(ctx: ScenarioContext, ref: str, replicas: int) -> None:
    deployment = minimal(ctx.ref("Deployment", ref))
    deployment["status"] = {"replicas": replicas}
    ctx.act(lambda: ctx.client.create(deployment))


# -- Then --------------------------------------------------------------------------------------------


@then('the write is refused with 409 "Conflict", naming the resourceVersion the client read and the current one')
def then_precondition_conflict(ctx: ScenarioContext) -> None:
    assert ctx.error is not None, f"the write was accepted: {ctx.result}"
    assert len(ctx.copies) == 1, "the sentence is about the one copy the client holds"
    (kind, namespace, name), copy = next(iter(ctx.copies.items()))
    target = ctx.ref(kind, f"{namespace}/{name}" if namespace else name)
    current = ctx.get(target)["metadata"]["resourceVersion"]
    served = next(r for r in ctx.client.discover() if r["kind"] == kind and r["apiVersion"] == target.api_version)
    qualified = f"{served['plural']}.{served['group']}" if served["group"] else served["plural"]
    message = CONFLICT_PRECONDITION_MESSAGE.format(resource=qualified, name=name,
                                                   read=copy["metadata"]["resourceVersion"], current=current)
    actual = (ctx.error.code, ctx.error.reason, ctx.error.message)
    assert actual == (409, "Conflict", message), f"refused with {actual}, expected {(409, 'Conflict', message)}"


@then(sentence('the Deployment "{ref:Q}" has {spec:Int} replicas in its spec and {status:Int} in its status'))
def then_deployment_replicas(ctx: ScenarioContext, ref: str, spec: int, status: int) -> None:
    deployment = _deployment(ctx, ref)
    actual = (deployment["spec"].get("replicas"), (deployment.get("status") or {}).get("replicas", 0))
    assert actual == (spec, status), f"spec and status replicas are {actual}, expected {(spec, status)}"


@then(sentence('the {kind:Kind} "{ref:Q}" still has the resourceVersion the client read'))
def then_rv_kept(ctx: ScenarioContext, kind: str, ref: str) -> None:
    target = ctx.ref(kind, ref)
    read = _copy(ctx, kind, ref)["metadata"]["resourceVersion"]
    current = ctx.get(target)["metadata"]["resourceVersion"]
    assert current == read, f"the resourceVersion moved from {read} to {current}"
