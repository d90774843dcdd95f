"""Defaulting and create-time preparation of built-in kinds (the registry strategies' PrepareForCreate).

Only the defaults that clients and the world's controllers read are filled in; each matches what a
1.32 apiserver returns for the same request.
"""

from __future__ import annotations

from typing import Any

from harness.kube.names.batch import (
    JOB_CONTROLLER_UID_LABEL,
    JOB_NAME_LABEL,
    LEGACY_JOB_CONTROLLER_UID_LABEL,
    LEGACY_JOB_NAME_LABEL,
)

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
NAMESPACE_FINALIZER = "kubernetes"
DEFAULT_TERMINATION_GRACE = 30


def default_pod_spec(spec: dict[str, Any]) -> None:
    """Fill a PodSpec's defaults in place (also used for templates)."""
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", DEFAULT_TERMINATION_GRACE)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    for container in spec.get("containers") or []:
        if isinstance(container, dict):
            container.setdefault("terminationMessagePath", "/dev/termination-log")
            container.setdefault("terminationMessagePolicy", "File")
            container.setdefault("imagePullPolicy", "Always" if str(container.get("image", "")).endswith(":latest")
                                 or ":" not in str(container.get("image", "")) else "IfNotPresent")
            container.setdefault("resources", {})


def _default_template(obj: dict[str, Any]) -> None:
    template = obj.setdefault("spec", {}).setdefault("template", {})
    template.setdefault("metadata", {})
    if isinstance(template.get("spec"), dict):
        default_pod_spec(template["spec"])


def _pod(obj: dict[str, Any]) -> None:
    spec = obj.setdefault("spec", {})
    default_pod_spec(spec)
    obj["status"] = {"phase": "Pending", "qosClass": "BestEffort"}


def _namespace(obj: dict[str, Any]) -> None:
    name = obj["metadata"]["name"]
    obj["metadata"].setdefault("labels", {})[NAMESPACE_NAME_LABEL] = name
    obj["spec"] = {"finalizers": [NAMESPACE_FINALIZER]}
    obj["status"] = {"phase": "Active"}


