"""The garbage collector: ownerReference cascading deletion, as kube-controller-manager's does.

It watches every listable, watchable, deletable kind the cluster serves (Events excepted, as
upstream ignores them), and follows CustomResourceDefinitions to watch new kinds as they appear.
From the events it keeps an owner graph by uid, with dependents indexed by owner uid so work stays
proportional to what changed, even with tens of thousands of pods. Work items are object uids.

* **Background** (``attemptToDeleteItem``): a dependent whose owners are gone is deleted with a uid
  precondition once *every* ownerReference dangles (propagation from its own finalizers:
  ``orphan`` → Orphan, ``foregroundDeletion`` → Foreground, otherwise Background); when some owners
  remain, only the dangling references are removed (JSON merge patch carrying the resourceVersion).
  An owner is absent when a live GET by name (in the dependent's namespace, or cluster-scoped for a
  cluster-scoped owner kind) answers 404 or an object with another uid; absences are cached by
  (uid, namespace). So a reference to an owner in another namespace dangles. A cluster-scoped
  dependent naming a namespaced owner is invalid and left alone, as upstream does.
* **Foreground** (owner with a deletionTimestamp and ``foregroundDeletion``): every dependent is
  deleted (with Foreground propagation when it has dependents of its own, as upstream); dependents
  that also have live owners only lose the reference. The finalizer goes once no dependent with
  ``blockOwnerDeletion: true`` is left.
* **Orphan** (owner with a deletionTimestamp and ``orphan``): the references to it are removed from
  every dependent, then the finalizer.

Finalizers are removed with JSON merge patches that carry the resourceVersion (never strategic merge,
which custom resources refuse).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from harness.client import ApiError, Client, Controller, Request, Result, find_in
from harness.client.interface import shared_reads
from harness.kube.names.apiextensions import APIEXTENSIONS_V1, CRD_KIND
from harness.kube.names.meta import (
    FOREGROUND_FINALIZER,
    ORPHAN_FINALIZER,
    PROPAGATION_BACKGROUND,
    PROPAGATION_FOREGROUND,
    PROPAGATION_ORPHAN,
)

# Kinds the garbage collector never watches (upstream's ignoredResources): events.
IGNORED_KINDS = {("v1", "Event"), ("events.k8s.io/v1", "Event")}
# Upstream keeps the last 500 absent owners; a bigger cache only saves lookups.
ABSENT_CACHE_SIZE = 4096

# How an ownerReference's owner stands.
ABSENT = "absent"
WAITING = "waiting"
SOLID = "solid"
INVALID = "invalid"

Identity = tuple[str, str, str, str]  # (apiVersion, kind, namespace, name)


class _Ref:
    """One ownerReference of a node."""

    __slots__ = ("api_version", "block", "kind", "name", "uid")

    def __init__(self, ref: dict[str, Any]) -> None:
        self.uid: str = ref.get("uid") or ""
        self.api_version: str = ref.get("apiVersion") or ""
        self.kind: str = ref.get("kind") or ""
        self.name: str = ref.get("name") or ""
        self.block: bool = ref.get("blockOwnerDeletion") is True

    def key(self) -> tuple[str, str, str, str, bool]:
        return (self.uid, self.api_version, self.kind, self.name, self.block)


class _Node:
    """What the graph knows of one object."""

    __slots__ = ("deleting", "foreground", "identity", "orphan", "owners", "raw_owners")

    def __init__(self, identity: Identity) -> None:
        self.identity = identity
        self.owners: tuple[_Ref, ...] = ()
        # The ownerReferences list ``owners`` was last compared with: a stored object never changes, and a
        # write that keeps them (a status write) shares the list, so the same list needs no comparison.
        self.raw_owners: Any = None
        self.deleting = False
        self.foreground = False  # deleting, waiting for its blocking dependents
        self.orphan = False  # deleting, orphaning its dependents

    @property
    def namespace(self) -> str:
        return self.identity[2]


def _ref_keys(refs: Iterable[_Ref]) -> tuple[tuple[str, str, str, str, bool], ...]:
    return tuple(r.key() for r in refs)


class GarbageCollector(Controller):
    name = "garbage-collector"

    def __init__(self, client: Client) -> None:
        super().__init__()
        self.client = client
        self._nodes: dict[str, _Node] = {}
        self._dependents: dict[str, set[str]] = {}  # owner uid → dependent uids
        self._absent: OrderedDict[tuple[str, str], None] = OrderedDict()  # (uid, namespace)
        self._namespaced: dict[tuple[str, str], bool] = {}  # (apiVersion, kind) → namespaced
        # Bound once, so that re-declaring a watch finds the same key (watches are idempotent).
        self._graph_mapper = self._observe
        self._crd_mapper = self._crd_changed
        # What the last sync saw (the kinds served, the watches held): a CRD event that changed neither
        # (a status update, a CRD of a kind already followed) has nothing to add.
        self._synced: tuple[tuple[tuple[str, str, bool, tuple[str, ...]], ...], int] | None = None
        # The discovery answer that sync saw, when the client shares it (in-process: the same list object until
        # the served kinds change), so the ~20 CRD events of a World's start-up need not compare it entry by entry.
        self._synced_served: list[dict[str, Any]] | None = None

    # -- watches -------------------------------------------------------------------------------------

    def setup(self) -> None:
        self.watch(self.client, APIEXTENSIONS_V1, CRD_KIND, self._crd_mapper)
        self._sync_kinds()

    def _sync_kinds(self) -> None:
        """Watch every kind the cluster serves now (new kinds appear with CRDs)."""
        served = self.client.discover(**shared_reads(self.client))
        if served is self._synced_served and self._synced is not None and self._synced[1] == len(self._watch_keys):
            return
        seen = tuple((r["apiVersion"], r["kind"], bool(r["namespaced"]), tuple(r.get("verbs") or ()))
                     for r in served)
        if self._synced == (seen, len(self._watch_keys)):
            return
        for resource in served:
            key = (resource["apiVersion"], resource["kind"])
            self._namespaced[key] = bool(resource["namespaced"])
            verbs = resource.get("verbs") or ()
            if key in IGNORED_KINDS or not {"list", "watch", "delete"} <= set(verbs):
                continue
            self.watch(self.client, key[0], key[1], self._graph_mapper)
        self._synced = (seen, len(self._watch_keys))
        self._synced_served = served if shared_reads(self.client) else None

    def _crd_changed(self, _event: str, _obj: dict[str, Any]) -> Iterable[Request]:
        self._sync_kinds()
        return ()

    # -- the graph -----------------------------------------------------------------------------------

    def _observe(self, event: str, obj: dict[str, Any]) -> Iterable[Request]:
        """Update the graph from one event; return the uids that need a look."""
        meta = obj.get("metadata") or {}
        uid = meta.get("uid")
        if not uid:
            return ()
        out: set[str] = set()
        if event == "DELETED":
            node = self._nodes.pop(uid, None)
            if node is not None:
                for ref in node.owners:
                    self._unindex(ref.uid, uid)
                    owner = self._nodes.get(ref.uid)
                    if owner is not None and owner.foreground:
                        out.add(ref.uid)
            out.update(self._dependents.get(uid, ()))
            return [Request("", u) for u in sorted(out)]  # sorted: the same queue order whatever the hash seed
        node = self._nodes.get(uid)
        fresh = node is None
        if node is None:
            identity = (obj.get("apiVersion") or "", obj.get("kind") or "", meta.get("namespace") or "",
                        meta.get("name") or "")
            node = self._nodes[uid] = _Node(identity)
        raw_refs = meta.get("ownerReferences") or ()
        refs: tuple[_Ref, ...]
        if not raw_refs:
            refs = ()
        elif raw_refs is node.raw_owners:
            refs = node.owners  # the very list compared last time: the same references
        else:
            refs = tuple(_Ref(r) for r in raw_refs if isinstance(r, dict) and r.get("uid"))
        node.raw_owners = raw_refs
        # No owners before or now (most events), or the same ones, leaves nothing to compare.
        if fresh or (refs is not node.owners and (refs or node.owners)
                     and _ref_keys(refs) != _ref_keys(node.owners)):
            before = {r.uid: r for r in node.owners}
            after = {r.uid: r for r in refs}
            for owner_uid, ref in before.items():
                kept = after.get(owner_uid)
                if kept is None:
                    self._unindex(owner_uid, uid)
                if (kept is None or (ref.block and not kept.block)) and self._is_foreground(owner_uid):
                    out.add(owner_uid)  # an owner waiting on this dependent may be free now
            for owner_uid in after:
                self._dependents.setdefault(owner_uid, set()).add(uid)
            node.owners = refs
            # A new reference to an owner the graph does not know (or one waiting for its dependents)
            # needs a look, as upstream's virtual owner nodes get one.
            if any(self._needs_attention(node, r) for r in refs if r.uid not in before):
                out.add(uid)
        finalizers = meta.get("finalizers") or ()
        deleting = bool(meta.get("deletionTimestamp"))
        foreground = deleting and FOREGROUND_FINALIZER in finalizers
        orphan = deleting and ORPHAN_FINALIZER in finalizers
        if foreground and not node.foreground:
            out.add(uid)
            out.update(self._dependents.get(uid, ()))
        if orphan and not node.orphan:
            out.add(uid)
        node.deleting, node.foreground, node.orphan = deleting, foreground, orphan
        if not out:
            return ()  # most events: nothing to look at
        return [Request("", u) for u in sorted(out)]

    def _needs_attention(self, node: _Node, ref: _Ref) -> bool:
        """Whether a new reference must be checked: its owner is unknown, deleting in the foreground,
        or known under other coordinates or in another namespace (upstream's potentially invalid
        owner reference)."""
        owner = self._nodes.get(ref.uid)
        if owner is None or owner.foreground:
            return True
        api_version, kind, namespace, name = owner.identity
        if (api_version, kind, name) != (ref.api_version, ref.kind, ref.name):
            return True
        return bool(namespace) and namespace != node.namespace

    def _is_foreground(self, uid: str) -> bool:
        node = self._nodes.get(uid)
        return node is not None and node.foreground

    def _unindex(self, owner_uid: str, dependent_uid: str) -> None:
        deps = self._dependents.get(owner_uid)
        if deps is not None:
            deps.discard(dependent_uid)
            if not deps:
                del self._dependents[owner_uid]

    def dependents_of(self, uid: str) -> list[Identity]:
        """The objects the graph lists as dependents of ``uid`` (for tests and reports)."""
        return sorted(self._nodes[d].identity for d in self._dependents.get(uid, ()) if d in self._nodes)

    # -- work ----------------------------------------------------------------------------------------

    def reconcile(self, request: Request) -> Result | None:
        """Orphan, foreground-finish or collect the object with uid ``request.name``."""
        uid = request.name
        node = self._nodes.get(uid)
        if node is None:
            return None
        if node.orphan:
            self._orphan_dependents(uid, node)
            return None
        if node.foreground:
            return self._process_deleting_dependents(uid, node)
        if node.deleting or not node.owners:
            return None  # being deleted is a one-way trip; its dependents follow its DELETED event
        return self._attempt_to_delete(uid, node)

    def _live_dependents(self, uid: str) -> list[tuple[str, _Node]]:
        return [(d, self._nodes[d]) for d in sorted(self._dependents.get(uid, ())) if d in self._nodes]

    def _process_deleting_dependents(self, uid: str, node: _Node) -> Result | None:
        blocking = [
            (d, dep) for d, dep in self._live_dependents(uid)
            if any(r.uid == uid and r.block for r in dep.owners)
        ]
        if not blocking:
            self._remove_finalizer(node, FOREGROUND_FINALIZER)
            return None
        for dep_uid, dep in blocking:
            if not dep.foreground:
                self.enqueue(Request("", dep_uid))
        return None

    def _orphan_dependents(self, uid: str, node: _Node) -> None:
        for _, dep in self._live_dependents(uid):
            self._remove_refs(dep, {uid})
        self._remove_finalizer(node, ORPHAN_FINALIZER)

    def _attempt_to_delete(self, uid: str, node: _Node) -> Result | None:
        # Decide on the live object, as upstream does: the graph may lag behind it.
        live = self._get(node.identity)
        if live is None or live["metadata"].get("uid") != uid or live["metadata"].get("deletionTimestamp"):
            return None
        solid: list[_Ref] = []
        gone: list[_Ref] = []  # dangling, or owners deleting in the foreground
        waiting = False
        for ref in (_Ref(r) for r in live["metadata"].get("ownerReferences") or [] if r.get("uid")):
            state = self._owner_state(node, ref)
            if state is None:
                return Result(requeue=True)  # the owner's kind is not (yet) served: retry with backoff
            if state == INVALID:
                return None
            if state == SOLID:
                solid.append(ref)
            else:
                gone.append(ref)
                waiting = waiting or state == WAITING
        if not solid and not gone:
            return None
        if solid:
            if gone:
                self._remove_refs(node, {r.uid for r in gone})
            return None
        dependents = self._live_dependents(uid)
        if waiting and dependents:
            if any(dep.foreground for _, dep in dependents):
                self._unblock_refs(node)  # break a cycle of owners waiting on each other
            self._delete(node, uid, PROPAGATION_FOREGROUND)
            return None
        finalizers = live["metadata"].get("finalizers") or ()
        policy = PROPAGATION_BACKGROUND
        if ORPHAN_FINALIZER in finalizers:
            policy = PROPAGATION_ORPHAN
        elif FOREGROUND_FINALIZER in finalizers:
            policy = PROPAGATION_FOREGROUND
        self._delete(node, uid, policy)
        return None

    def _owner_state(self, node: _Node, ref: _Ref) -> str | None:
        """ABSENT, WAITING (deleting in the foreground), SOLID, INVALID, or None (kind not served)."""
        namespaced = self._namespaced.get((ref.api_version, ref.kind))
        if namespaced is None:
            self._sync_kinds()
            namespaced = self._namespaced.get((ref.api_version, ref.kind))
            if namespaced is None:
                return None
        if namespaced and not node.namespace:
            return INVALID
        namespace = node.namespace if namespaced else ""
        if (ref.uid, namespace) in self._absent:
            return ABSENT
        owner = self._nodes.get(ref.uid)
        if owner is not None and owner.identity == (ref.api_version, ref.kind, namespace, ref.name):
            return WAITING if owner.foreground else SOLID
        live = self._get((ref.api_version, ref.kind, namespace, ref.name))
        if live is None or live["metadata"].get("uid") != ref.uid:
            self._absent[(ref.uid, namespace)] = None
            if len(self._absent) > ABSENT_CACHE_SIZE:
                self._absent.popitem(last=False)
            return ABSENT
        meta = live["metadata"]
        if meta.get("deletionTimestamp") and FOREGROUND_FINALIZER in (meta.get("finalizers") or ()):
            return WAITING
        return SOLID

    # -- requests ------------------------------------------------------------------------------------

    def _get(self, identity: Identity) -> dict[str, Any] | None:
        api_version, kind, namespace, name = identity
        return find_in(self.client, api_version, kind, name, namespace or None)

    def _delete(self, node: _Node, uid: str, policy: str) -> None:
        api_version, kind, namespace, name = node.identity
        try:
            self.client.delete(api_version, kind, name, namespace or None, propagation_policy=policy,
                               preconditions={"uid": uid})
        except ApiError as err:
            if err.code not in (404, 409):  # gone, or replaced by a namesake: nothing to collect
                raise

    def _patch_meta(self, identity: Identity, meta: dict[str, Any]) -> None:
        api_version, kind, namespace, name = identity
        try:
            self.client.patch(api_version, kind, name, {"metadata": meta}, namespace=namespace or None)
        except ApiError as err:
            if err.code != 404:
                raise  # a 409 (changed since read) is retried with backoff and read again

    def _remove_refs(self, node: _Node, owner_uids: set[str]) -> None:
        live = self._get(node.identity)
        if live is None:
            return
        refs = live["metadata"].get("ownerReferences") or []
        kept = [r for r in refs if r.get("uid") not in owner_uids]
        if len(kept) == len(refs):
            return
        self._patch_meta(node.identity, {"ownerReferences": kept or None,
                                         "resourceVersion": live["metadata"]["resourceVersion"]})

    def _unblock_refs(self, node: _Node) -> None:
        live = self._get(node.identity)
        if live is None:
            return
        refs = live["metadata"].get("ownerReferences") or []
        if not any(r.get("blockOwnerDeletion") for r in refs):
            return
        unblocked = [{**r, "blockOwnerDeletion": False} if r.get("blockOwnerDeletion") else r for r in refs]
        self._patch_meta(node.identity, {"ownerReferences": unblocked,
                                         "resourceVersion": live["metadata"]["resourceVersion"]})

    def _remove_finalizer(self, node: _Node, finalizer: str) -> None:
        live = self._get(node.identity)
        if live is None:
            return
        finalizers = live["metadata"].get("finalizers") or []
        if finalizer not in finalizers:
            return
        kept = [f for f in finalizers if f != finalizer]
        self._patch_meta(node.identity, {"finalizers": kept or None,
                                         "resourceVersion": live["metadata"]["resourceVersion"]})
