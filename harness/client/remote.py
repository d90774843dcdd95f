"""Running controllers in their own process against a server: its clock, and the run loop.

The server's virtual clock follows wall time plus an offset that ``POST /harness/v1/clock/advance``
moves. :class:`ServerClock` mirrors it: it reads the server's time now and then and counts wall
time in between, so due timers (requeue-after) fire when the server's time reaches them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from harness.client.runtime import Manager
from harness.clock import VirtualClock

# How often the mirrored clock re-reads the server's time (an admin advance is seen within this).
SYNC_INTERVAL = 0.1


class ServerClock(VirtualClock):
    """A clock that follows a server's virtual time, read through ``read_server_time``."""

    def __init__(self, read_server_time: Callable[[], float]) -> None:
        self._read = read_server_time
        server_now = read_server_time()
        super().__init__(server_now, follow_wall_time=True)
        self._synced_at = time.monotonic()

    def sync(self) -> None:
        """Re-read the server's time (at most every ``SYNC_INTERVAL`` seconds)."""
        if time.monotonic() - self._synced_at < SYNC_INTERVAL:
            return
        server_now = self._read()
        self._synced_at = time.monotonic()
        self.advance_to(server_now)


def run_forever(manager: Manager, clock: ServerClock, stop: threading.Event) -> None:
    """Run the manager's controllers until ``stop`` is set: settle, then sleep until an event
    arrives, a timer falls due or the clock needs re-reading."""
    wake = threading.Event()
    for source in manager.sources():
        source.on_event = wake.set
    while not stop.is_set():
        try:
            clock.sync()
        except ConnectionError:
            pass  # the server is away for a moment; try again on the next turn
        manager.settle()
        for source in manager.sources():
            if source.on_event is None:
                source.on_event = wake.set
        due = manager.scheduler.next_due()
        timeout = SYNC_INTERVAL if due is None else max(0.0, min(SYNC_INTERVAL, due - clock.now()))
        wake.wait(timeout)
        wake.clear()
