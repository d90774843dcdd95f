"""The order and cadence of a Machine's drain (seed 001 "Node drain", upstream Cluster API v1.10).

- Each Pod to be drained has a behavior: ``Drain`` (evicted, with an order from a MachineDrainRule, 0
  without one), ``WaitCompleted`` (never evicted, waited for until its object is gone; order 0) or
  ``Skip`` (ignored).
- A pass works on the lowest order still present among the Drain and WaitCompleted Pods: only the Drain
  Pods of that order are evicted; higher orders wait for a later pass (``features/behaviors.yaml``
  records the decision: the seed says "highest to lowest", upstream drains the lowest first).
- Passes repeat every 20 s until every Pod that has to go is gone.
"""

from __future__ import annotations

from collections.abc import Iterable

DRAIN = "Drain"
WAIT_COMPLETED = "WaitCompleted"
SKIP = "Skip"
RETRY_SECONDS = 20


def drain_batches(pods: Iterable[tuple[str, str, int]]) -> list[list[str]]:
    """The batches a drain evicts, in order: ``pods`` are (name, behavior, order); each batch is the
    Drain Pods of one order, lowest first. WaitCompleted Pods (order 0) are never evicted, but an order
    above 0 waits for them too (they hold the batch of order 0 open)."""
    orders: dict[int, list[str]] = {}
    for name, behavior, order in pods:
        if behavior == DRAIN:
            orders.setdefault(order, []).append(name)
        elif behavior == WAIT_COMPLETED:
            orders.setdefault(0, [])
    return [sorted(orders[order]) for order in sorted(orders) if orders[order]]


def may_evict_now(pods: Iterable[tuple[str, str, int]], remaining: set[str]) -> list[str]:
    """The Pods a pass may evict when only ``remaining`` of ``pods`` still exist: the Drain Pods of the
    lowest order still present (WaitCompleted Pods count as order 0)."""
    present = [(name, behavior, order if behavior == DRAIN else 0) for name, behavior, order in pods
               if name in remaining and behavior in (DRAIN, WAIT_COMPLETED)]
    if not present:
        return []
    lowest = min(order for _, _, order in present)
    return sorted(name for name, behavior, order in present if behavior == DRAIN and order == lowest)


def retry_times(start: float, passes: int) -> list[float]:
    """When the first ``passes`` drain passes may run, a drain starting at ``start``."""
    return [start + i * RETRY_SECONDS for i in range(passes)]
