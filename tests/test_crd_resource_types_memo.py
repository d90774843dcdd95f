"""The resource types of a CRD are made once per CRD spec object (crd.resource_types remembers them by the
spec's identity): the worlds replaying the packaged CRDs share those specs, so they share the frozen
ResourceTypes too, each world keeping its own registry. What a world changes in its CRDs is its own: a
changed CRD is a new spec, with new types, which no other world sees."""

from __future__ import annotations

import copy

from harness.apiserver import crd
from harness.world.world import World

CAPI = "cluster.x-k8s.io"
MACHINES = f"machines.{CAPI}"


def _fields(rt: object) -> tuple[object, ...]:
    return tuple(getattr(rt, name) for name in (
        "group", "version", "kind", "plural", "namespaced", "singular", "short_names", "categories", "status",
        "scale", "custom", "has_generation", "name_rule", "verbs", "columns", "selectable_fields", "schema"))


def test_the_same_types_as_made_from_a_copy_of_the_spec() -> None:
    world = World(simulators=[])
    stored = world.client().get("apiextensions.k8s.io/v1", "CustomResourceDefinition", MACHINES)
    first, again = crd.resource_types(stored), crd.resource_types(stored)
    assert first and all(a is b for a, b in zip(first, again, strict=True))
    fresh = crd.resource_types(copy.deepcopy(stored))
    assert [_fields(rt) for rt in fresh] == [_fields(rt) for rt in first]
    assert not any(a is b for a, b in zip(first, fresh, strict=True))


def test_a_world_changing_its_crd_changes_nothing_in_another() -> None:
    changed, other = World(simulators=[]), World(simulators=[])
    served_before = other.management.registry.by_kind(f"{CAPI}/v1beta1", "Machine")
    client = changed.client()
    body = client.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", MACHINES)
    for version in body["spec"]["versions"]:
        version["additionalPrinterColumns"] = [{"name": "Only", "type": "string", "jsonPath": ".spec.clusterName"}]
    client.update(body)
    changed.settle()
    mine = changed.management.registry.by_kind(f"{CAPI}/v1beta1", "Machine")
    assert [c[0] for c in mine.columns] == ["Only"]
    theirs = other.management.registry.by_kind(f"{CAPI}/v1beta1", "Machine")
    assert theirs is served_before and [c[0] for c in theirs.columns] != ["Only"]
    # A world made afterwards replays the packaged CRDs as they are.
    later = World(simulators=[]).management.registry.by_kind(f"{CAPI}/v1beta1", "Machine")
    assert _fields(later) == _fields(served_before)
