"""The server's update, delete and eviction paths as they were before the round-4 rework of the write
path (main at 5ba3476): the oracle tests/test_writepath_equivalence.py compares the server against on
random objects and requests. Kept verbatim but for the names it imports; not used by the harness."""

# ruff: noqa: E501, PLR0912, PLR0913, PLR0915, C901

from __future__ import annotations

from typing import Any

from harness.apiserver import builtins, conversion, deleteoptions, limits, managedfields
from harness.apiserver.pdb import ALWAYS_ALLOW, is_pod_ready, pdb_selects, update_disruption_allowed_condition
from harness.apiserver.resources import ResourceType
from harness.apiserver.server import (
    _OMITEMPTY_META,
    BACKGROUND,
    FOREGROUND,
    FOREGROUND_FINALIZER,
    ORPHAN,
    ORPHAN_FINALIZER,
    PROPAGATION_POLICIES,
    RETURNS_DELETED_OBJECT,
    STATUS_LIKE_SUBRESOURCES,
    APIServer,
    _manager,
    _meta,
    _replacement,
)
from harness.apiserver.store import Store, _node_name
from harness.apiserver.subresources.eviction import (
    DISRUPTION_BUDGET_CAUSE,
    EVICTION_API_MESSAGE,
    EVICTIONS_RETRY_STEPS,
    LOOPBACK_USER,
    MAX_DISRUPTED_POD_SIZE,
    MULTIPLE_PDBS_MSG,
    NAME_MISMATCH_MSG,
    NEEDS_HEALTHY_MSG,
    NEGATIVE_BUDGET_MSG,
    PDB_FORBIDDEN_RESOURCE,
    POD_CONFLICT_RESOURCE,
    RV_PRECONDITION_MSG,
    TOO_MANY_DISRUPTED_MSG,
    UID_PRECONDITION_MSG,
    _check_body,
    _delete_options,
    _is_dry_run,
    _rv_precondition,
    _should_enforce_resource_version,
    _still_processing,
    _success,
    _with_rv_precondition,
    can_ignore_pdb,
)
from harness.kube import errors
from harness.kube.names.core import CONDITION_TRUE, DISRUPTION_TARGET, EVICTION_BY_EVICTION_API
from harness.kube.names.policy import PDB_VIOLATION_MESSAGE, POLICY_GROUP
from harness.kube.objects import clone
from harness.kube.time import parse_rfc3339, seconds_after


def _drop_empty_meta(obj: dict[str, Any]) -> None:
    meta = obj["metadata"]
    for field in _OMITEMPTY_META:
        if field in meta and meta[field] in ([], {}, None):
            del meta[field]


