"""The one client interface (in-process and HTTP implementations) and the controller runtime."""

from typing import TYPE_CHECKING, Any

from harness.client.events import NORMAL, WARNING, EventRecorder
from harness.client.interface import ApiError, Client, WatchStream, find_in
from harness.client.runtime import DONE, Controller, Manager, Request, Result, SettleError, add_finalizer, owner_mapper
from harness.kube.client import APPLY, JSON_PATCH, MERGE, STRATEGIC

if TYPE_CHECKING:
    from harness.client.inprocess import InProcessClient

__all__ = [
    "APPLY", "DONE", "JSON_PATCH", "MERGE", "NORMAL", "STRATEGIC", "WARNING", "ApiError", "Client", "Controller",
    "EventRecorder", "InProcessClient", "Manager", "Request", "Result", "SettleError", "WatchStream", "add_finalizer",
    "find_in", "owner_mapper",
]


def __getattr__(name: str) -> Any:
    # InProcessClient brings in the whole API server (about 0.15 s of imports): a controller process, which
    # speaks HTTP only and is started once per scenario in lockstep, does not pay for it.
    if name == "InProcessClient":
        from harness.client.inprocess import InProcessClient

        return InProcessClient
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
