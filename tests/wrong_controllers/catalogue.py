"""The mutation self-test's catalogue: deliberately wrong variants of the reference controllers (and of the
fake apiserver), each ONE plausible bug against ONE seed rule. A variant is applied by :func:`apply`, a
small monkeypatch of the reference made before any world starts: in-process by the pytest plugin
:mod:`tests.wrong_controllers.plugin`, and in a controller process by
``python -m tests.wrong_controllers.controller_process`` (``--target controller``); both read the variant's
name from ``LIFECYCLE_TCK_WRONG``. ``python -m tests.wrong_controllers`` runs the suite against each."""

from __future__ import annotations

import importlib
import os
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ENV = "LIFECYCLE_TCK_WRONG"
APISERVER = "apiserver"

MACHINES = "features/test_machine_deletion_scenarios.py"
ROLLOUT = "features/test_rollout_hooks_scenarios.py"
RUNTIME = "features/test_runtime_hooks_scenarios.py"
ADDONS = "features/test_addon_deletion_scenarios.py"
API = "features/test_apiserver_scenarios.py"


@dataclass(frozen=True)
class Variant:
    """One wrong variant: what it breaks (``seed``, ``rule``), which controller profile it belongs to
    (``apiserver`` for a fake-apiserver bug: in-process only), the scenarios that judge it (``features``
    paths and a ``-m`` expression, empty for all of them) and the patch."""

    name: str
    seed: str
    rule: str
    profile: str
    features: tuple[str, ...]
    marks: str
    patch: Callable[[], None]
    bug: str


def _controller_modules() -> list[Any]:
    package = importlib.import_module("controllers")
    return [
        importlib.import_module(info.name)
        for info in pkgutil.walk_packages(package.__path__, "controllers.")
        if not info.name.endswith("__main__")
    ]


def _const(name: str, value: Any, package: str = "controllers.") -> Callable[[], None]:
    """Set the constant ``name`` in every reference module holding it (``from x import NAME`` copies it)."""

    def patch() -> None:
        hits = [m for m in _controller_modules() if m.__name__.startswith(package) and hasattr(m, name)]
        if not hits:
            raise LookupError(f"no module of {package!r} defines {name}")
        for module in hits:
            setattr(module, name, value)

    return patch


def _attr(path: str, make: Callable[[Any], Any]) -> Callable[[], None]:
    """Replace ``module:attr[.attr]`` by ``make(original)`` (and every ``from module import attr`` copy)."""

    def patch() -> None:
        module_name, _, dotted = path.partition(":")
        owner: Any = importlib.import_module(module_name)
        *parents, last = dotted.split(".")
        for part in parents:
            owner = getattr(owner, part)
        original = getattr(owner, last)
        replacement = make(original)
        setattr(owner, last, replacement)
        if not parents:  # a module-level function may have been imported by name elsewhere
            for module in _controller_modules():
                if getattr(module, last, None) is original:
                    setattr(module, last, replacement)

    return patch


def _always(value: Any) -> Callable[[Any], Any]:
    def make(_original: Any) -> Any:
        def replacement(*_args: Any, **_kwargs: Any) -> Any:
            return value

        return replacement

    return make


def _static_always(value: Any) -> Callable[[Any], Any]:
    return lambda original: staticmethod(_always(value)(original))


# -- rollout (seed 004) ---------------------------------------------------------------------------------


def _merged_groups(pairs: list[tuple[str, Any]], replicas: int) -> list[Any]:
    from controllers.rollout import points

    merged: list[Any] = []
    for group in points.groups(pairs, replicas):
        if merged and merged[-1].point.count == group.point.count:
            merged[-1].names.extend(group.names)
        else:
            merged.append(points.Group(group.point, list(group.names)))
    return merged


def _gate(change: Callable[[Any], None]) -> Callable[[], None]:
    def patch() -> None:
        from controllers.rollout import hooks

        evaluate = hooks.HookRunner.evaluate

        def wrong(self: Any, *args: Any, **kwargs: Any) -> Any:
            gate = evaluate(self, *args, **kwargs)
            change(gate)
            return gate

        hooks.HookRunner.evaluate = wrong  # type: ignore[method-assign]

    return patch


def _no_pause(gate: Any) -> None:
    if gate.running:
        gate.frozen, gate.cap = False, None


