"""The protocol every subresource implements (see :mod:`harness.apiserver.subresources`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.apiserver.resources import ResourceType
from harness.apiserver.server import APIServer
from harness.kube import errors

GET = "get"
UPDATE = "update"
PATCH = "patch"
CREATE = "create"
# The HTTP method each subresource verb is served on.
VERB_METHODS = {GET: "GET", UPDATE: "PUT", PATCH: "PATCH", CREATE: "POST"}
# status and scale (and the other read-write subresources) take these.
READ_WRITE = (GET, PATCH, UPDATE)


@dataclass(frozen=True)
class SubresourceRequest:
    """One request to a subresource: the object it addresses and the caller's options."""

    server: APIServer
    rt: ResourceType
    namespace: str | None
    name: str
    user: str = "admin"
    dry_run: bool = False
    # The manager a write is recorded under (None: the user; an apply without one is refused).
    field_manager: str | None = None
    force: bool = False
    # False: an in-process caller that discards the written object (the write answers None).
    answer: bool = True

    def __init__(
        self, server: APIServer, rt: ResourceType, namespace: str | None, name: str, user: str = "admin",
        dry_run: bool = False, field_manager: str | None = None, force: bool = False, answer: bool = True,
    ) -> None:
        # The fields above, in their order and with their defaults. The frozen dataclass's own
        # __init__ sets each through object.__setattr__ (about 3 µs for every in-process status write
        # and eviction); the instance's dict takes them directly.
        fields = self.__dict__
        fields["server"] = server
        fields["rt"] = rt
        fields["namespace"] = namespace
        fields["name"] = name
        fields["user"] = user
        fields["dry_run"] = dry_run
        fields["field_manager"] = field_manager
        fields["force"] = force
        fields["answer"] = answer


def _not_allowed() -> errors.StatusError:
    return errors.method_not_allowed("the server does not allow this method on the requested resource")


class Subresource:
    """A subresource's REST storage. Subclasses set the facts and implement the verbs they take."""

    name: str = ""
    verbs: tuple[str, ...] = ()
    # Answered as an HTTP stream by the facade (harness/apiserver/http/streaming.py), not here.
    streaming: bool = False
    # GET may be answered as a Table (``kubectl get --subresource status``).
    tables: bool = False
    # An apply patch is server-side apply with its own fieldManager (else it is merged like the rest).
    applies: bool = False
    # PUT and PATCH derive a field manager (422 for one too long) and record it in managedFields.
    field_managed: bool = True

    def serves(self, rt: ResourceType) -> bool:
        """True when ``rt`` has this subresource."""
        raise NotImplementedError

    def response_kind(self, rt: ResourceType) -> tuple[str, str, str]:
        """(group, version, kind) of what the subresource takes and answers; the parent's by default."""
        return rt.group, rt.version, rt.kind

    @property
    def methods(self) -> tuple[str, ...]:
        """The HTTP methods the subresource answers."""
        return tuple(VERB_METHODS[verb] for verb in self.verbs)

    def get(self, request: SubresourceRequest) -> dict[str, Any]:
        """``GET <resource>/<name>/<subresource>``."""
        raise _not_allowed()

    def update(self, request: SubresourceRequest, body: Any) -> dict[str, Any]:
        """``PUT``: replace what the subresource exposes."""
        raise _not_allowed()

    def patch(self, request: SubresourceRequest, body: Any, patch_type: str) -> tuple[int, dict[str, Any]]:
        """``PATCH``: returns (HTTP code, object)."""
        raise _not_allowed()

    def create(self, request: SubresourceRequest, body: Any) -> dict[str, Any]:
        """``POST``: returns the answer (a ``Status`` carries its own code)."""
        raise _not_allowed()


class ServedBy(Subresource):
    """A subresource of the resources named by (group, plural)."""

    resources: tuple[tuple[str, str], ...] = ()

    def serves(self, rt: ResourceType) -> bool:
        return (rt.group, rt.plural) in self.resources and not rt.custom
