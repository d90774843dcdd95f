"""Sentences about objects of any kind: creating, labelling, owning, finalizing and deleting them,
and what can be observed about them afterwards (existence, marks, labels, conditions, events, the
order of writes)."""

from __future__ import annotations

from typing import Any

from pytest_bdd import given, then, when

from features.steps.context import ObjectRef, ScenarioContext, labels_of, sentence
from harness.kube.names.batch import (
    JOB_CONTROLLER_UID_LABEL,
    JOB_NAME_LABEL,
    LEGACY_JOB_CONTROLLER_UID_LABEL,
    LEGACY_JOB_NAME_LABEL,
)
from harness.kube.names.core import PAUSE_IMAGE
from harness.kube.names.meta import PROPAGATION_FOREGROUND, PROPAGATION_ORPHAN

# The sentences' words for writes, as the audit trail records them: (verb, subresource).
WRITE_WORDS: dict[str, tuple[str, str]] = {
    "creation": ("create", ""),
    "update": ("update", ""),
    "status update": ("update", "status"),
    "patch": ("patch", ""),
    "deletion": ("delete", ""),
}


def minimal(ref: ObjectRef, labels: dict[str, str] | None = None) -> dict[str, Any]:
    """The smallest valid object of ``ref``'s kind: what a sentence means by "a ConfigMap"."""
    meta: dict[str, Any] = {"name": ref.name}
    if ref.namespace is not None:
        meta["namespace"] = ref.namespace
    if labels:
        meta["labels"] = dict(labels)
    obj: dict[str, Any] = {"apiVersion": ref.api_version, "kind": ref.kind, "metadata": meta}
    own = {"app": ref.name}
    if ref.kind == "Service":
        obj["spec"] = {"ports": [{"port": 80}], "selector": own}
    elif ref.kind in ("Deployment", "ReplicaSet", "StatefulSet"):
        obj["spec"] = {
            "replicas": 1,
            "selector": {"matchLabels": own},
            "template": {"metadata": {"labels": own},
                         "spec": {"containers": [{"name": "app", "image": PAUSE_IMAGE}]}},
        }
    elif ref.kind == "PodDisruptionBudget":
        obj["spec"] = {"minAvailable": 1, "selector": {"matchLabels": own}}
    elif ref.kind not in ("ConfigMap", "Secret", "Namespace"):
        obj["spec"] = {}
    return obj


def owner_reference(owner: dict[str, Any], *, block: bool = False) -> dict[str, Any]:
    """An ownerReference naming ``owner`` (not as controller)."""
    ref = {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
           "uid": owner["metadata"]["uid"]}
    if block:
        ref["blockOwnerDeletion"] = True
    return ref


def _create(ctx: ScenarioContext, obj: dict[str, Any]) -> dict[str, Any]:
    return ctx.client.create(obj)


def _delete(ctx: ScenarioContext, ref: ObjectRef, policy: str | None = None) -> dict[str, Any]:
    return ctx.client.delete(ref.api_version, ref.kind, ref.name, ref.namespace, propagation_policy=policy)


def _set_finalizers(ctx: ScenarioContext, ref: ObjectRef, finalizers: list[str]) -> dict[str, Any]:
    obj = ctx.get(ref)
    return ctx.client.patch(ref.api_version, ref.kind, ref.name,
                            {"metadata": {"finalizers": finalizers or None,
                                          "resourceVersion": obj["metadata"]["resourceVersion"]}},
                            namespace=ref.namespace)


def _relabel(ctx: ScenarioContext, ref: ObjectRef, labels: str) -> dict[str, Any]:
    obj = ctx.get(ref)
    obj["metadata"]["labels"] = labels_of(labels)
    return ctx.client.update(obj)


def _owned(ctx: ScenarioContext, kind: str, ref: str, owners: list[tuple[str, str]], block: bool) -> dict[str, Any]:
    dependent = minimal(ctx.ref(kind, ref))
    dependent["metadata"]["ownerReferences"] = [
        owner_reference(ctx.get(ctx.ref(owner_kind, owner)), block=block) for owner_kind, owner in owners
    ]
    return dependent


# -- Given -------------------------------------------------------------------------------------------


@given(sentence('a {kind:Kind} "{ref:Q}"'))
def given_object(ctx: ScenarioContext, kind: str, ref: str) -> None:
    ctx.setup(lambda: _create(ctx, minimal(ctx.ref(kind, ref))))


