"""What the Cluster API reconcilers (Cluster, Machine, MachineSet, MachineDeployment) share: the
management cluster's client, an event recorder under the controller's component name, and the start of a
reconcile, where the controller's finalizer is added before anything else is done."""

from __future__ import annotations

from typing import Any

from harness.client import Client, Controller, EventRecorder, Request, add_finalizer, find_in
from harness.kube.names.capi import CLUSTER_API_VERSION


class ClusterApiReconciler(Controller):
    """A controller of ``cluster.x-k8s.io/v1beta1`` objects of the management cluster; subclasses set
    ``event_component`` (the events' ``source.component``)."""

    event_component = ""

    def __init__(self, client: Client) -> None:
        super().__init__()
        self.client = client
        self.recorder = EventRecorder(client, self.event_component)

    def get_with_finalizer(self, kind: str, request: Request, finalizer: str) -> dict[str, Any] | None:
        """The object the request names, once it carries ``finalizer``. None when it is gone, or when the
        finalizer was just added: added first, so that a deletion can never race ahead of it, and the
        write brings the object back to the queue."""
        obj = find_in(self.client, CLUSTER_API_VERSION, kind, request.name, request.namespace)
        if obj is None or add_finalizer(self.client, obj, finalizer):
            return None
        return obj
