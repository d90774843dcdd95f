"""Node drain as Cluster API v1.10 does it (``internal/controllers/machine/drain``): cordon, sort the
Node's Pods with a fixed filter chain, evict through the eviction API, and describe what is left.

One call of :func:`drain_node` is one pass. It does not wait: the Machine controller calls it again
every 20 s (virtual time) until every Pod that has to go is gone.

Filter chain, in this order; the first filter that says Skip or WaitCompleted decides, otherwise the
last status stands and the warnings collected on the way are joined with ", ":

1. on an unreachable Node (Ready ``Unknown``): a Pod whose deletionTimestamp is more than 1 s old
   (whole seconds) is skipped;
2. a Pod controlled by a DaemonSet that exists is skipped (``ignoring DaemonSet-managed Pod``); one whose
   DaemonSet is gone is drained (``evicting orphaned DaemonSet-managed Pod``); finished Pods are drained;
3. a mirror Pod (``kubernetes.io/config.mirror``) is skipped;
4. a running Pod with an ``emptyDir`` is drained with ``evicting Pod with local storage``;
5. a running Pod without a controller is drained with ``evicting Pod that has no controller``;
6. the label ``cluster.x-k8s.io/drain``: ``skip`` (any case) skips, ``wait-completed`` (any case, one "-"
   removed) waits for the Pod to go without evicting it (order 0); other values are ignored;
7. MachineDrainRules (see :mod:`controllers.machine.drain_rules`): the first rule that applies decides
   (Drain with its order, Skip or WaitCompleted); a Pod whose Namespace does not exist is an error;
   no rule means Drain with order 0.

Of the Pods to drain, only those with the lowest order (over Drain Pods, terminating ones included, and
WaitCompleted Pods, which have order 0) are evicted in a pass; the rest wait for a later pass. A
successful eviction does not finish the drain in that pass: the Pod has to disappear.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from controllers.machine import drain_rules, logs
from controllers.machine.api import POD_DRAIN_LABEL, annotations, key, meta
from controllers.machine.errors import ReconcileError, aggregate, go_quote
from harness.client import MERGE, ApiError, Client
from harness.client.interface import shared_reads
from harness.clock import parse_rfc3339, rfc3339
from harness.kube.names.capi import CLUSTER_API_VERSION as CAPI_API_VERSION
from harness.kube.names.capi import DRAIN_NOT_COMPLETED_MESSAGE, MACHINE_DRAIN_RULE_KIND
from harness.kube.names.core import CONDITION_UNKNOWN, NODE_READY, POD_FAILED, POD_SUCCEEDED
from harness.kube.names.policy import PDB_VIOLATION_MESSAGE

# drainRetryInterval: the machine controller drains again this long after an incomplete pass.
DRAIN_RETRY_INTERVAL = 20.0

MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
NAMESPACE_TERMINATING_CAUSE = "NamespaceTerminating"

# PodDeleteStatus reasons.
REASON_OKAY = "Okay"
REASON_SKIP = "Skip"
REASON_WAIT_COMPLETED = "WaitCompleted"
REASON_WARNING = "Warning"
REASON_ERROR = "Error"

# Filter messages (filters.go).
DAEMONSET_ORPHANED_WARNING = "evicting orphaned DaemonSet-managed Pod"
DAEMONSET_WARNING = "ignoring DaemonSet-managed Pod"
LOCAL_STORAGE_WARNING = "evicting Pod with local storage"
UNMANAGED_WARNING = "evicting Pod that has no controller"
NAMESPACE_MISSING_ERROR = "Pod Namespace does not exist"
UNKNOWN_BEHAVIOR_ERROR = "MachineDrainRule {name} has unknown spec.drain.behavior: {behavior}"
UNEXPECTED_ERROR = "unexpected error"
PODS_WITH_ERROR = "Pods with error {message}: {pods}"

# Error texts (drain.go, machine_controller.go).
GET_PODS_ERROR = "failed to get Pods for eviction"
LIST_NAMESPACES_ERROR = "failed to get Pods for eviction: failed to list Namespaces"
LIST_RULES_ERROR = "failed to list MachineDrainRules"
CORDON_ERROR = "failed to cordon Node"
CORDON_NODE_ERROR = "failed to cordon Node {node}"
GET_NODE_ERROR = "unable to get Node {node}"
DRAIN_NODE_ERROR = "failed to drain Node {node}"

# Eviction failure texts and how the condition message rewrites them.
PDB_VIOLATION_LOWER = "cannot evict pod as it would violate the pod's disruption budget."
TERMINATING_NAMESPACE_FAILURE = (
    "Cannot evict pod from terminating namespace: unable to create eviction (kube-controller-manager should set "
    "deletionTimestamp)"
)
FAILED_TO_EVICT_PREFIX = "failed to evict Pod, "

# ConditionMessage (drain.go) pieces.
LINE_DELETION_TIMESTAMP = "* {kind} {pods}: deletionTimestamp set, but still not removed from the Node"
LINE_FAILURE = "* {kind} {pods}: {failure}"
LINE_ONE_OTHER = "* 1 Pod with other issues"
LINE_OTHERS = "* {count} Pods with other issues"
LINE_WAIT_COMPLETED = "* {kind} {pods}: waiting for completion"
LINE_EVICT_LATER = "After above Pods have been removed from the Node, the following Pods will be evicted: {pods}"
LINE_WAIT_LATER = (
    "After above Pods have been removed from the Node, waiting for the following Pods to complete without eviction: "
    "{pods}"
)
CONDITION_POD_LIST_LIMIT = 3
FAILURE_KEYS_LIMIT = 5
LOG_POD_LIST_LIMIT = 5

# Log lines.
LOG_CORDONING = "Cordoning Node"
LOG_DRAINING = "Draining Node"
LOG_DRAIN_COMPLETED = "Drain completed"
LOG_DRAIN_COMPLETED_EVICTED = "Drain completed, remaining Pods on the Node have been evicted"
LOG_NOT_COMPLETED = "Drain not completed yet, there are still Pods on the Node that have to be drained"
LOG_REQUEUING = "Drain not completed yet, requeuing in 20s"
LOG_NODE_GONE = "Could not find Node from Machine.status.nodeRef, skipping Node drain."
LOG_UNREACHABLE = (
    "Node is unreachable, draining will use 1s GracePeriodSeconds and will ignore all Pods that have a "
    "deletionTimestamp > 1s old"
)
LOG_EVICTING = "Evicting Pod"
LOG_EVICTED = "Pod eviction successfully triggered"
LOG_EVICTION_NOT_NEEDED = "Eviction not needed, Pod doesn't exist anymore"
LOG_EVICTION_ERROR = "Error when evicting Pod"
LOG_IGNORED = "Skip evicting Pod because it should be ignored"
LOG_ALREADY_DELETING = "Skip triggering Pod eviction because it already has a deletionTimestamp"



def pod_list_text(pods: list[dict[str, Any]], limit: int) -> str:
    """``PodListToString``: ``ns/name`` of the first ``limit`` Pods, then ``... (N more)``."""
    names = [key(p) for p in pods[:limit]]
    if len(pods) > limit:
        names.append(f"... ({len(pods) - limit} more)")
    return ", ".join(names)


def is_node_unreachable(node: dict[str, Any]) -> bool:
    """``noderefutil.IsNodeUnreachable``: the Node's Ready condition has status Unknown."""
    for condition in (node.get("status") or {}).get("conditions") or []:
        if condition.get("type") == NODE_READY:
            return condition.get("status") == CONDITION_UNKNOWN
    return False


