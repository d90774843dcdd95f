"""Behaviour of label and field selectors (parsing, validation, printing, matching)."""

from __future__ import annotations

from typing import Any

import pytest

from harness.kube import selectors
from harness.kube.errors import StatusError

LABELS = {"app": "web", "tier": "frontend", "env": "prod"}


def bad_request(fn: Any, *args: Any, **kwargs: Any) -> str:
    with pytest.raises(StatusError) as info:
        fn(*args, **kwargs)
    assert info.value.code == 400
    assert info.value.reason == "BadRequest"
    return info.value.message


# ---------------------------------------------------------------------------------------------
# Label selector strings
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("app=web", True),
        ("app==web", True),
        ("app=api", False),
        ("app!=api", True),
        ("app!=web", False),
        ("app in (api,web)", True),
        ("app in (api)", False),
        ("app notin (api)", True),
        ("app notin (web,api)", False),
        ("app", True),
        ("missing", False),
        ("!missing", True),
        ("!app", False),
    ],
)
def test_label_selector_operators(text: str, expected: bool) -> None:
    assert selectors.parse_label_selector(text).matches(LABELS) is expected


def test_label_selector_notin_matches_missing_key() -> None:
    assert selectors.parse_label_selector("zone notin (a,b)").matches(LABELS)


def test_label_selector_not_equals_matches_missing_key() -> None:
    assert selectors.parse_label_selector("zone!=a").matches(LABELS)


def test_label_selector_in_requires_the_key() -> None:
    assert not selectors.parse_label_selector("zone in (a,b)").matches(LABELS)


def test_label_selector_comma_is_and() -> None:
    assert selectors.parse_label_selector("app=web,tier=frontend").matches(LABELS)
    assert not selectors.parse_label_selector("app=web,tier=backend").matches(LABELS)


def test_label_selector_tolerates_whitespace() -> None:
    selector = selectors.parse_label_selector("  app = web ,\ttier in ( frontend , backend ) , !zone ")
    assert selector.matches(LABELS)
    assert str(selector) == "app=web,tier in (backend,frontend),!zone"


def test_label_selector_empty_string_matches_everything() -> None:
    selector = selectors.parse_label_selector("")
    assert selector.empty
    assert selector.matches({})
    assert selector.matches(None)
    assert str(selector) == ""


def test_label_selector_none_labels_are_empty() -> None:
    assert selectors.parse_label_selector("!app").matches(None)
    assert not selectors.parse_label_selector("app").matches(None)


def test_label_selector_string_form_is_sorted_by_key() -> None:
    selector = selectors.parse_label_selector("z=1,a in (c,b),m,!k,x notin (q)")
    assert str(selector) == "a in (b,c),!k,m,x notin (q),z=1"
    assert not selector.empty
    assert [r.key for r in selector.requirements] == ["a", "k", "m", "x", "z"]


def test_label_selector_double_equals_is_kept_in_string_form() -> None:
    assert str(selectors.parse_label_selector("a==b")) == "a==b"


def test_label_selector_empty_values_in_sets() -> None:
    selector = selectors.parse_label_selector("x in (foo,,baz),y,z notin ()")
    assert str(selector) == "x in (,baz,foo),y,z notin ()"
    assert selector.matches({"x": "", "y": "1"})
    assert not selector.matches({"x": "", "y": "1", "z": ""})


def test_label_selector_empty_exact_value() -> None:
    selector = selectors.parse_label_selector("a=,b!=")
    assert selector.matches({"a": "", "b": "x"})
    assert not selector.matches({"a": "x", "b": "x"})


def test_label_selector_keywords_are_values_after_an_operator() -> None:
    selector = selectors.parse_label_selector("mode in (in,notin),kind=notin")
    assert selector.matches({"mode": "in", "kind": "notin"})


def test_label_selector_greater_and_less_than() -> None:
    selector = selectors.parse_label_selector("replicas>2,weight<10")
    assert selector.matches({"replicas": "3", "weight": "9"})
    assert not selector.matches({"replicas": "2", "weight": "9"})
    assert not selector.matches({"replicas": "three", "weight": "9"})
    assert str(selector) == "replicas>2,weight<10"


def test_label_selector_prefixed_keys() -> None:
    selector = selectors.parse_label_selector("app.kubernetes.io/name=web")
    assert selector.matches({"app.kubernetes.io/name": "web"})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a in", "unable to parse requirement: found '' expected: '('"),
        ("a in (", "unable to parse requirement: found '', expected: ',', ')' or identifier"),
        ("a in (b", "unable to parse requirement: found '', expected: ',' or ')'"),
        ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
        ("a=b,", "found '', expected: identifier after ','"),
        (",a", "found ',', expected: !, identifier, or 'end of string'"),
        ("a=b c", "found 'c', expected: ',' or 'end of string'"),
        ("!a=b", "found '=', expected: ',' or 'end of string'"),
        ("a=(b)", "unable to parse requirement: found '(', expected: identifier"),
    ],
)
def test_label_selector_syntax_errors_are_400(text: str, message: str) -> None:
    assert bad_request(selectors.parse_label_selector, text) == message


