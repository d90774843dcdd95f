"""The audit trail: every write any cluster accepted, with who made it and what changed.

A record holds the object before and after the write (to compute its diff on demand). Scenario
worlds keep every record; a long-running ``serve`` bounds the trail by record count and by the
bytes of the object versions it holds, dropping the oldest records first (``seq`` numbers and
``since`` marks stay those of the whole trail).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from harness.apiserver import limits
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
    """Append-only list of :class:`AuditRecord`, shared by every cluster of a world.

    ``max_records`` / ``max_bytes`` (None: unbounded): past either, the oldest records go. The
    bytes are those of each record's new object version (or the old one for a removal), as
    stored; versions are shared with the store, so this is what the trail alone keeps alive.
    ``records`` holds the retained records; ``len()`` counts every record ever added."""

    def __init__(self, enabled: bool = True, *, max_records: int | None = None, max_bytes: int | None = None) -> None:
        self.enabled = enabled
        self.max_records = max_records
        self.max_bytes = max_bytes
        self.records: list[AuditRecord] = []
        self._sizes: list[int] = []
        self._bytes = 0
        self._dropped = 0

    def add(self, **fields: Any) -> None:
        """Append a record (its ``seq`` is the count of records so far plus one), then trim."""
        if not self.enabled:
            return
        self._append(AuditRecord(seq=len(self) + 1, **fields))

    def record(
        self,
        time: float,
        cluster: str,
        verb: str,
        resource: str,
        subresource: str,
        namespace: str,
        name: str,
        user: str,
        code: int,
        old: dict[str, Any] | None,
        new: dict[str, Any] | None,
    ) -> None:
        """:meth:`add` with the fields in :class:`AuditRecord`'s order: what the server calls at every
        write (passing eleven keywords on through ``**`` cost more than building the record)."""
        if not self.enabled:
            return
        self._append(AuditRecord(self._dropped + len(self.records) + 1, time, cluster, verb, resource,
                                 subresource, namespace, name, user, code, old, new))

    def _append(self, record: AuditRecord) -> None:
        self.records.append(record)
        if self.max_records is None and self.max_bytes is None:
            return
        kept = record.new if record.new is not None else record.old
        size = limits.encoded_size(kept) if self.max_bytes is not None and kept is not None else 0
        self._sizes.append(size)
        self._bytes += size
        self._trim()

    def _trim(self) -> None:
        excess = 0
        total = self._bytes
        count = len(self.records)
        while count - excess > 1 and (
            (self.max_records is not None and count - excess > self.max_records)
            or (self.max_bytes is not None and total > self.max_bytes)
        ):
            total -= self._sizes[excess]
            excess += 1
        if excess:
            # One slice per add: trimming stays proportional to what is dropped.
            del self.records[:excess]
            del self._sizes[:excess]
            self._bytes = total
            self._dropped += excess

    @property
    def retained_bytes(self) -> int:
        """Bytes of object versions the retained records hold (0 when no byte limit is set)."""
        return self._bytes

    @property
    def dropped(self) -> int:
        """How many of the oldest records retention has dropped."""
        return self._dropped

    def __iter__(self) -> Iterator[AuditRecord]:
        return iter(self.records)

    def __len__(self) -> int:
        return self._dropped + len(self.records)

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
        """Records matching every given field, oldest first; ``since`` skips the first N records
        (of the whole trail: records retention dropped are simply absent)."""
        out = []
        for rec in self.records[max(0, since - self._dropped):]:
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
