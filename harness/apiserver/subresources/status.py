"""The ``status`` subresource of every kind with one, and ``certificatesigningrequests/approval``.

Both write only the object's ``status`` (the rest of a PUT or PATCH body is ignored) and never move
``metadata.generation``; the status-only write itself is :meth:`APIServer.update` /
:meth:`APIServer.patch` with the subresource named (``STATUS_LIKE_SUBRESOURCES``), so the main
resource and its status share one implementation of optimistic concurrency, apply and audit.
"""

from __future__ import annotations

from typing import Any

from harness.apiserver.resources import ResourceType
from harness.apiserver.subresources.base import READ_WRITE, ServedBy, Subresource, SubresourceRequest

CERTIFICATES_GROUP = "certificates.k8s.io"


class _StatusLike(Subresource):
    verbs = READ_WRITE
    applies = True

    def get(self, request: SubresourceRequest) -> dict[str, Any]:
        return request.server.get(request.rt, request.namespace, request.name)

    def update(self, request: SubresourceRequest, body: Any) -> dict[str, Any] | None:
        return request.server.update(
            request.rt, request.namespace, request.name, body, subresource=self.name, dry_run=request.dry_run,
            user=request.user, field_manager=request.field_manager, answer=request.answer,
        )

    def patch(self, request: SubresourceRequest, body: Any, patch_type: str) -> tuple[int, dict[str, Any]]:
        return request.server.patch(
            request.rt, request.namespace, request.name, body, patch_type, subresource=self.name,
            dry_run=request.dry_run, field_manager=request.field_manager, force=request.force, user=request.user,
        )


class Status(_StatusLike):
    """``<resource>/status``: every kind whose strategy separates status (``ResourceType.status``)."""

    name = "status"
    tables = True

    def serves(self, rt: ResourceType) -> bool:
        return rt.status


class Approval(_StatusLike, ServedBy):
    """``certificatesigningrequests/approval``: the Approved/Denied conditions of a CSR's status."""

    name = "approval"
    resources = ((CERTIFICATES_GROUP, "certificatesigningrequests"),)


STATUS = Status()
APPROVAL = Approval()