@given(sentence('a {kind:Kind} "{ref:Q}" labelled "{labels:Q}"'))
def given_labelled_object(ctx: ScenarioContext, kind: str, ref: str, labels: str) -> None:
    ctx.setup(lambda: _create(ctx, minimal(ctx.ref(kind, ref), labels_of(labels))))


@given(sentence('a {kind:Kind} "{ref:Q}" with the finalizer "{finalizer:Q}"'))
def given_object_with_finalizer(ctx: ScenarioContext, kind: str, ref: str, finalizer: str) -> None:
    obj = minimal(ctx.ref(kind, ref))
    obj["metadata"]["finalizers"] = [finalizer]
    ctx.setup(lambda: _create(ctx, obj))


@given(sentence('a {kind:Kind} "{ref:Q}" with the finalizers "{first:Q}" and "{second:Q}"'))
def given_object_with_finalizers(ctx: ScenarioContext, kind: str, ref: str, first: str, second: str) -> None:
    obj = minimal(ctx.ref(kind, ref))
    obj["metadata"]["finalizers"] = [first, second]
    ctx.setup(lambda: _create(ctx, obj))


@given(sentence('a {kind:Kind} "{ref:Q}" owned by the {owner_kind:Kind} "{owner:Q}" and blocking its deletion'))
def given_blocking_dependent(ctx: ScenarioContext, kind: str, ref: str, owner_kind: str, owner: str) -> None:
    ctx.setup(lambda: _create(ctx, _owned(ctx, kind, ref, [(owner_kind, owner)], block=True)))


@given(sentence('a {kind:Kind} "{ref:Q}" owned by the {owner_kind:Kind}s "{first:Q}" and "{second:Q}"'))
def given_object_with_two_owners(
    ctx: ScenarioContext, kind: str, ref: str, owner_kind: str, first: str, second: str
) -> None:
    ctx.setup(lambda: _create(ctx, _owned(ctx, kind, ref, [(owner_kind, first), (owner_kind, second)], block=False)))


@given(sentence('the {kind:Kind} "{ref:Q}" has the finalizer "{finalizer:Q}"'))
def given_finalizer_added(ctx: ScenarioContext, kind: str, ref: str, finalizer: str) -> None:
    target = ctx.ref(kind, ref)
    current = list(ctx.get(target)["metadata"].get("finalizers") or [])
    if finalizer not in current:
        ctx.setup(lambda: _set_finalizers(ctx, target, [*current, finalizer]))


@given(sentence('the {kind:Kind} "{ref:Q}" has been deleted'))
def given_deleted(ctx: ScenarioContext, kind: str, ref: str) -> None:
    ctx.setup(lambda: _delete(ctx, ctx.ref(kind, ref)))


@given(sentence('the {kind:Kind} "{ref:Q}" has been relabelled "{labels:Q}"'))
def given_relabelled(ctx: ScenarioContext, kind: str, ref: str, labels: str) -> None:
    ctx.setup(lambda: _relabel(ctx, ctx.ref(kind, ref), labels))


# -- When --------------------------------------------------------------------------------------------


@when(sentence('a {kind:Kind} "{ref:Q}" is created'))
def when_created(ctx: ScenarioContext, kind: str, ref: str) -> None:
    ctx.act(lambda: _create(ctx, minimal(ctx.ref(kind, ref))))


@when(sentence('a {kind:Kind} "{ref:Q}" owned by the {owner_kind:Kind} "{owner:Q}" is created'))
def when_owned_created(ctx: ScenarioContext, kind: str, ref: str, owner_kind: str, owner: str) -> None:
    dependent = _owned(ctx, kind, ref, [(owner_kind, owner)], block=False)
    ctx.act(lambda: _create(ctx, dependent))


@when(sentence('a Job "{ref:Q}" with {selection} "{selector:Q}" over a Pod template labelled "{labels:Q}" '
               'is created'))
