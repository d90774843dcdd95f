"""Sentences about the HTTP wire itself: requests sent as raw HTTP ("over the wire"), and what the
answer is on the wire: its status line, its Content-Type, its body (a ``Status`` or an object),
and how a watch stream is framed.

They need the HTTP scene (``--transport http``); in-process, @wire scenarios are deselected. A
request over the wire also records its answer as the scenario's result or API error, so the
sentences about refusals ("the write is refused with ...", "the refusal names the field ...") and
watches ("the watch receives ...") apply to it too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from pytest_bdd import given, then, when

from features.steps.context import ObjectRef, ScenarioContext, sentence
from features.steps.objects import minimal
from harness.kube.client import ApiError
from harness.kube.names.meta import JSON_CONTENT_TYPE
from harness.world.http_scene import HttpScene, RawWatch, SyncedWatch

CHUNKED = "chunked"
RETRY_AFTER_HEADER = "Retry-After"
NEEDS_HTTP = "this sentence looks at the HTTP wire: run with --transport http"
# A group nothing serves: reading it must be the server's generic 404.
UNSERVED_PATH = "/apis/example.com/v1/widgets"


@dataclass
class Wire:
    """The scenario's last answer over the wire, and the resources discovery named."""

    answer: httpx.Response | None = None
    resources: dict[tuple[str, str], tuple[str, bool]] = field(default_factory=dict)


@pytest.fixture
def wire() -> Wire:
    """What the @wire sentences of one scenario remember."""
    return Wire()


def _scene(ctx: ScenarioContext) -> HttpScene:
    if not isinstance(ctx.scene, HttpScene):
        pytest.skip(NEEDS_HTTP)
    return ctx.scene


def _collection_path(ctx: ScenarioContext, wire: Wire, api_version: str, kind: str, namespace: str | None) -> str:
    if not wire.resources:
        wire.resources = {(r["apiVersion"], r["kind"]): (r["plural"], r["namespaced"]) for r in ctx.client.discover()}
    plural, namespaced = wire.resources[(api_version, kind)]
    base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    return f"{base}/namespaces/{namespace}/{plural}" if namespaced and namespace else f"{base}/{plural}"


def _object_path(ctx: ScenarioContext, wire: Wire, ref: ObjectRef) -> str:
    return f"{_collection_path(ctx, wire, ref.api_version, ref.kind, ref.namespace)}/{ref.name}"


def _send(
    ctx: ScenarioContext,
    wire: Wire,
    method: str,
    path: str,
    *,
    body: bytes | None = None,
    content_type: str | None = None,
    params: dict[str, str] | None = None,
) -> Any:
    """Send one raw request as the scenario's action; an error answer is raised as its API error."""
    headers = {"Content-Type": content_type} if content_type else {}

    def exchange() -> Any:
        answer = _scene(ctx).http().request(method, path, content=body, headers=headers, params=params)
        wire.answer = answer
        try:
            parsed = answer.json()
        except ValueError:
            parsed = {"code": answer.status_code, "message": answer.text}
        if answer.status_code >= 400:
            retry = {RETRY_AFTER_HEADER: answer.headers[RETRY_AFTER_HEADER]} if RETRY_AFTER_HEADER in answer.headers \
                else {}
            raise ApiError(parsed if isinstance(parsed, dict) else {"code": answer.status_code}, retry)
        return parsed

    ctx.act(exchange)


def _answer(wire: Wire) -> tuple[httpx.Response, dict[str, Any]]:
    """The last answer and its JSON body, which must be sent as ``application/json`` exactly."""
    answer = wire.answer
    assert answer is not None, "nothing was sent over the wire"
    content_type = answer.headers.get("content-type")
    assert content_type == JSON_CONTENT_TYPE, (
        f"the answer's Content-Type is {content_type!r}, expected {JSON_CONTENT_TYPE!r} exactly"
    )
    body = answer.json()
    assert isinstance(body, dict), f"the answer's body is {body!r}"
    return answer, body


