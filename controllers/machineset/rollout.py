"""The arithmetic of a MachineDeployment's rollout (``mdutil`` of Cluster API v1.10): surge and
unavailability (rounding as ``intstr.GetScaledValueFromIntOrPercent``: surge up, unavailable down, and
1 unavailable when both come to 0), the replicas of the new MachineSet, which MachineSet is new (same
template, in-place mutable fields aside), revisions and the template hash.
"""

from __future__ import annotations

import json
from typing import Any

from controllers.machine.api import group_of, meta
from controllers.machine.errors import ReconcileError
from controllers.machineset.api import (
    DESIRED_REPLICAS_ANNOTATION,
    MAX_REPLICAS_ANNOTATION,
    ON_DELETE,
    REVISION_ANNOTATION,
    REVISION_HISTORY_ANNOTATION,
    ROLLING_UPDATE,
    creation_key,
    replicas,
    status_int,
)
from harness.kube.intstr import scaled_value
from harness.kube.names.capi import CONVERSION_DATA_ANNOTATION
from harness.kube.names.core import LAST_APPLIED_CONFIGURATION_ANNOTATION

# Annotations of a MachineDeployment that its MachineSets do not get (annotationsToSkip).
SKIPPED_ANNOTATIONS = (LAST_APPLIED_CONFIGURATION_ANNOTATION, REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION,
                       DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION, CONVERSION_DATA_ANNOTATION)
UNSUPPORTED_STRATEGY = "failed to compute replicas: deployment strategy {strategy} isn't supported"


def strategy(md: dict[str, Any]) -> dict[str, Any]:
    """``spec.strategy`` (empty when unset)."""
    return (md.get("spec") or {}).get("strategy") or {}


def is_rolling_update(md: dict[str, Any]) -> bool:
    return strategy(md).get("type") == ROLLING_UPDATE


