"""harness.spec.drain: which Pods a drain pass may evict, and how often passes repeat (seed 001)."""

from __future__ import annotations

from harness.spec.drain import (
    DRAIN,
    RETRY_SECONDS,
    SKIP,
    WAIT_COMPLETED,
    drain_batches,
    may_evict_now,
    retry_times,
)

PODS = [("a", DRAIN, 0), ("b", DRAIN, 10), ("c", DRAIN, -5), ("d", SKIP, 0), ("e", WAIT_COMPLETED, 0),
        ("f", DRAIN, 10)]


def test_MD_RULE_004_lowest_order_first_in_batches() -> None:
    assert drain_batches(PODS) == [["c"], ["a"], ["b", "f"]]


def test_MD_RULE_004_MD_RULE_005_a_pass_evicts_only_the_lowest_order_still_present() -> None:
    names = {name for name, _, _ in PODS}
    assert may_evict_now(PODS, names) == ["c"]
    assert may_evict_now(PODS, names - {"c"}) == ["a"]
    # The WaitCompleted Pod holds order 0 open: order 10 waits for it to go.
    assert may_evict_now(PODS, names - {"a", "c"}) == []
    assert may_evict_now(PODS, {"b", "f", "d"}) == ["b", "f"]
    assert may_evict_now(PODS, {"d"}) == []


def test_passes_repeat_every_20_seconds() -> None:
    assert RETRY_SECONDS == 20
    assert retry_times(100.0, 3) == [100.0, 120.0, 140.0]
