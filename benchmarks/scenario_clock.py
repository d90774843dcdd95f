"""A pytest plugin for benchmarks.conformance: how each scenario spent its wall time.

Loaded into a conformance run through ``PYTEST_PLUGINS``; writes one JSON line per test to the file
named by ``LIFECYCLE_TCK_SCENARIO_CLOCK``: its wall seconds, the test thread's seconds on a CPU and
waiting for one (``/proc/thread-self/schedstat``, Linux), and the process's CPU seconds (every thread).
Wall time minus the thread's time on and waiting for a CPU is the time the scenario was **blocked**:
waiting for something else (a deadline on the wall clock, a socket, another thread). That is what
issue 16 asks to keep under a second per scenario, and unlike wall time it does not grow with the
machine's load.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

OUT = "LIFECYCLE_TCK_SCENARIO_CLOCK"
_SCHEDSTAT = Path("/proc/thread-self/schedstat")


def _thread_clock() -> tuple[float, float]:
    """(seconds on a CPU, seconds waiting for one) of this thread; zeros where the kernel does not say."""
    try:
        on_cpu, waiting, _slices = _SCHEDSTAT.read_text().split()
    except (OSError, ValueError):
        return 0.0, 0.0
    return int(on_cpu) / 1e9, int(waiting) / 1e9


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    """Time the whole protocol of one test (set-up, call, teardown)."""
    wall, cpu, (on_cpu, waiting) = time.perf_counter(), time.process_time(), _thread_clock()
    yield
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    on_cpu_after, waiting_after = _thread_clock()
    target = os.environ.get(OUT)
    if not target:
        return
    record = {"nodeid": item.nodeid, "wall": wall, "cpu": cpu, "thread_cpu": on_cpu_after - on_cpu,
              "thread_waiting": waiting_after - waiting}
    with open(target, "a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\n")
