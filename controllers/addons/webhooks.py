"""ClusterProfile validation as an API server admission plugin (creates and updates of the object, not of
its status). Enum values are refused as kube-apiserver refuses a CRD enum violation (422 ``Invalid``,
``Unsupported value: "<v>": supported values: ...``), so ``stopMatchingBehavior: RemovePolicies`` -- the
seed's example, not an upstream value -- is refused with the two values upstream has. Also: a profile
that depends on itself, a dependency named twice, a policyRef of another kind than ConfigMap/Secret or
without a name, a clusterRef of another kind than Cluster/SveltosCluster, and a selector that does not
parse. A ``dependsOn`` naming a profile that does not exist is accepted (it may come later): the
ClusterSummaries say they wait for it.
"""

from __future__ import annotations

from typing import Any

from controllers.addons.api import (
    CLUSTER_DELETION_BEHAVIORS,
    CLUSTER_PROFILE_KIND,
    CONFIG_GROUP,
    STOP_MATCHING_BEHAVIORS,
    SVELTOS_CLUSTER_KIND,
)
from harness.apiserver.resources import ResourceType
from harness.kube import errors as api_errors
from harness.kube.errors import FieldError
from harness.kube.names.meta import CREATE, UPDATE
from harness.kube.selectors import label_selector_from_dict

POLICY_REF_KINDS = ("ConfigMap", "Secret")
CLUSTER_REF_KINDS = ("Cluster", SVELTOS_CLUSTER_KIND)
DEPENDS_ON_ITSELF = "a ClusterProfile cannot depend on itself"
NAME_REQUIRED = "a name is required"
SELECTOR_INVALID = "invalid label selector: {error}"


def validate_cluster_profile(profile: dict[str, Any]) -> list[FieldError]:
    """Every problem of a ClusterProfile's spec, with field paths (empty when it is valid)."""
    spec = profile.get("spec") or {}
    name = str((profile.get("metadata") or {}).get("name", ""))
    errs: list[FieldError] = []
    for field_name, allowed in (("stopMatchingBehavior", STOP_MATCHING_BEHAVIORS),
                                ("clusterDeletionBehavior", CLUSTER_DELETION_BEHAVIORS)):
        value = spec.get(field_name)
        if value is not None and value not in allowed:
            errs.append(api_errors.not_supported(f"spec.{field_name}", value, list(allowed)))
    seen: set[str] = set()
    for i, dependency in enumerate(spec.get("dependsOn") or []):
        path = f"spec.dependsOn[{i}]"
        if dependency == name:
            errs.append(api_errors.invalid(path, dependency, DEPENDS_ON_ITSELF))
        elif dependency in seen:
            errs.append(api_errors.duplicate(path, dependency))
        seen.add(dependency)
    for i, ref in enumerate(spec.get("policyRefs") or []):
        path = f"spec.policyRefs[{i}]"
        if ref.get("kind") not in POLICY_REF_KINDS:
            errs.append(api_errors.not_supported(f"{path}.kind", ref.get("kind", ""), list(POLICY_REF_KINDS)))
        if not ref.get("name"):
            errs.append(api_errors.required(f"{path}.name", NAME_REQUIRED))
    for i, ref in enumerate(spec.get("clusterRefs") or []):
        path = f"spec.clusterRefs[{i}]"
        if ref.get("kind") not in CLUSTER_REF_KINDS:
            errs.append(api_errors.not_supported(f"{path}.kind", ref.get("kind", ""), list(CLUSTER_REF_KINDS)))
        if not ref.get("name"):
            errs.append(api_errors.required(f"{path}.name", NAME_REQUIRED))
    selector = spec.get("clusterSelector")
    if selector:
        try:
            label_selector_from_dict(selector)
        except (ValueError, TypeError, AttributeError) as err:
            errs.append(api_errors.invalid("spec.clusterSelector", selector, SELECTOR_INVALID.format(error=err)))
    return errs


def admit_cluster_profile(
    operation: str, rt: ResourceType, new: dict[str, Any] | None, old: dict[str, Any] | None
) -> list[FieldError]:
    """Admission plugin for ClusterProfiles: refuse an invalid spec with 422 Invalid."""
    if new is None or operation not in (CREATE, UPDATE):
        return []
    if operation == UPDATE and old is not None and new.get("spec") == old.get("spec"):
        return []
    errs = validate_cluster_profile(new)
    if errs:
        raise api_errors.invalid_object(rt.kind, rt.group, str((new.get("metadata") or {}).get("name", "")), errs)
    return []


# (API group, kind, plugin) for the composition root to install on the management cluster.
ADMISSION_PLUGINS = ((CONFIG_GROUP, CLUSTER_PROFILE_KIND, admit_cluster_profile),)

