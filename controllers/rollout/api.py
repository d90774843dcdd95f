"""The apps/v1 facts the rollout controllers work with (kinds, labels, annotations) and the
``spec.lifecycleHooks`` API of seed 004, with small readers of workload dicts.

``spec.lifecycleHooks`` is a list of ``{name, trigger: {type: ProgressAvailable,
progressAvailableParams: {progressPoint}}, failurePolicy, retainPolicy, jobSpec}`` (the seed's Go
types in JSON). Defaults (DESIGN.md "Rollout decisions"): failurePolicy ``Abort``, retainPolicy
``Always``, trigger.type ``ProgressAvailable``.
"""

from __future__ import annotations

import copy
from typing import Any

DEPLOYMENT = "Deployment"
CONTROLLER_REVISION = "ControllerRevision"

# Strategies.
ROLLING_UPDATE = "RollingUpdate"
RECREATE = "Recreate"
ON_DELETE = "OnDelete"
ORDERED_READY = "OrderedReady"
PARALLEL = "Parallel"

# Labels and annotations of upstream's workload controllers.
CONTROLLER_REVISION_HASH_LABEL = "controller-revision-hash"
CONTROLLER_HASH_LABEL = "controller.kubernetes.io/hash"
STATEFUL_SET_POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
REVISION_HISTORY_ANNOTATION = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS_ANNOTATION = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS_ANNOTATION = "deployment.kubernetes.io/max-replicas"
CHANGE_CAUSE_ANNOTATION = "kubernetes.io/change-cause"
DEPRECATED_ROLLBACK_TO_ANNOTATION = "deprecated.deployment.rollback.to"

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

# What this project adds (no upstream exists): the labels of hook Jobs and where the hook sequence of a
# revision is recorded (a JSON annotation on the new ReplicaSet or ControllerRevision), so controller
# restarts resume exactly where the last instance stopped.
HOOK_PREFIX = "rollout.lifecycle-tck.io"
HOOK_OWNER_KIND_LABEL = f"{HOOK_PREFIX}/owner-kind"
HOOK_OWNER_NAME_LABEL = f"{HOOK_PREFIX}/owner-name"
HOOK_REVISION_LABEL = f"{HOOK_PREFIX}/revision"
HOOK_NAME_LABEL = f"{HOOK_PREFIX}/hook"
HOOK_STATE_ANNOTATION = f"{HOOK_PREFIX}/hooks"


def meta(obj: dict[str, Any]) -> dict[str, Any]:
    """The object's metadata (an empty dict when absent)."""
    return obj.get("metadata") or {}


def spec(obj: dict[str, Any]) -> dict[str, Any]:
    """The object's spec (an empty dict when absent)."""
    return obj.get("spec") or {}


def status(obj: dict[str, Any]) -> dict[str, Any]:
    """The object's status (an empty dict when absent)."""
    return obj.get("status") or {}


def annotations(obj: dict[str, Any]) -> dict[str, str]:
    """The object's annotations (an empty dict when absent)."""
    return meta(obj).get("annotations") or {}


def replicas(obj: dict[str, Any], default: int = 1) -> int:
    """``spec.replicas`` as an int (``default`` when unset)."""
    value = spec(obj).get("replicas")
    return default if value is None else int(value)


def namespaced_name(obj: dict[str, Any]) -> str:
    """``namespace/name``, as the hook environment names objects."""
    return f"{meta(obj).get('namespace', '')}/{meta(obj).get('name', '')}"


def owner_ref(obj: dict[str, Any], *, controller: bool = True) -> dict[str, Any]:
    """An ownerReference to ``obj`` that blocks its deletion."""
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": meta(obj)["name"],
            "uid": meta(obj)["uid"], "controller": controller, "blockOwnerDeletion": True}




def lifecycle_hooks(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """``spec.lifecycleHooks`` (dict entries only)."""
    hooks = spec(obj).get(LIFECYCLE_HOOKS)
    return [h for h in hooks if isinstance(h, dict)] if isinstance(hooks, list) else []


def progress_point(hook: dict[str, Any]) -> Any:
    """The hook's ``trigger.progressAvailableParams.progressPoint`` (None when unset)."""
    trigger = hook.get("trigger") or {}
    return (trigger.get("progressAvailableParams") or {}).get("progressPoint")


def failure_policy(hook: dict[str, Any]) -> str:
    """The hook's failurePolicy, defaulted."""
    return str(hook.get("failurePolicy") or DEFAULT_FAILURE_POLICY)


def retain_policy(hook: dict[str, Any]) -> str:
    """The hook's retainPolicy, defaulted."""
    return str(hook.get("retainPolicy") or DEFAULT_RETAIN_POLICY)


def template_without(template: dict[str, Any], label: str) -> dict[str, Any]:
    """A copy of a pod template without ``label`` (and without an emptied labels map)."""
    out = copy.deepcopy(template)
    labels = (out.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(label, None)
        if not labels:
            out["metadata"].pop("labels", None)
    return out
