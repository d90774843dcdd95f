"""The README's add-on walkthrough, as a new user runs it: ``python -m harness serve`` as a process, the
files of ``examples/addon_walkthrough/``, and exactly the README's kubectl commands (real kubectl). Time
moves through ``POST /harness/v1/clock/advance``; the order in which the add-ons left the workload
cluster, and that the Cluster waited for them, are read from ``GET /harness/v1/audit``."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_http_fixtures import KUBECTL, KUBECTL_TIMEOUT, ServeProcess, serve_process

from harness.kube.names.capi import WAITING_FOR_BEFORE_DELETE_HOOK_MESSAGE
from harness.kube.names.runtime_sdk import OK_TO_DELETE_ANNOTATION

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
EXAMPLES = ROOT / "examples" / "addon_walkthrough"
# The README's commands, in its order (test_the_readme_shows_exactly_these_commands keeps them in step).
APPLY_CLUSTER = "kubectl apply -f examples/addon_walkthrough/cluster.yaml"
WAIT_INITIALIZED = "kubectl wait cluster/demo --for=condition=ControlPlaneInitialized --timeout=60s"
APPLY_ADDONS = "kubectl apply -f examples/addon_walkthrough/addons.yaml"
GET_SUMMARIES = "kubectl get clustersummaries -o wide"
GET_ADDONS = ("kubectl --context default/demo get configmaps -A -l projectsveltos.io/reference-kind=ConfigMap "
              "-o custom-columns='NAMESPACE:.metadata.namespace,NAME:.metadata.name,"
              "PROFILE:.metadata.annotations.projectsveltos\\.io/owner-name'")
DELETE_CLUSTER = "kubectl delete cluster demo --wait=false"
GET_DELETING = ("kubectl get cluster demo -o jsonpath='{.status.v1beta2.conditions[?(@.type==\"Deleting\")]"
                ".message}'")
WAIT_DELETED = "kubectl wait cluster/demo --for=delete --timeout=120s"
AUDIT_PATH = "/harness/v1/audit?cluster=default/demo&verb=delete&diff=false"
COMMANDS = (APPLY_CLUSTER, WAIT_INITIALIZED, APPLY_ADDONS, GET_SUMMARIES, GET_ADDONS, DELETE_CLUSTER, GET_DELETING,
            WAIT_DELETED)
PROFILES = ("cert-manager", "ingress", "monitoring")
# What each profile deploys (addons.yaml), in the order they must leave: dependents first.
REMOVAL_ORDER = ["monitoring-config", "ingress-config", "cert-manager-config", "cert-manager"]
ADDONS_USER = "system:serviceaccount:kube-system:addons"
NAMESPACE_CONTROLLER = "system:serviceaccount:kube-system:namespace"
DEADLINE_SECONDS = 60.0
STEP_SECONDS = 5


@pytest.fixture
def served(tmp_path: Path) -> Iterator[ServeProcess]:
    yield from serve_process(tmp_path)


def _env(served: ServeProcess) -> dict[str, str]:
    # The user's shell: KUBECONFIG exported; HOME private so kubectl's discovery cache is this test's.
    home = served.cache_dir.parent / "home"
    home.mkdir(exist_ok=True)
    return dict(os.environ, KUBECONFIG=str(served.kubeconfig), HOME=str(home))


def _run(served: ServeProcess, command: str) -> str:
    """Run one README command (``kubectl`` is the real one) from the repository root; its output."""
    argv = shlex.split(command)
    assert argv[0] == "kubectl"
    done = subprocess.run([KUBECTL, *argv[1:]], cwd=ROOT, env=_env(served), capture_output=True, text=True,
                          timeout=KUBECTL_TIMEOUT, check=False)
    assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _until(served: ServeProcess, check: Any, what: str, advance: float = 0) -> Any:
    """Poll ``check`` until it answers something truthy, moving the served clock ``advance`` seconds
    between tries; fail after DEADLINE_SECONDS of wall time."""
    deadline = time.monotonic() + DEADLINE_SECONDS
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, f"{what}: not within {DEADLINE_SECONDS} s"
        served.advance(advance)


def _audit(served: ServeProcess, path: str) -> list[dict[str, Any]]:
    with served.http(timeout=30) as http:
        answer = http.get(path)
        answer.raise_for_status()
        return list(answer.json()["items"])


def _watching_clusters(served: ServeProcess) -> bool:
    """Whether a client (kubectl: the world's own controllers do not watch over HTTP) watches Clusters."""
    with served.http(timeout=30) as http:
        streams = http.get("/harness/v1/watches").json()["items"]
    return any(s["resource"] == "clusters.cluster.x-k8s.io" and not s["ended"] for s in streams)


def test_the_readme_shows_exactly_these_commands_and_files() -> None:
    text = README.read_text()
    for command in COMMANDS:
        assert command in text, f"the README does not show: {command}"
    assert f'curl -s --cacert ./ca.crt "https://127.0.0.1:8001{AUDIT_PATH}"' in text
    assert {p.name for p in EXAMPLES.iterdir()} == {"cluster.yaml", "addons.yaml"}


def test_a_new_user_sees_the_add_ons_leave_dependents_first_while_the_cluster_waits(served: ServeProcess) -> None:
    assert "created" in _run(served, APPLY_CLUSTER)
    assert "condition met" in _run(served, WAIT_INITIALIZED)
    _run(served, APPLY_ADDONS)

    def provisioned() -> bool:
        rows = _run(served, GET_SUMMARIES).splitlines()[1:]
        return len(rows) == len(PROFILES) and all(r.split()[-1] == "Provisioned" for r in rows)

    _until(served, provisioned, "three ClusterSummaries Provisioned", advance=1)
    summaries = _run(served, GET_SUMMARIES)
    assert [line.split()[0] for line in summaries.splitlines()[1:]] == [f"{p}-capi-demo" for p in PROFILES]
    deployed = [line.split() for line in _run(served, GET_ADDONS).splitlines()[1:]]
    assert sorted(deployed) == [["cert-manager", "cert-manager-config", "cert-manager"],
                                ["default", "ingress-config", "ingress"],
                                ["default", "monitoring-config", "monitoring"]]
    before = len(_audit(served, "/harness/v1/audit?diff=false"))

    _run(served, DELETE_CLUSTER)
    # The Cluster stays, held at BeforeClusterDelete, while the add-ons leave (the clock stands still here:
    # the hook is called again only 10 s later).
    assert _until(
        served,
        lambda: _run(served, GET_DELETING) == WAITING_FOR_BEFORE_DELETE_HOOK_MESSAGE,
        "the Cluster held at its hook",
    )
    waiter = subprocess.Popen([KUBECTL, *shlex.split(WAIT_DELETED)[1:]], cwd=ROOT, env=_env(served),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        # Time moves only once kubectl watches the Cluster: moved earlier, the Cluster could be gone
        # before kubectl's first look, and kubectl would then have nothing to report.
        _until(served, lambda: _watching_clusters(served) or waiter.poll() is not None, "kubectl watching the Cluster")
        _until(served, lambda: waiter.poll() is not None, "the Cluster gone", advance=STEP_SECONDS)
        output = waiter.communicate(timeout=KUBECTL_TIMEOUT)[0]
    finally:
        if waiter.poll() is None:
            waiter.kill()
            waiter.wait(KUBECTL_TIMEOUT)
    assert waiter.returncode == 0, output

    every_delete = [r for r in _audit(served, AUDIT_PATH) if r["seq"] > before]
    deletes = [r for r in every_delete if r["user"] == ADDONS_USER]
    assert [r["name"] for r in deletes] == REMOVAL_ORDER
    # Besides the add-ons, only what kube-controller-manager put into the namespace that left with them.
    others = {(r["resource"], r["name"], r["user"]) for r in every_delete if r["user"] != ADDONS_USER}
    assert others <= {("serviceaccounts", "default", NAMESPACE_CONTROLLER),
                      ("configmaps", "kube-root-ca.crt", NAMESPACE_CONTROLLER)}, others
    # The Cluster was let go (ok-to-delete) only after the last add-on had left.
    cluster_writes = _audit(served, "/harness/v1/audit?cluster=management&resource=clusters.cluster.x-k8s.io")
    released = [r["seq"] for r in cluster_writes if OK_TO_DELETE_ANNOTATION in json.dumps(r.get("diff"))]
    deleted = [r["seq"] for r in cluster_writes if r["verb"] == "delete"]
    assert deleted and released, cluster_writes
    assert deleted[0] < deletes[0]["seq"] and released[0] > deletes[-1]["seq"], (deleted, released, deletes)
    assert re.search(r"cluster\.cluster\.x-k8s\.io/demo condition met|deleted", output), output
