"""The README's walkthrough "Try the Runtime SDK hooks with kubectl", run as a new user runs it: the same
commands (the README's code blocks must list exactly :data:`COMMANDS`), with /usr/bin/kubectl and curl,
against ``python -m harness serve`` and ``python -m harness extension`` as real processes on free ports,
in a temporary directory. Every wait has a wall-clock deadline and both processes are always stopped.

The commands are the README's with only where things are changed: ``.venv/bin/python`` is this Python,
``--port 8001``/``--port 9443`` are ``--port 0`` (the printed URLs are used), ``./kubeconfig``,
``./ca.crt`` and ``./ext-certs`` are in the temporary directory, ``examples/`` is the repository's, and
kubectl gets a cache directory of its own.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SECTION = "### Try the Runtime SDK hooks with kubectl"
KUBECTL = "/usr/bin/kubectl"
CURL = "/usr/bin/curl"
START_SECONDS = 30.0
STOP_SECONDS = 15.0
COMMAND_SECONDS = 60.0
STATE_SECONDS = 30.0
POLL_SECONDS = 0.1

SERVE = ".venv/bin/python -m harness serve --port 8001 --kubeconfig ./kubeconfig &"
EXTENSION = ".venv/bin/python -m harness extension --port 9443 --cert-dir ./ext-certs --kubeconfig ./kubeconfig &"
EXPORT = "export KUBECONFIG=$PWD/kubeconfig"
REGISTER = "kubectl apply -f ./ext-certs/extensionconfig.yaml"
DISCOVERED = "kubectl wait --for=condition=Discovered extensionconfig/test-extension --timeout=30s"
APPLY_CLASS = "kubectl apply -f examples/runtime_walkthrough/clusterclass.yaml"
APPLY_CLUSTER = "kubectl apply -f examples/runtime_walkthrough/cluster.yaml"
ADVANCE_10 = """curl --cacert ./ca.crt --json '{"seconds": 10}' https://127.0.0.1:8001/harness/v1/clock/advance"""
INITIALIZED = "kubectl wait --for=condition=ControlPlaneInitialized cluster/c1 --timeout=30s"
GET_ALL = "kubectl get cluster,kubeadmcontrolplane,machinedeployment,machine"
CONFIGMAP = "c1-test-extension-test-extension-hookresponses"
PATCH = f"kubectl patch configmap {CONFIGMAP} --type merge --patch-file examples/runtime_walkthrough/"
BLOCK_UPGRADE = PATCH + "block-upgrade.yaml"
UPGRADE = """kubectl patch cluster c1 --type merge -p '{"spec":{"topology":{"version":"v1.32.0"}}}'"""
TOPOLOGY_MESSAGE = ("kubectl get cluster c1 -o "
                    """jsonpath='{.status.conditions[?(@.type=="TopologyReconciled")].message}'""")
CP_VERSION = "kubectl get kubeadmcontrolplane c1 -o jsonpath='{.spec.version}'"
RELEASE_UPGRADE = PATCH + "release-upgrade.yaml"
ADVANCE_30 = """curl --cacert ./ca.crt --json '{"seconds": 30}' https://127.0.0.1:8001/harness/v1/clock/advance"""
CP_UPGRADED = "kubectl wait --for=jsonpath='{.spec.version}'=v1.32.0 kubeadmcontrolplane/c1 --timeout=30s"
ADVANCE_60 = """curl --cacert ./ca.crt --json '{"seconds": 60}' https://127.0.0.1:8001/harness/v1/clock/advance"""
MD_UPGRADED = ("kubectl wait --for=jsonpath='{.spec.template.spec.version}'=v1.32.0 machinedeployment/c1-md-0 "
               "--timeout=30s")
RECONCILED = "kubectl wait --for=condition=TopologyReconciled cluster/c1 --timeout=30s"
GET_ANSWERS = f"kubectl get configmap {CONFIGMAP} -o yaml"
BLOCK_DELETE = PATCH + "block-delete.yaml"
DELETE = "kubectl delete cluster c1 --wait=false"
DELETING_MESSAGE = ("kubectl get cluster c1 -o "
                    """jsonpath='{.status.v1beta2.conditions[?(@.type=="Deleting")].message}'""")
GET_MACHINES = "kubectl get machines"
RELEASE_DELETE = PATCH + "release-delete.yaml"
ADVANCE_120 = """curl --cacert ./ca.crt --json '{"seconds": 120}' https://127.0.0.1:8001/harness/v1/clock/advance"""
GONE = "kubectl wait --for=delete cluster/c1 --timeout=30s"

