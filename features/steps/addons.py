"""Sentences about add-ons and cluster deletion (seed 003): Sveltos ClusterProfiles deploying add-ons into
workload clusters, and what happens to those add-ons when a cluster is deleted.

Every ClusterProfile a table names deploys one add-on: a ConfigMap ``<profile>-addon`` (namespace
``default`` of the workload cluster), whose manifest is held by the ConfigMap ``<profile>-manifests`` in
the management cluster. Clusters are in the namespace ``default``. A ClusterClass Cluster has a managed
topology (``quick-start``, as the runtime hooks features); a Cluster without a ClusterClass has a
FakeCluster and a KubeadmControlPlane of one Machine; a SveltosCluster is registered with a copy of
another Cluster's kubeconfig (so "the workload cluster of" that Cluster is the SveltosCluster's too).

The ``manifests`` column of a profile table says what ``<profile>-manifests`` holds: ``valid`` (the
default: the key ``addon.yaml``, the add-on), ``missing`` (the ConfigMap does not exist), ``unparsable``
(``addon.yaml`` does not parse) or ``one of two unparsable`` (``addon.yaml`` valid, ``extra.yaml`` not).
"Fixed" manifests are valid ones: ``addon.yaml``, plus ``extra.yaml`` (the ConfigMap ``<profile>-addon-2``)
where the broken key was ``extra.yaml``.
"""

from __future__ import annotations

import base64
import ssl
from typing import Any

import httpx
import yaml
from pytest_bdd import given, then, when

from features.steps.context import ScenarioContext, labels_of, sentence
from features.steps.runtime import cluster_object, ensure_cluster_class
from harness.kube.client import MERGE, ApiError, Client, find_in
from harness.kube.names.capi import CLUSTER_API_VERSION, CONTROL_PLANE_API_VERSION, INFRASTRUCTURE_API_VERSION
from harness.kube.names.core import DEFAULT_NAMESPACE, KUBERNETES_VERSION
from harness.kube.names.knobs import WORKLOAD_UNREACHABLE_ANNOTATION
from harness.kube.names.runtime_sdk import (
    BEFORE_CLUSTER_DELETE,
    CATALOG,
    EXTENSION_CONFIG_KIND,
    HOOKS_API_VERSION,
    OK_TO_DELETE_ANNOTATION,
    RUNTIME_API_VERSION,
    hook_path,
)
from harness.kube.names.sveltos import (
    CLUSTER_PROFILE_KIND,
    CLUSTER_PROFILE_NAME_LABEL,
    CLUSTER_SUMMARY_KIND,
    CONFIG_API_VERSION,
    EXTENSION_CONFIG_NAME,
    HANDLER_NAME,
    LIB_API_VERSION,
    OWNER_NAME_ANNOTATION,
    SVELTOS_CLUSTER_KIND,
)

SETUP_SECONDS = 600.0
DEPLOY_SECONDS = 120.0
KINDS = {
    "Cluster": CLUSTER_API_VERSION,
    SVELTOS_CLUSTER_KIND: LIB_API_VERSION,
    CLUSTER_SUMMARY_KIND: CONFIG_API_VERSION,
}
# The manifests column (see the module docstring).
VALID = "valid"
MISSING = "missing"
UNPARSABLE = "unparsable"
ONE_OF_TWO_UNPARSABLE = "one of two unparsable"
MANIFESTS = (VALID, MISSING, UNPARSABLE, ONE_OF_TWO_UNPARSABLE)
# An unclosed flow mapping: YAML that does not parse.
BROKEN_MANIFEST = "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: default\n"
# Seed 003's two example ClusterProfiles, as written there.
SEED_EXAMPLES = {"cleanup-on-delete": "RemovePolicies", "strict-cleanup": "EnforceRemovePolicies"}


def _register(ctx: ScenarioContext) -> None:
    ctx.kinds.update(KINDS)


def _await(ctx: ScenarioContext, what: str, check: Any, seconds: float = SETUP_SECONDS) -> None:
    assert ctx.wait_until(check, seconds), f"{what} did not happen within {seconds} virtual seconds"


def _split(ref: str) -> tuple[str, str]:
    namespace, _, name = ref.rpartition("/")
    return namespace or DEFAULT_NAMESPACE, name


