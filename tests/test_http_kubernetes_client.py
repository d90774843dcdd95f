"""The official ``kubernetes`` Python client against the facade, configured from its kubeconfig."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client, watch
from kubernetes.client.exceptions import ApiException
from test_http_fixtures import Served, kubernetes_api, serving

from harness.world.world import World
from tests.manifests import crd

CRD = crd("Widget")


def _compact_history(world: World) -> None:
    old = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "old", "namespace": "default"}}
    world.client().create(old)
    world.management.store.compact()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    yield from serving(tmp_path, simulators=[], prepare=_compact_history)


@pytest.fixture
def api(served: Served) -> Iterator[client.ApiClient]:
    yield from kubernetes_api(served)


def _pod(name: str, **labels: str) -> client.V1Pod:
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels=labels or None),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="i:1"),
                                          client.V1Container(name="d", image="j:1")]),
    )


def test_create_and_list_with_a_label_selector(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    created = core.create_namespaced_pod("default", _pod("p1", app="a"))
    core.create_namespaced_pod("default", _pod("p2", app="b"))
    listed = core.list_namespaced_pod("default", label_selector="app=a")
    assert created.metadata.uid and created.metadata.resource_version.isdigit()
    assert [p.metadata.name for p in listed.items] == ["p1"]


def test_dict_patch_is_sent_as_strategic_merge(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    core.create_namespaced_pod("default", _pod("p1"))
    patched = core.patch_namespaced_pod("p1", "default", {"spec": {"containers": [{"name": "d", "image": "j:2"}]}})
    # Strategic merge keeps container "c" and updates "d"; a merge patch would have replaced the list.
    assert [(c.name, c.image) for c in patched.spec.containers] == [("c", "i:1"), ("d", "j:2")]


def test_replace_with_a_stale_resource_version_raises_409(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    pod = core.create_namespaced_pod("default", _pod("p1"))
    pod.metadata.labels = {"v": "1"}
    core.replace_namespaced_pod("p1", "default", pod)
    with pytest.raises(ApiException) as raised:
        core.replace_namespaced_pod("p1", "default", pod)
    assert raised.value.status == 409
    assert raised.value.headers["Content-Type"] == "application/json"
    assert '"reason":"Conflict"' in raised.value.body


def test_watch_resumes_from_the_last_resource_version(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    start = core.list_namespaced_config_map("default").metadata.resource_version
    for name in ("c1", "c2"):
        core.create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name)))
    watcher = watch.Watch()
    seen = []
    for event in watcher.stream(core.list_namespaced_config_map, "default", resource_version=start, timeout_seconds=5):
        seen.append((event["type"], event["object"].metadata.name))
        if len(seen) == 2:
            watcher.stop()
    core.create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="c3")))
    resumed = []
    for event in watcher.stream(
        core.list_namespaced_config_map, "default", resource_version=watcher.resource_version, timeout_seconds=5
    ):
        resumed.append(event["object"].metadata.name)
        watcher.stop()
    assert seen == [("ADDED", "c1"), ("ADDED", "c2")]
    assert resumed == ["c3"]


def test_watch_from_a_compacted_resource_version_raises_410(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    with pytest.raises(ApiException) as raised:
        for _ in watch.Watch().stream(core.list_namespaced_config_map, "default", resource_version="1",
                                      timeout_seconds=5):
            pass
    assert raised.value.status == 410


def test_eviction_and_delete_options(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    core.create_namespaced_pod("default", _pod("p1"))
    core.create_namespaced_pod("default", _pod("p2"))
    eviction = client.V1Eviction(metadata=client.V1ObjectMeta(name="p1", namespace="default"))
    core.create_namespaced_pod_eviction("p1", "default", eviction)
    deleted = core.delete_namespaced_pod("p2", "default", body=client.V1DeleteOptions(grace_period_seconds=0))
    remaining = [p.metadata.name for p in core.list_namespaced_pod("default").items]
    assert deleted.metadata.name == "p2"  # a Pod DELETE answers with the Pod
    assert remaining == []


def test_custom_objects_use_merge_patch(api: client.ApiClient) -> None:
    client.ApiextensionsV1Api(api).create_custom_resource_definition(CRD)
    custom = client.CustomObjectsApi(api)
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"},
              "spec": {"items": ["a", "b"], "size": 1}}
    custom.create_namespaced_custom_object("example.com", "v1", "default", "widgets", widget)
    patched = custom.patch_namespaced_custom_object(
        "example.com", "v1", "default", "widgets", "w1", {"spec": {"items": ["c"]}}
    )
    assert patched["spec"] == {"items": ["c"], "size": 1}
