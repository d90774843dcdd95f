"""Well-known names of the ``batch`` API group."""

from __future__ import annotations

BATCH_V1 = "batch/v1"
JOB = "Job"
JOB_COMPLETE = "Complete"
JOB_FAILED = "Failed"


__all__ = [
    "BATCH_V1",
    "JOB",
    "JOB_COMPLETE",
    "JOB_FAILED",
]
