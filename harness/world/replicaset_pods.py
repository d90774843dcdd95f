"""The Pods of one ReplicaSet as its syncs read them, kept up to date from the Pod events instead of worked
out again at every sync: which owned Pods still match, the status counts of the active ones, and the
active ones filed in the scale-down order.

A sync of upstream's ReplicaSet controller looks at every Pod of the set, and creates or deletes at most
500 of them (``burstReplicas``): scaling a set of N Pods takes N/500 syncs, each O(N). Here a sync costs
what changed since the last one, plus the Pods it deletes: ``SetPods`` classifies the Pods whose events
came since (``dirty``), and ``Ranking`` hands out the first Pods of the deletion order without ranking the
others (a group of its Pods is sorted again only after Pods joined it: a set that shrinks, as a rollout's
old one, sorts each group once). What the syncs write is the same: the equivalence is tested against the
per-sync computation (tests/replicaset_reference.py).
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, insort
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

PodKey = tuple[str, str]
# A Pod's own part of its scale-down rank: (phase, ready, deletion cost, -ready since, -restarts,
# -created, name).
OwnRank = tuple[Any, ...]


@dataclass(slots=True)
class PodFacts:
    """What the controller needs of a pod, worked out once per watch event rather than per sync."""

    active: bool
    ready_since: float | None
    labels: dict[str, str]
    # Whether the labels match the controlling ReplicaSet's selector; None until known.
    matches: bool | None = None
    # The pod's own part of its scale-down rank, worked out when first needed.
    rank: OwnRank | None = None


def fully_labeled(labels: dict[str, str], template_labels: list[tuple[str, Any]]) -> bool:
    """Whether a pod carries every label of the template (``fullyLabeledReplicas``)."""
    return all(labels.get(k) == v for k, v in template_labels)


class _Group:
    """The active Pods of a set that share the first part of their rank and their Node, in rank order.

    Filed by key; the order is sorted when first asked for after a Pod joined, and Pods that left are
    skipped when met (a scale-down deletes the first Pods of the order, so they leave from the front)."""

    __slots__ = ("live", "order", "start")

    def __init__(self) -> None:
        # key -> entry: the rest of the rank, then the key (the same object while the Pod stays filed).
        self.live: dict[PodKey, tuple[Any, ...]] = {}
        self.order: list[tuple[Any, ...]] | None = None
        self.start = 0

    def add(self, key: PodKey, entry: tuple[Any, ...]) -> None:
        self.live[key] = entry
        self.order = None

    def remove(self, key: PodKey) -> None:
        del self.live[key]
        order = self.order
        # Too many left behind in the middle: sort again rather than skip them at every sync.
        if order is not None and len(order) - self.start > 2 * len(self.live) + 64:
            self.order = None

    def ordered(self) -> Iterator[tuple[Any, ...]]:
        """The entries still filed, in rank order."""
        live = self.live
        order = self.order
        if order is None:
            order = self.order = sorted(live.values())
            self.start = 0
        i, end = self.start, len(order)
        # The Pods deleted from the front are skipped once, for good.
        while i < end and live.get(order[i][-1]) is not order[i]:
            i += 1
        self.start = i
        while i < end:
            entry = order[i]
            if live.get(entry[-1]) is entry:
                yield entry
            i += 1


class Ranking:
    """The active Pods of one set, filed for upstream's scale-down order (``ActivePodsWithRanks`` without
    the logarithmic buckets): unscheduled first, then by phase, readiness and deletion cost, then the Pods
    of the Nodes with the most Pods of the set, then by readiness time, restarts, creation and name.

    The Pods sharing (scheduled, phase, ready, cost) and a Node are a group kept in order; the Node's
    place comes from its count at the sync, so a sync merges the groups rather than ranking every Pod."""

    __slots__ = ("filed", "groups", "per_node")

    def __init__(self) -> None:
        self.groups: dict[tuple[tuple[int, Any, int, int], str], _Group] = {}
        self.per_node: dict[str, int] = {}
        self.filed: dict[PodKey, tuple[tuple[tuple[int, Any, int, int], str], tuple[Any, ...]]] = {}

    def add(self, key: PodKey, node: str, own: OwnRank) -> None:
        """File an active pod on ``node`` ("" when unscheduled) with its own part of the rank."""
        phase, ready, cost, ready_since, restarts, created, name = own
        where = ((1 if node else 0, phase, ready, cost), node)
        entry = (ready_since, restarts, created, name, key)
        group = self.groups.get(where)
        if group is None:
            group = self.groups[where] = _Group()
        group.add(key, entry)
        self.per_node[node] = self.per_node.get(node, 0) + 1
        self.filed[key] = (where, entry)

    def remove(self, key: PodKey) -> None:
        """Unfile a pod (no longer active, matching or owned)."""
        where, _entry = self.filed.pop(key)
        group = self.groups[where]
        group.remove(key)
        if not group.live:
            del self.groups[where]
        node = where[1]
        left = self.per_node[node] - 1
        if left:
            self.per_node[node] = left
        else:
            del self.per_node[node]

    def rank(self, key: PodKey) -> tuple[Any, ...]:
        """The pod's whole rank, as a sort key (with the Node counts of now)."""
        (first, node), entry = self.filed[key]
        doubled_up = -self.per_node[node] if node else 0
        return (*first, doubled_up, *entry[:-1])

    def first(self, count: int) -> list[PodKey]:
        """The first ``count`` pods of the deletion order, first first."""
        levels: dict[tuple[int, Any, int, int], dict[int, list[_Group]]] = {}
        per_node = self.per_node
        for (first, node), group in self.groups.items():
            doubled_up = -per_node[node] if node else 0
            levels.setdefault(first, {}).setdefault(doubled_up, []).append(group)
        out: list[PodKey] = []
        if count <= 0:
            return out
        for first in sorted(levels):
            by_count = levels[first]
            for doubled_up in sorted(by_count):
                groups = by_count[doubled_up]
                entries = groups[0].ordered() if len(groups) == 1 else heapq.merge(*(g.ordered() for g in groups))
                for entry in entries:
                    out.append(entry[-1])
                    if len(out) == count:
                        return out
        return out


