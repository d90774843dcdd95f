"""The built-in kinds every cluster serves (Kubernetes 1.32 names, scopes and subresources)."""

from __future__ import annotations

from harness.apiserver.resources import ResourceType
from harness.kube.names.apps import APPS_GROUP
from harness.kube.names.policy import POLICY_GROUP

CORE = ""
BATCH = "batch"
STORAGE = "storage.k8s.io"
APIEXTENSIONS = "apiextensions.k8s.io"
COORDINATION = "coordination.k8s.io"
EVENTS = "events.k8s.io"

NAMESPACE = ResourceType(
    CORE, "v1", "Namespace", "namespaces", False, "namespace", ("ns",), status=True, has_generation=False,
    name_rule="label", extra_subresources=("finalize",),
)
NODE = ResourceType(CORE, "v1", "Node", "nodes", False, "node", ("no",), status=True, has_generation=False)
POD = ResourceType(
    CORE, "v1", "Pod", "pods", True, "pod", ("po",), ("all",), status=True, has_generation=False,
    extra_subresources=("eviction", "binding"),
)
PERSISTENT_VOLUME = ResourceType(
    CORE, "v1", "PersistentVolume", "persistentvolumes", False, "persistentvolume", ("pv",), status=True,
    has_generation=False,
)
PERSISTENT_VOLUME_CLAIM = ResourceType(
    CORE, "v1", "PersistentVolumeClaim", "persistentvolumeclaims", True, "persistentvolumeclaim", ("pvc",),
    status=True, has_generation=False,
)
CONFIG_MAP = ResourceType(CORE, "v1", "ConfigMap", "configmaps", True, "configmap", ("cm",), has_generation=False)
SECRET = ResourceType(CORE, "v1", "Secret", "secrets", True, "secret", (), has_generation=False)
EVENT = ResourceType(CORE, "v1", "Event", "events", True, "event", ("ev",), has_generation=False)
SERVICE = ResourceType(
    CORE, "v1", "Service", "services", True, "service", ("svc",), ("all",), status=True, has_generation=False,
    name_rule="label1035",
)
SERVICE_ACCOUNT = ResourceType(
    CORE, "v1", "ServiceAccount", "serviceaccounts", True, "serviceaccount", ("sa",), has_generation=False
)
ENDPOINTS = ResourceType(CORE, "v1", "Endpoints", "endpoints", True, "endpoints", ("ep",), has_generation=False)

DEPLOYMENT = ResourceType(
    APPS_GROUP, "v1", "Deployment", "deployments", True, "deployment", ("deploy",), ("all",), status=True, scale=True
)
REPLICA_SET = ResourceType(
    APPS_GROUP, "v1", "ReplicaSet", "replicasets", True, "replicaset", ("rs",), ("all",), status=True, scale=True
)
STATEFUL_SET = ResourceType(
    APPS_GROUP, "v1", "StatefulSet", "statefulsets", True, "statefulset", ("sts",), ("all",), status=True, scale=True
)
DAEMON_SET = ResourceType(
    APPS_GROUP, "v1", "DaemonSet", "daemonsets", True, "daemonset", ("ds",), ("all",), status=True
)
CONTROLLER_REVISION = ResourceType(
    APPS_GROUP, "v1", "ControllerRevision", "controllerrevisions", True, "controllerrevision", has_generation=False
)
JOB = ResourceType(BATCH, "v1", "Job", "jobs", True, "job", (), ("all",), status=True)
POD_DISRUPTION_BUDGET = ResourceType(
    POLICY_GROUP,
    "v1",
    "PodDisruptionBudget",
    "poddisruptionbudgets",
    True,
    "poddisruptionbudget",
    ("pdb",),
    status=True,
)
VOLUME_ATTACHMENT = ResourceType(
    STORAGE, "v1", "VolumeAttachment", "volumeattachments", False, "volumeattachment", status=True,
    has_generation=False,
)
CSI_DRIVER = ResourceType(STORAGE, "v1", "CSIDriver", "csidrivers", False, "csidriver", has_generation=False)
STORAGE_CLASS = ResourceType(
    STORAGE, "v1", "StorageClass", "storageclasses", False, "storageclass", ("sc",), has_generation=False
)
CUSTOM_RESOURCE_DEFINITION = ResourceType(
    APIEXTENSIONS, "v1", "CustomResourceDefinition", "customresourcedefinitions", False,
    "customresourcedefinition", ("crd", "crds"), ("api-extensions",), status=True,
)
LEASE = ResourceType(COORDINATION, "v1", "Lease", "leases", True, "lease", has_generation=False)

BUILTINS: tuple[ResourceType, ...] = (
    NAMESPACE, NODE, POD, PERSISTENT_VOLUME, PERSISTENT_VOLUME_CLAIM, CONFIG_MAP, SECRET, EVENT, SERVICE,
    SERVICE_ACCOUNT, ENDPOINTS, DEPLOYMENT, REPLICA_SET, STATEFUL_SET, DAEMON_SET, CONTROLLER_REVISION, JOB,
    POD_DISRUPTION_BUDGET, VOLUME_ATTACHMENT, CSI_DRIVER, STORAGE_CLASS, CUSTOM_RESOURCE_DEFINITION, LEASE,
)
