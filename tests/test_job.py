"""Behaviour of the Job controller simulator: pods from the template, outcome knobs, 1.32 status and conditions."""

from __future__ import annotations

from typing import Any

from harness.client import InProcessClient
from harness.kube.names.core import DEFAULT_NAMESPACE
from harness.world.world import World

SIMULATORS = ["scheduler", "kubelet", "job"]


def make_world() -> tuple[World, InProcessClient]:
    world = World(simulators=SIMULATORS)
    client = world.client()
    client.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    world.settle()
    return world, client


def make_job(client: InProcessClient, *, result: str | None = None, duration: str | None = None,
             **spec: Any) -> dict[str, Any]:
    annotations = {}
    if result is not None:
        annotations["harness.test/job-result"] = result
    if duration is not None:
        annotations["harness.test/job-duration"] = duration
    template = {"metadata": {"annotations": annotations},
                "spec": {"containers": [{"name": "hook", "image": "busybox"}], "terminationGracePeriodSeconds": 5}}
    return client.create(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "j", "namespace": DEFAULT_NAMESPACE},
            "spec": {"template": template, **spec},
        }
    )


def status(client: InProcessClient) -> dict[str, Any]:
    return client.get("batch/v1", "Job", "j", DEFAULT_NAMESPACE).get("status") or {}


def condition_types(client: InProcessClient) -> list[str]:
    return [c["type"] for c in status(client).get("conditions") or []]


def condition(client: InProcessClient, condition_type: str) -> dict[str, Any]:
    return next(c for c in status(client)["conditions"] if c["type"] == condition_type)


def job_pods(client: InProcessClient) -> list[dict[str, Any]]:
    return client.list("v1", "Pod", DEFAULT_NAMESPACE, label_selector="batch.kubernetes.io/job-name=j")["items"]


def test_job_pod_is_created_from_the_template_with_the_outcome_knobs() -> None:
    world, client = make_world()
    job = make_job(client, duration="90s")
    world.settle()
    (pod,) = job_pods(client)
    meta = pod["metadata"]
    assert meta["generateName"] == "j-"
    assert meta["finalizers"] == ["batch.kubernetes.io/job-tracking"]
    assert meta["ownerReferences"][0]["uid"] == job["metadata"]["uid"]
    assert meta["ownerReferences"][0]["controller"] is True
    assert meta["annotations"]["harness.test/run-seconds"] == "1m30s"  # written as Go prints a Duration
    assert meta["annotations"]["harness.test/exit-code"] == "0"
    assert pod["spec"]["restartPolicy"] == "Never"
    assert status(client) == {"startTime": "2026-01-01T00:00:00Z", "active": 1, "ready": 1, "terminating": 0,
                              "uncountedTerminatedPods": {}}


def test_job_succeeds_after_its_duration_with_1_32_conditions() -> None:
    world, client = make_world()
    make_job(client, duration="2m")
    world.advance(119)
    assert condition_types(client) == []
    world.advance(1)
    final = status(client)
    assert condition_types(client) == ["SuccessCriteriaMet", "Complete"]
    for condition_type in ("SuccessCriteriaMet", "Complete"):
        cond = condition(client, condition_type)
        assert (cond["status"], cond["reason"], cond["message"]) == (
            "True", "CompletionsReached", "Reached expected number of succeeded pods")
        assert cond["lastTransitionTime"] == cond["lastProbeTime"] == "2026-01-01T00:02:00Z"
    assert final["succeeded"] == 1 and final["completionTime"] == "2026-01-01T00:02:00Z"
    assert "active" not in final and final["uncountedTerminatedPods"] == {}
    assert [p["metadata"].get("finalizers") or [] for p in job_pods(client)] == [[]]


def test_failing_job_with_backoff_limit_zero_fails_after_its_duration() -> None:
    world, client = make_world()
    make_job(client, result="Failed", duration="30s", backoffLimit=0)
    world.advance(30)
    assert condition_types(client) == ["FailureTarget", "Failed"]
    failed = condition(client, "Failed")
    assert (failed["reason"], failed["message"]) == (
        "BackoffLimitExceeded", "Job has reached the specified backoff limit")
    final = status(client)
    assert final["failed"] == 1 and "completionTime" not in final
    assert [p["status"]["phase"] for p in job_pods(client)] == ["Failed"]


