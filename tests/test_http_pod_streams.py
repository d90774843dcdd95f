"""The pod subresources a kubelet would serve, and DELETE answers, as kube-apiserver 1.32 writes
them: ``kubectl logs`` of a simulated pod and of a Job, exec/attach/port-forward refused with a
Status, DELETE returning the object or a Status per registry, JSON bodies ending in a newline."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_http_fixtures import Served, eventually, serving

from harness.world.world import World

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"conditions": [{"type": "Ready", "status": "True"}],
                   "addresses": [{"type": "InternalIP", "address": "172.18.0.2"}]}}
LOGGED = {"apiVersion": "v1", "kind": "Pod",
          "metadata": {"name": "talker", "namespace": "default",
                       "annotations": {"harness.test/log": "one\ntwo\nthree\n"}},
          "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "busybox"}]}}
JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: hook, namespace: default}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: run
        image: busybox
        env:
        - {name: K8S_ROLLOUT_TYPE, value: Deployment}
        - {name: K8S_ROLLOUT_TO_OBJECT, value: web-2}
"""


def _world(world: World) -> None:
    world.client().create(NODE)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    yield from serving(tmp_path, prepare=_world)


def test_kubectl_logs_returns_the_log_knob_with_tail_and_timestamps(served: Served) -> None:
    served.kubectl("apply", "-f", "-", stdin=json.dumps(LOGGED))
    assert served.kubectl("logs", "talker").stdout == "one\ntwo\nthree\n"
    assert served.kubectl("logs", "talker", "--tail=1").stdout == "three\n"
    stamped = served.kubectl("logs", "talker", "--timestamps", "--tail=2").stdout.splitlines()
    assert len(stamped) == 2 and stamped[1].endswith("Z three") and ".000000000Z" in stamped[1]
    assert served.kubectl("logs", "talker", "-f").stdout == "one\ntwo\nthree\n"
    assert served.kubectl("logs", "talker", "--since=1h").stdout == "one\ntwo\nthree\n"
    assert served.kubectl("logs", "talker", "--since-time=2100-01-01T00:00:00Z").stdout == ""
    wrong = served.kubectl("logs", "talker", "-c", "nope", check=False)
    assert wrong.returncode != 0 and "container nope is not valid for pod talker" in wrong.stderr


def test_logs_of_an_unscheduled_pod_are_empty_and_bad_options_are_422(served: Served) -> None:
    pending = {**LOGGED, "metadata": {"name": "pending", "namespace": "default"},
               "spec": {"nodeSelector": {"nowhere": "true"}, "containers": [{"name": "c", "image": "busybox"}]}}
    with served.http() as http:
        http.post("/api/v1/namespaces/default/pods", json=pending)
        empty = http.get("/api/v1/namespaces/default/pods/pending/log")
        assert empty.status_code == 204 and empty.content == b""
        bad = http.get("/api/v1/namespaces/default/pods/pending/log", params={"tailLines": "-1"})
    assert bad.status_code == 422
    assert bad.json()["message"] == ('PodLogOptions "pending" is invalid: tailLines: Invalid value: -1: '
                                     "must be greater than or equal to 0")


def test_kubectl_logs_of_a_job_shows_its_environment_and_result(served: Served) -> None:
    served.kubectl("apply", "-f", "-", stdin=JOB)
    assert eventually(lambda: served.kubectl("get", "pods", "-l", "job-name=hook", "-o", "name").stdout.strip() != "",
                      timeout=20)
    log = served.kubectl("logs", "job/hook").stdout
    assert log == "K8S_ROLLOUT_TYPE=Deployment\nK8S_ROLLOUT_TO_OBJECT=web-2\nresult: Succeeded (exit code 0)\n"


def test_exec_attach_and_port_forward_answer_a_status(served: Served) -> None:
    served.kubectl("apply", "-f", "-", stdin=json.dumps(LOGGED))
    with served.http() as http:
        plain = http.post("/api/v1/namespaces/default/pods/talker/exec", params={"command": "ls"})
        upgraded = http.post("/api/v1/namespaces/default/pods/talker/portforward",
                             headers={"Connection": "Upgrade", "Upgrade": "SPDY/3.1"})
    assert plain.status_code == 400 and plain.json()["message"] == "Upgrade request required"
    assert plain.json()["kind"] == "Status"
    assert upgraded.status_code == 500 and "reason" not in upgraded.json()
    assert upgraded.json()["message"] == "error dialing backend: dial tcp 172.18.0.2:10250: connect: connection refused"
    refused = served.kubectl("exec", "talker", "--", "ls", check=False)
    assert refused.returncode != 0
    assert "error dialing backend: dial tcp 172.18.0.2:10250" in refused.stderr


def test_delete_returns_the_object_or_a_status_per_registry(served: Served) -> None:
    with served.http() as http:
        http.post("/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "cm"}})
        http.post("/api/v1/namespaces/default/serviceaccounts", json={"metadata": {"name": "sa"}})
        http.post("/api/v1/namespaces/default/configmaps",
                  json={"metadata": {"name": "held", "finalizers": ["example.com/hold"]}})
        status = http.delete("/api/v1/namespaces/default/configmaps/cm")
        account = http.delete("/api/v1/namespaces/default/serviceaccounts/sa")
        held = http.delete("/api/v1/namespaces/default/configmaps/held")
        orphan_false = http.request("DELETE", "/api/v1/namespaces/default/configmaps/held",
                                    json={"orphanDependents": False})
    assert status.status_code == 200 and status.content.endswith(b"}\n")
    body = status.json()
    assert body["kind"] == "Status" and body["status"] == "Success" and "code" not in body
    details = body["details"]
    assert details["kind"] == "configmaps" and details["name"] == "cm" and "group" not in details
    assert account.status_code == 200 and account.json()["kind"] == "ServiceAccount"
    assert held.status_code == 200 and held.json()["metadata"]["deletionTimestamp"]
    assert orphan_false.status_code == 202 and orphan_false.json()["kind"] == "ConfigMap"


def test_kubectl_attach_and_port_forward_fail_with_the_status_message(served: Served) -> None:
    served.kubectl("apply", "-f", "-", stdin=json.dumps(LOGGED))
    forward = served.kubectl("port-forward", "pod/talker", "0:80", check=False)
    assert forward.returncode != 0 and "error dialing backend" in forward.stderr
    attach = served.kubectl("attach", "talker", check=False)
    assert attach.returncode != 0 and "error dialing backend" in attach.stderr


def test_an_exec_over_websocket_is_refused_with_the_status_not_a_bare_403(served: Served) -> None:
    # The kubernetes Python client and lightkube open exec, attach and port-forward as WebSockets.
    from kubernetes import client, config
    from kubernetes.stream import stream

    served.kubectl("apply", "-f", "-", stdin=json.dumps(LOGGED))
    api = client.CoreV1Api(config.new_client_from_config(str(served.kubeconfig)))
    with pytest.raises(client.ApiException) as refused:
        stream(api.connect_get_namespaced_pod_exec, "talker", "default", command=["ls"],
               stderr=True, stdin=False, stdout=True, tty=False, _request_timeout=30)
    assert "Handshake status 500" in str(refused.value)
    assert "error dialing backend: dial tcp 172.18.0.2:10250: connect: connection refused" in str(refused.value)
    with served.http() as http:
        # After the refused handshake the server still answers.
        assert http.get("/api/v1/namespaces/default/pods/talker").status_code == 200
