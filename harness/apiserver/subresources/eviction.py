"""The ``pods/eviction`` subresource: deleting a pod only when its PodDisruptionBudget allows it.

``POST /api/v1/namespaces/<ns>/pods/<name>/eviction`` behaves as kube-apiserver 1.32's
``EvictionREST.Create`` (``pkg/registry/core/pod/storage/eviction.go``), checked in this order:

1. the body (``policy/v1`` or ``policy/v1beta1`` ``Eviction``; ``apiVersion``/``kind`` may be
   missing) and its namespace (400), then the NamespaceLifecycle admission of a create
   (404 missing namespace, 403 ``NamespaceTerminating``), which upstream runs before the
   handler; then the name (400) and the query/body dryRun agreement (plain 500);
2. the pod (404); a Pending, Succeeded, Failed or deleting pod is deleted without looking at
   budgets;
3. the budgets whose selector matches the pod (nil selects nothing, ``{}`` everything, an
   unparseable one is skipped): more than one is a 500 without reason, none means delete;
4. an unready pod is deleted without spending the budget under ``AlwaysAllow``, or under
   ``IfHealthyBudget`` (the default) when the budget is currently met;
5. otherwise the budget is checked and decremented (``checkAndDecrement``): 429 while the
   disruption controller has not observed the PDB's generation (Retry-After 10), 403 for a
   negative budget or an oversized ``disruptedPods``, 429 without Retry-After when no disruption
   is allowed; else ``disruptionsAllowed`` goes down by one and ``disruptedPods[<pod>]`` is
   stamped, in a status-only write of the PDB (in memory only on a dry run);
6. the pod gets the ``DisruptionTarget`` condition through a status update, then is deleted with
   the caller's ``deleteOptions`` (graceful deletion is the server's);
7. success is ``201`` with a bare ``Status``.

The PDB rules (selection, readiness, the ``DisruptionAllowed`` condition) are
``harness/apiserver/pdb.py``'s, shared with the disruption controller. Every read and write goes
through :class:`APIServer`'s public operations (``select``, ``write_status``, ``delete_dry_run``,
``plain_delete``, ``check_namespace_for_create``).
"""

from __future__ import annotations

from typing import Any

from harness.apiserver import builtins, deleteoptions
from harness.apiserver.pdb import ALWAYS_ALLOW, is_pod_ready, pdb_selects, update_disruption_allowed_condition
from harness.apiserver.resources import ResourceType
from harness.apiserver.server import APIServer
from harness.apiserver.subresources.base import CREATE, ServedBy, SubresourceRequest
from harness.kube import errors
from harness.kube.names.core import (
    CONDITION_TRUE,
    DISRUPTION_TARGET,
    EVICTION_BY_EVICTION_API,
    POD_FAILED,
    POD_PENDING,
    POD_SUCCEEDED,
)
from harness.kube.names.policy import PDB_VIOLATION_MESSAGE, POLICY_GROUP, POLICY_V1
from harness.kube.objects import clone

# -- Eviction API facts (policy/v1, eviction.go) ------------------------------------------------------

EVICTION_KIND = "Eviction"
EVICTION_API_VERSIONS = ("policy/v1", "policy/v1beta1")
# Where the decoder says an unknown kind would have had to be registered (upstream's scheme name).
LEGACY_SCHEME = "pkg/api/legacyscheme/scheme.go:30"

NAME_MISMATCH_MSG = "name in URL does not match name in Eviction object"
NAMESPACE_MISMATCH_MSG = "the namespace of the provided object does not match the namespace sent on the request"
NOT_AN_OBJECT_MSG = "the body of the request was not a JSON object"
DRY_RUN_MISMATCH_MSG = "Non-matching dry-run options in request and content: {} and {}"
MULTIPLE_PDBS_MSG = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
DISRUPTION_BUDGET_CAUSE = "DisruptionBudget"  # policyv1.DisruptionBudgetCause
STILL_PROCESSING_MSG = "The disruption budget {} is still being processed by the server."
NEEDS_HEALTHY_MSG = "The disruption budget {} needs {} healthy pods and has {} currently"
NEGATIVE_BUDGET_MSG = "pdb disruptions allowed is negative"
TOO_MANY_DISRUPTED_MSG = "DisruptedPods map too big - too many evictions not confirmed by PDB controller"
# NewForbidden(policy.Resource("poddisruptionbudget"), ...): singular resource, policy group.
PDB_FORBIDDEN_RESOURCE = "poddisruptionbudget"
# The conflicts addConditionAndDeletePod raises name the resource "Pod" (schema.GroupResource{Resource: "Pod"}).
POD_CONFLICT_RESOURCE = "Pod"
UID_PRECONDITION_MSG = (
    "the UID in the precondition ({}) does not match the UID in record ({}). "
    "The object might have been deleted and then recreated"
)
RV_PRECONDITION_MSG = (
    "the ResourceVersion in the precondition ({}) does not match the ResourceVersion in record ({}). "
    "The object might have been modified"
)

