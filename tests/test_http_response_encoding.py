"""The facade's JSON answers are the standard encoder's bytes, whether orjson wrote them or not:
orjson's text is taken only where it is provably the same (harness/apiserver/http/responses.py)."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import random
import uuid
from typing import Any

import pytest

from harness.apiserver.http import discovery
from harness.apiserver.http.responses import FAST_LIST_ITEMS, _fast_text, encode, encode_exact
from harness.apiserver.managedfields import SharedFields
from harness.kube import errors
from harness.world.world import World


def _outcome(encoder: Any, value: Any) -> Any:
    try:
        return encoder(value)
    except Exception as exc:  # noqa: BLE001 - the very error is what is compared
        return (type(exc), str(exc))


def _same(value: Any) -> None:
    assert _outcome(encode, value) == _outcome(encode_exact, value)


class Colour(enum.Enum):
    RED = "red"


class Size(enum.StrEnum):
    SMALL = "small"


class Count(enum.IntEnum):
    ONE = 1


class Text(str):
    pass


class Mapping(dict):  # type: ignore[type-arg]
    def items(self):  # type: ignore[no-untyped-def]
        return [("overridden", True)]


@dataclasses.dataclass
class Point:
    x: int = 1


def test_every_code_point_is_written_alike_and_by_the_fast_path() -> None:
    chunks = []
    for start in range(0, 0x110000, 0x1000):
        chunks.append("".join(chr(c) for c in range(start, start + 0x1000) if not 0xD800 <= c < 0xE000))
    body = {"strings": chunks, "keys": {chunk[:64]: chunk[-64:] for chunk in chunks}}
    text = _fast_text(body)
    assert text is not None
    assert text == encode_exact(body)


TRICKY = [
    {"a": 1.5}, {"a": 1e16}, {"a": 1e-05}, {"a": -0.0}, {"a": 5e-324}, [1.0], [123456789.0, 1e22],
    {"a": float("nan")}, {"a": float("inf")}, [float("-inf")],
    {"a": 2**64}, {"a": -(2**63) - 1}, {"a": 2**64 - 1}, {"a": -(2**63)},
    {"a": "\ud800"}, {"\udfff": 1},
    {1: "int key"}, {True: "bool key"}, {None: "null key"}, {1.5: "float key"},
    {"a": Colour.RED}, {"a": Size.SMALL}, {"a": Count.ONE}, {Size.SMALL: 1},
    {"a": uuid.UUID(int=7)}, {"a": datetime.datetime(2026, 1, 1)}, {"a": datetime.date(2026, 1, 1)},
    {"a": Point()}, {"a": (1, 2)}, {"a": Text("sub")}, {"a": Mapping(x=1)},
    {"a": SharedFields({"f:spec": {"f:x": {}}})}, [SharedFields({"f:a": SharedFields({".": {}})})],
    {"a": {1, 2}}, {"a": b"bytes"}, {"a": object()},
    [[[]]] * 3, {"deep": _nested} if (_nested := [[[[[[]]]]]]) else {},
    {"n": None, "t": True, "f": False, "e": "", "z": 0, "s": "1.5e7", "k": "a:1.5,"},
    {"text": "nginx:1.25 e:1, [1e5] 10.244.0.2"},
    "top-level string", 12, 1.5, None, True,
]


@pytest.mark.parametrize("value", TRICKY, ids=range(len(TRICKY)))
def test_tricky_values_are_written_or_refused_as_the_standard_encoder_does(value: Any) -> None:
    _same(value)


def test_nesting_past_orjsons_limit_is_left_to_the_standard_encoder() -> None:
    value: Any = []
    for _ in range(300):
        value = [value]
    assert _fast_text(value) is None
    _same(value)


@pytest.mark.parametrize("value", [
    {"a": 1.5}, [1e16], {"a": {"b": [0, -2e-07]}}, {"a": float("nan")}, [float("inf")], {"a": uuid.UUID(int=1)},
    {"a": Colour.RED}, {"a": (1,)}, {"a": Text("x")}, {"a": Mapping()}, {"a": 2**64},
])
def test_what_orjson_could_write_otherwise_is_not_taken_from_it(value: Any) -> None:
    assert _fast_text(value) is None


@pytest.mark.parametrize("value", [
    {"a": 1, "b": [True, False, None], "c": "x\n\"\\\u2028é😀<>&"}, [],
    {"fieldsV1": SharedFields({"f:metadata": {"f:labels": {}}})}, {"a": Size.SMALL, "b": Count.ONE},
])
def test_plain_json_is_taken_from_orjson(value: Any) -> None:
    assert _fast_text(value) == encode_exact(value)


def _world_corpus() -> list[Any]:
    """What a world with every simulator holds after a Deployment rolled out and was scaled down:
    every stored object, each kind's list, Status errors and discovery documents."""
    world = World()
    client = world.client()
    client.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1", "labels": {"zone": "a"}}})
    client.create({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "annotations": {"note": "<b>&amp;</b> é"}},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.25", "env": [{"name": "E", "value": "1.5"}],
                                     "resources": {"requests": {"cpu": "100m", "memory": "1.5Gi"}}}]}}},
    })
    client.create({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                   "metadata": {"name": "web", "namespace": "default"},
                   "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}})
    world.settle()
    client.patch("apps/v1", "Deployment", "web", {"spec": {"replicas": 1}}, namespace="default")
    world.settle()
    server = world.clusters.management
    corpus: list[Any] = []
    for key in server.store.resources():
        items = server.store.items(key)
        corpus.extend(items)
        corpus.append({"kind": "List", "apiVersion": "v1", "metadata": {"resourceVersion": "1"}, "items": items})
    corpus.append(errors.not_found("pods", "", "missing").status)
    corpus.append(errors.invalid_object("Pod", "", "p", [errors.too_long("metadata.name", 63)]).status)
    corpus.append(discovery.group_list(server.registry))
    corpus.append(discovery.aggregated(server.registry, legacy=True))
    return corpus


def test_the_objects_of_a_world_are_written_alike_and_mostly_by_orjson() -> None:
    corpus = _world_corpus()
    fast = 0
    for value in corpus:
        assert encode(value) == encode_exact(value)
        fast += _fast_text(value) is not None
    assert len(corpus) > 20
    assert fast >= len(corpus) * 9 // 10  # the fast path is the common one (a float or a look-alike sends it away)


def _random_string(rng: random.Random) -> str:
    alphabet = ["a", "e", "E", "1", ".", ":", ",", "[", "]", "{", "}", '"', "\\", "\n", "\x00", "\x1f", "\x7f",
                "é", "\u2028", "😀", "-", "+", " ", "/", "<", "&"]
    return "".join(rng.choice(alphabet) for _ in range(rng.randrange(6)))


def _random_value(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if depth > 4 or roll < 0.45:
        return rng.choice([
            lambda: _random_string(rng), lambda: rng.randrange(-(2**70), 2**70), lambda: rng.randrange(-9, 9),
            lambda: rng.random() * 10 ** rng.randrange(-30, 30), lambda: rng.choice([True, False, None]),
            lambda: float(rng.randrange(-5, 5)), lambda: rng.choice([float("nan"), float("inf"), Colour.RED,
                                                                     Size.SMALL, uuid.UUID(int=3), (1, "x")]),
        ] if rng.random() < 0.1 else [
            lambda: _random_string(rng), lambda: rng.randrange(-9, 9), lambda: rng.choice([True, False, None]),
        ])()
    if roll < 0.75:
        items = {_random_string(rng): _random_value(rng, depth + 1) for _ in range(rng.randrange(4))}
        return SharedFields(items) if rng.random() < 0.1 else items
    return [_random_value(rng, depth + 1) for _ in range(rng.randrange(4))]


def test_random_values_are_written_or_refused_as_the_standard_encoder_does() -> None:
    rng = random.Random(16)
    fast = 0
    for _ in range(3000):
        value = {"v": _random_value(rng, 0)}
        _same(value)
        fast += _fast_text(value) is not None
    assert fast > 1000  # the comparison covers the fast path, not only the fallback


def test_a_long_list_is_written_alike_whichever_encoder_writes_it() -> None:
    pod = {"kind": "Pod", "metadata": {"name": "p", "managedFields": [{"fieldsV1": SharedFields({"f:spec": {}})}]},
           "status": {"conditions": [{"type": "Ready", "lastProbeTime": None}]}}
    for count in (FAST_LIST_ITEMS, FAST_LIST_ITEMS + 1):
        _same({"kind": "PodList", "items": [pod] * count})
        _same([pod] * count)
    _same({"kind": "Odd", "items": 5})
