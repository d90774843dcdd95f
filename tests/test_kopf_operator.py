"""A kopf operator (``tests/operators/pre_drain_hook_operator.py``) against a ``serve`` process: it
removes its own Cluster API pre-drain hook from a deleting Machine and leaves every other
owner's hook, and every Machine that is not deleting, alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from operators.pre_drain_hook_operator import OWN_HOOK, PRE_DRAIN_HOOK_PREFIX
from test_http_fixtures import ServeProcess, eventually, serve_process, stop_process

from harness.kube.names.capi import MACHINE_FINALIZER, MACHINES_RESOURCE

OPERATOR = Path(__file__).parent / "operators" / "pre_drain_hook_operator.py"
# The operator's own identity: without a server token, a bearer token names the user (audit trail).
OPERATOR_USER = "system:serviceaccount:default:pre-drain-hook"
OPERATOR_TIMEOUT = 30.0
OPERATOR_STOP_TIMEOUT = 15.0

OTHER_HOOK = f"{PRE_DRAIN_HOOK_PREFIX}/other-hook"  # another owner's hook: not ours to remove

MACHINE_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: machines.cluster.x-k8s.io
spec:
  group: cluster.x-k8s.io
  scope: Namespaced
  names: {kind: Machine, listKind: MachineList, plural: machines, singular: machine}
  versions:
  - name: v1beta1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
"""


def _machine(name: str) -> dict[str, object]:
    # The spec satisfies Cluster API's own Machine schema too, should the served CRD be that one.
    return {
        "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Machine",
        "metadata": {"name": name, "namespace": "default", "finalizers": [MACHINE_FINALIZER],
                     "annotations": {OWN_HOOK: "", OTHER_HOOK: ""}},
        "spec": {"clusterName": "c1", "bootstrap": {"dataSecretName": "bootstrap"},
                 "infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                                       "kind": "FakeMachine", "name": name}},
    }


@dataclass
class Operator:
    process: subprocess.Popen[bytes]
    log: Path

    def handled(self, name: str) -> int:
        """How many events of Machine ``default/<name>`` kopf has run the handler for."""
        return self.log.read_text().count(f"[default/{name}] Handler 'release_pre_drain_hook' succeeded")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[ServeProcess]:
    yield from serve_process(tmp_path, "--controllers", "none")


@pytest.fixture
def operator(served: ServeProcess, tmp_path: Path) -> Iterator[Operator]:
    served.kubectl("apply", "-f", "-", stdin=MACHINE_CRD)
    served.kubectl("wait", "--for", "condition=established", f"crd/{MACHINES_RESOURCE}", "--timeout=10s")
    config = yaml.safe_load(served.kubeconfig.read_text())
    for user in config["users"]:
        user["user"] = {"token": OPERATOR_USER}
    kubeconfig = tmp_path / "operator-kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(config))
    log = tmp_path / "kopf.log"
    command = [sys.executable, "-m", "kopf", "run", "--standalone", "--namespace", "default", str(OPERATOR)]
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT,
                                   env={**os.environ, "KUBECONFIG": str(kubeconfig)})
    try:
        yield Operator(process, log)
    finally:
        stop_process(process, OPERATOR_STOP_TIMEOUT)


def _annotations(served: ServeProcess, name: str) -> dict[str, str]:
    return served.kubectl_json("get", "machine", name)["metadata"].get("annotations") or {}


def test_operator_removes_only_its_own_pre_drain_hook_from_a_deleting_machine(
    served: ServeProcess, operator: Operator
) -> None:
    for name in ("kept", "doomed"):
        served.kubectl("create", "-f", "-", stdin=json.dumps(_machine(name)))
    assert eventually(lambda: operator.handled("kept") and operator.handled("doomed"), timeout=OPERATOR_TIMEOUT), \
        operator.log.read_text()
    # Seen and not deleting: the hook stays.
    assert OWN_HOOK in _annotations(served, "doomed")

    served.kubectl("delete", "machine", "doomed", "--wait=false")
    released = eventually(lambda: OWN_HOOK not in _annotations(served, "doomed"), timeout=OPERATOR_TIMEOUT)
    assert released, operator.log.read_text()

    doomed = served.kubectl_json("get", "machine", "doomed")
    assert doomed["metadata"]["deletionTimestamp"]
    assert doomed["metadata"]["finalizers"] == [MACHINE_FINALIZER]
    assert OTHER_HOOK in doomed["metadata"]["annotations"]
    assert {OWN_HOOK, OTHER_HOOK} <= set(_annotations(served, "kept"))
    with served.http() as http:
        writes = http.get("/harness/v1/audit", params={"resource": MACHINES_RESOURCE, "diff": "false"}).json()["items"]
    by_operator = [(r["verb"], r["name"]) for r in writes if r["user"] == OPERATOR_USER]
    assert by_operator == [("patch", "doomed")]

    # Once the last finalizer goes the Machine is gone; the operator takes the DELETED event in its stride.
    seen = operator.handled("doomed")
    served.kubectl("patch", "machine", "doomed", "--type", "merge", "-p", '{"metadata":{"finalizers":null}}')
    gone = served.kubectl("get", "machine", "doomed", check=False)
    assert gone.returncode != 0 and "not found" in gone.stderr
    assert eventually(lambda: operator.handled("doomed") > seen, timeout=OPERATOR_TIMEOUT), operator.log.read_text()
    assert operator.process.poll() is None, operator.log.read_text()
    assert "Traceback" not in operator.log.read_text()
    assert "Traceback" not in served.log.read_text()
