"""The default scheduler, simulated: binds pending pods to nodes.

A pod is scheduled when it has no ``spec.nodeName``, its ``schedulerName`` is
``default-scheduler``, it has no scheduling gates and it is neither deleting nor terminal. The
filters are the default plugins lifecycle scenarios depend on, in upstream's order:
NodeUnschedulable (cordon), TaintToleration (NoSchedule/NoExecute taints, including the
not-ready/unreachable taints a node whose Ready condition is not True carries or would carry), and
NodeAffinity (``nodeSelector`` and required node affinity). Of the feasible nodes the one running
the fewest pods wins, ties broken by name, so placement is deterministic.

An unschedulable pod gets ``PodScheduled=False`` with reason ``Unschedulable`` and upstream's
``FitError`` message (``0/3 nodes are available: 1 node(s) were unschedulable, ...``) and a
``FailedScheduling`` event; it is retried whenever a Node changes. Knob: ``enabled`` (on the
controller), ``record_events`` (default True).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import orjson

from harness.client import NORMAL, WARNING, ApiError, Client, Controller, EventRecorder, Request, Result
from harness.client.interface import update_status_unless_gone
from harness.clock import rfc3339
from harness.kube.names.core import NO_EXECUTE, NO_SCHEDULE, NODE_READY, POD_FAILED, POD_SUCCEEDED, UNSCHEDULABLE_TAINT
from harness.world.kubelet import NOT_READY_TAINT, POD_SCHEDULED, UNREACHABLE_TAINT, pod_condition, pod_is_terminal

DEFAULT_SCHEDULER = "default-scheduler"
# The phases of a pod that is over (pod_is_terminal).
_TERMINAL = (POD_SUCCEEDED, POD_FAILED)
UNSCHEDULABLE = "Unschedulable"
SCHEDULED = "Scheduled"
FAILED_SCHEDULING = "FailedScheduling"
SCHEDULED_MESSAGE = "Successfully assigned {namespace}/{name} to {node}"
NO_NODES_MESSAGE = "no nodes available to schedule pods"
FIT_ERROR_MESSAGE = "0/{total} nodes are available: {reasons}. preemption: 0/{total} nodes are available: {preemption}."
PREEMPTION_NOT_HELPFUL = "{count} Preemption is not helpful for scheduling"
NODE_UNSCHEDULABLE_REASON = "node(s) were unschedulable"
NODE_AFFINITY_REASON = "node(s) didn't match Pod's node affinity/selector"
UNTOLERATED_TAINT_REASON = "node(s) had untolerated taint {{{key}: {value}}}"

PodKey = tuple[str, str]


def tolerates(tolerations: list[dict[str, Any]], taint: dict[str, Any]) -> bool:
    """True when one of ``tolerations`` tolerates ``taint`` (``v1.Toleration.ToleratesTaint``)."""
    for toleration in tolerations:
        effect = toleration.get("effect") or ""
        if effect and effect != taint.get("effect"):
            continue
        key = toleration.get("key") or ""
        operator = toleration.get("operator") or "Equal"
        if operator == "Exists":
            if not key or key == taint.get("key"):
                return True
        elif key == taint.get("key") and (toleration.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


def _node_ready_status(node: dict[str, Any]) -> str:
    for condition in (node.get("status") or {}).get("conditions") or []:
        if condition.get("type") == NODE_READY:
            return str(condition.get("status") or "Unknown")
    return "Unknown"


def effective_taints(node: dict[str, Any]) -> list[dict[str, Any]]:
    """The node's NoSchedule/NoExecute taints, plus the not-ready/unreachable taint the node
    lifecycle controller puts on a node whose Ready condition is not True, if it is not there yet."""
    taints = [t for t in (node.get("spec") or {}).get("taints") or [] if t.get("effect") in (NO_SCHEDULE, NO_EXECUTE)]
    ready = _node_ready_status(node)
    if ready != "True":
        implied = NOT_READY_TAINT if ready == "False" else UNREACHABLE_TAINT
        if not any(t.get("key") in (NOT_READY_TAINT, UNREACHABLE_TAINT) for t in taints):
            taints.append({"key": implied, "effect": NO_SCHEDULE})
    return taints


def _requirement_matches(requirement: dict[str, Any], value: str | None) -> bool:
    operator = requirement.get("operator")
    values = [str(v) for v in requirement.get("values") or []]
    if operator == "In":
        return value is not None and value in values
    if operator == "NotIn":
        return value is None or value not in values
    if operator == "Exists":
        return value is not None
    if operator == "DoesNotExist":
        return value is None
    if operator in ("Gt", "Lt") and value is not None and len(values) == 1:
        try:
            have, want = int(value), int(values[0])
        except ValueError:
            return False
        return have > want if operator == "Gt" else have < want
    return False


def _term_matches(term: dict[str, Any], node: dict[str, Any]) -> bool:
    expressions = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not expressions and not fields:
        return False  # an empty term matches no node
    labels = (node.get("metadata") or {}).get("labels") or {}
    for requirement in expressions:
        if not _requirement_matches(requirement, labels.get(requirement.get("key", ""))):
            return False
    for requirement in fields:
        value = node["metadata"]["name"] if requirement.get("key") == "metadata.name" else None
        if not _requirement_matches(requirement, value):
            return False
    return True


def matches_node_affinity(pod_spec: dict[str, Any], node: dict[str, Any]) -> bool:
    """``nodeSelector`` and required node affinity, as the NodeAffinity filter checks them."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    for key, value in (pod_spec.get("nodeSelector") or {}).items():
        if labels.get(key) != value:
            return False
    required = ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if required is None:
        return True
    return any(_term_matches(term, node) for term in required.get("nodeSelectorTerms") or [])