def test_label_selector_invalid_key_is_400() -> None:
    message = bad_request(selectors.parse_label_selector, "bad_=x")
    assert message.startswith('unable to parse requirement: <nil>: Invalid value: "bad_": name part must consist of')
    assert "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'" in message


def test_label_selector_invalid_value_is_400() -> None:
    message = bad_request(selectors.parse_label_selector, "app=-web")
    assert message.startswith('unable to parse requirement: values[0][app]: Invalid value: "-web": a valid label must')


def test_label_selector_too_long_value_is_400() -> None:
    message = bad_request(selectors.parse_label_selector, "app=" + "a" * 64)
    assert "must be no more than 63 characters" in message


def test_label_selector_non_integer_gt_is_400() -> None:
    message = bad_request(selectors.parse_label_selector, "a>b")
    assert message == (
        'unable to parse requirement: values[0]: Invalid value: "b": '
        "for 'Gt', 'Lt' operators, the value must be an integer"
    )


# ---------------------------------------------------------------------------------------------
# metav1.LabelSelector
# ---------------------------------------------------------------------------------------------


def test_label_selector_from_none_is_none() -> None:
    assert selectors.label_selector_from_dict(None) is None


def test_label_selector_from_empty_dict_matches_everything() -> None:
    selector = selectors.label_selector_from_dict({})
    assert selector is not None
    assert selector.empty
    assert selector.matches({})
    assert selector.matches(LABELS)


def test_label_selector_from_dict_with_empty_terms_matches_everything() -> None:
    selector = selectors.label_selector_from_dict({"matchLabels": {}, "matchExpressions": []})
    assert selector is not None and selector.empty


def test_label_selector_from_dict_combines_labels_and_expressions() -> None:
    selector = selectors.label_selector_from_dict(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["frontend", "edge"]},
                {"key": "env", "operator": "NotIn", "values": ["dev"]},
                {"key": "env", "operator": "Exists"},
                {"key": "canary", "operator": "DoesNotExist"},
            ],
        }
    )
    assert selector is not None
    assert selector.matches(LABELS)
    assert not selector.matches({**LABELS, "canary": "true"})
    assert not selector.matches({**LABELS, "tier": "backend"})
    assert str(selector) == "app=web,!canary,env notin (dev),env,tier in (edge,frontend)"


def test_label_selector_from_dict_bad_operator_raises_value_error() -> None:
    with pytest.raises(ValueError, match='^"Foo" is not a valid label selector operator$'):
        selectors.label_selector_from_dict({"matchExpressions": [{"key": "a", "operator": "Foo"}]})


def test_label_selector_from_dict_exists_with_values_raises() -> None:
    with pytest.raises(ValueError) as info:
        selectors.label_selector_from_dict({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]})
    assert str(info.value) == (
        'values: Invalid value: []string{"x"}: values set must be empty for exists and does not exist'
    )


def test_label_selector_from_dict_in_without_values_raises() -> None:
    with pytest.raises(ValueError) as info:
        selectors.label_selector_from_dict({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]})
    assert str(info.value) == (
        "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty"
    )


def test_label_selector_from_dict_invalid_label_value_raises() -> None:
    with pytest.raises(ValueError, match=r'^values\[0\]\[app\]: Invalid value: "a b": '):
        selectors.label_selector_from_dict({"matchLabels": {"app": "a b"}})


def test_label_selector_from_dict_invalid_key_raises() -> None:
    with pytest.raises(ValueError, match='^key: Invalid value: "a/b/c": a qualified name must consist'):
        selectors.label_selector_from_dict({"matchExpressions": [{"key": "a/b/c", "operator": "Exists"}]})


def test_label_selector_from_dict_collects_several_errors() -> None:
    with pytest.raises(ValueError) as info:
        selectors.label_selector_from_dict({"matchExpressions": [{"key": "-", "operator": "In", "values": []}]})
    message = str(info.value)
    assert message.startswith('[key: Invalid value: "-"')
    assert message.endswith("values set can't be empty]")


# ---------------------------------------------------------------------------------------------
# Field selectors
# ---------------------------------------------------------------------------------------------