@dataclass
class PodDelete:
    """A Pod and what the filter chain decided about it (behavior "" is an error status)."""

    pod: dict[str, Any]
    behavior: str
    order: int | None
    reason: str
    message: str = ""


def _okay(order: int | None = 0) -> PodDelete:
    return PodDelete({}, drain_rules.BEHAVIOR_DRAIN, order, REASON_OKAY)


def _skip() -> PodDelete:
    return PodDelete({}, drain_rules.BEHAVIOR_SKIP, None, REASON_SKIP)


def _wait_completed() -> PodDelete:
    return PodDelete({}, drain_rules.BEHAVIOR_WAIT_COMPLETED, 0, REASON_WAIT_COMPLETED)


# The filters' plain answers, shared by every Pod (read only: :meth:`Drainer._filter` copies the last).
_OKAY = _okay()
_SKIP = _skip()
_WAIT_COMPLETED = _wait_completed()


def _warning(behavior: str, message: str) -> PodDelete:
    order = 0 if behavior == drain_rules.BEHAVIOR_DRAIN else None
    return PodDelete({}, behavior, order, REASON_WARNING, message)


def _error(message: str) -> PodDelete:
    return PodDelete({}, "", None, REASON_ERROR, message)


@dataclass
class PodDeleteList:
    """Every Pod of the Node with its status."""

    items: list[PodDelete]

    def pods(self) -> list[dict[str, Any]]:
        """The Pods that have to go before the Node counts as drained (Drain and WaitCompleted)."""
        keep = (drain_rules.BEHAVIOR_DRAIN, drain_rules.BEHAVIOR_WAIT_COMPLETED)
        return [i.pod for i in self.items if i.behavior in keep]

    def skipped_pods(self) -> list[dict[str, Any]]:
        """The Pods the drain ignores (Skip)."""
        return [i.pod for i in self.items if i.behavior == drain_rules.BEHAVIOR_SKIP]

    def errors(self) -> list[str]:
        """One ``Pods with error "<msg>": ns/p1, ns/p2`` per distinct error message."""
        failed: dict[str, list[str]] = {}
        for item in self.items:
            if item.reason == REASON_ERROR:
                failed.setdefault(item.message or UNEXPECTED_ERROR, []).append(key(item.pod))
        return [PODS_WITH_ERROR.format(message=go_quote(m), pods=", ".join(p)) for m, p in failed.items()]


