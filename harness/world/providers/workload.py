"""Reaching a CAPI Cluster's workload cluster the way a provider does: through the kubeconfig Secret
``<cluster>-kubeconfig`` (key ``value``) in the management cluster."""

from __future__ import annotations

import base64
import binascii

from harness.client import ApiError, Client
from harness.kube.names.capi import KUBECONFIG_DATA_KEY
from harness.world.workload_clusters import kubeconfig_secret_name


class WorkloadClients:
    """Clients of workload clusters, one per cluster, rebuilt when the kubeconfig changes."""

    def __init__(self, management: Client) -> None:
        self.management = management
        self._clients: dict[tuple[str, str], tuple[str, Client]] = {}

    def get(self, namespace: str, cluster: str) -> Client | None:
        """The client of ``namespace/cluster``'s workload cluster (None while its kubeconfig is missing)."""
        try:
            secret = self.management.get("v1", "Secret", kubeconfig_secret_name(cluster), namespace)
            text = base64.b64decode((secret.get("data") or {}).get(KUBECONFIG_DATA_KEY, "")).decode()
        except (ApiError, ConnectionError, binascii.Error, UnicodeDecodeError):
            return None
        if not text:
            return None
        cached = self._clients.get((namespace, cluster))
        if cached is not None and cached[0] == text:
            return cached[1]
        client = self.management.for_kubeconfig(text)
        self._clients[(namespace, cluster)] = (text, client)
        return client