def _status(wire: Wire) -> tuple[httpx.Response, dict[str, Any]]:
    answer, body = _answer(wire)
    assert body.get("kind") == "Status", f"the answer ({answer.status_code}) is not a Status: {body}"
    return answer, body


def _outside_strings(line: str) -> str:
    """The characters of a JSON text that are not inside string literals."""
    out, inside, escaped = [], False, False
    for char in line:
        if inside:
            escaped, inside = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            inside = True
        else:
            out.append(char)
    return "".join(out)


def _raw(ctx: ScenarioContext) -> RawWatch:
    watch = ctx.watch
    assert isinstance(watch, SyncedWatch) and isinstance(watch.stream, RawWatch), "no watch was made over the wire"
    ctx.collect_events()  # catch up with the server first
    return watch.stream


def _watch_over_the_wire(ctx: ScenarioContext, wire: Wire, kind: str, namespace: str, rv: str) -> None:
    api_version = ctx.ref(kind, "any").api_version
    path = _collection_path(ctx, wire, api_version, kind, namespace)
    ctx.watch = _scene(ctx).raw_watch(path, {"watch": "1", "resourceVersion": rv})
    ctx.events = []


# -- Given -------------------------------------------------------------------------------------------


@given(sentence('a watch over the wire on {kind:Kind}s in "{namespace:Q}"'))
def given_wire_watch(ctx: ScenarioContext, wire: Wire, kind: str, namespace: str) -> None:
    api_version = ctx.ref(kind, "any").api_version
    rv = str(ctx.client.list(api_version, kind, namespace)["metadata"]["resourceVersion"])
    _watch_over_the_wire(ctx, wire, kind, namespace, rv)


@given(sentence('the {kind:Kind} "{ref:Q}" was patched over the wire as "{content_type:Q}" by the field manager '
                '"{manager:Q}":'))
def given_patched_by_manager(
    ctx: ScenarioContext, wire: Wire, kind: str, ref: str, content_type: str, manager: str, docstring: str
) -> None:
    path = _object_path(ctx, wire, ctx.ref(kind, ref))

    def send() -> None:
        answer = _scene(ctx).http().request("PATCH", path, content=docstring.strip().encode(),
                                            headers={"Content-Type": content_type},
                                            params={"fieldManager": manager})
        assert answer.status_code < 400, f"the setup patch was refused: {answer.status_code} {answer.text}"

    ctx.setup(send)


# -- When --------------------------------------------------------------------------------------------


@when(sentence('the {kind:Kind} "{ref:Q}" is read over the wire'))
def when_read(ctx: ScenarioContext, wire: Wire, kind: str, ref: str) -> None:
    _send(ctx, wire, "GET", _object_path(ctx, wire, ctx.ref(kind, ref)))


@when("a resource the server does not serve is read over the wire")
def when_unserved_read(ctx: ScenarioContext, wire: Wire) -> None:
    _send(ctx, wire, "GET", UNSERVED_PATH)


@when(sentence('the collection of {kind:Kind}s in "{namespace:Q}" is replaced over the wire'))
def when_collection_replaced(ctx: ScenarioContext, wire: Wire, kind: str, namespace: str) -> None:
    target = ctx.ref(kind, f"{namespace}/any")
    _send(ctx, wire, "PUT", _collection_path(ctx, wire, target.api_version, kind, target.namespace),
          body=json.dumps(minimal(target)).encode(), content_type=JSON_CONTENT_TYPE)


@when(sentence('a {kind:Kind} "{ref:Q}" is created over the wire'))
def when_created(ctx: ScenarioContext, wire: Wire, kind: str, ref: str) -> None:
    target = ctx.ref(kind, ref)
    _send(ctx, wire, "POST", _collection_path(ctx, wire, target.api_version, kind, target.namespace),
          body=json.dumps(minimal(target)).encode(), content_type=JSON_CONTENT_TYPE)


