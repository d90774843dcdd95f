"""The packaged CRDs' writes, made once per process and replayed into each new world.

Every scenario's world starts by creating the kit's CustomResourceDefinitions (Cluster API's Cluster,
Machine, ...) on its management cluster. Done through the API each time, that is validation,
defaulting, managedFields and typed decoding of some twenty large objects per scenario: the same work
with the same outcome, since the clock, the documents and the fresh cluster are the same each time.

:class:`CrdSnapshot` does it once, on a throwaway cluster, and keeps what the writes committed (each
write's stored versions, resourceVersions, audit record). :meth:`CrdSnapshot.replay` commits the same
versions into a world's own management cluster in the same order, through the same steps a write
ends with: the store (history, watchers), the audit trail and the server's write hooks (which register
the CRDs' kinds and their admission, as a real create does). What a scenario can see is what it saw
before: the same objects, resourceVersions, audit records and watch events; only the uids are new for
each world, as they would be (uuid4). A world whose cluster is not as the snapshot's was (other
options, other admission plugins or write hooks, another clock) applies the CRDs through the API.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.apiserver import builtins
from harness.apiserver.audit import AuditLog, AuditRecord
from harness.apiserver.clusters import MANAGEMENT, ClusterSet
from harness.apiserver.server import APIServer
from harness.client import InProcessClient
from harness.clock import VirtualClock
from harness.kube.objects import clone
from harness.world.fixtures import apply_documents, read_documents

_DELETED = "DELETED"


@dataclass(frozen=True)
class _Commit:
    rv: int
    skey: tuple[str, str]
    event: str
    obj: dict[str, Any]
    old: dict[str, Any] | None
    record: AuditRecord


class CrdSnapshot:
    """The commits that applying ``documents`` made on a fresh management cluster at ``start``."""

    def __init__(self, documents: list[tuple[str, dict[str, Any]]], start: float) -> None:
        self.start = start
        clusters = ClusterSet(VirtualClock(start), audit=AuditLog())
        server = clusters.management
        self._fingerprint = _fingerprint(server)
        self._rv_before = server.store.resource_version
        self._audit_before = len(clusters.audit)
        history_before = server.store.history_length()
        apply_documents(InProcessClient(clusters, MANAGEMENT, "system:admin"), documents)
        events = list(server.store._history)[history_before:]  # noqa: SLF001 - the store's own record of commits
        records = clusters.audit.records[self._audit_before:]
        self.usable = len(events) == len(records) and all(
            record.new is event[3] and record.resource == builtins.CUSTOM_RESOURCE_DEFINITION.qualified
            and not record.subresource and clusters.clock.now() == start
            for event, record in zip(events, records, strict=False)
        )
        self._commits = [_Commit(rv, skey, event_type, obj, old, record)
                         for (rv, skey, event_type, obj, old), record in zip(events, records, strict=False)]
        self._rv_after = server.store.resource_version

    def fits(self, server: APIServer, audit: AuditLog) -> bool:
        """Whether ``server`` is where the snapshot's cluster was before the CRDs were applied."""
        return (self.usable and server.clock.now() == self.start and not server.clock.follows_wall_time
                and server.store.resource_version == self._rv_before and len(audit) == self._audit_before
                and _fingerprint(server) == self._fingerprint)

    def replay(self, server: APIServer) -> None:
        """Commit the snapshot's writes into ``server`` (which :meth:`fits`), with fresh uids."""
        fresh: dict[str, str] = {}
        copies: dict[int, dict[str, Any]] = {}

        def renamed(obj: dict[str, Any] | None) -> dict[str, Any] | None:
            # One new version per stored version, so what the history, the store and the audit trail
            # shared before they share again.
            if obj is None:
                return None
            copy = copies.get(id(obj))
            if copy is None:
                meta = obj["metadata"]
                uid = fresh.setdefault(meta["uid"], str(uuid.uuid4()))
                copy = copies[id(obj)] = {**obj, "metadata": {**meta, "uid": uid}}
            return copy

        store = server.store
        rt = builtins.CUSTOM_RESOURCE_DEFINITION
        for commit in self._commits:
            obj, old = renamed(commit.obj), renamed(commit.old)
            assert obj is not None
            meta = obj["metadata"]
            key = (meta.get("namespace") or "", meta["name"])
            store.set_resource_version(commit.rv)
            if commit.event == _DELETED:
                store.remove(commit.skey, key, obj)
            else:
                store.put(commit.skey, key, obj)
            record = commit.record
            server._record(record.verb, rt, record.namespace, record.name, record.user,  # noqa: SLF001
                           record.code, old, None if commit.event == _DELETED else obj)
        store.set_resource_version(self._rv_after)


def _fingerprint(server: APIServer) -> tuple[Any, ...]:
    """What decides a CRD write's outcome beyond the request: the admission plugins, write hooks and
    served kinds installed, and the objects stored."""
    return (
        tuple((group, kind) for group, kind, _plugin in server._admission),  # noqa: SLF001
        len(server._write_hooks),  # noqa: SLF001
        tuple(sorted((rt.group, rt.version, rt.plural) for rt in server.registry.all())),
        tuple((skey, server.store.count(skey)) for skey in sorted(server.store.resources())),
    )


class Documents:
    """The packaged CRD files, known by their paths, modification times and sizes; parsed on demand."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        found = sorted(p for p in folder.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
        stats = [(p, p.stat()) for p in found]  # one stat per file (a World is built per scenario)
        self.key = tuple((str(p), st.st_mtime_ns, st.st_size) for p, st in stats)
        self._parsed: list[tuple[str, dict[str, Any]]] | None = None

    def fresh(self) -> list[tuple[str, dict[str, Any]]]:
        """The documents, as copies a caller may change (FixtureError when one cannot be read)."""
        if self._parsed is None:
            self._parsed = read_documents([self.folder])
            return self._parsed
        return [(source, clone(doc)) for source, doc in self._parsed]


_DOCUMENTS: dict[Path, Documents] = {}
# By the fixture files and the start of the clock.
_SNAPSHOTS: dict[tuple[tuple[tuple[str, int, int], ...], float], CrdSnapshot] = {}


def documents(folder: Path) -> Documents:
    """The CRD files in ``folder``, parsed once (the first time they are needed) and again only when
    a file changes; FixtureError when one cannot be parsed."""
    known = _DOCUMENTS.get(folder)
    current = Documents(folder)
    if known is None or known.key != current.key:
        current.fresh()  # parse now: a damaged file is reported where the world is built
        _DOCUMENTS[folder] = known = current
    return known


def snapshot_for(docs: Documents, start: float) -> CrdSnapshot:
    """The snapshot of applying ``docs`` to a fresh management cluster at ``start``, made on first use."""
    key = (docs.key, start)
    snapshot = _SNAPSHOTS.get(key)
    if snapshot is None:
        snapshot = _SNAPSHOTS[key] = CrdSnapshot(docs.fresh(), start)
    return snapshot
