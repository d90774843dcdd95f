"""The apps/v1 facts the rollout controllers work with (kinds, labels, annotations) and the
``spec.lifecycleHooks`` API of seed 004, with small readers of workload dicts.

``spec.lifecycleHooks`` is a list of ``{name, trigger: {type: ProgressAvailable,
progressAvailableParams: {progressPoint}}, failurePolicy, retainPolicy, jobSpec}`` (the seed's Go
types in JSON). Defaults (DESIGN.md "Rollout decisions"): failurePolicy ``Abort``, retainPolicy
``Always``, trigger.type ``ProgressAvailable``.
"""

from __future__ import annotations

from typing import Any

from harness.kube.names.apps import (
    CHANGE_CAUSE_ANNOTATION,
    CONTROLLER_HASH_LABEL,
    CONTROLLER_REVISION,
    CONTROLLER_REVISION_HASH_LABEL,
    DEPLOYMENT,
    DEPRECATED_ROLLBACK_TO_ANNOTATION,
    DESIRED_REPLICAS_ANNOTATION,
    MAX_REPLICAS_ANNOTATION,
    ON_DELETE,
    ORDERED_READY,
    PARALLEL,
    POD_INDEX_LABEL,
    RECREATE,
    REVISION_ANNOTATION,
    REVISION_HISTORY_ANNOTATION,
    ROLLING_UPDATE,
    STATEFUL_SET_POD_NAME_LABEL,
)
from harness.kube.names.rollout_hooks import (
    ABORT,
    ALWAYS,
    DEFAULT_FAILURE_POLICY,
    DEFAULT_RETAIN_POLICY,
    DEFAULT_TRIGGER_TYPE,
    ENV_FROM_OBJECT,
    ENV_TO_OBJECT,
    ENV_TYPE,
    FAILURE_POLICIES,
    HOOK_NAME_LABEL,
    HOOK_OWNER_KIND_LABEL,
    HOOK_OWNER_NAME_LABEL,
    HOOK_PREFIX,
    HOOK_REVISION_LABEL,
    HOOK_STATE_ANNOTATION,
    IGNORE,
    LIFECYCLE_HOOKS,
    NEVER,
    ON_FAILURE,
    PROGRESS_AVAILABLE,
    RETAIN_POLICIES,
    ROLLBACK,
    ROLLOUT,
    TRIGGER_TYPES,
)
from harness.kube.objects import clone

# Re-exported for the rollout controllers' imports: the names are defined once in harness/kube/names.
__all__ = [
    "ABORT", "ALWAYS", "CHANGE_CAUSE_ANNOTATION", "CONTROLLER_HASH_LABEL", "CONTROLLER_REVISION",
    "CONTROLLER_REVISION_HASH_LABEL", "DEFAULT_FAILURE_POLICY", "DEFAULT_RETAIN_POLICY", "DEFAULT_TRIGGER_TYPE",
    "DEPLOYMENT", "DEPRECATED_ROLLBACK_TO_ANNOTATION", "DESIRED_REPLICAS_ANNOTATION", "ENV_FROM_OBJECT",
    "ENV_TO_OBJECT", "ENV_TYPE", "FAILURE_POLICIES", "HOOK_NAME_LABEL", "HOOK_OWNER_KIND_LABEL",
    "HOOK_OWNER_NAME_LABEL", "HOOK_PREFIX", "HOOK_REVISION_LABEL", "HOOK_STATE_ANNOTATION", "IGNORE",
    "LIFECYCLE_HOOKS", "MAX_REPLICAS_ANNOTATION", "NEVER", "ON_DELETE", "ON_FAILURE", "ORDERED_READY",
    "PARALLEL", "POD_INDEX_LABEL", "PROGRESS_AVAILABLE", "RECREATE", "RETAIN_POLICIES", "REVISION_ANNOTATION",
    "REVISION_HISTORY_ANNOTATION", "ROLLBACK", "ROLLING_UPDATE", "ROLLOUT", "STATEFUL_SET_POD_NAME_LABEL",
    "TRIGGER_TYPES",
]

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
    out = clone(template)
    labels = (out.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(label, None)
        if not labels:
            out["metadata"].pop("labels", None)
    return out
