"""The CRD finalizer: a deleted CustomResourceDefinition takes its custom resources with it.

When a CRD has a deletionTimestamp and the ``customresourcecleanup.apiextensions.k8s.io``
finalizer (the apiserver adds it on the first DELETE), this controller sets the ``Terminating``
condition (``InstanceDeletionInProgress``), deletes every instance, and once none is left (instances
with finalizers are waited for, re-checked every 5 s as upstream polls) sets ``Terminating=False``
(``InstanceDeletionCompleted``) and removes the finalizer. The apiserver then forgets the kinds and
their storage (``harness/apiserver/crd.py``).

Upstream writes the condition and the finalizer removal in one ``/status`` update; the fake's status
subresource changes only ``status``, so the finalizer goes in a separate JSON merge patch.
"""

from __future__ import annotations

from typing import Any

from harness.apiserver.crd import (
    CLEANUP_FINALIZER,
    ESTABLISHED,
    MESSAGE_DELETION_COMPLETED,
    MESSAGE_DELETION_IN_PROGRESS,
    REASON_DELETION_COMPLETED,
    REASON_DELETION_IN_PROGRESS,
    TERMINATING,
    is_condition_true,
    set_condition,
)
from harness.client import ApiError, Client, Controller, Request, Result
from harness.client.interface import shared_reads
from harness.clock import rfc3339
from harness.kube.names.apiextensions import APIEXTENSIONS_V1, CRD_KIND
from harness.kube.objects import clone

# The CRD finalizer polls the remaining instances every 5 s (wait.PollImmediate(5*time.Second, ...)).
RECHECK_SECONDS = 5.0


class CRDCleanupController(Controller):
    name = "crd-cleanup"

    def __init__(self, client: Client) -> None:
        super().__init__()
        self.client = client

    def setup(self) -> None:
        self.watch(self.client, APIEXTENSIONS_V1, CRD_KIND)

    def reconcile(self, request: Request) -> Result | None:
        """Delete a terminating CRD's instances; drop its finalizer once none remain."""
        try:
            # Read as a view (each CRD's creation and status write brings a look, and a CRD with its schema is
            # a large copy); copied below only when this controller has something to write.
            crd = self.client.get(APIEXTENSIONS_V1, CRD_KIND, request.name, **shared_reads(self.client))
        except ApiError as err:
            if err.code == 404:
                return None
            raise
        meta = crd["metadata"]
        if not meta.get("deletionTimestamp") or CLEANUP_FINALIZER not in (meta.get("finalizers") or []):
            return None
        crd = clone(crd)
        crd = self._set_terminating(crd, "True", REASON_DELETION_IN_PROGRESS, MESSAGE_DELETION_IN_PROGRESS)
        if crd is None:
            return None
        if is_condition_true(crd, ESTABLISHED) and self._delete_instances(crd):
            return Result(requeue_after=RECHECK_SECONDS)
        crd = self._set_terminating(crd, "False", REASON_DELETION_COMPLETED, MESSAGE_DELETION_COMPLETED)
        if crd is None:
            return None
        finalizers = [f for f in crd["metadata"].get("finalizers") or [] if f != CLEANUP_FINALIZER]
        patch = {"metadata": {"finalizers": finalizers or None, "resourceVersion": crd["metadata"]["resourceVersion"]}}
        try:
            self.client.patch(APIEXTENSIONS_V1, CRD_KIND, request.name, patch)
        except ApiError as err:
            if err.code == 409:
                return Result(requeue=True)  # changed meanwhile: look again
            if err.code != 404:
                raise
        return None

    def _set_terminating(self, crd: dict[str, Any], status: str, reason: str, message: str) -> dict[str, Any] | None:
        """The CRD with the Terminating condition set (written when it changed); None when it is gone."""
        if not set_condition(crd, TERMINATING, status, reason, message, rfc3339(self.client.now())):
            return crd
        try:
            return self.client.update_status(crd)
        except ApiError as err:
            if err.code == 404:
                return None
            raise

    def _delete_instances(self, crd: dict[str, Any]) -> int:
        """Delete every instance not already deleting; return how many still exist."""
        api_version = self._served_api_version(crd)
        if api_version is None:
            return 0
        kind = crd["spec"]["names"]["kind"]
        try:
            items = self.client.list(api_version, kind)["items"]
        except ApiError as err:
            if err.code == 404:
                return 0  # the kind is no longer served: nothing can be listed or left
            raise
        for item in items:
            meta = item["metadata"]
            if meta.get("deletionTimestamp"):
                continue
            try:
                self.client.delete(api_version, kind, meta["name"], meta.get("namespace"))
            except ApiError as err:
                if err.code != 404:
                    raise
        if not items:
            return 0
        # Instances without finalizers went at once; look again, as the upstream poll starts immediately.
        return len(self.client.list(api_version, kind)["items"])

    @staticmethod
    def _served_api_version(crd: dict[str, Any]) -> str | None:
        group = crd["spec"]["group"]
        versions = [v for v in crd["spec"].get("versions") or [] if v.get("served")]
        storage = [v for v in versions if v.get("storage")]
        chosen = (storage or versions or [None])[0]
        return f"{group}/{chosen['name']}" if chosen else None
