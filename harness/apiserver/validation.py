"""Per-kind validation of the built-in kinds the kit admits (PodDisruptionBudget, VolumeAttachment, Pod).

The generic metadata, name and label rules live in :mod:`harness.kube.validation`; these validators
cover only the kind's own fields, with the messages kube-apiserver 1.32 writes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from harness.kube import selectors
from harness.kube.errors import FieldError, duplicate, forbidden, invalid, not_supported, required, too_long
from harness.kube.names.batch import (
    JOB_CONTROLLER_UID_LABEL,
    JOB_NAME_LABEL,
    LEGACY_JOB_CONTROLLER_UID_LABEL,
    LEGACY_JOB_NAME_LABEL,
)
from harness.kube.validation import (
    FIELD_IMMUTABLE_MSG,
    INT_OR_PERCENT_MSG,
    IS_NEGATIVE_MSG,
    MAX_INT32,
    NOT_MORE_THAN_100_PERCENT_MSG,
    _as_dict,
    _as_list,
    _blen,
    _child,
    _dedupe,
    _go_int_or_string,
    _inclusive_range_error,
    _index,
    _invalid_rendered,
    _name_is_dns_subdomain,
    _normalized,
    _semantic_equal,
    _text,
    checked_once,
    go_quote,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_valid_percent,
    validate_annotations,
    validate_label_selector,
    validate_labels,
)

CSI_DRIVER_NAME_MAX_LENGTH = 63
MAX_ATTACHED_VOLUME_METADATA_SIZE = 256 * (1 << 10)
MAX_VOLUME_ERROR_MESSAGE_SIZE = 1024
PDB_BOTH_SET_MSG = "minAvailable and maxUnavailable cannot be both set"
VA_SOURCE_MSG = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"
VA_EMPTY_PV_NAME_MSG = "must specify non empty persistentVolumeName"
POD_UPDATABLE_FIELDS = (
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
)
# 1.32 without the InPlacePodVerticalScaling gate (alpha, off): the list joined by "," and no space.
POD_UPDATE_FORBIDDEN_MSG = "pod updates may not change fields other than " + ",".join(POD_UPDATABLE_FIELDS)
POD_ADD_REMOVE_CONTAINERS_MSG = "pod updates may not add or remove containers"
IMAGE_WHITESPACE_MSG = "must not have leading or trailing whitespace"
ACTIVE_DEADLINE_INCREASED_MSG = "must be less than or equal to previous value"
ACTIVE_DEADLINE_UNSET_MSG = "must not update from a positive integer to nil value"
TOLERATION_MODIFIED_MSG = "existing toleration can not be modified except its tolerationSeconds"
SCHEDULING_GATE_ADDED_MSG = "only deletion is allowed, but found new scheduling gate '{name}'"
UNHEALTHY_POD_EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")  # sorted, as sets.List() returns
RESTART_POLICIES = ("Always", "OnFailure", "Never")  # upstream's order, not sorted


# -- PodDisruptionBudget (pkg/apis/policy/validation) -----------------------------------------------


def _validate_positive_int_or_percent(value: Any, field_path: str) -> list[FieldError]:
    """``ValidatePositiveIntOrPercent``: a non-negative int, or a string that is a percentage."""
    if isinstance(value, str):
        return [_invalid_rendered(field_path, _go_int_or_string(value), msg) for msg in is_valid_percent(value)]
    if isinstance(value, int) and not isinstance(value, bool):
        return [invalid(field_path, value, IS_NEGATIVE_MSG)] if value < 0 else []
    return [invalid(field_path, value, INT_OR_PERCENT_MSG)]


def _is_not_more_than_100_percent(value: Any, field_path: str) -> list[FieldError]:
    """``IsNotMoreThan100Percent``: only a valid percentage string is checked."""
    if not isinstance(value, str) or is_valid_percent(value) or int(value[:-1]) <= 100:
        return []
    return [_invalid_rendered(field_path, _go_int_or_string(value), NOT_MORE_THAN_100_PERCENT_MSG)]


def validate_pdb_spec(spec: Mapping[str, Any] | None, field_path: str = "spec") -> list[FieldError]:
    """``ValidatePodDisruptionBudgetSpec`` (policy/v1): minAvailable xor maxUnavailable, each a
    non-negative int or a percentage of at most 100%, a valid selector, a known unhealthyPodEvictionPolicy.
    """
    body = _as_dict(spec)
    errs: list[FieldError] = []
    min_available, max_unavailable = body.get("minAvailable"), body.get("maxUnavailable")
    if min_available is not None and max_unavailable is not None:
        # Upstream prints the policy.PodDisruptionBudgetSpec struct (pointers); JSON stands in for it.
        errs.append(invalid(field_path, body, PDB_BOTH_SET_MSG))
    for key, value in (("minAvailable", min_available), ("maxUnavailable", max_unavailable)):
        if value is not None:
            errs.extend(_validate_positive_int_or_percent(value, _child(field_path, key)))
            errs.extend(_is_not_more_than_100_percent(value, _child(field_path, key)))
    errs.extend(validate_label_selector(body.get("selector"), _child(field_path, "selector")))
    policy = body.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in UNHEALTHY_POD_EVICTION_POLICIES:
        path = _child(field_path, "unhealthyPodEvictionPolicy")
        errs.append(not_supported(path, policy, list(UNHEALTHY_POD_EVICTION_POLICIES)))
    return errs


# -- VolumeAttachment (pkg/apis/storage/validation) --------------------------------------------------


def validate_csi_driver_name(name: str, field_path: str) -> list[FieldError]:
    """``ValidateCSIDriverName``: required, at most 63 bytes, a DNS-1123 subdomain once lower-cased."""
    text = _text(name)
    errs: list[FieldError] = []
    if not text:
        errs.append(required(field_path))
    if _blen(text) > CSI_DRIVER_NAME_MAX_LENGTH:
        errs.append(too_long(field_path, CSI_DRIVER_NAME_MAX_LENGTH))
    errs.extend(invalid(field_path, text, msg) for msg in is_dns1123_subdomain(text.lower()))
    return errs


def _validate_volume_error(error: Any, field_path: str) -> list[FieldError]:
    if not isinstance(error, dict):
        return []
    errs: list[FieldError] = []
    if _blen(_text(error.get("message"))) > MAX_VOLUME_ERROR_MESSAGE_SIZE:
        # Upstream checks 1024 bytes but reports the attachment-metadata limit; kept as it is.
        errs.append(too_long(_child(field_path, "message"), MAX_ATTACHED_VOLUME_METADATA_SIZE))
    code = error.get("errorCode")
    if isinstance(code, int) and not isinstance(code, bool) and code < 0:
        errs.append(invalid(_child(field_path, "errorCode"), code, _inclusive_range_error(0, MAX_INT32)))
    return errs


def _validate_volume_attachment_common(obj: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateVolumeAttachment`` without its ObjectMeta part: spec and status."""
    spec = _as_dict(obj.get("spec"))
    errs: list[FieldError] = []
    if not _text(spec.get("attacher")):
        errs.append(required("spec.attacher"))
    source = _as_dict(spec.get("source"))
    inline, pv_name = source.get("inlineVolumeSpec"), source.get("persistentVolumeName")
    if inline is None and pv_name is None:
        errs.append(required("spec.source", VA_SOURCE_MSG))
    elif inline is not None and pv_name is not None:
        errs.append(forbidden("spec.source", VA_SOURCE_MSG))
    elif pv_name is not None and not _text(pv_name):
        errs.append(required("spec.source.persistentVolumeName", VA_EMPTY_PV_NAME_MSG))
    # (an inlineVolumeSpec is a PersistentVolumeSpec; its validation is out of scope here)
    node_name = _text(spec.get("nodeName"))
    errs.extend(invalid("spec.nodeName", node_name, msg) for msg in _name_is_dns_subdomain(node_name, False))

    status = _as_dict(obj.get("status"))
    metadata = _as_dict(status.get("attachmentMetadata"))
    if sum(_blen(_text(k)) + _blen(_text(v)) for k, v in metadata.items()) > MAX_ATTACHED_VOLUME_METADATA_SIZE:
        errs.append(too_long("status.attachmentMetadata", MAX_ATTACHED_VOLUME_METADATA_SIZE))
    errs.extend(_validate_volume_error(status.get("attachError"), "status.attachError"))
    errs.extend(_validate_volume_error(status.get("detachError"), "status.detachError"))
    return errs


