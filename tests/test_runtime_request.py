"""A reconcile Request is the frozen, ordered (namespace, name) value it always was, though one object per key
is made and handed out again (harness.client.runtime.REQUEST_TABLE_SIZE)."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from harness.client import runtime
from harness.client.runtime import Request


def test_a_request_is_its_fields() -> None:
    first, again = Request("ns", "web"), Request(namespace="ns", name="web")
    assert first == again and hash(first) == hash(again) == hash(("ns", "web"))
    assert repr(first) == "Request(namespace='ns', name='web')"
    assert first != ("ns", "web")  # a Request equals only Requests, as the dataclass did
    assert sorted([Request("b", "a"), Request("a", "z"), Request("a", "b")]) == [
        Request("a", "b"), Request("a", "z"), Request("b", "a")]
    assert dataclasses.astuple(first) == ("ns", "web")
    assert dataclasses.replace(first, name="db") == Request("ns", "db")
    assert Request.of({"metadata": {"name": "n"}}) == Request("", "n")


def test_a_request_stays_frozen_and_copies_as_itself() -> None:
    request = Request("ns", "web")
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.name = "other"  # type: ignore[misc]
    assert Request("ns", "web").name == "web"
    assert pickle.loads(pickle.dumps(request)) == request
    assert copy.deepcopy(request) == request and copy.copy(request) == request


def test_a_subclass_is_not_taken_for_a_request() -> None:
    class Named(Request):
        pass

    named = Named("ns", "web")
    assert type(named) is Named and type(Request("ns", "web")) is Request
    assert named != Request("ns", "web")


def test_the_table_of_requests_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime, "REQUEST_TABLE_SIZE", 10)
    monkeypatch.setattr(runtime, "_requests", {})
    made = [Request("ns", f"p-{i}") for i in range(25)]
    assert len(runtime._requests) <= 10  # noqa: SLF001
    assert [r.name for r in made] == [f"p-{i}" for i in range(25)]
    assert Request("ns", "p-0") == made[0]  # made again after the table was emptied: still equal


def test_a_request_of_unhashable_fields_is_made_and_refuses_hashing_as_before() -> None:
    odd = Request("ns", {"not": "a name"})  # type: ignore[arg-type]
    assert odd.name == {"not": "a name"} and odd == Request("ns", {"not": "a name"})  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        hash(odd)


def test_equal_fields_of_other_types_are_not_handed_out_for_each_other() -> None:
    class Name(str):
        pass

    first, other = Request(1, "x"), Request(True, "x")  # type: ignore[arg-type]
    assert first == other and other.namespace is True
    special = Request(Name("ns"), "web")
    assert type(Request("ns", "web").namespace) is str and type(special.namespace) is Name


def test_a_dataclass_subclass_with_more_fields_is_made_as_before() -> None:
    @dataclasses.dataclass(frozen=True)
    class Tagged(Request):
        tag: str = ""

    tagged = Tagged("ns", "web", "blue")
    assert (tagged.namespace, tagged.name, tagged.tag) == ("ns", "web", "blue")
    assert tagged == Tagged("ns", "web", "blue") and tagged != Tagged("ns", "web", "red")
    assert hash(tagged) == hash(Tagged("ns", "web", "blue"))
