"""The kit's own knobs: annotations with the prefix ``harness.test/`` that a scenario sets on objects
to steer the simulators (documented in README). Not Kubernetes names, but a public contract that the
simulators, the steps and the tests share."""

from __future__ import annotations

READY_DELAY_ANNOTATION = "harness.test/ready-delay"
NEVER_READY_ANNOTATION = "harness.test/never-ready"
RUN_SECONDS_ANNOTATION = "harness.test/run-seconds"
EXIT_CODE_ANNOTATION = "harness.test/exit-code"
IGNORE_TERMINATION_ANNOTATION = "harness.test/ignore-termination"
NODE_HEALTH_ANNOTATION = "harness.test/node-health"
PROVISION_DELAY_ANNOTATION = "harness.test/provision-delay"
DELETION_DELAY_ANNOTATION = "harness.test/deletion-delay"
DELETION_STUCK_ANNOTATION = "harness.test/deletion-stuck"
DETACH_DELAY_ANNOTATION = "harness.test/detach-delay"
DETACH_STUCK_ANNOTATION = "harness.test/detach-stuck"
JOB_RESULT_ANNOTATION = "harness.test/job-result"
JOB_DURATION_ANNOTATION = "harness.test/job-duration"
WORKLOAD_UNREACHABLE_ANNOTATION = "harness.test/workload-unreachable"


__all__ = [
    "READY_DELAY_ANNOTATION",
    "NEVER_READY_ANNOTATION",
    "RUN_SECONDS_ANNOTATION",
    "EXIT_CODE_ANNOTATION",
    "IGNORE_TERMINATION_ANNOTATION",
    "NODE_HEALTH_ANNOTATION",
    "PROVISION_DELAY_ANNOTATION",
    "DELETION_DELAY_ANNOTATION",
    "DELETION_STUCK_ANNOTATION",
    "DETACH_DELAY_ANNOTATION",
    "DETACH_STUCK_ANNOTATION",
    "JOB_RESULT_ANNOTATION",
    "JOB_DURATION_ANNOTATION",
    "WORKLOAD_UNREACHABLE_ANNOTATION",
]