def _workload(ctx: ScenarioContext, cluster: str) -> Client:
    namespace, name = _split(cluster)
    return ctx.scene.client(f"{namespace}/{name}")


def _addon_present(ctx: ScenarioContext, cluster: str, profile: str) -> bool:
    try:
        return find_in(_workload(ctx, cluster), "v1", "ConfigMap", f"{profile}-addon", DEFAULT_NAMESPACE) is not None
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
           lambda: _initialized(find_in(ctx.client, CLUSTER_API_VERSION, "Cluster", name, namespace)))
    _await(ctx, f"the workload cluster of {ref}", lambda: _reachable(ctx, ref))


def _summary(ctx: ScenarioContext, ref: str) -> dict[str, Any] | None:
    namespace, name = _split(ref)
    return find_in(ctx.client, CONFIG_API_VERSION, CLUSTER_SUMMARY_KIND, name, namespace)


def _profile(name: str, row: dict[str, str]) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "policyRefs": [{"kind": "ConfigMap", "namespace": DEFAULT_NAMESPACE, "name": f"{name}-manifests"}]
    }
    clusters = row.get("clusters", "").strip()
    if clusters.startswith(("Cluster ", f"{SVELTOS_CLUSTER_KIND} ")):
        kind, _, ref = clusters.partition(" ")
        namespace, cluster = _split(ref.strip())
        spec["clusterRefs"] = [
            {
                "apiVersion": CLUSTER_API_VERSION if kind == "Cluster" else LIB_API_VERSION,
                "kind": kind,
                "namespace": namespace,
                "name": cluster,
            }
        ]
    elif clusters:
        spec["clusterSelector"] = {"matchLabels": labels_of(clusters)}
    for column, field_name in (("deletion", "clusterDeletionBehavior"), ("stop matching", "stopMatchingBehavior")):
        if row.get(column, "").strip():
            spec[field_name] = row[column].strip()
    if row.get("depends on", "").strip():
        spec["dependsOn"] = _names(row["depends on"])
    return {"apiVersion": CONFIG_API_VERSION, "kind": CLUSTER_PROFILE_KIND, "metadata": {"name": name}, "spec": spec}


def _manifest(name: str) -> str:
    return yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": name, "namespace": DEFAULT_NAMESPACE}, "data": {"addon": name}})


def _holder(name: str, manifests: str = VALID) -> dict[str, Any] | None:
    """The ConfigMap ``<name>-manifests`` as the ``manifests`` column describes it (None: ``missing``)."""
    if manifests not in MANIFESTS:
        raise AssertionError(f"manifests must be one of {MANIFESTS}, not {manifests!r}")
    if manifests == MISSING:
        return None
    data = {"addon.yaml": _manifest(f"{name}-addon")}
    if manifests == UNPARSABLE:
        data["addon.yaml"] = BROKEN_MANIFEST.format(name=f"{name}-addon")
    elif manifests == ONE_OF_TWO_UNPARSABLE:
        data["extra.yaml"] = BROKEN_MANIFEST.format(name=f"{name}-addon-2")
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"{name}-manifests", "namespace": DEFAULT_NAMESPACE},
        "data": data,
    }


def _put_holder(ctx: ScenarioContext, holder: dict[str, Any]) -> dict[str, Any]:
    """Create or replace a ConfigMap of manifests."""
    current = find_in(ctx.client, "v1", "ConfigMap", holder["metadata"]["name"], DEFAULT_NAMESPACE)
    if current is None:
        return ctx.client.create(holder)
    return ctx.client.update({**holder, "metadata": {**holder["metadata"],
                                                     "resourceVersion": current["metadata"]["resourceVersion"]}})


def _create_profiles(ctx: ScenarioContext, datatable: list[list[str]]) -> None:
    for row in _table(datatable):
        name = row["name"]
        holder = _holder(name, row.get("manifests", "").strip() or VALID)
        if holder is not None:
            ctx.setup(lambda holder=holder: ctx.client.create(holder))
        ctx.setup(lambda name=name, row=row: ctx.client.create(_profile(name, row)))


def _owned_configmaps(ctx: ScenarioContext, cluster: str, profile: str) -> list[str]:
    """The ConfigMaps of the workload cluster that carry the profile's owner annotation, or its add-on names."""
    items = _workload(ctx, cluster).list("v1", "ConfigMap")["items"]
    return sorted(str(i["metadata"]["name"]) for i in items
                  if ((i["metadata"].get("annotations") or {}).get(OWNER_NAME_ANNOTATION) == profile
                      or str(i["metadata"]["name"]) in (f"{profile}-addon", f"{profile}-addon-2")))