class ReferenceStore(Store):
    """The store with the pod index as it was (every pod write reads both node names)."""

    def _index_pod(self, key: Any, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        old_node = _node_name(old) if old is not None else None
        new_node = _node_name(new) if new is not None else None
        if old_node == new_node:
            return
        if old_node is not None:
            self._pods_by_node.get(old_node, set()).discard(key)
        if new_node is not None:
            self._pods_by_node.setdefault(new_node, set()).add(key)


class ReferenceServer(APIServer):
    """:class:`APIServer` with the update and delete paths of 5ba3476 (a :class:`ReferenceStore`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        old_store = self.store
        self.store = ReferenceStore(old_store._history_max, old_store._history_max_bytes)
        self.store.__dict__.update(old_store.__dict__)

    def update(
        self,
        rt: ResourceType,
        namespace: str | None,
        name: str,
        body: Any,
        *,
        subresource: str = "",
        dry_run: bool = False,
        user: str = "admin",
        field_manager: str | None = None,
        answer: bool = True,
    ) -> dict[str, Any] | None:
        """Replace an object (PUT). A stale resourceVersion is a 409; custom resources need one.
        The main resource ignores ``status``; ``/status`` ignores everything but ``status``.
        ``field_manager`` (default: the user) owns what the update changed. ``answer`` false:
        None instead of a copy of the written object (for an in-process caller that discards it)."""
        status_of = None
        if subresource in STATUS_LIKE_SUBRESOURCES and not conversion.converts(rt) and not self._mutating_admission(rt):
            # Only the body's status is kept: what it repeats of the stored object is not decoded again.
            status_of = self.store.get(self.skey(rt), self._key(rt, namespace, name))
        new = self._check_body(rt, body, namespace, status_of=status_of)
        if _meta(new).get("name") not in (None, name):
            raise errors.bad_request(
                f"the name of the object ({_meta(new).get('name')}) does not match the name on the URL ({name})"
            )
        new["metadata"]["name"] = name
        old = self._get_stored(rt, namespace, name)
        rv = _meta(new).get("resourceVersion")
        if rv:
            if rv != old["metadata"]["resourceVersion"]:
                raise errors.conflict(rt.plural, rt.group, name)
        elif rt.custom:
            raise errors.invalid_object(
                rt.kind, rt.group, name,
                # Go renders the missing uint64 with %#v.
                [errors.invalid(
                    "metadata.resourceVersion", errors.GoLiteral("0x0"), "must be specified for an update"
                )],
            )
        return self.commit_update(rt, old, new, subresource=subresource, dry_run=dry_run, user=user, verb="update",
                                   manager=_manager(field_manager, user), answer=answer)

    def commit_update(
        self,
        rt: ResourceType,
        old: dict[str, Any],
        new: dict[str, Any],
        *,
        subresource: str,
        dry_run: bool,
        user: str,
        verb: str,
        manager: str,
        applied: list[dict[str, Any]] | None = None,
        answer: bool = True,
    ) -> dict[str, Any] | None:
        """Write ``new`` over the stored ``old`` as an update does after reading the body: status
        separation, generation, validation, admission, managedFields, no-op and dry-run handling,
        finalization. ``applied``: managedFields already computed (an apply, the scale
        subresource); otherwise the write records an Update entry for ``manager``. ``answer``
        false: None instead of the object as the client sees it (no copy for nobody); a write
        that removes the object still answers as a delete does."""
        meta_old = old["metadata"]
        if subresource in STATUS_LIKE_SUBRESOURCES:
            if self._mutating_admission(rt):
                merged = clone(old)
            else:
                # The rest of the object is the stored one's: shared with it rather than copied, as
                # a write replaces a stored object and never changes it. Only the metadata, which
                # this write edits below (resourceVersion, managedFields), gets a dict of its own.
                merged = dict(old)
                merged["metadata"] = dict(meta_old)
            if "status" in new:
                merged["status"] = new["status"]
            else:
                merged.pop("status", None)
            new = merged
        elif subresource:
            raise errors.not_found(f"{rt.plural}/{subresource}", rt.group, meta_old["name"])
        else:
            if rt.status:
                if "status" in old:
                    new["status"] = clone(old["status"])
                else:
                    new.pop("status", None)
            if rt is builtins.NAMESPACE or (rt.group == "" and rt.kind == "Namespace"):
                # spec.finalizers only change through /finalize
                new["spec"] = clone(old.get("spec", {}))
        meta = new["metadata"]
        reset_managed = managedfields.is_reset(meta.get("managedFields"))
        _drop_empty_meta(new)
        if reset_managed:
            meta["managedFields"] = []  # "[]" asks to clear them: keep the request for the tracker
        for field in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"):
            if field in meta_old:
                meta[field] = meta_old[field]
            else:
                meta.pop(field, None)
        if rt.has_generation:
            generation = meta_old.get("generation", 1)
            if subresource not in STATUS_LIKE_SUBRESOURCES and self._generation_changes(rt, old, new):
                generation += 1
            meta["generation"] = generation
        else:
            meta.pop("generation", None)
        meta["resourceVersion"] = meta_old["resourceVersion"]
        self._validate(rt, new, old)
        self._admit("UPDATE", rt, new, old)
        if applied is not None:
            managed = applied
        else:
            managed = managedfields.record_update(rt, old, new, manager, self.now(), subresource=subresource)
        if managed:
            meta["managedFields"] = managed
        else:
            meta.pop("managedFields", None)
        if new == old:
            # A no-op write changes nothing, not even the resourceVersion.
            return self._out(rt, old) if answer else None
        if dry_run:
            return self._out(rt, new) if answer else None
        if self._finalized(rt, new):
            return self._remove(rt, old, new, user=user, verb=verb, subresource=subresource)
        limits.fit(new, retry_without_managed_fields=verb != "apply")
        meta["resourceVersion"] = self.store.next_rv()
        key = ((meta.get("namespace") or "") if rt.namespaced else "", meta["name"])
        self.store.put(self.skey(rt), key, new)
        self._record(verb, rt, key[0], key[1], user, 200, old, new, subresource)
        return self._out(rt, new) if answer else None


    def delete(
        self,
        rt: ResourceType,
        namespace: str | None,
        name: str,
        options: dict[str, Any] | None = None,
        *,
        user: str = "admin",
        answer: bool = True,
    ) -> tuple[int, dict[str, Any] | None]:
        """Delete per ``DeleteOptions``; returns (HTTP code, body). ``answer`` false: the body is
        None (an in-process caller that discards it: no copy of the object is made for it).

        Pods are deleted gracefully (deletionTimestamp = now + grace, kept until the kubelet
        finishes; immediate when unscheduled or terminal); objects with finalizers, or deleted
        with Foreground/Orphan propagation, are only marked (200 with the object; 202 with the
        legacy ``orphanDependents: false``); the rest go at once, answered with the deleted object
        for the registries in :data:`RETURNS_DELETED_OBJECT` and a Success Status otherwise."""
        deleteoptions.check(options)
        opts = dict(options or {})
        dry_run = "All" in (opts.get("dryRun") or [])
        stored = self._get_stored(rt, namespace, name)
        meta = stored["metadata"]
        pre = opts.get("preconditions") or {}
        if pre.get("uid") and pre["uid"] != meta.get("uid"):
            raise errors.conflict(
                rt.plural, rt.group, name,
                f"the UID in the precondition ({pre['uid']}) does not match the UID in record ({meta.get('uid')}). "
                "The object might have been deleted and then recreated",
            )
        if pre.get("resourceVersion") and pre["resourceVersion"] != meta.get("resourceVersion"):
            raise errors.conflict(
                rt.plural, rt.group, name,
                f"the ResourceVersion in the precondition ({pre['resourceVersion']}) does not match the "
                f"ResourceVersion in record ({meta.get('resourceVersion')}). The object might have been modified",
            )
        policy = opts.get("propagationPolicy")
        if policy is not None and policy not in PROPAGATION_POLICIES:
            raise errors.invalid_object(
                "DeleteOptions", "meta.k8s.io", "",
                [errors.not_supported("propagationPolicy", policy, list(PROPAGATION_POLICIES))],
            )
        if opts.get("orphanDependents") is not None and policy is not None:
            raise errors.invalid_object(
                "DeleteOptions", "meta.k8s.io", "",
                [errors.invalid(
                    "propagationPolicy", policy, "orphanDependents and deletionPropagation cannot be both set"
                )],
            )
        if opts.get("orphanDependents") is True:
            policy = ORPHAN
        elif opts.get("orphanDependents") is False:
            policy = BACKGROUND
        grace = opts.get("gracePeriodSeconds")
        if grace is not None:
            grace = int(grace)
            if grace < 0:
                grace = 1  # a negative grace period is treated as 1
        self._admit("DELETE", rt, None, stored)
        is_pod = rt.group == "" and rt.kind == "Pod"
        is_namespace = rt.group == "" and rt.kind == "Namespace"
        # What the client asked for (None: nothing): a second DELETE reads it as it is.
        requested = grace
        if is_pod:
            grace = self._pod_grace(stored, grace)
        else:
            grace = 0
        base = stored
        for group, kind, prepare in self._delete_preparers if not meta.get("deletionTimestamp") else ():
            if group == rt.group and kind == rt.kind:
                base = prepare(rt, base) or base
        finalizers = list(base["metadata"].get("finalizers") or [])
        if policy == FOREGROUND and FOREGROUND_FINALIZER not in finalizers:
            finalizers.append(FOREGROUND_FINALIZER)
        if policy == ORPHAN and ORPHAN_FINALIZER not in finalizers:
            finalizers.append(ORPHAN_FINALIZER)
        if policy in (FOREGROUND, BACKGROUND) and ORPHAN_FINALIZER in finalizers:
            finalizers.remove(ORPHAN_FINALIZER)
        pending_namespace = is_namespace and bool((stored.get("spec") or {}).get("finalizers"))
        if meta.get("deletionTimestamp"):
            code, body = self._delete_again(rt, stored, requested, finalizers, pending_namespace, dry_run, user,
                                            answer)
            survived = self.store.get(self.skey(rt), self._key(rt, namespace, name)) is not None
            if survived and opts.get("orphanDependents") is False:
                code = 202  # handlers/delete.go: not deleted at once, cascading asked the legacy way
            return code, body if answer else None
        if not finalizers and not grace and not pending_namespace:
            code, body = self._remove_now(rt, stored, dry_run=dry_run, user=user,
                                          return_object=answer and (rt.group, rt.plural) in RETURNS_DELETED_OBJECT)
            return code, body if answer else None
        marked = _replacement(base)
        mmeta = marked["metadata"]
        mmeta["deletionTimestamp"] = self.clock.isoformat(seconds_after(self.clock.now(), grace))
        mmeta["deletionGracePeriodSeconds"] = grace
        if finalizers:
            mmeta["finalizers"] = finalizers
        if rt.has_generation and mmeta.get("generation"):
            mmeta["generation"] += 1
        if is_namespace:
            marked["status"] = {**(marked.get("status") or {}), "phase": "Terminating"}
        if dry_run:
            return 200, self._out(rt, marked) if answer else None
        limits.fit(marked)
        mmeta["resourceVersion"] = self.store.next_rv()
        key = self._key(rt, mmeta.get("namespace"), name)
        self.store.put(self.skey(rt), key, marked)
        self._record("delete", rt, key[0], name, user, 200, stored, marked)
        code = 202 if opts.get("orphanDependents") is False else 200
        return code, self._out(rt, marked) if answer else None


    def _delete_again(
        self,
        rt: ResourceType,
        stored: dict[str, Any],
        requested: int | None,
        finalizers: list[str],
        pending_namespace: bool,
        dry_run: bool,
        user: str,
        answer: bool = True,
    ) -> tuple[int, dict[str, Any] | None]:
        """A DELETE on an object that is already deleting (rest.BeforeDelete with a deletionTimestamp):
        ``requested`` is the grace period the client named (None: none). While a graceful deletion
        runs (a grace period above 0), only a shorter one changes anything: otherwise the deletion is
        pending and the object is answered as it is, its finalizers untouched whatever the options
        say. A shorter period counts from the first deletion."""
        meta = stored["metadata"]
        current_grace = meta.get("deletionGracePeriodSeconds") or 0
        if current_grace and (requested is None or requested >= current_grace):
            return 200, self._out(rt, stored) if answer else None
        if not finalizers and not pending_namespace and (current_grace == 0 or requested == 0):
            return self._remove_now(rt, stored, dry_run=dry_run, user=user,
                                    return_object=answer and (rt.group, rt.plural) in RETURNS_DELETED_OBJECT)
        changed = _replacement(stored)
        cmeta = changed["metadata"]
        if finalizers != list(meta.get("finalizers") or []):
            cmeta["finalizers"] = finalizers
        if current_grace and requested is not None:
            # rest.BeforeDelete of 1.32 moves the deadline back by the difference (it may pass into the
            # past, which only 1.33 prevents).
            begun = seconds_after(parse_rfc3339(meta["deletionTimestamp"]), -current_grace)
            cmeta["deletionTimestamp"] = self.clock.isoformat(seconds_after(begun, requested))
            cmeta["deletionGracePeriodSeconds"] = requested
        if changed == stored or dry_run:
            return 200, self._out(rt, changed) if answer else None
        limits.fit(changed)
        cmeta["resourceVersion"] = self.store.next_rv()
        key = self._key(rt, cmeta.get("namespace"), cmeta["name"])
        self.store.put(self.skey(rt), key, changed)
        self._record("delete", rt, key[0], key[1], user, 200, stored, changed)
        return 200, self._out(rt, changed) if answer else None



# -- the eviction subresource of 5ba3476 ------------------------------------------------------------

def _matching_pdbs(server: APIServer, pod: dict[str, Any]) -> list[dict[str, Any]]:
    meta = pod["metadata"]
    labels = meta.get("labels") or {}
    # The store lists one namespace's budgets from its own key index (not every namespace's). Most
    # evictions of a drain are refused by the budget, writing nothing: each budget is a dict of its
    # own over the stored one's values (read only), whose status is copied when it is spent.
    return [dict(pdb) for pdb in server.select(
        builtins.POD_DISRUPTION_BUDGET, meta.get("namespace") or "", lambda pdb: pdb_selects(pdb, labels),
        copy=False,
    )]


def _with_own_status(stored: dict[str, Any]) -> dict[str, Any]:
    out = dict(stored)
    if "status" in stored:
        out["status"] = clone(stored["status"])
    return out


def _add_condition_and_delete(
    server: APIServer, namespace: str, name: str, options: dict[str, Any], user: str
) -> None:
    """``addConditionAndDeletePod``: a status update adding DisruptionTarget (checked against the
    delete preconditions first), then the DELETE; on a dry run only the DELETE (which writes nothing)."""
    if not _is_dry_run(options):
        # The pod as a client sees it; the condition below changes only its status (its own copy).
        # (APIServer.present(shared=True) then, which the server no longer offers: its _out is the same view.)
        latest = _with_own_status(server._out(builtins.POD, _preflight(server, namespace, name, options, user),
                                              shared=True))
        _set_disruption_target(latest, server.now())
        wants_rv = _rv_precondition(options) is not None
        updated = server.update_status(builtins.POD, namespace, name, latest, user=user, answer=wants_rv)
        if updated is not None:
            # The status write moved the resourceVersion; the delete must expect the new one.
            options = _with_rv_precondition(options, updated["metadata"]["resourceVersion"])
    server.delete(builtins.POD, namespace, name, options, user=user, answer=False)


def _preflight(server: APIServer, namespace: str, name: str, options: dict[str, Any], user: str) -> dict[str, Any]:
    """What must hold for the pod's DELETE to succeed, checked before the eviction's first write
    (the budget or the condition), so that a refused eviction leaves nothing behind: the delete
    preconditions (409, named as addConditionAndDeletePod names them), then the DELETE itself as a
    dry run (admission, options). Returns the stored pod as it is now (read-only: not a copy)."""
    latest = server.stored_view(builtins.POD, namespace, name)
    meta = latest["metadata"]
    pre = options.get("preconditions") or {}
    if pre.get("uid") and pre["uid"] != meta.get("uid"):
        text = UID_PRECONDITION_MSG.format(pre["uid"], meta.get("uid"))
        raise errors.conflict(POD_CONFLICT_RESOURCE, "", name, text)
    if pre.get("resourceVersion") and pre["resourceVersion"] != meta.get("resourceVersion"):
        text = RV_PRECONDITION_MSG.format(pre["resourceVersion"], meta.get("resourceVersion"))
        raise errors.conflict(POD_CONFLICT_RESOURCE, "", name, text)
    server.delete_dry_run(builtins.POD, namespace, name, options, user=user)
    return latest


def _set_disruption_target(pod: dict[str, Any], now: str) -> None:
    """``podutil.UpdatePodCondition`` with DisruptionTarget=True/EvictionByEvictionAPI."""
    conditions = pod.setdefault("status", {}).setdefault("conditions", [])
    new = {"type": DISRUPTION_TARGET, "status": CONDITION_TRUE, "lastProbeTime": None, "lastTransitionTime": now,
           "reason": EVICTION_BY_EVICTION_API, "message": EVICTION_API_MESSAGE}
    for i, existing in enumerate(conditions):
        if existing.get("type") == DISRUPTION_TARGET:
            if existing.get("status") == new["status"]:
                new["lastTransitionTime"] = existing.get("lastTransitionTime")
            conditions[i] = new
            return
    conditions.append(new)


def _check_and_decrement(
    server: APIServer, namespace: str, pod_name: str, pdb: dict[str, Any], options: dict[str, Any], user: str
) -> None:
    """``checkAndDecrement``: refuse per the budget, or spend one disruption (a status write)."""
    dry_run = _is_dry_run(options)
    meta = pdb["metadata"]
    status = pdb.setdefault("status", {})
    name = meta["name"]
    if int(status.get("observedGeneration") or 0) < int(meta.get("generation") or 0):
        raise _still_processing(name)
    allowed = int(status.get("disruptionsAllowed") or 0)
    if allowed < 0:
        raise errors.forbidden_error(PDB_FORBIDDEN_RESOURCE, POLICY_GROUP, name, NEGATIVE_BUDGET_MSG)
    if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_POD_SIZE:
        raise errors.forbidden_error(PDB_FORBIDDEN_RESOURCE, POLICY_GROUP, name, TOO_MANY_DISRUPTED_MSG)
    if allowed == 0:
        message = NEEDS_HEALTHY_MSG.format(
            name, int(status.get("desiredHealthy") or 0), int(status.get("currentHealthy") or 0)
        )
        raise errors.too_many_requests(
            PDB_VIOLATION_MESSAGE, 0, [{"reason": DISRUPTION_BUDGET_CAUSE, "message": message}]
        )
    status = pdb["status"] = clone(status)  # spent: from here on the status is changed, so it is copied
    status["disruptionsAllowed"] = allowed - 1
    now = server.now()
    if status["disruptionsAllowed"] == 0:
        update_disruption_allowed_condition(status, now)
    if dry_run:
        return
    _preflight(server, namespace, pod_name, options, user)
    disrupted = dict(status.get("disruptedPods") or {})
    disrupted[pod_name] = now
    status["disruptedPods"] = disrupted
    server.update_status(builtins.POD_DISRUPTION_BUDGET, namespace, name, pdb, user=LOOPBACK_USER, answer=False)


def _spend_budget(
    server: APIServer, namespace: str, pod_name: str, pdb: dict[str, Any], options: dict[str, Any], user: str
) -> None:
    """``RetryOnConflict`` around checkAndDecrement, re-reading the PDB after a conflict; when the
    retries run out the last conflict is returned (client-go's ``OnError`` does so)."""
    last: errors.StatusError | None = None
    for attempt in range(EVICTIONS_RETRY_STEPS):
        if attempt:
            pdb = server.get(builtins.POD_DISRUPTION_BUDGET, namespace, pdb["metadata"]["name"])
        try:
            _check_and_decrement(server, namespace, pod_name, pdb, options, user)
            return
        except errors.StatusError as err:
            if err.code != 409:
                raise
            last = err
    assert last is not None
    raise last


def evict(server: APIServer, namespace: str, name: str, body: Any, *, dry_run: bool = False,
          user: str = "admin") -> dict[str, Any]:
    """Evict pod ``namespace/name`` as ``POST pods/<name>/eviction`` does; returns the 201 Status.

    Raises :class:`StatusError` with upstream's code, reason, message, causes and Retry-After for
    every refusal (see the module docstring for the order of checks). ``dry_run`` is the query's
    ``dryRun=All``; the body's ``deleteOptions`` go to the pod DELETE unchanged (plus a
    resourceVersion precondition where upstream adds one)."""
    meta = _check_body(namespace, body)
    # NamespaceLifecycle is mutating admission: the create handler runs it before EvictionREST.Create.
    server.check_namespace_for_create(builtins.POD, namespace, name)
    if meta.get("name") != name:
        raise errors.bad_request(NAME_MISMATCH_MSG)
    options = _delete_options(body, dry_run)
    caller_rv = _rv_precondition(options)

    pod: dict[str, Any] = {}
    for attempt in range(EVICTIONS_RETRY_STEPS):
        # Read only (most evictions of a drain are refused by a budget): the stored pod, not a copy.
        pod = server.stored_view(builtins.POD, namespace, name)
        if not can_ignore_pdb(pod):
            break
        delete_options = options
        if _should_enforce_resource_version(pod) and caller_rv is None:
            delete_options = _with_rv_precondition(options, pod["metadata"]["resourceVersion"])
        try:
            _add_condition_and_delete(server, namespace, name, delete_options, user)
        except errors.StatusError as err:
            # Conflicts are retried unless the caller pinned a resourceVersion.
            if err.code == 409 and caller_rv is None and attempt + 1 < EVICTIONS_RETRY_STEPS:
                continue
            raise
        return _success()

    pdbs = _matching_pdbs(server, pod)
    if len(pdbs) > 1:
        raise errors.StatusError(errors.status(500, "", MULTIPLE_PDBS_MSG))
    guard_readiness = False
    pdb_name = ""
    if pdbs:
        pdb = pdbs[0]
        pdb_name = pdb["metadata"]["name"]
        spec = pdb.get("spec") or {}
        status = pdb.get("status") or {}
        if not is_pod_ready(pod) and (
            spec.get("unhealthyPodEvictionPolicy") == ALWAYS_ALLOW
            or int(status.get("currentHealthy") or 0) >= int(status.get("desiredHealthy") or 0) > 0
        ):
            # An unready pod does not count as healthy: deleting it spends nothing.
            guard_readiness = True
        else:
            _spend_budget(server, namespace, name, pdb, options, user)

    delete_options = options
    if guard_readiness:
        # The pod must not have become ready since it was judged unready.
        delete_options = _with_rv_precondition(options, pod["metadata"]["resourceVersion"])
    try:
        _add_condition_and_delete(server, namespace, name, delete_options, user)
    except errors.StatusError as err:
        if err.code == 409 and guard_readiness and caller_rv is None:
            raise _still_processing(pdb_name) from None
        raise
    return _success()


