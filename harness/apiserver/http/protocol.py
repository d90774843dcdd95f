"""What the HTTP facade needs from a world (the world itself lives in a higher layer)."""

from __future__ import annotations

from typing import Any, Protocol

from harness.apiserver.audit import AuditLog
from harness.apiserver.clusters import ClusterSet


class ServedWorld(Protocol):
    """Clusters to serve, a clock to read and move, and a way to let controllers catch up."""

    clusters: ClusterSet
    audit: AuditLog

    def settle(self) -> Any:
        """Run everything due now until nothing is."""
        ...

    def advance(self, seconds: float) -> None:
        """Move virtual time forward, running due work, then settle."""
        ...

    def now(self) -> float:
        """Current virtual time (Unix seconds)."""
        ...