def _profile_exists(ctx: ScenarioContext, name: str) -> bool:
    return find_in(ctx.client, CONFIG_API_VERSION, CLUSTER_PROFILE_KIND, name) is not None


def _feature(ctx: ScenarioContext, ref: str) -> dict[str, Any]:
    features = (((_summary(ctx, ref) or {}).get("status") or {}).get("featureSummaries")) or []
    return dict(features[0]) if features else {}


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
    cluster = cluster_object(ref, KUBERNETES_VERSION)
    cluster["metadata"]["labels"] = labels_of(labels)
    ctx.setup(lambda: ctx.client.create(cluster))
    _await_cluster(ctx, ref)


@given(sentence('a Cluster "{ref:Q}" without a ClusterClass labelled "{labels:Q}"'))
def given_plain_cluster(ctx: ScenarioContext, ref: str, labels: str) -> None:
    _register(ctx)
    namespace, name = _split(ref)
    template = f"{name}-control-plane"
    objects = [
        {
            "apiVersion": INFRASTRUCTURE_API_VERSION,
            "kind": "FakeMachineTemplate",
            "metadata": {"name": template, "namespace": namespace},
            "spec": {"template": {"spec": {}}},
        },
        {
            "apiVersion": INFRASTRUCTURE_API_VERSION,
            "kind": "FakeCluster",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {},
        },
        {
            "apiVersion": CONTROL_PLANE_API_VERSION,
            "kind": "KubeadmControlPlane",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "replicas": 1,
                "version": KUBERNETES_VERSION,
                "kubeadmConfigSpec": {},
                "machineTemplate": {
                    "infrastructureRef": {
                        "apiVersion": INFRASTRUCTURE_API_VERSION,
                        "kind": "FakeMachineTemplate",
                        "name": template,
                        "namespace": namespace,
                    }
                },
            },
        },
        {
            "apiVersion": CLUSTER_API_VERSION,
            "kind": "Cluster",
            "metadata": {"name": name, "namespace": namespace, "labels": labels_of(labels)},
            "spec": {
                "infrastructureRef": {
                    "apiVersion": INFRASTRUCTURE_API_VERSION,
                    "kind": "FakeCluster",
                    "name": name,
                    "namespace": namespace,
                },
                "controlPlaneRef": {
                    "apiVersion": CONTROL_PLANE_API_VERSION,
                    "kind": "KubeadmControlPlane",
                    "name": name,
                    "namespace": namespace,
                },
            },
        },
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
    _create_profiles(ctx, datatable)


@given(sentence('the manifests of "{profile:Q}" have been broken'))
def given_manifests_broken(ctx: ScenarioContext, profile: str) -> None:
    holder = _holder(profile, UNPARSABLE)
    assert holder is not None
    ctx.setup(lambda: _put_holder(ctx, holder))


@given(sentence('the ClusterProfile "{name:Q}" has been deleted from the management cluster'))
def given_profile_deleted(ctx: ScenarioContext, name: str) -> None:
    ctx.setup(lambda: ctx.client.delete(CONFIG_API_VERSION, CLUSTER_PROFILE_KIND, name))


@given(sentence('the add-ons of "{profiles:Q}" are in the workload cluster of "{cluster:Q}"'))
def given_addons_deployed(ctx: ScenarioContext, profiles: str, cluster: str) -> None:
    for profile in _names(profiles):
        _await(ctx, f"the add-on of {profile} in {cluster}", lambda p=profile: _addon_present(ctx, cluster, p),
               DEPLOY_SECONDS)


@given(sentence('the workload cluster of "{cluster:Q}" has become unreachable'))
def given_unreachable(ctx: ScenarioContext, cluster: str) -> None:
    namespace, name = _split(cluster)
    ctx.setup(lambda: ctx.client.patch(CLUSTER_API_VERSION, "Cluster", name, {"metadata": {"annotations": {
        WORKLOAD_UNREACHABLE_ANNOTATION: "true"}}}, namespace=namespace, patch_type=MERGE))
    _await(ctx, f"the workload cluster of {cluster} unreachable", lambda: not _reachable(ctx, cluster), 60)