def when_job_with_selector_created(ctx: ScenarioContext, ref: str, selection: str, selector: str,
                                   labels: str) -> None:
    # "the manual selector" sets manualSelector: true; "the selector" leaves selector generation on.
    assert selection in ("the manual selector", "the selector"), f"unknown selection {selection!r}"
    obj = minimal(ctx.ref("Job", ref))
    obj["spec"] = {"selector": {"matchLabels": labels_of(selector)},
                   "template": {"metadata": {"labels": labels_of(labels)},
                                "spec": {"restartPolicy": "Never",
                                         "containers": [{"name": "job", "image": PAUSE_IMAGE}]}}}
    if selection == "the manual selector":
        obj["spec"]["manualSelector"] = True
    ctx.act(lambda: _create(ctx, obj))


@when(sentence('a ConfigMap "{ref:Q}" with annotations of {size:Int} bytes in total is created'))
def when_created_with_annotation_size(ctx: ScenarioContext, ref: str, size: int) -> None:
    key = "example.com/blob"
    obj = minimal(ctx.ref("ConfigMap", ref))
    obj["metadata"]["annotations"] = {key: "x" * (size - len(key))}
    ctx.act(lambda: _create(ctx, obj))


@when(sentence('a ConfigMap "{ref:Q}" annotated "{key:Q}" is created'))
def when_created_with_annotation(ctx: ScenarioContext, ref: str, key: str) -> None:
    obj = minimal(ctx.ref("ConfigMap", ref))
    obj["metadata"]["annotations"] = {key: "x"}
    ctx.act(lambda: _create(ctx, obj))


@when(sentence('the {kind:Kind} "{ref:Q}" is deleted'))
def when_deleted(ctx: ScenarioContext, kind: str, ref: str) -> None:
    ctx.act(lambda: _delete(ctx, ctx.ref(kind, ref)))


@when(sentence('the {kind:Kind} "{ref:Q}" is deleted in the foreground'))
def when_deleted_in_foreground(ctx: ScenarioContext, kind: str, ref: str) -> None:
    ctx.act(lambda: _delete(ctx, ctx.ref(kind, ref), PROPAGATION_FOREGROUND))


@when(sentence('the {kind:Kind} "{ref:Q}" is deleted leaving its dependents orphaned'))
def when_deleted_orphaning(ctx: ScenarioContext, kind: str, ref: str) -> None:
    ctx.act(lambda: _delete(ctx, ctx.ref(kind, ref), PROPAGATION_ORPHAN))


@when(sentence('the finalizer "{finalizer:Q}" is removed from the {kind:Kind} "{ref:Q}"'))
def when_finalizer_removed(ctx: ScenarioContext, finalizer: str, kind: str, ref: str) -> None:
    target = ctx.ref(kind, ref)
    remaining = [f for f in ctx.get(target)["metadata"].get("finalizers") or [] if f != finalizer]
    ctx.act(lambda: _set_finalizers(ctx, target, remaining))


@when(sentence('the finalizer "{finalizer:Q}" is added to the {kind:Kind} "{ref:Q}"'))
def when_finalizer_added(ctx: ScenarioContext, finalizer: str, kind: str, ref: str) -> None:
    target = ctx.ref(kind, ref)
    current = list(ctx.get(target)["metadata"].get("finalizers") or [])
    ctx.act(lambda: _set_finalizers(ctx, target, [*current, finalizer]))


@when(sentence('the {kind:Kind} "{ref:Q}" is relabelled "{labels:Q}"'))
def when_relabelled(ctx: ScenarioContext, kind: str, ref: str, labels: str) -> None:
    ctx.act(lambda: _relabel(ctx, ctx.ref(kind, ref), labels))


# -- Then --------------------------------------------------------------------------------------------


@then(sentence('the {kind:Kind} "{ref:Q}" is gone'))
def then_gone(ctx: ScenarioContext, kind: str, ref: str) -> None:
    target = ctx.ref(kind, ref)
    obj = ctx.find(target)
    assert obj is None, f"{target} still exists: {obj['metadata']}"


@then(sentence('within {seconds:Int} seconds the {kind:Kind} "{ref:Q}" is gone'))
def then_gone_within(ctx: ScenarioContext, seconds: int, kind: str, ref: str) -> None:
    target = ctx.ref(kind, ref)
    assert ctx.wait_until(lambda: ctx.find(target) is None, seconds), (
        f"{target} still exists after {seconds} s: {ctx.find(target)}"
    )


