"""``meta.k8s.io`` Tables: what ``kubectl get`` asks for instead of objects.

kubectl sends ``Accept: application/json;as=Table;v=v1;g=meta.k8s.io, ...``; the answer keeps the
list's metadata and has one row per object with the kind's cells and, in ``row.object``, the
object's metadata as a ``PartialObjectMetadata`` (or the whole object for ``includeObject=Object``)
so that ``-A``, ``--show-labels`` and ``-L`` work.
"""

from __future__ import annotations

from typing import Any

from harness.apiserver.http.columns import Printer, printer_for
from harness.apiserver.http.negotiation import MediaType
from harness.apiserver.resources import ResourceType
from harness.kube import errors
from harness.kube.names.meta import META_GROUP as TABLE_GROUP

TABLE_KIND = "Table"
TABLE_VERSIONS = ("v1", "v1beta1")
PARTIAL_KIND = "PartialObjectMetadata"
INCLUDE_METADATA = "Metadata"
INCLUDE_OBJECT = "Object"
INCLUDE_NONE = "None"
INCLUDE_VALUES = (INCLUDE_NONE, INCLUDE_METADATA, INCLUDE_OBJECT)


def table_version(accept: list[MediaType]) -> str | None:
    """The Table version the client prefers (``v1``/``v1beta1``), or None when it prefers objects."""
    for media in accept:
        if not media.accepts_json():
            continue
        wanted = media.params.get("as")
        if wanted is None:
            return None
        if wanted == TABLE_KIND and media.params.get("g") == TABLE_GROUP and media.params.get("v") in TABLE_VERSIONS:
            return media.params["v"]
    return None


def include_object(value: str | None) -> str:
    """The ``includeObject`` policy (default ``Metadata``); 400 for an unknown value."""
    if not value:
        return INCLUDE_METADATA
    if value not in INCLUDE_VALUES:
        raise errors.bad_request(f'includeObject: Unsupported value: "{value}": supported values: '
                                 + ", ".join(f'"{v}"' for v in INCLUDE_VALUES))
    return value


class TableWriter:
    """Turns objects of one resource into Tables (with column definitions until told otherwise)."""

    def __init__(self, rt: ResourceType, version: str, include: str) -> None:
        self.printer: Printer = printer_for(rt)
        self.api_version = f"{TABLE_GROUP}/{version}"
        self.include = include

    def _row(self, obj: dict[str, Any], now: float) -> dict[str, Any]:
        row: dict[str, Any] = {"cells": self.printer.cells(obj, now)}
        if self.printer.conditions is not None:
            conditions = self.printer.conditions(obj)
            if conditions:
                row["conditions"] = conditions
        if self.include == INCLUDE_OBJECT:
            row["object"] = obj
        elif self.include == INCLUDE_METADATA:
            row["object"] = {"kind": PARTIAL_KIND, "apiVersion": self.api_version, "metadata": obj.get("metadata", {})}
        return row

    def table(
        self, objects: list[dict[str, Any]], now: float, *, metadata: dict[str, Any], with_columns: bool = True
    ) -> dict[str, Any]:
        """A Table of ``objects`` with ``metadata`` (resourceVersion, continue, remainingItemCount)."""
        body: dict[str, Any] = {"kind": TABLE_KIND, "apiVersion": self.api_version, "metadata": metadata}
        if with_columns:
            body["columnDefinitions"] = [c.definition() for c in self.printer.columns]
        else:
            body["columnDefinitions"] = None
        body["rows"] = [self._row(obj, now) for obj in objects]
        return body

    def for_list(self, listed: dict[str, Any], now: float) -> dict[str, Any]:
        """The Table of a ``<Kind>List``."""
        return self.table(listed.get("items") or [], now, metadata=dict(listed.get("metadata") or {}))

    def for_object(self, obj: dict[str, Any], now: float) -> dict[str, Any]:
        """A one-row Table of a single object (``kubectl get <kind> <name>``)."""
        rv = (obj.get("metadata") or {}).get("resourceVersion")
        return self.table([obj], now, metadata={"resourceVersion": rv} if rv else {})