# Every line of the README's code blocks, in order.
COMMANDS = [
    SERVE, EXTENSION, EXPORT, REGISTER, DISCOVERED,
    APPLY_CLASS, APPLY_CLUSTER, ADVANCE_10, INITIALIZED, GET_ALL,
    BLOCK_UPGRADE, UPGRADE, TOPOLOGY_MESSAGE, CP_VERSION,
    RELEASE_UPGRADE, ADVANCE_30, CP_UPGRADED, ADVANCE_60, MD_UPGRADED, RECONCILED, GET_ANSWERS,
    BLOCK_DELETE, DELETE, DELETING_MESSAGE, GET_MACHINES, RELEASE_DELETE, ADVANCE_120, GONE,
]

SERVING = re.compile(r"Serving the fake Kubernetes API at (https://\S+)")
EXTENSION_URL = re.compile(r"Runtime Extension: (https://\S+)")
PICKED_UP = f"answering from the ConfigMap default/{CONFIGMAP}"


def readme_commands() -> list[str]:
    """The lines of the code blocks of the walkthrough's README section."""
    text = README.read_text()
    start = text.index(SECTION)
    end = text.index("\n### ", start + len(SECTION))
    lines: list[str] = []
    inside = False
    for line in text[start:end].splitlines():
        if line.startswith("```"):
            inside = not inside
        elif inside and line.strip():
            lines.append(line)
    return lines


@dataclass
class Process:
    """A background process whose output lines are collected by a thread."""

    popen: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)
    # Notified at each line and when the output ends.
    changed: threading.Condition = field(default_factory=threading.Condition)
    ended: bool = False

    def __post_init__(self) -> None:
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            with self.changed:
                self.lines.append(line.rstrip("\n"))
                self.changed.notify_all()
        with self.changed:
            self.ended = True
            self.changed.notify_all()

    def output(self) -> list[str]:
        with self.changed:
            return list(self.lines)

    def wait_for(self, check: Callable[[list[str]], bool], what: str, seconds: float) -> list[str]:
        """The output once ``check`` holds for it; AssertionError after ``seconds`` or if the output ended."""
        with self.changed:
            if self.changed.wait_for(lambda: check(list(self.lines)) or self.ended, seconds) and check(self.lines):
                return list(self.lines)
        raise AssertionError(f"{what} did not happen within {seconds} s; output:\n" + "\n".join(self.output()))

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(STOP_SECONDS)


