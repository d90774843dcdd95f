"""Sentences about watches: starting one (from now, from a remembered resourceVersion, with a
selector, with bookmarks), compacting the history, and the events a watch receives."""

from __future__ import annotations

from typing import Any

from pytest_bdd import given, then, when

from features.steps.context import ScenarioContext, labels_of, sentence
from harness.kube.names.meta import BOOKMARK, DELETED, ERROR

TOO_OLD_MESSAGE = "too old resource version: {rv} ({oldest})"


def _api_version(ctx: ScenarioContext, kind: str) -> str:
    return ctx.ref(kind, "any").api_version


def _list_rv(ctx: ScenarioContext, kind: str, namespace: str | None = None) -> str:
    return str(ctx.client.list(_api_version(ctx, kind), kind, namespace)["metadata"]["resourceVersion"])


def _start(ctx: ScenarioContext, kind: str, namespace: str | None, **options: Any) -> None:
    ctx.watch = ctx.client.watch(_api_version(ctx, kind), kind, namespace, **options)
    ctx.events = []


def _selector(labels: str) -> str:
    return ",".join(f"{k}={v}" for k, v in labels_of(labels).items())


def _pairs(ctx: ScenarioContext) -> list[tuple[str, str]]:
    return [(t, str((o.get("metadata") or {}).get("name", ""))) for t, o in ctx.collect_events()]


# -- Given -------------------------------------------------------------------------------------------


@given(sentence("the current resourceVersion of {kind:Kind}s is remembered"))
def given_rv_remembered(ctx: ScenarioContext, kind: str) -> None:
    ctx.remembered_rv = _list_rv(ctx, kind)


@given("the cluster's storage has been compacted")
def given_compacted(ctx: ScenarioContext) -> None:
    # Compaction forgets the history up to the newest resourceVersion, which every list reports.
    ctx.compacted_rv = _list_rv(ctx, "Namespace")
    ctx.scene.compact()


@given(sentence('a watch on {kind:Kind}s in "{namespace:Q}"'))
def given_watch(ctx: ScenarioContext, kind: str, namespace: str) -> None:
    _start(ctx, kind, namespace, resource_version=_list_rv(ctx, kind, namespace))


@given(sentence('a watch on {kind:Kind}s in "{namespace:Q}" that asks for bookmarks'))
def given_watch_with_bookmarks(ctx: ScenarioContext, kind: str, namespace: str) -> None:
    _start(ctx, kind, namespace, resource_version=_list_rv(ctx, kind, namespace), allow_bookmarks=True)


@given(sentence('a watch on {kind:Kind}s in "{namespace:Q}" labelled "{labels:Q}"'))
def given_watch_with_selector(ctx: ScenarioContext, kind: str, namespace: str, labels: str) -> None:
    _start(ctx, kind, namespace, resource_version=_list_rv(ctx, kind, namespace), label_selector=_selector(labels))


@given(sentence('a watch on the {kind:Kind} "{ref:Q}" by name'))
def given_watch_by_name(ctx: ScenarioContext, kind: str, ref: str) -> None:
    target = ctx.ref(kind, ref)
    _start(ctx, kind, target.namespace, resource_version=_list_rv(ctx, kind, target.namespace),
           field_selector=f"metadata.name={target.name}")


# -- When --------------------------------------------------------------------------------------------


@when(sentence('{kind:Kind}s in "{namespace:Q}" are watched from the remembered resourceVersion'))
def when_watched_from_remembered(ctx: ScenarioContext, kind: str, namespace: str) -> None:
    assert ctx.remembered_rv is not None, "no resourceVersion was remembered"
    ctx.act(lambda: _start(ctx, kind, namespace, resource_version=ctx.remembered_rv))


@when(sentence('{kind:Kind}s in "{namespace:Q}" are watched'))
def when_watched(ctx: ScenarioContext, kind: str, namespace: str) -> None:
    ctx.act(lambda: _start(ctx, kind, namespace))


# -- Then --------------------------------------------------------------------------------------------


def _table(datatable: list[list[str]]) -> list[tuple[str, str]]:
    header = datatable[0]
    rows = [dict(zip(header, row)) for row in datatable[1:]]
    return [(row["type"], row["name"]) for row in rows]


