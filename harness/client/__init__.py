"""The one client interface (in-process and HTTP implementations) and the controller runtime."""

from harness.client.events import NORMAL, WARNING, EventRecorder
from harness.client.inprocess import InProcessClient
from harness.client.interface import ApiError, Client, WatchStream, find_in
from harness.client.runtime import DONE, Controller, Manager, Request, Result, SettleError, add_finalizer, owner_mapper
from harness.kube.names.meta import APPLY_PATCH_CONTENT_TYPE as APPLY
from harness.kube.names.meta import JSON_PATCH_CONTENT_TYPE as JSON_PATCH
from harness.kube.names.meta import MERGE_PATCH_CONTENT_TYPE as MERGE
from harness.kube.names.meta import STRATEGIC_MERGE_PATCH_CONTENT_TYPE as STRATEGIC

__all__ = [
    "APPLY", "DONE", "JSON_PATCH", "MERGE", "NORMAL", "STRATEGIC", "WARNING", "ApiError", "Client", "Controller",
    "EventRecorder", "InProcessClient", "Manager", "Request", "Result", "SettleError", "WatchStream", "add_finalizer",
    "find_in", "owner_mapper",
]
