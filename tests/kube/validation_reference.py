"""The metadata and Pod-update checks as they were before their fast paths (main at 150fde7), the
reference :mod:`tests.kube.test_validation_equivalence` compares the checks of every write against."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.apiserver.validation import (
    ACTIVE_DEADLINE_INCREASED_MSG,
    ACTIVE_DEADLINE_UNSET_MSG,
    IMAGE_WHITESPACE_MSG,
    POD_ADD_REMOVE_CONTAINERS_MSG,
    POD_UPDATE_FORBIDDEN_MSG,
    SCHEDULING_GATE_ADDED_MSG,
    TOLERATION_MODIFIED_MSG,
    _spec_diff,
    _without_toleration_seconds,
    validate_pod_spec,
)
from harness.kube import validation as kv
from harness.kube.errors import FieldError, forbidden, invalid, required
from harness.kube.validation import (
    FIELD_IMMUTABLE_MSG,
    GENERATION_DECREMENTED_MSG,
    IS_NEGATIVE_MSG,
    MAX_INT32,
    NAME_REQUIRED_MSG,
    NAME_RULES,
    NAMESPACE_NOT_ALLOWED_MSG,
    NO_NEW_FINALIZERS_MSG,
    _as_dict,
    _as_list,
    _child,
    _go_string_slice,
    _go_time,
    _inclusive_range_error,
    _index,
    _invalid_rendered,
    _semantic_equal,
    _text,
    validate_annotations,
    validate_finalizers,
    validate_labels,
    validate_namespace_name,
    validate_owner_references,
)


def validate_object_meta(obj: Mapping[str, Any], *, namespaced: bool, name_rule: str = "subdomain") -> list[FieldError]:
    """The reference ``ValidateObjectMeta``: every part checked, empty or not."""
    name_fn = NAME_RULES[name_rule]
    meta = _as_dict(obj.get("metadata"))
    errs: list[FieldError] = []
    generate_name = _text(meta.get("generateName"))
    if generate_name:
        errs.extend(invalid("metadata.generateName", generate_name, msg) for msg in name_fn(generate_name, True))
    name = _text(meta.get("name"))
    if not name:
        if not generate_name:
            errs.append(required("metadata.name", NAME_REQUIRED_MSG))
    else:
        errs.extend(invalid("metadata.name", name, msg) for msg in name_fn(name, False))
    namespace = _text(meta.get("namespace"))
    if namespaced:
        if not namespace:
            errs.append(required("metadata.namespace"))
        else:
            errs.extend(validate_namespace_name(namespace, "metadata.namespace"))
    elif namespace:
        errs.append(forbidden("metadata.namespace", NAMESPACE_NOT_ALLOWED_MSG))
    generation = meta.get("generation")
    if isinstance(generation, int) and not isinstance(generation, bool) and generation < 0:
        errs.append(invalid("metadata.generation", generation, IS_NEGATIVE_MSG))
    errs.extend(validate_labels(meta.get("labels"), "metadata.labels"))
    errs.extend(validate_annotations(meta.get("annotations"), "metadata.annotations"))
    errs.extend(validate_owner_references(meta.get("ownerReferences")))
    errs.extend(validate_finalizers(meta.get("finalizers")))
    return errs


def validate_object_meta_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    """The reference ``ValidateObjectMetaUpdate``: labels, annotations and owner references always checked."""
    new_meta, old_meta = _as_dict(new.get("metadata")), _as_dict(old.get("metadata"))
    errs: list[FieldError] = []
    if old_meta.get("deletionTimestamp"):
        old_finalizers = {_text(f) for f in _as_list(old_meta.get("finalizers"))}
        extra = sorted({_text(f) for f in _as_list(new_meta.get("finalizers"))} - old_finalizers)
        if extra:
            errs.append(forbidden("metadata.finalizers", NO_NEW_FINALIZERS_MSG.format(found=_go_string_slice(extra))))
    new_generation, old_generation = new_meta.get("generation"), old_meta.get("generation")
    if isinstance(new_generation, int) and isinstance(old_generation, int) and new_generation < old_generation:
        errs.append(invalid("metadata.generation", new_generation, GENERATION_DECREMENTED_MSG))
    for key in ("name", "namespace", "uid"):
        new_value, old_value = _text(new_meta.get(key)), _text(old_meta.get(key))
        if key == "uid" and not new_value:
            continue
        if new_value != old_value:
            errs.append(invalid(f"metadata.{key}", new_value, FIELD_IMMUTABLE_MSG))
    old_created, new_created = old_meta.get("creationTimestamp"), new_meta.get("creationTimestamp")
    if not old_created and _go_time(new_created) != _go_time(old_created):
        errs.append(_invalid_rendered("metadata.creationTimestamp", _go_time(new_created), FIELD_IMMUTABLE_MSG))
    old_deleted, new_deleted = old_meta.get("deletionTimestamp"), new_meta.get("deletionTimestamp")
    if not old_deleted and new_deleted:
        errs.append(_invalid_rendered("metadata.deletionTimestamp", _go_time(new_deleted), FIELD_IMMUTABLE_MSG))
    old_grace, new_grace = old_meta.get("deletionGracePeriodSeconds"), new_meta.get("deletionGracePeriodSeconds")
    if new_grace is not None and new_grace != old_grace:
        errs.append(invalid("metadata.deletionGracePeriodSeconds", new_grace, FIELD_IMMUTABLE_MSG))
    errs.extend(validate_labels(new_meta.get("labels"), "metadata.labels"))
    errs.extend(validate_annotations(new_meta.get("annotations"), "metadata.annotations"))
    errs.extend(validate_owner_references(new_meta.get("ownerReferences")))
    return errs


def _container_updates(new: list[Any], old: list[Any], field_path: str) -> tuple[list[FieldError], bool]:
    if len(new) != len(old):
        return [forbidden(field_path, POD_ADD_REMOVE_CONTAINERS_MSG)], True
    errs: list[FieldError] = []
    for i, raw in enumerate(new):
        image = _text(_as_dict(raw).get("image"))
        image_path = _child(_index(field_path, i), "image")
        if not image:
            errs.append(required(image_path))
        if image.strip() != image:
            errs.append(invalid(image_path, image, IMAGE_WHITESPACE_MSG))
    return errs, False


def validate_pod_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:  # noqa: C901
    """The reference spec half of ``ValidatePodUpdate``: tolerations and gates always compared."""
    new_spec, old_spec = _as_dict(new.get("spec")), _as_dict(old.get("spec"))
    errs = validate_pod_spec(new_spec)
    for key in ("containers", "initContainers"):
        update_errs, stop = _container_updates(_as_list(new_spec.get(key)), _as_list(old_spec.get(key)), f"spec.{key}")
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
    new_tolerations = [_without_toleration_seconds(t) for t in _as_list(new_spec.get("tolerations"))]
    for toleration in _as_list(old_spec.get("tolerations")):
        if _without_toleration_seconds(toleration) not in new_tolerations:
            errs.append(forbidden("spec.tolerations", TOLERATION_MODIFIED_MSG))
            break
    old_gates = {_text(_as_dict(g).get("name")) for g in _as_list(old_spec.get("schedulingGates"))}
    added_gates = {_text(_as_dict(g).get("name")): i for i, g in enumerate(_as_list(new_spec.get("schedulingGates")))}
    for gate_name, i in sorted(added_gates.items(), key=lambda item: item[1]):
        if gate_name not in old_gates:
            path = _child(_index("spec.schedulingGates", i), "name")
            errs.append(forbidden(path, SCHEDULING_GATE_ADDED_MSG.format(name=gate_name)))
    if _semantic_equal(new_spec, old_spec):
        return errs
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


__all__ = ["kv", "validate_object_meta", "validate_object_meta_update", "validate_pod_update"]
