"""The reference add-on controller (Sveltos's addon-controller, reference/runtime-hooks-and-addons.md §4,
with seed 003's ``clusterDeletionBehavior``). One controller, two kinds of keys: a key without a
namespace is a ClusterProfile (cluster-scoped), a key with one is a ClusterSummary.

ClusterProfile: matches clusters -- CAPI Clusters and SveltosClusters whose labels match
``spec.clusterSelector`` and that are ready (``ControlPlaneInitialized`` / ``status.controlPlaneReady``;
SveltosCluster ``status.ready``) and not being deleted, plus the ``spec.clusterRefs`` that exist and are
not being deleted -- writes ``status.matchingClusters``, keeps one ClusterSummary per matching cluster
(spec: the cluster and a copy of the profile's spec) and deletes the others (after refreshing their
spec). A deleting profile deletes its ClusterSummaries and keeps its finalizer until they are gone. A
profile with ``EnforceRemovePolicies`` makes sure the cleanup gate is served and registered
(:mod:`controllers.addons.extension`).

ClusterSummary, not being deleted: waits for its dependencies (``status.dependencies`` with upstream's
texts; a cycle is said), then reads the manifests and deploys them into the cluster
(:mod:`controllers.addons.deployer`), reporting ``featureSummaries`` (``Resources``: Provisioned; Failed
with ``failureMessage`` for a manifest that does not parse or an object the cluster refuses;
FailedNonRetriable and a Warning event ``FailedNonRetriable`` for a policyRef to a ConfigMap/Secret that
does not exist, as upstream) and removing what an older version deployed and the new one does not. Bad
input deploys nothing of the profile (what an older version deployed stays, and is what a deletion
removes); the ConfigMap/Secret watch brings the summary back when the reference appears or changes.

ClusterSummary being deleted -- why decides what happens to what it deployed:

- its SveltosCluster is gone or being deleted: Sveltos stops managing the cluster; nothing is removed
  and nothing waits (seed 003);
- its Cluster is gone: nothing can be reached; the summary goes;
- its Cluster is being deleted: ``clusterDeletionBehavior``: ``LeavePolicies`` leaves everything,
  ``RemovePolicies`` and ``EnforceRemovePolicies`` remove what it deployed (best effort: while the
  workload cluster answers; the difference is only the gate: an ``EnforceRemovePolicies`` summary holds a
  Cluster with a managed topology at BeforeClusterDelete until it is gone);
- otherwise (the cluster stopped matching, or the profile is deleted): ``stopMatchingBehavior``:
  ``WithdrawPolicies`` removes, ``LeavePolicies`` keeps the objects and strips Sveltos's marks.

Removal waits while another ClusterSummary of the same cluster depends on this profile (dependents
first, :mod:`controllers.addons.dependencies`), except inside a dependency cycle. ``status.conditions``
``Deleting`` (seed 003) says where a deleting summary is: WaitingForDependents, RemovingPolicies,
RemovalFailed (an unreachable cluster: retried every 10 s), PoliciesRemoved, LeavingPolicies or
ClusterNoLongerManaged. The finalizer goes once every owned object is observed gone.
"""

from __future__ import annotations

