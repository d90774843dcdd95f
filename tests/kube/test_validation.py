"""Generic field validation (harness/kube/validation.py): every test pins the exact kube-apiserver 1.32 message text."""

from __future__ import annotations

from harness.kube.validation import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
    validate_annotations,
    validate_finalizers,
    validate_labels,
    validate_namespace_name,
    validate_object_meta,
    validate_object_meta_update,
    validate_owner_references,
)
from tests.validation_messages import DNS1035_MSG, LABEL_MSG, LABEL_VALUE_MSG, NAME_PART_MSG, SUBDOMAIN_MSG, pod, texts

# -- string-level checks ------------------------------------------------------------------------------


def test_subdomain_message_matches_upstream_regex_error():
    assert is_dns1123_subdomain("Foo_bar") == [SUBDOMAIN_MSG]
    assert is_dns1123_subdomain("a.b-c.d") == []


def test_subdomain_longer_than_253_gets_both_messages():
    assert is_dns1123_subdomain("a" * 254) == ["must be no more than 253 characters"]
    assert is_dns1123_subdomain("a" * 254 + "-") == ["must be no more than 253 characters", SUBDOMAIN_MSG]


def test_label_with_dots_says_must_not_contain_dots():
    assert is_dns1123_label("a.b") == ["must not contain dots"]
    assert is_dns1123_label("-a") == [LABEL_MSG]


def test_qualified_name_reports_prefix_and_name_parts():
    assert is_qualified_name("example.com/my-key") == []
    assert is_qualified_name("/x") == ["prefix part must be non-empty"]
    assert is_qualified_name("example.com/") == ["name part must be non-empty", NAME_PART_MSG]
    assert is_qualified_name("a" * 64) == ["name part must be no more than 63 characters"]
    assert is_qualified_name("Bad_/x") == ["prefix part " + SUBDOMAIN_MSG]


def test_qualified_name_with_two_slashes_is_one_message():
    assert is_qualified_name("a/b/c") == [
        (
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
            "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. "
            "'example.com/MyName')"
        )
    ]


def test_label_value_may_be_empty_but_not_end_with_a_dash():
    assert is_valid_label_value("") == []
    assert is_valid_label_value("v1-") == [LABEL_VALUE_MSG]


def test_trailing_newline_is_not_accepted():
    # Go's `$` is end of text; Python's would also match before a final newline.
    assert is_dns1123_label("abc\n") == [LABEL_MSG]


# -- metadata --------------------------------------------------------------------------------------------


def test_name_is_required_without_generate_name():
    obj = pod(name="")
    assert texts(validate_object_meta(obj, namespaced=True)) == [
        "metadata.name: Required value: name or generateName is required"
    ]


def test_generate_name_only_is_enough():
    obj = pod(name="")
    obj["metadata"]["generateName"] = "web-"
    assert validate_object_meta(obj, namespaced=True) == []


def test_generate_name_prefix_is_checked_with_its_trailing_dash_masked():
    obj = pod(name="")
    obj["metadata"]["generateName"] = "Web-"
    assert texts(validate_object_meta(obj, namespaced=True)) == [
        f'metadata.generateName: Invalid value: "Web-": {SUBDOMAIN_MSG}'
    ]


def test_invalid_name_by_rule():
    ns = {"metadata": {"name": "team.a"}}
    assert texts(validate_object_meta(ns, namespaced=False, name_rule="label")) == [
        'metadata.name: Invalid value: "team.a": must not contain dots'
    ]
    svc = {"metadata": {"name": "1web", "namespace": "default"}}
    assert texts(validate_object_meta(svc, namespaced=True, name_rule="label1035")) == [
        f'metadata.name: Invalid value: "1web": {DNS1035_MSG}'
    ]
    assert texts(validate_object_meta({"metadata": {"name": ".."}}, namespaced=False, name_rule="path")) == [
        "metadata.name: Invalid value: \"..\": may not be '..'"
    ]
    assert texts(validate_object_meta({"metadata": {"name": "a/b%c"}}, namespaced=False, name_rule="path")) == [
        "metadata.name: Invalid value: \"a/b%c\": may not contain '/'",
        "metadata.name: Invalid value: \"a/b%c\": may not contain '%'",
    ]


def test_namespace_required_or_forbidden_by_scope():
    assert texts(validate_object_meta(pod(namespace=""), namespaced=True)) == ["metadata.namespace: Required value"]
    node = {"metadata": {"name": "node-1", "namespace": "default"}}
    assert texts(validate_object_meta(node, namespaced=False)) == [
        "metadata.namespace: Forbidden: not allowed on this type"
    ]


