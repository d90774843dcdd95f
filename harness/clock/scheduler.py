"""Due work on the virtual clock: callbacks run in time order, ties in the order they were added."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

from harness.clock.clock import VirtualClock


@dataclass(order=True)
class _Item:
    due: float
    seq: int
    callback: Callable[[], None] = field(compare=False)
    cancelled: bool = field(default=False, compare=False)


class Timer:
    """A handle to scheduled work; :meth:`cancel` drops it if it has not run."""

    def __init__(self, item: _Item) -> None:
        self._item = item

    @property
    def due(self) -> float:
        return self._item.due

    def cancel(self) -> None:
        self._item.cancelled = True


class Scheduler:
    """A heap of callbacks keyed by the virtual instant they become due."""

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self._heap: list[_Item] = []
        self._seq = itertools.count()

    def call_at(self, due: float, callback: Callable[[], None]) -> Timer:
        item = _Item(due, next(self._seq), callback)
        heapq.heappush(self._heap, item)
        return Timer(item)

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        return self.call_at(self.clock.now() + max(0.0, delay), callback)

    def next_due(self) -> float | None:
        """The instant of the earliest pending callback, or None."""
        while self._heap and self._heap[0].cancelled:
            heapq.heappop(self._heap)
        return self._heap[0].due if self._heap else None

    def run_one_due(self) -> bool:
        """Run the earliest callback that is due now; False when nothing is due."""
        due = self.next_due()
        if due is None or due > self.clock.now():
            return False
        item = heapq.heappop(self._heap)
        item.callback()
        return True

    def __len__(self) -> int:
        return sum(1 for item in self._heap if not item.cancelled)
