"""Well-known names of the ``batch`` API group."""

from __future__ import annotations

BATCH_V1 = "batch/v1"
JOB = "Job"
JOB_COMPLETE = "Complete"
JOB_FAILED = "Failed"
# The labels the Job strategy puts on a Job's Pod template (generateSelector): the name and the uid.
JOB_CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
LEGACY_JOB_CONTROLLER_UID_LABEL = "controller-uid"
LEGACY_JOB_NAME_LABEL = "job-name"


__all__ = [
    "BATCH_V1",
    "JOB",
    "JOB_COMPLETE",
    "JOB_CONTROLLER_UID_LABEL",
    "JOB_FAILED",
    "JOB_NAME_LABEL",
    "LEGACY_JOB_CONTROLLER_UID_LABEL",
    "LEGACY_JOB_NAME_LABEL",
]
