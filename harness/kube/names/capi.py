"""Well-known names of Cluster API (``cluster.x-k8s.io`` and its provider groups, v1.10), and the
kinds of the kit's fake providers (DESIGN.md: kinds the world serves)."""

from __future__ import annotations

# API groups and versions
CLUSTER_API_GROUP = "cluster.x-k8s.io"
CLUSTER_API_VERSION = "cluster.x-k8s.io/v1beta1"
INFRASTRUCTURE_API_VERSION = "infrastructure.cluster.x-k8s.io/v1beta1"
BOOTSTRAP_API_VERSION = "bootstrap.cluster.x-k8s.io/v1beta1"
CONTROL_PLANE_API_VERSION = "controlplane.cluster.x-k8s.io/v1beta1"

# Kinds and resources
MACHINE_KIND = "Machine"
CLUSTER_KIND = "Cluster"
MACHINE_SET_KIND = "MachineSet"
MACHINE_DEPLOYMENT_KIND = "MachineDeployment"
MACHINE_DRAIN_RULE_KIND = "MachineDrainRule"
KUBEADM_CONTROL_PLANE_KIND = "KubeadmControlPlane"
MACHINES_RESOURCE = "machines.cluster.x-k8s.io"
CLUSTERS_RESOURCE = "clusters.cluster.x-k8s.io"
FAKE_MACHINE_KIND = "FakeMachine"
FAKE_CLUSTER_KIND = "FakeCluster"
FAKE_BOOTSTRAP_CONFIG_KIND = "FakeBootstrapConfig"

# Finalizers, labels and annotations
MACHINE_FINALIZER = "machine.cluster.x-k8s.io"
CLUSTER_NAME_LABEL = "cluster.x-k8s.io/cluster-name"
CLUSTER_NAME_ANNOTATION = "cluster.x-k8s.io/cluster-name"
CONTROL_PLANE_LABEL = "cluster.x-k8s.io/control-plane"
CONTROL_PLANE_NAME_LABEL = "cluster.x-k8s.io/control-plane-name"
MACHINE_SET_NAME_LABEL = "cluster.x-k8s.io/set-name"
MACHINE_DEPLOYMENT_NAME_LABEL = "cluster.x-k8s.io/deployment-name"
DELETE_MACHINE_ANNOTATION = "cluster.x-k8s.io/delete-machine"
CLONED_FROM_NAME_ANNOTATION = "cluster.x-k8s.io/cloned-from-name"
CLONED_FROM_GROUP_KIND_ANNOTATION = "cluster.x-k8s.io/cloned-from-groupkind"
CONVERSION_DATA_ANNOTATION = "cluster.x-k8s.io/conversion-data"
PRE_DRAIN_DELETE_HOOK_PREFIX = "pre-drain.delete.hook.machine.cluster.x-k8s.io"
PRE_TERMINATE_DELETE_HOOK_PREFIX = "pre-terminate.delete.hook.machine.cluster.x-k8s.io"

# The kubeconfig Secret of a workload cluster
KUBECONFIG_SECRET_TYPE = "cluster.x-k8s.io/secret"
KUBECONFIG_DATA_KEY = "value"

# Phases
PHASE_PENDING = "Pending"
PHASE_PROVISIONING = "Provisioning"
PHASE_PROVISIONED = "Provisioned"
PHASE_RUNNING = "Running"
PHASE_DELETING = "Deleting"
PHASE_FAILED = "Failed"

# Condition types (v1beta1 and v1beta2)
CONTROL_PLANE_INITIALIZED = "ControlPlaneInitialized"
DRAINING_SUCCEEDED = "DrainingSucceeded"
PRE_TERMINATE_DELETE_HOOK_SUCCEEDED = "PreTerminateDeleteHookSucceeded"
NODE_HEALTHY = "NodeHealthy"
DELETING = "Deleting"
PAUSED = "Paused"
TOPOLOGY_RECONCILED = "TopologyReconciled"

