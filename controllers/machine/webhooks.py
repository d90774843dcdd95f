"""Cluster API's admission webhooks for the kinds machine deletion uses, as API server admission plugins
``(operation, resource, new, old) -> [FieldError]`` (the composition root installs them).

Failures of the webhooks themselves come back as kube-apiserver relays a webhook's denial: 422 ``Invalid``
with the message prefixed ``admission webhook "<name>" denied the request: ``.

- Machine (``default.machine`` / ``validation.machine``): defaults the cluster-name label, the
  namespaces of the references, the ``v`` of ``spec.version`` and ``spec.nodeDeletionTimeout: 10s``;
  rejects a Machine without bootstrap data or config, references into another namespace, a changed
  ``spec.clusterName`` and a version that is not semantic.
- MachineDrainRule (``validation.machinedrainrule``): ``spec.drain.order`` is forbidden with the ``Skip``
  and ``WaitCompleted`` behaviors, and every selector must be valid. Before that, what upstream's CRD
  schema enforces beyond types (this API server checks types, enums and required fields itself):
  ``minItems: 1``/``maxItems: 32`` and ``minProperties: 1`` on ``spec.machines``/``spec.pods`` and the CEL
  rules ``entries in machines must be unique``/``entries in pods must be unique``, with the apiextensions
  messages. As in kube-apiserver, a webhook sees only objects the schema accepted.

Annotation keys (hook names included) are checked by the API server itself: a key's name part may have
at most 63 characters, its prefix at most 253.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from controllers.machine import drain_rules
from controllers.machine.api import DEFAULT_NODE_DELETION_TIMEOUT, MACHINE_POOL_NAME_LABEL, meta
from controllers.machine.errors import webhook_denied
from harness.apiserver import crd
from harness.apiserver.resources import ResourceType
from harness.kube import errors as api_errors
from harness.kube.errors import FieldError
from harness.kube.names.capi import CLUSTER_API_GROUP, CLUSTER_NAME_LABEL, MACHINE_DRAIN_RULE_KIND, MACHINE_KIND
from harness.kube.names.meta import CREATE, UPDATE
from harness.kube.validation import FIELD_IMMUTABLE_MSG

# Webhook names (config/webhook/manifests.yaml) and how kube-apiserver words a denial.
MACHINE_VALIDATION_WEBHOOK = "validation.machine.cluster.x-k8s.io"
MACHINE_DRAIN_RULE_VALIDATION_WEBHOOK = "validation.machinedrainrule.cluster.x-k8s.io"

# Machine webhook messages.
BOOTSTRAP_DATA_REQUIRED = "expected either spec.bootstrap.dataSecretName or spec.bootstrap.configRef to be populated"
NAMESPACE_MISMATCH = "must match metadata.namespace"
INVALID_VERSION = "must be a valid semantic version"
# version.KubeSemver.
KUBE_SEMVER = re.compile(r"^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)([-0-9a-zA-Z_\.+]*)?$")
MACHINE_POOL_KIND = "MachinePool"

# MachineDrainRule messages.
ORDER_FORBIDDEN = 'order must not be set if drain behavior is "Skip" or "WaitCompleted"'
UNIQUE_ENTRIES = "entries in {field} must be unique"
MIN_ITEMS = "{path} in body should have at least {minimum} items"
MAX_ITEMS = "must have at most {maximum} items"
MIN_PROPERTIES = "{path} in body should have at least {minimum} properties"
CEL_ARRAY_TYPE = "array"
RULE_LIST_MIN_ITEMS = 1
RULE_LIST_MAX_ITEMS = 32
RULE_ENTRY_MIN_PROPERTIES = 1


# -- Machine ---------------------------------------------------------------------------------------


def default_machine_spec(spec: dict[str, Any], namespace: str) -> None:
    """What defaulting does to a Machine's spec, also a MachineSet's or MachineDeployment's template spec,
    in place: the bootstrap and infrastructure references in ``namespace``, a ``v`` before the version."""
    config_ref = (spec.get("bootstrap") or {}).get("configRef")
    if isinstance(config_ref, dict) and not config_ref.get("namespace"):
        config_ref["namespace"] = namespace
    infra_ref = spec.get("infrastructureRef")
    if isinstance(infra_ref, dict) and not infra_ref.get("namespace"):
        infra_ref["namespace"] = namespace
    version = spec.get("version")
    if isinstance(version, str) and not version.startswith("v"):
        spec["version"] = "v" + version


def default_machine(machine: dict[str, Any]) -> None:
    """The Machine defaulting webhook, in place."""
    metadata = machine.setdefault("metadata", {})
    spec = machine.setdefault("spec", {})
    labels = dict(metadata.get("labels") or {})
    labels[CLUSTER_NAME_LABEL] = str(spec.get("clusterName", ""))
    metadata["labels"] = labels
    default_machine_spec(spec, metadata.get("namespace", ""))
    if spec.get("nodeDeletionTimeout") is None:
        spec["nodeDeletionTimeout"] = DEFAULT_NODE_DELETION_TIMEOUT


def _machine_pool_owned(machine: dict[str, Any]) -> bool:
    return MACHINE_POOL_NAME_LABEL in (meta(machine).get("labels") or {}) or any(
        r.get("kind") == MACHINE_POOL_KIND for r in meta(machine).get("ownerReferences") or [])


def validate_machine(machine: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    """The Machine validation webhook."""
    errs: list[FieldError] = []
    spec = machine.get("spec") or {}
    bootstrap = spec.get("bootstrap") or {}
    namespace = meta(machine).get("namespace", "")
    if not bootstrap.get("configRef") and not bootstrap.get("dataSecretName") and not _machine_pool_owned(machine):
        errs.append(api_errors.required("spec.bootstrap.data", BOOTSTRAP_DATA_REQUIRED))
    config_ref = bootstrap.get("configRef")
    if isinstance(config_ref, dict) and config_ref.get("namespace", "") != namespace:
        errs.append(api_errors.invalid("spec.bootstrap.configRef.namespace", config_ref.get("namespace", ""),
                                       NAMESPACE_MISMATCH))
    infra_ref = spec.get("infrastructureRef") or {}
    if infra_ref.get("namespace", "") != namespace:
        errs.append(api_errors.invalid("spec.infrastructureRef.namespace", infra_ref.get("namespace", ""),
                                       NAMESPACE_MISMATCH))
    if old is not None and (old.get("spec") or {}).get("clusterName") != spec.get("clusterName"):
        errs.append(api_errors.forbidden("spec.clusterName", FIELD_IMMUTABLE_MSG))
    version = spec.get("version")
    if version is not None and not KUBE_SEMVER.match(str(version)):
        errs.append(api_errors.invalid("spec.version", version, INVALID_VERSION))
    return errs


def status_only(new: dict[str, Any], old: dict[str, Any]) -> bool:
    """Whether an update changes nothing but status (what the status subresource writes)."""
    if new.get("spec") != old.get("spec"):
        return False
    fields = ("labels", "annotations", "finalizers", "ownerReferences")
    return all(meta(new).get(f) == meta(old).get(f) for f in fields)


Admit = Callable[[str, ResourceType, "dict[str, Any] | None", "dict[str, Any] | None"], list[FieldError]]


def webhook_admitter(
    webhook: str,
    default: Callable[[dict[str, Any]], None],
    validate: Callable[[dict[str, Any], dict[str, Any] | None], list[FieldError]],
) -> Admit:
    """An admission plugin playing a Cluster API defaulting and validating webhook pair for one kind:
    on creates and updates (not status writes, the webhooks are registered for the kind, not its status
    subresource), once the schema accepts the object, ``default`` it in place, then ``validate`` it
    (against the old object on an update) and deny with :func:`webhook_denied`."""
    def admit(operation: str, rt: ResourceType, new: dict[str, Any] | None,
              old: dict[str, Any] | None) -> list[FieldError]:
        if new is None or operation not in (CREATE, UPDATE):
            return []
        if operation == UPDATE and old is not None and status_only(new, old):
            return []
        if rt.schema and crd.validate_against_schema(new, rt.schema):
            return []  # the schema's own errors are reported; webhooks never see such an object
        default(new)
        errs = validate(new, old if operation == UPDATE else None)
        if errs:
            raise webhook_denied(webhook, rt.kind, rt.group, new, errs)
        return []

    return admit


admit_machine = webhook_admitter(MACHINE_VALIDATION_WEBHOOK, default_machine, validate_machine)


# -- MachineDrainRule ------------------------------------------------------------------------------


def _schema_errors(rule: dict[str, Any]) -> list[FieldError]:
    """What the upstream CRD schema checks beyond types: list sizes, entry sizes, unique entries."""
    errs: list[FieldError] = []
    spec = rule.get("spec") or {}
    for field in ("machines", "pods"):
        entries = spec.get(field)
        if not isinstance(entries, list):
            continue
        path = f"spec.{field}"
        if len(entries) < RULE_LIST_MIN_ITEMS:
            errs.append(api_errors.invalid(path, len(entries),
                                           MIN_ITEMS.format(path=path, minimum=RULE_LIST_MIN_ITEMS)))
        if len(entries) > RULE_LIST_MAX_ITEMS:
            errs.append(FieldError(path, api_errors.FIELD_VALUE_TOO_MANY,
                                   f"{len(entries)}: {MAX_ITEMS.format(maximum=RULE_LIST_MAX_ITEMS)}"))
        for i, entry in enumerate(entries):
            if isinstance(entry, dict) and len(entry) < RULE_ENTRY_MIN_PROPERTIES:
                entry_path = f"{path}[{i}]"
                errs.append(api_errors.invalid(entry_path, len(entry), MIN_PROPERTIES.format(
                    path=entry_path, minimum=RULE_ENTRY_MIN_PROPERTIES)))
        if any(sum(1 for other in entries if other == entry) != 1 for entry in entries):
            errs.append(api_errors.invalid(path, CEL_ARRAY_TYPE, UNIQUE_ENTRIES.format(field=field)))
    return errs


def validate_machine_drain_rule(rule: dict[str, Any]) -> list[FieldError]:
    """The MachineDrainRule validation webhook: order with Skip/WaitCompleted, then the selectors."""
    errs: list[FieldError] = []
    drain = (rule.get("spec") or {}).get("drain") or {}
    if drain.get("behavior") in (drain_rules.BEHAVIOR_SKIP, drain_rules.BEHAVIOR_WAIT_COMPLETED) \
            and drain.get("order") is not None:
        errs.append(api_errors.invalid("spec.drain.order", drain["order"], ORDER_FORBIDDEN))
    errs.extend(drain_rules.validate_selectors(rule))
    return errs


def admit_machine_drain_rule(
    operation: str, rt: ResourceType, new: dict[str, Any] | None, old: dict[str, Any] | None
) -> list[FieldError]:
    """Admission plugin for MachineDrainRules (creates and updates)."""
    if new is None or operation not in (CREATE, UPDATE):
        return []
    if rt.schema and crd.validate_against_schema(new, rt.schema):
        return []
    schema_errs = _schema_errors(new)
    if schema_errs:
        return schema_errs
    errs = validate_machine_drain_rule(new)
    if errs:
        raise webhook_denied(MACHINE_DRAIN_RULE_VALIDATION_WEBHOOK, rt.kind, rt.group, new, errs)
    return []


# (API group, kind, plugin) for the composition root to install on the management cluster.
ADMISSION_PLUGINS = (
    (CLUSTER_API_GROUP, MACHINE_KIND, admit_machine),
    (CLUSTER_API_GROUP, MACHINE_DRAIN_RULE_KIND, admit_machine_drain_rule),
)