@then(sentence('the {kind:Kind} "{ref:Q}" exists'))
def then_exists(ctx: ScenarioContext, kind: str, ref: str) -> None:
    target = ctx.ref(kind, ref)
    assert ctx.find(target) is not None, f"{target} does not exist"


@then(sentence('the {kind:Kind} "{ref:Q}" is marked for deletion'))
def then_marked(ctx: ScenarioContext, kind: str, ref: str) -> None:
    target = ctx.ref(kind, ref)
    obj = ctx.find(target)
    assert obj is not None, f"{target} is gone, not marked for deletion"
    meta = obj["metadata"]
    assert meta.get("deletionTimestamp"), f"{target} has no deletionTimestamp: {meta}"
    assert meta.get("deletionGracePeriodSeconds") == 0, (
        f"{target} has deletionGracePeriodSeconds {meta.get('deletionGracePeriodSeconds')!r}, expected 0"
    )


@then(sentence('the {kind:Kind} "{ref:Q}" has the finalizer "{finalizer:Q}"'))
def then_has_finalizer(ctx: ScenarioContext, kind: str, ref: str, finalizer: str) -> None:
    target = ctx.ref(kind, ref)
    finalizers = ctx.get(target)["metadata"].get("finalizers") or []
    assert finalizer in finalizers, f"{target} has finalizers {finalizers}, not {finalizer!r}"


@then(sentence('the {kind:Kind} "{ref:Q}" has the label "{label:Q}"'))
def then_has_label(ctx: ScenarioContext, kind: str, ref: str, label: str) -> None:
    target = ctx.ref(kind, ref)
    labels = ctx.get(target)["metadata"].get("labels") or {}
    for key, value in labels_of(label).items():
        assert labels.get(key) == value, f"{target} has labels {labels}, expected {key}={value}"


@then(sentence('the Job "{ref:Q}" selects its Pods by its uid and labels its Pod template with its name and uid'))
def then_job_selector_generated(ctx: ScenarioContext, ref: str) -> None:
    target = ctx.ref("Job", ref)
    job = ctx.get(target)
    uid, name = job["metadata"]["uid"], job["metadata"]["name"]
    assert job["spec"]["selector"] == {"matchLabels": {JOB_CONTROLLER_UID_LABEL: uid}}, job["spec"]["selector"]
    labels = (job["spec"]["template"].get("metadata") or {}).get("labels") or {}
    wanted = {JOB_CONTROLLER_UID_LABEL: uid, LEGACY_JOB_CONTROLLER_UID_LABEL: uid,
              JOB_NAME_LABEL: name, LEGACY_JOB_NAME_LABEL: name}
    assert {k: labels.get(k) for k in wanted} == wanted, f"{target}'s Pod template has the labels {labels}"


@then(sentence('the {kind:Kind} "{ref:Q}" does not have the label "{key:Q}"'))
def then_lacks_label(ctx: ScenarioContext, kind: str, ref: str, key: str) -> None:
    target = ctx.ref(kind, ref)
    labels = ctx.get(target)["metadata"].get("labels") or {}
    assert key not in labels, f"{target} has labels {labels}, expected no {key!r}"


@then(sentence('the {kind:Kind} "{ref:Q}" has no labels'))
def then_no_labels(ctx: ScenarioContext, kind: str, ref: str) -> None:
    target = ctx.ref(kind, ref)
    labels = ctx.get(target)["metadata"].get("labels") or {}
    assert not labels, f"{target} has labels {labels}"


@then(sentence('the {kind:Kind} "{ref:Q}" has generation {generation:Int}'))
def then_generation(ctx: ScenarioContext, kind: str, ref: str, generation: int) -> None:
    target = ctx.ref(kind, ref)
    actual = ctx.get(target)["metadata"].get("generation")
    assert actual == generation, f"{target} has generation {actual!r}, expected {generation}"


def _condition(ctx: ScenarioContext, target: ObjectRef, condition_type: str) -> dict[str, Any]:
    obj = ctx.find(target)
    assert obj is not None, f"{target} does not exist"
    conditions = (obj.get("status") or {}).get("conditions") or []
    for condition in conditions:
        if condition.get("type") == condition_type:
            return condition  # type: ignore[no-any-return]
    raise AssertionError(f"{target} has no condition {condition_type!r}: {conditions}")


