"""Every built-in resource of Kubernetes 1.32 is served with the generic semantics, and each kind
is one the 1.32 schemas define (so typed decoding and pruning apply to all of them)."""

from __future__ import annotations

import pytest

from harness.apiserver import builtins, schemas
from harness.apiserver.resources import ResourceType
from harness.apiserver.server import APIServer
from harness.clock import VirtualClock
from harness.kube.errors import StatusError

# Pods, Namespaces and CRDs need more than a name; their own tests cover them.
STORED = [rt for rt in builtins.BUILTINS
          if "list" in rt.verbs and rt.kind not in ("Pod", "Namespace", "CustomResourceDefinition")]


@pytest.mark.parametrize("rt", builtins.BUILTINS, ids=lambda rt: f"{rt.api_version}/{rt.plural}")
def test_every_built_in_kind_has_a_1_32_schema(rt: ResourceType) -> None:
    assert schemas.has_kind(rt.api_version, rt.kind)


@pytest.mark.parametrize("rt", STORED, ids=lambda rt: f"{rt.api_version}/{rt.plural}")
def test_every_stored_built_in_resource_creates_gets_lists_and_deletes(rt: ResourceType) -> None:
    server = APIServer("test", VirtualClock())
    namespace = "default" if rt.namespaced else None
    body = {"metadata": {"name": "x1"}, **_minimal_spec(rt)}
    created = server.create(rt, namespace, body)
    assert created["apiVersion"] == rt.api_version and created["kind"] == rt.kind
    assert ("generation" in created["metadata"]) == rt.has_generation
    assert server.get(rt, namespace, "x1")["metadata"]["uid"] == created["metadata"]["uid"]
    assert [o["metadata"]["name"] for o in server.list(rt, namespace)["items"]] == ["x1"]
    server.delete(rt, namespace, "x1")
    assert server.list(rt, namespace)["items"] == []


def _minimal_spec(rt: ResourceType) -> dict:
    if rt.kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "ReplicationController"):
        labels = {"app": "x"}
        selector = labels if rt.kind == "ReplicationController" else {"matchLabels": labels}
        return {"spec": {"replicas": 0, "selector": selector, "template": {
            "metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    if rt.kind == "PodDisruptionBudget":
        return {"spec": {"minAvailable": 1}}
    if rt.kind == "VolumeAttachment":
        return {"spec": {"attacher": "csi.example.com", "nodeName": "n", "source": {"persistentVolumeName": "pv"}}}
    return {}


def test_rbac_names_are_path_segments_not_subdomains() -> None:
    server = APIServer("test", VirtualClock())
    role = builtins.BUILTINS[[rt.kind for rt in builtins.BUILTINS].index("ClusterRole")]
    assert server.create(role, None, {"metadata": {"name": "system:controller:x"}})["metadata"]["name"] == (
        "system:controller:x"
    )
    with pytest.raises(StatusError) as refused:
        server.create(role, None, {"metadata": {"name": "a/b"}})
    assert refused.value.code == 422


def test_a_wrongly_typed_role_is_refused_by_typed_decoding() -> None:
    server = APIServer("test", VirtualClock())
    role = next(rt for rt in builtins.BUILTINS if rt.kind == "Role")
    with pytest.raises(StatusError) as refused:
        server.create(role, "default", {"metadata": {"name": "r"}, "rules": [{"verbs": "get"}]})
    assert (refused.value.code, refused.value.message) == (
        400,
        'Role in version "v1" cannot be handled as a Role: json: cannot unmarshal string into Go struct field '
        "PolicyRule.rules.verbs of type []string",
    )


def test_hpa_is_served_in_v2_preferred_and_v1() -> None:
    versions = [rt.version for rt in builtins.BUILTINS if rt.kind == "HorizontalPodAutoscaler"]
    assert versions == ["v2", "v1"]


def _hpa(version: str) -> ResourceType:
    return next(rt for rt in builtins.BUILTINS if rt.kind == "HorizontalPodAutoscaler" and rt.version == version)


def test_an_hpa_written_in_v1_reads_in_v2_and_back() -> None:
    server = APIServer("test", VirtualClock())
    v1, v2 = _hpa("v1"), _hpa("v2")
    target = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    watch = server.watch(v1, "default")
    created = server.create(v1, "default", {"metadata": {"name": "web"}, "spec": {
        "scaleTargetRef": target, "maxReplicas": 5, "targetCPUUtilizationPercentage": 60}})
    assert created["apiVersion"] == "autoscaling/v1"
    assert created["spec"] == {"scaleTargetRef": target, "minReplicas": 1, "maxReplicas": 5,
                               "targetCPUUtilizationPercentage": 60}
    assert server.get(v2, "default", "web")["spec"]["metrics"] == [{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}]
    (event_type, event_object), = watch.drain()
    assert (event_type, event_object["apiVersion"], event_object["spec"]["targetCPUUtilizationPercentage"]) == (
        "ADDED", "autoscaling/v1", 60)


def test_an_hpa_created_in_v2_without_metrics_defaults_to_80_percent_cpu() -> None:
    server = APIServer("test", VirtualClock())
    server.create(_hpa("v2"), "default", {"metadata": {"name": "web"}, "spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 3}})
    assert server.get(_hpa("v1"), "default", "web")["spec"]["targetCPUUtilizationPercentage"] == 80


def test_events_k8s_io_events_share_the_core_events_storage() -> None:
    server = APIServer("test", VirtualClock())
    new_events = next(rt for rt in builtins.BUILTINS if rt.group == "events.k8s.io")
    regarding = {"kind": "Pod", "namespace": "default", "name": "web-1"}
    created = server.create(new_events, "default", {
        "metadata": {"name": "e1"}, "eventTime": "2026-01-01T00:00:00.000000Z", "reason": "Started",
        "note": "started", "type": "Normal", "regarding": regarding, "reportingController": "kubelet",
        "reportingInstance": "n1", "action": "Start"})
    assert (created["apiVersion"], created["note"], created["regarding"]) == ("events.k8s.io/v1", "started", regarding)
    core = server.get(builtins.EVENT, "default", "e1")
    assert (core["apiVersion"], core["message"], core["involvedObject"], core["reportingComponent"]) == (
        "v1", "started", regarding, "kubelet")
    assert "note" not in core and "regarding" not in core
    server.create(builtins.EVENT, "default", {"metadata": {"name": "e2"}, "message": "old style",
                                              "involvedObject": regarding, "count": 2})
    listed = {e["metadata"]["name"]: e for e in server.list(new_events, "default")["items"]}
    assert (listed["e2"]["note"], listed["e2"]["deprecatedCount"]) == ("old style", 2)
