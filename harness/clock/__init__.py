"""The virtual clock and the due-work scheduler (above harness.kube, below everything else)."""

from harness.clock.clock import EPOCH, VirtualClock, parse_rfc3339, rfc3339
from harness.clock.scheduler import Scheduler, Timer

__all__ = ["EPOCH", "Scheduler", "Timer", "VirtualClock", "parse_rfc3339", "rfc3339"]