def test_field_selector_parses_and_sorts_terms() -> None:
    selector = selectors.parse_field_selector("status.phase!=Running,spec.nodeName==n1,metadata.name=a")
    assert selector.requirements == (
        ("metadata.name", "=", "a"),
        ("spec.nodeName", "=", "n1"),
        ("status.phase", "!=", "Running"),
    )
    assert selector.fields() == {"metadata.name", "spec.nodeName", "status.phase"}
    assert str(selector) == "metadata.name=a,spec.nodeName=n1,status.phase!=Running"


def test_field_selector_matches_equality_and_inequality() -> None:
    selector = selectors.parse_field_selector("spec.nodeName=n1,status.phase!=Succeeded")
    assert selector.matches({"spec.nodeName": "n1", "status.phase": "Running"})
    assert not selector.matches({"spec.nodeName": "n2", "status.phase": "Running"})
    assert not selector.matches({"spec.nodeName": "n1", "status.phase": "Succeeded"})


def test_field_selector_missing_field_reads_empty() -> None:
    assert selectors.parse_field_selector("spec.nodeName=").matches({})
    assert selectors.parse_field_selector("spec.nodeName!=n1").matches({})
    assert not selectors.parse_field_selector("spec.nodeName=n1").matches({})


def test_field_selector_empty_string_and_empty_terms() -> None:
    assert selectors.parse_field_selector("").empty
    assert selectors.parse_field_selector(",,metadata.name=a,").requirements == (("metadata.name", "=", "a"),)


def test_field_selector_escapes() -> None:
    selector = selectors.parse_field_selector(r"metadata.name=a\,b\=c\\d")
    assert selector.requirements == (("metadata.name", "=", "a,b=c\\d"),)
    assert str(selector) == r"metadata.name=a\,b\=c\\d"
    assert selector.matches({"metadata.name": "a,b=c\\d"})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("metadata.name", "invalid selector: 'metadata.name'; can't understand 'metadata.name'"),
        ("a=b,c", "invalid selector: 'a=b,c'; can't understand 'c'"),
        ("a=b=c", "invalid field selector: unescaped character in value: 61"),
        (r"a=b\q", r"invalid field selector: invalid escape sequence: \q"),
        ("a=b\\", "invalid field selector: invalid escape sequence: \\"),
    ],
)
def test_field_selector_bad_syntax_is_400(text: str, message: str) -> None:
    assert bad_request(selectors.parse_field_selector, text) == message


def test_field_selector_rejects_unsupported_label() -> None:
    message = bad_request(selectors.check_field_selector, "Pod", selectors.parse_field_selector("spec.foo=bar"))
    assert message == "field label not supported: spec.foo"


@pytest.mark.parametrize("field", ["metadata.name", "metadata.namespace", *selectors.FIELD_SELECTORS["Pod"]])
def test_field_selector_accepts_every_pod_field(field: str) -> None:
    selectors.check_field_selector("Pod", selectors.parse_field_selector(f"{field}=x"))


@pytest.mark.parametrize(
    ("kind", "field"),
    [("Node", "spec.unschedulable"), ("Event", "involvedObject.uid"), ("Event", "reportingComponent"),
     ("Secret", "type"), ("Service", "spec.clusterIP"), ("Namespace", "status.phase"), ("Job", "status.successful"),
     ("ReplicationController", "status.replicas"), ("Deployment", "metadata.namespace")],
)
def test_field_selector_accepts_kind_fields(kind: str, field: str) -> None:
    selectors.check_field_selector(kind, selectors.parse_field_selector(f"{field}=x"))


def test_node_and_namespace_reject_metadata_namespace() -> None:
    for kind in ("Node", "Namespace"):
        selector = selectors.parse_field_selector("metadata.namespace=a")
        message = bad_request(selectors.check_field_selector, kind, selector)
        assert message == "field label not supported: metadata.namespace"


def test_replicaset_status_replicas_is_not_selectable_in_apps_v1() -> None:
    selector = selectors.parse_field_selector("status.replicas=0")
    message = bad_request(selectors.check_field_selector, "ReplicaSet", selector)
    assert message == '"status.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"'


def test_job_rejection_names_the_kind() -> None:
    message = bad_request(selectors.check_field_selector, "Job", selectors.parse_field_selector("spec.x=1"))
    assert message == 'field label "spec.x" not supported for Job'


def test_custom_resource_selects_metadata_and_selectable_fields() -> None:
    selector = selectors.parse_field_selector("metadata.namespace=a,spec.color=red")
    message = bad_request(selectors.check_field_selector, "", selector)
    assert message == "field label not supported: spec.color"
    selectors.check_field_selector("", selector, extra=(".spec.color",))
    selectors.check_field_selector("Widget", selector, extra=("spec.color",))


def test_cluster_scoped_custom_resource_rejects_namespace() -> None:
    selector = selectors.parse_field_selector("metadata.namespace=")
    message = bad_request(selectors.check_field_selector, "", selector, namespaced=False)
    assert message == "field label not supported: metadata.namespace"