import base64
import binascii
import copy
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from controllers.addons import deployer
from controllers.addons.api import (
    ALL_DEPENDENCIES_DEPLOYED,
    CLUSTER_NAME_LABEL,
    CLUSTER_PROFILE_FINALIZER,
    CLUSTER_PROFILE_KIND,
    CLUSTER_PROFILE_NAME_LABEL,
    CLUSTER_SUMMARY_FINALIZER,
    CLUSTER_SUMMARY_KIND,
    CLUSTER_TYPE_CAPI,
    CLUSTER_TYPE_LABEL,
    CLUSTER_TYPE_SVELTOS,
    CLUSTER_UNMANAGED_MESSAGE,
    CLUSTER_UNMANAGED_REASON,
    CLUSTER_UNREACHABLE,
    CONFIG_API_VERSION,
    DELETING_CONDITION,
    DEPENDENCY_CYCLE,
    DEPENDENCY_CYCLE_ON_REMOVAL,
    DEPENDENCY_NOT_DEPLOYED,
    DEPENDENCY_NOT_FOUND,
    DEPENDENCY_REQUEUE_SECONDS,
    DEPENDENT_NOT_REMOVED,
    ENFORCE_REMOVE_POLICIES,
    EVENT_COMPONENT,
    EXTENSION_CONFIG_NAME,
    FAILED,
    FAILED_NON_RETRIABLE,
    FAILED_NON_RETRIABLE_EVENT,
    FAILED_NON_RETRIABLE_MESSAGE,
    FAILED_REQUEUE_SECONDS,
    FEATURE_RESOURCES,
    KUBECONFIG_MISSING,
    LEAVE_POLICIES,
    LEAVING_POLICIES_MESSAGE,
    LEAVING_POLICIES_REASON,
    LIB_API_VERSION,
    NO_DEPENDENCIES,
    POLICIES_REMOVED_REASON,
    POLICY_HASH_ANNOTATION,
    PROVISIONED,
    REMOVAL_FAILED_REASON,
    REMOVE_POLICIES,
    REMOVED,
    REMOVING,
    REMOVING_POLICIES_REASON,
    SUMMARY_NAME,
    SUMMARY_PREFIX,
    SVELTOS_CLUSTER_KIND,
    WAITING_FOR_DEPENDENTS_REASON,
    WITHDRAW_POLICIES,
)
from controllers.addons.dependencies import blocking_dependents, cycles
from controllers.addons.extension import CleanupGate, serve
from controllers.machine import conditions as cond
from controllers.runtime.api import API_VERSION as RUNTIME_API_VERSION
from controllers.runtime.api import EXTENSION_CONFIG_KIND
from harness.client import MERGE, WARNING, ApiError, Client, Controller, EventRecorder, Request, Result, find_in
from harness.kube.names.capi import CLUSTER_API_VERSION as CAPI_API_VERSION
from harness.kube.names.capi import CLUSTER_KIND, CONTROL_PLANE_INITIALIZED, KUBECONFIG_DATA_KEY
from harness.kube.names.core import CONDITION_TRUE
from harness.kube.selectors import label_selector_from_dict

KUBECONFIG_SECRET = "{name}-kubeconfig"
SVELTOS_KUBECONFIG_SECRET = "{name}-sveltos-kubeconfig"
SVELTOS_KUBECONFIG_KEYS = ("value", "kubeconfig")
# Objects being deleted in the workload cluster (finalizers) are looked at again this often.
REMOVAL_POLL_SECONDS = 5.0


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.setdefault("metadata", {})


def _rfc3339(now: float) -> str:
    return cond.rfc3339(now)


@dataclass
class _SummaryInfo:
    """What the watch mappers remember of a ClusterSummary (no API call in a mapper)."""

    cluster: str  # "<type>:<namespace>/<name>"
    profile: str
    depends_on: tuple[str, ...]
    refs: tuple[str, ...]


@dataclass
class _ClusterState:
    labels: dict[str, str] = field(default_factory=dict)
    deleting: bool = False
    ready: bool = False


def cluster_key(cluster_type: str, namespace: str, name: str) -> str:
    return f"{cluster_type}:{namespace}/{name}"


def summary_name(profile: str, cluster_type: str, cluster: str) -> str:
    """Upstream's ClusterSummary name: ``<profile>-capi-<cluster>`` / ``<profile>-sveltos-<cluster>``."""
    return SUMMARY_NAME.format(profile=profile, prefix=SUMMARY_PREFIX[cluster_type], cluster=cluster)


def is_ready(cluster_type: str, cluster: dict[str, Any]) -> bool:
    """Whether a cluster can match: a CAPI Cluster whose control plane is initialized, a ready SveltosCluster."""
    status = cluster.get("status") or {}
    if cluster_type == CLUSTER_TYPE_SVELTOS:
        return bool(status.get("ready"))
    return bool(status.get("controlPlaneReady")) or cond.is_true(cluster, CONTROL_PLANE_INITIALIZED)


def _deleting(obj: dict[str, Any] | None) -> bool:
    return bool(obj is not None and (obj.get("metadata") or {}).get("deletionTimestamp"))


