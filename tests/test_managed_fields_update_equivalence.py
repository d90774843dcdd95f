"""``managedfields.record_update`` against the update path main had (tests/managedfields_reference.py),
step by step on random objects: sequences of creates, updates and ``/status`` writes by one to four
managers (and, to reach the cap of ten Update entries, by many), with the stored object's untouched
parts shared with the new one as the server shares them, its managedFields handed back as stored,
cloned or re-read from JSON, and requests that send the entries back, reset them or send others.
Every step must give the same managedFields: the same entries, order, times and fieldsV1 bytes."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from harness.apiserver import builtins
from harness.apiserver import fieldsets as fs
from harness.apiserver import managedfields as mf
from harness.kube.objects import clone
from tests import managedfields_reference as reference
from tests.test_managed_fields import WIDGET
from tests.test_managed_fields_equivalence import _mutated, _paths, _some, _value

_KINDS = [builtins.POD, builtins.DEPLOYMENT, builtins.CONFIG_MAP, WIDGET]
_META_VALUES = {
    "labels": lambda rng: {rng.choice("abcd"): rng.choice("xyz") for _ in range(rng.randint(0, 3))},
    "annotations": lambda rng: {rng.choice("abcd"): rng.choice("xyz") for _ in range(rng.randint(0, 2))},
    "finalizers": lambda rng: rng.sample(["f/a", "f/b", "f/c"], rng.randint(0, 3)),
    "ownerReferences": lambda rng: [{"uid": rng.choice("uv"), "name": rng.choice("nm"), "controller": True}
                                    for _ in range(rng.randint(0, 2))],
}


def _metadata(rng: random.Random) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "o", "namespace": "ns", "uid": "u-1", "resourceVersion": "1"}
    for key in rng.sample(sorted(_META_VALUES), rng.randint(0, 4)):
        meta[key] = _META_VALUES[key](rng)
    return meta


def _body(rng: random.Random, depth: int) -> dict[str, Any]:
    value = _value(rng, depth)
    return value if isinstance(value, dict) else {"a": value}


def _created(rng: random.Random) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "K", "metadata": _metadata(rng), "spec": _body(rng, 4)}
    if rng.random() < 0.7:
        obj["status"] = _body(rng, 4)
    return obj


def _dict_or(value: Any, fallback: dict[str, Any]) -> dict[str, Any]:
    return value if isinstance(value, dict) else fallback


def _next_write(rng: random.Random, old: dict[str, Any], status_write: bool) -> dict[str, Any]:
    """The object a write stores: a /status write changes status alone (the rest is the stored
    object's, the very same dicts); an update changes spec and metadata and keeps status."""
    new = dict(old)
    if status_write:
        new["status"] = _dict_or(_mutated(rng, old.get("status") or {}, 4), {})
        if rng.random() < 0.1:
            new.pop("status")
        return new
    if rng.random() < 0.8:
        new["spec"] = _dict_or(_mutated(rng, old.get("spec") or {}, 4), {"b": 1})
    meta = dict(old["metadata"])
    for key in rng.sample(sorted(_META_VALUES), rng.randint(0, 2)):
        if rng.random() < 0.3:
            meta.pop(key, None)
        else:
            meta[key] = _META_VALUES[key](rng) if rng.random() < 0.7 else copy.deepcopy(meta.get(key))
    new["metadata"] = meta
    return new


def _request_entries(rng: random.Random, live: list[dict[str, Any]] | None) -> Any:
    """What an update request carries in ``metadata.managedFields``."""
    roll = rng.random()
    if roll < 0.45:
        return live  # a read-modify-write sends back what it read (the very list)
    if roll < 0.6:
        return json.loads(json.dumps(live)) if live is not None else None  # ... or an equal copy
    if roll < 0.75:
        return None
    if roll < 0.8:
        return rng.choice([[], [{}]])  # a reset
    if roll < 0.9 and live:
        entries = json.loads(json.dumps(live))
        entries.pop(rng.randrange(len(entries)))
        return entries  # the client dropped one
    return [{"manager": 7}]  # does not decode: the live entries are kept


def _stored(roll: float, obj: dict[str, Any], managed: list[dict[str, Any]] | None) -> dict[str, Any]:
    """The stored object as the next write finds it: the managedFields record_update returned,
    that object cloned (the fieldsV1 trees shared), or re-read from JSON (plain trees)."""
    meta = {k: v for k, v in obj["metadata"].items() if k != "managedFields"}
    if managed:
        meta["managedFields"] = managed
    out = {**obj, "metadata": meta}
    if roll < 0.15:
        return clone(out)
    if roll < 0.2:
        return json.loads(json.dumps(out))
    return out


def _text(managed: list[dict[str, Any]] | None) -> str:
    return json.dumps(managed)


def _run(seed: int, managers: list[str], steps: int) -> None:
    rng = random.Random(seed)
    rt = rng.choice(_KINDS)
    obj = _created(rng)
    if rt is builtins.CONFIG_MAP:
        obj.pop("status", None)
    created = mf.record_update(rt, None, obj, managers[0], "2026-01-01T00:00:00Z")
    expected = reference.record_update(rt, None, obj, managers[0], "2026-01-01T00:00:00Z")
    assert _text(created) == _text(expected)
    # The two implementations keep their own stored managedFields (equal, not the same lists).
    roll = rng.random()
    mine, theirs = _stored(roll, obj, created), _stored(roll, obj, expected)
    second = 0
    for step in range(steps):
        second += rng.choice([0, 0, 1, 7])
        now = f"2026-01-01T00:{second // 60 % 60:02d}:{second % 60:02d}Z"
        manager = rng.choice(managers)
        subresource = "status" if (rt.status and rng.random() < 0.5) else ""
        new = _next_write(rng, mine, subresource == "status")
        if not subresource:
            requested = _request_entries(rng, mine["metadata"].get("managedFields"))
            new["metadata"] = {k: v for k, v in new["metadata"].items() if k != "managedFields"}
            if requested is not None:
                new["metadata"]["managedFields"] = requested
        before = json.dumps(mine), json.dumps(new)
        got = mf.record_update(rt, mine, new, manager, now, subresource=subresource)
        assert (json.dumps(mine), json.dumps(new)) == before  # neither object is edited
        # The reference sees the same write over its own stored entries.
        their_new = new
        if not subresource and new["metadata"].get("managedFields") is mine["metadata"].get("managedFields") \
                and "managedFields" in new["metadata"]:
            their_new = {**new, "metadata": {**new["metadata"], "managedFields": theirs["metadata"]["managedFields"]}}
        want = reference.record_update(rt, theirs, their_new, manager, now, subresource=subresource)
        assert _text(got) == _text(want), (seed, step, manager, subresource)
        assert [type(e.get("fieldsV1")) for e in got or []] == [type(e.get("fieldsV1")) for e in want or []]
        roll = rng.random()
        mine, theirs = _stored(roll, new, got), _stored(roll, new, want)


@pytest.mark.parametrize("seed", range(60))
def test_record_update_is_the_reference_update_path_step_by_step(seed: int) -> None:
    _run(seed, [f"m{n}" for n in range(random.Random(seed).randint(1, 4))], 30)


@pytest.mark.parametrize("seed", range(8))
def test_record_update_is_the_reference_when_ancient_changes_fold(seed: int) -> None:
    _run(1000 + seed, [f"m{n}" for n in range(14)], 60)


@pytest.mark.parametrize("seed", range(20))
def test_an_edit_misses_a_tree_exactly_when_it_hands_the_tree_back(seed: int) -> None:
    """``fieldsets.misses``, which lets an update skip the other owners' edits, against the edit."""
    rng = random.Random(seed)
    for _ in range(80):
        owned = _paths(rng)
        pool = sorted(owned | {p[:n] for p in owned for n in range(1, len(p))} | _paths(rng))
        tree = fs.encode(owned)
        remove = fs.encode(_some(rng, pool))
        edited = fs.edit_tree(tree, remove, None, None)
        if fs.misses(tree, remove):
            assert edited is tree
        else:
            assert json.dumps(edited) != json.dumps(tree)


@pytest.mark.parametrize("added", [("f:a", "i:2"), ("f:a", "f:y"), ("f:a", "k:{\"name\":\"b\"}"), ("f:a", "v:0"),
                                   ("f:a", "i:10", "f:z")])
def test_an_edit_sorts_the_children_it_grows_as_encode_does(added: tuple[str, ...]) -> None:
    """Indices (``i:``, which a client's entries may hold) sort numerically after keys and values;
    fields, keys and values sort by what follows their prefix."""
    owned = {("f:a", "i:10"), ("f:a", "i:9"), ("f:a", "k:{\"name\":\"c\"}"), ("f:a", "f:x"), ("f:a", "v:1"),
             ("f:a", "f:x", "f:q")}
    edited = fs.edit_tree(fs.encode(owned), None, None, fs.encode({added}))
    assert json.dumps(edited) == json.dumps(fs.encode(owned | {added}))
