"""``lifecycle-tck conformance --target controller --profile P --command CMD``: any controller profile
against a third-party command. The reference Deployment controller run as that command
(``python -m controllers --only deployment --control stdio``) passes the rollout_deployment scenarios in
lockstep, its writes being the command's; a deliberately wrong one (the same controller that does not
pause while a hook runs) fails the rule it breaks; on wall time the rollouts that need more virtual time
than the budget did not run and the verdict is INCOMPLETE (exit 3); bad input (an unknown profile, a
command that exits, one that never answers the control protocol) gives a clear verdict in bounded time
with no process left behind."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from harness.targets.profiles import UNDER_TEST_USER
from harness.targets.report import (
    HTML_FILE,
    RESULTS_FILE,
)

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
LOCKSTEP = f"{PYTHON} -m controllers --only deployment --control stdio"
# The same, with a bug against DESIGN.md's auto-pause (tests/wrong_controllers/rollout_variants.py).
WRONG_LOCKSTEP = (f"{PYTHON} -c \"import runpy, tests.wrong_controllers.rollout_variants; "
                  f"runpy.run_module('controllers', run_name='__main__')\" --only deployment --control stdio")
WALL_CLOCK = f"{PYTHON} -m controllers --only deployment"
SCENARIOS = "RH_ORDER_001 or RH_ORDER_002 or RH_RESTART_001 or RH_FAIL_001"
RUN_TIMEOUT = 600
# examples/controller_broken/: the reference controllers with one bug chosen by the first argument.
BROKEN = f"{PYTHON} examples/controller_broken/broken_controller.py"
# Per profile: the reference controllers it runs as the third party, a few scenarios (each run stays well
# under a minute), the bug of examples/controller_broken/ against one of them, the rule the report must
# name and what its reason must say (as in examples/controller_broken/README.md).
EXAMPLES = [
    ("cluster_controller", "cluster,machineset,machinedeployment", "CL_CASCADE_001 or CL_GATE_001 or CL_GATE_002",
     "no-wait-for-workers", "CL_CASCADE_001", "before MachineDeployment default/md-0 was gone"),
    ("topology_controller", "extensionconfig,topology", "RT_BCD_001 or RT_BCD_003",
     "delete-ignores-hook", "RT_BCD_001", "the Cluster is marked ok-to-delete"),
    # Ignoring dependents shows only when the controller happens to take a prerequisite before its dependent
    # (a chain of four leaves in the right order by chance once in 24 runs): the diamond of five as well
    # makes a chance pass once in about 1,400. Either may be the one that fails, so either reason will do.
    ("addon_controller", "addons", "AD_ORDER_001 or AD_ORDER_002 or AD_CYCLE_001",
     "ignore-dependents", "AD_ORDER_00", ("removed in the order ", "which depends on it: ")),
    ("rollout_deployment", "deployment", "RH_ORDER_002", "no-pause", "RH_ORDER_002", "scaled while hooks"),
    ("rollout_statefulset", "statefulset", "RH_STS_001 or RH_STS_002",
     "no-pause", "RH_STS_001", "a Pod changed while hooks "),
    ("rollout_daemonset", "daemonset", "RH_DS_002 or RH_DS_003",
     "no-pause", "RH_DS_003", "hooks ran as"),
]
# Further bugs of examples/controller_broken/, judged like those above.
MORE_BROKEN = [
    ("cluster_controller", "cluster,machineset,machinedeployment", "", "no-topology-gate", "CL_GATE_001",
     "Deleting is"),
]
BAD_INPUT_SECONDS = 90


def _conformance(*args: str, timeout: float = RUN_TIMEOUT, env: dict[str, str] | None = None
                 ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PYTHON, "-m", "harness", "conformance", "--target", "controller", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )


def _summary(run: subprocess.CompletedProcess[str]) -> str:
    return run.stdout[run.stdout.find("Lifecycle TCK conformance"):]


def _leftovers(marker: str) -> list[str]:
    found = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True, check=True).stdout
    return [line for line in found.splitlines() if marker in line and "ps -eo" not in line]


def test_the_reference_deployment_controller_as_a_third_party_is_conformant(tmp_path: Path) -> None:
    run = _conformance("--profile", "rollout_deployment", "--stdio-control", "--command", LOCKSTEP, "-k", SCENARIOS,
                       "--report-dir", str(tmp_path))
    summary = _summary(run)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert "Verdict: CONFORMANT — rollout_deployment CONFORMANT" in summary
    document = yaml.safe_load((tmp_path / RESULTS_FILE).read_text())
    ran = [s for s in document["scenarios"] if s["status"] != "not-applicable"]
    assert len(ran) >= 4 and {s["status"] for s in ran} == {"passed"}
    assert document["target"]["profiles"] == ["rollout_deployment"]
    # The Deployment controller's writes are the command's; the in-world one was switched off.
    page = (tmp_path / HTML_FILE).read_text()
    assert f'title="{UNDER_TEST_USER}"' in page
    assert 'title="system:serviceaccount:kube-system:deployment"' not in page


@pytest.mark.parametrize(("profile", "only", "scenarios", "bug", "rule", "reason"), EXAMPLES,
                         ids=[example[0] for example in EXAMPLES])
def test_each_profiles_reference_controller_as_a_third_party_is_conformant(
        profile: str, only: str, scenarios: str, bug: str, rule: str, reason: str | tuple[str, ...]) -> None:
    command = f"{PYTHON} -m controllers --only {only} --control stdio"
    run = _conformance("--profile", profile, "--stdio-control", "--command", command, "-k", scenarios)
    summary = _summary(run)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert f"Verdict: CONFORMANT — {profile} CONFORMANT" in summary
    assert " 0 failed, 0 skipped, 0 did not run" in summary and "\n0 passed" not in summary, summary


@pytest.mark.parametrize(("profile", "only", "scenarios", "bug", "rule", "reason"), EXAMPLES + MORE_BROKEN,
                         ids=[f"{example[0]}-{example[3]}" for example in EXAMPLES + MORE_BROKEN])
def test_each_profiles_broken_example_is_not_conformant_naming_the_rule(
        profile: str, only: str, scenarios: str, bug: str, rule: str, reason: str | tuple[str, ...]) -> None:
    command = f"{BROKEN} {bug} --only {only} --control stdio"
    run = _conformance("--profile", profile, "--stdio-control", "--command", command, "-k", rule)
    summary = _summary(run)
    assert run.returncode == 1, run.stdout[-6000:] + run.stderr[-3000:]
    assert f"Verdict: NOT CONFORMANT — {profile} NOT CONFORMANT" in summary
    failed = [line for line in summary.splitlines() if line.lstrip().startswith("FAILED")]
    assert failed and all("[must]" in line for line in failed), summary
    assert any(f"({rule}" in line for line in failed), summary
    assert any(said in summary for said in ((reason,) if isinstance(reason, str) else reason)), summary


def test_the_broken_example_refuses_an_unknown_bug_listing_them() -> None:
    run = subprocess.run([*BROKEN.split(), "no-such-bug"], cwd=ROOT, capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 2
    assert "no-wait-for-workers" in run.stderr and "(cluster_controller)" in run.stderr


def test_a_third_party_that_does_not_pause_while_a_hook_runs_is_not_conformant() -> None:
    run = _conformance("--profile", "rollout_deployment", "--stdio-control", "--command", WRONG_LOCKSTEP,
                       "-k", "RH_ORDER_002", env={"LIFECYCLE_TCK_WRONG": "no-pause"})
    summary = _summary(run)
    assert run.returncode == 1, run.stdout[-6000:] + run.stderr[-3000:]
    assert "Verdict: NOT CONFORMANT" in summary
    failed = [line for line in summary.splitlines() if line.lstrip().startswith("FAILED")]
    assert len(failed) == 1 and "[must]" in failed[0] and "run_in_parallel" in failed[0], summary
    assert "invariants broken" in failed[0] and "scaled while hooks ['count', 'share'] ran" in summary


def test_on_wall_time_a_rollout_beyond_the_budget_did_not_run_and_the_verdict_is_incomplete(tmp_path: Path) -> None:
    run = _conformance("--profile", "rollout_deployment", "--command", WALL_CLOCK, "--wall-budget", "2",
                       "-k", "RH_ORDER_001", "--report-dir", str(tmp_path))
    summary = _summary(run)
    assert run.returncode == 3, run.stdout[-6000:] + run.stderr[-3000:]
    assert "Verdict: INCOMPLETE — rollout_deployment INCOMPLETE" in summary
    assert "0 passed, 0 failed, 0 skipped, 1 did not run" in summary
    assert "1 × the scenario lets more than 2 s of virtual time pass" in summary


def test_an_unknown_profile_is_a_usage_error_naming_the_profiles() -> None:
    run = _conformance("--profile", "rollouts", "--command", LOCKSTEP)
    assert run.returncode == 2
    assert "unknown profile 'rollouts'" in run.stderr and "rollout_deployment" in run.stderr
    run = _conformance("--profile", "runtime_extension", "--command", LOCKSTEP)
    assert run.returncode == 2 and "is not a controller profile (its target is --target extension)" in run.stderr
    run = _conformance("--command", LOCKSTEP)
    assert run.returncode == 2 and "--target controller needs --profile P" in run.stderr


def test_a_command_that_exits_is_not_conformant_in_bounded_time_leaving_no_process() -> None:
    marker = f"32{os.getpid() % 1000:03d}"
    command = f"sh -c \"sleep {marker} & echo cannot reach my cluster >&2; exit 4\""
    started = time.monotonic()
    run = _conformance("--profile", "rollout_statefulset", "--stdio-control", "--command", command, "-k", "RH_STS_001",
                       timeout=BAD_INPUT_SECONDS * 2)
    assert time.monotonic() - started < BAD_INPUT_SECONDS
    summary = _summary(run)
    assert run.returncode == 1, summary
    assert "exit code 4" in summary and "cannot reach my cluster" in summary
    assert _leftovers(f"sleep {marker}") == []


def test_a_command_that_never_answers_the_control_protocol_fails_in_bounded_time_leaving_no_process() -> None:
    marker = f"33{os.getpid() % 1000:03d}"
    started = time.monotonic()
    run = _conformance("--profile", "rollout_daemonset", "--stdio-control", "--command", f"sleep {marker}",
                       "-k", "RH_DS_002", timeout=BAD_INPUT_SECONDS * 2)
    assert time.monotonic() - started < BAD_INPUT_SECONDS
    summary = _summary(run)
    assert run.returncode == 1, summary
    assert "did not answer" in summary
    assert _leftovers(f"sleep {marker}") == []
