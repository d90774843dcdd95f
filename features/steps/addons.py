"""Sentences about add-ons and cluster deletion (seed 003): Sveltos ClusterProfiles deploying add-ons into
workload clusters, and what happens to those add-ons when a cluster is deleted.

Every ClusterProfile a table names deploys one add-on: a ConfigMap ``<profile>-addon`` (namespace
``default`` of the workload cluster), whose manifest is held by the ConfigMap ``<profile>-manifests`` in
the management cluster. Clusters are in the namespace ``default``. A ClusterClass Cluster has a managed
topology (``quick-start``, as the runtime hooks features); a Cluster without a ClusterClass has a
FakeCluster and a KubeadmControlPlane of one Machine; a SveltosCluster is registered with a copy of
another Cluster's kubeconfig (so "the workload cluster of" that Cluster is the SveltosCluster's too).
"""

from __future__ import annotations

from typing import Any

import yaml
from pytest_bdd import given, then, when

from controllers.addons.api import (
    CLUSTER_PROFILE_KIND,
    CLUSTER_SUMMARY_KIND,
    CONFIG_API_VERSION,
    LIB_API_VERSION,
    SVELTOS_CLUSTER_KIND,
)
from controllers.runtime.api import OK_TO_DELETE_ANNOTATION
from features.steps.context import ScenarioContext, labels_of, sentence
from features.steps.runtime import cluster_object, ensure_cluster_class
from harness.client import MERGE, ApiError, Client, find_in

CAPI = "cluster.x-k8s.io/v1beta1"
INFRA = "infrastructure.cluster.x-k8s.io/v1beta1"
CONTROL_PLANE = "controlplane.cluster.x-k8s.io/v1beta1"
NAMESPACE = "default"
VERSION = "v1.32.0"
SETUP_SECONDS = 600.0
DEPLOY_SECONDS = 120.0
UNREACHABLE_ANNOTATION = "harness.test/workload-unreachable"
KINDS = {"Cluster": CAPI, SVELTOS_CLUSTER_KIND: LIB_API_VERSION, CLUSTER_SUMMARY_KIND: CONFIG_API_VERSION}


def _register(ctx: ScenarioContext) -> None:
    ctx.kinds.update(KINDS)


def _await(ctx: ScenarioContext, what: str, check: Any, seconds: float = SETUP_SECONDS) -> None:
    assert ctx.wait_until(check, seconds), f"{what} did not happen within {seconds} virtual seconds"


def _split(ref: str) -> tuple[str, str]:
    namespace, _, name = ref.rpartition("/")
    return namespace or NAMESPACE, name


def _workload(ctx: ScenarioContext, cluster: str) -> Client:
    namespace, name = _split(cluster)
    return ctx.scene.client(f"{namespace}/{name}")


def _addon_present(ctx: ScenarioContext, cluster: str, profile: str) -> bool:
    try:
        return find_in(_workload(ctx, cluster), "v1", "ConfigMap", f"{profile}-addon", NAMESPACE) is not None
    except (ConnectionError, ApiError):
        return False


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def _initialized(cluster: dict[str, Any] | None) -> bool:
    status = (cluster or {}).get("status") or {}
    conditions = status.get("conditions") or []
    return bool(status.get("controlPlaneReady")) or any(
        c.get("type") == "ControlPlaneInitialized" and c.get("status") == "True" for c in conditions)


def _reachable(ctx: ScenarioContext, cluster: str) -> bool:
    try:
        _workload(ctx, cluster).list("v1", "Namespace")
    except (ConnectionError, ApiError):
        return False
    return True


def _await_cluster(ctx: ScenarioContext, ref: str) -> None:
    namespace, name = _split(ref)
    _await(ctx, f"the control plane of {ref} initialized",
           lambda: _initialized(find_in(ctx.client, CAPI, "Cluster", name, namespace)))
    _await(ctx, f"the workload cluster of {ref}", lambda: _reachable(ctx, ref))


def _summary(ctx: ScenarioContext, ref: str) -> dict[str, Any] | None:
    namespace, name = _split(ref)
    return find_in(ctx.client, CONFIG_API_VERSION, CLUSTER_SUMMARY_KIND, name, namespace)


