"""Per-kind validation of built-in kinds (harness/apiserver/validation.py): every test pins the exact
kube-apiserver 1.32 message text."""

from __future__ import annotations

from harness.apiserver.validation import (
    _validate_pod_spec,
    validate_pdb_spec,
    validate_pod_spec,
    validate_pod_update,
    validate_volume_attachment,
    validate_volume_attachment_update,
)
from tests.validation_messages import LABEL_MSG, LABEL_VALUE_MSG, NAME_PART_MSG, PERCENT_MSG, SUBDOMAIN_MSG, pod, texts


def volume_attachment(**spec: object) -> dict:
    body = {"attacher": "ebs.csi.aws.com", "nodeName": "node-1", "source": {"persistentVolumeName": "pv-1"}}
    body.update(spec)
    return {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": "csi-1"}, "spec": body}


# -- PodDisruptionBudget --------------------------------------------------------------------------------


def test_pdb_rejects_both_min_available_and_max_unavailable():
    spec = {"minAvailable": 1, "maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}}
    errs = validate_pdb_spec(spec)
    assert len(errs) == 1
    assert errs[0].field == "spec"
    assert str(errs[0]) == (
        'spec: Invalid value: {"maxUnavailable":1,"minAvailable":1,"selector":{"matchLabels":{"app":"web"}}}: '
        "minAvailable and maxUnavailable cannot be both set"
    )


def test_pdb_negative_int_is_invalid():
    assert texts(validate_pdb_spec({"minAvailable": -1})) == [
        "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"
    ]


def test_pdb_percent_over_100_is_invalid():
    assert texts(validate_pdb_spec({"maxUnavailable": "150%"})) == [
        (
            'spec.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}: '
            "must not be greater than 100%"
        )
    ]
    assert validate_pdb_spec({"maxUnavailable": "100%"}) == []


def test_pdb_string_that_is_not_a_percent_is_invalid():
    assert texts(validate_pdb_spec({"minAvailable": "5"})) == [
        f'spec.minAvailable: Invalid value: intstr.IntOrString{{Type:1, IntVal:0, StrVal:"5"}}: {PERCENT_MSG}'
    ]


def test_pdb_selector_expressions_are_validated():
    spec = {
        "minAvailable": 0,
        "selector": {
            "matchExpressions": [
                {"key": "app", "operator": "In", "values": []},
                {"key": "tier", "operator": "Exists", "values": ["x"]},
                {"key": "bad key", "operator": "Like"},
                {"key": "env", "operator": "NotIn", "values": ["ok", "not ok"]},
            ]
        },
    }
    assert texts(validate_pdb_spec(spec)) == [
        (
            "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or "
            "'NotIn'"
        ),
        (
            "spec.selector.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or "
            "'DoesNotExist'"
        ),
        'spec.selector.matchExpressions[2].operator: Invalid value: "Like": not a valid selector operator',
        f'spec.selector.matchExpressions[2].key: Invalid value: "bad key": {NAME_PART_MSG}',
        f'spec.selector.matchExpressions[3].values[1]: Invalid value: "not ok": {LABEL_VALUE_MSG}',
    ]


def test_pdb_unhealthy_pod_eviction_policy_must_be_known():
    assert texts(validate_pdb_spec({"minAvailable": 1, "unhealthyPodEvictionPolicy": "Sometimes"})) == [
        (
            'spec.unhealthyPodEvictionPolicy: Unsupported value: "Sometimes": supported values: "AlwaysAllow", '
            '"IfHealthyBudget"'
        )
    ]
    assert validate_pdb_spec({"minAvailable": 1, "unhealthyPodEvictionPolicy": "AlwaysAllow"}) == []


def test_pdb_without_selector_is_valid():
    assert validate_pdb_spec({"maxUnavailable": "10%"}) == []


# -- VolumeAttachment ------------------------------------------------------------------------------------


def test_volume_attachment_valid():
    assert validate_volume_attachment(volume_attachment()) == []


def test_volume_attachment_needs_exactly_one_source():
    assert texts(validate_volume_attachment(volume_attachment(source={}))) == [
        "spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName"
    ]
    both = volume_attachment(source={"persistentVolumeName": "pv-1", "inlineVolumeSpec": {"csi": {}}})
    assert texts(validate_volume_attachment(both)) == [
        "spec.source: Forbidden: must specify exactly one of inlineVolumeSpec and persistentVolumeName"
    ]


def test_volume_attachment_empty_pv_name():
    errs = texts(validate_volume_attachment(volume_attachment(source={"persistentVolumeName": ""})))
    assert errs == [
        "spec.source.persistentVolumeName: Required value: must specify non empty persistentVolumeName",
        f'spec.source.persistentVolumeName: Invalid value: "": {SUBDOMAIN_MSG}',
    ]


def test_volume_attachment_attacher_must_be_a_csi_driver_name():
    assert texts(validate_volume_attachment(volume_attachment(attacher=""))) == [
        "spec.attacher: Required value",
        f'spec.attacher: Invalid value: "": {SUBDOMAIN_MSG}',
    ]
    assert texts(validate_volume_attachment(volume_attachment(attacher="bad_driver"))) == [
        f'spec.attacher: Invalid value: "bad_driver": {SUBDOMAIN_MSG}'
    ]
    # the driver name is lower-cased before the subdomain check
    assert validate_volume_attachment(volume_attachment(attacher="EBS.csi.aws.com")) == []
    assert texts(validate_volume_attachment(volume_attachment(attacher="a" * 64))) == [
        "spec.attacher: Too long: may not be more than 63 bytes"
    ]


def test_volume_attachment_node_name_must_be_a_subdomain():
    assert texts(validate_volume_attachment(volume_attachment(nodeName=""))) == [
        f'spec.nodeName: Invalid value: "": {SUBDOMAIN_MSG}'
    ]


def test_volume_attachment_spec_is_immutable():
    old = volume_attachment()
    new = volume_attachment(nodeName="node-2")
    assert texts(validate_volume_attachment_update(new, old)) == [
        (
            'spec: Invalid value: {"attacher":"ebs.csi.aws.com","nodeName":"node-2",'
            '"source":{"persistentVolumeName":"pv-1"}}: field is immutable'
        )
    ]


def test_volume_attachment_status_change_is_not_a_spec_change():
    old = volume_attachment()
    new = volume_attachment()
    new["status"] = {"attached": True, "attachmentMetadata": {"devicePath": "/dev/xvdb"}}
    assert validate_volume_attachment_update(new, old) == []


def test_volume_attachment_metadata_size_is_limited():
    new = volume_attachment()
    new["status"] = {"attached": True, "attachmentMetadata": {"k": "x" * 262144}}
    assert texts(validate_volume_attachment_update(new, volume_attachment())) == [
        "status.attachmentMetadata: Too long: may not be more than 262144 bytes"
    ]


# -- Pod ----------------------------------------------------------------------------------------------------


def test_pod_needs_containers():
    assert texts(validate_pod_spec({})) == ["spec.containers: Required value"]
    assert texts(validate_pod_spec({"containers": []})) == ["spec.containers: Required value"]


def test_pod_container_name_image_and_uniqueness():
    spec = {"containers": [{"name": "app", "image": "nginx"}, {"name": "app"}, {"name": "Side_car", "image": "x"}]}
    assert texts(validate_pod_spec(spec)) == [
        "spec.containers[1].image: Required value",
        'spec.containers[1].name: Duplicate value: "app"',
        f'spec.containers[2].name: Invalid value: "Side_car": {LABEL_MSG}',
    ]
    assert texts(validate_pod_spec({"containers": [{"image": "x"}]})) == ["spec.containers[0].name: Required value"]


def test_pod_restart_policy_and_grace_period():
    spec = {
        "containers": [{"name": "app", "image": "x"}],
        "restartPolicy": "Sometimes",
        "terminationGracePeriodSeconds": -5,
        "activeDeadlineSeconds": 0,
    }
    assert texts(validate_pod_spec(spec)) == [
        'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
        "spec.terminationGracePeriodSeconds: Invalid value: -5: must be greater than or equal to 0",
        "spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive",
    ]


def test_pod_spec_validation_under_a_template_path():
    assert texts(validate_pod_spec({}, "spec.template.spec")) == ["spec.template.spec.containers: Required value"]


POD_UPDATE_PREFIX = (
    "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing "
    "tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n"
)


def test_pod_image_update_is_allowed():
    new = pod()
    new["spec"]["containers"][0]["image"] = "nginx:1.28"
    new["spec"]["activeDeadlineSeconds"] = 60
    new["spec"]["tolerations"] = [{"key": "k", "operator": "Exists"}]
    assert validate_pod_update(new, pod()) == []


def test_pod_node_name_change_is_forbidden():
    new = pod()
    new["spec"]["nodeName"] = "node-1"
    (err,) = validate_pod_update(new, pod())
    assert str(err).startswith(POD_UPDATE_PREFIX)
    assert err.field == "spec"
    assert err.type == "FieldValueForbidden"


def test_pod_containers_may_not_be_added():
    new = pod()
    new["spec"]["containers"].append({"name": "side", "image": "busybox"})
    assert texts(validate_pod_update(new, pod())) == [
        "spec.containers: Forbidden: pod updates may not add or remove containers"
    ]


def test_pod_tolerations_may_only_be_added():
    old = pod()
    old["spec"]["tolerations"] = [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}]
    new = pod()
    new["spec"]["tolerations"] = [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 1}]
    assert validate_pod_update(new, old) == []
    new["spec"]["tolerations"] = []
    assert texts(validate_pod_update(new, old)) == [
        "spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"
    ]


