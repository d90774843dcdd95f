"""What the HTTP facade needs from a world (the world itself lives in a higher layer)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from harness.apiserver.audit import AuditLog
from harness.apiserver.clusters import ClusterSet


class ServedWorld(Protocol):
    """Clusters to serve, a clock to read and move, a way to let controllers catch up, and the
    simulators and workload clusters the admin API reaches."""

    clusters: ClusterSet
    audit: AuditLog
    simulator_names: list[str]
    controller_names: list[str]

    def simulator(self, name: str, cluster: str) -> Any:
        """The simulator ``name`` of ``cluster`` (KeyError if it has none)."""
        ...

    def set_enabled(self, name: str, enabled: bool, cluster: str | None = None) -> None:
        """Switch a simulator off (its events wait) or on, in one cluster or (None) in all."""
        ...

    def restart_controllers(self, names: list[str] | None = None) -> list[str]:
        """Replace the reference controllers ``names`` (None: all) with fresh instances; the names."""
        ...

    def add_cluster(self, name: str) -> Any:
        """Create the workload cluster ``name`` (``<namespace>/<name>``) unless it exists."""
        ...

    def settle(self) -> Any:
        """Run everything due now until nothing is."""
        ...

    def advance(self, seconds: float) -> None:
        """Move virtual time forward, running due work, then settle."""
        ...

    def advance_until(
        self, target: float, *, stop_after_write: bool = False, pause: Callable[[], bool] | None = None
    ) -> tuple[float, bool]:
        """Move virtual time forward to ``target`` (stopping at the first instant with a write,
        if asked, or when ``pause`` answers True), running due work, then settle; the time reached
        and whether anything was written."""
        ...

    def next_due(self) -> float | None:
        """When work next falls due, or None."""
        ...

    def retry_due(self) -> float | None:
        """When a retry of something a controller failed at next falls due, or None."""
        ...

    @property
    def follows_wall_time(self) -> bool:
        """Whether the clock moves with wall time between advances."""
        ...

    def now(self) -> float:
        """Current virtual time (Unix seconds)."""
        ...