class AddonController(Controller):
    """ClusterProfiles and ClusterSummaries (see the module docstring)."""

    name = "addons"

    def __init__(self, client: Client) -> None:
        super().__init__()
        self.client = client
        self.gate = CleanupGate()
        self.recorder = EventRecorder(client, EVENT_COMPONENT)
        self._gate_endpoint: tuple[str, str] | None = None
        self._profiles: set[str] = set()
        self._deleting_profiles: set[str] = set()
        self._summaries: dict[Request, _SummaryInfo] = {}
        # Insertion-ordered (dicts, not sets) so that the keys they wake are queued in the same order in every
        # process whatever its hash seed.
        self._by_cluster: dict[str, dict[Request, None]] = {}
        self._by_ref: dict[str, dict[Request, None]] = {}
        self._clusters: dict[str, _ClusterState] = {}
        self._workloads: dict[str, Client] = {}

    # -- watches -----------------------------------------------------------------------------------

    def setup(self) -> None:
        self.watch(self.client, CONFIG_API_VERSION, CLUSTER_PROFILE_KIND, self._profile_event)
        self.watch(self.client, CONFIG_API_VERSION, CLUSTER_SUMMARY_KIND, self._summary_event)
        self.watch(self.client, CAPI_API_VERSION, CLUSTER_KIND, self._cluster_event)
        self.watch(self.client, LIB_API_VERSION, SVELTOS_CLUSTER_KIND, self._cluster_event)
        self.watch(self.client, "v1", "ConfigMap", self._reference_event)
        self.watch(self.client, "v1", "Secret", self._reference_event)

    def _profile_event(self, event: str, obj: dict[str, Any]) -> Iterable[Request]:
        name = str((obj.get("metadata") or {}).get("name", ""))
        if event == "DELETED":
            self._profiles.discard(name)
            self._deleting_profiles.discard(name)
        else:
            self._profiles.add(name)
            if _deleting(obj):
                self._deleting_profiles.add(name)
        return (Request("", name),)

    def _summary_event(self, event: str, obj: dict[str, Any]) -> Iterable[Request]:
        request = Request.of(obj)
        meta = obj.get("metadata") or {}
        labels = meta.get("labels") or {}
        spec = obj.get("spec") or {}
        profile_spec = spec.get("clusterProfileSpec") or {}
        namespace = str(meta.get("namespace", ""))
        info = _SummaryInfo(
            cluster=cluster_key(str(spec.get("clusterType", "")), str(spec.get("clusterNamespace", namespace)),
                                str(spec.get("clusterName", ""))),
            profile=str(labels.get(CLUSTER_PROFILE_NAME_LABEL, "")),
            depends_on=tuple(profile_spec.get("dependsOn") or ()),
            refs=tuple(_ref_key(r, namespace) for r in profile_spec.get("policyRefs") or ()))
        self._forget(request)
        if event != "DELETED":
            self._summaries[request] = info
            self._by_cluster.setdefault(info.cluster, {})[request] = None
            for ref in info.refs:
                self._by_ref.setdefault(ref, {})[request] = None
        out = [request]
        if info.profile in self._deleting_profiles:
            out.append(Request("", info.profile))  # it waits for its ClusterSummaries to be gone
        for sibling in self._by_cluster.get(info.cluster, ()):
            other = self._summaries.get(sibling)
            if other is not None and (other.profile in info.depends_on or info.profile in other.depends_on):
                out.append(sibling)
        return out

    def _forget(self, request: Request) -> None:
        old = self._summaries.pop(request, None)
        if old is None:
            return
        self._by_cluster.get(old.cluster, {}).pop(request, None)
        for ref in old.refs:
            self._by_ref.get(ref, {}).pop(request, None)

    def _cluster_event(self, event: str, obj: dict[str, Any]) -> Iterable[Request]:
        meta = obj.get("metadata") or {}
        cluster_type = CLUSTER_TYPE_SVELTOS if obj.get("kind") == SVELTOS_CLUSTER_KIND else CLUSTER_TYPE_CAPI
        key = cluster_key(cluster_type, str(meta.get("namespace", "")), str(meta.get("name", "")))
        state = None if event == "DELETED" else _ClusterState(dict(meta.get("labels") or {}), _deleting(obj),
                                                             is_ready(cluster_type, obj))
        if self._clusters.get(key) == state and state is not None:
            return ()  # nothing matching depends on changed
        if state is None:
            self._clusters.pop(key, None)
        else:
            self._clusters[key] = state
        return [*(Request("", p) for p in sorted(self._profiles)), *self._by_cluster.get(key, ())]

    def _reference_event(self, _event: str, obj: dict[str, Any]) -> Iterable[Request]:
        meta = obj.get("metadata") or {}
        return list(self._by_ref.get(f"{obj.get('kind')}/{meta.get('namespace', '')}/{meta.get('name', '')}", ()))

    # -- reconcile ---------------------------------------------------------------------------------

    def reconcile(self, request: Request) -> Result | None:
        if not request.namespace:
            return self._reconcile_profile(request.name)
        return self._reconcile_summary(request)

    # -- ClusterProfile ----------------------------------------------------------------------------

    def _reconcile_profile(self, name: str) -> Result | None:
        profile = find_in(self.client, CONFIG_API_VERSION, CLUSTER_PROFILE_KIND, name)
        if profile is None:
            return None
        summaries = self.client.list(CONFIG_API_VERSION, CLUSTER_SUMMARY_KIND,
                                     label_selector=f"{CLUSTER_PROFILE_NAME_LABEL}={name}")["items"]
        if _deleting(profile):
            for summary in summaries:
                if not _deleting(summary):
                    self._delete_summary(summary)
            if not summaries and CLUSTER_PROFILE_FINALIZER in (_meta(profile).get("finalizers") or []):
                _meta(profile)["finalizers"] = [f for f in _meta(profile)["finalizers"]
                                                if f != CLUSTER_PROFILE_FINALIZER]
                self.client.update(profile)
            return None
        if CLUSTER_PROFILE_FINALIZER not in (_meta(profile).get("finalizers") or []):
            _meta(profile).setdefault("finalizers", []).append(CLUSTER_PROFILE_FINALIZER)
            profile = self.client.update(profile)
        spec = profile.get("spec") or {}
        if spec.get("clusterDeletionBehavior") == ENFORCE_REMOVE_POLICIES:
            self._ensure_gate()
        matching = self._matching(spec)
        refs = [{"apiVersion": CAPI_API_VERSION if t == CLUSTER_TYPE_CAPI else LIB_API_VERSION,
                 "kind": CLUSTER_KIND if t == CLUSTER_TYPE_CAPI else SVELTOS_CLUSTER_KIND,
                 "namespace": ns, "name": n} for t, ns, n in matching]
        if (profile.get("status") or {}).get("matchingClusters") != refs:
            profile.setdefault("status", {})["matchingClusters"] = refs
            self.client.update_status(profile)
        existing = {(_meta(s)["namespace"], _meta(s)["name"]): s for s in summaries}
        wanted = set()
        for cluster_type, namespace, cluster in matching:
            key = (namespace, summary_name(name, cluster_type, cluster))
            wanted.add(key)
            self._ensure_summary(profile, cluster_type, namespace, cluster, existing.get(key))
        for key, summary in existing.items():
            if key not in wanted and not _deleting(summary):
                self._refresh_summary(profile, summary)
                self._delete_summary(summary)
        return None

    def _matching(self, spec: dict[str, Any]) -> list[tuple[str, str, str]]:
        out: list[tuple[str, str, str]] = []
        selector = label_selector_from_dict(spec.get("clusterSelector") or None)
        for cluster_type, api_version, kind in ((CLUSTER_TYPE_CAPI, CAPI_API_VERSION, CLUSTER_KIND),
                                                (CLUSTER_TYPE_SVELTOS, LIB_API_VERSION, SVELTOS_CLUSTER_KIND)):
            if selector is None or selector.empty:
                break
            for cluster in self.client.list(api_version, kind)["items"]:
                meta = cluster.get("metadata") or {}
                if not _deleting(cluster) and is_ready(cluster_type, cluster) \
                        and selector.matches(meta.get("labels") or {}):
                    out.append((cluster_type, str(meta["namespace"]), str(meta["name"])))
        for ref in spec.get("clusterRefs") or []:
            cluster_type = CLUSTER_TYPE_SVELTOS if ref.get("kind") == SVELTOS_CLUSTER_KIND else CLUSTER_TYPE_CAPI
            api_version = LIB_API_VERSION if cluster_type == CLUSTER_TYPE_SVELTOS else CAPI_API_VERSION
            namespace, cluster_name = str(ref.get("namespace") or "default"), str(ref.get("name", ""))
            found = find_in(self.client, api_version, str(ref.get("kind", CLUSTER_KIND)), cluster_name, namespace)
            entry = (cluster_type, namespace, cluster_name)
            if found is not None and not _deleting(found) and entry not in out:
                out.append(entry)
        return sorted(out)

    def _summary_spec(self, profile: dict[str, Any], cluster_type: str, namespace: str,
                      cluster: str) -> dict[str, Any]:
        return {"clusterNamespace": namespace, "clusterName": cluster, "clusterType": cluster_type,
                "clusterProfileSpec": copy.deepcopy(profile.get("spec") or {})}

    def _ensure_summary(self, profile: dict[str, Any], cluster_type: str, namespace: str, cluster: str,
                        current: dict[str, Any] | None) -> None:
        spec = self._summary_spec(profile, cluster_type, namespace, cluster)
        if current is not None:
            if current.get("spec") != spec and not _deleting(current):
                current["spec"] = spec
                self.client.update(current)
            return
        profile_meta = _meta(profile)
        self.client.create({
            "apiVersion": CONFIG_API_VERSION, "kind": CLUSTER_SUMMARY_KIND,
            "metadata": {
                "name": summary_name(profile_meta["name"], cluster_type, cluster), "namespace": namespace,
                "labels": {CLUSTER_PROFILE_NAME_LABEL: profile_meta["name"], CLUSTER_NAME_LABEL: cluster,
                           CLUSTER_TYPE_LABEL: cluster_type},
                "ownerReferences": [{"apiVersion": CONFIG_API_VERSION, "kind": CLUSTER_PROFILE_KIND,
                                     "name": profile_meta["name"], "uid": profile_meta["uid"], "controller": True}],
                "finalizers": [CLUSTER_SUMMARY_FINALIZER],
            },
            "spec": spec,
        })

    def _refresh_summary(self, profile: dict[str, Any], summary: dict[str, Any]) -> None:
        spec = summary.get("spec") or {}
        fresh = self._summary_spec(profile, str(spec.get("clusterType", "")), str(spec.get("clusterNamespace", "")),
                                   str(spec.get("clusterName", "")))
        if fresh != spec:
            summary["spec"] = fresh
            summary.update(self.client.update(summary))

    def _delete_summary(self, summary: dict[str, Any]) -> None:
        try:
            self.client.delete(CONFIG_API_VERSION, CLUSTER_SUMMARY_KIND, _meta(summary)["name"],
                               _meta(summary)["namespace"])
        except ApiError as err:
            if err.code != 404:
                raise

    def _ensure_gate(self) -> None:
        """Serve the cleanup gate and register it with an ExtensionConfig naming its URL and CA."""
        if self._gate_endpoint is None:
            self._gate_endpoint = serve(self.gate)
        url, ca_bundle = self._gate_endpoint
        client_config = {"url": url, "caBundle": ca_bundle}
        current = find_in(self.client, RUNTIME_API_VERSION, EXTENSION_CONFIG_KIND, EXTENSION_CONFIG_NAME)
        if current is None:
            self.client.create({"apiVersion": RUNTIME_API_VERSION, "kind": EXTENSION_CONFIG_KIND,
                                "metadata": {"name": EXTENSION_CONFIG_NAME},
                                "spec": {"clientConfig": client_config, "namespaceSelector": {}}})
        elif (current.get("spec") or {}).get("clientConfig") != client_config:
            self.client.patch(RUNTIME_API_VERSION, EXTENSION_CONFIG_KIND, EXTENSION_CONFIG_NAME,
                              {"spec": {"clientConfig": {"url": url, "caBundle": ca_bundle, "service": None}}},
                              patch_type=MERGE)

    # -- ClusterSummary ----------------------------------------------------------------------------

    def _reconcile_summary(self, request: Request) -> Result | None:
        summary = find_in(self.client, CONFIG_API_VERSION, CLUSTER_SUMMARY_KIND, request.name, request.namespace)
        if summary is None:
            return None
        spec = summary.get("spec") or {}
        cluster_type = str(spec.get("clusterType", CLUSTER_TYPE_CAPI))
        namespace, cluster_name = str(spec.get("clusterNamespace", "")), str(spec.get("clusterName", ""))
        api_version, kind = ((LIB_API_VERSION, SVELTOS_CLUSTER_KIND) if cluster_type == CLUSTER_TYPE_SVELTOS
                             else (CAPI_API_VERSION, CLUSTER_KIND))
        cluster = find_in(self.client, api_version, kind, cluster_name, namespace)
        scope = _Scope(summary, cluster_type, namespace, cluster_name, cluster, copy.deepcopy(summary.get("status")))
        if _deleting(summary):
            result = self._reconcile_summary_delete(scope)
        else:
            result = self._reconcile_summary_deploy(scope)
        return result

    def _gate_key(self, scope: _Scope) -> str:
        return f"{scope.namespace}/{scope.cluster_name}"

    def _enforcing(self, scope: _Scope) -> bool:
        return scope.cluster_type == CLUSTER_TYPE_CAPI and scope.profile_spec.get(
            "clusterDeletionBehavior") == ENFORCE_REMOVE_POLICIES

    def _write_status(self, scope: _Scope) -> None:
        if (scope.summary.get("status") or None) != (scope.original_status or None):
            scope.summary.update(self.client.update_status(scope.summary))
            scope.original_status = copy.deepcopy(scope.summary.get("status"))
        if self._enforcing(scope):
            feature = scope.feature()
            condition = cond.get(scope.summary, DELETING_CONDITION)
            reason = (condition or {}).get("message") or feature.get("failureMessage") or feature.get("status") \
                or "not deployed yet"
            self.gate.set_waiting(self._gate_key(scope), _meta(scope.summary)["name"], str(reason))

    def _sibling_graph(self, scope: _Scope) -> tuple[dict[str, list[str]], dict[str, Request]]:
        """The ClusterSummaries of the same cluster (from the watch index, which is current when a
        reconcile runs: events are mapped before the keys they wake are processed): profile -> its
        dependsOn, and profile -> the summary's key."""
        key = cluster_key(scope.cluster_type, scope.namespace, scope.cluster_name)
        graph: dict[str, list[str]] = {}
        keys: dict[str, Request] = {}
        for request in self._by_cluster.get(key, ()):
            info = self._summaries.get(request)
            if info is not None:
                graph[info.profile] = list(info.depends_on)
                keys[info.profile] = request
        graph[scope.profile] = list(scope.profile_spec.get("dependsOn") or [])
        keys[scope.profile] = Request.of(scope.summary)
        return graph, keys

    def _reconcile_summary_deploy(self, scope: _Scope) -> Result | None:
        summary = scope.summary
        if CLUSTER_SUMMARY_FINALIZER not in (_meta(summary).get("finalizers") or []):
            _meta(summary).setdefault("finalizers", []).append(CLUSTER_SUMMARY_FINALIZER)
            summary.update(self.client.update(summary))
        if scope.cluster is None or _deleting(scope.cluster):
            return None  # the profile deletes this summary
        depends_on = list(scope.profile_spec.get("dependsOn") or [])
        status = summary.setdefault("status", {})
        if depends_on:
            graph, keys = self._sibling_graph(scope)
            cycle = cycles(graph).get(scope.profile)
            message = None
            missing = False
            if cycle:
                message = DEPENDENCY_CYCLE.format(names=", ".join(cycle))
            else:
                for dependency in depends_on:
                    other = find_in(self.client, CONFIG_API_VERSION, CLUSTER_SUMMARY_KIND,
                                    keys[dependency].name, keys[dependency].namespace) \
                        if dependency in keys else None
                    if other is None:
                        message = DEPENDENCY_NOT_FOUND.format(name=dependency)
                        missing = True
                        break
                    if not _provisioned(other):
                        message = DEPENDENCY_NOT_DEPLOYED.format(name=dependency)
                        break
            if message is not None:
                status["dependencies"] = message
                self._write_status(scope)
                # A missing ClusterSummary may come with a profile created later: look again (as upstream).
                return Result(requeue_after=DEPENDENCY_REQUEUE_SECONDS) if missing else None
            status["dependencies"] = ALL_DEPENDENCIES_DEPLOYED
        else:
            status["dependencies"] = NO_DEPENDENCIES
        try:
            manifests = deployer.read_manifests(self.client, list(scope.profile_spec.get("policyRefs") or []),
                                                scope.namespace)
        except deployer.DeployError as err:
            # Nothing is deployed; what was deployed before stays. No retry: the ConfigMap/Secret watch
            # wakes this summary when the reference appears or changes.
            non_retriable = isinstance(err, deployer.ReferenceNotFound)
            scope.set_feature(FAILED_NON_RETRIABLE if non_retriable else FAILED, failure=str(err))
            status["failureMessage"] = str(err)
            self._write_status(scope)
            if non_retriable:
                self.recorder.event(summary, WARNING, FAILED_NON_RETRIABLE_EVENT, FAILED_NON_RETRIABLE_MESSAGE.format(
                    feature=FEATURE_RESOURCES, cluster_type=scope.cluster_type, namespace=scope.namespace,
                    name=scope.cluster_name, error=err))
            return None
        digest = deployer.content_hash(manifests)
        feature = scope.feature()
        if feature.get("status") == PROVISIONED and feature.get("hash") == digest:
            status.pop("failureMessage", None)
            self._write_status(scope)
            return None
        try:
            workload = self._workload(scope)
            deployer.deploy(workload, manifests, scope.profile, digest)
            gvks = sorted({deployer.gvk_string(m.obj) for m in manifests})
            stale = [o for o in deployer.owned_objects(workload, sorted(set(feature.get("deployedGroupVersionKind")
                                                                             or []) | set(gvks)), scope.profile)
                     if (o.get("metadata") or {}).get("annotations", {}).get(
                         POLICY_HASH_ANNOTATION) != digest]
            for obj in stale:
                deployer.remove(workload, obj)
        except (deployer.ClusterUnreachable, deployer.DeployError) as err:
            text = str(err)
            if isinstance(err, deployer.ClusterUnreachable):
                text = CLUSTER_UNREACHABLE.format(cluster=self._gate_key(scope), error=err)
            scope.set_feature(FAILED, failure=text)
            status["failureMessage"] = text
            self._write_status(scope)
            return Result(requeue_after=FAILED_REQUEUE_SECONDS)
        scope.set_feature(PROVISIONED, digest=digest, gvks=gvks, now=self.now())
        status.pop("failureMessage", None)
        self._write_status(scope)
        return None

    def _reconcile_summary_delete(self, scope: _Scope) -> Result | None:
        cluster = scope.cluster
        if scope.cluster_type == CLUSTER_TYPE_SVELTOS and (cluster is None or _deleting(cluster)):
            scope.set_deleting(CLUSTER_UNMANAGED_REASON, CLUSTER_UNMANAGED_MESSAGE, self.now())
            return self._finish(scope)
        if cluster is None:
            return self._finish(scope)
        if _deleting(cluster):
            behavior = scope.profile_spec.get("clusterDeletionBehavior") or REMOVE_POLICIES
            if behavior == LEAVE_POLICIES:
                scope.set_deleting(LEAVING_POLICIES_REASON, LEAVING_POLICIES_MESSAGE.format(
                    behavior=f"clusterDeletionBehavior {LEAVE_POLICIES}"), self.now())
                return self._finish(scope)
            leave = False
        else:
            leave = (scope.profile_spec.get("stopMatchingBehavior") or WITHDRAW_POLICIES) == LEAVE_POLICIES
        status = scope.summary.setdefault("status", {})
        graph, keys = self._sibling_graph(scope)
        found = cycles(graph)
        waiting_for = blocking_dependents(scope.profile, graph, found)
        cycle = found.get(scope.profile)
        if waiting_for:
            message = DEPENDENT_NOT_REMOVED.format(summary=keys[waiting_for[0]].name)
            status["dependencies"] = message
            scope.set_deleting(WAITING_FOR_DEPENDENTS_REASON, message, self.now())
            self._write_status(scope)
            return None
        if cycle:
            status["dependencies"] = DEPENDENCY_CYCLE_ON_REMOVAL.format(names=", ".join(cycle))
        gvks = list(scope.feature().get("deployedGroupVersionKind") or [])
        try:
            workload = self._workload(scope) if gvks else None
            if workload is not None:
                deployer.probe(workload, self._gate_key(scope))
                for obj in deployer.owned_objects(workload, gvks, scope.profile):
                    if leave:
                        deployer.leave(workload, obj)
                    elif not (obj.get("metadata") or {}).get("deletionTimestamp"):
                        deployer.remove(workload, obj)
                left = [] if leave else deployer.owned_objects(workload, gvks, scope.profile)
            else:
                left = []
        except (deployer.ClusterUnreachable, deployer.DeployError) as err:
            text = str(err)
            if isinstance(err, deployer.ClusterUnreachable):
                text = CLUSTER_UNREACHABLE.format(cluster=self._gate_key(scope), error=err)
            scope.set_feature(REMOVING, failure=text)
            status["failureMessage"] = text
            scope.set_deleting(REMOVAL_FAILED_REASON, text, self.now())
            self._write_status(scope)
            return Result(requeue_after=FAILED_REQUEUE_SECONDS)
        if left:
            scope.set_feature(REMOVING)
            scope.set_deleting(REMOVING_POLICIES_REASON, f"{len(left)} object(s) still being removed", self.now())
            self._write_status(scope)
            return Result(requeue_after=REMOVAL_POLL_SECONDS)
        status.pop("failureMessage", None)
        if leave:
            scope.set_deleting(LEAVING_POLICIES_REASON, LEAVING_POLICIES_MESSAGE.format(
                behavior=f"stopMatchingBehavior {LEAVE_POLICIES}"), self.now())
        else:
            scope.set_feature(REMOVED)
            scope.set_deleting(POLICIES_REMOVED_REASON, "", self.now())
        return self._finish(scope)

    def _finish(self, scope: _Scope) -> Result | None:
        """Write the final status, let the summary go, and stop holding its cluster at the gate."""
        self._write_status(scope)
        meta = _meta(scope.summary)
        if CLUSTER_SUMMARY_FINALIZER in (meta.get("finalizers") or []):
            meta["finalizers"] = [f for f in meta["finalizers"] if f != CLUSTER_SUMMARY_FINALIZER]
            try:
                self.client.update(scope.summary)
            except ApiError as err:
                if err.code != 404:
                    raise
        self.gate.set_waiting(self._gate_key(scope), meta["name"], None)
        return None

    def _workload(self, scope: _Scope) -> Client:
        """A client of the summary's cluster, from its kubeconfig Secret; ClusterUnreachable without one."""
        cluster = scope.cluster or {}
        if scope.cluster_type == CLUSTER_TYPE_SVELTOS:
            spec = cluster.get("spec") or {}
            secret_name = str(spec.get("kubeconfigName") or SVELTOS_KUBECONFIG_SECRET.format(name=scope.cluster_name))
            keys: tuple[str, ...] = (str(spec["kubeconfigKeyName"]),) if spec.get("kubeconfigKeyName") \
                else SVELTOS_KUBECONFIG_KEYS
        else:
            secret_name, keys = KUBECONFIG_SECRET.format(name=scope.cluster_name), (KUBECONFIG_DATA_KEY,)
        where = self._gate_key(scope)
        try:
            secret = self.client.get("v1", "Secret", secret_name, scope.namespace)
        except ApiError as err:
            raise deployer.ClusterUnreachable(KUBECONFIG_MISSING.format(cluster=where, error=err)) from None
        data = secret.get("data") or {}
        raw = next((data[k] for k in keys if k in data), None)
        if raw is None and len(data) == 1:
            raw = next(iter(data.values()))
        try:
            text = base64.b64decode(raw or "", validate=True).decode()
        except (binascii.Error, UnicodeDecodeError, ValueError) as err:
            raise deployer.ClusterUnreachable(KUBECONFIG_MISSING.format(cluster=where, error=err)) from None
        if not text:
            raise deployer.ClusterUnreachable(KUBECONFIG_MISSING.format(cluster=where, error="no kubeconfig"))
        client = self._workloads.get(text)
        if client is None:
            try:
                client = self.client.for_kubeconfig(text)
            except (ValueError, KeyError, TypeError) as err:
                raise deployer.ClusterUnreachable(KUBECONFIG_MISSING.format(cluster=where, error=err)) from None
            self._workloads[text] = client
        return client