def _no_cap(gate: Any) -> None:
    gate.cap = None


def _abort_ignored(gate: Any) -> None:
    if gate.aborted:
        gate.frozen, gate.cap = False, None


def _uncut_job_name(owner: str, revision: int, hook: str) -> str:
    return f"{owner}-{revision}-{hook}"


def _parallel_groups() -> None:
    from controllers.rollout import hooks

    hooks.groups = _merged_groups  # type: ignore[assignment]


# -- apiserver ------------------------------------------------------------------------------------------


def _finalizers_ignored() -> None:
    from harness.apiserver.server import APIServer

    def finalized(_rt: Any, obj: dict[str, Any]) -> bool:
        meta = obj["metadata"]
        return bool(meta.get("deletionTimestamp")) and not meta.get("deletionGracePeriodSeconds")

    APIServer._finalized = staticmethod(finalized)  # type: ignore[method-assign]


def _watch_added_as_modified() -> None:
    from harness.apiserver import watch as watch_module
    from harness.kube.names.meta import ADDED, DELETED, MODIFIED

    offer = watch_module.Watch.offer

    def wrong(self: Any, event_type: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        # The bug: an object that starts matching the watch's selector arrives as MODIFIED, not ADDED.
        if event_type not in (ADDED, DELETED) and not self.closed and self._matches(obj) and not self._matches(old):
            self._push(MODIFIED, obj)
            return
        offer(self, event_type, obj, old)

    watch_module.Watch.offer = wrong  # type: ignore[method-assign]


def _grace_period_ignored() -> None:
    from harness.apiserver.server import APIServer

    def finalized(_rt: Any, obj: dict[str, Any]) -> bool:
        meta = obj["metadata"]
        return bool(meta.get("deletionTimestamp")) and not meta.get("finalizers")

    APIServer._finalized = staticmethod(finalized)  # type: ignore[method-assign]


def _pdb_round_down() -> None:
    from harness.apiserver import pdb
    from harness.kube.intstr import scaled_value
    from harness.world import disruption

    def desired(spec: dict[str, Any], expected: int) -> int:
        if spec.get("maxUnavailable") is not None:
            return max(0, expected - scaled_value(spec["maxUnavailable"], expected, round_up=False))
        if spec.get("minAvailable") is not None:
            return scaled_value(spec["minAvailable"], expected, round_up=False)
        return 0

    pdb.desired_healthy = desired  # type: ignore[assignment]
    disruption.desired_healthy = desired  # type: ignore[attr-defined]


def _eviction_ignores_pdb() -> None:
    from harness.apiserver.subresources import eviction

    eviction.pdb_selects = _always(False)(None)  # type: ignore[attr-defined]


def _eviction_all_pods_ready() -> None:
    from harness.apiserver.subresources import eviction

    eviction.is_pod_ready = _always(True)(None)  # type: ignore[attr-defined]


def _pdb_counts_every_pod_healthy() -> None:
    from harness.world import disruption

    disruption.is_pod_ready = _always(True)(None)  # type: ignore[attr-defined]


def _disruptions_off_by_one() -> None:
    from harness.apiserver import pdb
    from harness.world import disruption

    def allowed(current: int, desired: int, expected: int) -> int:
        return 0 if expected <= 0 else max(0, current - desired + 1)

    pdb.disruptions_allowed = allowed  # type: ignore[assignment]
    if hasattr(disruption, "disruptions_allowed"):
        disruption.disruptions_allowed = allowed  # type: ignore[attr-defined]


def _aggregate_max(original: Any) -> Any:
    def wrong(hook: Any, responses: list[dict[str, Any]]) -> dict[str, Any]:
        out = original(hook, responses)
        if out.get("retryAfterSeconds"):
            out["retryAfterSeconds"] = max(int(r.get("retryAfterSeconds") or 0) for r in responses)
        return out

    return wrong


def _unblocking(blocked_hook: str) -> Callable[[], None]:
    """The topology controller reads every ``blocked_hook`` answer as if it asked for no retry."""

    def make(original: Any) -> Any:
        def wrong(self: Any, scope: Any, hook: str, **fields: Any) -> dict[str, Any]:
            response = original(self, scope, hook, **fields)
            if hook == blocked_hook:
                response = {**response, "retryAfterSeconds": 0}
                scope.responses[hook] = response
            return response

        return wrong

    return _attr("controllers.topology.controller:TopologyController._call", make)


def _watch_deleted_as_modified() -> None:
    from harness.apiserver import watch as watch_module
    from harness.kube.names.meta import DELETED, MODIFIED

    offer = watch_module.Watch.offer

    def wrong(self: Any, event_type: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        # The bug: an object that stops matching the watch's selector arrives as MODIFIED, not DELETED.
        if event_type != DELETED and not self.closed and not self._matches(obj) and self._matches(old):
            self._push(MODIFIED, obj)
            return
        offer(self, event_type, obj, old)

    watch_module.Watch.offer = wrong  # type: ignore[method-assign]


def _first_message_only(original: Any) -> Any:
    def wrong(hook: Any, responses: list[dict[str, Any]]) -> dict[str, Any]:
        out = original(hook, responses)
        messages = [str(r.get("message") or "") for r in responses if r.get("message")]
        if messages:
            out["message"] = messages[0]
        return out

    return wrong


def _summary_waits_for_gone_cluster(original: Any) -> Any:
    """A deleting ClusterSummary whose Cluster is gone keeps waiting to remove its add-ons from it."""

    def wrong(self: Any, scope: Any) -> Any:
        from controllers.addons.api import CLUSTER_TYPE_CAPI
        from harness.client import Result

        if scope.cluster is None and scope.cluster_type == CLUSTER_TYPE_CAPI:
            return Result(requeue_after=10.0)
        return original(self, scope)

    return wrong


def _one_behaviour_per_cluster() -> None:
    """One clusterDeletionBehavior per cluster: once any profile of a cluster says LeavePolicies, every
    profile's add-ons are left when that cluster is deleted."""
    from controllers.addons import controller as addons
    from controllers.addons.api import LEAVE_POLICIES

    deploy = addons.AddonController._reconcile_summary_deploy
    delete = addons.AddonController._reconcile_summary_delete
    leaving: set[tuple[int, str, str]] = set()

    def key(self: Any, scope: Any) -> tuple[int, str, str]:
        return (id(self), scope.namespace, scope.cluster_name)

    def wrong_deploy(self: Any, scope: Any) -> Any:
        if scope.profile_spec.get("clusterDeletionBehavior") == LEAVE_POLICIES:
            leaving.add(key(self, scope))
        return deploy(self, scope)

    def wrong_delete(self: Any, scope: Any) -> Any:
        if key(self, scope) in leaving:
            scope.summary.setdefault("spec", {}).setdefault("clusterProfileSpec", {})[
                "clusterDeletionBehavior"] = LEAVE_POLICIES
        return delete(self, scope)

    addons.AddonController._reconcile_summary_deploy = wrong_deploy  # type: ignore[method-assign]
    addons.AddonController._reconcile_summary_delete = wrong_delete  # type: ignore[method-assign]


def _gate_for_every_profile(_original: Any) -> Any:
    """The cleanup gate waits for the removal of every profile of the Cluster, not only the enforcing ones."""

    def wrong(_self: Any, scope: Any) -> bool:
        from controllers.addons.api import CLUSTER_TYPE_CAPI

        return bool(scope.cluster_type == CLUSTER_TYPE_CAPI)

    return wrong


def _acpi_failure_deferred() -> None:
    """A failing AfterControlPlaneInitialized is reported only after the topology's objects were reconciled."""
    from controllers.runtime.client import RuntimeSDKError
    from controllers.topology import controller as topology

    call_hook = topology.TopologyController._after_control_plane_initialized
    reconcile = topology.TopologyController._reconcile

    def hook(self: Any, scope: Any) -> None:
        try:
            call_hook(self, scope)
        except RuntimeSDKError as err:
            scope.deferred_error = err

    def wrong(self: Any, scope: Any) -> Any:
        result = reconcile(self, scope)
        error = getattr(scope, "deferred_error", None)
        if error is not None:
            raise error
        return result

    topology.TopologyController._after_control_plane_initialized = hook  # type: ignore[method-assign]
    topology.TopologyController._reconcile = wrong  # type: ignore[method-assign]


def _after_upgrade_holds_next(original: Any) -> Any:
    """An AfterClusterUpgrade answer asking to retry holds the next upgrade for that long (Cluster API v1.12+)."""
    from controllers.runtime.api import AFTER_CLUSTER_UPGRADE, BEFORE_CLUSTER_UPGRADE, CATALOG, Hook

    # Read retryAfterSeconds from AfterClusterUpgrade answers (v1.12's CommonRetryResponse)...
    CATALOG[AFTER_CLUSTER_UPGRADE] = Hook(AFTER_CLUSTER_UPGRADE, retry=True)
    held: dict[tuple[int, str], float] = {}

    def wrong(self: Any, scope: Any, hook: str, **fields: Any) -> dict[str, Any]:
        meta = scope.cluster.get("metadata") or {}
        key = (id(self), f"{meta.get('namespace')}/{meta.get('name')}")
        if hook == BEFORE_CLUSTER_UPGRADE and held.get(key, 0.0) > self.now():
            response = {"status": "Success", "retryAfterSeconds": max(1, int(held[key] - self.now())),
                        "message": "AfterClusterUpgrade asked to retry"}
            scope.responses[hook] = response
            return response
        response = dict(original(self, scope, hook, **fields))
        if hook == AFTER_CLUSTER_UPGRADE:
            # ... as a cool-down before the next upgrade only: the hook itself is done, nothing shows it.
            retry = int(response.pop("retryAfterSeconds", 0) or 0)
            scope.responses[hook] = response
            if retry:
                held[key] = self.now() + retry
        return response

    return wrong


M, T, A = "machine_controller", "topology_controller", "addon_controller"

VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in [
        # seeds 000/001: machine deletion, drain, volume detach, hooks
        Variant(
            "drain-retry-2s",
            "001",
            "MD_DRAIN_015",
            M,
            (MACHINES,),
            "MD_DRAIN_015",
            _const("DRAIN_RETRY_INTERVAL", 2.0),
            "a refused drain is retried every 2 s instead of 20 s",
        ),
        Variant(
            "drain-timeout-ignored",
            "001",
            "nodeDrainTimeout",
            M,
            (MACHINES,),
            "MD_SKIP_002 or MD_VOL_006",
            _attr("controllers.machine.deletion:_timeout_exceeded", _always(False)),
            "spec.nodeDrainTimeout / nodeVolumeDetachTimeout never expire",
        ),
        Variant(
            "exclude-drain-ignored",
            "001",
            "exclude-node-draining annotation",
            M,
            (MACHINES,),
            "MD_SKIP_001",
            _const("EXCLUDE_NODE_DRAINING_ANNOTATION", "machine.cluster.x-k8s.io/exclude-node-drain"),
            "the exclude-node-draining annotation is read under a misspelt key",
        ),
        Variant(
            "exclude-volume-detach-ignored",
            "001",
            "exclude-wait-for-node-volume-detach",
            M,
            (MACHINES,),
            "MD_VOL_005",
            _const("EXCLUDE_WAIT_FOR_NODE_VOLUME_DETACH_ANNOTATION", "x.example/none"),
            "the exclude-wait-for-node-volume-detach annotation is ignored",
        ),
        Variant(
            "kcp-rule-dropped",
            "001",
            "KCP machine without cleanup hook is not drained",
            M,
            (MACHINES,),
            "MD_KCP_001 or MD_KCP_003 or MD_KCP_004",
            _attr("controllers.machine.deletion:_is_kcp_machine_without_cleanup_hook", _always(False)),
            "a KCP Machine without the kcp-cleanup hook is drained like any other",
        ),
        Variant(
            "daemonset-pods-evicted",
            "001",
            "DaemonSet pods are not evicted",
            M,
            (MACHINES,),
            "MD_DRAIN_004 or MD_DRAIN_005",
            _attr("controllers.machine.drain:Drainer._daemonset", lambda o: lambda self, pod: _ok_delete()),
            "pods owned by a DaemonSet are evicted",
        ),
        Variant(
            "mirror-pods-evicted",
            "001",
            "mirror pods are skipped",
            M,
            (MACHINES,),
            "MD_DRAIN_006",
            _attr("controllers.machine.drain:Drainer._mirror", lambda o: staticmethod(lambda pod: _ok_delete())),
            "mirror (static) pods are evicted",
        ),
        Variant(
            "drain-label-ignored",
            "001",
            "cluster.x-k8s.io/drain pod label",
            M,
            (MACHINES,),
            "MD_DRAIN_007 or MD_DRAIN_008",
            _attr("controllers.machine.drain:Drainer._drain_label", lambda o: staticmethod(lambda pod: _ok_delete())),
            "the pod's cluster.x-k8s.io/drain label is ignored",
        ),
        Variant(
            "orphaned-daemonset-pods-skipped",
            "001",
            "orphaned DaemonSet pods are evicted",
            M,
            (MACHINES,),
            "MD_DRAIN_004 or MD_DRAIN_005",
            _attr(
                "controllers.machine.drain:Drainer._daemonset",
                lambda o: lambda self, pod: _skip_delete() if _ds_owned(pod) else o(self, pod),
            ),
            "every DaemonSet pod is skipped, also one whose DaemonSet is gone",
        ),
        Variant(
            "unreachable-node-not-detected",
            "001",
            "unreachable Node: deleting pods ignored",
            M,
            (MACHINES,),
            "MD_UNREACH_001 or MD_UNREACH_002 or MD_UNREACH_003 or MD_UNREACH_004",
            _attr("controllers.machine.drain:is_node_unreachable", _always(False)),
            "a Node whose Ready condition is Unknown is treated as reachable",
        ),
        Variant(
            "pre-drain-hooks-ignored",
            "000",
            "pre-drain hooks hold the drain",
            M,
            (MACHINES,),
            "MD_PREDRAIN_001 or MD_PREDRAIN_002 or MD_PREDRAIN_003",
            _const("PRE_DRAIN_DELETE_HOOK_PREFIX", "pre-drain.hook.machine.cluster.x-k8s.io"),
            "pre-drain hook annotations are looked for under a wrong prefix",
        ),
        Variant(
            "pre-terminate-hooks-ignored",
            "000",
            "pre-terminate hooks hold the infrastructure deletion",
            M,
            (MACHINES,),
            "MD_PRETERM_001 or MD_PRETERM_002 or MD_PRETERM_003",
            _const("PRE_TERMINATE_DELETE_HOOK_PREFIX", "pre-terminate.hook.machine.cluster.x-k8s.io"),
            "pre-terminate hook annotations are looked for under a wrong prefix",
        ),
        Variant(
            "cordon-skipped",
            "001",
            "the Node is cordoned before the drain",
            M,
            (MACHINES,),
            "MD_DRAIN_001 or MD_DRAIN_002 or MD_DRAIN_003 or MD_PREDRAIN_002",
            _attr("controllers.machine.drain:Drainer.cordon", _always(None)),
            "the Node is drained without being cordoned (spec.unschedulable never set)",
        ),
        Variant(
            "drain-retry-60s",
            "001",
            "MD_DRAIN_015 (repeated every 20 s)",
            M,
            (MACHINES,),
            "MD_DRAIN_015",
            _const("DRAIN_RETRY_INTERVAL", 60.0),
            "a refused drain is retried every 60 s instead of 20 s",
        ),
        Variant(
            "drain-skipped",
            "001",
            "the Node is drained (phase 4)",
            M,
            (MACHINES,),
            "MD_DRAIN_001 or MD_DRAIN_002 or MD_DRAIN_003",
            _attr("controllers.machine.deletion:is_node_drain_allowed", _always(False)),
            "the Node is never drained, as if every Machine were excluded",
        ),
        Variant(
            "volume-wait-skipped",
            "001",
            "volumes are waited for (phase 6)",
            M,
            (MACHINES,),
            "MD_VOL_001 or MD_VOL_002 or MD_VOL_003 or MD_VOL_004",
            _attr("controllers.machine.deletion:is_node_volume_detaching_allowed", _always(False)),
            "the infrastructure is deleted without waiting for the Node's volumes to detach",
        ),
        # seed 002: Runtime SDK client and topology hooks
        Variant(
            "handler-timeout-no-max",
            "002",
            "timeoutSeconds at most 30",
            T,
            (RUNTIME,),
            "RT_TIMEOUT_001 or RT_DISC_002 or RT_FP_001",
            _const("MAX_HANDLER_TIMEOUT_SECONDS", 3600),
            "a timeoutSeconds above 30 is accepted",
        ),
        Variant(
            "retry-after-max",
            "002",
            "AggregateRetryAfter is the lowest non-zero value",
            T,
            (RUNTIME,),
            "RT_AGG_001 or RT_AGG_002",
            _attr("controllers.runtime.client:aggregate", _aggregate_max),
            "the highest retryAfterSeconds of the answers is used",
        ),
        Variant(
            "before-create-not-blocking",
            "002",
            "BeforeClusterCreate blocks creation",
            T,
            (RUNTIME,),
            "RT_BCC_001 or RT_BCC_002 or RT_BCC_003",
            _unblocking("BeforeClusterCreate"),
            "a BeforeClusterCreate answer asking to retry does not hold the creation",
        ),
        Variant(
            "before-delete-not-blocking",
            "002",
            "BeforeClusterDelete blocks the deletion",
            T,
            (RUNTIME,),
            "RT_BCD_001 or RT_BCD_002 or RT_BCD_003",
            _unblocking("BeforeClusterDelete"),
            "a BeforeClusterDelete answer asking to retry does not hold the Cluster's deletion",
        ),
        Variant(
            "before-upgrade-not-blocking",
            "002",
            "BeforeClusterUpgrade blocks the upgrade",
            T,
            (RUNTIME,),
            "RT_BCU_001 or RT_BCU_002",
            _unblocking("BeforeClusterUpgrade"),
            "a BeforeClusterUpgrade answer asking to retry does not hold the upgrade",
        ),
        Variant(
            "messages-not-joined",
            "002",
            "RT_AGG_001 (messages joined)",
            T,
            (RUNTIME,),
            "RT_AGG_001",
            _attr("controllers.runtime.client:aggregate", _first_message_only),
            "only the first extension's message is kept when several answer",
        ),
        Variant(
            "acpi-not-called",
            "002",
            "AfterControlPlaneInitialized is called",
            T,
            (RUNTIME,),
            "RT_ACPI_001 or RT_ACPI_002 or RT_ACPI_003",
            _attr("controllers.topology.controller:TopologyController._after_control_plane_initialized", _always(None)),
            "AfterControlPlaneInitialized is never called",
        ),
        Variant(
            "after-upgrade-not-called",
            "002",
            "AfterClusterUpgrade is called",
            T,
            (RUNTIME,),
            "RT_ACU_001 or RT_ACU_002",
            _attr("controllers.topology.controller:TopologyController._after_cluster_upgrade", _always(None)),
            "AfterClusterUpgrade is never called",
        ),
        Variant(
            "acpi-failure-deferred",
            "002",
            "RT_ACPI_005",
            T,
            (RUNTIME,),
            "RT_ACPI_005",
            _acpi_failure_deferred,
            "a failing AfterControlPlaneInitialized lets the rest of the topology reconcile go on, failing at its end",
        ),
        Variant(
            "after-upgrade-holds-next",
            "002",
            "RT_ACU_003",
            T,
            (RUNTIME,),
            "RT_ACU_003",
            _attr("controllers.topology.controller:TopologyController._call", _after_upgrade_holds_next),
            "an AfterClusterUpgrade answer asking to retry holds the next upgrade that long",
        ),
        # seed 003: add-on deletion
        Variant(
            "leave-policies-removed",
            "003",
            "LeavePolicies leaves the add-ons in place",
            A,
            (ADDONS,),
            "seed_003",
            _const("LEAVE_POLICIES", "LeavePolicy", "controllers.addons.controller"),
            "clusterDeletionBehavior LeavePolicies removes the add-ons like RemovePolicies",
        ),
        Variant(
            "enforce-not-blocking",
            "003",
            "EnforceRemovePolicies blocks deletion until cleanup",
            A,
            (ADDONS,),
            "seed_003",
            _attr("controllers.addons.controller:AddonController._enforcing", _always(False)),
            "EnforceRemovePolicies does not hold the Cluster's deletion until the add-ons are gone",
        ),
        Variant(
            "enforce-gate-not-registered",
            "003",
            "EnforceRemovePolicies registers BeforeClusterDelete",
            A,
            (ADDONS,),
            "seed_003",
            _attr("controllers.addons.controller:AddonController._ensure_gate", _always(None)),
            "EnforceRemovePolicies never registers its BeforeClusterDelete handler",
        ),
        Variant(
            "summary-waits-for-gone-cluster",
            "003",
            "AD_NOCLASS_003",
            A,
            (ADDONS,),
            "AD_NOCLASS_003",
            _attr("controllers.addons.controller:AddonController._reconcile_summary_delete",
                  _summary_waits_for_gone_cluster),
            "a ClusterSummary whose Cluster is gone keeps its finalizer, waiting to remove add-ons from nowhere",
        ),
        Variant(
            "one-behaviour-per-cluster",
            "003",
            "AD_MIXED_001",
            A,
            (ADDONS,),
            "AD_MIXED_001",
            _one_behaviour_per_cluster,
            "one LeavePolicies profile makes every profile of a deleted Cluster leave its add-ons",
        ),
        Variant(
            "gate-waits-for-every-profile",
            "003",
            "AD_MIXED_002",
            A,
            (ADDONS,),
            "AD_MIXED_002",
            _attr("controllers.addons.controller:AddonController._enforcing", _gate_for_every_profile),
            "the BeforeClusterDelete gate also waits for RemovePolicies profiles' removal",
        ),
        # seed 004: rollout hooks
        Variant(
            "parallel-groups",
            "004",
            "RH_ORDER_001",
            "rollout_deployment",
            (ROLLOUT,),
            "RH_ORDER_001",
            _parallel_groups,
            "hooks of two points resolving to one count run as one group",
        ),
        Variant(
            "no-pause",
            "004",
            "RH_ORDER_002",
            "rollout_deployment",
            (ROLLOUT,),
            "RH_ORDER_002",
            _gate(_no_pause),
            "the rollout keeps scaling while a hook group runs",
        ),
        Variant(
            "no-cap",
            "004",
            "RH_RECREATE_001",
            "rollout_deployment",
            (ROLLOUT,),
            "RH_RECREATE_001 or RH_DS_003",
            _gate(_no_cap),
            "the new revision is not held at the next point",
        ),
        Variant(
            "abort-ignored",
            "004",
            "RH_FAIL_001",
            "rollout_deployment",
            (ROLLOUT,),
            "RH_FAIL_001 or RH_BAD_002 or RH_STS_006",
            _gate(_abort_ignored),
            "a failed Abort hook is ignored",
        ),
        Variant(
            "no-pause-statefulset",
            "004",
            "RH_STS (auto-pause)",
            "rollout_statefulset",
            (ROLLOUT,),
            "seed_004 and rollout_statefulset",
            _gate(_no_pause),
            "a StatefulSet rollout keeps going while hooks run",
        ),
        Variant(
            "no-cap-daemonset",
            "004",
            "RH_DS_003",
            "rollout_daemonset",
            (ROLLOUT,),
            "seed_004 and rollout_daemonset",
            _gate(_no_cap),
            "a DaemonSet rollout is not held at the next point",
        ),
        Variant(
            "abort-ignored-statefulset",
            "004",
            "RH_STS_006",
            "rollout_statefulset",
            (ROLLOUT,),
            "RH_STS_006",
            _gate(_abort_ignored),
            "a failed Abort hook does not stop a StatefulSet rollout",
        ),
        Variant(
            "no-pause-daemonset",
            "004",
            "nothing scales while a hook runs",
            "rollout_daemonset",
            (ROLLOUT,),
            "seed_004 and rollout_daemonset",
            _gate(_no_pause),
            "a DaemonSet rollout keeps going while hooks run",
        ),
        Variant(
            "long-job-names-not-cut",
            "004",
            "RH_JOB_003",
            "rollout_deployment",
            (ROLLOUT,),
            "RH_JOB_001 or RH_JOB_003",
            _attr("controllers.rollout.hooks:job_name", lambda o: _uncut_job_name),
            "a hook Job's name <owner>-<revision>-<hook> is not shortened past 63 characters",
        ),
        Variant(
            "parallel-groups-daemonset",
            "004",
            "RH_DS_007",
            "rollout_daemonset",
            (ROLLOUT,),
            "seed_004 and rollout_daemonset",
            _parallel_groups,
            "a DaemonSet's hooks of two points resolving to one count run as one group",
        ),
        Variant(
            "no-cap-statefulset",
            "004",
            "RH_STS_001",
            "rollout_statefulset",
            (ROLLOUT,),
            "seed_004 and rollout_statefulset",
            _gate(_no_cap),
            "a StatefulSet rollout is not held at the next point",
        ),
        Variant(
            "abort-ignored-daemonset",
            "004",
            "RH_DS_007",
            "rollout_daemonset",
            (ROLLOUT,),
            "seed_004 and rollout_daemonset",
            _gate(_abort_ignored),
            "a failed Abort hook does not stop a DaemonSet rollout",
        ),
        # the fake apiserver
        Variant(
            "finalizers-ignored",
            "-",
            "finalizers hold a deletion",
            APISERVER,
            (API,),
            "API_FIN_001 or API_FIN_002 or API_FIN_003 or API_FIN_004",
            _finalizers_ignored,
            "a deleting object goes away while finalizers remain",
        ),
        Variant(
            "watch-added-as-modified",
            "-",
            "an object starting to match a watch arrives as ADDED",
            APISERVER,
            (API,),
            "API_WATCH_002 or API_WATCH_006 or API_FIN_005",
            _watch_added_as_modified,
            "later ADDED events are sent as MODIFIED",
        ),
        Variant(
            "watch-deleted-as-modified",
            "-",
            "an object leaving a watch's selector arrives as DELETED",
            APISERVER,
            (API,),
            "API_WATCH_002 or API_WATCH_006 or API_FIN_005",
            _watch_deleted_as_modified,
            "an object that stops matching a label-selected watch arrives as MODIFIED",
        ),
        Variant(
            "pdb-round-down",
            "-",
            "PDB percentages round up",
            APISERVER,
            (API,),
            "API_PDB_002 or API_PDB_003",
            _pdb_round_down,
            "PDB percentages are rounded down",
        ),
        Variant(
            "eviction-ignores-pdb",
            "-",
            "eviction honours PDBs",
            APISERVER,
            (API,),
            "API_EVICT_004 or API_EVICT_005 or API_EVICT_006 or API_EVICT_007",
            _eviction_ignores_pdb,
            "an eviction ignores the PodDisruptionBudgets selecting the pod",
        ),
        Variant(
            "grace-period-ignored",
            "-",
            "a Pod in its grace period stays until it is over",
            APISERVER,
            (API,),
            "API_GRACE_001 or API_GRACE_005 or API_GRACE_008 or API_GRACE_009",
            _grace_period_ignored,
            "a terminating Pod goes away at its next update, before its grace period is over",
        ),
        Variant(
            "eviction-all-pods-ready",
            "-",
            "an unready Pod is evicted without spending the budget",
            APISERVER,
            (API,),
            "API_EVICT_009 or API_EVICT_010 or API_EVICT_011",
            _eviction_all_pods_ready,
            "an eviction takes every Pod for Ready",
        ),
        Variant(
            "pdb-counts-every-pod-healthy",
            "-",
            "currentHealthy counts only Ready Pods",
            APISERVER,
            (API,),
            "API_PDB_004 or API_EVICT_011",
            _pdb_counts_every_pod_healthy,
            "the disruption controller counts every running Pod as healthy, Ready or not",
        ),
        Variant(
            "disruptions-off-by-one",
            "-",
            "disruptionsAllowed = healthy - desired",
            APISERVER,
            (API,),
            "API_PDB_002 or API_PDB_003 or API_EVICT_004 or API_EVICT_005",
            _disruptions_off_by_one,
            "disruptionsAllowed is one too many",
        ),
    ]
}


def _ok_delete() -> Any:
    from controllers.machine import drain

    return drain._okay()


def _skip_delete() -> Any:
    from controllers.machine import drain

    return drain._skip()


def _ds_owned(pod: dict[str, Any]) -> bool:
    from harness.kube.ownerrefs import controller_of

    ref = controller_of(pod)
    return ref is not None and ref.get("kind") == "DaemonSet"


def apply(name: str) -> None:
    """Patch the reference (or the fake apiserver) with the variant ``name``; nothing for ``""``."""
    if not name:
        return
    if name not in VARIANTS:
        raise ValueError(f"unknown wrong controller {name!r}; known: {', '.join(VARIANTS)}")
    VARIANTS[name].patch()


def apply_from_env() -> None:
    """:func:`apply` the variant ``LIFECYCLE_TCK_WRONG`` names."""
    apply(os.environ.get(ENV, ""))
