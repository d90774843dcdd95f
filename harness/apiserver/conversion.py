"""Conversion between served versions that share one storage: HorizontalPodAutoscaler v1 and v2.

kube-apiserver stores one version of a resource and converts on every read and write. For most
kinds the world serves one version, or versions of the same shape, so objects are stored as
written. ``autoscaling/v1`` and ``autoscaling/v2`` HorizontalPodAutoscalers differ: v1 has
``spec.targetCPUUtilizationPercentage`` and ``status.currentCPUUtilizationPercentage`` where v2
has ``spec.metrics`` and ``status.currentMetrics``. They are stored as v2 (upstream's storage
version) and v1 readers and writers see the v1 shape.

Not reproduced: upstream keeps what v1 cannot say (other metrics, behaviour, conditions) in
``autoscaling.alpha.kubernetes.io/*`` annotations of the v1 view; here a v1 write replaces the
metrics with the CPU one it states.
"""

from __future__ import annotations

from typing import Any

from harness.apiserver.resources import ResourceType

AUTOSCALING = "autoscaling"
HPA = "HorizontalPodAutoscaler"
STORAGE_API_VERSION = "autoscaling/v2"
_COMMON_SPEC = ("scaleTargetRef", "minReplicas", "maxReplicas")
_COMMON_STATUS = ("observedGeneration", "lastScaleTime", "currentReplicas", "desiredReplicas")


def converts(rt: ResourceType) -> bool:
    """Whether objects of ``rt`` are stored in another version's shape."""
    return rt.group == AUTOSCALING and rt.kind == HPA and rt.version == "v1"


def _cpu_utilization(metrics: Any, key: str) -> int | None:
    for metric in metrics if isinstance(metrics, list) else []:
        resource = metric.get("resource") if isinstance(metric, dict) else None
        if isinstance(resource, dict) and metric.get("type") == "Resource" and resource.get("name") == "cpu":
            value = (resource.get(key) or {}).get("averageUtilization")
            if key == "current" or (resource.get(key) or {}).get("type") == "Utilization":
                return value if isinstance(value, int) else None
    return None


def from_storage(rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    """The stored (v2) object as ``rt``'s version shows it (a new dict; nested values shared)."""
    if not converts(rt):
        return obj
    out = {key: value for key, value in obj.items() if key not in ("spec", "status")}
    spec = obj.get("spec") or {}
    out_spec = {key: spec[key] for key in _COMMON_SPEC if key in spec}
    target = _cpu_utilization(spec.get("metrics"), "target")
    if target is not None:
        out_spec["targetCPUUtilizationPercentage"] = target
    out["spec"] = out_spec
    if "status" in obj:
        status = obj.get("status") or {}
        out_status = {key: status[key] for key in _COMMON_STATUS if key in status}
        current = _cpu_utilization(status.get("currentMetrics"), "current")
        if current is not None:
            out_status["currentCPUUtilizationPercentage"] = current
        out["status"] = out_status
    out["apiVersion"] = rt.api_version
    return out


def to_storage(rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    """An object written through ``rt`` in the stored (v2) shape."""
    if not converts(rt):
        return obj
    out = {key: value for key, value in obj.items() if key not in ("spec", "status")}
    spec = obj.get("spec") or {}
    out_spec = {key: spec[key] for key in _COMMON_SPEC if key in spec}
    target = spec.get("targetCPUUtilizationPercentage")
    if target is not None:
        out_spec["metrics"] = [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": target}}}]
    out["spec"] = out_spec
    if "status" in obj:
        status = obj.get("status") or {}
        out_status = {key: status[key] for key in _COMMON_STATUS if key in status}
        current = status.get("currentCPUUtilizationPercentage")
        if current is not None:
            out_status["currentMetrics"] = [{"type": "Resource", "resource": {
                "name": "cpu", "current": {"averageUtilization": current}}}]
        out["status"] = out_status
    out["apiVersion"] = STORAGE_API_VERSION
    return out