class SetPods:
    """The Pods a set owns, as its syncs need them: those that changed since the last sync (``dirty``,
    classified by the next one), those whose labels stopped matching (``unmatched``, released), and the
    active ones that match (``active``) with their status counts and, once a sync deletes, their rank."""

    __slots__ = ("active", "dirty", "foreign", "fully", "namespace", "ranking", "ready", "ready_times",
                 "ready_total", "template", "unmatched")

    def __init__(self, namespace: str, keys: set[PodKey]) -> None:
        self.namespace = namespace
        self.dirty: set[PodKey] = set(keys)
        self.unmatched: set[PodKey] = set()
        self.active: dict[PodKey, PodFacts] = {}
        # Pods of another namespace that name the set as controller: their names can tie with the set's own,
        # so the ranking then keeps the old order of ties (see ``ReplicaSetController._doomed``).
        self.foreign: set[PodKey] = {k for k in keys if k[0] != namespace}
        # Active Pods Ready since each instant (sorted), and how many in all.
        self.ready: dict[float, int] = {}
        self.ready_times: list[float] = []
        self.ready_total = 0
        # The template labels ``fully`` counts against (None: not counted yet).
        self.template: list[tuple[str, Any]] | None = None
        self.fully = 0
        self.ranking: Ranking | None = None

    def file(self, key: PodKey) -> None:
        """A pod's new version is owned by the set: the next sync classifies it."""
        self.dirty.add(key)
        if key[0] != self.namespace:
            self.foreign.add(key)

    def drop(self, key: PodKey) -> None:
        """A pod's version is gone from the set (replaced, deleted or owned by another)."""
        self.dirty.discard(key)
        self.unmatched.discard(key)
        self.foreign.discard(key)
        self.uncount(key)

    def count(self, key: PodKey, facts: PodFacts, node: str, own: OwnRank | None) -> None:
        """An active pod that matches: counted for status and filed for ranking (``own`` given when the
        set is ranked)."""
        self.active[key] = facts
        since = facts.ready_since
        if since is not None:
            self.ready_total += 1
            n = self.ready.get(since)
            if n is None:
                insort(self.ready_times, since)
                self.ready[since] = 1
            else:
                self.ready[since] = n + 1
        if self.template is not None and fully_labeled(facts.labels, self.template):
            self.fully += 1
        if self.ranking is not None:
            assert own is not None
            self.ranking.add(key, node, own)

    def uncount(self, key: PodKey) -> None:
        """Take an active pod out of the counts (nothing when it is not counted)."""
        facts = self.active.pop(key, None)
        if facts is None:
            return
        since = facts.ready_since
        if since is not None:
            self.ready_total -= 1
            n = self.ready[since] - 1
            if n:
                self.ready[since] = n
            else:
                del self.ready[since]
                times = self.ready_times
                del times[bisect_left(times, since)]
        if self.template is not None and fully_labeled(facts.labels, self.template):
            self.fully -= 1
        if self.ranking is not None:
            self.ranking.remove(key)

    def fully_labeled(self, template_labels: list[tuple[str, Any]]) -> int:
        """How many active pods carry every label of the template (counted again when it changed)."""
        if self.template != template_labels:
            self.template = template_labels
            self.fully = sum(1 for f in self.active.values() if fully_labeled(f.labels, template_labels))
        return self.fully

    def availability(self, min_ready: float, now: float) -> tuple[int, float | None]:
        """How many active pods are available (Ready for ``min_ready`` seconds), and the seconds until the
        next Ready one becomes available (None: none waits)."""
        # A pod Ready since ``since`` waits while since + min_ready > now: the latest readiness times.
        times, ready = self.ready_times, self.ready
        waiting = 0
        i = len(times)
        while i and times[i - 1] + min_ready > now:
            i -= 1
            waiting += ready[times[i]]
        wait = times[i] + min_ready - now if i < len(times) else None
        available = self.ready_total if min_ready <= 0 else self.ready_total - waiting
        return available, wait