def validate_volume_attachment(obj: Mapping[str, Any]) -> list[FieldError]:
    """A storage.k8s.io/v1 VolumeAttachment on create: attacher required and a valid CSI driver name,
    exactly one source, a non-empty persistentVolumeName that is a valid PV name, nodeName a valid
    node name, status sizes (``ValidateVolumeAttachment`` + ``ValidateVolumeAttachmentV1``).

    Metadata is :func:`validate_object_meta`'s (cluster-scoped, ``subdomain``). Upstream reports an
    empty attacher twice (both checks run); the duplicate is dropped, as the message drops it.
    """
    errs = _validate_volume_attachment_common(obj)
    spec = _as_dict(obj.get("spec"))
    errs.extend(validate_csi_driver_name(_text(spec.get("attacher")), "spec.attacher"))
    pv_name = _as_dict(spec.get("source")).get("persistentVolumeName")
    if pv_name is not None:
        text = _text(pv_name)
        errs.extend(
            invalid("spec.source.persistentVolumeName", text, msg) for msg in _name_is_dns_subdomain(text, False)
        )
    return _dedupe(errs)


def validate_volume_attachment_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateVolumeAttachmentUpdate``: the new object's spec and status checks (not the v1-only
    attacher/PV name checks, which run on create only) and an unchanged spec.

    The immutable-spec error renders the new spec as compact JSON: upstream prints the Go struct
    ``storage.VolumeAttachmentSpec{...}`` with a pointer address for persistentVolumeName.
    """
    errs = _validate_volume_attachment_common(new)
    new_spec, old_spec = new.get("spec"), old.get("spec")
    if not _semantic_equal(new_spec, old_spec):
        errs.append(invalid("spec", _as_dict(new_spec), FIELD_IMMUTABLE_MSG))
    return _dedupe(errs)


# -- Pod (pkg/apis/core/validation, basics only) -----------------------------------------------------


def _validate_int_field(value: Any, field_path: str, lo: int, hi: int | None, detail: str) -> list[FieldError]:
    if value is None or isinstance(value, bool) or not isinstance(value, int):
        return []
    if value < lo or (hi is not None and value > hi):
        return [invalid(field_path, value, detail)]
    return []


def validate_pod_spec(spec: Mapping[str, Any] | None, field_path: str = "spec") -> list[FieldError]:
    """The quantity-free basics of ``ValidatePodSpec``: containers present, each with a unique
    DNS-1123-label name and an image; restartPolicy, terminationGracePeriodSeconds and
    activeDeadlineSeconds in range. ``field_path`` is ``spec.template.spec`` for pod templates.
    """
    # A spec found valid before is not walked again (every write of a Pod keeps its spec; a workload's
    # Pods share one): see harness.kube.validation.checked_once.
    return checked_once("PodSpec", _validate_pod_spec, spec, field_path)


def _validate_pod_spec(spec: Mapping[str, Any] | None, field_path: str) -> list[FieldError]:
    body = _as_dict(spec)
    errs: list[FieldError] = []
    containers_path = _child(field_path, "containers")
    containers = _as_list(body.get("containers"))
    if not containers:
        errs.append(required(containers_path))
    seen: set[str] = set()
    for i, raw in enumerate(containers):
        container = _as_dict(raw)
        path = _index(containers_path, i)
        name = _text(container.get("name"))
        if not name:
            errs.append(required(_child(path, "name")))
        else:
            errs.extend(invalid(_child(path, "name"), name, msg) for msg in is_dns1123_label(name))
        if not _text(container.get("image")):
            errs.append(required(_child(path, "image")))
        if name in seen:
            errs.append(duplicate(_child(path, "name"), name))
        seen.add(name)

    policy = body.get("restartPolicy")
    if policy not in (None, "") and policy not in RESTART_POLICIES:  # "" is defaulted to Always
        errs.append(not_supported(_child(field_path, "restartPolicy"), policy, list(RESTART_POLICIES)))
    errs.extend(
        _validate_int_field(
            body.get("terminationGracePeriodSeconds"),
            _child(field_path, "terminationGracePeriodSeconds"),
            0,
            None,
            IS_NEGATIVE_MSG,
        )
    )
    errs.extend(
        _validate_int_field(
            body.get("activeDeadlineSeconds"),
            _child(field_path, "activeDeadlineSeconds"),
            1,
            MAX_INT32,
            _inclusive_range_error(1, MAX_INT32),
        )
    )
    return errs


def _validate_container_updates(new: list[Any], old: list[Any], field_path: str) -> tuple[list[FieldError], bool]:
    """``ValidateContainerUpdates``: same number of containers (else stop), images set and trimmed."""
    if len(new) != len(old):
        return [forbidden(field_path, POD_ADD_REMOVE_CONTAINERS_MSG)], True
    errs: list[FieldError] = []
    for i, raw in enumerate(new):
        image = _text(_as_dict(raw).get("image"))
        if image and image.strip() == image:
            continue  # (the path is made only for an error)
        image_path = _child(_index(field_path, i), "image")
        if not image:
            errs.append(required(image_path))
        if image.strip() != image:
            errs.append(invalid(image_path, image, IMAGE_WHITESPACE_MSG))
    return errs, False


def _without_toleration_seconds(toleration: Any) -> Any:
    body = dict(_as_dict(toleration))
    body.pop("tolerationSeconds", None)
    return _normalized(body)


def _spec_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """A short ``-``/``+`` listing of the changed top-level spec fields.

    Upstream appends ``cmp.Diff`` of the internal Go ``core.PodSpec`` structs, which cannot be
    reproduced from JSON; this keeps the same shape (a diff after a newline), not the same text.
    """
    old_n, new_n = _as_dict(_normalized(old)), _as_dict(_normalized(new))
    lines = []
    for key in sorted(set(old_n) | set(new_n)):
        if old_n.get(key) != new_n.get(key):
            if key in old_n:
                lines.append(f"- {key}: {json.dumps(old_n[key], separators=(',', ':'), sort_keys=True)}")
            if key in new_n:
                lines.append(f"+ {key}: {json.dumps(new_n[key], separators=(',', ':'), sort_keys=True)}")
    return "\n".join(lines)


def validate_pod_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    """The spec half of ``ValidatePodUpdate`` for two Pod objects: the new spec's basics, then the
    update rules (containers neither added nor removed, activeDeadlineSeconds only set or lowered,
    tolerations only added, scheduling gates only removed), then anything else changed in the spec
    (nodeName included: binding goes through ``pods/binding``) is Forbidden at ``spec``.

    Metadata is :func:`validate_object_meta_update`'s. Not covered: the relaxations for pods still
    gated on scheduling (nodeSelector/affinity additions) and in-place resize (off by default in 1.32).
    """
    new_spec, old_spec = _as_dict(new.get("spec")), _as_dict(old.get("spec"))
    errs = validate_pod_spec(new_spec)

    for key in ("containers", "initContainers"):
        update_errs, stop = _validate_container_updates(
            _as_list(new_spec.get(key)), _as_list(old_spec.get(key)), f"spec.{key}"
        )
        errs.extend(update_errs)
        if stop:
            return errs

    new_deadline, old_deadline = new_spec.get("activeDeadlineSeconds"), old_spec.get("activeDeadlineSeconds")
    if isinstance(new_deadline, int) and not isinstance(new_deadline, bool):
        if new_deadline < 0 or new_deadline > MAX_INT32:
            errs.append(invalid("spec.activeDeadlineSeconds", new_deadline, _inclusive_range_error(0, MAX_INT32)))
            return errs
        if isinstance(old_deadline, int) and old_deadline < new_deadline:
            errs.append(invalid("spec.activeDeadlineSeconds", new_deadline, ACTIVE_DEADLINE_INCREASED_MSG))
            return errs
    elif old_deadline is not None:
        errs.append(invalid("spec.activeDeadlineSeconds", None, ACTIVE_DEADLINE_UNSET_MSG))

    # (Without old tolerations none can have been changed; without new gates none was added.)
    old_tolerations = _as_list(old_spec.get("tolerations"))
    if old_tolerations:
        new_tolerations = [_without_toleration_seconds(t) for t in _as_list(new_spec.get("tolerations"))]
        for toleration in old_tolerations:
            if _without_toleration_seconds(toleration) not in new_tolerations:
                errs.append(forbidden("spec.tolerations", TOLERATION_MODIFIED_MSG))
                break

    new_gates = _as_list(new_spec.get("schedulingGates"))
    if new_gates:
        old_gates = {_text(_as_dict(g).get("name")) for g in _as_list(old_spec.get("schedulingGates"))}
        added_gates = {_text(_as_dict(g).get("name")): i for i, g in enumerate(new_gates)}
        for gate_name, i in sorted(added_gates.items(), key=lambda item: item[1]):
            if gate_name not in old_gates:
                path = _child(_index("spec.schedulingGates", i), "name")
                errs.append(forbidden(path, SCHEDULING_GATE_ADDED_MSG.format(name=gate_name)))

    if _semantic_equal(new_spec, old_spec):
        return errs

    # Put back what may change; whatever still differs may not.
    munged = dict(new_spec)
    for key in ("containers", "initContainers"):
        old_containers = _as_list(old_spec.get(key))
        if key in munged:
            munged[key] = [
                {**_as_dict(c), "image": _as_dict(old_containers[i]).get("image")}
                for i, c in enumerate(_as_list(munged[key]))
            ]
    for key in ("activeDeadlineSeconds", "tolerations", "schedulingGates"):
        munged[key] = old_spec.get(key)
    old_grace, new_grace = old_spec.get("terminationGracePeriodSeconds"), munged.get("terminationGracePeriodSeconds")
    if isinstance(old_grace, int) and old_grace < 0 and new_grace == 1:
        munged["terminationGracePeriodSeconds"] = old_grace
    if not _semantic_equal(munged, old_spec):
        errs.append(forbidden("spec", f"{POD_UPDATE_FORBIDDEN_MSG}\n{_spec_diff(old_spec, munged)}"))
    return errs


__all__ = [
    "validate_csi_driver_name",
    "validate_pdb_spec",
    "validate_pod_spec",
    "validate_pod_update",
    "validate_volume_attachment",
    "validate_volume_attachment_update",
]


# -- workloads (pkg/apis/apps/validation, core ValidateReplicationControllerSpec) -------------------

SELECTOR_MISMATCH_MSG = "`selector` does not match template `labels`"
# ReplicaSet validation says "deployment" too upstream.
EMPTY_SELECTOR_TARGET = {"Deployment": "deployment", "ReplicaSet": "deployment", "StatefulSet": "statefulset",
                         "DaemonSet": "daemonset"}
EMPTY_LABEL_SELECTOR = (
    "&v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}"
)
# Kinds whose spec has replicas, a selector and a pod template.
WORKLOAD_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "ReplicationController")


def _go_string_map(values: Any) -> str:
    """``%#v`` of a ``map[string]string`` (keys sorted, as fmt prints maps)."""
    if not isinstance(values, dict):
        return "map[string]string(nil)"
    return "map[string]string{" + ", ".join(
        f"{go_quote(str(k))}:{go_quote(str(v))}" for k, v in sorted(values.items())
    ) + "}"


