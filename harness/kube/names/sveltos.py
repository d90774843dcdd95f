"""Well-known names of Sveltos (addon-controller and libsveltos, reference/runtime-hooks-and-addons.md §4): the
ClusterProfile, ClusterSummary and SveltosCluster kinds, their enums, labels, finalizers and status
texts, the marks put on deployed resources, and the names this project adds for seed 003
(``clusterDeletionBehavior``, the ClusterSummary ``Deleting`` condition, the cleanup gate extension).
Names only: the reference addon controller (controllers/addons) keeps its logic and timings.
"""

from __future__ import annotations

CONFIG_GROUP = "config.projectsveltos.io"
CONFIG_API_VERSION = CONFIG_GROUP + "/v1beta1"
CLUSTER_PROFILE_KIND = "ClusterProfile"
CLUSTER_SUMMARY_KIND = "ClusterSummary"
LIB_GROUP = "lib.projectsveltos.io"
LIB_API_VERSION = LIB_GROUP + "/v1beta1"
SVELTOS_CLUSTER_KIND = "SveltosCluster"

# stopMatchingBehavior (api/v1beta1/spec.go): the only two upstream values.
WITHDRAW_POLICIES = "WithdrawPolicies"
LEAVE_POLICIES = "LeavePolicies"
STOP_MATCHING_BEHAVIORS = (WITHDRAW_POLICIES, LEAVE_POLICIES)
# clusterDeletionBehavior (seed 003): RemovePolicies is the default.
REMOVE_POLICIES = "RemovePolicies"
ENFORCE_REMOVE_POLICIES = "EnforceRemovePolicies"
CLUSTER_DELETION_BEHAVIORS = (LEAVE_POLICIES, REMOVE_POLICIES, ENFORCE_REMOVE_POLICIES)

# ClusterSummary naming and labels.
CLUSTER_TYPE_CAPI = "Capi"
CLUSTER_TYPE_SVELTOS = "Sveltos"
SUMMARY_NAME = "{profile}-{prefix}-{cluster}"
SUMMARY_PREFIX = {CLUSTER_TYPE_CAPI: "capi", CLUSTER_TYPE_SVELTOS: "sveltos"}
CLUSTER_PROFILE_NAME_LABEL = "projectsveltos.io/cluster-profile-name"
CLUSTER_NAME_LABEL = "projectsveltos.io/cluster-name"
CLUSTER_TYPE_LABEL = "projectsveltos.io/cluster-type"
CLUSTER_PROFILE_FINALIZER = "clusterprofilefinalizer.projectsveltos.io"
CLUSTER_SUMMARY_FINALIZER = "clustersummaryfinalizer.projectsveltos.io"

# Marks on every resource deployed into a cluster (libsveltos deployer): where its manifest came from
# (labels) and which profile owns it (annotations), plus the hash of what was applied.
REFERENCE_KIND_LABEL = "projectsveltos.io/reference-kind"
REFERENCE_NAME_LABEL = "projectsveltos.io/reference-name"
REFERENCE_NAMESPACE_LABEL = "projectsveltos.io/reference-namespace"
OWNER_KIND_ANNOTATION = "projectsveltos.io/owner-kind"
OWNER_NAME_ANNOTATION = "projectsveltos.io/owner-name"
OWNER_TIER_ANNOTATION = "projectsveltos.io/owner-tier"
POLICY_HASH_ANNOTATION = "projectsveltos.io/hash"
DEFAULT_TIER = "100"
OWNERSHIP_LABELS = (REFERENCE_KIND_LABEL, REFERENCE_NAME_LABEL, REFERENCE_NAMESPACE_LABEL)
OWNERSHIP_ANNOTATIONS = (OWNER_KIND_ANNOTATION, OWNER_NAME_ANNOTATION, OWNER_TIER_ANNOTATION, POLICY_HASH_ANNOTATION)

# featureSummaries (libsveltos FeatureStatus); the one feature this controller deploys.
FEATURE_RESOURCES = "Resources"
PROVISIONING = "Provisioning"
PROVISIONED = "Provisioned"
FAILED = "Failed"
FAILED_NON_RETRIABLE = "FailedNonRetriable"
REMOVING = "Removing"
REMOVED = "Removed"

# status.dependencies (controllers/clustersummary_controller.go: areDependenciesDeployed, areDependentsRemoved).
NO_DEPENDENCIES = "no dependencies"
ALL_DEPENDENCIES_DEPLOYED = "All dependencies deployed"
DEPENDENCY_NOT_FOUND = ("ClusterProfile {name} is a dependency. The ClusterSummary instance for this "
                        "profile/cluster was not found")
DEPENDENCY_NOT_DEPLOYED = "ClusterProfile {name} is a dependency and it is not fully deployed yet"
DEPENDENT_NOT_REMOVED = "{summary} still depends on this profile and has not been removed yet"
# This project's (upstream has no cycle detection): a cycle is said, and deletion does not wait on it.
DEPENDENCY_CYCLE = "dependency cycle among ClusterProfiles {names}"
DEPENDENCY_CYCLE_ON_REMOVAL = ("dependency cycle among ClusterProfiles {names}: removed without waiting "
                               "for each other")

# failureMessage texts. A missing reference is upstream's NonRetriableError (collectReferencedObjects):
# FailedNonRetriable, a Warning event, and no retry until the reference appears; a manifest that does not
# parse is an ordinary error (collectContent): Failed.
REFERENCE_NOT_FOUND = "Referenced resource: {kind} {namespace}/{name} does not exist"
REFERENCE_KIND_INVALID = "referenced kind {kind} is not supported (ConfigMap or Secret)"
MANIFEST_INVALID = "failed to get policy from Data {section:.100}: {error}"
MANIFEST_NOT_OBJECT = "a manifest must be an object with apiVersion, kind and metadata.name"
FAILED_NON_RETRIABLE_EVENT = "FailedNonRetriable"
FAILED_NON_RETRIABLE_MESSAGE = ("Feature {feature} for cluster {cluster_type} {namespace}/{name} failed with "
                                "non-retriable error: {error}")
EVENT_COMPONENT = "addon-controller"
CLUSTER_UNREACHABLE = "cluster {cluster} is not reachable: {error}"
KUBECONFIG_MISSING = "failed to get kubeconfig for cluster {cluster}: {error}"
APPLY_FAILED = "failed to deploy {kind} {name}: {error}"
REMOVE_FAILED = "failed to remove {kind} {name}: {error}"

# The ClusterSummary Deleting condition (seed 003: "Reflect progress/results in ClusterSummary
# status.conditions"; upstream's ClusterSummary has no conditions).
DELETING_CONDITION = "Deleting"
WAITING_FOR_DEPENDENTS_REASON = "WaitingForDependents"
REMOVING_POLICIES_REASON = "RemovingPolicies"
REMOVAL_FAILED_REASON = "RemovalFailed"
POLICIES_REMOVED_REASON = "PoliciesRemoved"
LEAVING_POLICIES_REASON = "LeavingPolicies"
CLUSTER_UNMANAGED_REASON = "ClusterNoLongerManaged"
LEAVING_POLICIES_MESSAGE = "policies are left in the cluster ({behavior})"
CLUSTER_UNMANAGED_MESSAGE = "the SveltosCluster is being deleted: Sveltos stops managing it and leaves its policies"

# The cleanup gate: the Runtime Extension the controller serves for EnforceRemovePolicies.
EXTENSION_CONFIG_NAME = "sveltos-cleanup-gate"
HANDLER_NAME = "before-cluster-delete"
WAITING_FOR_CLEANUP = "waiting for add-on cleanup: {details}"
