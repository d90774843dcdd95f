"""The volume detach wait of the reference machine controller (controllers/machine/volume_detach.py): what
blocks, its message, claims of skipped Pods, the exclude annotation, the timeout, and bad input."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.machine.volume_detach import AttachedVolumes
from harness.kube.names.core import DEFAULT_NAMESPACE
from tests.test_machine_deletion import CapiWorld

DRIVER = "ebs.csi.aws.com"
HOLD = {"pre-terminate.delete.hook.machine.cluster.x-k8s.io/hold": ""}


def test_the_message_lists_each_kind_of_blocker_sorted_and_cut_at_five() -> None:
    attached = AttachedVolumes(claims=[f"ns/c{i}" for i in range(7)], volumes_without_claim=["pv-x"],
                               node_names_without_volume=["kubernetes.io/aws-ebs/v1"],
                               attachment_names_without_volume=["pv-gone"])
    assert attached.condition_message("2026-01-01T00:00:00Z") == "\n".join([
        "Waiting for Node volumes to be detached (started at 2026-01-01T00:00:00Z)",
        "* PersistentVolumeClaims: ns/c0, ns/c1, ns/c2, ns/c3, ns/c4, ... (2 more)",
        "* PersistentVolumes without a .spec.claimRef to a PersistentVolumeClaim: pv-x",
        "* Node with .status.volumesAttached entries not matching a PersistentVolume: kubernetes.io/aws-ebs/v1",
        "* VolumeAttachment with .spec.source.persistentVolumeName not matching a PersistentVolume: pv-gone",
    ])
    assert AttachedVolumes().condition_message("2026-01-01T00:00:00Z") == ""


@pytest.fixture
def capi() -> CapiWorld:
    return CapiWorld()


def _volume(capi: CapiWorld, claim: str, pv: str, *, detach_delay: str | None = None) -> dict[str, Any]:
    annotations = {"harness.test/detach-delay": detach_delay} if detach_delay else {}
    capi.remote.create(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": pv, "annotations": annotations},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "csi": {"driver": DRIVER, "volumeHandle": f"vol-{pv}"},
                "claimRef": {"kind": "PersistentVolumeClaim", "namespace": DEFAULT_NAMESPACE, "name": claim},
            },
        }
    )
    capi.remote.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                        "metadata": {"name": claim, "namespace": DEFAULT_NAMESPACE},
                        "spec": {"accessModes": ["ReadWriteOnce"], "volumeName": pv,
                                 "resources": {"requests": {"storage": "1Gi"}}}})
    return {"name": "data", "persistentVolumeClaim": {"claimName": claim}}


def test_deletion_waits_until_the_evicted_pods_volumes_are_detached(capi: CapiWorld) -> None:
    capi.machine("m1")
    capi.pod("db-0", "m1", volumes=[_volume(capi, "data", "pv-1", detach_delay="60s")], grace=5)
    capi.world.settle()
    assert capi.remote.get("v1", "Node", "m1")["status"]["volumesAttached"]
    capi.delete("m1")
    capi.world.advance(21)
    start = capi.get("m1")["status"]["deletion"]["waitForNodeVolumeDetachStartTime"]
    condition = capi.deleting("m1")
    assert (condition["reason"], condition["message"]) == (
        "WaitingForVolumeDetach",
        f"Waiting for Node volumes to be detached (started at {start})\n* PersistentVolumeClaims: default/data")
    waiting = capi.condition("m1", "VolumeDetachSucceeded")
    assert (waiting["status"], waiting["reason"], waiting["severity"], waiting["message"]) == (
        "False", "WaitingForVolumeDetach", "Info", "Waiting for node volumes to be detached")
    capi.world.advance(60)
    assert capi.condition("m1", "VolumeDetachSucceeded")["status"] == "True"
    capi.world.advance(5)
    assert not capi.exists("m1")


def test_volumes_of_pods_the_drain_skips_do_not_block(capi: CapiWorld) -> None:
    capi.machine("m1", annotations=HOLD)
    capi.pod("cache", "m1", labels={"cluster.x-k8s.io/drain": "skip"}, volumes=[_volume(capi, "cache", "pv-2")])
    capi.world.settle()
    capi.delete("m1")
    assert capi.condition("m1", "VolumeDetachSucceeded")["status"] == "True"
    assert capi.remote.get("v1", "Node", "m1")["status"]["volumesAttached"]


def test_the_exclude_annotation_skips_the_volume_wait(capi: CapiWorld) -> None:
    capi.machine("m1", annotations={**HOLD, "machine.cluster.x-k8s.io/exclude-wait-for-node-volume-detach": "yes"})
    _attach_foreign_volume(capi)
    capi.delete("m1")
    assert capi.deleting("m1")["reason"] == "WaitingForPreTerminateHook"
    assert capi.condition("m1", "VolumeDetachSucceeded") is None


def _attach_foreign_volume(capi: CapiWorld) -> None:
    entry = {"name": "kubernetes.io/aws-ebs/vol-x", "devicePath": "/dev/xvdf"}
    capi.remote.patch("v1", "Node", "m1", {"status": {"volumesAttached": [entry]}}, subresource="status")
    capi.world.settle()


def test_an_attached_volume_without_a_persistent_volume_blocks_until_the_timeout(capi: CapiWorld) -> None:
    capi.machine("m1", annotations=HOLD, spec={"nodeVolumeDetachTimeout": "30s"})
    _attach_foreign_volume(capi)
    capi.delete("m1")
    assert capi.deleting("m1")["message"].split("\n")[1] == (
        "* Node with .status.volumesAttached entries not matching a PersistentVolume: kubernetes.io/aws-ebs/vol-x")
    capi.world.advance(39)  # checks at 0 s and 20 s; the one at 40 s finds the timeout passed
    assert capi.deleting("m1")["reason"] == "WaitingForVolumeDetach"
    capi.world.advance(2)
    assert capi.deleting("m1")["reason"] == "WaitingForPreTerminateHook"
    assert capi.condition("m1", "VolumeDetachSucceeded")["status"] == "False"


def test_a_volume_attachment_without_a_persistent_volume_name_is_an_error(capi: CapiWorld) -> None:
    capi.machine("m1", annotations=HOLD)
    capi.remote.create({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": "inline"},
                        "spec": {"attacher": "other.csi.example.com", "nodeName": "m1",
                                 "source": {"inlineVolumeSpec": {"csi": {"driver": "other.csi.example.com",
                                                                        "volumeHandle": "h"}}}}})
    capi.remote.patch("storage.k8s.io/v1", "VolumeAttachment", "inline", {"status": {"attached": True}},
                      subresource="status")
    capi.world.settle()
    capi.delete("m1")
    assert capi.deleting("m1")["message"] == (
        "Error waiting for volumes to be detached from Node, please check controller logs for errors")
    event = capi.events("FailedWaitForVolumeDetach")[0]
    assert (event["type"], event["message"]) == (
        "Warning", "error waiting for node volumes detaching, Machine's node \"m1\": "
                   "spec.source.persistentVolumeName for VolumeAttachment inline is not set")