def test_failed_pod_is_replaced_after_the_pod_failure_back_off() -> None:
    world, client = make_world()
    make_job(client, result="Failed", duration="0s", backoffLimit=2)
    world.settle()
    assert len(job_pods(client)) == 1 and status(client)["failed"] == 1
    world.advance(9)
    assert len(job_pods(client)) == 1
    world.advance(1)
    assert len(job_pods(client)) == 2  # after 10 s
    world.advance(19)
    assert len(job_pods(client)) == 2
    world.advance(1)
    assert len(job_pods(client)) == 3  # after 20 s more
    assert condition_types(client) == ["FailureTarget", "Failed"]
    assert status(client)["failed"] == 3


def test_active_deadline_fails_the_job_and_stops_its_pods() -> None:
    world, client = make_world()
    make_job(client, duration="1h", activeDeadlineSeconds=60)
    world.advance(60)
    assert condition_types(client) == ["FailureTarget"]
    assert status(client)["terminating"] == 1
    world.advance(5)  # the pod's grace period
    assert condition_types(client) == ["FailureTarget", "Failed"]
    assert condition(client, "Failed")["reason"] == "DeadlineExceeded"
    assert condition(client, "Failed")["message"] == "Job was active longer than specified deadline"
    assert job_pods(client) == []


def test_parallel_job_runs_up_to_parallelism_until_completions() -> None:
    world, client = make_world()
    make_job(client, duration="10s", parallelism=2, completions=3)
    world.settle()
    assert status(client)["active"] == 2
    world.advance(10)
    assert status(client)["succeeded"] == 2 and status(client)["active"] == 1
    world.advance(10)
    assert status(client)["succeeded"] == 3
    assert condition_types(client) == ["SuccessCriteriaMet", "Complete"]
    assert len(job_pods(client)) == 3


def test_suspended_job_creates_no_pods_until_resumed() -> None:
    world, client = make_world()
    make_job(client, suspend=True)
    world.settle()
    assert job_pods(client) == []
    assert condition(client, "Suspended")["reason"] == "JobSuspended"
    client.patch("batch/v1", "Job", "j", {"spec": {"suspend": False}}, namespace=DEFAULT_NAMESPACE)
    world.settle()
    assert condition(client, "Suspended")["status"] == "False"
    assert condition(client, "Suspended")["reason"] == "JobResumed"
    assert condition_types(client)[-1] == "Complete"


def test_finalizer_comes_off_the_pods_of_a_deleting_job() -> None:
    world, client = make_world()
    make_job(client, duration="1h")
    world.settle()
    client.delete("batch/v1", "Job", "j", DEFAULT_NAMESPACE, propagation_policy="Orphan")
    world.settle()
    assert client.get("batch/v1", "Job", "j", DEFAULT_NAMESPACE)["metadata"]["deletionTimestamp"]
    (pod,) = job_pods(client)
    assert "batch.kubernetes.io/job-tracking" not in (pod["metadata"].get("finalizers") or [])


def test_finalizer_comes_off_the_pods_of_a_job_that_is_gone() -> None:
    world, client = make_world()
    make_job(client, duration="1h")
    world.settle()
    client.delete(
        "batch/v1", "Job", "j", DEFAULT_NAMESPACE, propagation_policy="Background"
    )  # no garbage collector here
    world.settle()
    (pod,) = job_pods(client)
    assert "batch.kubernetes.io/job-tracking" not in (pod["metadata"].get("finalizers") or [])


def test_restart_on_failure_job_fails_once_restarts_reach_the_limit() -> None:
    world = World(simulators=SIMULATORS)
    client = world.client()
    client.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    client.create({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": DEFAULT_NAMESPACE},
                   "spec": {"backoffLimit": 1, "template": {
                       "metadata": {"annotations": {"harness.test/job-result": "Failed",
                                                    "harness.test/job-duration": "5s"}},
                       "spec": {"restartPolicy": "OnFailure", "terminationGracePeriodSeconds": 0,
                                "containers": [{"name": "hook", "image": "busybox"}]}}}})
    world.advance(15)  # runs 5 s, back-off 10 s, restarts once
    assert condition(client, "Failed")["reason"] == "BackoffLimitExceeded"


def test_work_queue_job_without_completions_is_complete_when_its_pods_are_done() -> None:
    world, client = make_world()
    job = make_job(client, duration="10s", parallelism=2)
    assert job["spec"].get("completions") is None
    world.settle()
    assert status(client)["active"] == 2
    world.advance(10)
    final = status(client)
    assert final["succeeded"] == 2 and "active" not in final
    assert condition_types(client) == ["SuccessCriteriaMet", "Complete"]
    assert len(job_pods(client)) == 2
