"""The machine benchmark's count of the cyclic collector's passes (what tells its full passes, the part of
a drain's CPU that grows faster than the Pods, from the rest)."""

from __future__ import annotations

import gc

from benchmarks.machine import CollectorTime


def test_the_collector_time_counts_each_pass_by_generation_and_only_while_registered() -> None:
    spent = CollectorTime()
    gc.callbacks.append(spent.callback)
    try:
        gc.collect(0)
        gc.collect(2)
        gc.collect(2)
    finally:
        gc.callbacks.remove(spent.callback)
    gc.collect(2)
    # Automatic young passes may run in between: at least the explicit one, and exactly the full ones (none
    # after it was removed).
    assert spent.passes[0] >= 1 and spent.passes[2] == 2
    assert all(seconds >= 0.0 for seconds in spent.seconds) and spent.seconds[2] > 0.0
