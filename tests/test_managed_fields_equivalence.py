"""The encoded-tree walks every update uses (``fieldsets.compare_trees``, ``fieldsets.edit_tree``)
against the path-set algebra they replace (``fieldsets.compare`` and ``encode``/``decode``), on
randomly generated objects and edits: the same trees, the same key order at every level."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from harness.apiserver import builtins
from harness.apiserver import fieldsets as fs
from harness.apiserver import managedfields as mf
from tests.test_managed_fields import WIDGET_SCHEMA

# Names that reach every shape of a Pod and a Deployment (structs, granular maps, atomic structs,
# associative lists by name/type/ip/uid, sets, atomic lists) and of the Widget schema.
_NAMES = ["metadata", "labels", "annotations", "finalizers", "ownerReferences", "uid", "spec", "status",
          "containers", "name", "image", "env", "value", "ports", "containerPort", "protocol", "port",
          "conditions", "type", "podIPs", "ip", "selector", "matchLabels", "tolerations", "nodeSelector",
          "template", "tags", "args", "extra", "ref", "size", "a", "b"]
_KEY_VALUES = ["x", "y", "z", 1, 2, None]
_SHAPES = [fs.BuiltinShapes("Pod"), fs.BuiltinShapes("Deployment"), fs.SchemaShapes(WIDGET_SCHEMA)]


def _scalar(rng: random.Random) -> Any:
    return rng.choice(["x", "y", 0, 1, 1.0, True, False, None, ""])


def _value(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if depth <= 0 or roll < 0.35:
        return _scalar(rng)
    if roll < 0.7:
        return {rng.choice(_NAMES): _value(rng, depth - 1) for _ in range(rng.randint(0, 4))}
    items: list[Any] = []
    for _ in range(rng.randint(0, 4)):
        if rng.random() < 0.2:
            items.append(_scalar(rng))
            continue
        item = {key: rng.choice(_KEY_VALUES) for key in rng.sample(["name", "type", "ip", "uid", "port",
                                                                   "protocol"], rng.randint(0, 3))}
        if rng.random() < 0.6:
            item[rng.choice(_NAMES)] = _value(rng, depth - 1)
        items.append(item)
    return items


def _mutated(rng: random.Random, value: Any, depth: int) -> Any:
    """A changed version of ``value``: unchanged parts are often the very same objects (as a
    status write shares the stored object's untouched parts), sometimes equal copies."""
    roll = rng.random()
    if roll < 0.3:
        return value
    if roll < 0.4:
        return copy.deepcopy(value)
    if roll < 0.5 or not isinstance(value, (dict, list)):
        return _value(rng, depth)
    if isinstance(value, dict):
        out = {k: _mutated(rng, v, depth - 1) for k, v in value.items() if rng.random() > 0.15}
        for _ in range(rng.randint(0, 2)):
            out[rng.choice(_NAMES)] = _value(rng, depth - 1)
        return out
    out_list = [_mutated(rng, v, depth - 1) for v in value if rng.random() > 0.15]
    if rng.random() < 0.3:
        rng.shuffle(out_list)
    if rng.random() < 0.4:
        out_list.append(_value(rng, 2))
    if value and rng.random() < 0.3:
        out_list.append(copy.deepcopy(rng.choice(value)))  # a duplicate key
    return out_list


def _object(rng: random.Random) -> dict[str, Any]:
    return {rng.choice(_NAMES): _value(rng, 4) for _ in range(rng.randint(1, 4))}


@pytest.mark.parametrize("seed", range(40))
def test_the_comparison_trees_are_the_encoded_comparison_sets(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(60):
        old = _object(rng)
        new = _mutated(rng, old, 5) if rng.random() < 0.9 else _object(rng)
        if not isinstance(new, dict):
            new = _object(rng)
        before = json.dumps(old), json.dumps(new)
        for shapes in _SHAPES:
            changed, removed = fs.compare_trees(old, new, shapes)
            expected = fs.compare(old, new, shapes)
            assert json.dumps(changed) == json.dumps(fs.encode(expected.changed)), (old, new)
            assert json.dumps(removed) == json.dumps(fs.encode(expected.removed)), (old, new)
            # What a create owns (a top-level null, which the comparison skips, left out).
            body = {k: v for k, v in new.items() if v is not None}
            created = fs.compare({}, body, shapes).added
            assert json.dumps(fs.added_fields_v1(body, shapes)) == json.dumps(fs.encode(created))
        assert (json.dumps(old), json.dumps(new)) == before  # neither object is edited


@pytest.mark.parametrize(("old", "new"), [
    ({"spec": {"a": 1}}, {"spec": {"a": 1, "containers": []}}),  # an always-present list appears empty
    ({"spec": {"containers": []}}, {"spec": {}}),
    ({"spec": {"containers": [{"name": "c"}]}}, {"spec": {"containers": "x"}}),  # a node changes kind
    ({"spec": {"template": {"a": 1}}}, {"spec": {"template": [1, 2]}}),
    ({"spec": {"a": None}}, {"spec": {"b": None}}),  # null is no value
    ({"spec": {"a": 1}}, {"spec": {"a": 1.0}}),  # equal in Python, not in JSON
    ({"status": {"conditions": [{"type": "A", "x": 1}, {"type": "A", "x": 2}]}},
     {"status": {"conditions": [{"type": "A", "x": 2}]}}),  # a repeated key: the last item counts
    ({"metadata": {"finalizers": ["a", "b"]}}, {"metadata": {"finalizers": ["b", "c", "c"]}}),
    # A repeated key in a list that appears whole: every item's fields are owned.
    ({"status": {}}, {"status": {"podIPs": [{"ip": "1", "a": 1}, {"ip": "1", "b": {"c": [1]}}]}}),
    ({"a": 1}, {"status": {"conditions": [{"type": "A", "x": [{"name": "n", "y": 1}, {"name": "n", "z": 1}]}]}}),
    ({"status": {"podIPs": [{"ip": "1"}, 3]}}, {"status": {"podIPs": [{"ip": 1}, {}]}}),
])
def test_the_comparison_trees_of_edge_cases(old: dict[str, Any], new: dict[str, Any]) -> None:
    for shapes in _SHAPES:
        for left, right in ((old, new), (new, old)):
            changed, removed = fs.compare_trees(left, right, shapes)
            expected = fs.compare(left, right, shapes)
            assert json.dumps(changed) == json.dumps(fs.encode(expected.changed))
            assert json.dumps(removed) == json.dumps(fs.encode(expected.removed))


def _paths(rng: random.Random) -> fs.FieldSet:
    shapes = rng.choice(_SHAPES)
    return fs.to_field_set(_object(rng), shapes) | fs.compare({}, _object(rng), shapes).added


def _some(rng: random.Random, pool: list[fs.Path]) -> fs.FieldSet:
    share = rng.choice([0.0, 0.1, 0.5])
    return {p for p in pool if rng.random() < share}


@pytest.mark.parametrize("seed", range(40))
def test_editing_encoded_trees_is_the_set_algebra_on_their_paths(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(60):
        owned = _paths(rng)
        pool = sorted(owned | {p[:n] for p in owned for n in range(1, len(p))} | _paths(rng))

        remove, remove_too, add = (_some(rng, pool) for _ in range(3))
        tree = fs.encode(owned)
        text = json.dumps(tree)
        edited = fs.edit_tree(tree, fs.encode(remove), fs.encode(remove_too), fs.encode(add))
        expected = fs.encode(((owned - remove) - remove_too) | add)
        assert json.dumps(edited) == json.dumps(expected)
        assert json.dumps(tree) == text  # the edited tree is a new one; the old is shared, not changed
        if not ((remove | remove_too) & owned) and add <= owned:
            assert edited is tree  # an edit that changes nothing hands back the same tree


@pytest.mark.parametrize("seed", range(10))
def test_updates_edit_stored_trees_as_they_edit_decoded_sets(seed: int) -> None:
    """The same update twice: once with the stored entries (edited as encoded trees), once with
    the entries sent back by the client in a form that decodes them into path sets."""
    rng = random.Random(seed)
    rt = builtins.DEPLOYMENT
    for step in range(40):
        old: dict[str, Any] = {"metadata": {"name": "d", "uid": "u"}, **_object(rng)}
        old.setdefault("metadata", {"name": "d"})
        if not isinstance(old["metadata"], dict):
            old["metadata"] = {"name": "d"}
        managed = mf.record_update(rt, None, old, "creator", "T0")
        for writer, time in (("a", "T1"), ("b", "T2")):
            nxt = _mutated(rng, old, 5)
            if not isinstance(nxt, dict) or not isinstance(nxt.get("metadata"), dict):
                continue
            nxt = {**nxt, "metadata": {**nxt["metadata"], "managedFields": managed}}
            old = {**old, "metadata": {**old["metadata"], "managedFields": managed}}
            managed = mf.record_update(rt, old, nxt, writer, time) or []
            old = nxt
        if not managed:
            continue
        new = _mutated(rng, old, 5)
        if not isinstance(new, dict):
            continue
        meta = new.get("metadata") if isinstance(new.get("metadata"), dict) else {}
        from_trees = mf.record_update(rt, old, {**new, "metadata": {**meta, "managedFields": managed}}, "w", "T9")
        # Without fieldsType the entries differ from the live ones yet decode alike (into sets).
        sent = [{k: v for k, v in entry.items() if k != "fieldsType"} for entry in managed]
        from_sets = mf.record_update(rt, old, {**new, "metadata": {**meta, "managedFields": sent}}, "w", "T9")
        assert json.dumps(from_trees) == json.dumps(from_sets), step