# -- When --------------------------------------------------------------------------------------------


@when(sentence('a ClusterProfile "{name:Q}" with {field_name:Word} "{value:Q}" is created'))
def when_profile_created(ctx: ScenarioContext, name: str, field_name: str, value: str) -> None:
    _register(ctx)
    profile = _profile(name, {"clusters": "env=prod"})
    profile["spec"][field_name] = _names(value) if field_name == "dependsOn" else value
    holder = _holder(name)
    if holder is not None and find_in(ctx.client, "v1", "ConfigMap", f"{name}-manifests", DEFAULT_NAMESPACE) is None:
        ctx.setup(lambda: ctx.client.create(holder))
    ctx.act(lambda: ctx.client.create(profile))


@when(sentence('the ClusterProfile "{name:Q}" is updated with {field_name:Word} "{value:Q}"'))
def when_profile_updated(ctx: ScenarioContext, name: str, field_name: str, value: str) -> None:
    ctx.act(lambda: ctx.client.patch(CONFIG_API_VERSION, CLUSTER_PROFILE_KIND, name,
                                     {"spec": {field_name: value}}, patch_type=MERGE))


@when(sentence('the example ClusterProfile "{name:Q}" of seed 003 is created'))
def when_seed_example_created(ctx: ScenarioContext, name: str) -> None:
    profile = {"apiVersion": CONFIG_API_VERSION, "kind": CLUSTER_PROFILE_KIND, "metadata": {"name": name},
               "spec": {"clusterSelector": {"matchLabels": {"env": "prod"}}, "stopMatchingBehavior": "RemovePolicies",
                        "clusterDeletionBehavior": SEED_EXAMPLES[name]}}
    ctx.act(lambda: ctx.client.create(profile))


@when(sentence("the ClusterProfiles are created:"))
def when_profiles_created(ctx: ScenarioContext, datatable: list[list[str]]) -> None:
    _register(ctx)
    rows = _table(datatable)
    for row in rows:
        holder = _holder(row["name"], row.get("manifests", "").strip() or VALID)
        if holder is not None:
            ctx.setup(lambda holder=holder: ctx.client.create(holder))

    def create() -> None:
        for row in rows:
            ctx.client.create(_profile(row["name"], row))

    ctx.act(create)


@when(sentence('the manifests of "{profile:Q}" are fixed'))
def when_manifests_fixed(ctx: ScenarioContext, profile: str) -> None:
    current = find_in(ctx.client, "v1", "ConfigMap", f"{profile}-manifests", DEFAULT_NAMESPACE)
    two = current is not None and "extra.yaml" in (current.get("data") or {})
    holder = _holder(profile, VALID)
    assert holder is not None
    if two:
        holder["data"]["extra.yaml"] = _manifest(f"{profile}-addon-2")
    ctx.act(lambda: _put_holder(ctx, holder))


@when(sentence('the workload cluster of "{cluster:Q}" becomes reachable again'))
def when_reachable_again(ctx: ScenarioContext, cluster: str) -> None:
    namespace, name = _split(cluster)
    ctx.act(lambda: ctx.client.patch(CLUSTER_API_VERSION, "Cluster", name, {"metadata": {"annotations": {
        WORKLOAD_UNREACHABLE_ANNOTATION: None}}}, namespace=namespace, patch_type=MERGE))


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
    names = _names(profiles)
    missing = [p for p in names if not _addon_present(ctx, cluster, p)]
    assert not missing, f"add-ons gone: {missing}"
    # Deleted and put back since the action counts as removed; other profiles' add-ons may have gone.
    removed = [p for p in _removals(ctx, cluster) if p in names]
    assert not removed, f"add-ons were deleted: {removed}"


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
        cluster = find_in(ctx.client, CLUSTER_API_VERSION, "Cluster", name, namespace)
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


@then(sentence('within {seconds:Int} seconds the add-ons of "{profiles:Q}" are in the workload cluster of '
               '"{cluster:Q}"'))
def then_addons_arrive(ctx: ScenarioContext, seconds: int, profiles: str, cluster: str) -> None:
    names = _names(profiles)
    assert ctx.wait_until(lambda: all(_addon_present(ctx, cluster, p) for p in names), seconds), \
        f"missing after {seconds} s: {[p for p in names if not _addon_present(ctx, cluster, p)]}"


