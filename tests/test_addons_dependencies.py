"""The dependsOn graph of the add-on controller: cycles, which dependents a removal waits for, and order."""

from __future__ import annotations

from controllers.addons.dependencies import blocking_dependents, cycles, removal_order


def test_a_chain_has_no_cycle_and_is_removed_dependents_first() -> None:
    graph = {"d": ["c"], "c": ["b"], "b": ["a"], "a": []}
    assert cycles(graph) == {}
    assert removal_order(graph) == ["d", "c", "b", "a"]


def test_a_prerequisite_waits_for_every_direct_dependent() -> None:
    graph = {"top": ["left", "right"], "left": ["base"], "right": ["base"], "base": []}
    assert blocking_dependents("base", graph) == ["left", "right"]
    assert blocking_dependents("top", graph) == []


def test_a_diamond_is_removed_in_reverse_topological_order() -> None:
    graph = {"top": ["left", "right"], "left": ["base"], "right": ["base"], "base": ["core"], "core": []}
    order = removal_order(graph)
    for profile, deps in graph.items():
        for dep in deps:
            assert order.index(profile) < order.index(dep)


def test_a_cycle_is_named_with_all_its_members_and_does_not_block_removal() -> None:
    graph = {"x": ["y"], "y": ["z"], "z": ["x"], "app": ["x"]}
    assert cycles(graph) == {"x": ["x", "y", "z"], "y": ["x", "y", "z"], "z": ["x", "y", "z"]}
    assert blocking_dependents("x", graph) == ["app"]
    assert blocking_dependents("y", graph) == []
    assert removal_order(graph)[0] == "app"


def test_a_dependency_that_is_not_present_is_a_leaf() -> None:
    assert cycles({"app": ["missing"]}) == {}
    assert blocking_dependents("missing", {"app": ["missing"]}) == ["app"]


def test_a_large_dag_is_handled_without_recursion_limits() -> None:
    graph = {f"p{i}": [f"p{i - 1}"] if i else [] for i in range(5000)}
    assert cycles(graph) == {}
    graph["p0"] = ["p4999"]
    assert len(cycles(graph)["p0"]) == 5000
