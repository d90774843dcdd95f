"""The start every Cluster API reconcile shares (controllers/machine/reconciler.py): the controller's
finalizer is added before anything else, and a reconcile of an object that is gone does nothing."""

from __future__ import annotations

from controllers.machine.reconciler import ClusterApiReconciler
from harness.client import Request
from harness.kube.names.capi import CLUSTER_API_VERSION, CLUSTER_KIND
from harness.kube.names.core import DEFAULT_NAMESPACE
from harness.world.world import World

FINALIZER = "test.cluster.x-k8s.io"


class _Probe(ClusterApiReconciler):
    name = "probe"
    event_component = "probe-controller"


def test_the_finalizer_is_added_first_and_the_object_is_returned_once_it_is_there() -> None:
    client = World(controllers=[]).client()
    client.create({"apiVersion": CLUSTER_API_VERSION, "kind": CLUSTER_KIND,
                   "metadata": {"name": "c1", "namespace": DEFAULT_NAMESPACE}, "spec": {}})
    probe = _Probe(client)
    request = Request(DEFAULT_NAMESPACE, "c1")
    assert probe.get_with_finalizer(CLUSTER_KIND, request, FINALIZER) is None
    stored = client.get(CLUSTER_API_VERSION, CLUSTER_KIND, "c1", DEFAULT_NAMESPACE)
    assert FINALIZER in stored["metadata"]["finalizers"]
    again = probe.get_with_finalizer(CLUSTER_KIND, request, FINALIZER)
    assert again is not None and again["metadata"]["name"] == "c1"
    assert probe.recorder is not None and probe.client is client


def test_an_object_that_is_gone_gives_nothing() -> None:
    probe = _Probe(World(controllers=[]).client())
    assert probe.get_with_finalizer(CLUSTER_KIND, Request(DEFAULT_NAMESPACE, "nope"), FINALIZER) is None