@then(sentence('the {kind:Kind} "{ref:Q}" has the condition "{type:Q}" "{status:Q}" with reason "{reason:Q}"'))
def then_condition(ctx: ScenarioContext, kind: str, ref: str, type: str, status: str, reason: str) -> None:
    condition = _condition(ctx, ctx.ref(kind, ref), type)
    assert (condition.get("status"), condition.get("reason")) == (status, reason), (
        f"condition {type} is {condition}, expected status {status!r} and reason {reason!r}"
    )


@then(sentence(
    'the {kind:Kind} "{ref:Q}" has the condition "{type:Q}" "{status:Q}" with reason "{reason:Q}" '
    'and message "{message:Q}"'
))
def then_condition_with_message(
    ctx: ScenarioContext, kind: str, ref: str, type: str, status: str, reason: str, message: str
) -> None:
    condition = _condition(ctx, ctx.ref(kind, ref), type)
    actual = (condition.get("status"), condition.get("reason"), condition.get("message"))
    assert actual == (status, reason, message), (
        f"condition {type} is {condition}, expected status {status!r}, reason {reason!r}, message {message!r}"
    )


@then(sentence('a Warning event "{reason:Q}" is recorded for the {kind:Kind} "{ref:Q}"'))
def then_warning_event(ctx: ScenarioContext, reason: str, kind: str, ref: str) -> None:
    target = ctx.ref(kind, ref)
    namespace = target.namespace or "default"
    events = ctx.client.list("v1", "Event", namespace)["items"]
    about = [e for e in events
             if (e.get("involvedObject") or {}).get("kind") == kind
             and (e.get("involvedObject") or {}).get("name") == target.name]
    assert any(e.get("type") == "Warning" and e.get("reason") == reason for e in about), (
        f"no Warning {reason!r} event about {target}; events about it: "
        f"{[(e.get('type'), e.get('reason'), e.get('message')) for e in about]}"
    )


def _removal_seq(ctx: ScenarioContext, target: ObjectRef) -> int:
    """The audit sequence number of the write that removed ``target`` from storage."""
    for record in ctx.scene.audit(name=target.name, namespace=target.namespace or ""):
        old = record["old"]
        if record["new"] is None and old is not None and old.get("kind", target.kind) == target.kind:
            return int(record["seq"])
    raise AssertionError(f"{target} was never removed")


@then(sentence('the {kind:Kind} "{ref:Q}" was removed before the {other_kind:Kind} "{other:Q}"'))
def then_removed_before(ctx: ScenarioContext, kind: str, ref: str, other_kind: str, other: str) -> None:
    first, second = ctx.ref(kind, ref), ctx.ref(other_kind, other)
    assert _removal_seq(ctx, first) < _removal_seq(ctx, second), f"{second} was removed before {first}"


@then(sentence('the {kind:Kind} "{ref:Q}" carried the finalizer "{finalizer:Q}" before it was removed'))
def then_carried_finalizer(ctx: ScenarioContext, kind: str, ref: str, finalizer: str) -> None:
    target = ctx.ref(kind, ref)
    states = [r["new"] for r in ctx.scene.audit(name=target.name, namespace=target.namespace or "")
              if r["new"] is not None and r["new"].get("kind", kind) == kind]
    assert any(finalizer in (s["metadata"].get("finalizers") or []) for s in states), (
        f"{target} never carried the finalizer {finalizer!r}"
    )


@then("nothing was written")
def then_nothing_written(ctx: ScenarioContext) -> None:
    writes = ctx.writes()
    assert not writes, "writes happened: " + ", ".join(
        f"{w['verb']} {w['resource']}{'/' + w['subresource'] if w['subresource'] else ''} {w['namespace']}/{w['name']}"
        f" by {w['user']}" for w in writes
    )


@then(sentence('the writes to the {kind:Kind} "{ref:Q}" were, in order:'))
def then_writes_in_order(ctx: ScenarioContext, kind: str, ref: str, datatable: list[list[str]]) -> None:
    target = ctx.ref(kind, ref)
    expected = [WRITE_WORDS[row[0]] for row in datatable[1:]]
    actual = [(w["verb"], w["subresource"]) for w in ctx.writes(name=target.name, namespace=target.namespace or "")
              if (w["new"] or w["old"] or {}).get("kind", kind) == kind][: len(expected)]
    assert actual == expected, f"the first writes to {target} were {actual}, expected {expected}"