# Condition reasons
DELETING_REASON = "Deleting"
DELETED_REASON = "Deleted"
PAUSED_REASON = "Paused"
INTERNAL_ERROR_REASON = "InternalError"
WAITING_EXTERNAL_HOOK_REASON = "WaitingExternalHook"
DRAINING_NODE_REASON = "DrainingNode"
WAITING_FOR_VOLUME_DETACH_REASON = "WaitingForVolumeDetach"
WAITING_FOR_PRE_TERMINATE_HOOK_REASON = "WaitingForPreTerminateHook"
WAITING_FOR_INFRASTRUCTURE_DELETION_REASON = "WaitingForInfrastructureDeletion"
TOPOLOGY_RECONCILE_FAILED_REASON = "TopologyReconcileFailed"

# Condition messages
INTERNAL_ERROR_MESSAGE = "Please check controller logs for errors"
DELETION_COMPLETED_MESSAGE = "Deletion completed"
WAITING_FOR_DELETION_MESSAGE = "Waiting for {kind} to be deleted"
WAITING_FOR_BEFORE_DELETE_HOOK_MESSAGE = "Waiting for BeforeClusterDelete hook"
FAILURE_FROM_REFERENCE_MESSAGE = "Failure detected from referenced resource {gvk} with name {name}: {message}"
PAUSED_BY_SPEC_MESSAGE = "Cluster spec.paused is set to true"
DRAIN_NOT_COMPLETED_MESSAGE = "Drain not completed yet (started at {start}):"
VOLUME_WAIT_MESSAGE = "Waiting for Node volumes to be detached (started at {start})"


# The Cluster's own conditions (v1beta1 ControlPlaneReady; v1beta2 reasons and messages of its
# conditions, and the reasons of its Deleting condition).
CONTROL_PLANE_READY = "ControlPlaneReady"

# v1beta1 reasons and messages.
MISSING_NODE_REF_REASON = "MissingNodeRef"
MISSING_NODE_REF_MESSAGE = "Waiting for the first control plane machine to have its status.nodeRef set"
WAITING_FOR_CONTROL_PLANE_PROVIDER_INITIALIZED_REASON = "WaitingForControlPlaneProviderInitialized"
WAITING_FOR_CONTROL_PLANE_PROVIDER_INITIALIZED_MESSAGE = (
    "Waiting for control plane provider to indicate the control plane has been initialized")
WAITING_FOR_CONTROL_PLANE_REASON = "WaitingForControlPlane"

# v1beta2 conditions and reasons (status.v1beta2.conditions).
NOT_PAUSED_REASON = "NotPaused"
PAUSED_BY_ANNOTATION_MESSAGE = "{kind} has the cluster.x-k8s.io/paused annotation"

INITIALIZED_REASON = "Initialized"
NOT_INITIALIZED_REASON = "NotInitialized"
OBJECT_DOES_NOT_EXIST_REASON = "ObjectDoesNotExist"
OBJECT_DELETED_REASON = "ObjectDeleted"
READY_REASON = "Ready"
NOT_READY_REASON = "NotReady"
CONTROL_PLANE_NOT_INITIALIZED_MESSAGE = "Control plane not yet initialized"
NO_CONTROL_PLANE_NODE_MESSAGE = "Waiting for the first control plane machine to have status.nodeRef set"
WAITING_FOR_TOPOLOGY_MESSAGE = "Waiting for cluster topology to be reconciled"
DOES_NOT_EXIST_MESSAGE = "{kind} does not exist"
DELETED_MESSAGE = "{kind} has been deleted"
DELETED_WHILE_CLUSTER_EXISTS_MESSAGE = "{kind} has been deleted while the cluster still exists"
INFRASTRUCTURE_NOT_READY_MESSAGE = "{kind} status.ready is false"

# v1beta2 Deleting reasons of a Cluster.
WAITING_FOR_BEFORE_DELETE_HOOK_REASON = "WaitingForBeforeDeleteHook"
WAITING_FOR_WORKERS_DELETION_REASON = "WaitingForWorkersDeletion"
WAITING_FOR_CONTROL_PLANE_DELETION_REASON = "WaitingForControlPlaneDeletion"