@when(sentence('a {kind:Kind} "{ref:Q}" is created over the wire as "{content_type:Q}"'))
def when_created_as(ctx: ScenarioContext, wire: Wire, kind: str, ref: str, content_type: str) -> None:
    target = ctx.ref(kind, ref)
    _send(ctx, wire, "POST", _collection_path(ctx, wire, target.api_version, kind, target.namespace),
          body=json.dumps(minimal(target)).encode(), content_type=content_type)


@when(sentence('the {kind:Kind} "{ref:Q}" is deleted over the wire'))
def when_deleted(ctx: ScenarioContext, wire: Wire, kind: str, ref: str) -> None:
    _send(ctx, wire, "DELETE", _object_path(ctx, wire, ctx.ref(kind, ref)))


@when(sentence('the Pod "{ref:Q}" is evicted over the wire'))
def when_evicted(ctx: ScenarioContext, wire: Wire, ref: str) -> None:
    target = ctx.ref("Pod", ref)
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction",
                "metadata": {"name": target.name, "namespace": target.namespace}}
    _send(ctx, wire, "POST", f"{_object_path(ctx, wire, target)}/eviction", body=json.dumps(eviction).encode(),
          content_type=JSON_CONTENT_TYPE)


@when(sentence('the Pod "{ref:Q}" is evicted over the wire with the delete options:'))
def when_evicted_with_options(ctx: ScenarioContext, wire: Wire, ref: str, docstring: str) -> None:
    target = ctx.ref("Pod", ref)
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction",
                "metadata": {"name": target.name, "namespace": target.namespace},
                "deleteOptions": json.loads(docstring)}
    _send(ctx, wire, "POST", f"{_object_path(ctx, wire, target)}/eviction", body=json.dumps(eviction).encode(),
          content_type=JSON_CONTENT_TYPE)


@when(sentence('a {kind:Kind} "{ref:Q}" nested {depth:Int} deep is created over the wire'))
def when_created_nested(ctx: ScenarioContext, wire: Wire, kind: str, ref: str, depth: int) -> None:
    target = ctx.ref(kind, ref)
    body = json.dumps(minimal(target))[:-1] + ',"x":' + '{"a":' * depth + "1" + "}" * depth + "}"
    _send(ctx, wire, "POST", _collection_path(ctx, wire, target.api_version, kind, target.namespace),
          body=body.encode(), content_type=JSON_CONTENT_TYPE)


@when(sentence('a ConfigMap "{ref:Q}" holding {size:Int} bytes of data is created over the wire'))
def when_configmap_of_size(ctx: ScenarioContext, wire: Wire, ref: str, size: int) -> None:
    target = ctx.ref("ConfigMap", ref)
    body = {**minimal(target), "data": {"k": "x" * (size - 1)}}  # the key counts too
    _send(ctx, wire, "POST", _collection_path(ctx, wire, target.api_version, "ConfigMap", target.namespace),
          body=json.dumps(body).encode(), content_type=JSON_CONTENT_TYPE)


@when(sentence('a Pod "{ref:Q}" carrying {size:Int} bytes of arguments is created over the wire'))
def when_pod_of_size(ctx: ScenarioContext, wire: Wire, ref: str, size: int) -> None:
    target = ctx.ref("Pod", ref)
    body = {**minimal(target), "spec": {"containers": [{"name": "c", "image": "busybox", "args": ["x" * size]}]}}
    _send(ctx, wire, "POST", _collection_path(ctx, wire, target.api_version, "Pod", target.namespace),
          body=json.dumps(body).encode(), content_type=JSON_CONTENT_TYPE)


def _patch(
    ctx: ScenarioContext, wire: Wire, kind: str, ref: str, content_type: str, docstring: str, **params: str
) -> None:
    _send(ctx, wire, "PATCH", _object_path(ctx, wire, ctx.ref(kind, ref)), body=docstring.strip().encode(),
          content_type=content_type, params=params or None)