def validate_workload_spec(kind: str, spec: Mapping[str, Any] | None, field_path: str = "spec") -> list[FieldError]:
    """The shape checks every workload spec gets (``ValidateDeploymentSpec`` and its siblings):
    replicas not negative, a selector (a map for a ReplicationController) that the pod template's
    labels match, and the template's pod spec basics."""
    body = _as_dict(spec)
    errs: list[FieldError] = []
    if kind != "DaemonSet":
        errs.extend(_validate_int_field(body.get("replicas"), _child(field_path, "replicas"), 0, None,
                                        IS_NEGATIVE_MSG))
    template = _as_dict(body.get("template"))
    labels = _as_dict(template.get("metadata")).get("labels")
    selector_path = _child(field_path, "selector")
    labels_path = _child(_child(_child(field_path, "template"), "metadata"), "labels")
    if kind == "ReplicationController":
        wanted = _as_dict(body.get("selector"))
        if wanted and any(_as_dict(labels).get(k) != v for k, v in wanted.items()):
            errs.append(_invalid_rendered(labels_path, _go_string_map(labels), SELECTOR_MISMATCH_MSG))
    elif not isinstance(body.get("selector"), dict):
        errs.append(required(selector_path))
    else:
        errs.extend(validate_label_selector(body["selector"], selector_path))
        selector = selectors.label_selector_from_dict(body["selector"])
        if selector is None or selector.empty:
            errs.append(_invalid_rendered(selector_path, EMPTY_LABEL_SELECTOR,
                                          f"empty selector is invalid for {EMPTY_SELECTOR_TARGET[kind]}"))
        elif not errs and not selector.matches(labels if isinstance(labels, dict) else {}):
            errs.append(_invalid_rendered(labels_path, _go_string_map(labels), SELECTOR_MISMATCH_MSG))
    if "template" in body or kind != "ReplicationController":
        errs.extend(validate_pod_spec(template.get("spec"), _child(_child(field_path, "template"), "spec")))
    return errs