def filter_reason(pod_spec: dict[str, Any], node: dict[str, Any]) -> str | None:
    """Why ``node`` cannot run a pod with ``pod_spec`` (upstream's reason text), or None if it can."""
    tolerations = pod_spec.get("tolerations") or []
    if (node.get("spec") or {}).get("unschedulable") and not tolerates(
        tolerations, {"key": UNSCHEDULABLE_TAINT, "effect": NO_SCHEDULE}
    ):
        return NODE_UNSCHEDULABLE_REASON
    for taint in effective_taints(node):
        if not tolerates(tolerations, taint):
            return UNTOLERATED_TAINT_REASON.format(key=taint.get("key", ""), value=taint.get("value", ""))
    if not matches_node_affinity(pod_spec, node):
        return NODE_AFFINITY_REASON
    return None


def fit_error_message(total: int, reasons: dict[str, int]) -> str:
    """The FitError text: reason counts sorted as strings, then the preemption post-filter summary."""
    histogram = ", ".join(sorted(f"{count} {reason}" for reason, count in reasons.items()))
    return FIT_ERROR_MESSAGE.format(total=total, reasons=histogram,
                                    preemption=PREEMPTION_NOT_HELPFUL.format(count=total))


class Scheduler(Controller):
    """Binds unscheduled pods of the default scheduler to feasible nodes."""

    name = "scheduler"

    def __init__(self, client: Client) -> None:
        super().__init__()
        self.client = client
        self.record_events = True
        self.events = EventRecorder(client, DEFAULT_SCHEDULER)
        self._nodes: dict[str, dict[str, Any]] = {}
        self._pods: dict[PodKey, dict[str, Any]] = {}
        self._unscheduled: set[PodKey] = set()
        # Pods per node (not terminal), for the least-loaded choice.
        self._assigned: dict[PodKey, str] = {}
        self._load: defaultdict[str, int] = defaultdict(int)
        # Feasible node names per scheduling signature, cleared whenever a node changes.
        self._feasible: dict[bytes | str, tuple[list[str], dict[str, int]]] = {}

    def setup(self) -> None:
        self.watch(self.client, "v1", "Node", self._on_node)
        self.watch(self.client, "v1", "Pod", self._on_pod)

    # -- caches ------------------------------------------------------------------------------------

    def _on_node(self, event: str, node: dict[str, Any]) -> Iterable[Request]:
        name = node["metadata"]["name"]
        if event == "DELETED":
            self._nodes.pop(name, None)
        else:
            self._nodes[name] = node
        self._feasible.clear()
        return [Request(*key) for key in sorted(self._unscheduled)]

    def _on_pod(self, event: str, pod: dict[str, Any]) -> Iterable[Request]:
        meta, spec = pod["metadata"], pod.get("spec") or {}
        key = (meta.get("namespace") or "", meta["name"])
        node = spec.get("nodeName") or ""
        # pod_is_terminal, read once for both questions below (every pod event asks them).
        terminal = (pod.get("status") or {}).get("phase") in _TERMINAL
        counted = event != "DELETED" and bool(node) and not terminal
        previous = self._assigned.get(key)
        if previous is not None and (not counted or previous != node):
            del self._assigned[key]
            self._load[previous] -= 1
        if counted and previous != node:
            self._assigned[key] = node
            self._load[node] += 1
        if event == "DELETED":
            self._pods.pop(key, None)
            self._unscheduled.discard(key)
            return ()
        self._pods[key] = pod
        if self._wants(spec, meta, terminal):
            self._unscheduled.add(key)
            return (Request(*key),)
        self._unscheduled.discard(key)
        return ()

    @classmethod
    def _wants_scheduling(cls, pod: dict[str, Any]) -> bool:
        return cls._wants(pod.get("spec") or {}, pod["metadata"], pod_is_terminal(pod))

    @staticmethod
    def _wants(spec: dict[str, Any], meta: dict[str, Any], terminal: bool) -> bool:
        """An unbound, ungated, live Pod for this scheduler (the mapper passes what it has read already)."""
        return (
            not spec.get("nodeName")
            and (spec.get("schedulerName") or DEFAULT_SCHEDULER) == DEFAULT_SCHEDULER
            and not spec.get("schedulingGates")
            and not meta.get("deletionTimestamp")
            and not terminal
        )

    # -- reconcile ---------------------------------------------------------------------------------

    def reconcile(self, request: Request) -> Result | None:
        key = (request.namespace, request.name)
        pod = self._pods.get(key)
        if pod is None or not self._wants_scheduling(pod):
            return None
        if not self._nodes:
            self._unschedulable(pod, NO_NODES_MESSAGE)
            return None
        feasible, reasons = self._filter(pod["spec"])
        if not feasible:
            self._unschedulable(pod, fit_error_message(len(self._nodes), reasons))
            return None
        node = min(feasible, key=self._load.__getitem__)  # feasible is sorted: ties go to the first name
        try:
            self.client.bind(request.name, request.namespace, node)
        except ApiError as err:
            if err.code in (404, 409):
                return None  # gone, or bound by someone else meanwhile
            raise
        # Count it now: the next pod of this batch must see the new load before the event arrives.
        self._assigned[key] = node
        self._load[node] += 1
        self._unscheduled.discard(key)
        if self.record_events:
            self.events.event(pod, NORMAL, SCHEDULED, SCHEDULED_MESSAGE.format(
                namespace=request.namespace, name=request.name, node=node))
        return None

    def _filter(self, spec: dict[str, Any]) -> tuple[list[str], dict[str, int]]:
        """Feasible node names (sorted) and the reason histogram of the others."""
        parts = [spec.get("nodeSelector"), spec.get("tolerations"), (spec.get("affinity") or {}).get("nodeAffinity")]
        signature: bytes | str
        try:
            # orjson: a fifth of json's time; a value it cannot encode (an integer beyond 64 bits) takes
            # json's text, which as a str never equals one of orjson's bytes.
            signature = orjson.dumps(parts, option=orjson.OPT_SORT_KEYS)
        except TypeError:
            signature = json.dumps(parts, sort_keys=True)
        cached = self._feasible.get(signature)
        if cached is not None:
            return cached
        feasible: list[str] = []
        reasons: dict[str, int] = {}
        for name in sorted(self._nodes):
            reason = filter_reason(spec, self._nodes[name])
            if reason is None:
                feasible.append(name)
            else:
                reasons[reason] = reasons.get(reason, 0) + 1
        self._feasible[signature] = (feasible, reasons)
        return feasible, reasons

    def _unschedulable(self, pod: dict[str, Any], message: str) -> None:
        condition = pod_condition(pod, POD_SCHEDULED)
        if condition is not None and condition.get("status") == "False" and condition.get("message") == message:
            return
        status = dict(pod.get("status") or {})
        status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") != POD_SCHEDULED] + [{
            "type": POD_SCHEDULED, "status": "False", "lastProbeTime": None,
            "lastTransitionTime": rfc3339(self.now()) if condition is None or condition.get("status") != "False"
            else condition.get("lastTransitionTime"),
            "reason": UNSCHEDULABLE, "message": message,
        }]
        if update_status_unless_gone(self.client, pod, status) is None:
            return
        if self.record_events:
            self.events.event(pod, WARNING, FAILED_SCHEDULING, message)
