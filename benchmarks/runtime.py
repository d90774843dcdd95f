"""Runtime SDK hooks: hook calls per second over HTTPS to the reference Runtime Extension, and a
create -> upgrade -> delete lifecycle of 100 ClusterClass Clusters in one process.

Calls: ``RuntimeClient.call_all`` of BeforeClusterCreate (registry read from the API, namespace match,
HTTPS POST with a pooled connection, decoding, aggregation), against a bare HTTPS POST of the same body
to the same server in the same run (the baseline: what the wire alone costs).

Lifecycle: 100 Clusters of one ClusterClass (control plane of one Machine, no workers) are created, run
until every control plane is initialized, upgraded, and deleted, with one registered extension answering
every hook; the baseline is the same lifecycle without an ExtensionConfig (no hook is called).
``python -m benchmarks.runtime``.
"""

from __future__ import annotations

import base64
import json
import ssl
import time
from typing import Any

import httpx

from benchmarks.timing import report
from controllers.runtime.client import RuntimeClient
from harness.kube.names.capi import CLUSTER_API_VERSION, CONTROL_PLANE_API_VERSION, INFRASTRUCTURE_API_VERSION
from harness.kube.names.core import DEFAULT_NAMESPACE
from harness.kube.names.runtime_sdk import RUNTIME_API_VERSION
from harness.world.extension import ExtensionServer, HookResponder
from harness.world.world import World

CALLS = 300
CLUSTERS = 100
STEP = 10.0
LIMIT = 3600.0


def _register(world: World, server: ExtensionServer) -> None:
    world.client().create({"apiVersion": RUNTIME_API_VERSION, "kind": "ExtensionConfig", "metadata": {"name": "bench"},
                           "spec": {"clientConfig": {"url": server.url, "caBundle": server.ca_bundle}}})
    world.settle()


def _cluster(name: str) -> dict[str, Any]:
    return {
        "apiVersion": CLUSTER_API_VERSION,
        "kind": "Cluster",
        "metadata": {"name": name, "namespace": DEFAULT_NAMESPACE},
        "spec": {"topology": {"class": "bench", "version": "v1.31.0", "controlPlane": {"replicas": 1}}},
    }


def calls_per_second() -> None:
    """Hook calls per second, and the ratio of a call's time to a bare HTTPS POST's."""
    server = ExtensionServer(HookResponder()).start()
    try:
        world = World(audit=False)
        _register(world, server)
        client = RuntimeClient(world.client())
        cluster = _cluster("c1")
        request = {"cluster": cluster}
        client.call_all("BeforeClusterCreate", cluster, request)
        start = time.perf_counter()
        for _ in range(CALLS):
            client.call_all("BeforeClusterCreate", cluster, request)
        per_call = (time.perf_counter() - start) / CALLS
        context = ssl.create_default_context(cadata=base64.b64decode(server.ca_bundle).decode())
        body = json.dumps({"apiVersion": "hooks.runtime.cluster.x-k8s.io/v1alpha1",
                           "kind": "BeforeClusterCreateRequest", **request}).encode()
        url = server.url + "/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforeclustercreate/before-cluster-create"
        with httpx.Client(verify=context) as http:
            http.post(url, content=body)
            start = time.perf_counter()
            for _ in range(CALLS):
                http.post(url, content=body)
            bare = (time.perf_counter() - start) / CALLS
        report("bare HTTPS POST to the extension", bare * 1000, "ms")
        report("BeforeClusterCreate through the Runtime SDK client", per_call * 1000, "ms", bare * 1000, "bare POST")
        report("hook calls per second", 1 / per_call, "/s")
    finally:
        server.stop()