# -- Job (pkg/apis/batch/validation ValidateJob; the selector the Job strategy generates) -----------

SELECTOR_NOT_GENERATED_MSG = "`selector` not auto-generated"


def _go_label_selector(selector: Mapping[str, Any]) -> str:
    """``%#v`` of a ``*metav1.LabelSelector``, as an Invalid error prints it."""
    match_labels = selector.get("matchLabels")
    labels_text = _go_string_map(match_labels) if match_labels else "map[string]string(nil)"
    expressions = [e for e in _as_list(selector.get("matchExpressions")) if isinstance(e, dict)]
    if expressions:
        items = []
        for expr in expressions:
            values = _as_list(expr.get("values"))
            values_text = ("[]string{" + ", ".join(go_quote(_text(v)) for v in values) + "}"
                           if values else "[]string(nil)")
            items.append(f'v1.LabelSelectorRequirement{{Key:{go_quote(_text(expr.get("key")))}, '
                         f'Operator:{go_quote(_text(expr.get("operator")))}, Values:{values_text}}}')
        expressions_text = "[]v1.LabelSelectorRequirement{" + ", ".join(items) + "}"
    else:
        expressions_text = "[]v1.LabelSelectorRequirement(nil)"
    return f"&v1.LabelSelector{{MatchLabels:{labels_text}, MatchExpressions:{expressions_text}}}"