# ---------------------------------------------------------------------------------------------
# Selectable field values
# ---------------------------------------------------------------------------------------------


def test_object_fields_pod() -> None:
    obj = {
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"nodeName": "n1", "restartPolicy": "Always", "schedulerName": "default-scheduler",
                 "serviceAccountName": "sa", "hostNetwork": True},
        "status": {"phase": "Running", "podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}],
                   "nominatedNodeName": "n2"},
    }
    assert selectors.object_fields("Pod", obj) == {
        "metadata.name": "p",
        "metadata.namespace": "ns",
        "spec.nodeName": "n1",
        "spec.host": "n1",
        "spec.restartPolicy": "Always",
        "spec.schedulerName": "default-scheduler",
        "spec.serviceAccountName": "sa",
        "spec.hostNetwork": "true",
        "status.phase": "Running",
        "status.podIP": "10.0.0.1",
        "status.podIPs": "",
        "status.nominatedNodeName": "n2",
    }


def test_object_fields_pod_defaults() -> None:
    fields = selectors.object_fields("Pod", {"metadata": {"name": "p"}, "spec": {"serviceAccount": "old"}})
    assert fields["spec.hostNetwork"] == "false"
    assert fields["spec.nodeName"] == ""
    assert fields["metadata.namespace"] == ""
    assert fields["status.podIP"] == ""
    assert fields["spec.serviceAccountName"] == "old"


def test_object_fields_pod_ip_prefers_pod_ips() -> None:
    status = {"podIP": "10.0.0.9", "podIPs": [{"ip": "10.0.0.1"}]}
    assert selectors.object_fields("Pod", {"status": status})["status.podIP"] == "10.0.0.1"
    assert selectors.object_fields("Pod", {"status": {"podIP": "10.0.0.9"}})["status.podIP"] == "10.0.0.9"


def test_spec_host_alias_selects_by_node_name() -> None:
    selector = selectors.parse_field_selector("spec.host=n1")
    selectors.check_field_selector("Pod", selector)
    assert selector.matches(selectors.object_fields("Pod", {"spec": {"nodeName": "n1"}}))


def test_object_fields_node_unschedulable() -> None:
    assert selectors.object_fields("Node", {"spec": {"unschedulable": True}})["spec.unschedulable"] == "true"
    assert selectors.object_fields("Node", {"spec": {}})["spec.unschedulable"] == "false"
    uncordoned = selectors.parse_field_selector("spec.unschedulable=false")
    assert uncordoned.matches(selectors.object_fields("Node", {"metadata": {"name": "n"}}))


def test_object_fields_event() -> None:
    event = {
        "metadata": {"name": "e", "namespace": "ns"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "ns", "uid": "u", "apiVersion": "v1",
                           "resourceVersion": "5", "fieldPath": "spec.containers{c}"},
        "reason": "Evicted",
        "type": "Warning",
        "reportingComponent": "kubelet",
    }
    fields = selectors.object_fields("Event", event)
    assert fields["involvedObject.uid"] == "u"
    assert fields["involvedObject.fieldPath"] == "spec.containers{c}"
    assert fields["reason"] == "Evicted"
    assert fields["type"] == "Warning"
    assert fields["source"] == "kubelet"
    event["source"] = {"component": "scheduler"}
    assert selectors.object_fields("Event", event)["source"] == "scheduler"


def test_object_fields_counters_default_to_zero() -> None:
    assert selectors.object_fields("Job", {"status": {}})["status.successful"] == "0"
    assert selectors.object_fields("Job", {"status": {"succeeded": 3}})["status.successful"] == "3"
    assert selectors.object_fields("ReplicationController", {})["status.replicas"] == "0"


def test_object_fields_simple_kinds() -> None:
    assert selectors.object_fields("Secret", {"type": "Opaque"})["type"] == "Opaque"
    service = selectors.object_fields("Service", {"spec": {"clusterIP": "None", "type": "ClusterIP"}})
    assert (service["spec.clusterIP"], service["spec.type"]) == ("None", "ClusterIP")
    assert selectors.object_fields("Namespace", {"status": {"phase": "Terminating"}})["status.phase"] == "Terminating"


def test_object_fields_extra_paths_for_custom_resources() -> None:
    obj = {"metadata": {"name": "w"}, "spec": {"color": "red", "size": 3, "enabled": False}}
    fields = selectors.object_fields("", obj, extra=(".spec.color", "spec.size", ".spec.enabled", ".spec.missing"))
    assert fields == {"metadata.name": "w", "metadata.namespace": "", "spec.color": "red", "spec.size": "3",
                      "spec.enabled": "false", "spec.missing": ""}