__all__ = [
    "CLUSTER_API_GROUP",
    "CLUSTER_API_VERSION",
    "INFRASTRUCTURE_API_VERSION",
    "BOOTSTRAP_API_VERSION",
    "CONTROL_PLANE_API_VERSION",
    "MACHINE_KIND",
    "CLUSTER_KIND",
    "MACHINE_SET_KIND",
    "MACHINE_DEPLOYMENT_KIND",
    "MACHINE_DRAIN_RULE_KIND",
    "KUBEADM_CONTROL_PLANE_KIND",
    "MACHINES_RESOURCE",
    "CLUSTERS_RESOURCE",
    "FAKE_MACHINE_KIND",
    "FAKE_CLUSTER_KIND",
    "FAKE_BOOTSTRAP_CONFIG_KIND",
    "MACHINE_FINALIZER",
    "CLUSTER_NAME_LABEL",
    "CLUSTER_NAME_ANNOTATION",
    "CONTROL_PLANE_LABEL",
    "CONTROL_PLANE_NAME_LABEL",
    "MACHINE_SET_NAME_LABEL",
    "MACHINE_DEPLOYMENT_NAME_LABEL",
    "DELETE_MACHINE_ANNOTATION",
    "CLONED_FROM_NAME_ANNOTATION",
    "CLONED_FROM_GROUP_KIND_ANNOTATION",
    "CONVERSION_DATA_ANNOTATION",
    "PRE_DRAIN_DELETE_HOOK_PREFIX",
    "PRE_TERMINATE_DELETE_HOOK_PREFIX",
    "KUBECONFIG_SECRET_TYPE",
    "KUBECONFIG_DATA_KEY",
    "PHASE_PENDING",
    "PHASE_PROVISIONING",
    "PHASE_PROVISIONED",
    "PHASE_RUNNING",
    "PHASE_DELETING",
    "PHASE_FAILED",
    "CONTROL_PLANE_INITIALIZED",
    "DRAINING_SUCCEEDED",
    "PRE_TERMINATE_DELETE_HOOK_SUCCEEDED",
    "NODE_HEALTHY",
    "DELETING",
    "PAUSED",
    "TOPOLOGY_RECONCILED",
    "DELETING_REASON",
    "DELETED_REASON",
    "PAUSED_REASON",
    "INTERNAL_ERROR_REASON",
    "WAITING_EXTERNAL_HOOK_REASON",
    "DRAINING_NODE_REASON",
    "WAITING_FOR_VOLUME_DETACH_REASON",
    "WAITING_FOR_PRE_TERMINATE_HOOK_REASON",
    "WAITING_FOR_INFRASTRUCTURE_DELETION_REASON",
    "TOPOLOGY_RECONCILE_FAILED_REASON",
    "INTERNAL_ERROR_MESSAGE",
    "DELETION_COMPLETED_MESSAGE",
    "WAITING_FOR_DELETION_MESSAGE",
    "WAITING_FOR_BEFORE_DELETE_HOOK_MESSAGE",
    "FAILURE_FROM_REFERENCE_MESSAGE",
    "PAUSED_BY_SPEC_MESSAGE",
    "DRAIN_NOT_COMPLETED_MESSAGE",
    "VOLUME_WAIT_MESSAGE",
    "CONTROL_PLANE_READY",
    "MISSING_NODE_REF_REASON",
    "MISSING_NODE_REF_MESSAGE",
    "WAITING_FOR_CONTROL_PLANE_PROVIDER_INITIALIZED_REASON",
    "WAITING_FOR_CONTROL_PLANE_PROVIDER_INITIALIZED_MESSAGE",
    "WAITING_FOR_CONTROL_PLANE_REASON",
    "NOT_PAUSED_REASON",
    "PAUSED_BY_ANNOTATION_MESSAGE",
    "INITIALIZED_REASON",
    "NOT_INITIALIZED_REASON",
    "OBJECT_DOES_NOT_EXIST_REASON",
    "OBJECT_DELETED_REASON",
    "READY_REASON",
    "NOT_READY_REASON",
    "CONTROL_PLANE_NOT_INITIALIZED_MESSAGE",
    "NO_CONTROL_PLANE_NODE_MESSAGE",
    "WAITING_FOR_TOPOLOGY_MESSAGE",
    "DOES_NOT_EXIST_MESSAGE",
    "DELETED_MESSAGE",
    "DELETED_WHILE_CLUSTER_EXISTS_MESSAGE",
    "INFRASTRUCTURE_NOT_READY_MESSAGE",
    "WAITING_FOR_BEFORE_DELETE_HOOK_REASON",
    "WAITING_FOR_WORKERS_DELETION_REASON",
    "WAITING_FOR_CONTROL_PLANE_DELETION_REASON",
]
