"""A field selector renders only the fields it names, and answers as rendering them all would."""

from __future__ import annotations

import random
from typing import Any

from harness.kube import selectors

_VALUES: list[Any] = [None, True, False, 0, 3, 2.0, 2.5, "", "n1", "Running", "a,b", {}, {"x": 1}, [], ["n1"]]

# Paths the kinds' renderers read, so random objects exercise every one of them.
_PATHS = [
    "spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
    "spec.serviceAccount", "spec.hostNetwork", "spec.unschedulable", "spec.clusterIP", "spec.type",
    "spec.color", "status.phase", "status.podIP", "status.nominatedNodeName", "status.replicas",
    "status.succeeded", "involvedObject.kind", "involvedObject.name", "involvedObject.namespace",
    "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
    "involvedObject.fieldPath", "source.component", "reason", "reportingComponent", "type",
    "metadata.name", "metadata.namespace",
]

_EXTRA = (".spec.color", "spec.size", ".metadata.name")


def _random_object(rng: random.Random) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for path in rng.sample(_PATHS, rng.randint(0, len(_PATHS))):
        node = obj
        *parents, leaf = path.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = rng.choice(_VALUES)
    if rng.random() < 0.5:
        ips: list[Any] = rng.choice([[], [{"ip": "10.0.0.1"}], [None], ["bad"], [{"ip": None}]])
        obj.setdefault("status", {})["podIPs"] = ips
    return obj


def _random_selector(rng: random.Random, kind: str, extra: tuple[str, ...]) -> selectors.FieldSelector:
    names = ["metadata.name", "metadata.namespace", *selectors.FIELD_SELECTORS.get(kind, ())]
    names += [path.lstrip(".") for path in extra]
    values = ["", "n1", "Running", "true", "false", "0", "3", "2", "2.5", "a,b", "10.0.0.1"]
    terms = []
    for _ in range(rng.randint(1, 3)):
        terms.append((rng.choice(names), rng.choice(["=", "!="]), rng.choice(values)))
    return selectors.FieldSelector(tuple(sorted(terms)))


def test_field_matcher_answers_as_all_fields_rendered_randomized() -> None:
    rng = random.Random(16)
    kinds = [*selectors.FIELD_SELECTORS, "ConfigMap", ""]
    for _ in range(20_000):
        kind = rng.choice(kinds)
        extra = _EXTRA if kind == "" and rng.random() < 0.7 else ()
        obj = _random_object(rng)
        selector = _random_selector(rng, kind, extra)
        expected = selector.matches(selectors.object_fields(kind, obj, extra))
        assert selectors.field_matcher(kind, selector, extra)(obj) == expected, (kind, selector, obj)


def test_field_matcher_node_name() -> None:
    on_n1 = selectors.field_matcher("Pod", selectors.parse_field_selector("spec.nodeName=n1"))
    assert on_n1({"spec": {"nodeName": "n1"}})
    assert not on_n1({"spec": {"nodeName": "n2"}})
    assert not on_n1({"metadata": {"name": "p"}})
    unbound = selectors.field_matcher("Pod", selectors.parse_field_selector("spec.nodeName="))
    assert unbound({"spec": {}})


def test_field_matcher_custom_resource_selectable_field_overrides_metadata() -> None:
    # A CRD may list .metadata.name among its selectableFields: the JSON path answers, as it always has.
    named = selectors.field_matcher("", selectors.parse_field_selector("metadata.name=x"), (".metadata.name",))
    assert named({"metadata": {"name": "x"}})
    assert not named({"metadata": {"name": "y"}})
