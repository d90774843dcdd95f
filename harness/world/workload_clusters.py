"""Workload clusters: one per Cluster API ``Cluster`` in the management cluster.

The world plays the infrastructure that makes a cluster exist: when a ``Cluster`` appears, a
workload cluster (its own API, store and simulators) comes up and the management cluster gets
the Secret ``<name>-kubeconfig`` (key ``value``) pointing at it, as Cluster API's control plane
providers write it. When the ``Cluster`` object is gone, so is its workload cluster.

Knob: ``harness.test/workload-unreachable: "true"`` on a ``Cluster`` takes its workload cluster away (its
API stops answering; what it held is lost) while the ``Cluster`` stays; without the annotation a fresh,
empty workload cluster comes back.
"""

from __future__ import annotations

import base64
from collections.abc import Callable

from harness.client import ApiError, Client, Controller, Request, Result
from harness.kube.names.capi import CLUSTER_API_VERSION, CLUSTER_NAME_LABEL, KUBECONFIG_DATA_KEY, KUBECONFIG_SECRET_TYPE
from harness.kube.names.knobs import WORKLOAD_UNREACHABLE_ANNOTATION


def kubeconfig_secret_name(cluster: str) -> str:
    return f"{cluster}-kubeconfig"


class WorkloadClusterProvisioner(Controller):
    """Brings workload clusters up and down with the ``Cluster`` objects of the management cluster."""

    name = "workload-clusters"

    def __init__(
        self,
        client: Client,
        *,
        ensure: Callable[[str], None],
        remove: Callable[[str], None],
        kubeconfig: Callable[[str], str],
    ) -> None:
        super().__init__()
        self.client = client
        self._ensure = ensure
        self._remove = remove
        self._kubeconfig = kubeconfig

    def setup(self) -> None:
        self.watch(self.client, CLUSTER_API_VERSION, "Cluster")

    def reconcile(self, request: Request) -> Result | None:
        workload = f"{request.namespace}/{request.name}"
        try:
            cluster = self.client.get(CLUSTER_API_VERSION, "Cluster", request.name, request.namespace)
        except ApiError as err:
            if err.code != 404:
                raise
            self._remove(workload)
            return None
        if (cluster["metadata"].get("annotations") or {}).get(WORKLOAD_UNREACHABLE_ANNOTATION) == "true":
            self._remove(workload)
            return None
        self._ensure(workload)
        self._write_secret(cluster, workload)
        return None

    def _write_secret(self, cluster: dict, workload: str) -> None:  # type: ignore[type-arg]
        meta = cluster["metadata"]
        value = base64.b64encode(self._kubeconfig(workload).encode()).decode()
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {
                "name": kubeconfig_secret_name(meta["name"]),
                "namespace": meta["namespace"],
                "labels": {CLUSTER_NAME_LABEL: meta["name"]},
                "ownerReferences": [{"apiVersion": CLUSTER_API_VERSION, "kind": "Cluster", "name": meta["name"],
                                     "uid": meta["uid"], "controller": True}],
            },
            "type": KUBECONFIG_SECRET_TYPE,
            "data": {KUBECONFIG_DATA_KEY: value},
        }
        try:
            existing = self.client.get("v1", "Secret", secret["metadata"]["name"], meta["namespace"])
        except ApiError as err:
            if err.code != 404:
                raise
            try:
                self.client.create(secret)
            except ApiError as create_err:
                # A terminating namespace refuses new content; the cluster is going away anyway.
                if create_err.code not in (403, 409):
                    raise
            return
        if (existing.get("data") or {}).get(KUBECONFIG_DATA_KEY) != value:
            existing["data"] = {KUBECONFIG_DATA_KEY: value}
            self.client.update(existing)
