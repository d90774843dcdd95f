"""Bounded long runs (issue 17): the audit trail and the watch history keep at most their limits,
and the memory a long run took comes back once objects are deleted and history compacted.

Scenario worlds keep everything (no limits); ``serve`` sets limits (``harness/targets/serve.py``).
"""

from __future__ import annotations

import gc
import tracemalloc

import pytest

from harness.apiserver import builtins
from harness.apiserver.audit import AuditLog
from harness.apiserver.store import Store
from harness.apiserver.watch import Watch
from harness.kube.names.meta import ADDED, ERROR
from harness.targets.serve import Retention
from harness.world.world import World

MiB = 1024 * 1024
DATA = 1_000_000  # just under the 1 MiB ConfigMap data limit


def _record(log: AuditLog, name: str, new: dict | None = None) -> None:
    log.add(time=0.0, cluster="m", verb="create", resource="configmaps", subresource="", namespace="ns",
            name=name, user="u", code=201, old=None, new=new)


def test_the_audit_trail_keeps_its_newest_records_and_counts_every_one() -> None:
    log = AuditLog(max_records=3)
    for i in range(10):
        _record(log, f"c{i}")
    assert len(log) == 10 and log.dropped == 7
    assert [r.name for r in log] == ["c7", "c8", "c9"]
    assert [r.seq for r in log] == [8, 9, 10]
    assert [r.name for r in log.query(since=8)] == ["c8", "c9"]
    assert [r.name for r in log.query(since=2)] == ["c7", "c8", "c9"]


def test_the_audit_trail_keeps_at_most_its_bytes_of_object_versions() -> None:
    log = AuditLog(max_bytes=3 * MiB)
    for i in range(20):
        _record(log, f"c{i}", {"metadata": {"name": f"c{i}"}, "data": {"k": "x" * MiB}})
    assert log.retained_bytes <= 3 * MiB
    assert 1 <= len(log.records) <= 3 and len(log) == 20
    assert log.records[-1].name == "c19"


def test_a_scenario_worlds_audit_trail_keeps_everything() -> None:
    world = World(simulators=[], crds=False)
    before = len(world.audit.records)
    for i in range(50):
        world.management.create(builtins.CONFIG_MAP, "default", {"metadata": {"name": f"c{i}"}})
    assert len(world.audit.records) == before + 50 and world.audit.dropped == 0


def test_the_watch_history_past_its_limits_is_compacted() -> None:
    store = Store(history=5, history_bytes=None)
    skey = ("", "configmaps")
    for i in range(1, 11):
        store.put(skey, ("ns", f"c{i}"), {"metadata": {"name": f"c{i}", "resourceVersion": store.next_rv()}})
    assert store.history_length() == 5
    late = store.watch(skey, Watch(namespace=None, matcher=None), "7")
    assert [obj["metadata"]["name"] for _, obj in late.drain()] == ["c8", "c9", "c10"]
    early = store.watch(skey, Watch(namespace=None, matcher=None), "2")
    assert [event for event, _ in early.drain()] == [ERROR]

    sized = Store(history_bytes=2 * MiB)
    for _ in range(5):
        obj = {"metadata": {"name": "big", "resourceVersion": sized.next_rv()}, "data": {"k": "x" * MiB}}
        sized.put(skey, ("ns", "big"), obj)
    assert sized.history_bytes <= 2 * MiB and sized.history_length() <= 2
    assert [e for e, _ in sized.watch(skey, Watch(namespace=None, matcher=None), "1").drain()] == [ERROR]
    assert [e for e, _ in sized.watch(skey, Watch(namespace=None, matcher=None), None).drain()] == [ADDED]


def _rewrite_and_forget(world: World, rounds: int) -> int:
    """Bytes still allocated after ``rounds`` rewrites of a 1 MB ConfigMap, its deletion and a
    compaction, compared with before."""
    server = world.management
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        server.create(builtins.CONFIG_MAP, "default", {"metadata": {"name": "big"}, "data": {"k": "a" * DATA}})
        for i in range(rounds):
            current = server.get(builtins.CONFIG_MAP, "default", "big")
            current["data"]["k"] = str(i % 10) * DATA  # a new 1 MB value each time
            server.update(builtins.CONFIG_MAP, "default", "big", current)
        server.delete(builtins.CONFIG_MAP, "default", "big")
        server.store.compact()
        del current
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("rounds", [300])
def test_300_rewrites_of_a_1_mib_configmap_give_their_memory_back(rounds: int) -> None:
    keep = Retention(audit_max_bytes=8 * MiB, history_max_bytes=8 * MiB)
    world = World(simulators=[], crds=False, history=keep.history_max_events, history_bytes=keep.history_max_bytes,
                  audit_max_records=keep.audit_max_records, audit_max_bytes=keep.audit_max_bytes)
    kept = _rewrite_and_forget(world, rounds)
    # The audit trail's budget (8 MiB) and some slack; without limits this is about 300 MB.
    assert kept < 12 * MiB, f"{kept / MiB:.1f} MiB still held"
    assert world.audit.retained_bytes <= 8 * MiB


def test_without_limits_the_same_rewrites_stay_in_memory() -> None:
    # The bound above could fail: an unbounded world holds every version it was sent.
    world = World(simulators=[], crds=False)
    assert _rewrite_and_forget(world, 20) > 18 * DATA


def test_a_watcher_that_leaves_too_many_events_unread_is_closed_and_lets_them_go() -> None:
    watch = Watch(namespace=None, matcher=None)
    watch.max_queued = 3
    for i in range(3):
        watch.offer("ADDED", {"metadata": {"name": f"c{i}", "resourceVersion": str(i + 1)}}, None)
    assert len(watch.events) == 3 and not watch.closed
    watch.offer("ADDED", {"metadata": {"name": "c3", "resourceVersion": "4"}}, None)
    assert watch.closed and not watch.events  # its stream ends; the client lists and watches again


def test_a_watcher_that_keeps_up_is_never_closed() -> None:
    watch = Watch(namespace=None, matcher=None)
    watch.max_queued = 3
    for i in range(10):
        watch.offer("ADDED", {"metadata": {"name": f"c{i}", "resourceVersion": str(i + 1)}}, None)
        watch.drain()
    assert not watch.closed
