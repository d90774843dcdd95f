"""lightkube against the facade: get, list, patch (strategic by default), apply, delete with
query-parameter options, watch, and ApiError from Status bodies."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lightkube import ApiError, Client, KubeConfig
from lightkube.models.core_v1 import Container, PodSpec
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import ConfigMap, Pod
from lightkube.types import PatchType
from test_http_fixtures import Served, serving


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    yield from serving(tmp_path, simulators=[])


@pytest.fixture
def kube(served: Served) -> Iterator[Client]:
    lightkube = Client(config=KubeConfig.from_file(served.kubeconfig), field_manager="tests")
    yield lightkube


def _pod(name: str, **labels: str) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, namespace="default", labels=labels or None),
        spec=PodSpec(containers=[Container(name="c", image="i:1"), Container(name="d", image="j:1")]),
    )


def test_get_and_list(kube: Client) -> None:
    kube.create(_pod("p1", app="a"))
    kube.create(_pod("p2", app="b"))
    fetched = kube.get(Pod, "p1", namespace="default")
    listed = list(kube.list(Pod, namespace="default", labels={"app": "b"}))
    everywhere = list(kube.list(Pod, namespace="*"))
    assert fetched.metadata.labels == {"app": "a"}
    assert [p.metadata.name for p in listed] == ["p2"]
    assert sorted(p.metadata.name for p in everywhere) == ["p1", "p2"]


def test_patch_is_strategic_by_default_and_merge_on_request(kube: Client) -> None:
    kube.create(_pod("p1"))
    smp = kube.patch(Pod, "p1", {"spec": {"containers": [{"name": "d", "image": "j:2"}]}}, namespace="default")
    merged = kube.patch(
        Pod, "p1", {"metadata": {"labels": {"x": "y"}}}, namespace="default", patch_type=PatchType.MERGE
    )
    assert [(c.name, c.image) for c in smp.spec.containers] == [("c", "i:1"), ("d", "j:2")]
    assert merged.metadata.labels == {"x": "y"}


def test_apply_creates_then_updates(kube: Client) -> None:
    config_map = ConfigMap(metadata=ObjectMeta(name="cm", namespace="default"), data={"a": "1"})
    created = kube.apply(config_map)
    config_map.data = {"a": "2"}
    updated = kube.apply(config_map, force=True)
    assert created.data == {"a": "1"} and updated.data == {"a": "2"}
    assert updated.metadata.managedFields[-1].manager == "tests"


def test_delete_sends_options_as_query_parameters(kube: Client) -> None:
    pod = _pod("p1")
    pod.spec.nodeName = "n1"  # scheduled: deletion is graceful unless the grace period is 0
    kube.create(pod)
    kube.create(_pod("p2"))
    kube.delete(Pod, "p1", namespace="default", grace_period=0)
    kube.delete(Pod, "p2", namespace="default", dry_run=True)
    names = [p.metadata.name for p in kube.list(Pod, namespace="default")]
    assert names == ["p2"]


def test_errors_become_api_errors_with_the_status(kube: Client) -> None:
    with pytest.raises(ApiError) as raised:
        kube.get(Pod, "missing", namespace="default")
    assert raised.value.status.code == 404
    assert raised.value.status.reason == "NotFound"
    assert raised.value.status.message == 'pods "missing" not found'


def test_watch_yields_changes(kube: Client) -> None:
    start = kube.list(ConfigMap, namespace="default")
    list(start)
    kube.create(ConfigMap(metadata=ObjectMeta(name="c1", namespace="default")))
    for event, obj in kube.watch(ConfigMap, namespace="default", resource_version=start.resourceVersion):
        assert (event, obj.metadata.name) == ("ADDED", "c1")
        break
    else:
        pytest.fail("the watch ended without an event")