def test_pod_active_deadline_may_only_shrink():
    old = pod()
    old["spec"]["activeDeadlineSeconds"] = 30
    new = pod()
    new["spec"]["activeDeadlineSeconds"] = 60
    assert texts(validate_pod_update(new, old)) == [
        "spec.activeDeadlineSeconds: Invalid value: 60: must be less than or equal to previous value"
    ]
    assert texts(validate_pod_update(pod(), old)) == [
        "spec.activeDeadlineSeconds: Invalid value: null: must not update from a positive integer to nil value"
    ]


def test_pod_grace_period_may_go_from_negative_to_one():
    old = pod()
    old["spec"]["terminationGracePeriodSeconds"] = -1
    new = pod()
    new["spec"]["terminationGracePeriodSeconds"] = 1
    assert validate_pod_update(new, old) == []


def test_pod_update_ignores_empty_versus_missing_fields():
    old = pod()
    new = pod()
    new["spec"]["volumes"] = []
    new["spec"]["nodeSelector"] = None
    assert validate_pod_update(new, old) == []


def test_pod_scheduling_gates_may_only_be_removed():
    old = pod()
    old["spec"]["schedulingGates"] = [{"name": "example.com/quota"}]
    new = pod()
    new["spec"]["schedulingGates"] = [{"name": "example.com/quota"}, {"name": "example.com/arch"}]
    assert texts(validate_pod_update(new, old)) == [
        (
            "spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new scheduling gate "
            "'example.com/arch'"
        )
    ]
    assert validate_pod_update(pod(), old) == []


def test_a_pod_spec_found_valid_is_checked_again_once_changed_and_errors_keep_their_path():
    spec = {"containers": [{"name": "app", "image": "nginx"}], "terminationGracePeriodSeconds": 30}
    assert validate_pod_spec(spec) == []
    assert validate_pod_spec(spec, "spec.template.spec") == []
    spec["terminationGracePeriodSeconds"] = -1
    assert texts(validate_pod_spec(spec)) == texts(validate_pod_spec(dict(spec)))
    assert texts(validate_pod_spec(spec, "spec.template.spec"))[0].startswith(
        "spec.template.spec.terminationGracePeriodSeconds: Invalid value: -1")
    # 30.0 prints apart from 30 and is no integer to the check: never taken for the spec remembered.
    assert validate_pod_spec({"containers": [{"name": "app", "image": "nginx"}], "terminationGracePeriodSeconds": 30}) \
        == []
    floated = {"containers": [{"name": "app", "image": "nginx"}], "terminationGracePeriodSeconds": 30.0}
    assert texts(validate_pod_spec(floated)) == texts(_validate_pod_spec(floated, "spec"))  # the unremembered check
