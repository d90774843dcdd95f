"""Sentences about decoding on the wire: raw bodies with wrongly typed or unknown fields, the
``fieldValidation`` directive, the ``Warning`` headers an answer carries, and what was stored.

Like the other @wire sentences they need ``--transport http``.
"""

from __future__ import annotations

import json
from typing import Any

import yaml
from pytest_bdd import given, then, when

from features.steps.context import ScenarioContext, sentence
from features.steps.wire import Wire, _answer, _collection_path, _send, _status
from harness.kube.names.apiextensions import APIEXTENSIONS_V1 as CRD_API_VERSION
from harness.kube.names.meta import JSON_CONTENT_TYPE as JSON

WARNING_HEADER = "warning"


def _create_raw(ctx: ScenarioContext, wire: Wire, kind: str, ref: str, body: str, directive: str | None) -> None:
    target = ctx.ref(kind, ref)
    params = {"fieldValidation": directive} if directive else None
    _send(ctx, wire, "POST", _collection_path(ctx, wire, target.api_version, kind, target.namespace),
          body=body.strip().encode(), content_type=JSON, params=params)


@given(sentence('the custom resource kind "{kind:Kind}" of "{api_version:Q}" is served with the schema:'))
def given_custom_kind_with_schema(ctx: ScenarioContext, kind: str, api_version: str, docstring: str) -> None:
    group, _, version = api_version.partition("/")
    plural = kind.lower() + "s"
    ctx.setup(lambda: ctx.client.create({
        "apiVersion": CRD_API_VERSION, "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group, "scope": "Namespaced",
            "names": {"kind": kind, "plural": plural, "singular": kind.lower(), "listKind": f"{kind}List"},
            "versions": [{"name": version, "served": True, "storage": True,
                          "schema": {"openAPIV3Schema": yaml.safe_load(docstring)}}],
        },
    }))
    ctx.kinds[kind] = api_version


@when(sentence('the {kind:Kind} "{ref:Q}" is created over the wire from:'))
def when_created_from(ctx: ScenarioContext, wire: Wire, kind: str, ref: str, docstring: str) -> None:
    _create_raw(ctx, wire, kind, ref, docstring, None)


@when(sentence('the {kind:Kind} "{ref:Q}" is created over the wire with fieldValidation "{directive:Q}" from:'))
def when_created_with_directive(
    ctx: ScenarioContext, wire: Wire, kind: str, ref: str, directive: str, docstring: str
) -> None:
    _create_raw(ctx, wire, kind, ref, docstring, directive)


@then("the answer carries the warnings:")
def then_warnings(wire: Wire, docstring: str) -> None:
    answer, _ = _answer(wire)
    expected = [line.strip() for line in docstring.strip().splitlines()]
    actual = answer.headers.get_list(WARNING_HEADER)
    assert actual == expected, f"the Warning headers are {actual}, expected {expected}"


@then("the answer carries no warning")
def then_no_warning(wire: Wire) -> None:
    answer, _ = _answer(wire)
    actual = answer.headers.get_list(WARNING_HEADER)
    assert actual == [], f"the answer carries the Warning headers {actual}"


@then("the Status message ends with:")
def then_status_message_ends(wire: Wire, docstring: str) -> None:
    message = _status(wire)[1].get("message") or ""
    assert message.endswith(docstring.strip()), f"the message is\n  {message!r}\nexpected to end with\n  " \
                                                f"{docstring.strip()!r}"


@then(sentence('the {kind:Kind} "{ref:Q}" is stored as:'))
def then_stored_as(ctx: ScenarioContext, kind: str, ref: str, docstring: str) -> None:
    stored = ctx.get(ctx.ref(kind, ref))
    expected: dict[str, Any] = json.loads(docstring)
    actual = {key: stored.get(key) for key in expected if key != "metadata"}
    wanted = {key: value for key, value in expected.items() if key != "metadata"}
    assert actual == wanted, f"the stored object has {actual}, expected {wanted}"
    for key, value in (expected.get("metadata") or {}).items():
        assert stored["metadata"].get(key) == value, f"metadata.{key} is {stored['metadata'].get(key)!r}"
    extra = set(stored) - set(expected) - {"apiVersion", "kind", "metadata", "status"}
    assert not extra, f"the stored object also has {sorted(extra)}"
    unknown = set(stored["metadata"]) - KNOWN_METADATA
    assert not unknown, f"the stored metadata also has {sorted(unknown)}"


# ObjectMeta's fields (what a pruned metadata may keep).
KNOWN_METADATA = {
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation", "creationTimestamp",
    "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences", "finalizers",
    "managedFields",
}
