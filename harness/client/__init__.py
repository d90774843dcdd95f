"""The one client interface (in-process and HTTP implementations) and the controller runtime."""

from harness.client.events import NORMAL, WARNING, EventRecorder
from harness.client.inprocess import InProcessClient
from harness.client.interface import ApiError, Client, WatchStream, find_in
from harness.client.runtime import DONE, Controller, Manager, Request, Result, SettleError, add_finalizer, owner_mapper
from harness.kube.client import APPLY, JSON_PATCH, MERGE, STRATEGIC

__all__ = [
    "APPLY", "DONE", "JSON_PATCH", "MERGE", "NORMAL", "STRATEGIC", "WARNING", "ApiError", "Client", "Controller",
    "EventRecorder", "InProcessClient", "Manager", "Request", "Result", "SettleError", "WatchStream", "add_finalizer",
    "find_in", "owner_mapper",
]
