"""One cluster's API: the REST semantics of kube-apiserver 1.32 on top of a :class:`Store`.

Every verb of every resource goes through :class:`APIServer`: the in-process client calls it
directly and the HTTP facade translates requests into the same calls, so there is one place for
each rule (creation metadata, optimistic concurrency, status separation, generation, graceful
deletion, finalizers, propagation, namespace lifecycle, dry run, admission and validation).
"""

from __future__ import annotations

import base64
import binascii
import gc
import json
import logging
import os
import random
from collections.abc import Callable
from typing import Any

from harness.apiserver import (
    builtins,
    conversion,
    crd,
    decoding,
    defaults,
    deleteoptions,
    limits,
    managedfields,
    parsing,
    patch,
    validation,
)
from harness.apiserver.audit import AuditLog
from harness.apiserver.resources import Registry, ResourceType
from harness.apiserver.store import Store
from harness.apiserver.watch import Watch
from harness.clock import VirtualClock
from harness.kube import errors, selectors
from harness.kube import validation as kube_validation
from harness.kube.names.meta import (
    APPLY_PATCH_CONTENT_TYPE,
    FOREGROUND_FINALIZER,
    JSON_PATCH_CONTENT_TYPE,
    MERGE_PATCH_CONTENT_TYPE,
    ORPHAN_FINALIZER,
    STRATEGIC_MERGE_PATCH_CONTENT_TYPE,
)
from harness.kube.names.meta import PROPAGATION_BACKGROUND as BACKGROUND
from harness.kube.names.meta import PROPAGATION_FOREGROUND as FOREGROUND
from harness.kube.names.meta import PROPAGATION_ORPHAN as ORPHAN
from harness.kube.objects import IdentityMemo, clone, replacement
from harness.kube.time import parse_rfc3339, seconds_after

log = logging.getLogger("lifecycle_tck.apiserver")

PROPAGATION_POLICIES = (BACKGROUND, FOREGROUND, ORPHAN)
# Kinds whose create keeps the status the client sent (the kubelet registers Nodes with theirs).
KEEP_STATUS_ON_CREATE = {("v1", "Node")}
DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
GENERATE_NAME_RETRIES = 7  # 1.32 retries generateName collisions (RetryGenerateName is GA)
# Subresources that write only status: a CSR's approval changes its status conditions.
STATUS_LIKE_SUBRESOURCES = ("status", "approval")
# Registries that set ReturnDeletedObject: a DELETE that removes the object answers with it; every
# other resource (custom resources included) answers with a Success Status.
RETURNS_DELETED_OBJECT = {
    ("", "pods"), ("", "services"), ("", "namespaces"), ("", "serviceaccounts"), ("", "persistentvolumes"),
    ("", "persistentvolumeclaims"), ("storage.k8s.io", "storageclasses"), ("storage.k8s.io", "volumeattachments"),
    ("storage.k8s.io", "csidrivers"), ("storage.k8s.io", "csinodes"),
}

# An admission plugin sees (operation, resource, new object, old object) and returns field errors
# (422) or raises a StatusError. Operations: CREATE, UPDATE, DELETE.
Admission = Callable[[str, ResourceType, dict[str, Any] | None, dict[str, Any] | None], list[errors.FieldError]]
# Called for every committed change, after the store: (verb, resource, old, new).
WriteHook = Callable[[str, ResourceType, dict[str, Any] | None, dict[str, Any] | None], None]
# Called on the first DELETE of an object, before its finalizers are read: returns a changed copy to
# mark instead (e.g. with an extra finalizer), or None.
DeletePreparer = Callable[[ResourceType, dict[str, Any]], dict[str, Any] | None]


# Python's cyclic garbage collector runs a pass every 700 net allocations of containers (its default
# threshold). A write allocates hundreds of dicts and lists (the decoded body, its managedFields,
# watch events) and most of them live on in the store, so each write paid for several passes that
# found little: a fifth of the CPU of a 1,000-Pod drain. Passes every 10,000 allocations still
# reclaim cycles (watches, closures) steadily; objects of the API form none.
PYTHON_GC_THRESHOLD = (700, 10, 10)
SERVER_GC_THRESHOLD = (10_000, 10, 10)


def relax_garbage_collector() -> None:
    """Run the cyclic collector less often (:data:`SERVER_GC_THRESHOLD`), once per process, unless
    the process chose its own thresholds (only Python's defaults are changed)."""
    if gc.get_threshold() == PYTHON_GC_THRESHOLD:
        gc.set_threshold(*SERVER_GC_THRESHOLD)


# A uid is a random (version 4) UUID, as the apiserver's. Drawn from a generator of the server's own,
# seeded from the system's randomness (and again in a forked child, so no two processes share a
# sequence): ``uuid.uuid4()`` reads the system's randomness and builds a UUID object for every create,
# several times the cost of one 128-bit draw. Uids need to be unique, not secret.
_UID_RANDOM = random.Random()  # noqa: S311 - uniqueness, not secrecy
os.register_at_fork(after_in_child=_UID_RANDOM.seed)
_UID_KEEP = ~((0xF000 << 64) | (0xC000 << 48))  # clears the version nibble and the variant's two bits
_UID_SET = (0x4000 << 64) | (0x8000 << 48)  # version 4, variant RFC 4122 (what uuid.uuid4 sets)


def new_uid() -> str:
    """A random version 4 UUID in its canonical text form, as ``str(uuid.uuid4())``."""
    text = "%032x" % (_UID_RANDOM.getrandbits(128) & _UID_KEEP | _UID_SET)
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def _suffix() -> str:
    # The apiserver's generateName suffix: 5 characters from a consonant-and-digit alphabet.
    return "".join(random.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5))


# How many defaulted Pod specs, and copies of other remembered values, a server keeps for sharing
# (forgotten all at once when full).
PREPARED_SPECS = 256

