"""Several clusters in one process: the management cluster and one workload cluster per CAPI Cluster.

Over HTTP the management cluster is served at the root and a workload cluster at
``/clusters/<namespace>/<name>``; a kubeconfig names a cluster by that path.
"""

from __future__ import annotations

import base64
import functools
from urllib.parse import urlparse

import yaml

from harness.apiserver.audit import AuditLog
from harness.apiserver.faults import FaultInjector
from harness.apiserver.server import APIServer
from harness.clock import VirtualClock

# libyaml's safe loader where PyYAML has it (kubeconfigs are parsed often; same documents).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MANAGEMENT = "management"
WORKLOAD_PREFIX = "/clusters/"
# What kubeconfigs name as the server when no HTTP facade is running (in-process worlds).
IN_PROCESS_URL = "http://in-process.lifecycle-tck.invalid"


def workload_name(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


def cluster_path(cluster: str) -> str:
    """URL path prefix of a cluster: "" for management, ``/clusters/<ns>/<name>`` otherwise."""
    return "" if cluster == MANAGEMENT else WORKLOAD_PREFIX + cluster


def cluster_from_url(url: str) -> str:
    """The cluster a server URL addresses (by its path)."""
    path = urlparse(url).path.rstrip("/")
    if path.startswith(WORKLOAD_PREFIX):
        parts = path[len(WORKLOAD_PREFIX):].split("/")
        if len(parts) >= 2:
            return workload_name(parts[0], parts[1])
    return MANAGEMENT


class ClusterSet:
    """The clusters of one world, sharing a clock and an audit log."""

    def __init__(
        self,
        clock: VirtualClock,
        *,
        audit: AuditLog | None = None,
        history: int | None = None,
        history_bytes: int | None = None,
    ) -> None:
        """``history`` / ``history_bytes``: each cluster's watch history limits (see :class:`Store`)."""
        self.clock = clock
        self.audit = audit if audit is not None else AuditLog()
        self._history = history
        self._history_bytes = history_bytes
        self.base_url = IN_PROCESS_URL
        self.token: str | None = None
        self.ca_pem: bytes | None = None  # the CA that signs the server certificate, when served over TLS
        self._clusters: dict[str, APIServer] = {}
        # The fault rules every client of these clusters meets (in-process and over HTTP).
        self.faults = FaultInjector()
        self.add(MANAGEMENT)

    @property
    def management(self) -> APIServer:
        return self._clusters[MANAGEMENT]

    def add(self, name: str) -> APIServer:
        """The cluster called ``name``, created if it does not exist yet."""
        if name not in self._clusters:
            self._clusters[name] = APIServer(
                name, self.clock, audit=self.audit, history=self._history, history_bytes=self._history_bytes
            )
        return self._clusters[name]

    def remove(self, name: str) -> None:
        if name != MANAGEMENT:
            self._clusters.pop(name, None)

    def get(self, name: str) -> APIServer | None:
        return self._clusters.get(name)

    def names(self) -> list[str]:
        return list(self._clusters)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._clusters.values())

    def url(self, cluster: str) -> str:
        return self.base_url.rstrip("/") + cluster_path(cluster)

    def kubeconfig(self, clusters: list[str] | None = None, *, current: str = MANAGEMENT) -> str:
        """A kubeconfig with one context per cluster, named as the cluster (``management``,
        ``<namespace>/<name>``)."""
        names = clusters if clusters is not None else self.names()
        entries = tuple((n, self.url(n)) for n in names)
        return _kubeconfig_text(entries, current, self.token, self.ca_pem)


# Remembered per content: each World writes the same kubeconfig Secrets for its workload clusters (the
# same names, URLs and credentials scenario after scenario), and the YAML emitter is slow (~0.7 ms each).
@functools.lru_cache(maxsize=256)
def _kubeconfig_text(entries: tuple[tuple[str, str], ...], current: str, token: str | None,
                     ca_pem: bytes | None) -> str:
    """The kubeconfig text for ``(name, server URL)`` pairs (a pure function of its arguments)."""
    names = [name for name, _url in entries]
    user: dict[str, object] = {"token": token} if token else {"username": "admin"}

    def cluster_entry(url: str) -> dict[str, str]:
        entry = {"server": url}
        if ca_pem:
            entry["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
        return entry

    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": n, "cluster": cluster_entry(url)} for n, url in entries],
        "users": [{"name": "lifecycle-tck", "user": user}],
        "contexts": [{"name": n, "context": {"cluster": n, "user": "lifecycle-tck"}} for n in names],
        "current-context": current if current in names else names[0],
    }
    return yaml.safe_dump(config, sort_keys=False)


# Remembered per text: every workload-cluster client the controllers make parses its Secret's kubeconfig (a
# pure function of the text; hundreds of calls per run for a handful of texts).
@functools.lru_cache(maxsize=256)
def server_from_kubeconfig(text: str) -> str:
    """The server URL of a kubeconfig's current context."""
    config = yaml.load(text, Loader=_LOADER) or {}
    current = config.get("current-context")
    contexts = {c["name"]: c.get("context", {}) for c in config.get("contexts") or []}
    clusters = {c["name"]: c.get("cluster", {}) for c in config.get("clusters") or []}
    cluster_name = contexts.get(current, {}).get("cluster") if current else None
    if cluster_name is None and clusters:
        cluster_name = next(iter(clusters))
    server = clusters.get(cluster_name or "", {}).get("server")
    if not server:
        raise ValueError("kubeconfig names no server")
    return str(server)