def test_bad_label_key_and_value_are_reported_at_metadata_labels():
    obj = pod(labels={"app/": "web", "tier": "front-"})
    assert texts(validate_object_meta(obj, namespaced=True)) == [
        'metadata.labels: Invalid value: "app/": name part must be non-empty',
        f'metadata.labels: Invalid value: "app/": {NAME_PART_MSG}',
        f'metadata.labels: Invalid value: "front-": {LABEL_VALUE_MSG}',
    ]


def test_validate_labels_usable_for_template_labels():
    assert texts(validate_labels({"a": "b c"}, "spec.template.metadata.labels")) == [
        f'spec.template.metadata.labels: Invalid value: "b c": {LABEL_VALUE_MSG}'
    ]


def test_uppercase_annotation_prefix_is_accepted():
    assert validate_annotations({"Example.COM/Owner": "me"}, "metadata.annotations") == []
    # the same key is not a valid label key
    assert texts(validate_labels({"Example.COM/Owner": "me"}, "metadata.labels")) == [
        f'metadata.labels: Invalid value: "Example.COM/Owner": prefix part {SUBDOMAIN_MSG}'
    ]


def test_bad_annotation_key_reports_the_original_key():
    assert texts(validate_annotations({"Bad Key": "x"}, "metadata.annotations")) == [
        f'metadata.annotations: Invalid value: "Bad Key": {NAME_PART_MSG}'
    ]


def test_annotation_total_size_uses_the_1_32_wording():
    big = {"a": "x" * 262143}  # exactly 262144 bytes: allowed
    assert validate_annotations(big, "metadata.annotations") == []
    bigger = {"a": "x" * 262144}
    errs = validate_annotations(bigger, "metadata.annotations")
    assert texts(errs) == ["metadata.annotations: Too long: may not be more than 262144 bytes"]
    assert errs[0].cause() == {
        "reason": "FieldValueTooLong",
        "message": "Too long: may not be more than 262144 bytes",
        "field": "metadata.annotations",
    }


def test_annotation_size_counts_utf8_bytes():
    assert texts(validate_annotations({"a": "é" * 131072}, "metadata.annotations")) == [
        "metadata.annotations: Too long: may not be more than 262144 bytes"
    ]


def test_finalizers_must_be_qualified_and_not_both_orphan_and_foreground():
    obj = pod(finalizers=["example.com/x", "bad name", "orphan", "foregroundDeletion"])
    assert texts(validate_object_meta(obj, namespaced=True)) == [
        f'metadata.finalizers: Invalid value: "bad name": {NAME_PART_MSG}',
        (
            'metadata.finalizers: Invalid value: '
            '[]string{"example.com/x", "bad name", "orphan", "foregroundDeletion"}: '
            "finalizer orphan and foregroundDeletion cannot be both set"
        ),
    ]


def test_unqualified_finalizer_without_slash_is_accepted_in_metadata():
    assert validate_object_meta(pod(finalizers=["my-finalizer"]), namespaced=True) == []


def test_owner_reference_fields_are_required():
    obj = pod(ownerReferences=[{"apiVersion": "apps/", "kind": "", "name": "", "uid": ""}])
    assert texts(validate_object_meta(obj, namespaced=True)) == [
        'metadata.ownerReferences.apiVersion: Invalid value: "apps/": version must not be empty',
        'metadata.ownerReferences.kind: Invalid value: "": kind must not be empty',
        'metadata.ownerReferences.name: Invalid value: "": name must not be empty',
        'metadata.ownerReferences.uid: Invalid value: "": uid must not be empty',
    ]


def test_only_one_owner_reference_may_be_controller():
    refs = [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs-1", "uid": "u1", "controller": True},
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "ss-1", "uid": "u2", "controller": True},
    ]
    errs = validate_object_meta(pod(ownerReferences=refs), namespaced=True)
    assert len(errs) == 1
    assert errs[0].field == "metadata.ownerReferences"
    assert str(errs[0]).endswith(
        ': Only one reference can have Controller set to true. Found "true" in references for ReplicaSet/rs-1 '
        "and StatefulSet/ss-1"
    )


