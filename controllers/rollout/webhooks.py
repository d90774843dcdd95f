"""Admission for the rollout kinds: ``spec.lifecycleHooks`` of Deployments, StatefulSets and DaemonSets
(defaulting and validation), and the Deployment strategy checks upstream's apps validation makes.

This server keeps unknown spec fields of built-in kinds (nothing prunes them), so ``lifecycleHooks``
survives create, update, every patch type and apply; this plugin gives it the API semantics seed 004
asks for. Refusals are 422 ``Invalid`` with one cause per field, as built-in validation answers
(``Deployment.apps "web" is invalid: spec.lifecycleHooks[1].name: Duplicate value: "smoke"``).

Defaults (DESIGN.md "Rollout decisions"): ``failurePolicy: Abort``, ``retainPolicy: Always``,
``trigger.type: ProgressAvailable``. Rules: a name that is a DNS-1123 label, unique in the list; a
known trigger type with ``progressAvailableParams.progressPoint`` set; the point an integer within
0..spec.replicas or a percentage within 0%..100% (checked when the hooks or the replicas are written
together, so scaling an existing workload below a point is not refused: the point is then clamped);
known policies; a ``jobSpec`` whose pod template has containers and a restartPolicy of OnFailure or
Never, and non-negative counts. Deployments: ``maxUnavailable`` may not be 0 when ``maxSurge`` is 0,
neither may be negative, and ``maxUnavailable`` may not exceed 100%.
"""

from __future__ import annotations

from typing import Any

from controllers.rollout.api import (
    DEFAULT_FAILURE_POLICY,
    DEFAULT_RETAIN_POLICY,
    DEFAULT_TRIGGER_TYPE,
    DEPLOYMENT,
    FAILURE_POLICIES,
    LIFECYCLE_HOOKS,
    RECREATE,
    RETAIN_POLICIES,
    TRIGGER_TYPES,
)
from harness.apiserver.resources import ResourceType
from harness.apiserver.validation import validate_pod_spec
from harness.kube import errors as api_errors
from harness.kube.errors import FieldError
from harness.kube.intstr import is_percent, percent_of
from harness.kube.names.apps import APPS_GROUP, DAEMON_SET, STATEFUL_SET
from harness.kube.names.meta import CREATE, UPDATE
from harness.kube.validation import INT_OR_PERCENT_MSG, IS_NEGATIVE_MSG, NOT_MORE_THAN_100_PERCENT_MSG, is_dns1123_label

HOOKS_PATH = f"spec.{LIFECYCLE_HOOKS}"
JOB_RESTART_POLICIES = ("OnFailure", "Never")
POINT_RANGE = "must be between 0 and {replicas} (spec.replicas), inclusive"
PERCENT_RANGE = "must be between 0% and 100%, inclusive"
POINT_FORM = 'must be an integer or a percentage ("50%")'
NOT_A_LIST = "must be a list of lifecycle hooks"
NOT_AN_OBJECT = "must be an object"
MAX_UNAVAILABLE_ZERO = "may not be 0 when `maxSurge` is 0"


def default_hooks(obj: dict[str, Any]) -> None:
    """Fill the hooks' defaults in place."""
    hooks = (obj.get("spec") or {}).get(LIFECYCLE_HOOKS)
    if not isinstance(hooks, list):
        return
    for hook in hooks:
        if not isinstance(hook, dict):
            continue
        hook.setdefault("failurePolicy", DEFAULT_FAILURE_POLICY)
        hook.setdefault("retainPolicy", DEFAULT_RETAIN_POLICY)
        trigger = hook.get("trigger")
        if isinstance(trigger, dict):
            trigger.setdefault("type", DEFAULT_TRIGGER_TYPE)


def _validate_point(point: Any, path: str, replicas: int | None) -> list[FieldError]:
    if isinstance(point, bool) or not isinstance(point, (int, str)):
        return [api_errors.invalid(path, point, POINT_FORM)]
    if isinstance(point, str):
        if not is_percent(point):
            return [api_errors.invalid(path, point, POINT_FORM)]
        if percent_of(point) > 100:
            return [api_errors.invalid(path, point, PERCENT_RANGE)]
        return []
    if point < 0 or (replicas is not None and point > replicas):
        return [api_errors.invalid(path, point, POINT_RANGE.format(replicas=replicas))]
    return []


def _validate_job_spec(job_spec: Any, path: str) -> list[FieldError]:
    if job_spec is None:
        return [api_errors.required(path)]
    if not isinstance(job_spec, dict):
        return [api_errors.invalid(path, job_spec, NOT_AN_OBJECT)]
    errs: list[FieldError] = []
    for field in ("parallelism", "completions", "backoffLimit", "activeDeadlineSeconds"):
        value = job_spec.get(field)
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            errs.append(api_errors.invalid(f"{path}.{field}", value, IS_NEGATIVE_MSG))
    template = job_spec.get("template")
    if not isinstance(template, dict):
        errs.append(api_errors.required(f"{path}.template"))
        return errs
    pod_spec = template.get("spec") if isinstance(template.get("spec"), dict) else {}
    errs.extend(validate_pod_spec(pod_spec, f"{path}.template.spec"))
    policy = pod_spec.get("restartPolicy")
    if policy not in (None, "") and policy not in JOB_RESTART_POLICIES:
        errs.append(api_errors.not_supported(f"{path}.template.spec.restartPolicy", policy,
                                             list(JOB_RESTART_POLICIES)))
    return errs