@dataclass
class EvictionResult:
    """What one eviction pass found and did (``EvictionResult``)."""

    deletion_timestamp_set: list[dict[str, Any]] = field(default_factory=list)
    failed_eviction: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    to_trigger_eviction_later: list[dict[str, Any]] = field(default_factory=list)
    to_wait_completed_now: list[dict[str, Any]] = field(default_factory=list)
    to_wait_completed_later: list[dict[str, Any]] = field(default_factory=list)
    not_found: list[dict[str, Any]] = field(default_factory=list)
    ignored: list[dict[str, Any]] = field(default_factory=list)

    def drain_completed(self) -> bool:
        """True when every relevant Pod is gone (Pods not found and ignored Pods do not count)."""
        return not (self.deletion_timestamp_set or self.failed_eviction or self.to_trigger_eviction_later
                    or self.to_wait_completed_now or self.to_wait_completed_later)

    def condition_message(self, drain_start: str) -> str:
        """``ConditionMessage``: the released v1.9+ format ("" once the drain is complete)."""
        if self.drain_completed():
            return ""
        start = rfc3339(parse_rfc3339(drain_start)) if drain_start else ""
        lines = [DRAIN_NOT_COMPLETED_MESSAGE.format(start=start)]
        if self.deletion_timestamp_set:
            lines.append(LINE_DELETION_TIMESTAMP.format(
                kind=_kind(self.deletion_timestamp_set),
                pods=pod_list_text(self.deletion_timestamp_set, CONDITION_POD_LIST_LIMIT),
            ))
        if self.failed_eviction:
            failures = sorted(self.failed_eviction, key=lambda m: m.encode())
            shown, skipped = failures[:FAILURE_KEYS_LIMIT], failures[FAILURE_KEYS_LIMIT:]
            for failure in shown:
                pods = self.failed_eviction[failure]
                text = failure.replace(PDB_VIOLATION_MESSAGE, PDB_VIOLATION_LOWER)
                if not text.startswith(PDB_VIOLATION_LOWER):
                    text = FAILED_TO_EVICT_PREFIX + text
                lines.append(LINE_FAILURE.format(
                    kind=_kind(pods), pods=pod_list_text(pods, CONDITION_POD_LIST_LIMIT), failure=text,
                ))
            if skipped:
                count = sum(len(self.failed_eviction[f]) for f in skipped)
                lines.append(LINE_ONE_OTHER if count == 1 else LINE_OTHERS.format(count=count))
        if self.to_wait_completed_now:
            lines.append(LINE_WAIT_COMPLETED.format(
                kind=_kind(self.to_wait_completed_now),
                pods=pod_list_text(self.to_wait_completed_now, CONDITION_POD_LIST_LIMIT),
            ))
        if self.to_trigger_eviction_later:
            lines.append(LINE_EVICT_LATER.format(
                pods=pod_list_text(self.to_trigger_eviction_later, CONDITION_POD_LIST_LIMIT)))
        if self.to_wait_completed_later:
            lines.append(LINE_WAIT_LATER.format(
                pods=pod_list_text(self.to_wait_completed_later, CONDITION_POD_LIST_LIMIT)))
        return "\n".join(lines)

    def failed_pods(self) -> list[dict[str, Any]]:
        """Every Pod whose eviction failed, whatever the reason."""
        return [p for pods in self.failed_eviction.values() for p in pods]


