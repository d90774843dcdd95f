"""The virtual clock and the due-work scheduler (the lowest layer)."""

from harness.clock.clock import EPOCH, VirtualClock, parse_duration, parse_rfc3339, rfc3339
from harness.clock.scheduler import Scheduler, Timer

__all__ = ["EPOCH", "Scheduler", "Timer", "VirtualClock", "parse_duration", "parse_rfc3339", "rfc3339"]
