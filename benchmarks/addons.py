"""Add-on deletion with the reference add-on controller: deleting N clusters at once, each matched by P
ClusterProfiles with dependencies (profile i depends on i-1 and i-2: a DAG of chains and diamonds), each
profile deploying one ConfigMap into every workload cluster, with clusterDeletionBehavior RemovePolicies.

One process, in-process world without simulators, the ``addons`` controller only (the Clusters are made
ready by writing their ``ControlPlaneInitialized`` condition, and a benchmark finalizer keeps each
Cluster while it is deleting, so the removal runs against live workload clusters, as while Cluster API
takes a cluster apart). The figure is the wall time from deleting every Cluster to every ClusterSummary
gone (every add-on removed in reverse dependency order, which the run checks); setup is not counted.
``python -m benchmarks.addons [N P]``:
default 100 clusters x 50 profiles, after 10 x 50 and 30 x 50 for the growth ratio.
"""

from __future__ import annotations

import sys
import time

import yaml

from benchmarks.timing import report
from harness.client import Client
from harness.kube.names.capi import CLUSTER_API_VERSION
from harness.kube.names.core import DEFAULT_NAMESPACE
from harness.kube.names.sveltos import CLUSTER_PROFILE_KIND, CLUSTER_SUMMARY_KIND, CONFIG_API_VERSION
from harness.world.world import World

HOLD = "benchmark.test/hold"


def _setup(clusters: int, profiles: int) -> tuple[World, Client]:
    # No simulators: nothing here runs Pods, and each workload cluster's simulators would add watches every
    # step of the manager drains (a cost of the world that grows with the number of clusters, not of the
    # controller measured).
    world = World(audit=True, controllers=["addons"], simulators=[])
    client = world.client()
    for p in range(profiles):
        manifest = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": f"p{p}-addon", "namespace": DEFAULT_NAMESPACE},
        }
        client.create({"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": f"p{p}-manifests", "namespace": DEFAULT_NAMESPACE},
                       "data": {"addon.yaml": yaml.safe_dump(manifest)}})
        client.create(
            {
                "apiVersion": CONFIG_API_VERSION,
                "kind": CLUSTER_PROFILE_KIND,
                "metadata": {"name": f"p{p}"},
                "spec": {
                    "clusterSelector": {"matchLabels": {"env": "bench"}},
                    "dependsOn": [f"p{d}" for d in (p - 1, p - 2) if d >= 0],
                    "policyRefs": [{"kind": "ConfigMap", "namespace": DEFAULT_NAMESPACE, "name": f"p{p}-manifests"}],
                },
            }
        )
    for c in range(clusters):
        cluster = client.create(
            {
                "apiVersion": CLUSTER_API_VERSION,
                "kind": "Cluster",
                "metadata": {
                    "name": f"c{c}",
                    "namespace": DEFAULT_NAMESPACE,
                    "labels": {"env": "bench"},
                    "finalizers": [HOLD],
                },
                "spec": {},
            }
        )
        cluster["status"] = {"conditions": [{"type": "ControlPlaneInitialized", "status": "True",
                                             "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
        client.update_status(cluster)
        world.settle()
    world.settle()
    summaries = client.list(CONFIG_API_VERSION, CLUSTER_SUMMARY_KIND, DEFAULT_NAMESPACE)["items"]
    deployed = [s for s in summaries if ((s.get("status") or {}).get("featureSummaries") or [{}])[0].get(
        "status") == "Provisioned"]
    assert len(deployed) == clusters * profiles, f"{len(deployed)} of {clusters * profiles} deployed"
    return world, client


def delete_clusters(clusters: int, profiles: int) -> float:
    """Wall seconds from deleting every Cluster to every ClusterSummary gone."""
    world, client = _setup(clusters, profiles)
    mark = len(world.audit)
    start = time.perf_counter()
    for c in range(clusters):
        client.delete(CLUSTER_API_VERSION, "Cluster", f"c{c}", DEFAULT_NAMESPACE)
    world.settle()
    wall = time.perf_counter() - start
    left = client.list(CONFIG_API_VERSION, CLUSTER_SUMMARY_KIND, DEFAULT_NAMESPACE)["items"]
    assert not left, f"{len(left)} ClusterSummaries left"
    order: dict[str, list[int]] = {}
    for record in world.audit.query(since=mark, verb="delete", resource="configmaps"):
        if record.cluster != "management":
            order.setdefault(record.cluster, []).append(int(record.name[1:].split("-")[0]))
    assert len(order) == clusters and all(o == sorted(o, reverse=True) for o in order.values()), "order"
    return wall


def main(sizes: tuple[tuple[int, int], ...] = ((10, 50), (30, 50), (100, 50))) -> None:
    print("== add-on deletion (reference add-on controller) ==")
    previous, previous_name = None, ""
    for clusters, profiles in sizes:
        wall = delete_clusters(clusters, profiles)
        report(f"delete {clusters} clusters x {profiles} dependent profiles", wall, "s", previous, previous_name)
        previous, previous_name = wall, f"{clusters} clusters"


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    main(((args[0], args[1]),) if len(args) == 2 else ((10, 50), (30, 50), (100, 50)))
