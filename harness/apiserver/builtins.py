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

NAMESPACE = ResourceType(
    CORE, "v1", "Namespace", "namespaces", False, "namespace", ("ns",), status=True, has_generation=False,
    name_rule="label",
)
NODE = ResourceType(CORE, "v1", "Node", "nodes", False, "node", ("no",), status=True, has_generation=False)
POD = ResourceType(
    CORE, "v1", "Pod", "pods", True, "pod", ("po",), ("all",), status=True, has_generation=False,
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

REPLICATION_CONTROLLER = ResourceType(
    CORE, "v1", "ReplicationController", "replicationcontrollers", True, "replicationcontroller", ("rc",),
    ("all",), status=True, scale=True,
)
BINDING = ResourceType(CORE, "v1", "Binding", "bindings", True, "binding", has_generation=False, verbs=("create",))

# The rest of what a default 1.32 kube-apiserver serves (GA group-versions only): under a
# "[group/version]" heading, one "plural Kind scope short,names categories status gen" line
# per resource ("-" for none; "status" for the status subresource, the others declare their resources
# in harness/apiserver/subresources/; "gen" when the strategy sets metadata.generation). Kind names are
# checked against the 1.32 schemas (tests/test_builtin_kinds.py); what a kind's objects may contain
# comes from those schemas, not from here.
_GENERIC = """
[v1]
limitranges LimitRange ns limits
podtemplates PodTemplate ns
resourcequotas ResourceQuota ns quota - status
[admissionregistration.k8s.io/v1]
mutatingwebhookconfigurations MutatingWebhookConfiguration cluster - api-extensions - gen
validatingwebhookconfigurations ValidatingWebhookConfiguration cluster - api-extensions - gen
validatingadmissionpolicies ValidatingAdmissionPolicy cluster - api-extensions status gen
validatingadmissionpolicybindings ValidatingAdmissionPolicyBinding cluster - api-extensions - gen
[apiregistration.k8s.io/v1]
apiservices APIService cluster - api-extensions status
[autoscaling/v2]
horizontalpodautoscalers HorizontalPodAutoscaler ns hpa all status gen
[autoscaling/v1]
horizontalpodautoscalers HorizontalPodAutoscaler ns hpa all status gen
[batch/v1]
cronjobs CronJob ns cj all status gen
[certificates.k8s.io/v1]
certificatesigningrequests CertificateSigningRequest cluster csr - status
[discovery.k8s.io/v1]
endpointslices EndpointSlice ns - - - gen
[events.k8s.io/v1]
events Event ns ev
[flowcontrol.apiserver.k8s.io/v1]
flowschemas FlowSchema cluster - - status gen
prioritylevelconfigurations PriorityLevelConfiguration cluster - - status gen
[networking.k8s.io/v1]
ingressclasses IngressClass cluster - - - gen
ingresses Ingress ns ing - status gen
networkpolicies NetworkPolicy ns netpol - - gen
[node.k8s.io/v1]
runtimeclasses RuntimeClass cluster
[rbac.authorization.k8s.io/v1]
clusterrolebindings ClusterRoleBinding cluster
clusterroles ClusterRole cluster
rolebindings RoleBinding ns
roles Role ns
[scheduling.k8s.io/v1]
priorityclasses PriorityClass cluster pc
[storage.k8s.io/v1]
csinodes CSINode cluster
csistoragecapacities CSIStorageCapacity ns
"""
# RBAC object names are path segments, not DNS subdomains (ValidateRBACName).
_PATH_NAMED_GROUPS = ("rbac.authorization.k8s.io",)


def _generic(api_version: str, line: str) -> ResourceType:
    plural, kind, scope, *rest = line.split()
    rest += ["-"] * (4 - len(rest))
    short, categories, subresources, generation = (() if v == "-" else tuple(v.split(",")) for v in rest)
    group, _, version = api_version.rpartition("/")
    return ResourceType(
        group, version, kind, plural, scope == "ns", kind.lower(), short, categories, status="status" in subresources,
        has_generation=bool(generation), name_rule="path" if group in _PATH_NAMED_GROUPS else "subdomain",
    )


def _parse_generic(table: str) -> tuple[ResourceType, ...]:
    out: list[ResourceType] = []
    api_version = ""
    for line in table.strip().splitlines():
        if line.startswith("["):
            api_version = line.strip("[]")
        else:
            out.append(_generic(api_version, line))
    return tuple(out)


GENERIC_BUILTINS: tuple[ResourceType, ...] = _parse_generic(_GENERIC)


# autoscaling/v1 Scale: the body of the scale subresources, never served as a resource of its own.
SCALE = ResourceType("autoscaling", "v1", "Scale", "scale", True, has_generation=False, verbs=())


def _review(group: str, plural: str, kind: str, namespaced: bool) -> ResourceType:
    # Create-only, never stored: harness/apiserver/reviews.py answers them.
    return ResourceType(group, "v1", kind, plural, namespaced, kind.lower(), has_generation=False, verbs=("create",))


AUTHORIZATION = "authorization.k8s.io"
AUTHENTICATION = "authentication.k8s.io"
SELF_SUBJECT_ACCESS_REVIEW = _review(AUTHORIZATION, "selfsubjectaccessreviews", "SelfSubjectAccessReview", False)
SUBJECT_ACCESS_REVIEW = _review(AUTHORIZATION, "subjectaccessreviews", "SubjectAccessReview", False)
LOCAL_SUBJECT_ACCESS_REVIEW = _review(AUTHORIZATION, "localsubjectaccessreviews", "LocalSubjectAccessReview", True)
SELF_SUBJECT_RULES_REVIEW = _review(AUTHORIZATION, "selfsubjectrulesreviews", "SelfSubjectRulesReview", False)
SELF_SUBJECT_REVIEW = _review(AUTHENTICATION, "selfsubjectreviews", "SelfSubjectReview", False)

BUILTINS: tuple[ResourceType, ...] = (
    NAMESPACE, NODE, POD, PERSISTENT_VOLUME, PERSISTENT_VOLUME_CLAIM, CONFIG_MAP, SECRET, EVENT, SERVICE,
    SERVICE_ACCOUNT, ENDPOINTS, DEPLOYMENT, REPLICA_SET, STATEFUL_SET, DAEMON_SET, CONTROLLER_REVISION, JOB,
    POD_DISRUPTION_BUDGET, VOLUME_ATTACHMENT, CSI_DRIVER, STORAGE_CLASS, CUSTOM_RESOURCE_DEFINITION, LEASE,
    REPLICATION_CONTROLLER, BINDING, *GENERIC_BUILTINS, SELF_SUBJECT_ACCESS_REVIEW, SUBJECT_ACCESS_REVIEW,
    LOCAL_SUBJECT_ACCESS_REVIEW, SELF_SUBJECT_RULES_REVIEW, SELF_SUBJECT_REVIEW,
)
