"""Well-known names of the workload rollout lifecycle hooks (seed 004), an API this project defines (no
upstream exists): the ``spec.lifecycleHooks`` field and its enums with their defaults (DESIGN.md "Rollout
decisions"), the environment injected into hook Jobs, the labels of hook Jobs and the annotation recording
a revision's hook sequence, and the ``LifecycleHooks`` condition of a workload. Names only: the oracle
(harness/spec/rollout.py) and the reference controllers (controllers/rollout) each keep their arithmetic.
"""

from __future__ import annotations

# The lifecycle hooks API (seed 004 "API Objects").
LIFECYCLE_HOOKS = "lifecycleHooks"
PROGRESS_AVAILABLE = "ProgressAvailable"
TRIGGER_TYPES = (PROGRESS_AVAILABLE,)
ABORT = "Abort"
IGNORE = "Ignore"
FAILURE_POLICIES = (ABORT, IGNORE)
ALWAYS = "Always"
ON_FAILURE = "OnFailure"
NEVER = "Never"
RETAIN_POLICIES = (ALWAYS, ON_FAILURE, NEVER)
DEFAULT_FAILURE_POLICY = ABORT
DEFAULT_RETAIN_POLICY = ALWAYS
DEFAULT_TRIGGER_TYPE = PROGRESS_AVAILABLE

# Environment injected into hook Jobs (seed 004 "Injecting deployment information into hooks").
ENV_FROM_OBJECT = "K8S_ROLLOUT_FROM_OBJECT"
ENV_TO_OBJECT = "K8S_ROLLOUT_TO_OBJECT"
ENV_TYPE = "K8S_ROLLOUT_TYPE"
ROLLOUT = "ROLLOUT"
ROLLBACK = "ROLLBACK"

# The hook Job contract (DESIGN.md "Rollout decisions"): one Job per (owner, revision, hook), labelled with
# these four labels; the hook sequence of a revision is recorded as a JSON annotation on its ReplicaSet or
# ControllerRevision, so controller restarts resume where the last instance stopped.
HOOK_PREFIX = "rollout.lifecycle-tck.io"
HOOK_OWNER_KIND_LABEL = f"{HOOK_PREFIX}/owner-kind"
HOOK_OWNER_NAME_LABEL = f"{HOOK_PREFIX}/owner-name"
HOOK_REVISION_LABEL = f"{HOOK_PREFIX}/revision"
HOOK_NAME_LABEL = f"{HOOK_PREFIX}/hook"
HOOK_STATE_ANNOTATION = f"{HOOK_PREFIX}/hooks"

# The workload's LifecycleHooks condition and the reason it has while hooks run.
LIFECYCLE_HOOKS_CONDITION = "LifecycleHooks"
HOOK_RUNNING_REASON = "LifecycleHookRunning"
