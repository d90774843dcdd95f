"""Virtual time: a clock that only moves when told to, or that follows wall time plus an offset."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from harness.kube.time import rfc3339

# Scenarios start at a fixed, recognisable instant so that timestamps in reports are stable.
EPOCH = datetime(2026, 1, 1, tzinfo=UTC).timestamp()


class VirtualClock:
    """Seconds since the Unix epoch, as a float.

    Frozen (the default) the clock only moves through :meth:`advance_to`; following wall time, it
    reads ``time.monotonic()`` plus an offset that :meth:`advance_to` moves forward.
    """

    def __init__(self, start: float = EPOCH, *, follow_wall_time: bool = False) -> None:
        self._follow = follow_wall_time
        self._base = start
        self._mono0 = time.monotonic()

    @property
    def follows_wall_time(self) -> bool:
        return self._follow

    def now(self) -> float:
        if self._follow:
            return self._base + (time.monotonic() - self._mono0)
        return self._base

    def advance_to(self, instant: float) -> None:
        """Move the clock to ``instant``; never backwards."""
        current = self.now()
        if instant > current:
            self._base += instant - current

    def isoformat(self, instant: float | None = None) -> str:
        """RFC 3339 with seconds precision and ``Z``, as metav1.Time serialises."""
        return rfc3339(self.now() if instant is None else instant)

    def micro_isoformat(self, instant: float | None = None) -> str:
        """RFC 3339 with microseconds, as metav1.MicroTime serialises."""
        moment = datetime.fromtimestamp(self.now() if instant is None else instant, tz=UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