def _profile(name: str, row: dict[str, str]) -> dict[str, Any]:
    spec: dict[str, Any] = {"policyRefs": [{"kind": "ConfigMap", "namespace": NAMESPACE, "name": f"{name}-manifests"}]}
    clusters = row.get("clusters", "").strip()
    if clusters.startswith(("Cluster ", f"{SVELTOS_CLUSTER_KIND} ")):
        kind, _, ref = clusters.partition(" ")
        namespace, cluster = _split(ref.strip())
        spec["clusterRefs"] = [{"apiVersion": CAPI if kind == "Cluster" else LIB_API_VERSION, "kind": kind,
                                "namespace": namespace, "name": cluster}]
    elif clusters:
        spec["clusterSelector"] = {"matchLabels": labels_of(clusters)}
    for column, field_name in (("deletion", "clusterDeletionBehavior"), ("stop matching", "stopMatchingBehavior")):
        if row.get(column, "").strip():
            spec[field_name] = row[column].strip()
    if row.get("depends on", "").strip():
        spec["dependsOn"] = _names(row["depends on"])
    return {"apiVersion": CONFIG_API_VERSION, "kind": CLUSTER_PROFILE_KIND, "metadata": {"name": name}, "spec": spec}


def _holder(name: str) -> dict[str, Any]:
    manifest = {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": f"{name}-addon", "namespace": NAMESPACE}, "data": {"profile": name}}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-manifests", "namespace": NAMESPACE},
            "data": {"addon.yaml": yaml.safe_dump(manifest)}}


def _table(datatable: list[list[str]]) -> list[dict[str, str]]:
    header = [h.strip() for h in datatable[0]]
    return [dict(zip(header, (c.strip() for c in row))) for row in datatable[1:]]


def _removals(ctx: ScenarioContext, cluster: str) -> list[str]:
    """The profiles whose add-on was deleted from the workload cluster since the action, in order."""
    namespace, name = _split(cluster)
    out = []
    for record in ctx.writes(cluster=f"{namespace}/{name}", verb="delete", resource="configmaps"):
        if str(record.get("name", "")).endswith("-addon") and record.get("code", 200) < 300:
            profile = str(record["name"])[: -len("-addon")]
            if profile not in out:
                out.append(profile)
    return out


# -- Given -------------------------------------------------------------------------------------------


@given(sentence('a ClusterClass Cluster "{ref:Q}" labelled "{labels:Q}"'))
def given_class_cluster(ctx: ScenarioContext, ref: str, labels: str) -> None:
    _register(ctx)
    namespace, name = _split(ref)
    ensure_cluster_class(ctx, namespace)
    cluster = cluster_object(ref, VERSION)
    cluster["metadata"]["labels"] = labels_of(labels)
    ctx.setup(lambda: ctx.client.create(cluster))
    _await_cluster(ctx, ref)


@given(sentence('a Cluster "{ref:Q}" without a ClusterClass labelled "{labels:Q}"'))
def given_plain_cluster(ctx: ScenarioContext, ref: str, labels: str) -> None:
    _register(ctx)
    namespace, name = _split(ref)
    template = f"{name}-control-plane"
    objects = [
        {"apiVersion": INFRA, "kind": "FakeMachineTemplate", "metadata": {"name": template, "namespace": namespace},
         "spec": {"template": {"spec": {}}}},
        {"apiVersion": INFRA, "kind": "FakeCluster", "metadata": {"name": name, "namespace": namespace}, "spec": {}},
        {"apiVersion": CONTROL_PLANE, "kind": "KubeadmControlPlane", "metadata": {"name": name, "namespace": namespace},
         "spec": {"replicas": 1, "version": VERSION, "kubeadmConfigSpec": {},
                  "machineTemplate": {"infrastructureRef": {"apiVersion": INFRA, "kind": "FakeMachineTemplate",
                                                            "name": template, "namespace": namespace}}}},
        {"apiVersion": CAPI, "kind": "Cluster",
         "metadata": {"name": name, "namespace": namespace, "labels": labels_of(labels)},
         "spec": {"infrastructureRef": {"apiVersion": INFRA, "kind": "FakeCluster", "name": name,
                                        "namespace": namespace},
                  "controlPlaneRef": {"apiVersion": CONTROL_PLANE, "kind": "KubeadmControlPlane", "name": name,
                                      "namespace": namespace}}},
    ]
    for obj in objects:
        ctx.setup(lambda obj=obj: ctx.client.create(obj))
    _await_cluster(ctx, ref)