def test_event_may_not_be_an_owner():
    ref = {"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "u"}
    (err,) = validate_object_meta(pod(ownerReferences=[ref]), namespaced=True)
    assert str(err).endswith(": /v1, Kind=Event is disallowed from being an owner")


def test_negative_generation_is_invalid():
    assert texts(validate_object_meta(pod(generation=-1), namespaced=True)) == [
        "metadata.generation: Invalid value: -1: must be greater than or equal to 0"
    ]


def test_namespace_name_is_a_dns_label():
    assert texts(validate_namespace_name("Team")) == [f'metadata.name: Invalid value: "Team": {LABEL_MSG}']
    assert validate_namespace_name("team-a") == []


# -- metadata updates ---------------------------------------------------------------------------------


def test_name_namespace_and_uid_are_immutable():
    old = pod(uid="u-1")
    new = pod(name="web2", namespace="other", uid="u-2")
    assert texts(validate_object_meta_update(new, old)) == [
        'metadata.name: Invalid value: "web2": field is immutable',
        'metadata.namespace: Invalid value: "other": field is immutable',
        'metadata.uid: Invalid value: "u-2": field is immutable',
    ]


def test_omitted_uid_and_creation_timestamp_count_as_copied_from_storage():
    old = pod(uid="u-1", creationTimestamp="2024-01-01T00:00:00Z")
    assert validate_object_meta_update(pod(), old) == []
    assert validate_object_meta_update(pod(creationTimestamp="2025-01-01T00:00:00Z"), old) == []


def test_deletion_timestamp_cannot_be_set_by_an_update():
    new = pod(deletionTimestamp="2024-05-06T07:08:09Z")
    assert texts(validate_object_meta_update(new, pod())) == [
        "metadata.deletionTimestamp: Invalid value: 2024-05-06 07:08:09 +0000 UTC: field is immutable"
    ]


def test_no_new_finalizers_while_deleting():
    old = pod(deletionTimestamp="2024-05-06T07:08:09Z", finalizers=["a.io/keep"])
    new = pod(deletionTimestamp="2024-05-06T07:08:09Z", finalizers=["a.io/keep", "x"])
    assert texts(validate_object_meta_update(new, old)) == [
        (
            "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, "
            'found new finalizers []string{"x"}'
        )
    ]
    # removing finalizers is fine
    assert validate_object_meta_update(pod(deletionTimestamp="2024-05-06T07:08:09Z"), old) == []


def test_generation_must_not_be_decremented():
    assert texts(validate_object_meta_update(pod(generation=1), pod(generation=2))) == [
        "metadata.generation: Invalid value: 1: must not be decremented"
    ]


def test_update_still_validates_labels_and_annotations():
    new = pod(labels={"a": "-"}, annotations={"k": "x" * 262144})
    assert texts(validate_object_meta_update(new, pod())) == [
        f'metadata.labels: Invalid value: "-": {LABEL_VALUE_MSG}',
        "metadata.annotations: Too long: may not be more than 262144 bytes",
    ]


def test_a_remembered_check_gives_each_caller_its_own_list() -> None:
    # The string checks remember their answers: a caller that extends the list it got must not
    # change what the next caller of the same check is told.
    first = is_qualified_name("-bad-")
    first.append("mine")
    assert "mine" not in is_qualified_name("-bad-")
    assert is_qualified_name("-bad-") == first[:-1]
    assert is_valid_label_value("ok") == []


# -- metadata parts found valid are remembered (a write that keeps them checks them once) ----------------


def test_labels_found_valid_and_then_changed_in_place_are_checked_again():
    labels = {"app": "web"}
    assert validate_labels(labels, "metadata.labels") == []
    labels["app"] = "b c"
    fresh = texts(validate_labels({"app": "b c"}, "metadata.labels"))
    assert texts(validate_labels(labels, "metadata.labels")) == fresh
    assert texts(validate_labels(labels, "metadata.labels")) != []


def test_invalid_metadata_parts_give_the_same_errors_each_time_at_the_path_asked():
    refs = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "", "uid": "u1"}]
    first = texts(validate_owner_references(refs))
    assert first and first == texts(validate_owner_references(refs))
    assert all(text.startswith("metadata.ownerReferences.name") for text in first)
    assert texts(validate_labels({"a": "b c"}, "spec.selector.matchLabels")) == texts(
        validate_labels({"a": "b c"}, "spec.selector.matchLabels"))
    assert texts(validate_labels({"a": "b c"}, "spec.selector.matchLabels"))[0].startswith("spec.selector")


def test_a_value_remembered_valid_does_not_stand_for_one_that_prints_alike_but_differs():
    valid = {"orphan": ["orphan"]}["orphan"]
    assert validate_finalizers(valid) == []
    both = ["orphan", "foregroundDeletion"]
    assert validate_finalizers(both) != []
    # A tuple prints as the list it is not (and is no list to the check): never taken for the list.
    assert validate_finalizers(tuple(both)) == []
    assert validate_finalizers(both) != []
    refs = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "a", "uid": "u", "controller": True},
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "b", "uid": "v", "controller": True}]
    assert texts(validate_owner_references(refs)) != []
    one_is_true = [dict(refs[0]), dict(refs[1], controller=1)]  # 1 == True in Python, not in JSON
    assert validate_owner_references(one_is_true) == []
    assert texts(validate_owner_references(refs)) != []
