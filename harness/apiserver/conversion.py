"""Conversion between served versions that share one storage: HorizontalPodAutoscaler v1 and v2,
and ``events.k8s.io/v1`` Events, which are core Events under other field names.

kube-apiserver stores one version of a resource and converts on every read and write. For most
kinds the world serves one version, or versions of the same shape, so objects are stored as
written. ``autoscaling/v1`` and ``autoscaling/v2`` HorizontalPodAutoscalers differ: v1 has
``spec.targetCPUUtilizationPercentage`` and ``status.currentCPUUtilizationPercentage`` where v2
has ``spec.metrics`` and ``status.currentMetrics``. They are stored as v2 (upstream's storage
version) and v1 readers and writers see the v1 shape.

``events.k8s.io/v1`` Events live in the core Events' storage, as upstream's do (one etcd prefix):
a controller writing them through client-go's new recorder is seen by ``kubectl get events``, and
the other way round. ``regarding``/``note``/``reportingController``/``deprecated*`` are
``involvedObject``/``message``/``reportingComponent``/``source``, ``count``, ``firstTimestamp``,
``lastTimestamp``.

Not reproduced: upstream keeps what v1 cannot say (other metrics, behaviour, conditions) in
``autoscaling.alpha.kubernetes.io/*`` annotations of the v1 view; here a v1 write replaces the
metrics with the CPU one it states.
"""

from __future__ import annotations

from typing import Any

from harness.apiserver.resources import ResourceType
from harness.kube.names.events import EVENTS_API_GROUP as EVENTS_GROUP

AUTOSCALING = "autoscaling"
HPA = "HorizontalPodAutoscaler"
STORAGE_API_VERSION = "autoscaling/v2"
_COMMON_SPEC = ("scaleTargetRef", "minReplicas", "maxReplicas")
_COMMON_STATUS = ("observedGeneration", "lastScaleTime", "currentReplicas", "desiredReplicas")


# events.k8s.io field → core/v1 field.
_EVENT_FIELDS = {
    "regarding": "involvedObject", "note": "message", "reportingController": "reportingComponent",
    "deprecatedSource": "source", "deprecatedCount": "count", "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
}
_CORE_EVENT_FIELDS = {core: new for new, core in _EVENT_FIELDS.items()}
# Resources stored under another resource's storage key: (group, plural) → the key they use.
_SHARED_STORAGE = {(EVENTS_GROUP, "events"): ("", "events")}


def storage_key(group: str, plural: str) -> tuple[str, str]:
    """Where objects of ``group``/``plural`` are stored (events.k8s.io Events with core Events)."""
    return _SHARED_STORAGE.get((group, plural), (group, plural))


def _is_events(rt: ResourceType) -> bool:
    return rt.group == EVENTS_GROUP and rt.kind == "Event"


def converts(rt: ResourceType) -> bool:
    """Whether objects of ``rt`` are stored in another version's shape."""
    return (rt.group == AUTOSCALING and rt.kind == HPA and rt.version == "v1") or _is_events(rt)


def _renamed(obj: dict[str, Any], names: dict[str, str], api_version: str) -> dict[str, Any]:
    out = {names.get(key, key): value for key, value in obj.items()}
    out["apiVersion"] = api_version
    return out


def _cpu_utilization(metrics: Any, key: str) -> int | None:
    for metric in metrics if isinstance(metrics, list) else []:
        resource = metric.get("resource") if isinstance(metric, dict) else None
        if isinstance(resource, dict) and metric.get("type") == "Resource" and resource.get("name") == "cpu":
            value = (resource.get(key) or {}).get("averageUtilization")
            if key == "current" or (resource.get(key) or {}).get("type") == "Utilization":
                return value if isinstance(value, int) else None
    return None


def from_storage(rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    """The stored object as ``rt``'s version shows it (a new dict; nested values shared)."""
    if not converts(rt):
        return obj
    if _is_events(rt):
        return _renamed(obj, _CORE_EVENT_FIELDS, rt.api_version)
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
    """An object written through ``rt`` in the stored shape."""
    if not converts(rt):
        return obj
    if _is_events(rt):
        return _renamed(obj, _EVENT_FIELDS, "v1")
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