@given(sentence('a SveltosCluster "{ref:Q}" labelled "{labels:Q}" for the workload cluster of "{cluster:Q}"'))
def given_sveltos_cluster(ctx: ScenarioContext, ref: str, labels: str, cluster: str) -> None:
    _register(ctx)
    namespace, name = _split(ref)
    source = ctx.client.get("v1", "Secret", f"{_split(cluster)[1]}-kubeconfig", _split(cluster)[0])
    ctx.setup(lambda: ctx.client.create({"apiVersion": "v1", "kind": "Secret",
                                         "metadata": {"name": f"{name}-sveltos-kubeconfig", "namespace": namespace},
                                         "data": {"kubeconfig": source["data"]["value"]}}))
    created = ctx.setup(lambda: ctx.client.create({
        "apiVersion": LIB_API_VERSION, "kind": SVELTOS_CLUSTER_KIND,
        "metadata": {"name": name, "namespace": namespace, "labels": labels_of(labels)}, "spec": {}}))
    created["status"] = {"ready": True}
    ctx.setup(lambda: ctx.client.update_status(created))


@given(sentence("the ClusterProfiles:"))
def given_profiles(ctx: ScenarioContext, datatable: list[list[str]]) -> None:
    _register(ctx)
    for row in _table(datatable):
        name = row["name"]
        ctx.setup(lambda name=name: ctx.client.create(_holder(name)))
        ctx.setup(lambda name=name, row=row: ctx.client.create(_profile(name, row)))


@given(sentence('the add-ons of "{profiles:Q}" are in the workload cluster of "{cluster:Q}"'))
def given_addons_deployed(ctx: ScenarioContext, profiles: str, cluster: str) -> None:
    for profile in _names(profiles):
        _await(ctx, f"the add-on of {profile} in {cluster}", lambda p=profile: _addon_present(ctx, cluster, p),
               DEPLOY_SECONDS)


@given(sentence('the workload cluster of "{cluster:Q}" has become unreachable'))
def given_unreachable(ctx: ScenarioContext, cluster: str) -> None:
    namespace, name = _split(cluster)
    ctx.setup(lambda: ctx.client.patch(CAPI, "Cluster", name, {"metadata": {"annotations": {
        UNREACHABLE_ANNOTATION: "true"}}}, namespace=namespace, patch_type=MERGE))
    _await(ctx, f"the workload cluster of {cluster} unreachable", lambda: not _reachable(ctx, cluster), 60)


# -- When --------------------------------------------------------------------------------------------


@when(sentence('a ClusterProfile "{name:Q}" with {field_name:Word} "{value:Q}" is created'))
def when_profile_created(ctx: ScenarioContext, name: str, field_name: str, value: str) -> None:
    profile = _profile(name, {"clusters": "env=prod"})
    profile["spec"][field_name] = _names(value) if field_name == "dependsOn" else value
    ctx.act(lambda: ctx.client.create(profile))


@when(sentence('the workload cluster of "{cluster:Q}" becomes reachable again'))
def when_reachable_again(ctx: ScenarioContext, cluster: str) -> None:
    namespace, name = _split(cluster)
    ctx.act(lambda: ctx.client.patch(CAPI, "Cluster", name, {"metadata": {"annotations": {
        UNREACHABLE_ANNOTATION: None}}}, namespace=namespace, patch_type=MERGE))


@when(sentence('the ClusterProfile "{name:Q}" is deleted from the management cluster'))
def when_profile_deleted(ctx: ScenarioContext, name: str) -> None:
    ctx.act(lambda: ctx.client.delete(CONFIG_API_VERSION, CLUSTER_PROFILE_KIND, name))


# -- Then --------------------------------------------------------------------------------------------


@then(sentence('within {seconds:Int} seconds the add-ons of "{profiles:Q}" are gone from the workload cluster of '
               '"{cluster:Q}"'))
