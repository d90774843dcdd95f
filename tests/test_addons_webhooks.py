"""ClusterProfile validation: upstream's enum for stopMatchingBehavior, seed 003's for clusterDeletionBehavior."""

from __future__ import annotations

from controllers.addons.webhooks import validate_cluster_profile


def _profile(**spec: object) -> dict[str, object]:
    return {"metadata": {"name": "p"}, "spec": spec}


def test_the_seeds_stop_matching_value_remove_policies_is_refused() -> None:
    errs = validate_cluster_profile(_profile(stopMatchingBehavior="RemovePolicies"))
    assert [e.field for e in errs] == ["spec.stopMatchingBehavior"]


def test_the_three_cluster_deletion_behaviors_are_accepted_and_others_refused() -> None:
    for value in ("LeavePolicies", "RemovePolicies", "EnforceRemovePolicies"):
        assert validate_cluster_profile(_profile(clusterDeletionBehavior=value)) == []
    assert [e.field for e in validate_cluster_profile(_profile(clusterDeletionBehavior="Orphan"))] == [
        "spec.clusterDeletionBehavior"]


def test_a_profile_depending_on_itself_or_twice_on_one_profile_is_refused() -> None:
    errs = validate_cluster_profile(_profile(dependsOn=["p", "a", "a"]))
    assert [e.field for e in errs] == ["spec.dependsOn[0]", "spec.dependsOn[2]"]


def test_policy_refs_must_name_a_configmap_or_secret() -> None:
    errs = validate_cluster_profile(_profile(policyRefs=[{"kind": "Deployment", "name": "x"}, {"kind": "Secret"}]))
    assert [e.field for e in errs] == ["spec.policyRefs[0].kind", "spec.policyRefs[1].name"]


def test_the_seeds_examples_are_refused_for_stop_matching_behavior_only() -> None:
    for deletion in ("RemovePolicies", "EnforceRemovePolicies"):
        errs = validate_cluster_profile(_profile(clusterSelector={"matchLabels": {"env": "prod"}},
                                                 stopMatchingBehavior="RemovePolicies",
                                                 clusterDeletionBehavior=deletion))
        assert [(e.field, e.type) for e in errs] == [("spec.stopMatchingBehavior", "FieldValueNotSupported")]
        assert errs[0].detail == 'supported values: "WithdrawPolicies", "LeavePolicies"'