# ObjectMeta fields that are omitempty: an empty list or map is not stored (so a strategic patch that
# removes the last finalizer leaves no "finalizers": [] behind).
_OMITEMPTY_META = ("finalizers", "ownerReferences", "labels", "annotations", "managedFields")


# The empty values of an omitempty field, built once (never changed): comparing with a literal
# ``([], {}, None)`` built an empty list and map at every test of every write.
_EMPTY: tuple[Any, ...] = ([], {}, None)
# ObjectMeta fields an update keeps from the stored object whatever the body says.
_KEPT_ON_UPDATE = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds")


def _drop_empty_meta(obj: dict[str, Any]) -> None:
    meta = obj["metadata"]
    for field in _OMITEMPTY_META:
        if field in meta and meta[field] in _EMPTY:
            del meta[field]


def _manager(field_manager: str | None, user: str) -> str:
    """The manager a write is recorded under: the ``fieldManager`` given, else the user (the HTTP
    facade passes the User-Agent prefix, as the apiserver derives it)."""
    return field_manager if field_manager is not None else user


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _replacement(stored: dict[str, Any]) -> dict[str, Any]:
    """A new version of a stored object that a write changes only in its metadata's own fields
    (:func:`~harness.kube.objects.replacement`), the finalizers a list of their own."""
    out = replacement(stored, "metadata")
    meta = out["metadata"]
    if isinstance(meta.get("finalizers"), list):
        meta["finalizers"] = list(meta["finalizers"])
    return out