@dataclass
class _Scope:
    """One ClusterSummary reconcile."""

    summary: dict[str, Any]
    cluster_type: str
    namespace: str
    cluster_name: str
    cluster: dict[str, Any] | None
    original_status: dict[str, Any] | None

    @property
    def profile(self) -> str:
        return str((_meta(self.summary).get("labels") or {}).get(CLUSTER_PROFILE_NAME_LABEL, ""))

    @property
    def profile_spec(self) -> dict[str, Any]:
        return ((self.summary.get("spec") or {}).get("clusterProfileSpec")) or {}

    def feature(self) -> dict[str, Any]:
        for item in (self.summary.get("status") or {}).get("featureSummaries") or []:
            if item.get("featureID") == FEATURE_RESOURCES:
                return dict(item)
        return {}

    def set_feature(self, status: str, *, failure: str | None = None, digest: str | None = None,
                    gvks: list[str] | None = None, now: float | None = None) -> None:
        feature = self.feature() or {"featureID": FEATURE_RESOURCES}
        feature["status"] = status
        if failure is None:
            feature.pop("failureMessage", None)
        else:
            feature["failureMessage"] = failure
        if digest is not None:
            feature["hash"] = digest
        if gvks is not None:
            feature["deployedGroupVersionKind"] = gvks
        if now is not None:
            feature["lastAppliedTime"] = _rfc3339(now)
        self.summary.setdefault("status", {})["featureSummaries"] = [feature]

    def set_deleting(self, reason: str, message: str, now: float) -> None:
        cond.set_v1beta1(self.summary, DELETING_CONDITION, CONDITION_TRUE, now, reason=reason, message=message)


def _provisioned(summary: dict[str, Any]) -> bool:
    """``isCluterSummaryProvisioned``: every feature Provisioned, and the Resources feature present."""
    features = (summary.get("status") or {}).get("featureSummaries") or []
    return bool(features) and all(f.get("status") == PROVISIONED for f in features)


def _ref_key(ref: dict[str, Any], namespace: str) -> str:
    return f"{ref.get('kind', '')}/{ref.get('namespace') or namespace}/{ref.get('name', '')}"