@then("the watch receives exactly these events, in order:")
def then_events_in_order(ctx: ScenarioContext, datatable: list[list[str]]) -> None:
    assert ctx.error is None, f"the watch was refused: {ctx.error}"
    actual, expected = _pairs(ctx), _table(datatable)
    assert actual == expected, f"the watch received {actual}, expected {expected}"


@then("the watch receives exactly these events, in any order:")
def then_events_any_order(ctx: ScenarioContext, datatable: list[list[str]]) -> None:
    assert ctx.error is None, f"the watch was refused: {ctx.error}"
    actual, expected = _pairs(ctx), _table(datatable)
    assert sorted(actual) == sorted(expected), f"the watch received {actual}, expected {expected} in any order"


@then("the watch receives no events")
def then_no_events(ctx: ScenarioContext) -> None:
    events = _pairs(ctx)
    assert not events, f"the watch received {events}"


@then(sentence(
    'the watch receives an ERROR event with code {code:Int} and reason "{reason:Q}" saying the remembered '
    "resourceVersion is too old"
))
def then_expired(ctx: ScenarioContext, code: int, reason: str) -> None:
    assert ctx.error is None, f"the watch was refused outside the stream: {ctx.error}"
    events = ctx.collect_events()
    errors = [o for t, o in events if t == ERROR]
    assert errors, f"the watch received no ERROR event: {[t for t, _ in events]}"
    status = errors[0]
    message = TOO_OLD_MESSAGE.format(rv=ctx.remembered_rv, oldest=ctx.compacted_rv)
    expected = {"kind": "Status", "status": "Failure", "code": code, "reason": reason, "message": message}
    assert {k: status.get(k) for k in expected} == expected, f"the ERROR event carries {status}, expected {expected}"
    assert events[-1][0] == ERROR, f"events followed the ERROR: {[t for t, _ in events]}"


@then("the watch is closed")
def then_watch_closed(ctx: ScenarioContext) -> None:
    ctx.collect_events()
    assert ctx.watch is not None and ctx.watch.closed, "the watch is still open"


@then("the watch receives no BOOKMARK event")
def then_no_bookmark(ctx: ScenarioContext) -> None:
    kinds = [t for t, _ in ctx.collect_events()]
    assert BOOKMARK not in kinds, f"the watch received {kinds}"


@then("the watch receives a BOOKMARK event that carries only a resourceVersion")
def then_bookmark(ctx: ScenarioContext) -> None:
    events = ctx.collect_events()
    bookmarks = [o for t, o in events if t == BOOKMARK]
    assert bookmarks, f"the watch received no BOOKMARK: {[t for t, _ in events]}"
    for bookmark in bookmarks:
        meta = bookmark.get("metadata") or {}
        assert set(meta) == {"resourceVersion"} and meta["resourceVersion"], f"a bookmark carries {bookmark}"
        assert set(bookmark) <= {"kind", "apiVersion", "metadata"}, f"a bookmark carries {bookmark}"


@then(sentence(
    'the watch receives a DELETED event for "{name:Q}" labelled "{labels:Q}" with a resourceVersion newer than '
    "the object's last one"
))
def then_deleted_event(ctx: ScenarioContext, name: str, labels: str) -> None:
    deleted = [o for t, o in ctx.collect_events() if t == DELETED and o["metadata"].get("name") == name]
    assert deleted, f"no DELETED event for {name}: {_pairs(ctx)}"
    obj = deleted[0]
    assert obj["metadata"].get("labels") == labels_of(labels), f"the DELETED event carries {obj['metadata']}"
    removal = [r for r in ctx.writes(name=name) if r["new"] is None]
    assert removal, f"{name} was not removed"
    last = int(removal[0]["old"]["metadata"]["resourceVersion"])
    assert int(obj["metadata"]["resourceVersion"]) > last, (
        f"the DELETED event has resourceVersion {obj['metadata']['resourceVersion']}, the object's last was {last}"
    )


@then(sentence("the current resourceVersion of {kind:Kind}s is still the remembered one"))
def then_rv_unchanged(ctx: ScenarioContext, kind: str) -> None:
    current = _list_rv(ctx, kind)
    assert current == ctx.remembered_rv, f"the resourceVersion moved from {ctx.remembered_rv} to {current}"