@then(sentence('within {seconds:Int} seconds the workload cluster of "{cluster:Q}" holds the ConfigMaps "{names:Q}"'))
def then_workload_configmaps(ctx: ScenarioContext, seconds: int, cluster: str, names: str) -> None:
    wanted = _names(names)

    def present() -> list[str]:
        return [
            n for n in wanted if find_in(_workload(ctx, cluster), "v1", "ConfigMap", n, DEFAULT_NAMESPACE) is not None
        ]

    assert ctx.wait_until(lambda: present() == wanted, seconds), f"only {present()} after {seconds} s"


@then(sentence('nothing of "{profile:Q}" is in the workload cluster of "{cluster:Q}"'))
def then_nothing_deployed(ctx: ScenarioContext, profile: str, cluster: str) -> None:
    found = _owned_configmaps(ctx, cluster, profile)
    assert not found, f"deployed for {profile}: {found}"
    namespace, name = _split(cluster)
    created = [r.get("name") for r in ctx.scene.audit(since=0, cluster=f"{namespace}/{name}", verb="create")
               if str(r.get("name", "")).startswith(f"{profile}-addon")]
    assert not created, f"created at some point for {profile}: {created}"


@then(sentence('the ClusterSummary "{ref:Q}" has the feature status "{status:Q}" with a failure message starting '
               '"{text:Q}"'))
def then_summary_failed_prefix(ctx: ScenarioContext, ref: str, status: str, text: str) -> None:
    feature = _feature(ctx, ref)
    assert feature.get("status") == status, f"status: {(_summary(ctx, ref) or {}).get('status')}"
    assert str(feature.get("failureMessage", "")).startswith(text), \
        f"status: {(_summary(ctx, ref) or {}).get('status')}"


@then(sentence('within {seconds:Int} seconds the ClusterSummary "{ref:Q}" has the feature status "{status:Q}" and no '
               'failure message'))
def then_summary_recovered(ctx: ScenarioContext, seconds: int, ref: str, status: str) -> None:
    def check() -> bool:
        summary_status = (_summary(ctx, ref) or {}).get("status") or {}
        feature = _feature(ctx, ref)
        return feature.get("status") == status and "failureMessage" not in feature \
            and "failureMessage" not in summary_status

    assert ctx.wait_until(check, seconds), f"status: {(_summary(ctx, ref) or {}).get('status')}"


@then(sentence('within {seconds:Int} seconds the ClusterProfile "{name:Q}" is gone'))
def then_profile_gone(ctx: ScenarioContext, seconds: int, name: str) -> None:
    assert ctx.wait_until(lambda: not _profile_exists(ctx, name), seconds), f"the ClusterProfile {name} stays"


@then(sentence('for {seconds:Int} seconds the ClusterProfile "{name:Q}" stays, waiting for its ClusterSummaries'))
def then_profile_stays(ctx: ScenarioContext, seconds: int, name: str) -> None:
    def gone() -> bool:
        return not _profile_exists(ctx, name)

    assert not ctx.wait_until(gone, seconds), f"the ClusterProfile {name} went within {seconds} s"
    profile = find_in(ctx.client, CONFIG_API_VERSION, CLUSTER_PROFILE_KIND, name) or {}
    assert (profile.get("metadata") or {}).get("deletionTimestamp"), f"the ClusterProfile {name} is not being deleted"
    summaries = ctx.client.list(CONFIG_API_VERSION, CLUSTER_SUMMARY_KIND,
                                label_selector=f"{CLUSTER_PROFILE_NAME_LABEL}={name}")["items"]
    assert summaries, f"the ClusterProfile {name} has no ClusterSummary left, yet stays"


@then(sentence('the add-ons of "{profiles:Q}" in the workload cluster of "{cluster:Q}" carry no Sveltos marks'))
def then_addons_unmarked(ctx: ScenarioContext, profiles: str, cluster: str) -> None:
    for profile in _names(profiles):
        obj = find_in(_workload(ctx, cluster), "v1", "ConfigMap", f"{profile}-addon", DEFAULT_NAMESPACE)
        assert obj is not None, f"the add-on of {profile} is gone"
        meta = obj["metadata"]
        marks = [k for k in {**(meta.get("labels") or {}), **(meta.get("annotations") or {})}
                 if k.startswith("projectsveltos.io/")]
        assert not marks, f"the add-on of {profile} still carries {marks}"