def then_addons_gone(ctx: ScenarioContext, seconds: int, profiles: str, cluster: str) -> None:
    names = _names(profiles)
    assert ctx.wait_until(lambda: not any(_addon_present(ctx, cluster, p) for p in names), seconds), \
        f"still there after {seconds} s: {[p for p in names if _addon_present(ctx, cluster, p)]}"
    assert set(names) <= set(_removals(ctx, cluster)), f"not deleted by a write: {names} vs {_removals(ctx, cluster)}"


@then(sentence('the add-ons of "{profiles:Q}" are still in the workload cluster of "{cluster:Q}"'))
def then_addons_stay(ctx: ScenarioContext, profiles: str, cluster: str) -> None:
    missing = [p for p in _names(profiles) if not _addon_present(ctx, cluster, p)]
    assert not missing, f"add-ons gone: {missing}"
    assert not _removals(ctx, cluster), f"add-ons were deleted: {_removals(ctx, cluster)}"


@then(sentence('the add-ons left the workload cluster of "{cluster:Q}" in the order "{order:Q}"'))
def then_removal_order(ctx: ScenarioContext, cluster: str, order: str) -> None:
    assert _removals(ctx, cluster) == _names(order), f"removed in the order {_removals(ctx, cluster)}"


@then(sentence('each add-on left the workload cluster of "{cluster:Q}" only after the add-ons of the ClusterProfiles '
               'depending on it'))
def then_dependents_first(ctx: ScenarioContext, cluster: str) -> None:
    removed = _removals(ctx, cluster)
    profiles = ctx.client.list(CONFIG_API_VERSION, CLUSTER_PROFILE_KIND)["items"]
    assert len(removed) == len(profiles), f"removed {removed} of {len(profiles)} profiles"
    for profile in profiles:
        for dependency in (profile.get("spec") or {}).get("dependsOn") or []:
            name = profile["metadata"]["name"]
            assert removed.index(name) < removed.index(dependency), \
                f"{dependency} left before {name}, which depends on it: {removed}"


@then(sentence('for {seconds:Int} seconds the Cluster "{ref:Q}" stays, not marked ok to delete'))
def then_cluster_held(ctx: ScenarioContext, seconds: int, ref: str) -> None:
    namespace, name = _split(ref)

    def released() -> bool:
        cluster = find_in(ctx.client, CAPI, "Cluster", name, namespace)
        return cluster is None or OK_TO_DELETE_ANNOTATION in (cluster["metadata"].get("annotations") or {})

    assert not ctx.wait_until(released, seconds), f"the Cluster {ref} was released within {seconds} s"


@then(sentence('within {seconds:Int} seconds the ClusterSummary "{ref:Q}" reports the dependencies "{text:Q}"'))
def then_summary_dependencies(ctx: ScenarioContext, seconds: int, ref: str, text: str) -> None:
    def check() -> bool:
        return ((_summary(ctx, ref) or {}).get("status") or {}).get("dependencies") == text

    assert ctx.wait_until(check, seconds), f"status: {(_summary(ctx, ref) or {}).get('status')}"


@then(sentence('within {seconds:Int} seconds the ClusterSummary "{ref:Q}" is deleting with reason "{reason:Q}" and a '
               'message containing "{text:Q}"'))
def then_summary_deleting(ctx: ScenarioContext, seconds: int, ref: str, reason: str, text: str) -> None:
    def check() -> bool:
        summary = _summary(ctx, ref) or {}
        for condition in (summary.get("status") or {}).get("conditions") or []:
            if condition.get("type") == "Deleting":
                return condition.get("reason") == reason and text in str(condition.get("message", ""))
        return False

    assert ctx.wait_until(check, seconds), f"status: {(_summary(ctx, ref) or {}).get('status')}"


@then(sentence('the ClusterSummary "{ref:Q}" has the feature status "{status:Q}" with a failure message containing '
               '"{text:Q}"'))
def then_summary_failed(ctx: ScenarioContext, ref: str, status: str, text: str) -> None:
    summary = _summary(ctx, ref) or {}
    features = (summary.get("status") or {}).get("featureSummaries") or []
    assert features and features[0].get("status") == status, f"status: {summary.get('status')}"
    assert text in str(features[0].get("failureMessage", "")), f"status: {summary.get('status')}"