STILL_PROCESSING_RETRY_AFTER = 10
MAX_DISRUPTED_POD_SIZE = 2000
# EvictionsRetry: 20 steps of 500 ms. Without concurrency nothing waits; the count is what matters.
EVICTIONS_RETRY_STEPS = 20

# The apiserver writes the PDB status through its loopback client.
LOOPBACK_USER = "system:apiserver"

# -- Pod facts -----------------------------------------------------------------------------------------

EVICTION_API_MESSAGE = "Eviction API: evicting"

# -- the request --------------------------------------------------------------------------------------


def _check_body(namespace: str, body: Any) -> dict[str, Any]:
    """Decode the Eviction as the create handler does; returns its metadata."""
    if not isinstance(body, dict):
        raise errors.bad_request(NOT_AN_OBJECT_MSG)
    api_version = body.get("apiVersion") or ""
    kind = body.get("kind") or ""
    if kind and kind != EVICTION_KIND:
        version = api_version.rsplit("/", 1)[-1]
        raise errors.bad_request(
            f'{kind} in version "{version}" cannot be handled as a {EVICTION_KIND}: no kind "{kind}" is registered '
            f'for version "{api_version or POLICY_V1}" in scheme "{LEGACY_SCHEME}"'
        )
    if api_version and api_version not in EVICTION_API_VERSIONS:
        raise errors.bad_request(
            f"the API version in the data ({api_version}) does not match the expected API version "
            f"({POLICY_V1})"
        )
    meta = body.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    body_namespace = meta.get("namespace")
    if body_namespace and body_namespace != namespace:
        raise errors.bad_request(NAMESPACE_MISMATCH_MSG)
    return meta


def _go_slice(values: list[Any]) -> str:
    """A string slice as Go's ``%v`` prints it: ``[All]``."""
    return "[" + " ".join(str(v) for v in values) + "]"


def _delete_options(body: dict[str, Any], dry_run: bool) -> dict[str, Any]:
    """``propagateDryRun``: the body's deleteOptions with the query's dryRun merged in."""
    raw = body.get("deleteOptions")
    if not dry_run and (raw is None or (type(raw) is dict and not raw)):
        return {}  # nothing to check or merge (a drain's evictions: most of them refused)
    query = ["All"] if dry_run else []
    # Every field's type is checked before the first write (the budget, the pod condition).
    deleteoptions.check(raw, owner=EVICTION_KIND, prefix="deleteOptions.")
    if not isinstance(raw, dict):
        return {"dryRun": query} if query else {}
    options = {k: v for k, v in raw.items() if k not in ("apiVersion", "kind")}
    given = list(options.get("dryRun") or [])
    if not given:
        if query:
            options["dryRun"] = query
        return options
    if query and given != query:
        # A plain error: the apiserver answers 500 with no reason.
        message = DRY_RUN_MISMATCH_MSG.format(_go_slice(query), _go_slice(given))
        raise errors.StatusError(errors.status(500, "", message))
    return options


def _is_dry_run(options: dict[str, Any]) -> bool:
    return bool(options.get("dryRun"))


def _rv_precondition(options: dict[str, Any]) -> str | None:
    return (options.get("preconditions") or {}).get("resourceVersion")


def _with_rv_precondition(options: dict[str, Any], resource_version: str) -> dict[str, Any]:
    out = dict(options)
    out["preconditions"] = {**(options.get("preconditions") or {}), "resourceVersion": resource_version}
    return out


