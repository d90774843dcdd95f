"""The client interface, defined in the vocabulary layer (harness/kube/client.py) so that the steps and
every layer name it without importing an implementation; re-exported here for harness.client's users."""

from __future__ import annotations

from harness.kube.client import ApiError, Client, WatchStream, find_in, obj_ref

__all__ = ["ApiError", "Client", "WatchStream", "find_in", "obj_ref"]