def _selector_or_none(selector: dict[str, Any]) -> selectors.LabelSelector | None:
    """The parsed selector, or None where upstream's LabelSelectorAsSelector fails (already reported)."""
    try:
        return selectors.label_selector_from_dict(selector)
    except ValueError:
        return None


def _has_label(labels: Any, key: str, expected: str) -> list[FieldError]:
    """``ValidateHasLabel`` on the pod template's metadata."""
    path = f"spec.template.metadata.labels[{key}]"
    current = _as_dict(labels)
    if key not in current:
        return [required(path, f"must be '{expected}'")]
    if current[key] != expected:
        return [_invalid_rendered(path, _go_string_map(current), f"must be '{expected}'")]
    return []


def _generated_selector_errors(obj: Mapping[str, Any], require_prefixed: bool) -> list[FieldError]:
    """``validateGeneratedSelector``: unless manualSelector is true, the template carries the job's
    name and uid labels and the selector selects exactly what was generated."""
    spec = _as_dict(obj.get("spec"))
    if spec.get("manualSelector") is True or not isinstance(spec.get("selector"), dict):
        return []
    meta = _as_dict(obj.get("metadata"))
    uid, name = _text(meta.get("uid")), _text(meta.get("name"))
    errs: list[FieldError] = []
    if not uid:
        errs.append(required("metadata.uid"))
    labels = _as_dict(_as_dict(spec.get("template")).get("metadata")).get("labels")
    errs += _has_label(labels, LEGACY_JOB_CONTROLLER_UID_LABEL, uid)
    errs += _has_label(labels, LEGACY_JOB_NAME_LABEL, name)
    expected = {LEGACY_JOB_CONTROLLER_UID_LABEL: uid, LEGACY_JOB_NAME_LABEL: name}
    if require_prefixed:
        errs += _has_label(labels, JOB_CONTROLLER_UID_LABEL, uid)
        errs += _has_label(labels, JOB_NAME_LABEL, name)
        expected.update({JOB_CONTROLLER_UID_LABEL: uid, JOB_NAME_LABEL: name})
    selector = _selector_or_none(spec["selector"])
    if selector is not None and not selector.matches(expected):
        errs.append(_invalid_rendered("spec.selector", _go_label_selector(spec["selector"]),
                                      SELECTOR_NOT_GENERATED_MSG))
    return errs