@then(sentence('the refusal names only the cause "{reason:Q}" at "{field:Q}"'))
def then_only_cause(ctx: ScenarioContext, reason: str, field: str) -> None:
    assert ctx.error is not None, f"the write was accepted: {ctx.result}"
    causes = [{"reason": c.get("reason"), "field": c.get("field")} for c in ctx.error.details.get("causes") or []]
    assert causes == [{"reason": reason, "field": field}], f"the causes are {causes}"


def _ask_gate(ctx: ScenarioContext, cluster: str) -> dict[str, Any]:
    """BeforeClusterDelete for ``cluster``, asked over HTTPS of the endpoint the controller's ExtensionConfig
    names, trusting only its caBundle (as the Runtime SDK client does)."""
    config = find_in(ctx.client, RUNTIME_API_VERSION, EXTENSION_CONFIG_KIND, EXTENSION_CONFIG_NAME)
    assert config is not None, f"no ExtensionConfig {EXTENSION_CONFIG_NAME}"
    client_config = (config.get("spec") or {}).get("clientConfig") or {}
    url = str(client_config.get("url", ""))
    assert url.startswith("https://"), f"the gate is not served over HTTPS: {client_config}"
    trust = ssl.create_default_context(cadata=base64.b64decode(client_config["caBundle"]).decode())
    namespace, name = _split(cluster)
    body = {
        "apiVersion": HOOKS_API_VERSION,
        "kind": CATALOG[BEFORE_CLUSTER_DELETE].request_kind,
        "cluster": {
            "apiVersion": CLUSTER_API_VERSION,
            "kind": "Cluster",
            "metadata": {"name": name, "namespace": namespace},
        },
    }
    with httpx.Client(verify=trust, timeout=10) as http:
        answer = http.post(url + hook_path(BEFORE_CLUSTER_DELETE, HANDLER_NAME), json=body)
    assert answer.status_code == 200, f"{answer.status_code}: {answer.text}"
    return dict(answer.json())


@then(sentence('the add-on controller answers BeforeClusterDelete for "{cluster:Q}" with "{status:Q}", '
               'retryAfterSeconds {seconds:Int} and a message containing "{text:Q}"'))
def then_gate_holds(ctx: ScenarioContext, cluster: str, status: str, seconds: int, text: str) -> None:
    answer = _ask_gate(ctx, cluster)
    assert answer.get("status") == status and answer.get("retryAfterSeconds") == seconds \
        and text in str(answer.get("message", "")), f"answered {answer}"


@then(sentence('the add-on controller answers BeforeClusterDelete for "{cluster:Q}" with "{status:Q}", '
               'retryAfterSeconds {seconds:Int} and a message naming only "{summary:Q}"'))
def then_gate_names_only(ctx: ScenarioContext, cluster: str, status: str, seconds: int, summary: str) -> None:
    """The answer holds the Cluster for ``summary`` alone: no other ClusterSummary name a profile of the
    management cluster would have for that Cluster appears in the message."""
    answer = _ask_gate(ctx, cluster)
    message = str(answer.get("message", ""))
    assert answer.get("status") == status and answer.get("retryAfterSeconds") == seconds and summary in message, \
        f"answered {answer}"
    _, name = _split(cluster)
    profiles = [str(p["metadata"]["name"]) for p in ctx.client.list(CONFIG_API_VERSION, CLUSTER_PROFILE_KIND)["items"]]
    others = [f"{p}-capi-{name}" for p in profiles if f"{p}-capi-{name}" != summary]
    named = [other for other in others if other in message]
    assert not named, f"the answer also waits for {named}: {message!r}"


@then(sentence('within {seconds:Int} seconds the add-on controller answers BeforeClusterDelete for "{cluster:Q}" '
               'with "{status:Q}" and no retryAfterSeconds'))
def then_gate_releases(ctx: ScenarioContext, seconds: int, cluster: str, status: str) -> None:
    def released() -> bool:
        answer = _ask_gate(ctx, cluster)
        return answer.get("status") == status and not answer.get("retryAfterSeconds")

    assert ctx.wait_until(released, seconds), f"answered {_ask_gate(ctx, cluster)}"
