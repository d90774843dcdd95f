"""Behaviour of the CSI attacher simulator (harness/world/csi_attacher.py): the attach/detach
controller and the external-attacher around VolumeAttachments and the Node's volume lists."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from harness.client import ApiError, InProcessClient
from harness.world.csi_attacher import CSIAttacher, attacher_finalizer, attachment_name
from harness.world.world import World

VA = ("storage.k8s.io/v1", "VolumeAttachment")
DRIVER = "ebs.csi.aws.com"
HANDLE = "vol-1"
UNIQUE = "kubernetes.io/csi/ebs.csi.aws.com^vol-1"


def va_name(node: str = "n1", handle: str = HANDLE) -> str:
    return attachment_name(handle, DRIVER, node)


@pytest.fixture
def world() -> World:
    return World(simulators=["csi-attacher"])


@pytest.fixture
def client(world: World) -> InProcessClient:
    return world.client()


def node(client: InProcessClient, name: str = "n1", *, ready: str | None = "True") -> None:
    client.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
    if ready is not None:
        condition = {"type": "Ready", "status": ready, "lastHeartbeatTime": "2026-01-01T00:00:00Z",
                     "lastTransitionTime": "2026-01-01T00:00:00Z"}
        client.patch("v1", "Node", name, {"status": {"conditions": [condition]}}, subresource="status")


def volume(client: InProcessClient, claim: str = "data", pv: str = "pv-1", handle: str = HANDLE,
           annotations: dict[str, str] | None = None) -> None:
    meta: dict[str, Any] = {"name": pv}
    if annotations:
        meta["annotations"] = annotations
    client.create({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta, "spec": {
        "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
        "csi": {"driver": DRIVER, "volumeHandle": handle},
        "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "default", "name": claim}}})
    client.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                   "metadata": {"name": claim, "namespace": "default"},
                   "spec": {"accessModes": ["ReadWriteOnce"], "volumeName": pv,
                            "resources": {"requests": {"storage": "1Gi"}}}})


def pod(client: InProcessClient, name: str = "db-0", node_name: str = "n1", claim: str = "data") -> None:
    client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                   "spec": {"nodeName": node_name, "containers": [{"name": "c", "image": "db"}],
                            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]}})


def set_in_use(client: InProcessClient, names: list[str], node_name: str = "n1") -> None:
    client.patch("v1", "Node", node_name, {"status": {"volumesInUse": names or None}}, subresource="status")


def attached_names(client: InProcessClient, node_name: str = "n1") -> list[str]:
    status = client.get("v1", "Node", node_name).get("status") or {}
    return [v["name"] for v in status.get("volumesAttached") or []]


def va_exists(client: InProcessClient, name: str) -> bool:
    try:
        client.get(*VA, name)
    except ApiError as err:
        assert err.code == 404
        return False
    return True


def test_attachment_name_is_sha256_of_handle_driver_and_node() -> None:
    expected = "csi-" + hashlib.sha256(b"vol-1ebs.csi.aws.comn1").hexdigest()
    assert attachment_name("vol-1", "ebs.csi.aws.com", "n1") == expected


def test_attacher_finalizer_sanitizes_the_driver_name() -> None:
    assert attacher_finalizer("ebs.csi.aws.com") == "external-attacher/ebs-csi-aws-com"
    assert attacher_finalizer("csi.example.com/") == "external-attacher/csi-example-com-X"


def test_a_scheduled_pod_gets_its_volume_attached(world: World, client: InProcessClient) -> None:
    node(client)
    volume(client)
    pod(client)
    world.settle()

    va = client.get(*VA, va_name())
    assert va["spec"] == {"attacher": DRIVER, "nodeName": "n1", "source": {"persistentVolumeName": "pv-1"}}
    assert va["metadata"]["finalizers"] == ["external-attacher/ebs-csi-aws-com"]
    assert va["status"]["attached"] is True
    assert client.get("v1", "Node", "n1")["status"]["volumesAttached"] == [{"name": UNIQUE, "devicePath": ""}]
    assert world.errors() == []


def test_attach_delay_holds_attached_and_the_node_entry(world: World, client: InProcessClient) -> None:
    world.simulator("csi-attacher").attach_delay = 10
    node(client)
    volume(client)
    pod(client)
    world.settle()
    assert client.get(*VA, va_name())["status"]["attached"] is False
    assert attached_names(client) == []

    world.advance(10)
    assert client.get(*VA, va_name())["status"]["attached"] is True
    assert attached_names(client) == [UNIQUE]


def test_a_claim_bound_later_attaches_when_it_binds(world: World, client: InProcessClient) -> None:
    node(client)
    client.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                   "metadata": {"name": "data", "namespace": "default"},
                   "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})
    pod(client)
    world.settle()
    assert not va_exists(client, va_name())

    client.create({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-1"}, "spec": {
        "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
        "csi": {"driver": DRIVER, "volumeHandle": HANDLE},
        "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "default", "name": "data"}}})
    client.patch("v1", "PersistentVolumeClaim", "data", {"spec": {"volumeName": "pv-1"}}, namespace="default")
    world.settle()
    assert client.get(*VA, va_name())["status"]["attached"] is True


def test_detach_waits_until_the_node_no_longer_uses_the_volume(world: World, client: InProcessClient) -> None:
    node(client)
    volume(client)
    pod(client)
    world.settle()
    set_in_use(client, [UNIQUE])

    client.delete("v1", "Pod", "db-0", "default", grace_period_seconds=0)
    world.advance(300)
    assert client.get(*VA, va_name())["status"]["attached"] is True
    assert attached_names(client) == [UNIQUE]

    set_in_use(client, [])
    world.settle()
    assert not va_exists(client, va_name())
    assert attached_names(client) == []


def test_detach_waits_for_every_pod_using_the_volume(world: World, client: InProcessClient) -> None:
    node(client)
    volume(client)
    pod(client, "db-0")
    pod(client, "db-1")
    world.settle()

    client.delete("v1", "Pod", "db-0", "default", grace_period_seconds=0)
    world.settle()
    assert va_exists(client, va_name())

    client.delete("v1", "Pod", "db-1", "default", grace_period_seconds=0)
    world.settle()
    assert not va_exists(client, va_name())


def test_a_terminated_pod_no_longer_needs_its_volume(world: World, client: InProcessClient) -> None:
    node(client)
    volume(client)
    pod(client)
    world.settle()

    client.patch("v1", "Pod", "db-0", {"status": {"phase": "Succeeded"}}, namespace="default",
                 subresource="status")
    world.settle()
    assert not va_exists(client, va_name())


def test_detach_delay_keeps_the_deleting_attachment(world: World, client: InProcessClient) -> None:
    node(client)
    volume(client, annotations={"harness.test/detach-delay": "30s"})
    pod(client)
    world.settle()

    client.delete("v1", "Pod", "db-0", "default", grace_period_seconds=0)
    world.advance(29)
    va = client.get(*VA, va_name())
    assert va["metadata"]["deletionTimestamp"]
    assert attached_names(client) == [UNIQUE]

    world.advance(1)
    assert not va_exists(client, va_name())
    assert attached_names(client) == []


def test_a_stuck_detach_never_finishes(world: World, client: InProcessClient) -> None:
    node(client)
    volume(client, annotations={"harness.test/detach-stuck": "true"})
    pod(client)
    world.settle()

    client.delete("v1", "Pod", "db-0", "default", grace_period_seconds=0)
    world.advance(3600)

    va = client.get(*VA, va_name())
    assert va["metadata"]["deletionTimestamp"]
    assert va["metadata"]["finalizers"] == ["external-attacher/ebs-csi-aws-com"]
    assert va["status"]["attached"] is True
    assert va["status"]["detachError"]["message"]
    assert attached_names(client) == [UNIQUE]

    client.patch("v1", "PersistentVolume", "pv-1", {"metadata": {"annotations": None}})
    world.settle()
    assert not va_exists(client, va_name())
    assert attached_names(client) == []


def test_an_unready_node_gets_a_forced_detach_after_six_minutes(world: World, client: InProcessClient) -> None:
    node(client, ready="Unknown")
    volume(client)
    pod(client)
    world.settle()
    set_in_use(client, [UNIQUE])

    client.delete("v1", "Pod", "db-0", "default", grace_period_seconds=0)
    world.advance(360)
    assert va_exists(client, va_name())
    world.advance(1)
    assert not va_exists(client, va_name())


def test_a_deleted_node_loses_its_attachments(world: World, client: InProcessClient) -> None:
    node(client)
    volume(client)
    pod(client)
    world.settle()

    client.delete("v1", "Node", "n1")
    world.settle()
    assert not va_exists(client, va_name())


def test_entries_the_attacher_did_not_write_are_kept(world: World, client: InProcessClient) -> None:
    node(client)
    client.patch("v1", "Node", "n1", {"status": {"volumesAttached": [{"name": "kubernetes.io/csi/dummy^foo",
                                                                      "devicePath": ""}]}}, subresource="status")
    volume(client)
    pod(client)
    world.settle()
    assert attached_names(client) == ["kubernetes.io/csi/dummy^foo", UNIQUE]

    client.delete("v1", "Pod", "db-0", "default", grace_period_seconds=0)
    world.settle()
    assert attached_names(client) == ["kubernetes.io/csi/dummy^foo"]


def test_a_volume_attachment_created_by_someone_else_is_attached_but_not_detached(
    world: World, client: InProcessClient
) -> None:
    node(client)
    volume(client)
    client.create({"apiVersion": VA[0], "kind": VA[1], "metadata": {"name": "va-1"},
                   "spec": {"attacher": DRIVER, "nodeName": "n1", "source": {"persistentVolumeName": "pv-1"}}})
    world.advance(60)

    va = client.get(*VA, "va-1")
    assert va["status"]["attached"] is True
    assert not va["metadata"].get("deletionTimestamp")
    assert attached_names(client) == []

    client.delete(*VA, "va-1")
    world.settle()
    assert not va_exists(client, "va-1")


def test_with_the_kubelet_the_pod_runs_and_detach_follows_its_deletion() -> None:
    world = World(simulators=["csi-attacher", "kubelet"])
    client = world.client()
    node(client, ready=None)  # the kubelet posts the conditions
    volume(client)
    pod(client)
    world.advance(5)
    assert client.get("v1", "Pod", "db-0", "default")["status"]["phase"] == "Running"
    status = client.get("v1", "Node", "n1")["status"]
    assert status["volumesInUse"] == [UNIQUE]
    assert [v["name"] for v in status["volumesAttached"]] == [UNIQUE]

    client.delete("v1", "Pod", "db-0", "default")
    world.advance(60)

    assert not va_exists(client, va_name())
    removal = [r for r in world.audit if r.resource == "volumeattachments.storage.k8s.io" and r.new is None]
    pod_gone = [r for r in world.audit if r.resource == "pods" and r.name == "db-0" and r.new is None]
    assert removal and pod_gone and pod_gone[0].seq < removal[0].seq
    marked = [r for r in world.audit if r.resource == "volumeattachments.storage.k8s.io" and r.verb == "delete"]
    unused = [r for r in world.audit if r.resource == "nodes" and r.new is not None
              and UNIQUE not in (r.new.get("status") or {}).get("volumesInUse", [])
              and UNIQUE in ((r.old or {}).get("status") or {}).get("volumesInUse", [])]
    assert marked and unused and unused[0].seq < marked[0].seq
    attacher: CSIAttacher = world.simulator("csi-attacher")
    assert attacher.errors == []