def validate_hooks(obj: dict[str, Any], *, check_range: bool = True) -> list[FieldError]:
    """Field errors of ``spec.lifecycleHooks`` (see the module docstring)."""
    spec = obj.get("spec") or {}
    hooks = spec.get(LIFECYCLE_HOOKS)
    if hooks is None:
        return []
    if not isinstance(hooks, list):
        return [api_errors.invalid(HOOKS_PATH, hooks, NOT_A_LIST)]
    replicas = spec.get("replicas", 1) if check_range and obj.get("kind") != DAEMON_SET else None
    if replicas is not None and not isinstance(replicas, int):
        replicas = None
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, hook in enumerate(hooks):
        path = f"{HOOKS_PATH}[{i}]"
        if not isinstance(hook, dict):
            errs.append(api_errors.invalid(path, hook, NOT_AN_OBJECT))
            continue
        name = hook.get("name")
        if not name:
            errs.append(api_errors.required(f"{path}.name"))
        elif not isinstance(name, str):
            errs.append(api_errors.invalid(f"{path}.name", name, NOT_AN_OBJECT))
        else:
            errs.extend(api_errors.invalid(f"{path}.name", name, m) for m in is_dns1123_label(name))
            if name in seen:
                errs.append(api_errors.duplicate(f"{path}.name", name))
            seen.add(name)
        trigger = hook.get("trigger")
        if not isinstance(trigger, dict):
            errs.append(api_errors.required(f"{path}.trigger"))
        else:
            kind = trigger.get("type", DEFAULT_TRIGGER_TYPE)
            if kind not in TRIGGER_TYPES:
                errs.append(api_errors.not_supported(f"{path}.trigger.type", kind, list(TRIGGER_TYPES)))
            params = trigger.get("progressAvailableParams")
            params_path = f"{path}.trigger.progressAvailableParams"
            if not isinstance(params, dict):
                errs.append(api_errors.required(params_path))
            elif params.get("progressPoint") is None:
                errs.append(api_errors.required(f"{params_path}.progressPoint"))
            else:
                errs.extend(_validate_point(params["progressPoint"], f"{params_path}.progressPoint", replicas))
        policy = hook.get("failurePolicy", DEFAULT_FAILURE_POLICY)
        if policy not in FAILURE_POLICIES:
            errs.append(api_errors.not_supported(f"{path}.failurePolicy", policy, list(FAILURE_POLICIES)))
        retain = hook.get("retainPolicy", DEFAULT_RETAIN_POLICY)
        if retain not in RETAIN_POLICIES:
            errs.append(api_errors.not_supported(f"{path}.retainPolicy", retain, list(RETAIN_POLICIES)))
        errs.extend(_validate_job_spec(hook.get("jobSpec"), f"{path}.jobSpec"))
    return errs


def _int_or_percent(value: Any, path: str) -> list[FieldError]:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return [api_errors.invalid(path, value, INT_OR_PERCENT_MSG)]
    if isinstance(value, int):
        return [api_errors.invalid(path, value, IS_NEGATIVE_MSG)] if value < 0 else []
    if not is_percent(value):
        return [api_errors.invalid(path, value, INT_OR_PERCENT_MSG)]
    return []


def validate_deployment_strategy(obj: dict[str, Any]) -> list[FieldError]:
    """``ValidateRollingUpdateDeployment``: non-negative int-or-percent values, maxUnavailable at most
    100%, and not both 0 (the unscaled values: ``0`` or ``"0%"``)."""
    strategy = (obj.get("spec") or {}).get("strategy") or {}
    if strategy.get("type") == RECREATE:
        return []
    rolling = strategy.get("rollingUpdate")
    if not isinstance(rolling, dict):
        return []
    path = "spec.strategy.rollingUpdate"
    surge, unavailable = rolling.get("maxSurge"), rolling.get("maxUnavailable")
    errs = _int_or_percent(surge, f"{path}.maxSurge") if surge is not None else []
    errs += _int_or_percent(unavailable, f"{path}.maxUnavailable") if unavailable is not None else []
    if errs:
        return errs
    if isinstance(unavailable, str) and percent_of(unavailable) > 100:
        errs.append(api_errors.invalid(f"{path}.maxUnavailable", unavailable, NOT_MORE_THAN_100_PERCENT_MSG))

    def zero(value: Any) -> bool:
        return value == 0 or (isinstance(value, str) and percent_of(value) == 0)

    if zero(surge) and zero(unavailable):
        errs.append(api_errors.invalid(f"{path}.maxUnavailable", unavailable, MAX_UNAVAILABLE_ZERO))
    return errs


def admit_workload(
    operation: str, rt: ResourceType, new: dict[str, Any] | None, old: dict[str, Any] | None
) -> list[FieldError]:
    """Admission plugin for Deployments, StatefulSets and DaemonSets: default the hooks, then validate
    them (the point range only when hooks or replicas are written together with a hook change or on
    create) and, for Deployments, the rolling update parameters."""
    if new is None or operation not in (CREATE, UPDATE):
        return []
    if operation == UPDATE and old is not None and new.get("spec") == old.get("spec"):
        return []  # status and metadata writes do not revisit the spec
    default_hooks(new)
    hooks_changed = old is None or (new.get("spec") or {}).get(LIFECYCLE_HOOKS) != \
        (old.get("spec") or {}).get(LIFECYCLE_HOOKS)
    errs = validate_hooks(new, check_range=hooks_changed)
    if rt.kind == DEPLOYMENT:
        errs += validate_deployment_strategy(new)
    return errs


# (API group, kind, plugin) for the composition root to install on the management cluster.
ADMISSION_PLUGINS = (
    (APPS_GROUP, DEPLOYMENT, admit_workload),
    (APPS_GROUP, STATEFUL_SET, admit_workload),
    (APPS_GROUP, DAEMON_SET, admit_workload),
)
