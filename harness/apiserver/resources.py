"""What a cluster serves: one :class:`ResourceType` per group/version/resource.

A cluster starts with the built-in kinds (:mod:`harness.apiserver.builtins`) and gains one entry per
served version of every established CustomResourceDefinition.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from harness.kube import errors

VERBS_ALL = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class ResourceType:
    """One served resource: its names, scope and what its strategy does on writes."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    singular: str = ""
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    # Whether the kind has the status and scale subresources (a CRD says so in its version); every
    # other subresource declares the resources it serves (harness/apiserver/subresources/).
    status: bool = False
    scale: bool = False
    # Custom resources: generation counts any non-metadata, non-status change; PUT needs an RV;
    # only JSON, merge and apply patches.
    custom: bool = False
    # Kinds without `generation` (ConfigMap, Secret, Event, ...).
    has_generation: bool = True
    # name rule for metadata.name: "subdomain", "label", "label1035", "path".
    name_rule: str = "subdomain"
    verbs: tuple[str, ...] = VERBS_ALL
    # Table columns for `kubectl get`: (name, type, json path or None, priority, description).
    columns: tuple[tuple[str, str, str, int, str], ...] = field(default=(), compare=False)
    # CRD `selectableFields` json paths (custom resources only).
    selectable_fields: tuple[str, ...] = ()
    schema: dict[str, Any] | None = field(default=None, compare=False, hash=False)

    # The derived names are worked out once per resource (they are read several times by every
    # write); the fields they come from never change (frozen), and the cached values are no fields
    # (not compared, hashed or printed).
    @functools.cached_property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_version(self) -> str:
        return self.api_version

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @functools.cached_property
    def qualified(self) -> str:
        """``plural.group`` as used in error messages (``pods``, ``deployments.apps``)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


class Registry:
    """The resources one cluster serves, looked up by plural, kind or short name."""

    def __init__(self) -> None:
        self._by_plural: dict[tuple[str, str, str], ResourceType] = {}
        self._by_kind: dict[tuple[str, str], ResourceType] = {}
        self.generation = 0  # bumped on every change, so discovery caches can tell
        # What an in-process client's discovery made of this registry, and at which generation.
        self.discovery_cache: tuple[int, list[dict[str, Any]]] | None = None

    def add(self, rt: ResourceType) -> None:
        self._by_plural[(rt.group, rt.version, rt.plural)] = rt
        self._by_kind[(rt.api_version, rt.kind)] = rt
        self.generation += 1

    def remove(self, rt: ResourceType) -> None:
        self._by_plural.pop((rt.group, rt.version, rt.plural), None)
        self._by_kind.pop((rt.api_version, rt.kind), None)
        self.generation += 1

    def all(self) -> list[ResourceType]:
        return list(self._by_plural.values())

    def groups(self) -> dict[str, list[str]]:
        """Group name → its versions, in the order they were added."""
        out: dict[str, list[str]] = {}
        for rt in self._by_plural.values():
            versions = out.setdefault(rt.group, [])
            if rt.version not in versions:
                versions.append(rt.version)
        return out

    def in_group_version(self, group: str, version: str) -> list[ResourceType]:
        return [rt for rt in self._by_plural.values() if rt.group == group and rt.version == version]

    def by_plural(self, group: str, version: str, plural: str) -> ResourceType:
        """The resource at ``/apis/<group>/<version>/<plural>``; 404 ``NotFound`` when absent."""
        rt = self._by_plural.get((group, version, plural))
        if rt is None:
            raise errors.StatusError(
                errors.status(404, "NotFound", "the server could not find the requested resource", {})
            )
        return rt

    def by_kind(self, api_version: str, kind: str) -> ResourceType:
        """The resource serving ``kind`` in ``api_version``; 404 when no such kind is served."""
        rt = self._by_kind.get((api_version, kind))
        if rt is None:
            raise errors.StatusError(
                errors.status(
                    404,
                    "NotFound",
                    f'the server could not find the requested resource (no kind "{kind}" is registered '
                    f'for version "{api_version}")',
                    {},
                )
            )
        return rt

    def find_kind(self, api_version: str, kind: str) -> ResourceType | None:
        return self._by_kind.get((api_version, kind))

    def kinds_named(self, kind: str) -> list[ResourceType]:
        return [rt for rt in self._by_plural.values() if rt.kind == kind]