def validate_job(obj: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> list[FieldError]:
    """The parts of ``ValidateJob`` that concern the selector and the pod template's metadata.

    The template's labels are label values (``spec.template.labels``: a Job name over 63 characters
    makes the generated ``job-name`` labels invalid), the generated selector is as generated, and the
    selector (required) matches the template's labels. On update the prefixed labels are required
    only if the stored Job had both, as upstream's ``validationOptionsForJob`` says.
    """
    spec = _as_dict(obj.get("spec"))
    require_prefixed = True
    if old is not None:
        old_labels = _as_dict(_as_dict(_as_dict(_as_dict(old.get("spec")).get("template")).get("metadata"))
                              .get("labels"))
        require_prefixed = JOB_NAME_LABEL in old_labels and JOB_CONTROLLER_UID_LABEL in old_labels
    errs = _generated_selector_errors(obj, require_prefixed)
    template_meta = _as_dict(_as_dict(spec.get("template")).get("metadata"))
    labels = template_meta.get("labels")
    errs += validate_labels(labels, "spec.template.labels")
    errs += validate_annotations(template_meta.get("annotations"), "spec.template.annotations")
    if not isinstance(spec.get("selector"), dict):
        errs.append(required("spec.selector"))
        return errs
    errs += validate_label_selector(spec["selector"], "spec.selector")
    selector = _selector_or_none(spec["selector"])
    if selector is not None and not selector.matches(_as_dict(labels)):
        errs.append(_invalid_rendered("spec.template.metadata.labels", _go_string_map(labels),
                                      SELECTOR_MISMATCH_MSG))
    return errs
