"""kubectl commands that wait on the server: ``wait --for=condition=...``, ``wait --for=delete``,
``delete --wait=false`` and ``get -w``. Each waits on a watch; the test moves the world's clock
(``POST /harness/v1/clock/advance``) once the watch is open, and the command returns."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_http_fixtures import KUBECTL_TIMEOUT, Served, eventually, serving

from harness.kube.names.knobs import READY_DELAY_ANNOTATION
from harness.world.world import World

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}


def _pod(name: str, **annotations: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "annotations": annotations},
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "busybox"}]}}


def _world(world: World) -> None:
    world.client().create(NODE)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    yield from serving(tmp_path, prepare=_world)


def _start(served: Served, *args: str, out: Path) -> subprocess.Popen[str]:
    with out.open("w") as sink:
        return subprocess.Popen([*served.kubectl_command(), *args], stdout=sink, stderr=subprocess.STDOUT, text=True)


def _watching(served: Served, count: int = 1) -> bool:
    return len(served.app.state.watches) >= count


def _advance(served: Served, seconds: float) -> None:
    with served.http() as http:
        http.post("/harness/v1/clock/advance", json={"seconds": seconds}).raise_for_status()


@pytest.fixture
def background() -> Iterator[list[subprocess.Popen[str]]]:
    """kubectl processes a test starts; any still running at the end are killed."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait(KUBECTL_TIMEOUT)


def test_wait_for_a_condition_returns_once_the_pod_becomes_ready(
    served: Served, tmp_path: Path, background: list[subprocess.Popen[str]]
) -> None:
    with served.http() as http:
        http.post("/api/v1/namespaces/default/pods", json=_pod("p1", **{READY_DELAY_ANNOTATION: "30s"}))
    out = tmp_path / "wait.out"
    wait = _start(served, "wait", "--for=condition=Ready", "pod/p1", "--timeout=60s", out=out)
    background.append(wait)
    assert eventually(lambda: _watching(served), timeout=20), out.read_text()
    assert wait.poll() is None, out.read_text()
    _advance(served, 30)
    assert wait.wait(KUBECTL_TIMEOUT) == 0, out.read_text()
    assert out.read_text() == "pod/p1 condition met\n"


def test_wait_for_a_condition_times_out_while_it_does_not_hold(served: Served) -> None:
    with served.http() as http:
        http.post("/api/v1/namespaces/default/pods", json=_pod("p1", **{READY_DELAY_ANNOTATION: "1h"}))
    result = served.kubectl("wait", "--for=condition=Ready", "pod/p1", "--timeout=1s", check=False)
    assert result.returncode == 1
    assert "timed out waiting for the condition on pods/p1" in result.stderr


def test_delete_without_waiting_then_wait_for_delete_until_the_grace_period_ends(
    served: Served, tmp_path: Path, background: list[subprocess.Popen[str]]
) -> None:
    with served.http() as http:
        http.post("/api/v1/namespaces/default/pods", json=_pod("p1"))
    # A running pod is deleted gracefully (30 s of the world's clock): --wait=false returns at once.
    deleted = served.kubectl("delete", "pod", "p1", "--wait=false")
    assert deleted.stdout == 'pod "p1" deleted\n'
    terminating = served.kubectl_json("get", "pod", "p1")
    assert terminating["metadata"]["deletionGracePeriodSeconds"] == 30
    out = tmp_path / "wait.out"
    wait = _start(served, "wait", "--for=delete", "pod/p1", "--timeout=60s", out=out)
    background.append(wait)
    assert eventually(lambda: _watching(served), timeout=20), out.read_text()
    assert wait.poll() is None, out.read_text()
    _advance(served, 31)
    assert wait.wait(KUBECTL_TIMEOUT) == 0, out.read_text()
    assert out.read_text() == "pod/p1 condition met\n"
    missing = served.kubectl("get", "pod", "p1", check=False)
    assert 'pods "p1" not found' in missing.stderr


def test_get_watch_prints_a_row_for_each_change(
    served: Served, tmp_path: Path, background: list[subprocess.Popen[str]]
) -> None:
    with served.http() as http:
        http.post("/api/v1/namespaces/default/pods", json=_pod("p1", **{READY_DELAY_ANNOTATION: "30s"}))
    out = tmp_path / "watch.out"
    watch = _start(served, "get", "pods", "-w", out=out)
    background.append(watch)
    assert eventually(lambda: _watching(served) and "p1" in out.read_text(), timeout=20), out.read_text()
    _advance(served, 30)
    assert eventually(lambda: len(out.read_text().splitlines()) == 3, timeout=20), out.read_text()
    watch.terminate()
    rows = [line.split() for line in out.read_text().splitlines()]
    assert rows[0] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert [row[:4] for row in rows[1:]] == [["p1", "0/1", "Running", "0"], ["p1", "1/1", "Running", "0"]]
    assert rows[2][4] == "30s"  # ages are on the world's clock


def test_get_watch_only_and_all_namespaces_show_the_namespace_and_event_type(
    served: Served, tmp_path: Path, background: list[subprocess.Popen[str]]
) -> None:
    out = tmp_path / "watch.out"
    watch = _start(served, "get", "configmaps", "-A", "--watch-only", "--output-watch-events", out=out)
    background.append(watch)
    assert eventually(lambda: _watching(served), timeout=20), out.read_text()
    with served.http() as http:
        http.post("/api/v1/namespaces/kube-system/configmaps", json={"metadata": {"name": "c1"}})
        http.delete("/api/v1/namespaces/kube-system/configmaps/c1")
    assert eventually(lambda: len(out.read_text().splitlines()) == 3, timeout=20), out.read_text()
    watch.terminate()
    rows = [line.split() for line in out.read_text().splitlines()]
    assert rows[0][:3] == ["EVENT", "NAMESPACE", "NAME"]
    assert [row[:3] for row in rows[1:]] == [["ADDED", "kube-system", "c1"], ["DELETED", "kube-system", "c1"]]
