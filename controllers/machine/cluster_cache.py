"""Clients of workload clusters, reached only through their kubeconfig Secret (``<cluster>-kubeconfig``,
key ``value``) in the management cluster, as Cluster API's ClusterCache reaches them."""

from __future__ import annotations

import base64
import binascii

from controllers.machine.errors import ReconcileError
from harness.client import ApiError, Client
from harness.client.interface import shared_reads
from harness.kube.names.capi import KUBECONFIG_DATA_KEY

KUBECONFIG_SECRET = "{cluster}-kubeconfig"
# clustercache.ErrClusterNotConnected, as GetClient wraps it.
CONNECTION_DOWN = "connection to the workload cluster is down"
GET_CLIENT_ERROR = "error getting client"
# Answers of the management cluster that say nothing about the workload cluster's connection.
TRANSIENT_CODES = (429, 500, 503, 504)


class ClusterCache:
    """One client per workload cluster, rebuilt when its kubeconfig changes."""

    def __init__(self, management: Client) -> None:
        self.management = management
        self._clients: dict[tuple[str, str], tuple[str, Client]] = {}

    def client(self, namespace: str, cluster: str) -> Client:
        """The client of the workload cluster of ``namespace/cluster``. Raises :class:`ReconcileError`
        (``error getting client: connection to the workload cluster is down``) when it cannot be reached."""
        try:
            secret = self.management.get("v1", "Secret", KUBECONFIG_SECRET.format(cluster=cluster), namespace,
                                         **shared_reads(self.management))  # only its text is read
            text = base64.b64decode((secret.get("data") or {}).get(KUBECONFIG_DATA_KEY, "")).decode()
        except ApiError as err:
            cached = self._clients.get((namespace, cluster))
            if cached is not None and err.code in TRANSIENT_CODES:
                # The management cluster stumbled (throttled, a server error), not the connection:
                # ClusterCache keeps a working connection rather than re-reading the Secret per call.
                return cached[1]
            self._clients.pop((namespace, cluster), None)
            raise ReconcileError(f"{GET_CLIENT_ERROR}: {CONNECTION_DOWN}") from err
        except (ConnectionError, binascii.Error, UnicodeDecodeError) as err:
            self._clients.pop((namespace, cluster), None)
            raise ReconcileError(f"{GET_CLIENT_ERROR}: {CONNECTION_DOWN}") from err
        cached = self._clients.get((namespace, cluster))
        if cached is not None and cached[0] == text:
            return cached[1]
        try:
            remote = self.management.for_kubeconfig(text)
        except (ValueError, ConnectionError) as err:
            raise ReconcileError(f"{GET_CLIENT_ERROR}: {CONNECTION_DOWN}") from err
        self._clients[(namespace, cluster)] = (text, remote)
        return remote

    def forget(self, namespace: str, cluster: str) -> None:
        """Drop the client of a cluster that went away."""
        self._clients.pop((namespace, cluster), None)
