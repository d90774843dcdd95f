"""Table columns per kind, as ``kubectl get`` prints them (``pkg/printers/internalversion`` of
kube-apiserver 1.32 and the CRD ``additionalPrinterColumns`` convertor).

Every cell is computed, wide ones included: columns with ``priority`` > 0 are the ones kubectl
shows only with ``-o wide``. Ages are measured on the world's clock, not the wall clock.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.apiserver.http import jsonpath
from harness.apiserver.resources import ResourceType
from harness.clock import parse_rfc3339
from harness.kube import selectors

NONE = "<none>"
UNKNOWN = "<unknown>"
INVALID = "<invalid>"
NOT_APPLICABLE = "N/A"
ROLE_LABEL_PREFIX = "node-role.kubernetes.io/"
ROLE_LABEL = "kubernetes.io/role"
NODE_UNREACHABLE_REASON = "NodeLost"
SCHEDULING_DISABLED = "SchedulingDisabled"
SCHEDULING_GATED = "SchedulingGated"
ROW_COMPLETED = "Completed"

NAME_DESCRIPTION = (
    "Name must be unique within a namespace. Is required when creating resources, although some resources may "
    "allow a client to request the generation of an appropriate name automatically. Name is primarily intended "
    "for creation idempotence and configuration definition. Cannot be updated."
)
CREATED_DESCRIPTION = (
    "CreationTimestamp is a timestamp representing the server time when this object was created. It is not "
    "guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It "
    "is represented in RFC3339 form and is in UTC."
)


@dataclass(frozen=True)
class Column:
    """A ``TableColumnDefinition``."""

    name: str
    type: str = "string"
    format: str = ""
    priority: int = 0
    description: str = ""

    def definition(self) -> dict[str, Any]:
        return {
            "name": self.name, "type": self.type, "format": self.format, "description": self.description,
            "priority": self.priority,
        }


Cells = Callable[[dict[str, Any], float], list[Any]]
RowConditions = Callable[[dict[str, Any]], list[dict[str, Any]]]


@dataclass(frozen=True)
class Printer:
    """The columns of a kind and how to fill one row from an object at a given time."""

    columns: tuple[Column, ...]
    cells: Cells
    conditions: RowConditions | None = None


NAME = Column("Name", "string", "name", description=NAME_DESCRIPTION)
AGE = Column("Age", "string", description=CREATED_DESCRIPTION)


# -- durations ------------------------------------------------------------------------------------


def human_duration(seconds: float) -> str:
    """A duration as kubectl shows ages (``duration.HumanDuration``): ``45s``, ``3m20s``, ``5h``, ``3d4h``."""
    total = int(seconds)
    if total < -1:
        return INVALID
    if total < 0:
        return "0s"
    if total < 120:
        return f"{total}s"
    minutes = total // 60
    if minutes < 10:
        rest = total % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = total // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        rest = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if rest == 0 else f"{hours // 24 // 365}y{rest}d"
    return f"{hours // 24 // 365}y"


def age(timestamp: Any, now: float) -> str:
    """The age of an RFC 3339 timestamp at ``now``; ``<unknown>`` when absent, ``<invalid>`` when unparsable."""
    if not timestamp:
        return UNKNOWN
    try:
        return human_duration(now - parse_rfc3339(str(timestamp)))
    except ValueError:
        return INVALID


# -- field access -----------------------------------------------------------------------------------


def _get(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _name(obj: dict[str, Any]) -> str:
    return str(_get(obj, "metadata", "name") or "")


def _created(obj: dict[str, Any], now: float) -> str:
    return age(_get(obj, "metadata", "creationTimestamp"), now)


def _format_selector(selector: Any) -> str:
    if not isinstance(selector, dict):
        return NONE
    try:
        parsed = selectors.label_selector_from_dict(selector)
    except Exception:  # noqa: BLE001 - an invalid stored selector prints as kubectl prints it
        return "<error>"
    text = str(parsed) if parsed is not None else ""
    return text or NONE


def _template_containers(obj: dict[str, Any]) -> tuple[str, str]:
    containers = _get(obj, "spec", "template", "spec", "containers") or []
    names = ",".join(str(c.get("name", "")) for c in containers if isinstance(c, dict))
    images = ",".join(str(c.get("image", "")) for c in containers if isinstance(c, dict))
    return names, images


def _int_or_string(value: Any) -> str:
    if value is None:
        return NOT_APPLICABLE
    return str(value)


# -- pods ---------------------------------------------------------------------------------------------


def _terminated_reason(terminated: dict[str, Any], prefix: str = "") -> str:
    if terminated.get("reason"):
        return prefix + str(terminated["reason"])
    if terminated.get("signal"):
        return f"{prefix}Signal:{terminated['signal']}"
    return f"{prefix}ExitCode:{_int(terminated.get('exitCode'))}"


def _restartable(container: dict[str, Any] | None) -> bool:
    return bool(container) and container.get("restartPolicy") == "Always"  # type: ignore[union-attr]


def _condition_true(status: dict[str, Any], kind: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True" for c in status.get("conditions") or [])


def _last_terminated(statuses: list[dict[str, Any]]) -> float | None:
    latest = None
    for cs in statuses:
        finished = _get(cs, "lastState", "terminated", "finishedAt")
        if finished:
            try:
                moment = parse_rfc3339(str(finished))
            except ValueError:
                continue
            latest = moment if latest is None else max(latest, moment)
    return latest


def _pod_cells(pod: dict[str, Any], now: float) -> list[Any]:
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    phase = status.get("phase") or ""
    reason = status.get("reason") or phase
    for condition in status.get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("reason") == SCHEDULING_GATED:
            reason = SCHEDULING_GATED
    init_specs = {c.get("name"): c for c in spec.get("initContainers") or [] if isinstance(c, dict)}
    total = len(spec.get("containers") or []) + sum(1 for c in init_specs.values() if _restartable(c))
    ready = 0
    restarts = 0
    sidecar_restarts = 0
    init_statuses = status.get("initContainerStatuses") or []
    initializing = False
    for i, cs in enumerate(init_statuses):
        restarts += _int(cs.get("restartCount"))
        sidecar = _restartable(init_specs.get(cs.get("name")))
        if sidecar:
            sidecar_restarts += _int(cs.get("restartCount"))
        terminated = _get(cs, "state", "terminated")
        waiting = _get(cs, "state", "waiting")
        if terminated and _int(terminated.get("exitCode")) == 0:
            continue
        if sidecar and cs.get("started"):
            ready += 1 if cs.get("ready") else 0
            continue
        if terminated:
            reason = _terminated_reason(terminated, "Init:")
        elif waiting and waiting.get("reason") and waiting["reason"] != "PodInitializing":
            reason = "Init:" + str(waiting["reason"])
        else:
            reason = f"Init:{i}/{len(init_specs)}"
        initializing = True
        break
    statuses = status.get("containerStatuses") or []
    last_restart = _last_terminated(init_statuses)
    if not initializing or _condition_true(status, "Initialized"):
        restarts = sidecar_restarts
        last_restart = _last_terminated([cs for cs in init_statuses if _restartable(init_specs.get(cs.get("name")))])
        has_running = False
        for cs in reversed(statuses):
            restarts += _int(cs.get("restartCount"))
            waiting = _get(cs, "state", "waiting")
            terminated = _get(cs, "state", "terminated")
            if waiting and waiting.get("reason"):
                reason = str(waiting["reason"])
            elif terminated:
                reason = _terminated_reason(terminated)
            elif cs.get("ready") and _get(cs, "state", "running") is not None:
                has_running = True
                ready += 1
        container_restart = _last_terminated(statuses)
        if container_restart is not None:
            last_restart = container_restart if last_restart is None else max(last_restart, container_restart)
        if reason == "Completed" and has_running:
            reason = "Running" if _condition_true(status, "Ready") else "NotReady"
    deleting = bool(_get(pod, "metadata", "deletionTimestamp"))
    if deleting and status.get("reason") == NODE_UNREACHABLE_REASON:
        reason = "Unknown"
    elif deleting and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"
    restarts_text = str(restarts)
    if restarts and last_restart is not None:
        restarts_text = f"{restarts} ({human_duration(now - last_restart)} ago)"
    ips = status.get("podIPs") or []
    ip = (ips[0].get("ip") if ips and isinstance(ips[0], dict) else None) or status.get("podIP") or NONE
    gates = spec.get("readinessGates") or []
    gates_text = NONE
    if gates:
        wanted = {g.get("conditionType") for g in gates if isinstance(g, dict)}
        met = sum(1 for c in status.get("conditions") or [] if c.get("type") in wanted and c.get("status") == "True")
        gates_text = f"{met}/{len(gates)}"
    return [
        _name(pod), f"{ready}/{total}", reason, restarts_text, _created(pod, now),
        ip, spec.get("nodeName") or NONE, status.get("nominatedNodeName") or NONE, gates_text,
    ]


def _pod_conditions(pod: dict[str, Any]) -> list[dict[str, Any]]:
    phase = _get(pod, "status", "phase")
    if phase == "Succeeded":
        return [{"type": ROW_COMPLETED, "status": "True", "reason": "Succeeded",
                 "message": "The pod has completed successfully."}]
    if phase == "Failed":
        return [{"type": ROW_COMPLETED, "status": "True", "reason": "Failed", "message": "The pod failed."}]
    return []


# -- other kinds ---------------------------------------------------------------------------------------


def _node_roles(labels: dict[str, str]) -> str:
    roles = set()
    for key, value in labels.items():
        if key.startswith(ROLE_LABEL_PREFIX) and key[len(ROLE_LABEL_PREFIX):]:
            roles.add(key[len(ROLE_LABEL_PREFIX):])
        elif key == ROLE_LABEL and value:
            roles.add(value)
    return ",".join(sorted(roles)) or NONE


def _node_address(node: dict[str, Any], kind: str) -> str:
    for address in _get(node, "status", "addresses") or []:
        if isinstance(address, dict) and address.get("type") == kind:
            return str(address.get("address", ""))
    return NONE


def _node_cells(node: dict[str, Any], now: float) -> list[Any]:
    status = node.get("status") or {}
    ready = [c for c in status.get("conditions") or [] if c.get("type") == "Ready"]
    states = [("Ready" if ready[-1].get("status") == "True" else "NotReady")] if ready else ["Unknown"]
    if _get(node, "spec", "unschedulable"):
        states.append(SCHEDULING_DISABLED)
    info = status.get("nodeInfo") or {}
    return [
        _name(node), ",".join(states), _node_roles(_get(node, "metadata", "labels") or {}), _created(node, now),
        info.get("kubeletVersion", ""), _node_address(node, "InternalIP"), _node_address(node, "ExternalIP"),
        info.get("osImage") or UNKNOWN, info.get("kernelVersion") or UNKNOWN,
        info.get("containerRuntimeVersion") or UNKNOWN,
    ]


def _pdb_cells(pdb: dict[str, Any], now: float) -> list[Any]:
    spec = pdb.get("spec") or {}
    return [
        _name(pdb), _int_or_string(spec.get("minAvailable")), _int_or_string(spec.get("maxUnavailable")),
        _int(_get(pdb, "status", "disruptionsAllowed")), _created(pdb, now),
    ]


def _deployment_cells(obj: dict[str, Any], now: float) -> list[Any]:
    status = obj.get("status") or {}
    names, images = _template_containers(obj)
    return [
        _name(obj), f"{_int(status.get('readyReplicas'))}/{_int(_get(obj, 'spec', 'replicas'))}",
        _int(status.get("updatedReplicas")), _int(status.get("availableReplicas")), _created(obj, now),
        names, images, _format_selector(_get(obj, "spec", "selector")),
    ]


def _replica_set_cells(obj: dict[str, Any], now: float) -> list[Any]:
    status = obj.get("status") or {}
    names, images = _template_containers(obj)
    return [
        _name(obj), _int(_get(obj, "spec", "replicas")), _int(status.get("replicas")),
        _int(status.get("readyReplicas")), _created(obj, now), names, images,
        _format_selector(_get(obj, "spec", "selector")),
    ]


def _stateful_set_cells(obj: dict[str, Any], now: float) -> list[Any]:
    names, images = _template_containers(obj)
    ready = _int(_get(obj, "status", "readyReplicas"))
    return [_name(obj), f"{ready}/{_int(_get(obj, 'spec', 'replicas'))}", _created(obj, now), names, images]


def _daemon_set_cells(obj: dict[str, Any], now: float) -> list[Any]:
    status = obj.get("status") or {}
    names, images = _template_containers(obj)
    node_selector = _get(obj, "spec", "template", "spec", "nodeSelector") or {}
    return [
        _name(obj), _int(status.get("desiredNumberScheduled")), _int(status.get("currentNumberScheduled")),
        _int(status.get("numberReady")), _int(status.get("updatedNumberScheduled")),
        _int(status.get("numberAvailable")),
        ",".join(f"{k}={v}" for k, v in sorted(node_selector.items())) or NONE, _created(obj, now), names, images,
        _format_selector(_get(obj, "spec", "selector")),
    ]


def _namespace_cells(obj: dict[str, Any], now: float) -> list[Any]:
    return [_name(obj), _get(obj, "status", "phase") or "", _created(obj, now)]


def _volume_attachment_cells(obj: dict[str, Any], now: float) -> list[Any]:
    spec = obj.get("spec") or {}
    return [
        _name(obj), spec.get("attacher", ""), _get(spec, "source", "persistentVolumeName") or "",
        spec.get("nodeName", ""), bool(_get(obj, "status", "attached")), _created(obj, now),
    ]


def _default_cells(obj: dict[str, Any], now: float) -> list[Any]:
    return [_name(obj), _get(obj, "metadata", "creationTimestamp") or ""]


def _wide(name: str, kind: str = "string") -> Column:
    return Column(name, kind, priority=1)


_TEMPLATE_WIDE = (_wide("Containers"), _wide("Images"))

PRINTERS: dict[tuple[str, str], Printer] = {
    ("", "Pod"): Printer(
        (NAME, Column("Ready"), Column("Status"), Column("Restarts"), AGE, _wide("IP"), _wide("Node"),
         _wide("Nominated Node"), _wide("Readiness Gates")),
        _pod_cells, _pod_conditions,
    ),
    ("", "Node"): Printer(
        (NAME, Column("Status"), Column("Roles"), AGE, Column("Version"), _wide("Internal-IP"),
         _wide("External-IP"), _wide("OS-Image"), _wide("Kernel-Version"), _wide("Container-Runtime")),
        _node_cells,
    ),
    ("", "Namespace"): Printer((NAME, Column("Status"), AGE), _namespace_cells),
    ("policy", "PodDisruptionBudget"): Printer(
        (NAME, Column("Min Available"), Column("Max Unavailable"), Column("Allowed Disruptions", "integer"), AGE),
        _pdb_cells,
    ),
    ("apps", "Deployment"): Printer(
        (NAME, Column("Ready"), Column("Up-to-date", "integer"), Column("Available", "integer"), AGE,
         *_TEMPLATE_WIDE, _wide("Selector")),
        _deployment_cells,
    ),
    ("apps", "ReplicaSet"): Printer(
        (NAME, Column("Desired", "integer"), Column("Current", "integer"), Column("Ready", "integer"), AGE,
         *_TEMPLATE_WIDE, _wide("Selector")),
        _replica_set_cells,
    ),
    ("apps", "StatefulSet"): Printer((NAME, Column("Ready"), AGE, *_TEMPLATE_WIDE), _stateful_set_cells),
    ("apps", "DaemonSet"): Printer(
        (NAME, Column("Desired", "integer"), Column("Current", "integer"), Column("Ready", "integer"),
         Column("Up-to-date", "integer"), Column("Available", "integer"), Column("Node Selector"), AGE,
         *_TEMPLATE_WIDE, _wide("Selector")),
        _daemon_set_cells,
    ),
    ("storage.k8s.io", "VolumeAttachment"): Printer(
        (NAME, Column("Attacher"), Column("PV"), Column("Node"), Column("Attached", "boolean"), AGE),
        _volume_attachment_cells,
    ),
}

DEFAULT = Printer((NAME, Column("Created At", "date", description=CREATED_DESCRIPTION)), _default_cells)


# -- custom resources ----------------------------------------------------------------------------------


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def _typed_cell(kind: str, value: Any, now: float) -> Any:
    """A CRD column cell: strings printed, typed values kept when they have that type, dates as ages."""
    if kind == "string":
        return _text(value)
    if kind == "integer" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    if kind == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind == "date" and isinstance(value, str):
        return age(value, now)
    return None


def _custom_printer(rt: ResourceType) -> Printer:
    # A CRD without printer columns shows its age (the apiextensions default column).
    specs = rt.columns or (("Age", "date", ".metadata.creationTimestamp", 0, CREATED_DESCRIPTION),)
    columns = (NAME, *(Column(name, kind, "", priority, description) for name, kind, _, priority, description in specs))
    paths = [jsonpath.compile_path(path) if path else None for _, _, path, _, _ in _safe_specs(specs)]

    def cells(obj: dict[str, Any], now: float) -> list[Any]:
        row: list[Any] = [_name(obj)]
        for (_, kind, _, _, _), steps in zip(specs, paths, strict=True):
            found = jsonpath.evaluate(steps, obj) if steps is not None else []
            row.append(_typed_cell(kind, found[0], now) if found else None)
        return row

    return Printer(tuple(columns), cells)


def _safe_specs(specs: tuple[tuple[str, str, str, int, str], ...]) -> list[tuple[str, str, str, int, str]]:
    """Column specs whose paths compile; an unsupported path becomes an always-empty column."""
    out = []
    for name, kind, path, priority, description in specs:
        try:
            jsonpath.compile_path(path or "")
        except jsonpath.UnsupportedPath:
            path = ""
        out.append((name, kind, path, priority, description))
    return out


def printer_for(rt: ResourceType) -> Printer:
    """The printer of ``rt``: its per-kind columns, its CRD columns, or Name and Created At."""
    if rt.custom or rt.columns:
        return _custom_printer(rt)
    return PRINTERS.get((rt.group, rt.kind), DEFAULT)
