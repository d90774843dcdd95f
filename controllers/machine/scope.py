"""What one reconcile of a Machine reads, decides and may ask of its controller (upstream's ``scope``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from controllers.machine.api import meta
from controllers.machine.conditions import DELETING_DELETING_REASON
from controllers.machine.errors import ReconcileError
from harness.client import Client, EventRecorder


@dataclass
class Scope:
    """The objects of one reconcile and the Deleting condition's pending reason and message.

    ``machine`` is the working copy the phases change; the controller writes it at the end (and when
    :meth:`patch` is called in between)."""

    management: Client
    recorder: EventRecorder
    cluster: dict[str, Any]
    machine: dict[str, Any]
    now: float
    remote_client: Callable[[], Client]
    patch_machine: Callable[[Scope], None]
    defer: Callable[[float], None]
    active_control_plane_machines: Callable[[], int]
    watch_nodes: Callable[[Client], None] = lambda _client: None
    # The name of the Node the watch cache saw with a providerID ("" when none).
    node_hint: Callable[[str], str] = lambda _provider_id: ""
    infra_machine: dict[str, Any] | None = None
    infra_machine_not_found: bool = False
    bootstrap_config: dict[str, Any] | None = None
    bootstrap_config_not_found: bool = False
    node: dict[str, Any] | None = None
    reconcile_delete_executed: bool = False
    deleting_reason: str = DELETING_DELETING_REASON
    deleting_message: str = ""
    log_values: dict[str, str] = field(default_factory=dict)
    # The Machine as it was last read or written: what the next write is compared with.
    written: dict[str, Any] = field(default_factory=dict)

    def remote(self) -> Client:
        """The workload cluster's client; raises :class:`ReconcileError` when it cannot be reached."""
        return self.remote_client()

    def remote_or_error(self) -> tuple[Client | None, str]:
        """(client, "") or (None, the error text)."""
        try:
            return self.remote_client(), ""
        except ReconcileError as err:
            return None, str(err)

    def patch(self) -> None:
        """Write what the phases changed so far (the intermediate patch before drain)."""
        self.patch_machine(self)

    def event(self, event_type: str, reason: str, message: str) -> None:
        """Record an Event about the Machine."""
        self.recorder.event(self.machine, event_type, reason, message)

    @property
    def node_name(self) -> str:
        """``status.nodeRef.name`` ("" when unset)."""
        return str(((self.machine.get("status") or {}).get("nodeRef") or {}).get("name", ""))

    @property
    def name(self) -> str:
        return str(meta(self.machine).get("name", ""))

    @property
    def namespace(self) -> str:
        return str(meta(self.machine).get("namespace", ""))
