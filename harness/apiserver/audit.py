"""The audit trail: every write any cluster accepted, with who made it and what changed."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from harness.clock import rfc3339


@dataclass
class AuditRecord:
    """One accepted write. ``old``/``new`` are the stored objects before and after (None when absent)."""

    seq: int
    time: float
    cluster: str
    verb: str
    resource: str
    subresource: str
    namespace: str
    name: str
    user: str
    code: int
    old: dict[str, Any] | None = field(repr=False, default=None)
    new: dict[str, Any] | None = field(repr=False, default=None)

    def diff(self) -> dict[str, Any]:
        """What the write changed, as a JSON-ready DeepDiff (computed on demand)."""
        from deepdiff import DeepDiff

        ignored = ["root['metadata']['resourceVersion']", "root['metadata']['managedFields']"]
        result = DeepDiff(self.old or {}, self.new or {}, exclude_paths=ignored, verbose_level=2)
        return result.to_dict() if hasattr(result, "to_dict") else dict(result)

    def to_dict(self, *, with_diff: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "seq": self.seq,
            "time": rfc3339(self.time),
            "cluster": self.cluster,
            "verb": self.verb,
            "resource": self.resource,
            "subresource": self.subresource,
            "namespace": self.namespace,
            "name": self.name,
            "user": self.user,
            "code": self.code,
        }
        if with_diff:
            out["diff"] = _jsonable(self.diff())
        return out


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


class AuditLog:
    """Append-only list of :class:`AuditRecord`, shared by every cluster of a world."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.records: list[AuditRecord] = []

    def add(self, **fields: Any) -> None:
        if self.enabled:
            self.records.append(AuditRecord(seq=len(self.records) + 1, **fields))

    def __iter__(self) -> Iterator[AuditRecord]:
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)

    def query(
        self,
        *,
        cluster: str | None = None,
        verb: str | None = None,
        resource: str | None = None,
        name: str | None = None,
        namespace: str | None = None,
        since: int = 0,
    ) -> list[AuditRecord]:
        """Records matching every given field, oldest first; ``since`` skips the first N records."""
        out = []
        for rec in self.records[since:]:
            if cluster is not None and rec.cluster != cluster:
                continue
            if verb is not None and rec.verb != verb:
                continue
            if resource is not None and rec.resource != resource:
                continue
            if name is not None and rec.name != name:
                continue
            if namespace is not None and rec.namespace != namespace:
                continue
            out.append(rec)
        return out
