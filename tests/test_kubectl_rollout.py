"""``kubectl rollout status``, ``history`` and ``undo`` against a ``serve`` process whose reference Deployment
controller rolls Deployments out (the clock follows wall time; Pods are Ready at once)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from test_http_fixtures import ServeProcess, eventually, serve_process

from tests.manifests import manifests, node, workload

ROLLOUT_TIMEOUT = "60s"

DEPLOYMENT = manifests(
    node("n1"),
    workload("Deployment", "web", [{"name": "web", "image": "nginx:1.27"}], replicas=3,
             annotations={"kubernetes.io/change-cause": "first version"}),
)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[ServeProcess]:
    # The test's own Nodes, none of serve's: where Pods land and how many a DaemonSet wants is the test's.
    yield from serve_process(tmp_path, "--controllers", "all", "--nodes", "0")


def _image(served: ServeProcess) -> str:
    deployment = served.kubectl_json("get", "deployment", "web")
    return str(deployment["spec"]["template"]["spec"]["containers"][0]["image"])


def test_rollout_status_waits_for_the_rollout_and_reports_success(served: ServeProcess) -> None:
    served.kubectl("apply", "-f", "-", stdin=DEPLOYMENT)
    result = served.kubectl("rollout", "status", "deployment/web", f"--timeout={ROLLOUT_TIMEOUT}")
    assert 'deployment "web" successfully rolled out' in result.stdout


def test_rollout_history_lists_revisions_with_their_change_cause(served: ServeProcess) -> None:
    served.kubectl("apply", "-f", "-", stdin=DEPLOYMENT)
    served.kubectl("rollout", "status", "deployment/web", f"--timeout={ROLLOUT_TIMEOUT}")
    # The controller copies the Deployment's annotations onto its current ReplicaSet (as upstream does), so
    # the change cause is annotated once the new template is in place.
    served.kubectl("set", "image", "deployment/web", "web=nginx:1.28")
    served.kubectl("annotate", "deployment/web", "kubernetes.io/change-cause=second version", "--overwrite")
    served.kubectl("rollout", "status", "deployment/web", f"--timeout={ROLLOUT_TIMEOUT}")
    history = served.kubectl("rollout", "history", "deployment/web").stdout
    lines = [line.split(None, 1) for line in history.splitlines() if line[:1].isdigit()]
    assert lines == [["1", "first version"], ["2", "second version"]], history


def test_rollout_undo_brings_the_previous_template_back_as_a_new_revision(served: ServeProcess) -> None:
    served.kubectl("apply", "-f", "-", stdin=DEPLOYMENT)
    served.kubectl("rollout", "status", "deployment/web", f"--timeout={ROLLOUT_TIMEOUT}")
    served.kubectl("set", "image", "deployment/web", "web=nginx:1.28")
    served.kubectl("rollout", "status", "deployment/web", f"--timeout={ROLLOUT_TIMEOUT}")
    result = served.kubectl("rollout", "undo", "deployment/web")
    assert "rolled back" in result.stdout
    assert _image(served) == "nginx:1.27"
    served.kubectl("rollout", "status", "deployment/web", f"--timeout={ROLLOUT_TIMEOUT}")
    assert eventually(lambda: served.kubectl_json("get", "deployment", "web")["metadata"]["annotations"].get(
        "deployment.kubernetes.io/revision") == "3", timeout=10)
    replica_sets = served.kubectl_json("get", "replicasets")["items"]
    assert len(replica_sets) == 2


STATEFUL_SET = manifests(
    node("n1"),
    # A Pod's name is taken until the old one is gone (wall time here): a short grace period.
    workload("StatefulSet", "db", [{"name": "db", "image": "postgres:16"}], replicas=2, spec={"serviceName": "db"},
             pod_spec={"terminationGracePeriodSeconds": 1}),
)

DAEMON_SET = manifests(node("n1"), node("n2"),
                       workload("DaemonSet", "agent", [{"name": "agent", "image": "fluent-bit:3.0"}]))


def test_rollout_status_of_a_stateful_set_waits_until_every_pod_is_updated(served: ServeProcess) -> None:
    served.kubectl("apply", "-f", "-", stdin=STATEFUL_SET)
    served.kubectl("rollout", "status", "statefulset/db", f"--timeout={ROLLOUT_TIMEOUT}")
    served.kubectl("set", "image", "statefulset/db", "db=postgres:17")
    result = served.kubectl("rollout", "status", "statefulset/db", f"--timeout={ROLLOUT_TIMEOUT}")
    # The API server defaults partition to 0, so kubectl takes the partitioned branch, as on a real cluster.
    assert "partitioned roll out complete: 2 new pods have been updated..." in result.stdout
    status = served.kubectl_json("get", "statefulset", "db")["status"]
    assert status["updatedReplicas"] == status["readyReplicas"] == 2
    assert eventually(lambda: served.kubectl_json("get", "statefulset", "db")["status"].get("currentRevision")
                      == status["updateRevision"], timeout=10)


def test_rollout_status_of_a_daemon_set_waits_for_every_node(served: ServeProcess) -> None:
    served.kubectl("apply", "-f", "-", stdin=DAEMON_SET)
    served.kubectl("rollout", "status", "daemonset/agent", f"--timeout={ROLLOUT_TIMEOUT}")
    served.kubectl("set", "image", "daemonset/agent", "agent=fluent-bit:3.1")
    result = served.kubectl("rollout", "status", "daemonset/agent", f"--timeout={ROLLOUT_TIMEOUT}")
    assert 'daemon set "agent" successfully rolled out' in result.stdout
    status = served.kubectl_json("get", "daemonset", "agent")["status"]
    assert status["updatedNumberScheduled"] == status["numberAvailable"] == 2


def _revisions(history: str) -> list[list[str]]:
    return [line.split(None, 1) for line in history.splitlines() if line[:1].isdigit()]


def _live_images(served: ServeProcess, selector: str) -> list[str]:
    pods = served.kubectl_json("get", "pods", "-l", selector)["items"]
    return sorted(p["spec"]["containers"][0]["image"] for p in pods if not p["metadata"].get("deletionTimestamp"))


def _set_image(served: ServeProcess, kind: str, name: str) -> str:
    workload = served.kubectl_json("get", kind, name)
    return str(workload["spec"]["template"]["spec"]["containers"][0]["image"])


def test_rollout_history_of_a_stateful_set_lists_its_controller_revisions(served: ServeProcess) -> None:
    served.kubectl("apply", "-f", "-", stdin=STATEFUL_SET)
    served.kubectl("rollout", "status", "statefulset/db", f"--timeout={ROLLOUT_TIMEOUT}")
    # A ControllerRevision takes the workload's annotations when it is made (upstream), so a change cause
    # written with the new template lands on the new revision.
    served.kubectl("patch", "statefulset/db", "--type=merge", "-p",
                   '{"metadata": {"annotations": {"kubernetes.io/change-cause": "postgres 17"}},'
                   ' "spec": {"template": {"spec": {"containers": [{"name": "db", "image": "postgres:17"}]}}}}')
    served.kubectl("rollout", "status", "statefulset/db", f"--timeout={ROLLOUT_TIMEOUT}")
    history = served.kubectl("rollout", "history", "statefulset/db").stdout
    assert _revisions(history) == [["1", "<none>"], ["2", "postgres 17"]], history
    first = served.kubectl("rollout", "history", "statefulset/db", "--revision=1").stdout
    assert "postgres:16" in first and "postgres:17" not in first, first


def test_rollout_undo_of_a_stateful_set_brings_the_previous_template_back_as_a_new_revision(
        served: ServeProcess) -> None:
    served.kubectl("apply", "-f", "-", stdin=STATEFUL_SET)
    served.kubectl("rollout", "status", "statefulset/db", f"--timeout={ROLLOUT_TIMEOUT}")
    served.kubectl("set", "image", "statefulset/db", "db=postgres:17")
    served.kubectl("rollout", "status", "statefulset/db", f"--timeout={ROLLOUT_TIMEOUT}")
    result = served.kubectl("rollout", "undo", "statefulset/db")
    assert "statefulset.apps/db rolled back" in result.stdout
    assert _set_image(served, "statefulset", "db") == "postgres:16"
    served.kubectl("rollout", "status", "statefulset/db", f"--timeout={ROLLOUT_TIMEOUT}")
    # The first revision's ControllerRevision is brought back with the next number (upstream's history).
    assert eventually(lambda: [r[0] for r in _revisions(served.kubectl("rollout", "history", "statefulset/db").stdout)]
                      == ["2", "3"], timeout=10)
    assert len(served.kubectl_json("get", "controllerrevisions")["items"]) == 2
    assert eventually(lambda: _live_images(served, "app=db") == ["postgres:16"] * 2, timeout=10)
    # Undoing to the revision in place changes nothing, as kubectl judges it from the revision's bytes.
    skipped = served.kubectl("rollout", "undo", "statefulset/db", "--to-revision=3")
    assert "skipped rollback (current template already matches revision 3)" in skipped.stdout, skipped.stdout


def test_rollout_history_and_undo_of_a_daemon_set(served: ServeProcess) -> None:
    served.kubectl("apply", "-f", "-", stdin=DAEMON_SET)
    served.kubectl("rollout", "status", "daemonset/agent", f"--timeout={ROLLOUT_TIMEOUT}")
    served.kubectl("set", "image", "daemonset/agent", "agent=fluent-bit:3.1")
    served.kubectl("rollout", "status", "daemonset/agent", f"--timeout={ROLLOUT_TIMEOUT}")
    history = served.kubectl("rollout", "history", "daemonset/agent").stdout
    assert [r[0] for r in _revisions(history)] == ["1", "2"], history
    second = served.kubectl("rollout", "history", "daemonset/agent", "--revision=2").stdout
    assert "fluent-bit:3.1" in second, second
    result = served.kubectl("rollout", "undo", "daemonset/agent", "--to-revision=1")
    assert "daemonset.apps/agent rolled back" in result.stdout
    assert _set_image(served, "daemonset", "agent") == "fluent-bit:3.0"
    served.kubectl("rollout", "status", "daemonset/agent", f"--timeout={ROLLOUT_TIMEOUT}")
    assert eventually(lambda: [r[0] for r in _revisions(served.kubectl("rollout", "history", "daemonset/agent").stdout)]
                      == ["2", "3"], timeout=10)
    assert eventually(lambda: _live_images(served, "app=agent") == ["fluent-bit:3.0"] * 2, timeout=10)
    skipped = served.kubectl("rollout", "undo", "daemonset/agent", "--to-revision=3")
    assert "skipped rollback (current template already matches revision 3)" in skipped.stdout, skipped.stdout