def _class(world: World) -> None:
    client = world.client()
    for obj in (
        {
            "apiVersion": INFRASTRUCTURE_API_VERSION,
            "kind": "FakeClusterTemplate",
            "metadata": {"name": "bench", "namespace": DEFAULT_NAMESPACE},
            "spec": {"template": {"spec": {}}},
        },
        {
            "apiVersion": CONTROL_PLANE_API_VERSION,
            "kind": "KubeadmControlPlaneTemplate",
            "metadata": {"name": "bench", "namespace": DEFAULT_NAMESPACE},
            "spec": {"template": {"spec": {"kubeadmConfigSpec": {}}}},
        },
        {
            "apiVersion": INFRASTRUCTURE_API_VERSION,
            "kind": "FakeMachineTemplate",
            "metadata": {"name": "bench", "namespace": DEFAULT_NAMESPACE},
            "spec": {"template": {"spec": {}}},
        },
        {
            "apiVersion": CLUSTER_API_VERSION,
            "kind": "ClusterClass",
            "metadata": {"name": "bench", "namespace": DEFAULT_NAMESPACE},
            "spec": {
                "infrastructure": {
                    "ref": {"apiVersion": INFRASTRUCTURE_API_VERSION, "kind": "FakeClusterTemplate", "name": "bench"}
                },
                "controlPlane": {
                    "ref": {
                        "apiVersion": CONTROL_PLANE_API_VERSION,
                        "kind": "KubeadmControlPlaneTemplate",
                        "name": "bench",
                    },
                    "machineInfrastructure": {
                        "ref": {
                            "apiVersion": INFRASTRUCTURE_API_VERSION,
                            "kind": "FakeMachineTemplate",
                            "name": "bench",
                        }
                    },
                },
            },
        },
    ):
        client.create(obj)


def _until(world: World, check: Any) -> float:
    start = world.now()
    while not check():
        if world.now() - start > LIMIT:
            raise RuntimeError("the lifecycle did not finish within the virtual limit")
        world.advance(STEP)
    return world.now() - start


def lifecycle(with_extension: bool) -> tuple[float, float, float]:
    """Wall seconds of the create, upgrade and delete phases for 100 Clusters."""
    server = ExtensionServer(HookResponder()).start() if with_extension else None
    try:
        world = World(audit=False)
        client = world.client()
        _class(world)
        if server is not None:
            _register(world, server)
        names = [f"c{i}" for i in range(CLUSTERS)]

        def clusters() -> list[dict[str, Any]]:
            return client.list(CLUSTER_API_VERSION, "Cluster", DEFAULT_NAMESPACE)["items"]

        def cps() -> list[dict[str, Any]]:
            return client.list(CONTROL_PLANE_API_VERSION, "KubeadmControlPlane", DEFAULT_NAMESPACE)["items"]

        start = time.perf_counter()
        for name in names:
            client.create(_cluster(name))
        _until(world, lambda: len(cps()) == CLUSTERS and all(
            (c.get("status") or {}).get("initialized") for c in cps()))
        created = time.perf_counter() - start
        start = time.perf_counter()
        for name in names:
            client.patch(
                CLUSTER_API_VERSION,
                "Cluster",
                name,
                {"spec": {"topology": {"version": "v1.32.0"}}},
                namespace=DEFAULT_NAMESPACE,
            )
        _until(world, lambda: all((c.get("status") or {}).get("version") == "v1.32.0" for c in cps()) and not any(
            "runtime.cluster.x-k8s.io/pending-hooks" in (c["metadata"].get("annotations") or {}) for c in clusters()))
        upgraded = time.perf_counter() - start
        start = time.perf_counter()
        for name in names:
            client.delete(CLUSTER_API_VERSION, "Cluster", name, DEFAULT_NAMESPACE)
        _until(world, lambda: not clusters())
        deleted = time.perf_counter() - start
        return created, upgraded, deleted
    finally:
        if server is not None:
            server.stop()


def main() -> None:
    calls_per_second()
    bare = lifecycle(with_extension=False)
    hooked = lifecycle(with_extension=True)
    for phase, without, with_hooks in zip(("create", "upgrade", "delete"), bare, hooked):
        report(f"{CLUSTERS} ClusterClass Clusters: {phase} (no extension)", without, "s")
        report(f"{CLUSTERS} ClusterClass Clusters: {phase} (hooks over HTTPS)", with_hooks, "s", without,
               "no extension")
    report(f"{CLUSTERS} ClusterClass Clusters: whole lifecycle (hooks over HTTPS)", sum(hooked), "s", sum(bare),
           "no extension")


if __name__ == "__main__":
    main()