def _kind(pods: list[dict[str, Any]]) -> str:
    return "Pod" if len(pods) == 1 else "Pods"


def _phase(pod: dict[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def _controller_ref(pod: dict[str, Any]) -> dict[str, Any] | None:
    """``metav1.GetControllerOf`` for reading: the Pod's own reference (the Pods listed are views)."""
    for ref in meta(pod).get("ownerReferences") or ():
        if ref.get("controller"):
            return ref  # type: ignore[no-any-return]
    return None


def _finished(pod: dict[str, Any]) -> bool:
    return _phase(pod) in (POD_SUCCEEDED, POD_FAILED)


class Drainer:
    """Drains one Node of one workload cluster for one Machine (``drain.Helper``)."""

    def __init__(
        self,
        management: Client,
        remote: Client,
        *,
        now: float,
        grace_period_seconds: int = -1,
        skip_wait_for_delete_timeout_seconds: int = 0,
        log_values: dict[str, str] | None = None,
    ) -> None:
        self.management = management
        self.remote = remote
        self.now = now
        self.grace_period_seconds = grace_period_seconds
        self.skip_wait_for_delete_timeout_seconds = skip_wait_for_delete_timeout_seconds
        self.log_values = dict(log_values or {})
        self._daemonsets: dict[tuple[str, str], bool | str] = {}

    # -- cordon ------------------------------------------------------------------------------------

    def cordon(self, node: dict[str, Any]) -> None:
        """Set ``spec.unschedulable`` with a merge patch (nothing when already cordoned)."""
        if (node.get("spec") or {}).get("unschedulable"):
            return
        logs.info(LOG_CORDONING, **self.log_values)
        try:
            self.remote.patch("v1", "Node", meta(node)["name"], {"spec": {"unschedulable": True}}, patch_type=MERGE)
        except (ApiError, ConnectionError) as err:
            raise ReconcileError(f"{CORDON_ERROR}: {_text(err)}") from err

    # -- what to drain -----------------------------------------------------------------------------

    def pods_for_eviction(self, cluster: dict[str, Any], machine: dict[str, Any], node_name: str) -> PodDeleteList:
        """``GetPodsForEviction``: every Pod bound to the Node, with its filter status. Raises
        :class:`ReconcileError` for invalid MachineDrainRules or Pods in error."""
        try:
            # Read only (filtered, sorted into lists, named in messages; never changed): an in-process
            # server answers views of its stored Pods rather than copies of every Pod on the Node.
            pods = self.remote.list("v1", "Pod", field_selector=f"spec.nodeName={node_name}",
                                    **shared_reads(self.remote))["items"]
        except (ApiError, ConnectionError) as err:
            raise ReconcileError(f"{GET_PODS_ERROR}: {_text(err)}") from err
        if not pods:
            return PodDeleteList([])
        rules = self._matching_rules(cluster, machine)
        try:
            namespaces = {meta(ns)["name"]: ns
                          for ns in self.remote.list("v1", "Namespace", **shared_reads(self.remote))["items"]}
        except (ApiError, ConnectionError) as err:
            raise ReconcileError(f"{LIST_NAMESPACES_ERROR}: {_text(err)}") from err
        filters: list[Callable[[dict[str, Any]], PodDelete]] = [
            self._skip_deleted, self._daemonset, self._mirror, self._local_storage, self._unreplicated,
            self._drain_label, lambda pod: self._drain_rules(pod, rules, namespaces),
        ]
        items = [self._filter(pod, filters) for pod in pods]
        result = PodDeleteList(items)
        errs = result.errors()
        if errs:
            raise ReconcileError(f"{GET_PODS_ERROR}: {aggregate(errs)}")
        return result

    def _matching_rules(self, cluster: dict[str, Any], machine: dict[str, Any]) -> list[dict[str, Any]]:
        namespace = meta(machine).get("namespace")
        try:
            rules = self.management.list(CAPI_API_VERSION, MACHINE_DRAIN_RULE_KIND, namespace)["items"]
        except (ApiError, ConnectionError) as err:
            raise ReconcileError(f"{GET_PODS_ERROR}: {LIST_RULES_ERROR}: {_text(err)}") from err
        invalid = drain_rules.invalid_rules(rules)
        if invalid:
            raise ReconcileError(f"{GET_PODS_ERROR}: {drain_rules.MATCHING_RULES_ERROR}: {aggregate(invalid)}")
        return drain_rules.matching_rules(rules, machine, cluster)

    @staticmethod
    def _filter(pod: dict[str, Any], filters: list[Callable[[dict[str, Any]], PodDelete]]) -> PodDelete:
        status = _OKAY
        warnings: list[str] = []
        for check in filters:
            status = check(pod)
            if status.behavior in (drain_rules.BEHAVIOR_SKIP, drain_rules.BEHAVIOR_WAIT_COMPLETED):
                break
            if status.reason == REASON_WARNING:
                warnings.append(status.message)
        reason, message = status.reason, status.message
        if status.behavior == drain_rules.BEHAVIOR_DRAIN and reason in (REASON_OKAY, REASON_WARNING) and warnings:
            reason, message = REASON_WARNING, ", ".join(warnings)
        # The filters' answers may be the shared constants: the Pod's own status is a new one.
        return PodDelete(pod, status.behavior, status.order, reason, message)

    def _skip_deleted(self, pod: dict[str, Any]) -> PodDelete:
        deleted = meta(pod).get("deletionTimestamp")
        if self.skip_wait_for_delete_timeout_seconds > 0 and deleted \
                and int(self.now - parse_rfc3339(deleted)) > self.skip_wait_for_delete_timeout_seconds:
            return _SKIP
        return _OKAY

    def _daemonset(self, pod: dict[str, Any]) -> PodDelete:
        ref = _controller_ref(pod)
        if ref is None or ref.get("kind") != "DaemonSet" or _finished(pod):
            return _OKAY
        namespace = meta(pod).get("namespace", "")
        cache_key = (namespace, str(ref.get("name", "")))
        found = self._daemonsets.get(cache_key)
        if found is None:
            try:
                self.remote.get("apps/v1", "DaemonSet", cache_key[1], namespace)
                found = True
            except ApiError as err:
                found = False if err.code == 404 else err.message
            except ConnectionError as err:
                found = str(err)
            self._daemonsets[cache_key] = found
        if found is False:
            return _warning(drain_rules.BEHAVIOR_DRAIN, DAEMONSET_ORPHANED_WARNING)
        if isinstance(found, str):
            return _error(found)
        return _warning(drain_rules.BEHAVIOR_SKIP, DAEMONSET_WARNING)

    @staticmethod
    def _mirror(pod: dict[str, Any]) -> PodDelete:
        return _SKIP if MIRROR_POD_ANNOTATION in annotations(pod) else _OKAY

    @staticmethod
    def _local_storage(pod: dict[str, Any]) -> PodDelete:
        for volume in (pod.get("spec") or {}).get("volumes") or ():
            if volume.get("emptyDir") is not None:
                break
        else:
            return _OKAY  # (a loop, not any() over a generator: every Pod of the Node, every pass)
        if _finished(pod):
            return _OKAY
        return _warning(drain_rules.BEHAVIOR_DRAIN, LOCAL_STORAGE_WARNING)

    @staticmethod
    def _unreplicated(pod: dict[str, Any]) -> PodDelete:
        if _finished(pod) or _controller_ref(pod) is not None:
            return _OKAY
        return _warning(drain_rules.BEHAVIOR_DRAIN, UNMANAGED_WARNING)

    @staticmethod
    def _drain_label(pod: dict[str, Any]) -> PodDelete:
        labels = meta(pod).get("labels") or {}
        if POD_DRAIN_LABEL not in labels:
            return _OKAY
        value = str(labels[POD_DRAIN_LABEL])
        if value.casefold() == drain_rules.BEHAVIOR_SKIP.casefold():
            return _SKIP
        if value.replace("-", "", 1).casefold() == drain_rules.BEHAVIOR_WAIT_COMPLETED.casefold():
            return _WAIT_COMPLETED
        return _OKAY

    @staticmethod
    def _drain_rules(
        pod: dict[str, Any], rules: list[dict[str, Any]], namespaces: dict[str, dict[str, Any]]
    ) -> PodDelete:
        namespace = namespaces.get(meta(pod).get("namespace", ""))
        if namespace is None:
            return _error(NAMESPACE_MISSING_ERROR)
        for rule in rules:
            if not drain_rules.applies_to_pod(rule, pod, namespace):
                continue
            behavior = drain_rules.drain_behavior(rule)
            if behavior == drain_rules.BEHAVIOR_DRAIN:
                return _okay(drain_rules.drain_order(rule))
            if behavior == drain_rules.BEHAVIOR_SKIP:
                return _SKIP
            if behavior == drain_rules.BEHAVIOR_WAIT_COMPLETED:
                return _WAIT_COMPLETED
            return _error(UNKNOWN_BEHAVIOR_ERROR.format(
                name=go_quote(str(meta(rule).get("name", ""))), behavior=go_quote(behavior)))
        return _OKAY

    # -- eviction ----------------------------------------------------------------------------------

    def evict_pods(self, pod_list: PodDeleteList) -> EvictionResult:
        """``EvictPods``: evict the Drain Pods of the lowest order, and sort every Pod into the result."""
        items = sorted(pod_list.items, key=lambda i: (meta(i.pod).get("namespace", ""), meta(i.pod).get("name", "")))
        orders = [i.order or 0 for i in items
                  if i.behavior in (drain_rules.BEHAVIOR_DRAIN, drain_rules.BEHAVIOR_WAIT_COMPLETED)]
        min_order = min(orders) if orders else 2**31 - 1
        evict_now: list[PodDelete] = []
        result = EvictionResult()
        already_deleting: list[dict[str, Any]] = []
        for item in items:
            order = item.order or 0
            if item.behavior == drain_rules.BEHAVIOR_DRAIN and not meta(item.pod).get("deletionTimestamp"):
                if order == min_order:
                    evict_now.append(item)
                else:
                    result.to_trigger_eviction_later.append(item.pod)
            elif item.behavior == drain_rules.BEHAVIOR_WAIT_COMPLETED:
                target = result.to_wait_completed_now if order == min_order else result.to_wait_completed_later
                target.append(item.pod)
            elif item.behavior == drain_rules.BEHAVIOR_DRAIN:
                already_deleting.append(item.pod)
            else:
                result.ignored.append(item.pod)
        logs.info(
            LOG_NOT_COMPLETED, **self.log_values,
            podsToTriggerEvictionNow=pod_list_text([i.pod for i in evict_now], LOG_POD_LIST_LIMIT),
            podsToTriggerEvictionLater=pod_list_text(result.to_trigger_eviction_later, LOG_POD_LIST_LIMIT),
            podsWithDeletionTimestamp=pod_list_text(already_deleting, LOG_POD_LIST_LIMIT),
            podsToWaitCompletedNow=pod_list_text(result.to_wait_completed_now, LOG_POD_LIST_LIMIT),
            podsToWaitCompletedLater=pod_list_text(result.to_wait_completed_later, LOG_POD_LIST_LIMIT),
        )
        verbose = logs.verbose()
        if verbose:
            for pod in result.ignored:
                logs.debug(LOG_IGNORED, **self.log_values, Pod=key(pod))
            for pod in already_deleting:
                logs.debug(LOG_ALREADY_DELETING, **self.log_values, Pod=key(pod))
        result.deletion_timestamp_set.extend(already_deleting)
        options: dict[str, Any] = {}
        if self.grace_period_seconds >= 0:
            options["gracePeriodSeconds"] = self.grace_period_seconds
        for item in evict_now:
            pod = item.pod
            if verbose:
                logs.debug(LOG_EVICTING, **self.log_values, Pod=key(pod))
            failure = self._evict(pod, options)
            if failure is None:
                if verbose:
                    logs.debug(LOG_EVICTED, **self.log_values, Pod=key(pod))
                result.deletion_timestamp_set.append(pod)
            elif failure == "":
                if verbose:
                    logs.debug(LOG_EVICTION_NOT_NEEDED, **self.log_values, Pod=key(pod))
                result.not_found.append(pod)
            else:
                if verbose:
                    logs.debug(LOG_EVICTION_ERROR, **self.log_values, Pod=key(pod), err=failure)
                result.failed_eviction.setdefault(failure, []).append(pod)
        return result

    def _evict(self, pod: dict[str, Any], options: dict[str, Any]) -> str | None:
        """None when the eviction went through, "" when the Pod is gone, else the failure text."""
        m = meta(pod)
        try:
            self.remote.evict(m["name"], m.get("namespace", ""), delete_options=dict(options))
        except ApiError as err:
            if err.code == 404:
                return ""
            if err.code == 429:
                text = err.message
                details = err.status.get("details")
                if details is not None:
                    causes = ",".join(str(c.get("message", "")) for c in details.get("causes") or [])
                    text = f"{text} {causes}"
                return text
            causes = (err.status.get("details") or {}).get("causes") or []
            if err.code == 403 and any(c.get("reason") == NAMESPACE_TERMINATING_CAUSE for c in causes):
                return TERMINATING_NAMESPACE_FAILURE
            return err.message
        except ConnectionError as err:
            return str(err)
        return None


def _text(err: BaseException) -> str:
    """The Go error text of a client failure (an API error prints its Status message)."""
    return err.message if isinstance(err, ApiError) else str(err)


@dataclass
class DrainOutcome:
    """One drain pass: complete, or not yet (with the condition message to show)."""

    completed: bool
    message: str = ""


def drain_node(
    management: Client,
    remote: Client | None,
    remote_error: str,
    cluster: dict[str, Any],
    machine: dict[str, Any],
    node_name: str,
    drain_start: str,
    now: float,
) -> DrainOutcome:
    """``drainNode``: one pass over the Node. A Node that is gone counts as drained. Raises
    :class:`ReconcileError` (with upstream's wrapping) when the drain cannot be done."""
    log_values = {"Machine": key(machine), "Node": node_name}
    if remote is None:
        raise ReconcileError(f"{DRAIN_NODE_ERROR.format(node=node_name)}: {remote_error}")
    try:
        node = remote.get("v1", "Node", node_name, **shared_reads(remote))  # read only
    except ApiError as err:
        if err.code == 404:
            logs.info(LOG_NODE_GONE, **log_values)
            return DrainOutcome(True)
        raise ReconcileError(f"{GET_NODE_ERROR.format(node=node_name)}: {err.message}") from err
    except ConnectionError as err:
        raise ReconcileError(f"{GET_NODE_ERROR.format(node=node_name)}: {err}") from err
    drainer = Drainer(management, remote, now=now, log_values=log_values)
    if is_node_unreachable(node):
        # The kubelet is away: Pods will never disappear, so old deletions are ignored and evictions use a
        # 1 s grace period (PodDisruptionBudgets still apply, as the eviction API enforces them).
        drainer.skip_wait_for_delete_timeout_seconds = 1
        drainer.grace_period_seconds = 1
        logs.debug(LOG_UNREACHABLE, **log_values)
    try:
        drainer.cordon(node)
    except ReconcileError as err:
        raise ReconcileError(f"{CORDON_NODE_ERROR.format(node=node_name)}: {err}") from err
    pod_list = drainer.pods_for_eviction(cluster, machine, node_name)
    if not pod_list.pods():
        logs.info(LOG_DRAIN_COMPLETED, **log_values)
        return DrainOutcome(True)
    logs.info(LOG_DRAINING, **log_values)
    result = drainer.evict_pods(pod_list)
    if result.drain_completed():
        logs.info(LOG_DRAIN_COMPLETED_EVICTED, **log_values)
        return DrainOutcome(True)
    logs.info(
        LOG_REQUEUING, **log_values,
        podsFailedEviction=pod_list_text(result.failed_pods(), LOG_POD_LIST_LIMIT),
        podsWithDeletionTimestamp=pod_list_text(result.deletion_timestamp_set, LOG_POD_LIST_LIMIT),
        podsToTriggerEvictionLater=pod_list_text(result.to_trigger_eviction_later, LOG_POD_LIST_LIMIT),
        podsToWaitCompletedNow=pod_list_text(result.to_wait_completed_now, LOG_POD_LIST_LIMIT),
        podsToWaitCompletedLater=pod_list_text(result.to_wait_completed_later, LOG_POD_LIST_LIMIT),
    )
    return DrainOutcome(False, result.condition_message(drain_start))
