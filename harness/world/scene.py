"""A scenario's handle on the world: the only thing step definitions talk to.

Steps get clients, move time, read the audit trail and set simulator knobs through a
:class:`Scene`, never through the store, so the same steps run against an in-process world or a
world served over HTTP.
"""

from __future__ import annotations

from typing import Any, Protocol

from harness.apiserver.clusters import MANAGEMENT
from harness.apiserver.faults import FaultRuleError
from harness.client.interface import Client
from harness.clock import VirtualClock
from harness.kube import errors
from harness.world.world import World


class Scene(Protocol):
    """What a step definition may do to the world."""

    def client(self, cluster: str = MANAGEMENT, user: str = "admin") -> Client: ...

    def settle(self) -> None: ...

    def advance(self, seconds: float) -> None: ...

    def now(self) -> float: ...

    def retry_due(self) -> float | None:
        """When a reference controller next retries a request the apiserver failed (the reconcile that
        made it, a watch's list), or None when none is pending."""
        ...

    def audit(self, since: int = 0, **filters: Any) -> list[dict[str, Any]]: ...

    def audit_size(self) -> int: ...

    def configure(self, simulator: str, cluster: str = MANAGEMENT, **knobs: Any) -> None: ...

    def call(self, simulator: str, method: str, *args: Any, cluster: str = MANAGEMENT) -> Any: ...

    def set_enabled(self, simulator: str, enabled: bool, cluster: str | None = None) -> None: ...

    def compact(self, cluster: str = MANAGEMENT) -> None: ...

    def add_cluster(self, name: str) -> None: ...

    def restart_controllers(self, names: list[str] | None = None) -> None:
        """The reference controllers ``names`` (default: all of them) stop as a crash would and new
        instances with nothing in memory take over, from a fresh list+watch; an unknown name is an
        error (KeyError in-process, a 404 ``StatusError`` over HTTP)."""
        ...

    def add_fault(self, rule: dict[str, Any]) -> None:
        """Install a fault rule (the admin API's ``POST faults`` body, harness/apiserver/faults.py) in
        the world; a rule that cannot be used is a 400 ``StatusError``, whatever the transport."""
        ...

    def faults(self) -> dict[str, Any]:
        """The installed rules and what they injected: ``{"items": [rule...], "injected": [...]}``."""
        ...

    def clear_faults(self) -> None:
        """Remove every fault rule and forget what was injected."""
        ...


class InProcessScene:
    """A :class:`Scene` over a :class:`World` in this thread."""

    def __init__(self, world: World) -> None:
        self.world = world

    @property
    def clock(self) -> VirtualClock:
        """The world's clock, for the harness's own Runtime Extension to hold hangs on (nothing else
        moves it behind the world's back)."""
        return self.world.clock

    def client(self, cluster: str = MANAGEMENT, user: str = "admin") -> Client:
        return self.world.client(cluster, user)

    def settle(self) -> None:
        self.world.settle()

    def advance(self, seconds: float) -> None:
        self.world.advance(seconds)

    def now(self) -> float:
        return self.world.now()

    def retry_due(self) -> float | None:
        return self.world.retry_due()

    def audit(self, since: int = 0, **filters: Any) -> list[dict[str, Any]]:
        """Audit records (without diffs) as dicts; filters as :meth:`AuditLog.query`."""
        return [r.to_dict(with_diff=False) | {"old": r.old, "new": r.new}
                for r in self.world.audit.query(since=since, **filters)]

    def audit_size(self) -> int:
        return len(self.world.audit)

    def configure(self, simulator: str, cluster: str = MANAGEMENT, **knobs: Any) -> None:
        target = self.world.simulator(simulator, cluster)
        for name, value in knobs.items():
            if not hasattr(target, name):
                raise AttributeError(f"simulator {simulator} has no knob {name!r}")
            setattr(target, name, value)

    def call(self, simulator: str, method: str, *args: Any, cluster: str = MANAGEMENT) -> Any:
        return getattr(self.world.simulator(simulator, cluster), method)(*args)

    def set_enabled(self, simulator: str, enabled: bool, cluster: str | None = None) -> None:
        self.world.set_enabled(simulator, enabled, cluster)

    def compact(self, cluster: str = MANAGEMENT) -> None:
        server = self.world.clusters.get(cluster)
        if server is None:
            raise KeyError(cluster)
        server.store.compact()

    def add_cluster(self, name: str) -> None:
        self.world.add_cluster(name)

    def restart_controllers(self, names: list[str] | None = None) -> None:
        self.world.restart_controllers(names)

    def add_fault(self, rule: dict[str, Any]) -> None:
        try:
            self.world.clusters.faults.add(rule)
        except FaultRuleError as err:
            raise errors.bad_request(str(err)) from None

    def faults(self) -> dict[str, Any]:
        return self.world.clusters.faults.to_dict()

    def clear_faults(self) -> None:
        self.world.clusters.faults.clear()