class APIServer:
    """The API of one cluster: resources, objects, watches, admission and the audit trail."""

    def __init__(
        self,
        name: str,
        clock: VirtualClock,
        *,
        audit: AuditLog | None = None,
        history: int | None = None,
        history_bytes: int | None = None,
    ) -> None:
        relax_garbage_collector()
        self.name = name
        self.clock = clock
        self.store = Store(history_bytes=history_bytes) if history is None else Store(history, history_bytes)
        self.registry = Registry()
        self.audit = audit if audit is not None else AuditLog()
        self._admission: list[tuple[str, str, Admission]] = []
        # The plugins of each (group, kind), in the order they were added: asked at every write.
        self._admission_for: dict[tuple[str, str], tuple[Admission, ...]] = {}
        self._write_hooks: list[WriteHook] = []
        self._delete_preparers: list[tuple[str, str, DeletePreparer]] = []
        # Remembered decoded PodSpec -> the defaulted spec the Pods created from it share.
        self._prepared_specs: IdentityMemo[dict[str, Any], dict[str, Any]] = IdentityMemo(PREPARED_SPECS)
        # Remembered decoded value -> the copy the objects this server stores share.
        self._shared_values: IdentityMemo[Any, Any] = IdentityMemo(PREPARED_SPECS)
        for rt in builtins.BUILTINS:
            self.registry.add(rt)
        crd.install(self)
        for ns in DEFAULT_NAMESPACES:
            self.create(builtins.NAMESPACE, None, {"metadata": {"name": ns}}, user="system:apiserver",
                        field_manager="kube-apiserver")  # the system-namespaces controller's manager

    # -- extension points ------------------------------------------------------------------------

    def add_admission(self, api_group: str, kind: str, plugin: Admission) -> None:
        """Run ``plugin`` on writes of ``kind`` in ``api_group`` (``*`` for every kind). A plugin may
        also change ``new`` in place (mutating admission): the object it saw is what is stored."""
        self._admission.append((api_group, kind, plugin))
        self._admission_for.clear()

    def _admission_plugins(self, rt: ResourceType) -> tuple[Admission, ...]:
        key = (rt.group, rt.kind)
        plugins = self._admission_for.get(key)
        if plugins is None:
            plugins = self._admission_for[key] = tuple(
                plugin for group, kind, plugin in self._admission if group == rt.group and kind in (rt.kind, "*")
            )
        return plugins

    def on_write(self, hook: WriteHook) -> None:
        """Call ``hook`` after every committed write (used for CRD registration)."""
        self._write_hooks.append(hook)

    def on_delete(self, api_group: str, kind: str, preparer: DeletePreparer) -> None:
        """Let ``preparer`` change an object of ``kind`` on its first DELETE, before finalizers are
        read (the CRD cleanup finalizer is added this way, as the CRD storage's Delete does)."""
        self._delete_preparers.append((api_group, kind, preparer))

    def _mutating_admission(self, rt: ResourceType) -> bool:
        """Whether an admission plugin runs on writes of ``rt`` (one may change the object in place)."""
        return bool(self._admission_plugins(rt))

    def _admit(self, operation: str, rt: ResourceType, new: dict[str, Any] | None, old: dict[str, Any] | None) -> None:
        errs: list[errors.FieldError] = []
        for plugin in self._admission_plugins(rt):
            errs.extend(plugin(operation, rt, new, old))
        if errs:
            obj = new if new is not None else old or {}
            raise errors.invalid_object(rt.kind, rt.group, _meta(obj).get("name", ""), errs)

    # -- helpers -----------------------------------------------------------------------------------

    @staticmethod
    def skey(rt: ResourceType) -> tuple[str, str]:
        return conversion.storage_key(rt.group, rt.plural)

    def now(self) -> str:
        return self.clock.isoformat()

    def _out(self, rt: ResourceType, obj: dict[str, Any], *, shared: bool = False) -> dict[str, Any]:
        """A copy for the caller, at the apiVersion it asked for. ``shared``: a shallow view whose
        nested values are the store's own, for callers that only serialise it."""
        out: dict[str, Any] = {"kind": rt.kind, "apiVersion": rt.api_version}
        out.update(obj if shared else clone(obj))
        out["kind"] = rt.kind
        out["apiVersion"] = rt.api_version
        return conversion.from_storage(rt, out) if conversion.converts(rt) else out

    def _record(
        self,
        verb: str,
        rt: ResourceType,
        namespace: str,
        name: str,
        user: str,
        code: int,
        old: dict[str, Any] | None,
        new: dict[str, Any] | None,
        subresource: str = "",
    ) -> None:
        audit = self.audit
        if audit.enabled:  # a world without an audit trail (the benchmarks') does not name every write for it
            audit.record(self.clock.now(), self.name, verb, rt.qualified, subresource, namespace or "", name, user,
                         code, old, new)
        for hook in self._write_hooks:
            try:
                hook(verb, rt, old, new)
            except Exception:  # noqa: BLE001 - the write is committed and audited: report the bug, keep it
                log.exception("a write hook failed after %s of %s %s/%s", verb, rt.qualified, namespace, name)

    def _key(self, rt: ResourceType, namespace: str | None, name: str) -> tuple[str, str]:
        return ((namespace or "") if rt.namespaced else "", name)

    def _require_namespace_arg(self, rt: ResourceType, namespace: str | None) -> str:
        if rt.namespaced and not namespace:
            raise errors.bad_request("the server could not find the requested resource (namespace required)")
        return namespace or "" if rt.namespaced else ""

    def _get_stored(self, rt: ResourceType, namespace: str | None, name: str) -> dict[str, Any]:
        obj = self.store.get(self.skey(rt), self._key(rt, namespace, name))
        if obj is None:
            raise errors.not_found(rt.plural, rt.group, name)
        return obj

    def check_namespace_for_create(self, rt: ResourceType, namespace: str, name: str) -> None:
        """NamespaceLifecycle admission of a create: 404 for a missing namespace, 403
        ``NamespaceTerminating`` for a deleting one (a subresource create runs it too)."""
        if not rt.namespaced:
            return
        ns = self.store.get(self.skey(builtins.NAMESPACE), ("", namespace))
        if ns is None:
            raise errors.not_found("namespaces", "", namespace)
        if ns.get("status", {}).get("phase") == "Terminating" or _meta(ns).get("deletionTimestamp"):
            raise errors.forbidden_error(
                rt.plural, rt.group, name,
                f"unable to create new content in namespace {namespace} because it is being terminated",
                [{"reason": "NamespaceTerminating", "message": f"namespace {namespace} is being terminated",
                  "field": "metadata.namespace"}],
            )

    def _check_body(
        self, rt: ResourceType, body: Any, namespace: str | None, *, origin: str = decoding.BODY,
        status_of: dict[str, Any] | None = None, remembered: list[tuple[dict[str, Any], str, Any]] | None = None,
    ) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise errors.bad_request("the body of the request was not a JSON object")
        decoding.check_type_meta(rt.kind, body)
        if "apiVersion" in body and body["apiVersion"] != rt.api_version:
            # Built-ins of another served version of the same group convert; for us the versions are
            # the same shape, so accept any version of the group.
            group = body["apiVersion"].rsplit("/", 1)[0] if "/" in str(body["apiVersion"]) else ""
            if group != rt.group:
                raise errors.bad_request(
                    f"the API version in the data ({body['apiVersion']}) does not match the expected API version "
                    f"({rt.api_version})"
                )
        if "kind" in body and body["kind"] not in (rt.kind, ""):
            raise errors.bad_request(
                f"the kind in the data ({body['kind']}) does not match the expected kind ({rt.kind})"
            )
        # The decoded body is a private deep copy (but for the memo's values listed in ``remembered``, read
        # only until the caller swaps in copies of its own): it becomes the stored object without another copy.
        obj = decoding.decode(rt, body, origin, status_of=status_of, remembered=remembered)
        meta = obj.get("metadata")
        if meta is None:
            meta = {}
        if not isinstance(meta, dict):
            raise errors.bad_request("metadata must be an object")
        obj["apiVersion"] = rt.api_version
        obj["kind"] = rt.kind
        obj["metadata"] = meta
        if rt.namespaced:
            body_ns = meta.get("namespace")
            if body_ns and namespace and body_ns != namespace:
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            if namespace:
                obj["metadata"]["namespace"] = namespace
        else:
            obj["metadata"].pop("namespace", None)
        return conversion.to_storage(rt, obj) if conversion.converts(rt) else obj

    def _validate(self, rt: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        errs = kube_validation.validate_object_meta(obj, namespaced=rt.namespaced, name_rule=rt.name_rule)
        if old is not None:
            # Metadata without errors has valid labels, annotations and owner references: the
            # update's checks of the same values would find nothing either.
            errs += kube_validation.validate_object_meta_update(obj, old, parts_valid=not errs)
        errs += self._validate_kind(rt, obj, old)
        errs += limits.data_size_errors(rt.api_version, rt.kind, obj)
        if errs:
            raise errors.invalid_object(rt.kind, rt.group, _meta(obj).get("name", ""), errs)

    @staticmethod
    def _validate_kind(rt: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None) -> list[errors.FieldError]:
        spec = obj.get("spec") if old is not None else None
        if spec is not None and old is not None and spec is old.get("spec") and (
            (rt.api_version, rt.kind) in (("policy/v1", "PodDisruptionBudget"), ("v1", "Pod"))
            or (rt.kind in validation.WORKLOAD_KINDS and not rt.custom)
        ):
            # For these kinds an update's checks read the two specs alone: with one spec object on both
            # sides (a status write keeps the stored one) the answer is a function of that spec, which
            # a spec of the same JSON found valid before gives too (the Pods of one template share it).
            return kube_validation.checked_once(
                f"{rt.api_version}/{rt.kind} update keeping its spec",
                lambda _spec, _path: APIServer._kind_errors(rt, obj, old), spec, "spec",
            )
        return APIServer._kind_errors(rt, obj, old)

    @staticmethod
    def _kind_errors(rt: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None) -> list[errors.FieldError]:
        key = (rt.api_version, rt.kind)
        if key == ("policy/v1", "PodDisruptionBudget"):
            return validation.validate_pdb_spec(obj.get("spec") or {})
        if key == ("storage.k8s.io/v1", "VolumeAttachment"):
            if old is not None:
                return validation.validate_volume_attachment_update(obj, old)
            return validation.validate_volume_attachment(obj)
        if key == ("batch/v1", "Job"):
            return validation.validate_job(obj, old)
        if rt.kind in validation.WORKLOAD_KINDS and not rt.custom:
            return validation.validate_workload_spec(rt.kind, obj.get("spec"))
        if key == ("v1", "Pod"):
            if old is not None:
                return validation.validate_pod_update(obj, old)
            return validation.validate_pod_spec(obj.get("spec") or {})
        return []

    def _shares_pod_specs(self, rt: ResourceType) -> bool:
        """Whether a create of ``rt`` stores a spec shared with the Pods created from the same spec: a
        Pod (its one PodSpec is its spec), with no admission plugin (one may change the spec in place)."""
        return rt.kind == "Pod" and rt.group == "" and not rt.custom and not self._admission_plugins(rt)

    def _prepared_spec(self, rt: ResourceType, decoded: dict[str, Any]) -> dict[str, Any]:
        """The spec a create of ``rt`` stores for the remembered decoded spec ``decoded``: its copy with
        the create-time defaults, made once and then shared by every Pod this server creates from that
        spec (a stored object is never changed in place, so sharing what the Pods of one template hold
        alike saves a copy of it per Pod). This server's own: no other server stores it."""
        def prepare(spec: dict[str, Any]) -> dict[str, Any]:
            scratch: dict[str, Any] = {"spec": clone(spec)}
            defaults.prepare_for_create(rt.api_version, rt.kind, scratch)
            return scratch["spec"]  # type: ignore[no-any-return]

        return self._prepared_specs.get(decoded, prepare)

    def _shared_copy(self, value: Any) -> Any:
        """This server's copy of a value the decoding memo remembers, made once and shared by every
        object it stores that value in (stored objects are never changed in place); no other server
        stores it."""
        return self._shared_values.get(value, clone)

    # -- create ------------------------------------------------------------------------------------

    def create(
        self,
        rt: ResourceType,
        namespace: str | None,
        body: Any,
        *,
        dry_run: bool = False,
        user: str = "admin",
        field_manager: str | None = None,
        answer: bool = True,
        shared: bool = False,
    ) -> dict[str, Any] | None:
        """Create an object (201). Sets uid, creationTimestamp, resourceVersion, generation and
        the kind's defaults; resolves generateName; rejects duplicates, missing or terminating
        namespaces and invalid objects without writing anything. ``field_manager`` (default: the
        user) gets the ``Update`` managedFields entry for everything the object holds.
        ``answer`` false: the caller (in-process) does not read the created object, so no copy
        is made of it and None is returned; the write itself is the same. ``shared``: the caller only
        reads the answer, which is then a view of the stored object (see :meth:`_out`)."""
        return self._create(rt, namespace, body, dry_run=dry_run, user=user,
                            manager=_manager(field_manager, user), applied=None, answer=answer, shared=shared)

    def _create(
        self,
        rt: ResourceType,
        namespace: str | None,
        body: Any,
        *,
        dry_run: bool,
        user: str,
        manager: str,
        applied: list[dict[str, Any]] | None,
        answer: bool = True,
        shared: bool = False,
    ) -> dict[str, Any] | None:
        # ``applied``: the managedFields of an apply that creates the object (its Apply entry
        # owns the configuration only, not the defaults the server adds).
        # A Pod whose spec the decoding memo remembers (the Pods of one template) is handed that spec
        # itself, to read only: it is replaced by this server's defaulted copy before anything changes it.
        remembered: list[tuple[dict[str, Any], str, Any]] | None = [] if self._shares_pod_specs(rt) else None
        obj = self._check_body(rt, body, namespace, remembered=remembered)
        shared_spec = None
        for holder, key, value in remembered or ():
            if holder is obj and key == "spec":
                shared_spec = value
            else:
                holder[key] = clone(value)  # (a status's conditions, dropped below: no copy kept)
        meta = obj["metadata"]
        ns = meta.get("namespace", "") if rt.namespaced else ""
        if rt.namespaced and not ns:
            raise errors.bad_request("the server could not find the requested resource (namespace required)")
        for field in ("uid", "resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "generation",
                      "creationTimestamp", "selfLink"):
            meta.pop(field, None)
        _drop_empty_meta(obj)
        generated = not meta.get("name") and bool(meta.get("generateName"))
        if generated:
            meta["name"] = meta["generateName"] + _suffix()
        # The uid first: the Job strategy writes it into the selector before validation.
        meta["uid"] = new_uid()
        spec = obj.get("spec")
        # (A remembered spec is never changed: it needs no copy to start a retry from.)
        unprepared_spec = (spec if spec is shared_spec and spec is not None else clone(spec)) if generated else None
        defaults.prepare_before_validation(rt.api_version, rt.kind, obj)
        self._validate(rt, obj, None)
        self.check_namespace_for_create(rt, ns, meta["name"])
        skey = self.skey(rt)
        if self.store.get(skey, (ns, meta["name"])) is not None:
            for _ in range(GENERATE_NAME_RETRIES if generated else 0):
                meta["name"] = meta["generateName"] + _suffix()
                if self.store.get(skey, (ns, meta["name"])) is None:
                    break
            else:
                raise errors.already_exists(rt.plural, rt.group, meta["name"])
            # Each retry starts again from the request (the Job's labels carry the new name).
            if unprepared_spec is None:
                obj.pop("spec", None)
            else:
                obj["spec"] = clone(unprepared_spec)
            defaults.prepare_before_validation(rt.api_version, rt.kind, obj)
        meta["creationTimestamp"] = self.now()
        if rt.has_generation:
            meta["generation"] = 1
        if rt.status and (rt.api_version, rt.kind) not in KEEP_STATUS_ON_CREATE:
            obj.pop("status", None)  # PrepareForCreate: what the creator says about status is dropped
        if shared_spec is not None and obj.get("spec") is shared_spec:
            obj["spec"] = self._prepared_spec(rt, shared_spec)
        defaults.prepare_for_create(rt.api_version, rt.kind, obj)
        self._admit("CREATE", rt, obj, None)
        managed = applied if applied is not None else managedfields.record_update(rt, None, obj, manager, self.now())
        if managed:
            meta["managedFields"] = managed
        else:
            meta.pop("managedFields", None)
        if dry_run:
            return self._out(rt, obj, shared=shared) if answer else None
        limits.fit(obj)  # before the resourceVersion moves: a refused write leaves no trace
        meta["resourceVersion"] = self.store.next_rv()
        self.store.put(skey, (ns, meta["name"]), obj)
        self._record("create", rt, ns, meta["name"], user, 201, None, obj)
        return self._out(rt, obj, shared=shared) if answer else None

    # -- read --------------------------------------------------------------------------------------

    def get(self, rt: ResourceType, namespace: str | None, name: str, *, shared: bool = False) -> dict[str, Any]:
        """The object, or 404 ``NotFound``. ``shared``: a read-only view (see :meth:`_out`)."""
        return self._out(rt, self._get_stored(rt, namespace, name), shared=shared)

    def _matcher(
        self, rt: ResourceType, label_selector: str | None, field_selector: str | None
    ) -> Callable[[dict[str, Any]], bool] | None:
        labels = selectors.parse_label_selector(label_selector) if label_selector else None
        fields = selectors.parse_field_selector(field_selector) if field_selector else None
        kind = rt.kind if not rt.custom else ""
        if fields is not None:
            selectors.check_field_selector(kind, fields, extra=rt.selectable_fields, namespaced=rt.namespaced)
        if labels is None and fields is None:
            return None
        # Render only the fields the selector names (spec.nodeName alone, mostly), not all of the kind's.
        field_test = selectors.field_matcher(kind, fields, rt.selectable_fields) if fields is not None else None
        if labels is None:
            return field_test

        def matches(obj: dict[str, Any]) -> bool:
            if not labels.matches(_meta(obj).get("labels") or {}):
                return False
            return field_test is None or field_test(obj)

        return matches

    def list(
        self,
        rt: ResourceType,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
        resource_version: str | None = None,
        shared: bool = False,
    ) -> dict[str, Any]:
        """A ``<Kind>List`` in key order, filtered by selectors, paged by ``limit``/``continue``.
        ``shared``: items are read-only views of the stored objects (for serialising, not changing)."""
        matches = self._matcher(rt, label_selector, field_selector)
        if resource_version not in (None, "", "0"):
            try:
                int(resource_version)
            except ValueError:
                raise errors.bad_request(f"invalid resource version: {resource_version}") from None
        start_after: tuple[str, str] | None = None
        list_rv = self.store.resource_version
        if continue_token:
            start_after, token_rv = self._decode_continue(continue_token)
            if token_rv < self.store.oldest_rv:
                raise errors.gone(
                    "The provided continue parameter is too old to display a consistent list result. "
                    "You can start a new list without the continue parameter."
                )
            list_rv = token_rv
        skey = self.skey(rt)
        ns_filter = namespace if rt.namespaced and namespace else None
        # In key order, after the continue token's key already: what is left is selecting and paging.
        candidates = self._candidates(rt, skey, ns_filter, field_selector, start_after)
        if matches is not None:
            candidates = [obj for obj in candidates if matches(obj)]
        page = max(limit, 0) if limit else len(candidates)  # a negative limit (truthy) pages nothing in
        if page < len(candidates):
            items, remaining = candidates[:page], len(candidates) - page
        else:
            items, remaining = candidates, 0
        list_meta: dict[str, Any] = {"resourceVersion": str(list_rv)}
        if remaining and items:
            last = items[-1]["metadata"]
            list_meta["continue"] = self._encode_continue((last.get("namespace") or "", last["name"]), list_rv)
            list_meta["remainingItemCount"] = remaining
        return {
            "kind": rt.list_kind,
            "apiVersion": rt.api_version,
            "metadata": list_meta,
            "items": [self._out(rt, o, shared=shared) for o in items],
        }

    def _candidates(
        self,
        rt: ResourceType,
        skey: tuple[str, str],
        namespace: str | None,
        field_selector: str | None,
        after: tuple[str, str] | None,
    ) -> list[dict[str, Any]]:
        # The objects a list reads, in key order, only those after ``after``: per-node pod lists (kubectl
        # drain, the kubelet, the machine controller) from the node index, the rest from the namespace's.
        if rt is builtins.POD or (rt.group == "" and rt.plural == "pods"):
            node = _single_equality(field_selector, ("spec.nodeName", "spec.host"))
            if node is not None:
                return self.store.pods_on_node(node, namespace, after)
        return self.store.items(skey, namespace, after)

    @staticmethod
    def _encode_continue(key: tuple[str, str], rv: int) -> str:
        raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": f"{key[0]}/{key[1]}"}).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @staticmethod
    def _decode_continue(token: str) -> tuple[tuple[str, str], int]:
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
            data = parsing.loads_json(raw)
            ns, _, name = str(data["start"]).partition("/")
            rv = data["rv"]
            # The token's resourceVersion is an int64: 1e300, a string or a bool is no token.
            if type(rv) is not int or not 0 <= rv < 2**63:
                raise ValueError(rv)
            return (ns, name), rv
        # OverflowError: an rv of 1e308 * 10 or Infinity that a hand-made token may carry.
        except (ValueError, KeyError, TypeError, OverflowError, binascii.Error):
            raise errors.bad_request(f"continue key is not valid: {token}") from None

    def watch(
        self,
        rt: ResourceType,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resource_version: str | None = None,
        allow_bookmarks: bool = False,
    ) -> Watch:
        """A watch from ``resource_version`` (unset or "0": synthetic ADDED for what exists)."""
        matches = self._matcher(rt, label_selector, field_selector)
        watch = Watch(
            namespace=namespace if rt.namespaced and namespace else None,
            matcher=matches,
            allow_bookmarks=allow_bookmarks,
            bookmark_kind=(rt.api_version, rt.kind),
            api_version=rt.api_version,
            convert=(lambda obj: conversion.from_storage(rt, obj)) if conversion.converts(rt) else None,
        )
        return self.store.watch(self.skey(rt), watch, resource_version)

    # -- update ------------------------------------------------------------------------------------

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
        # One look-up of the stored object serves the decoding (a status write keeps only the body's
        # status) and the update; a missing object is still a 404 only after the body's own 400s.
        old = self.store.get(self.skey(rt), self._key(rt, namespace, name))
        status_of = None
        if (old is not None and subresource in STATUS_LIKE_SUBRESOURCES and not conversion.converts(rt)
                and not self._mutating_admission(rt)):
            # Only the body's status is kept: what it repeats of the stored object is not decoded again.
            status_of = old
        remembered: list[tuple[dict[str, Any], str, Any]] | None = [] if status_of is not None else None
        new = self._check_body(rt, body, namespace, status_of=status_of, remembered=remembered)
        for holder, key, value in remembered or ():
            # A status write stores what it decoded as it is: a remembered value (a conditions list)
            # becomes this server's copy of it, shared by every object it stores that value in.
            holder[key] = self._shared_copy(value)
        new_meta = new["metadata"]  # _check_body made it a dict
        if new_meta.get("name") not in (None, name):
            raise errors.bad_request(
                f"the name of the object ({new_meta.get('name')}) does not match the name on the URL ({name})"
            )
        new_meta["name"] = name
        if old is None:
            raise errors.not_found(rt.plural, rt.group, name)
        rv = new_meta.get("resourceVersion")
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
        status_like = subresource in STATUS_LIKE_SUBRESOURCES
        if status_like:
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
        if status_like:
            # The metadata is the stored one's (a copy): uid, timestamps, generation and
            # resourceVersion are already what they must be; a kind with generation that was stored
            # without one gets the first.
            if rt.has_generation:
                if "generation" not in meta:
                    meta["generation"] = 1
            else:
                meta.pop("generation", None)
        else:
            for field in _KEPT_ON_UPDATE:
                if field in meta_old:
                    meta[field] = meta_old[field]
                else:
                    meta.pop(field, None)
            if rt.has_generation:
                generation = meta_old.get("generation", 1)
                if self._generation_changes(rt, old, new):
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

    @staticmethod
    def _generation_changes(rt: ResourceType, old: dict[str, Any], new: dict[str, Any]) -> bool:
        if rt.custom:
            strip = {"metadata", "status"} if rt.status else {"metadata"}
            return {k: v for k, v in old.items() if k not in strip} != {k: v for k, v in new.items() if k not in strip}
        return old.get("spec") != new.get("spec")

    @staticmethod
    def _finalized(rt: ResourceType, obj: dict[str, Any]) -> bool:
        """A deleting object whose last finalizer went away (and whose grace period is over)."""
        meta = obj["metadata"]
        if not meta.get("deletionTimestamp") or meta.get("finalizers"):
            return False
        if meta.get("deletionGracePeriodSeconds"):
            return False
        if rt.group == "" and rt.kind == "Namespace" and (obj.get("spec") or {}).get("finalizers"):
            return False
        return True

    # -- patch -------------------------------------------------------------------------------------

    def patch(
        self,
        rt: ResourceType,
        namespace: str | None,
        name: str,
        body: Any,
        patch_type: str,
        *,
        subresource: str = "",
        dry_run: bool = False,
        field_manager: str | None = None,
        force: bool = False,
        user: str = "admin",
    ) -> tuple[int, dict[str, Any]]:
        """Apply a JSON, merge, strategic-merge or apply patch; returns (HTTP code, object).

        Strategic merge on a custom resource is 415; apply creates a missing object (201) and
        needs a field manager; a patch that names a stale resourceVersion is a 409."""
        accepted = [JSON_PATCH_CONTENT_TYPE, MERGE_PATCH_CONTENT_TYPE, APPLY_PATCH_CONTENT_TYPE]
        if not rt.custom and patch.supports_strategic(rt.kind):
            accepted.insert(2, STRATEGIC_MERGE_PATCH_CONTENT_TYPE)
        if patch_type not in accepted:
            raise errors.unsupported_media_type(patch_type, accepted)
        if force and patch_type != APPLY_PATCH_CONTENT_TYPE:
            raise errors.invalid_object(
                "PatchOptions", "meta.k8s.io", "",
                [errors.forbidden("force", "may not be specified for non-apply patch")],
            )
        if patch_type == APPLY_PATCH_CONTENT_TYPE:
            return self._apply(rt, namespace, name, body, subresource=subresource, dry_run=dry_run,
                               field_manager=field_manager, force=force, user=user)
        old = self._get_stored(rt, namespace, name)
        current = self._out(rt, old)
        if patch_type == JSON_PATCH_CONTENT_TYPE:
            if "/metadata/managedFields" in json.dumps(body):
                managedfields.unshare(current)  # the patch may edit inside the shared fieldsV1 trees
            result = patch.json_patch(current, body)
        elif patch_type == MERGE_PATCH_CONTENT_TYPE:
            result = patch.merge_patch(current, body)
        else:
            result = patch.strategic_merge_patch(current, body, rt.kind)
        if not isinstance(result, dict):
            raise errors.bad_request("the patch did not result in an object")
        result = self._check_body(rt, result, namespace, origin=decoding.PATCH)
        if _meta(result).get("name") != name:
            raise errors.bad_request(
                f"the name of the object ({_meta(result).get('name')}) does not match the name on the URL ({name})"
            )
        rv = _meta(result).get("resourceVersion")
        if rv and rv != old["metadata"]["resourceVersion"]:
            raise errors.conflict(rt.plural, rt.group, name)
        return 200, self.commit_update(rt, old, result, subresource=subresource, dry_run=dry_run, user=user,
                                        verb="patch", manager=_manager(field_manager, user))

    def _apply(
        self,
        rt: ResourceType,
        namespace: str | None,
        name: str,
        body: Any,
        *,
        subresource: str,
        dry_run: bool,
        field_manager: str | None,
        force: bool,
        user: str,
    ) -> tuple[int, dict[str, Any]]:
        # Server-side apply with field ownership (harness/apiserver/managedfields.py): the
        # configuration is merged into the live object by the kind's list and map types, fields
        # this manager stopped applying go when nobody else owns them, and another manager's field
        # whose value would change is a 409 unless ``force``.
        if not field_manager:
            raise errors.invalid_object(
                "PatchOptions", "meta.k8s.io", "", [errors.required("fieldManager", "is required for apply patch")]
            )
        if not isinstance(body, dict):
            raise errors.bad_request("the body of an apply patch must be an object")
        if _meta(body).get("managedFields") is not None:
            raise errors.bad_request("metadata.managedFields must be nil")
        if "apiVersion" in body and body["apiVersion"] != rt.api_version:
            raise errors.bad_request(
                f"Incorrect version specified in apply patch. Specified patch version: {body['apiVersion']}, "
                f"expected: {rt.api_version}"
            )
        config = self._check_body(rt, body, namespace)
        if _meta(config).get("name") not in (None, name):
            raise errors.bad_request(
                f"the name of the object ({_meta(config).get('name')}) does not match the name on the URL ({name})"
            )
        config["metadata"]["name"] = name
        config["metadata"].pop("resourceVersion", None)
        stored = self.store.get(self.skey(rt), self._key(rt, namespace, name))
        if stored is None:
            if subresource:
                raise errors.not_found(rt.plural, rt.group, name)
            result = managedfields.apply(rt, None, config, field_manager, self.now(), force=force)
            created = dict(result.obj)
            created["metadata"] = {**result.obj.get("metadata", {}), "name": name}
            if rt.namespaced and namespace:
                created["metadata"]["namespace"] = namespace
            created["metadata"].pop("managedFields", None)
            return 201, self._create(rt, namespace, created, dry_run=dry_run, user=user, manager=field_manager,
                                     applied=result.managed_fields)
        result = managedfields.apply(rt, self._out(rt, stored), config, field_manager, self.now(), force=force,
                                     subresource=subresource)
        return 200, self.commit_update(rt, stored, result.obj, subresource=subresource, dry_run=dry_run, user=user,
                                        verb="apply", manager=field_manager, applied=result.managed_fields)

    # -- delete ------------------------------------------------------------------------------------

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
        opts = options or {}  # read only
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
            if (opts.get("orphanDependents") is False
                    and self.store.get(self.skey(rt), self._key(rt, namespace, name)) is not None):
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

    def _pod_grace(self, pod: dict[str, Any], requested: int | None) -> int:
        spec = pod.get("spec") or {}
        phase = (pod.get("status") or {}).get("phase")
        if not spec.get("nodeName") or phase in ("Succeeded", "Failed"):
            return 0
        if requested is not None:
            return requested
        value = spec.get("terminationGracePeriodSeconds")
        return int(value) if value is not None else defaults.DEFAULT_TERMINATION_GRACE

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

    def _remove_now(
        self, rt: ResourceType, stored: dict[str, Any], *, dry_run: bool, user: str, return_object: bool
    ) -> tuple[int, dict[str, Any]]:
        meta = stored["metadata"]
        if dry_run:
            final = stored
        else:
            final = self._remove(rt, stored, None, user=user, verb="delete", subresource="", return_raw=True)
        if return_object:
            return 200, self._out(rt, final)
        details: dict[str, Any] = {"name": meta["name"], "kind": rt.plural, "uid": meta.get("uid")}
        if rt.group:
            details["group"] = rt.group
        # finalizeDelete's Status carries no code (the field is omitempty and left unset).
        return 200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}

    def _remove(
        self,
        rt: ResourceType,
        old: dict[str, Any],
        final: dict[str, Any] | None,
        *,
        user: str,
        verb: str,
        subresource: str,
        return_raw: bool = False,
    ) -> dict[str, Any]:
        obj = _replacement(final if final is not None else old)
        obj["metadata"]["resourceVersion"] = self.store.next_rv()
        key = self._key(rt, obj["metadata"].get("namespace"), obj["metadata"]["name"])
        self.store.remove(self.skey(rt), key, obj)
        self._record(verb if final is not None else "delete", rt, key[0], key[1], user, 200, old, None, subresource)
        return obj if return_raw else self._out(rt, obj)

    def delete_collection(
        self,
        rt: ResourceType,
        namespace: str | None,
        options: dict[str, Any] | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        user: str = "admin",
    ) -> dict[str, Any]:
        """Delete every matching object; returns the list of what was deleted or marked."""
        listed = self.list(rt, namespace, label_selector=label_selector, field_selector=field_selector)
        for item in listed["items"]:
            try:
                self.delete(rt, item["metadata"].get("namespace"), item["metadata"]["name"], options, user=user,
                            answer=False)
            except errors.StatusError as err:
                if err.code != 404:
                    raise
        return listed

    # -- operations for subresources (harness/apiserver/subresources/) -------------------------------

    def stored(self, rt: ResourceType, namespace: str | None, name: str) -> dict[str, Any]:
        """A copy of the object as stored (storage version, no conversion), or 404 ``NotFound``."""
        return clone(self._get_stored(rt, namespace, name))

    def stored_view(self, rt: ResourceType, namespace: str | None, name: str) -> dict[str, Any]:
        """The stored object itself (storage version), or 404 ``NotFound``: for reading only. A write
        replaces a stored object and never changes it, so it is a safe ``old`` for :meth:`write`."""
        return self._get_stored(rt, namespace, name)

    def present(self, rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
        """A stored-form object as a client sees it (a copy at the resource's apiVersion)."""
        return self._out(rt, obj)

    def select(
        self, rt: ResourceType, namespace: str | None, predicate: Callable[[dict[str, Any]], bool], *,
        copy: bool = True,
    ) -> list[dict[str, Any]]:
        """Copies of the stored objects of ``rt`` in ``namespace`` for which ``predicate`` holds
        (it sees the stored objects: it must not change them). ``copy`` false: the stored objects
        themselves, for reading only (as :meth:`stored_view`)."""
        found = [obj for obj in self.store.items(self.skey(rt), namespace) if predicate(obj)]
        return [clone(obj) for obj in found] if copy else found

    def write(
        self,
        rt: ResourceType,
        old: dict[str, Any],
        new: dict[str, Any],
        *,
        verb: str,
        code: int,
        subresource: str,
        user: str = "admin",
        answer: bool = True,
    ) -> dict[str, Any] | None:
        """Store ``new`` (already checked by the subresource) in place of ``old`` with a new
        resourceVersion and audit it as ``verb``/``subresource``; a deleting object left without
        finalizers is removed instead. Nothing is written when it does not fit (413). Returns
        the object as the client sees it, or None when ``answer`` is false (a subresource whose
        response is not the object: no copy is made for nobody)."""
        if self._finalized(rt, new):
            return self._remove(rt, old, new, user=user, verb=verb, subresource=subresource)
        limits.fit(new)
        meta = new["metadata"]
        meta["resourceVersion"] = self.store.next_rv()
        key = self._key(rt, meta.get("namespace"), meta["name"])
        self.store.put(self.skey(rt), key, new)
        self._record(verb, rt, key[0], key[1], user, code, old, new, subresource)
        return self._out(rt, new) if answer else None

    def update_status(
        self, rt: ResourceType, namespace: str | None, name: str, obj: dict[str, Any], *, user: str = "admin",
        answer: bool = True,
    ) -> dict[str, Any] | None:
        """A status-only update (``PUT <resource>/status``) of ``obj``; ``answer`` as :meth:`update`."""
        return self.update(rt, namespace, name, obj, subresource="status", user=user, answer=answer)

    def write_status(
        self, rt: ResourceType, old: dict[str, Any], status: dict[str, Any], *, user: str = "admin",
        answer: bool = True,
    ) -> dict[str, Any] | None:
        """The status-only update :meth:`update_status` makes of the stored ``old`` (as
        :meth:`stored_view` answered it) with ``status`` in place of its status, for a subresource
        that built ``status`` itself from ``old``'s (as upstream's registry updates the object it
        read, with no JSON body): the same write, audit record, watch event and answer, without
        decoding a body. ``status`` must be what decoding gives: its members ``old``'s own or values
        of their Go types; it becomes the stored status (the caller keeps no hold on it). For kinds
        stored as they are served (no conversion)."""
        if conversion.converts(rt):
            raise ValueError(f"{rt.qualified} is converted: write its status through update_status")
        if self._mutating_admission(rt) or decoding.request_repeats_keys():
            # An admission plugin may change the merged object in place, status members included,
            # which are ``old``'s own: the body path, which decodes a copy of them. A request whose
            # body repeats a key has each decode in it report that: the body path reports it too.
            meta = old["metadata"]
            body = {**old, "status": status}
            return self.update(rt, meta.get("namespace"), meta["name"], body, subresource="status", user=user,
                               answer=answer)
        return self.commit_update(rt, old, {"status": status}, subresource="status", dry_run=False, user=user,
                                  verb="update", manager=_manager(None, user), answer=answer)

    def plain_delete(self, rt: ResourceType) -> bool:
        """Whether a DELETE of ``rt`` runs no admission plugin and no delete preparer: what it
        answers then follows from the stored object and the options alone (the same stored version
        and options, the same answer), so a subresource may rely on an earlier :meth:`delete_dry_run`."""
        return not self._admission_plugins(rt) and not any(
            group == rt.group and kind == rt.kind for group, kind, _ in self._delete_preparers
        )

    def delete_dry_run(
        self, rt: ResourceType, namespace: str | None, name: str, options: dict[str, Any], *, user: str = "admin"
    ) -> int:
        """Everything a DELETE with ``options`` checks (preconditions, options, admission), writing
        nothing: a subresource's way to know a later delete will pass before its first write.
        Returns the code the DELETE would answer (no body is made)."""
        return self.delete(rt, namespace, name, {**options, "dryRun": ["All"]}, user=user, answer=False)[0]


def _single_equality(field_selector: str | None, names: tuple[str, ...]) -> str | None:
    """The value of ``name=value`` when the selector is exactly that one equality term."""
    if not field_selector or "," in field_selector or "!=" in field_selector:
        return None
    key, sep, value = field_selector.partition("==") if "==" in field_selector else field_selector.partition("=")
    if sep and key.strip() in names and "\\" not in value:
        return value.strip()
    return None