@when(sentence('the {kind:Kind} "{ref:Q}" is patched over the wire as "{content_type:Q}":'))
def when_patched(ctx: ScenarioContext, wire: Wire, kind: str, ref: str, content_type: str, docstring: str) -> None:
    _patch(ctx, wire, kind, ref, content_type, docstring)


@when(sentence('the {kind:Kind} "{ref:Q}" is patched over the wire as "{content_type:Q}" by the field manager '
               '"{manager:Q}":'))
def when_patched_by_manager(
    ctx: ScenarioContext, wire: Wire, kind: str, ref: str, content_type: str, manager: str, docstring: str
) -> None:
    _patch(ctx, wire, kind, ref, content_type, docstring, fieldManager=manager)


@when(sentence('the {kind:Kind} "{ref:Q}" is patched over the wire as "{content_type:Q}" with force:'))
def when_patched_with_force(
    ctx: ScenarioContext, wire: Wire, kind: str, ref: str, content_type: str, docstring: str
) -> None:
    _patch(ctx, wire, kind, ref, content_type, docstring, force="true")


@when(sentence('the {kind:Kind} "{ref:Q}" is patched over the wire as "{content_type:Q}" by the field manager '
               '"{manager:Q}" with force:'))
def when_patched_by_manager_with_force(
    ctx: ScenarioContext, wire: Wire, kind: str, ref: str, content_type: str, manager: str, docstring: str
) -> None:
    _patch(ctx, wire, kind, ref, content_type, docstring, fieldManager=manager, force="true")


@when(sentence('{kind:Kind}s in "{namespace:Q}" are watched over the wire from the remembered resourceVersion'))
def when_watched_from_remembered(ctx: ScenarioContext, wire: Wire, kind: str, namespace: str) -> None:
    assert ctx.remembered_rv is not None, "no resourceVersion was remembered"
    rv = ctx.remembered_rv
    ctx.act(lambda: _watch_over_the_wire(ctx, wire, kind, namespace, rv))


# -- Then --------------------------------------------------------------------------------------------


@then(sentence('the answer is a Status with code {code:Int} and reason "{reason:Q}"'))
def then_failure_status(wire: Wire, code: int, reason: str) -> None:
    answer, body = _status(wire)
    expected = {"apiVersion": "v1", "metadata": {}, "status": "Failure", "code": code, "reason": reason}
    actual = {key: body.get(key) for key in expected}
    assert (answer.status_code, actual) == (code, expected), (
        f"the answer is {answer.status_code} with {body}, expected {code} with {expected}"
    )


@then(sentence("the answer is a Status with code {code:Int} and no reason"))
def then_failure_status_without_reason(wire: Wire, code: int) -> None:
    answer, body = _status(wire)
    actual = (answer.status_code, body.get("code"), body.get("status"), "reason" in body)
    assert actual == (code, code, "Failure", False), f"the answer is {answer.status_code} with {body}"


@then(sentence('the Status message contains "{text:Q}"'))
def then_status_message_contains(wire: Wire, text: str) -> None:
    _, body = _status(wire)
    assert text in str(body.get("message")), f"the Status message is {body.get('message')!r}"


@then(sentence("the answer is a Success Status with code {code:Int}"))
def then_success_status(wire: Wire, code: int) -> None:
    answer, body = _status(wire)
    assert answer.status_code == code, f"the answer is {answer.status_code}, expected {code}"
    assert (body.get("apiVersion"), body.get("status")) == ("v1", "Success"), f"the Status is {body}"
    # A Status may leave its code out (a deletion's does); when it says one, it is the status line's.
    assert body.get("code", code) == code, f"the Status says code {body.get('code')}, the status line {code}"


