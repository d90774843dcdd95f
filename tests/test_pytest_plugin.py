"""The kit's pytest plugin (harness/pytest_plugin.py, entry point pytest11 ``lifecycle_tck``): a
user's tests get ``kube_world`` and ``kube_server`` with no conftest; a run that uses neither is
untouched; bad options and markers fail the test in one line."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest

from harness.pytest_plugin import CONTROLLERS_OPTION
from harness.targets.embedded import KubeServer, PluginUsageError, choose, new_world
from harness.world.world import MANAGEMENT_SIMULATORS, SIMULATORS

RUN_SECONDS = 120

USER_TESTS = '''
import os
import sys

import httpx
import pytest
import yaml


def test_a_run_without_the_fixtures_loads_nothing_of_the_kit():
    assert not [m for m in sys.modules if m.startswith(("harness.world", "harness.apiserver", "controllers"))]


def test_kube_world_serves_a_client_on_a_virtual_clock(kube_world):
    client = kube_world.client()
    client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c1", "namespace": "default"}})
    start = kube_world.now()
    kube_world.advance(30)
    assert kube_world.now() == start + 30
    assert [r["name"] for r in kube_world.audit(verb="create", resource="configmaps")] == ["c1"]


@pytest.mark.kube_controllers("none")
def test_the_marker_chooses_what_the_world_runs(kube_world):
    assert kube_world.world.simulator_names == [] and kube_world.world.controller_names == []


@pytest.mark.kube_export_kubeconfig
def test_kube_server_serves_real_clients(kube_server):
    assert os.environ["KUBECONFIG"] == str(kube_server.kubeconfig)
    config = yaml.safe_load(kube_server.kubeconfig.read_text())
    assert config["clusters"][0]["cluster"]["server"] == kube_server.url
    with httpx.Client(base_url=kube_server.url, timeout=10) as http:
        assert http.get("/api/v1/namespaces/default").json()["metadata"]["name"] == "default"
        kube_server.faults(fault="Conflict", count=1, verbs=["create"], resource="configmaps")
        body = {"metadata": {"name": "c1"}}
        assert http.post("/api/v1/namespaces/default/configmaps", json=body).status_code == 409
        assert http.post("/api/v1/namespaces/default/configmaps", json=body).status_code == 201
    before = kube_server.now()
    kube_server.advance(60)
    assert kube_server.now() >= before + 60
    assert [r["name"] for r in kube_server.audit(verb="create", resource="configmaps")] == ["c1"]


def test_kubeconfig_is_exported_only_when_asked(kube_server):
    assert os.environ.get("KUBECONFIG") != str(kube_server.kubeconfig)
'''

BAD_MARKER = '''
import pytest


@pytest.mark.kube_controllers("no-such-controller")
def test_bad_marker(kube_server):
    pass
'''


def plugin_args() -> list[str]:
    """``-p harness.pytest_plugin`` unless the kit is installed with its entry point (then pytest loads it)."""
    names = {ep.name for ep in metadata.entry_points(group="pytest11")}
    return [] if "lifecycle_tck" in names else ["-p", "harness.pytest_plugin"]


def run_user_tests(folder: Path, source: str, *options: str) -> subprocess.CompletedProcess[str]:
    (folder / "test_user.py").write_text(textwrap.dedent(source))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parent.parent),
                                                           os.environ.get("PYTHONPATH", "")])}
    env.pop("KUBECONFIG", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:randomly",
         *plugin_args(), *options, "test_user.py"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=RUN_SECONDS,
    )


def test_a_users_tests_get_kube_world_and_kube_server_without_a_conftest(tmp_path: Path) -> None:
    result = run_user_tests(tmp_path, USER_TESTS)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "5 passed" in result.stdout


def test_a_bad_marker_fails_the_test_in_one_line_without_a_traceback(tmp_path: Path) -> None:
    result = run_user_tests(tmp_path, BAD_MARKER)
    assert result.returncode == 1
    assert "kube_server: kube_controllers: unknown controller(s) no-such-controller" in result.stdout
    assert "Traceback" not in result.stdout and "raise " not in result.stdout


def test_the_option_sets_what_every_world_runs(tmp_path: Path) -> None:
    source = '''
    def test_runs_only_the_kubelet(kube_world):
        assert kube_world.world.simulator_names == ["kubelet"] and kube_world.world.controller_names == []
    '''
    result = run_user_tests(tmp_path, source, f"{CONTROLLERS_OPTION}=kubelet")
    assert result.returncode == 0, result.stdout + result.stderr


def test_simulators_names_every_simulator_and_no_reference_controller() -> None:
    simulators, controllers = choose(["simulators"])
    assert simulators == [*SIMULATORS, *MANAGEMENT_SIMULATORS] and controllers == []
    assert choose([]) == choose(["all"])
    assert choose(["kubelet,machine"]) == (["kubelet"], ["machine"])


def test_an_unknown_name_is_a_usage_error_naming_it() -> None:
    with pytest.raises(PluginUsageError, match="unknown controller.*bogus"):
        choose(["bogus"])


def test_a_kubeconfig_that_cannot_be_written_stops_the_server_and_names_the_path(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(PluginUsageError, match=f"cannot write the kubeconfig {blocker / 'kubeconfig'}"):
        KubeServer(new_world(["none"]), blocker / "kubeconfig")
