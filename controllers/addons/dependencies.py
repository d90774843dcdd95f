"""The ``dependsOn`` graph among the ClusterProfiles of one cluster.

Deploying: a profile waits for every profile it depends on (upstream ``areDependenciesDeployed``).
Removing: a profile waits for every profile that depends on it to be removed first (upstream v1.14
``areDependentsRemoved``; seed 003's example "if a depends on b, delete a then b"), so over any DAG the
removal runs in reverse topological order. Upstream has no cycle detection (a cycle waits forever); here
the profiles of a cycle -- a strongly connected component of more than one profile -- are told so in
status, and removal does not wait on an edge inside the cycle, so a cycle never deadlocks a deletion.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def cycles(graph: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """For each profile that is part of a dependency cycle, the sorted names of its cycle (its strongly
    connected component). ``graph``: profile -> the profiles it depends on (names not in ``graph`` are
    leaves). Iterative Tarjan, linear in the size of the graph."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: dict[str, list[str]] = {}
    counter = 0
    successors_of = {node: [s for s in deps if s in graph] for node, deps in graph.items()}
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, int]] = [(root, 0)]
        while work:
            node, child = work.pop()
            if child == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            successors = successors_of[node]
            if child < len(successors):
                work.append((node, child + 1))
                nxt = successors[child]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    names = sorted(component)
                    for member in component:
                        out[member] = names
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return out


def blocking_dependents(profile: str, graph: Mapping[str, Sequence[str]],
                        known_cycles: Mapping[str, list[str]] | None = None) -> list[str]:
    """The profiles of ``graph`` (those still present for the cluster) that depend on ``profile`` and must
    be removed before it: every direct dependent except those in the same cycle as ``profile``
    (``known_cycles``: :func:`cycles` of ``graph``, when the caller has it already)."""
    found = cycles(graph) if known_cycles is None else known_cycles
    same_cycle = set(found.get(profile, ()))
    return sorted(p for p, deps in graph.items() if p != profile and profile in deps and p not in same_cycle)


def removal_order(graph: Mapping[str, Sequence[str]]) -> list[str]:
    """One order in which the profiles of ``graph`` may be removed: dependents before what they depend on,
    cycles broken (used by tests and the benchmark to check an audit trail against)."""
    remaining = dict(graph)
    order: list[str] = []
    while remaining:
        ready = sorted(p for p in remaining if not blocking_dependents(p, remaining))
        if not ready:  # cannot happen: blocking edges never form a cycle
            ready = sorted(remaining)
        for p in ready:
            order.append(p)
            del remaining[p]
    return order
