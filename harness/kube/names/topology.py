"""Well-known names of Cluster API's managed topologies: ClusterClass, the topology labels and annotations,
the reasons and messages of the ``TopologyReconciled`` condition (v1beta1 ``status.conditions`` and
v1beta2 ``status.v1beta2.conditions``, Cluster API v1.11's classic hooks), and the template kinds a
ClusterClass of this world names. The condition type itself is :data:`harness.kube.names.capi.TOPOLOGY_RECONCILED`.
"""

from __future__ import annotations

from harness.kube.names.capi import CLUSTER_KIND
from harness.kube.names.capi import PAUSED_BY_ANNOTATION_MESSAGE as _PAUSED_BY_ANNOTATION

CLUSTER_CLASS_KIND = "ClusterClass"
FAKE_CLUSTER_TEMPLATE_KIND = "FakeClusterTemplate"
KUBEADM_CONTROL_PLANE_TEMPLATE_KIND = "KubeadmControlPlaneTemplate"

# Labels (api/v1beta1/common_types.go).
CLUSTER_TOPOLOGY_OWNED_LABEL = "topology.cluster.x-k8s.io/owned"
DEPLOYMENT_TOPOLOGY_NAME_LABEL = "topology.cluster.x-k8s.io/deployment-name"

# Annotations.
BEFORE_CLUSTER_UPGRADE_HOOK_PREFIX = "before-upgrade.hook.cluster.cluster.x-k8s.io"

ANNOTATION_SET = "annotation [{keys}] is set"
ANNOTATIONS_SET = "annotations [{keys}] are set"

# TopologyReconciled.
DELETING_MESSAGE = "Cluster is deleting"
RECONCILE_FAILED_REASON = "ReconcileFailed"
HOOK_BLOCKING_REASON = "LifecycleHookBlocking"
CONTROL_PLANE_UPGRADE_PENDING_REASON = "ControlPlaneUpgradePending"
MACHINE_DEPLOYMENTS_UPGRADE_PENDING_REASON = "MachineDeploymentsUpgradePending"
RECONCILE_SUCCEEDED_REASON = "ReconcileSucceeded"
PAUSED_BY_ANNOTATION_MESSAGE = _PAUSED_BY_ANNOTATION.format(kind=CLUSTER_KIND)
HOOK_BLOCKING = 'hook "{hook}" is blocking: {message}'
HOOK_BLOCKING_NO_MESSAGE = 'hook "{hook}" is blocking'
CONTROL_PLANE_UPGRADE_ON_HOLD = "Control plane rollout and upgrade to version {version} on hold."
MACHINE_DEPLOYMENTS_UPGRADE_ON_HOLD = "MachineDeployment(s) {names} rollout and upgrade to version {version} on hold."
CONTROL_PLANE_PROVISIONING_SUFFIX = " Control plane is completing initial provisioning"
CONTROL_PLANE_UPGRADING_SUFFIX = " Control plane is upgrading to version {version}"
MACHINE_DEPLOYMENTS_UPGRADING_SUFFIX = " MachineDeployment(s) {names} are upgrading"

# Error texts.
CLUSTER_CLASS_NOT_FOUND = "failed to retrieve ClusterClass {namespace}/{name}: {error}"
BLUEPRINT_FAILED = "error reading the ClusterClass: {error}"