def _phase(pod: dict[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def _deleting(pod: dict[str, Any]) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def can_ignore_pdb(pod: dict[str, Any]) -> bool:
    """``canIgnorePDB``: Pending, Succeeded, Failed and already-deleting pods skip the budgets."""
    return _phase(pod) in (POD_SUCCEEDED, POD_FAILED, POD_PENDING) or _deleting(pod)


def _should_enforce_resource_version(pod: dict[str, Any]) -> bool:
    return not (_phase(pod) in (POD_SUCCEEDED, POD_FAILED) or _deleting(pod))


def _still_processing(pdb_name: str) -> errors.StatusError:
    """``createTooManyRequestsError``: 429 with Retry-After 10 and the DisruptionBudget cause."""
    return errors.too_many_requests(
        PDB_VIOLATION_MESSAGE, STILL_PROCESSING_RETRY_AFTER,
        [{"reason": DISRUPTION_BUDGET_CAUSE, "message": STILL_PROCESSING_MSG.format(pdb_name)}],
    )


def _matching_pdbs(server: APIServer, pod: dict[str, Any]) -> list[dict[str, Any]]:
    meta = pod["metadata"]
    labels = meta.get("labels") or {}
    # The store lists one namespace's budgets from its own key index (not every namespace's). Most
    # evictions of a drain are refused by the budget, writing nothing: the budgets are the stored
    # ones (read only); the one that is spent is copied then (_check_and_decrement).
    return server.select(
        builtins.POD_DISRUPTION_BUDGET, meta.get("namespace") or "", lambda pdb: pdb_selects(pdb, labels),
        copy=False,
    )


def _with_own_conditions(view: dict[str, Any]) -> dict[str, Any]:
    """``view`` (a dict of its own over a stored pod's values) with a status and a list of conditions
    of its own: all :func:`_set_disruption_target` changes (it replaces or appends a condition, never
    edits one). The rest stays shared: the status write stores what it is given, and stored values are
    replaced, never edited in place."""
    if "status" in view:
        status = view["status"]
        if type(status) is dict:
            status = dict(status)
            conditions = status.get("conditions")
            if type(conditions) is list:
                status["conditions"] = list(conditions)
        view["status"] = status
    return view


# What a pod's DELETE was last found to allow before the eviction's first write: the stored pod then
# and the options checked (see _preflight).
Checked = tuple[dict[str, Any], dict[str, Any]]


def _add_condition_and_delete(
    server: APIServer, namespace: str, name: str, options: dict[str, Any], user: str,
    checked: Checked | None = None,
) -> None:
    """``addConditionAndDeletePod``: a status update adding DisruptionTarget (checked against the
    delete preconditions first), then the DELETE; on a dry run only the DELETE (which writes nothing).
    ``checked``: what the budget's spending already checked (see :func:`_preflight`)."""
    if not _is_dry_run(options):
        # The stored pod's status with a list of conditions of its own: the condition below changes
        # only that list. Written as upstream writes it, from the object read (no body to decode).
        stored = _preflight(server, namespace, name, options, user, checked)
        latest = _with_own_conditions({"status": stored["status"]} if "status" in stored else {})
        _set_disruption_target(latest, server.now())
        wants_rv = _rv_precondition(options) is not None
        updated = server.write_status(builtins.POD, stored, latest["status"], user=user, answer=wants_rv)
        if updated is not None:
            # The status write moved the resourceVersion; the delete must expect the new one.
            options = _with_rv_precondition(options, updated["metadata"]["resourceVersion"])
    server.delete(builtins.POD, namespace, name, options, user=user, answer=False)


def _preflight(
    server: APIServer, namespace: str, name: str, options: dict[str, Any], user: str, checked: Checked | None = None,
) -> dict[str, Any]:
    """What must hold for the pod's DELETE to succeed, checked before the eviction's first write
    (the budget or the condition), so that a refused eviction leaves nothing behind: the delete
    preconditions (409, named as addConditionAndDeletePod names them), then the DELETE itself as a
    dry run (admission, options). Returns the stored pod as it is now (read-only: not a copy).

    ``checked``: a pod and options this already passed for. When the pod is still that stored
    version (a write replaces a stored object, never changes it), the options are the same and
    the DELETE runs no admission plugin or preparer (:meth:`APIServer.plain_delete`), the answer
    is the same: it is not asked twice."""
    latest = server.stored_view(builtins.POD, namespace, name)
    if checked is not None and latest is checked[0] and options is checked[1] and server.plain_delete(builtins.POD):
        return latest
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
) -> Checked | None:
    """``checkAndDecrement``: refuse per the budget, or spend one disruption (a status write).
    ``pdb`` is read only (the stored budget, mostly). Returns what the pod's DELETE was checked
    against before the write (None on a dry run, which checks nothing)."""
    meta = pdb["metadata"]
    status = pdb.get("status", {})  # as setdefault read it: a null status stays null
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
    dry_run = _is_dry_run(options)
    # Spent: from here on the status is changed, in a status of its own that becomes the stored one;
    # what it keeps of the read one is never changed in place (stored values are replaced, not
    # edited), so only what is changed needs a copy: the DisruptionAllowed condition (edited in
    # place) and disruptedPods (replaced).
    status = dict(status)
    status["disruptionsAllowed"] = allowed - 1
    now = server.now()
    if status["disruptionsAllowed"] == 0:
        if "conditions" in status:
            status["conditions"] = clone(status["conditions"])
        update_disruption_allowed_condition(status, now)
    if dry_run:
        return None
    pod = _preflight(server, namespace, pod_name, options, user)
    disrupted = dict(status.get("disruptedPods") or {})
    disrupted[pod_name] = now
    status["disruptedPods"] = disrupted
    # The update of the budget read (a 409 when it is no longer the stored version, as a PUT of it
    # with its resourceVersion answers), written from the object itself: no body to decode.
    rt = builtins.POD_DISRUPTION_BUDGET
    stored = server.stored_view(rt, namespace, name)
    if stored["metadata"].get("resourceVersion") != meta.get("resourceVersion"):
        raise errors.conflict(rt.plural, rt.group, name)
    server.write_status(rt, stored, status, user=LOOPBACK_USER, answer=False)
    return pod, options


def _spend_budget(
    server: APIServer, namespace: str, pod_name: str, pdb: dict[str, Any], options: dict[str, Any], user: str
) -> Checked | None:
    """``RetryOnConflict`` around checkAndDecrement, re-reading the PDB after a conflict; when the
    retries run out the last conflict is returned (client-go's ``OnError`` does so). Returns what
    the spending checked of the pod's DELETE (see :func:`_check_and_decrement`)."""
    last: errors.StatusError | None = None
    for attempt in range(EVICTIONS_RETRY_STEPS):
        if attempt:
            pdb = server.get(builtins.POD_DISRUPTION_BUDGET, namespace, pdb["metadata"]["name"])
        try:
            return _check_and_decrement(server, namespace, pod_name, pdb, options, user)
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
    checked: Checked | None = None
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
            checked = _spend_budget(server, namespace, name, pdb, options, user)

    delete_options = options
    if guard_readiness:
        # The pod must not have become ready since it was judged unready.
        delete_options = _with_rv_precondition(options, pod["metadata"]["resourceVersion"])
    try:
        _add_condition_and_delete(server, namespace, name, delete_options, user, checked)
    except errors.StatusError as err:
        if err.code == 409 and guard_readiness and caller_rv is None:
            raise _still_processing(pdb_name) from None
        raise
    return _success()


def _success() -> dict[str, Any]:
    # create.go fills in code 201 for a Status result without one.
    return errors.status(201, "", "", None, success=True)


class Eviction(ServedBy):
    """``pods/eviction``: a ``policy/v1`` Eviction, answered by :func:`evict`."""

    name = "eviction"
    verbs = (CREATE,)
    resources = (("", "pods"),)

    def response_kind(self, rt: ResourceType) -> tuple[str, str, str]:
        return POLICY_GROUP, "v1", EVICTION_KIND

    def create(self, request: SubresourceRequest, body: Any) -> dict[str, Any]:
        return evict(request.server, request.namespace or "", request.name, body, dry_run=request.dry_run,
                     user=request.user)


EVICTION = Eviction()
