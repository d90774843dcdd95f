"""An API server runs Python's cyclic garbage collector less often than Python's default (its writes
allocate many containers that live on in the store), unless the process chose its own thresholds."""

from __future__ import annotations

import gc

from harness.apiserver.server import PYTHON_GC_THRESHOLD, SERVER_GC_THRESHOLD, APIServer
from harness.clock import VirtualClock


def test_a_server_runs_the_garbage_collector_less_often_unless_the_process_chose_thresholds() -> None:
    before = gc.get_threshold()
    try:
        gc.set_threshold(*PYTHON_GC_THRESHOLD)
        APIServer("c", VirtualClock())
        assert gc.get_threshold() == SERVER_GC_THRESHOLD
        gc.set_threshold(5000, 5, 5)
        APIServer("c", VirtualClock())
        assert gc.get_threshold() == (5000, 5, 5)
    finally:
        gc.set_threshold(*before)
