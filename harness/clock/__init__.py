"""The virtual clock and the due-work scheduler (above harness.kube, below everything else)."""

from harness.clock.clock import EPOCH, VirtualClock
from harness.clock.scheduler import Scheduler, Timer
from harness.kube.time import parse_rfc3339, rfc3339

__all__ = ["EPOCH", "Scheduler", "Timer", "VirtualClock", "parse_rfc3339", "rfc3339"]
