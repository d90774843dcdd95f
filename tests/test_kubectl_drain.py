"""``kubectl drain --ignore-daemonsets --delete-emptydir-data`` against a ``serve`` process: it
blocks on a PodDisruptionBudget with no disruption left, then completes once the budget is
relaxed, and it removes the pods through the eviction subresource, never by plain DELETEs.

kubectl retries a refused eviction every 5 s of wall time, so this test takes about 10 s.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_http_fixtures import ServeProcess, eventually, serve_process

from harness.apiserver.subresources.eviction import LOOPBACK_USER
from harness.kube.names.core import DISRUPTION_TARGET
from harness.kube.names.policy import PDB_RESOURCE, PDB_VIOLATION_MESSAGE
from tests.manifests import manifests, node, workload

DRAIN_TIMEOUT = 90
DRAINER = "drainer"  # kubectl --as: the audit trail tells the drain's writes from the test's own
# What kubectl drain prints for a 429 from the eviction subresource.
BUDGET_VIOLATION = 'error when evicting pods/"{}" -n "default" (will retry after 5s): ' + PDB_VIOLATION_MESSAGE

WORKLOADS = manifests(
    node("n1"),
    workload("ReplicaSet", "web", [{"name": "web", "image": "nginx:1.27"}], replicas=2),
    workload("ReplicaSet", "cache", [{"name": "cache", "image": "redis:7",
                                      "volumeMounts": [{"name": "scratch", "mountPath": "/data"}]}],
             replicas=1, pod_spec={"volumes": [{"name": "scratch", "emptyDir": {}}]}),
    {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "default"},
     "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}}},
    workload("DaemonSet", "agent", [{"name": "agent", "image": "agent:1"}]),
)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[ServeProcess]:
    # The test's own Nodes, none of serve's: where Pods land and how many a DaemonSet wants is the test's.
    yield from serve_process(tmp_path, "--controllers", "all", "--nodes", "0")


def _pods(served: ServeProcess) -> dict[str, dict[str, object]]:
    return {p["metadata"]["name"]: p for p in served.kubectl_json("get", "pods")["items"]}


def _running_on_n1(served: ServeProcess) -> bool:
    pods = _pods(served).values()
    running = [p for p in pods if p["spec"].get("nodeName") == "n1" and p["status"].get("phase") == "Running"]
    return len(running) == 4


def _all_going(served: ServeProcess, names: list[str]) -> bool:
    pods = _pods(served)
    return all(name not in pods or "deletionTimestamp" in pods[name]["metadata"] for name in names)


def test_drain_waits_for_the_budget_then_evicts_and_skips_daemonset_pods(served: ServeProcess, tmp_path: Path) -> None:
    served.kubectl("apply", "-f", "-", stdin=WORKLOADS)
    # The reference DaemonSet controller places the agent's pod on n1.
    assert eventually(lambda: _running_on_n1(served), timeout=20), _pods(served)
    (agent,) = [n for n, p in _pods(served).items() if n.startswith("agent-") and p["spec"].get("nodeName") == "n1"]
    # A second node takes the replacements the ReplicaSets create while n1 drains.
    served.kubectl("apply", "-f", "-", stdin="apiVersion: v1\nkind: Node\nmetadata: {name: n2}\n")
    before = _pods(served)
    evictable = sorted(name for name in before if not name.startswith("agent"))
    web = [name for name in evictable if name.startswith("web-")]

    out, err = tmp_path / "drain.out", tmp_path / "drain.err"
    command = [*served.kubectl_command(), "--as", DRAINER, "drain", "n1", "--ignore-daemonsets",
               "--delete-emptydir-data", f"--timeout={DRAIN_TIMEOUT - 10}s"]
    with out.open("w") as stdout, err.open("w") as stderr:
        drain = subprocess.Popen(command, stdout=stdout, stderr=stderr, text=True)
    try:
        blocked = eventually(lambda: all(BUDGET_VIOLATION.format(n) in err.read_text() for n in web), timeout=30)
        assert blocked, err.read_text()
        assert drain.poll() is None, "kubectl drain ended while the budget allowed no disruption"
        assert all("deletionTimestamp" not in _pods(served)[n]["metadata"] for n in web)

        served.kubectl("patch", "pdb", "web", "--type", "merge", "-p", '{"spec":{"minAvailable":1}}')
        # The evicted pods terminate gracefully (30 s of the world's clock): move the clock on
        # once every one of them is going.
        assert eventually(lambda: _all_going(served, evictable), timeout=30), err.read_text()
        served.advance(60)
        drain.wait(DRAIN_TIMEOUT)
    finally:
        if drain.poll() is None:
            drain.kill()
            drain.wait()

    assert drain.returncode == 0, err.read_text()
    assert "node/n1 drained" in out.read_text()
    assert f"Warning: ignoring DaemonSet-managed Pods: default/{agent}" in err.read_text()
    after = _pods(served)
    assert not set(evictable) & set(after)
    assert agent in after
    assert sorted(p["spec"]["nodeName"] for n, p in after.items() if not n.startswith("agent-")) == ["n2", "n2", "n2"]

    with served.http() as http:
        records = http.get("/harness/v1/audit", params={"resource": "pods"}).json()["items"]
        budget_writes = http.get("/harness/v1/audit", params={"resource": PDB_RESOURCE, "diff": "false"}).json()[
            "items"
        ]
    # Each web pod's eviction spent the budget (the apiserver's own status write of the PDB).
    assert len([r for r in budget_writes if r["user"] == LOOPBACK_USER]) == len(web)
    drained = [r for r in records if r["user"] == DRAINER]
    # Per pod: the eviction's DisruptionTarget status write, then its DELETE; nothing else.
    assert sorted((r["name"], r["verb"], r["subresource"]) for r in drained) == sorted(
        [(n, "update", "status") for n in evictable] + [(n, "delete", "") for n in evictable]
    )
    for name in evictable:
        own = [r for r in drained if r["name"] == name]
        assert [r["verb"] for r in own] == ["update", "delete"]
        assert DISRUPTION_TARGET in json.dumps(own[0]["diff"])
    assert "Traceback" not in served.log.read_text()
