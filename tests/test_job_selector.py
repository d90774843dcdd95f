"""API_VALID_008/009: a Job's generated selector and template labels, and the 422 upstream answers
when the Job's name cannot be a label value (kube-apiserver 1.32: the Job strategy's
``generateSelector`` runs in PrepareForCreate, before ``ValidateJob``)."""

from __future__ import annotations

from typing import Any

import pytest

from harness.apiserver import builtins
from harness.apiserver.server import APIServer
from harness.clock import VirtualClock
from harness.kube.errors import StatusError

JOB = builtins.JOB
LONGEST = "j" * 63
TOO_LONG = "j" * 64
TOO_LONG_MSG = "must be no more than 63 characters"


def _job(name: str, **spec: Any) -> dict[str, Any]:
    template = spec.pop("template", {"spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    return {"metadata": {"name": name}, "spec": {"template": template, **spec}}


def _refusal(server: APIServer, body: dict[str, Any]) -> dict[str, Any]:
    with pytest.raises(StatusError) as refused:
        server.create(JOB, "default", body)
    return refused.value.status


def test_api_valid_008_a_created_job_selects_its_pods_by_uid_and_labels_its_template_with_name_and_uid() -> None:
    server = APIServer("test", VirtualClock())
    created = server.create(JOB, "default", _job(LONGEST))
    uid = created["metadata"]["uid"]
    assert created["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert created["spec"]["template"]["metadata"]["labels"] == {
        "batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": LONGEST,
        "controller-uid": uid, "job-name": LONGEST,
    }


def test_api_valid_008_labels_the_user_set_are_kept_beside_the_generated_ones() -> None:
    server = APIServer("test", VirtualClock())
    body = _job("j", template={"metadata": {"labels": {"app": "x"}},
                               "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    created = server.create(JOB, "default", body)
    assert created["spec"]["template"]["metadata"]["labels"]["app"] == "x"
    assert created["spec"]["template"]["metadata"]["labels"]["job-name"] == "j"


def test_api_valid_009_a_selector_of_its_own_without_manual_selector_is_refused_as_not_auto_generated() -> None:
    # The uid term is added, but the user's term does not select the generated labels.
    server = APIServer("test", VirtualClock())
    status = _refusal(server, _job("j", selector={"matchLabels": {"app": "x"}}))
    assert [c["field"] for c in status["details"]["causes"]] == ["spec.selector", "spec.template.metadata.labels"]
    assert status["details"]["causes"][0]["message"].endswith("`selector` not auto-generated")


def test_api_valid_008_a_job_name_over_63_characters_is_refused_on_the_template_labels_and_nothing_is_written() -> None:
    server = APIServer("test", VirtualClock())
    before = server.store._rv  # the counter: a refused write must not move it
    status = _refusal(server, _job(TOO_LONG))
    assert status["code"] == 422 and status["reason"] == "Invalid"
    assert status["message"] == (
        f'Job.batch "{TOO_LONG}" is invalid: spec.template.labels: Invalid value: "{TOO_LONG}": {TOO_LONG_MSG}')
    assert status["details"]["kind"] == "Job" and status["details"]["group"] == "batch"
    assert status["details"]["name"] == TOO_LONG
    # One cause per generated name label (job-name and batch.kubernetes.io/job-name), as upstream lists them.
    assert status["details"]["causes"] == [
        {"reason": "FieldValueInvalid", "message": f'Invalid value: "{TOO_LONG}": {TOO_LONG_MSG}',
         "field": "spec.template.labels"},
    ] * 2
    assert server.list(JOB, "default")["items"] == []
    assert server.store._rv == before


def test_api_valid_008_a_long_generate_name_is_refused_too() -> None:
    server = APIServer("test", VirtualClock())
    status = _refusal(server, {"metadata": {"generateName": "j" * 60},
                               "spec": _job("x")["spec"]})
    assert status["code"] == 422
    assert {c["field"] for c in status["details"]["causes"]} == {"spec.template.labels"}


def test_api_valid_009_manual_selector_generates_nothing_and_requires_a_matching_selector() -> None:
    server = APIServer("test", VirtualClock())
    template = {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    created = server.create(JOB, "default", _job(TOO_LONG, manualSelector=True, template=template,
                                                 selector={"matchLabels": {"app": "x"}}))
    assert created["spec"]["selector"] == {"matchLabels": {"app": "x"}}
    assert created["spec"]["template"]["metadata"]["labels"] == {"app": "x"}
    missing = _refusal(server, _job("m1", manualSelector=True, template=template))
    assert missing["details"]["causes"] == [{"reason": "FieldValueRequired", "message": "Required value",
                                             "field": "spec.selector"}]
    other = _refusal(server, _job("m2", manualSelector=True, template=template,
                                  selector={"matchLabels": {"app": "y"}}))
    assert other["details"]["causes"] == [{
        "reason": "FieldValueInvalid", "field": "spec.template.metadata.labels",
        "message": 'Invalid value: map[string]string{"app":"x"}: `selector` does not match template `labels`'}]


def test_api_valid_009_a_generated_selector_the_user_changed_is_refused_as_not_auto_generated() -> None:
    server = APIServer("test", VirtualClock())
    status = _refusal(server, _job("j", selector={"matchLabels": {"batch.kubernetes.io/controller-uid": "wrong"}}))
    fields = [(c["field"], c["message"]) for c in status["details"]["causes"]]
    assert ("spec.selector", 'Invalid value: &v1.LabelSelector{MatchLabels:map[string]string'
            '{"batch.kubernetes.io/controller-uid":"wrong"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: '
            "`selector` not auto-generated") in fields