def _deployment(obj: dict[str, Any]) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    strategy = spec.setdefault("strategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        rolling.setdefault("maxUnavailable", "25%")
        rolling.setdefault("maxSurge", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    _default_template(obj)


def _replica_set(obj: dict[str, Any]) -> None:
    obj.setdefault("spec", {}).setdefault("replicas", 1)
    _default_template(obj)


def _replication_controller(obj: dict[str, Any]) -> None:
    # SetDefaults_ReplicationController: the selector, and the object's labels, default to the
    # template's labels; replicas to 1.
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    template = spec.get("template")
    labels = ((template or {}).get("metadata") or {}).get("labels") if isinstance(template, dict) else None
    if labels:
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
        if not (obj.get("metadata") or {}).get("labels"):
            obj.setdefault("metadata", {})["labels"] = dict(labels)
    if isinstance(template, dict):
        _default_template(obj)


def _hpa_v2(obj: dict[str, Any]) -> None:
    # SetDefaults_HorizontalPodAutoscaler (v2): one replica at least, and 80% CPU without metrics.
    spec = obj.setdefault("spec", {})
    spec.setdefault("minReplicas", 1)
    if not spec.get("metrics"):
        spec["metrics"] = [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]


def _hpa_v1(obj: dict[str, Any]) -> None:
    # The v1 defaults: minReplicas only (a v1 HPA without a CPU target has no metrics).
    obj.setdefault("spec", {}).setdefault("minReplicas", 1)


def _stateful_set(obj: dict[str, Any]) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = spec.setdefault("updateStrategy", {"type": "RollingUpdate"})
    if strategy.get("type", "RollingUpdate") == "RollingUpdate":
        strategy.setdefault("type", "RollingUpdate")
        strategy.setdefault("rollingUpdate", {}).setdefault("partition", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("persistentVolumeClaimRetentionPolicy", {"whenDeleted": "Retain", "whenScaled": "Retain"})
    _default_template(obj)


def _daemon_set(obj: dict[str, Any]) -> None:
    spec = obj.setdefault("spec", {})
    strategy = spec.setdefault("updateStrategy", {"type": "RollingUpdate"})
    if strategy.get("type", "RollingUpdate") == "RollingUpdate":
        strategy.setdefault("type", "RollingUpdate")
        rolling = strategy.setdefault("rollingUpdate", {})
        rolling.setdefault("maxUnavailable", 1)
        rolling.setdefault("maxSurge", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    _default_template(obj)


def _job(obj: dict[str, Any]) -> None:
    spec = obj.setdefault("spec", {})
    # Completions default to 1 only when parallelism is unset too (a work-queue Job has none).
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
    # The selector and template labels were generated before validation (generate_job_selector).
    # Before the pod defaults, which would make it Always (a value Job validation rejects).
    template_spec = spec.setdefault("template", {}).get("spec")
    if isinstance(template_spec, dict):
        template_spec.setdefault("restartPolicy", "Never")
    _default_template(obj)


def generate_job_selector(obj: dict[str, Any]) -> None:
    """The Job strategy's selector generation (``generateSelector``), unless ``manualSelector`` is true.

    The template gets the name labels (``job-name``, ``batch.kubernetes.io/job-name``) and the uid
    labels (``controller-uid``, ``batch.kubernetes.io/controller-uid``) where the user did not set
    them, and the selector's matchLabels get ``batch.kubernetes.io/controller-uid`` where absent.
    Values the user set are kept: a conflict is for validation to refuse. Runs before validation,
    as upstream's PrepareForCreate does, so a name too long for a label value is refused (422).
    """
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict) or spec.get("manualSelector") is True:
        return
    meta = obj["metadata"]
    labels = _object_at(spec, "template", "metadata", "labels")
    for key in (LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL):
        labels.setdefault(key, meta.get("name", ""))
    for key in (LEGACY_JOB_CONTROLLER_UID_LABEL, JOB_CONTROLLER_UID_LABEL):
        labels.setdefault(key, meta.get("uid", ""))
    _object_at(spec, "selector", "matchLabels").setdefault(JOB_CONTROLLER_UID_LABEL, meta.get("uid", ""))


def _object_at(obj: dict[str, Any], *path: str) -> dict[str, Any]:
    """The object at ``path`` under ``obj``, each step made an empty object where it is absent or not one."""
    for key in path:
        child = obj.get(key)
        if not isinstance(child, dict):
            child = obj[key] = {}
        obj = child
    return obj


def prepare_before_validation(api_version: str, kind: str, obj: dict[str, Any]) -> None:
    """The create-time changes upstream makes before validating (for now the Job's selector)."""
    if (api_version, kind) == ("batch/v1", "Job"):
        generate_job_selector(obj)


def _pdb(obj: dict[str, Any]) -> None:
    # PrepareForCreate empties status; these four are not omitempty, so a client always sees them.
    obj["status"] = {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}


def _volume_attachment(obj: dict[str, Any]) -> None:
    obj["status"] = {"attached": False}


def _node(obj: dict[str, Any]) -> None:
    obj.setdefault("spec", {})
    obj.setdefault("status", {})


def _service(obj: dict[str, Any]) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    for port in spec.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
            port.setdefault("targetPort", port.get("port"))
    obj["status"] = {"loadBalancer": {}}


def _pvc(obj: dict[str, Any]) -> None:
    obj.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")
    obj["status"] = {"phase": "Pending"}


def _pv(obj: dict[str, Any]) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
    spec.setdefault("volumeMode", "Filesystem")
    obj["status"] = {"phase": "Available" if not spec.get("claimRef") else "Bound"}


def _secret(obj: dict[str, Any]) -> None:
    obj.setdefault("type", "Opaque")


PREPARERS = {
    ("v1", "Pod"): _pod,
    ("v1", "Namespace"): _namespace,
    ("v1", "Node"): _node,
    ("v1", "Service"): _service,
    ("v1", "PersistentVolumeClaim"): _pvc,
    ("v1", "PersistentVolume"): _pv,
    ("v1", "Secret"): _secret,
    ("apps/v1", "Deployment"): _deployment,
    ("apps/v1", "ReplicaSet"): _replica_set,
    ("v1", "ReplicationController"): _replication_controller,
    ("apps/v1", "StatefulSet"): _stateful_set,
    ("apps/v1", "DaemonSet"): _daemon_set,
    ("batch/v1", "Job"): _job,
    ("autoscaling/v2", "HorizontalPodAutoscaler"): _hpa_v2,
    ("autoscaling/v1", "HorizontalPodAutoscaler"): _hpa_v1,
    ("policy/v1", "PodDisruptionBudget"): _pdb,
    ("storage.k8s.io/v1", "VolumeAttachment"): _volume_attachment,
}


def prepare_for_create(api_version: str, kind: str, obj: dict[str, Any]) -> None:
    """Apply the kind's create-time defaults and status reset in place."""
    preparer = PREPARERS.get((api_version, kind))
    if preparer is not None:
        preparer(obj)