@dataclass
class Walkthrough:
    """Runs the README's commands in ``folder``."""

    folder: Path
    processes: list[Process] = field(default_factory=list)
    server_url: str = ""

    @property
    def kubeconfig(self) -> Path:
        return self.folder / "kubeconfig"

    def localize(self, command: str) -> list[str]:
        """The README command as it runs here (see the module docstring)."""
        text = (command.removesuffix("&").strip()
                .replace(".venv/bin/python", sys.executable)
                .replace("--port 8001", "--port 0").replace("--port 9443", "--port 0")
                .replace("./kubeconfig", str(self.kubeconfig))
                .replace("./ext-certs", str(self.folder / "ext-certs"))
                .replace("./ca.crt", str(self.folder / "ca.crt"))
                .replace(" examples/", f" {ROOT / 'examples'}/")
                .replace("https://127.0.0.1:8001", self.server_url))
        argv = shlex.split(text)
        if argv[0] == "kubectl":
            return [KUBECTL, "--cache-dir", str(self.folder / "kubectl-cache"), *argv[1:]]
        if argv[0] == "curl":
            return [CURL, "--silent", "--show-error", "--fail", "--max-time", str(int(COMMAND_SECONDS)), *argv[1:]]
        return argv

    def env(self) -> dict[str, str]:
        return {**os.environ, "KUBECONFIG": str(self.kubeconfig), "PYTHONPATH": str(ROOT)}

    def start(self, command: str) -> Process:
        assert command.endswith("&"), command
        process = Process(subprocess.Popen(self.localize(command), cwd=ROOT, env=self.env(), text=True,
                                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
        self.processes.append(process)
        return process

    def run(self, command: str) -> str:
        """Run a README command; its output (AssertionError when it fails)."""
        assert command in COMMANDS, command
        result = subprocess.run(self.localize(command), cwd=ROOT, env=self.env(), capture_output=True, text=True,
                                timeout=COMMAND_SECONDS)
        assert result.returncode == 0, f"{command}\nexit {result.returncode}\n{result.stdout}\n{result.stderr}"
        return result.stdout

    def run_until(self, command: str, expected: str) -> str:
        """Run a read-only README command until it prints ``expected`` (bounded)."""
        deadline = time.monotonic() + STATE_SECONDS
        while True:
            output = self.run(command)
            if output.strip() == expected or time.monotonic() > deadline:
                assert output.strip() == expected, f"{command} printed {output!r}, expected {expected!r}"
                return output
            time.sleep(POLL_SECONDS)

    def stop(self) -> None:
        for process in reversed(self.processes):
            process.stop()


@pytest.fixture
def walkthrough(tmp_path: Path) -> Iterator[Walkthrough]:
    """A temporary directory to run the walkthrough in; its processes are stopped at the end, always."""
    if not Path(KUBECTL).exists() or not Path(CURL).exists():
        if os.environ.get("CI"):  # CI machines have both: a walkthrough not run there must not look passed
            pytest.fail("the walkthrough needs /usr/bin/kubectl and /usr/bin/curl, and CI has them")
        pytest.skip("the walkthrough needs /usr/bin/kubectl and /usr/bin/curl")
    run = Walkthrough(tmp_path)
    try:
        yield run
    finally:
        run.stop()


def test_the_readme_walkthrough_lists_exactly_the_commands_this_test_runs() -> None:
    assert readme_commands() == COMMANDS


def test_the_example_files_the_walkthrough_names_exist() -> None:
    for command in COMMANDS:
        for word in shlex.split(command.removesuffix("&")):
            if word.startswith("examples/"):
                assert (ROOT / word).is_file(), word


def _picked_up(count: int) -> Callable[[list[str]], bool]:
    return lambda lines: sum(PICKED_UP in line for line in lines) >= count


def test_a_new_user_registers_the_extension_and_watches_hooks_hold_and_release_a_cluster(
        walkthrough: Walkthrough) -> None:
    run = walkthrough
    server = run.start(SERVE)
    printed = server.wait_for(lambda lines: any(SERVING.search(line) for line in lines), "serve printing its URL",
                              START_SECONDS)
    run.server_url = next(m.group(1) for m in map(SERVING.search, printed) if m)
    extension = run.start(EXTENSION)
    extension.wait_for(lambda lines: any(EXTENSION_URL.search(line) for line in lines), "the extension starting",
                       START_SECONDS)
    assert (run.folder / "ext-certs" / "extensionconfig.yaml").is_file()

    run.run(REGISTER)
    run.run(DISCOVERED)
    run.run(APPLY_CLASS)
    run.run(APPLY_CLUSTER)
    assert json.loads(run.run(ADVANCE_10))["followsWallTime"] is True
    run.run(INITIALIZED)
    overview = run.run(GET_ALL)
    assert "c1-md-0" in overview and "v1.31.0" in overview, overview
    # The extension made the Cluster's ConfigMap at the first call and read it.
    extension.wait_for(_picked_up(1), "the extension reading the Cluster's ConfigMap", STATE_SECONDS)

    # BeforeClusterUpgrade blocks the upgrade.
    run.run(BLOCK_UPGRADE)
    extension.wait_for(_picked_up(2), "the extension picking up block-upgrade.yaml", STATE_SECONDS)
    run.run(UPGRADE)
    run.run_until(TOPOLOGY_MESSAGE, 'hook "BeforeClusterUpgrade" is blocking: backing up the metrics database')
    assert run.run(CP_VERSION).strip() == "v1.31.0"

    # Released: the control plane, then the workers, then TopologyReconciled True.
    run.run(RELEASE_UPGRADE)
    extension.wait_for(_picked_up(3), "the extension picking up release-upgrade.yaml", STATE_SECONDS)
    run.run(ADVANCE_30)
    run.run(CP_UPGRADED)
    run.run(ADVANCE_60)
    run.run(MD_UPGRADED)
    run.run(RECONCILED)
    # The extension writes what it answered at its next sync, within a second.
    recorded = ("AfterControlPlaneUpgrade-actualResponseStatus", "AfterClusterUpgrade-actualResponseStatus")
    deadline = time.monotonic() + STATE_SECONDS
    while not all(key in (answers := yaml.safe_load(run.run(GET_ANSWERS))["data"]) for key in recorded):
        assert time.monotonic() < deadline, f"the ConfigMap does not record the upgrade's hooks: {answers}"
        time.sleep(POLL_SECONDS)
    assert answers["AfterControlPlaneUpgrade-actualResponseStatus"] == "Status: Success, RetryAfterSeconds: 0"
    assert answers["AfterClusterUpgrade-actualResponseStatus"] == "Success"

    # BeforeClusterDelete holds the deletion; released, the Cluster goes.
    run.run(BLOCK_DELETE)
    extension.wait_for(_picked_up(4), "the extension picking up block-delete.yaml", STATE_SECONDS)
    run.run(DELETE)
    run.run_until(DELETING_MESSAGE, "Waiting for BeforeClusterDelete hook")
    machines = run.run(GET_MACHINES)
    assert machines.count("Running") == 3 and "Deleting" not in machines, machines
    run.run(RELEASE_DELETE)
    extension.wait_for(_picked_up(5), "the extension picking up release-delete.yaml", STATE_SECONDS)
    run.run(ADVANCE_120)
    run.run(GONE)
