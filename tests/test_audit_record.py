"""``AuditLog.record`` (the server's positional way in) keeps the same trail as ``AuditLog.add``:
the same records, sequence numbers and retention."""

from __future__ import annotations

from typing import Any

import pytest

from harness.apiserver import builtins
from harness.apiserver.audit import AuditLog
from harness.world.world import World

MiB = 1024 * 1024


def _fields(i: int) -> dict[str, Any]:
    new = {"metadata": {"name": f"c{i}"}, "data": {"k": "x" * (MiB // 2)}} if i % 3 else None
    old = None if i % 3 else {"metadata": {"name": f"c{i}"}}
    return {"time": float(i), "cluster": f"m{i % 2}", "verb": "create" if new else "delete",
            "resource": "configmaps", "subresource": "status" if i % 4 == 0 else "", "namespace": "ns",
            "name": f"c{i}", "user": f"u{i}", "code": 200 + i, "old": old, "new": new}


@pytest.mark.parametrize("limits", [{}, {"max_records": 4}, {"max_bytes": 2 * MiB}, {"enabled": False}])
def test_record_keeps_the_trail_add_keeps(limits: dict[str, Any]) -> None:
    by_add = AuditLog(**limits)
    by_record = AuditLog(**limits)
    for i in range(15):
        by_add.add(**_fields(i))
        by_record.record(*_fields(i).values())
    assert by_record.records == by_add.records
    assert (len(by_record), by_record.dropped, by_record.retained_bytes) == (
        len(by_add), by_add.dropped, by_add.retained_bytes)


def test_a_servers_writes_are_recorded_field_by_field() -> None:
    world = World(simulators=[], crds=False)
    since = len(world.audit)
    world.management.create(builtins.CONFIG_MAP, "default", {"metadata": {"name": "c"}}, user="alice")
    [record] = world.audit.query(since=since)
    assert record.seq == since + 1
    assert (record.cluster, record.verb, record.resource, record.subresource, record.namespace, record.name,
            record.user, record.code, record.old) == (
        world.management.name, "create", "configmaps", "", "default", "c", "alice", 201, None)
    assert record.new is world.management.store.get(("", "configmaps"), ("default", "c"))
    assert record.time == world.clock.now()