@then(sentence('the answer is the {kind:Kind} "{ref:Q}" with code {code:Int}'))
def then_object(ctx: ScenarioContext, wire: Wire, kind: str, ref: str, code: int) -> None:
    answer, body = _answer(wire)
    target = ctx.ref(kind, ref)
    meta = body.get("metadata") or {}
    actual = (answer.status_code, body.get("kind"), body.get("apiVersion"), meta.get("namespace"), meta.get("name"))
    expected = (code, kind, target.api_version, target.namespace, target.name)
    assert actual == expected, f"the answer is {actual}, expected {expected}"
    assert isinstance(meta.get("resourceVersion"), str) and meta["resourceVersion"], (
        f"the answer's resourceVersion is {meta.get('resourceVersion')!r}, not a non-empty string"
    )


@then("the Status carries the message:")
def then_status_message(wire: Wire, docstring: str) -> None:
    message = _status(wire)[1].get("message")
    assert message == docstring.strip(), f"the message is\n  {message!r}\nexpected\n  {docstring.strip()!r}"


@then(sentence('the Status details name "{name:Q}" of the kind "{kind:Q}"'))
def then_status_details(wire: Wire, name: str, kind: str) -> None:
    details = _status(wire)[1].get("details") or {}
    actual = (details.get("name"), details.get("kind"))
    assert actual == (name, kind), f"the Status details are {details}, expected name {name!r} and kind {kind!r}"


@then(sentence('the watch stream is answered with code {code:Int} as "{content_type:Q}"'))
def then_watch_answered(ctx: ScenarioContext, code: int, content_type: str) -> None:
    stream = _raw(ctx)
    actual = (stream.status_code, stream.headers.get("content-type") if stream.headers else None)
    assert actual == (code, content_type), f"the watch was answered {actual}, expected {(code, content_type)}"


@then("the watch stream carries one compact JSON object per line")
def then_watch_framing(ctx: ScenarioContext) -> None:
    stream = _raw(ctx)
    encoding = stream.headers.get("transfer-encoding") if stream.headers else None
    assert encoding == CHUNKED, f"the stream's Transfer-Encoding is {encoding!r}, expected {CHUNKED!r}"
    assert stream.lines, "the stream carried nothing"
    for line in stream.lines:
        assert line.endswith(b"\n") and line.count(b"\n") == 1, f"a line is not terminated once by \\n: {line!r}"
        event = json.loads(line)
        assert isinstance(event, dict) and set(event) == {"type", "object"}, f"a line is not a watch event: {event}"
        spaced = [c for c in _outside_strings(line[:-1].decode()) if c.isspace()]
        assert not spaced, f"a line is not compact JSON (whitespace {spaced} outside strings): {line!r}"


def _managed_entry(ctx: ScenarioContext, kind: str, ref: str, manager: str) -> list[dict[str, Any]]:
    target = ctx.ref(kind, ref)
    entries = ctx.get(target)["metadata"].get("managedFields") or []
    return [e for e in entries if e.get("manager") == manager]


@then(sentence('the {kind:Kind} "{ref:Q}" is managed by "{manager:Q}" with the operation "{operation:Q}" owning:'))
def then_managed_by(ctx: ScenarioContext, kind: str, ref: str, manager: str, operation: str, docstring: str) -> None:
    entries = [e for e in _managed_entry(ctx, kind, ref, manager) if e.get("operation") == operation]
    assert len(entries) == 1, f"{kind} {ref} has {len(entries)} {operation} entries of {manager!r}: {entries}"
    (entry,) = entries
    assert entry.get("fieldsType") == "FieldsV1", f"the entry's fieldsType is {entry.get('fieldsType')!r}"
    expected = json.loads(docstring)
    assert entry.get("fieldsV1") == expected, f"{manager!r} owns {entry.get('fieldsV1')}, expected {expected}"


@then(sentence('the {kind:Kind} "{ref:Q}" is not managed by "{manager:Q}"'))
def then_not_managed_by(ctx: ScenarioContext, kind: str, ref: str, manager: str) -> None:
    entries = _managed_entry(ctx, kind, ref, manager)
    assert not entries, f"{kind} {ref} still has entries of {manager!r}: {entries}"