def resolve_fenceposts(max_surge: Any, max_unavailable: Any, desired: int) -> tuple[int, int]:
    """``ResolveFenceposts``: (surge, unavailable); both 0 becomes 0 and 1."""
    surge = scaled_value(max_surge, desired, round_up=True)
    unavailable = scaled_value(max_unavailable, desired, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def max_surge(md: dict[str, Any]) -> int:
    """``MaxSurge``: 0 unless RollingUpdate."""
    if not is_rolling_update(md):
        return 0
    rolling = strategy(md).get("rollingUpdate") or {}
    return resolve_fenceposts(rolling.get("maxSurge"), rolling.get("maxUnavailable"), replicas(md))[0]


def max_unavailable(md: dict[str, Any]) -> int:
    """``MaxUnavailable``: 0 unless RollingUpdate with replicas; never more than the replicas."""
    if not is_rolling_update(md) or replicas(md) == 0:
        return 0
    rolling = strategy(md).get("rollingUpdate") or {}
    unavailable = resolve_fenceposts(rolling.get("maxSurge"), rolling.get("maxUnavailable"), replicas(md))[1]
    return min(unavailable, replicas(md))


def total_replicas(machine_sets: list[dict[str, Any]]) -> int:
    """``GetReplicaCountForMachineSets``: the sum of ``spec.replicas``."""
    return sum(replicas(ms) for ms in machine_sets)


def total_status(machine_sets: list[dict[str, Any]], name: str) -> int:
    """The sum of one status counter over MachineSets."""
    return sum(status_int(ms, name) for ms in machine_sets)


def new_ms_new_replicas(md: dict[str, Any], all_sets: list[dict[str, Any]], new_replicas: int) -> int:
    """``NewMSNewReplicas``: RollingUpdate grows the new MachineSet up to replicas + surge in total, never
    beyond the MachineDeployment's replicas; OnDelete up to the MachineDeployment's replicas in total."""
    wanted = replicas(md)
    current = total_replicas(all_sets)
    kind = strategy(md).get("type")
    if kind == ROLLING_UPDATE:
        surge = scaled_value((strategy(md).get("rollingUpdate") or {}).get("maxSurge"), wanted, round_up=True)
        most = wanted + surge
        if current >= most:
            return new_replicas
        return new_replicas + min(most - current, wanted - new_replicas)
    if kind == ON_DELETE:
        if current >= wanted:
            return new_replicas
        return new_replicas + wanted - current
    raise ReconcileError(UNSUPPORTED_STRATEGY.format(strategy=kind))


def _normalized_ref(ref: Any) -> Any:
    if not isinstance(ref, dict):
        return ref
    out = {k: v for k, v in ref.items() if k != "namespace"}
    if "apiVersion" in out:
        out["apiVersion"] = group_of(str(out["apiVersion"]))
    return out


def rollout_fields(template: dict[str, Any]) -> dict[str, Any]:
    """What ``MachineTemplateUpToDate`` compares: version, bootstrap, infrastructureRef (references
    without version and namespace) and failure domain; labels, annotations and timeouts are in-place."""
    spec = template.get("spec") or {}
    bootstrap = dict(spec.get("bootstrap") or {})
    if "configRef" in bootstrap:
        bootstrap["configRef"] = _normalized_ref(bootstrap["configRef"])
    return {"version": spec.get("version"), "bootstrap": bootstrap,
            "infrastructureRef": _normalized_ref(spec.get("infrastructureRef") or {}),
            "failureDomain": spec.get("failureDomain")}


def template_hash(template: dict[str, Any]) -> int:
    """A 32-bit FNV-1a hash of the rollout fields (upstream hashes its Go printout of them)."""
    value = 0x811C9DC5
    for byte in json.dumps(rollout_fields(template), sort_keys=True).encode():
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def find_new_machine_set(md: dict[str, Any], machine_sets: list[dict[str, Any]]) -> dict[str, Any] | None:
    """``FindNewMachineSet``: of the MachineSets whose template matches the MachineDeployment's, the one
    with most replicas (the oldest among equals)."""
    wanted = rollout_fields((md.get("spec") or {}).get("template") or {})
    ranked = sorted(machine_sets, key=lambda ms: (-replicas(ms), creation_key(ms)))
    for ms in ranked:
        if rollout_fields((ms.get("spec") or {}).get("template") or {}) == wanted:
            return ms
    return None


def revision(obj: dict[str, Any]) -> int:
    """The revision annotation (0 when missing or not a number)."""
    try:
        return int((meta(obj).get("annotations") or {}).get(REVISION_ANNOTATION, "0"))
    except ValueError:
        return 0


def machine_set_annotations(md: dict[str, Any], old_sets: list[dict[str, Any]],
                            existing: dict[str, Any] | None) -> dict[str, str]:
    """``ComputeMachineSetAnnotations``: the MachineDeployment's annotations (some skipped), the
    revision (one above the old MachineSets', never lowered; the previous one goes to the history),
    desired-replicas and max-replicas."""
    out = {k: v for k, v in (meta(md).get("annotations") or {}).items() if k not in SKIPPED_ANNOTATIONS}
    new_revision = str(max((revision(ms) for ms in old_sets), default=0) + 1)
    if existing is not None:
        current = (meta(existing).get("annotations") or {}).get(REVISION_ANNOTATION)
        history = (meta(existing).get("annotations") or {}).get(REVISION_HISTORY_ANNOTATION)
        if current is not None and int(new_revision) < revision(existing):
            new_revision = current
        if history is not None:
            out[REVISION_HISTORY_ANNOTATION] = history
        if current is not None and current != new_revision:
            out[REVISION_HISTORY_ANNOTATION] = f"{history},{current}" if history else current
    out[REVISION_ANNOTATION] = new_revision
    out[DESIRED_REPLICAS_ANNOTATION] = str(replicas(md))
    out[MAX_REPLICAS_ANNOTATION] = str(replicas(md) + max_surge(md))
    return out


def deployment_complete(md: dict[str, Any]) -> bool:
    """``DeploymentComplete``: every replica updated and available, and the generation observed."""
    status = md.get("status") or {}
    wanted = replicas(md)
    return (status.get("updatedReplicas") == wanted and status.get("replicas") == wanted
            and status.get("availableReplicas") == wanted
            and int(status.get("observedGeneration") or 0) >= int(meta(md).get("generation") or 0))
