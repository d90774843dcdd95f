"""What the StatefulSet and DaemonSet controllers read of their Pods: phase, readiness and availability
(``podutil.IsPodAvailable``: Ready, and Ready for ``minReadySeconds`` on the virtual clock, the boundary
included as recent upstream has it)."""

from __future__ import annotations

from typing import Any

from harness.clock import parse_rfc3339
from harness.kube.names.core import POD_FAILED, POD_READY, POD_RUNNING, POD_SUCCEEDED

V1 = "v1"
POD = "Pod"
NODE = "Node"


def phase(pod: dict[str, Any]) -> str:
    """The pod's phase ("" when it has no status yet)."""
    return str((pod.get("status") or {}).get("phase") or "")


def is_terminating(pod: dict[str, Any]) -> bool:
    """The pod is being deleted."""
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def is_failed(pod: dict[str, Any]) -> bool:
    """The pod ended (Failed or Succeeded): a workload replaces it."""
    return phase(pod) in (POD_FAILED, POD_SUCCEEDED)


def ready_since(pod: dict[str, Any]) -> float | None:
    """When the pod became Ready (None when it is not Ready)."""
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == POD_READY:
            if condition.get("status") != "True":
                return None
            stamp = condition.get("lastTransitionTime")
            return parse_rfc3339(stamp) if stamp else 0.0
    return None


def is_running_and_ready(pod: dict[str, Any]) -> bool:
    """Running, Ready and not being deleted."""
    return phase(pod) == POD_RUNNING and ready_since(pod) is not None and not is_terminating(pod)


def available_in(pod: dict[str, Any], min_ready_seconds: int, now: float) -> float | None:
    """0 when the pod is available now, the seconds until it will be when it is Ready but not for long
    enough, None when it is not Ready (or is being deleted)."""
    since = ready_since(pod)
    if since is None or is_terminating(pod) or phase(pod) != POD_RUNNING:
        return None
    return max(0.0, since + min_ready_seconds - now)


def is_available(pod: dict[str, Any], min_ready_seconds: int, now: float) -> bool:
    """``IsPodAvailable``: Ready for at least ``min_ready_seconds``."""
    return available_in(pod, min_ready_seconds, now) == 0.0
