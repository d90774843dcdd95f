"""The disruption controller's per-sync counting as it was before it read its member names rather than a
sorted list of its pods (harness/world/disruption.py at 06b12cd): the oracle of
tests/test_disruption_counting.py. ``build_disrupted_pods`` records its events in ``events``."""

from __future__ import annotations

from typing import Any

from harness.apiserver.pdb import is_pod_ready
from harness.world.disruption import DELETION_TIMEOUT, NOT_DELETED, _parse_time


def sorted_pods(members: set[str], cached: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The pods a sync read: the cached members in name order."""
    return [cached[name] for name in sorted(members) if name in cached]


def build_disrupted_pods(
    pods: list[dict[str, Any]], pdb: dict[str, Any], now: float, events: list[tuple[str, str]]
) -> tuple[dict[str, str], float | None]:
    recorded = (pdb.get("status") or {}).get("disruptedPods") or {}
    kept: dict[str, str] = {}
    recheck: float | None = None
    if not recorded:
        return kept, None
    for pod in pods:
        meta = pod.get("metadata") or {}
        if meta.get("deletionTimestamp") or meta.get("name") not in recorded:
            continue
        stamp = recorded[meta["name"]]
        expiry = _parse_time(stamp) + DELETION_TIMEOUT
        if expiry < now:
            events.append((meta["name"], NOT_DELETED))
            continue
        if recheck is None or expiry < recheck:
            recheck = expiry
        kept[meta["name"]] = stamp
    return kept, recheck


def count_healthy(
    pods: list[dict[str, Any]], disrupted: dict[str, str], now: float,
    health: dict[str, tuple[bool, bool]] | None = None,
) -> int:
    healthy = 0
    health = health or {}
    for pod in pods:
        meta = pod.get("metadata") or {}
        name = meta.get("name", "")
        known = health.get(name)
        if known is None:
            known = (bool(meta.get("deletionTimestamp")), is_pod_ready(pod))
        if known[0] or not known[1]:
            continue
        if disrupted:
            stamp = disrupted.get(name)
            if stamp is not None and _parse_time(stamp) + DELETION_TIMEOUT > now:
                continue
        healthy += 1
    return healthy
