"""``lifecycle-tck conformance --target machine-controller``: the reference machine controller run as the
command under test passes the ``@machine_controller`` scenarios in lockstep (``--stdio-control``); on wall
time the scenarios that need more virtual time than it can be given did not run, never passed, and the
verdict is INCOMPLETE (exit 3);
and a command that is missing, not found, or exits at once gives a clear verdict in bounded time with
no process left behind.

The whole profile in lockstep runs too (the command for each scenario started while the one before
runs, its reads served by its watches and its repeated reads answered once per settle): 153 scenarios,
about 2 minutes on a 2-CPU machine (see benchmarks/README.md); CI runs it as a step of its own
(`.ci/run`, README "Continuous integration"), `make test` does not (it is `slow`, tests/conftest.py).
The other runs select a representative subset of 21 (about a minute): one or more scenarios of every
feature file of features/machine_deletion/ (hooks at both lifecycle points and their rules, the drain
and its timeouts, PDBs, eviction failures, drain rules, unreachable Nodes, KCP, volume detach, Node
deletion, observability, deletion phases, user stories), including ones that let days of virtual time
pass.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from harness.targets.machine_controller import MACHINE_CONTROLLER_USER, WALL_BUDGET_SECONDS
from harness.targets.report import HTML_FILE, RESULTS_FILE

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
REFERENCE_LOCKSTEP = f"{PYTHON} -m controllers --only machine --control stdio"
REFERENCE_WALL_CLOCK = f"{PYTHON} -m controllers --only machine"
RUN_TIMEOUT = 600
# The whole profile: about 2 minutes on 2 CPUs (2026-11-24), 4-5 under heavy load; a hung run is cut off
# well before CI's limit.
WHOLE_PROFILE_TIMEOUT = 900
# Bad input ends within this much wall time (a scenario fails as soon as the command is seen gone).
BAD_INPUT_SECONDS = 60
SUBSET = " or ".join([
    "removing_one_of_several",  # hook_rules: both lifecycle points, minutes of waiting
    "days_spent_waiting_for_a_predrain_hook",  # days of virtual time
    "without_nodedraintimeout_a_blocked_drain_goes_on",  # drain timeouts
    "budget_protects_is_not_evicted",  # drain_pdb
    "conditions_say_which_budget",
    "terminating_namespace_is_not_evicted",  # drain_eviction_failures
    "pods_whose_daemonset_is_gone",  # drain_pod_categories
    "waitcompleted_rule_selects",  # drain_rules
    "drained_in_batches_by_order",
    "still_protects_the_pods_of_an_unreachable",  # drain_unreachable_node
    "no_kubeadmcontrolplane_owns",  # kcp
    "nodedeletiontimeout_defaults",  # node_deletion
    "node_is_deleted_then_the_machine_goes",
    "names_them_sorted",  # observability
    "marks_it_for_deletion_and_its_finalizer",  # deletion_phases
    "volume_still_attached_to_the_node_holds",  # volume_detach
    "removing_the_last_predrain_hook_starts",  # pre_drain_hooks
    "preterminate_hook_keeps_the_infrastructure_machine",  # pre_terminate_hooks
    "own_controller_behind_a_predrain_hook",  # user_stories
])
HIC_SCENARIO = "alone_while_the_machine_is_not_being_deleted"


def _conformance(*args: str, timeout: float = RUN_TIMEOUT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PYTHON, "-m", "harness", "conformance", "--target", "machine-controller", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def _summary(run: subprocess.CompletedProcess[str]) -> str:
    return run.stdout[run.stdout.find("Lifecycle TCK conformance"):]


def _results(folder: Path) -> dict[str, dict[str, object]]:
    document = yaml.safe_load((folder / RESULTS_FILE).read_text())
    return {str(s["id"]): s for s in document["scenarios"]}


def _leftovers(marker: str) -> list[str]:
    """Processes whose command line contains ``marker`` (other than this look itself)."""
    found = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True, check=True).stdout
    return [line for line in found.splitlines() if marker in line and "ps -eo" not in line]


def test_the_reference_machine_controller_as_the_command_passes_in_lockstep(tmp_path: Path) -> None:
    run = _conformance("--stdio-control", "--command", REFERENCE_LOCKSTEP, "-k", f"{SUBSET} or {HIC_SCENARIO}",
                       "--report-dir", str(tmp_path))
    summary = _summary(run)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    results = _results(tmp_path)
    ran = {k: s for k, s in results.items() if s["status"] != "not-applicable"}
    assert len(ran) >= 20, sorted(results)
    assert {s["status"] for s in ran.values()} == {"passed"}, summary
    assert all(s["profile"] == ["machine_controller"] and s["area"] == "machine_deletion" for s in ran.values())
    assert f"{len(ran)} passed, 0 failed, 0 skipped" in summary
    # A scenario of another profile is reported not applicable, with the reason.
    hic = next(s for k, s in results.items() if HIC_SCENARIO in k)
    assert hic["status"] == "not-applicable"
    assert hic["reason"] == "profile hic is not claimed by target machine-controller"
    # The Machines were deleted by the command, not by an in-world reference machine controller.
    page = (tmp_path / HTML_FILE).read_text()
    assert f'title="{MACHINE_CONTROLLER_USER}"' in page
    assert 'title="system:serviceaccount:kube-system:machine"' not in page


def test_the_reference_machine_controller_as_the_command_passes_the_whole_profile_in_lockstep() -> None:
    # No --report-dir: the report's timelines (a diff of every write) would cost about as much again as
    # the scenarios; the 21-scenario run above checks the report. The summary says what ran and passed.
    run = _conformance("--stdio-control", "--command", REFERENCE_LOCKSTEP, timeout=WHOLE_PROFILE_TIMEOUT)
    summary = _summary(run)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert "Verdict: CONFORMANT" in summary
    # Every scenario of the profile ran (the profile had 149 when this test was written) and passed; the
    # others were not applicable (not run), so the only area with results is the machine deletion's.
    counts = re.search(r"^(\d+) passed, 0 failed, 0 skipped, 0 did not run, \d+ not applicable$", summary, re.M)
    assert counts is not None and int(counts.group(1)) >= 149, summary
    assert re.search(r"^  machine_controller: CONFORMANT \(\d+ MUST passed, 0 failed, 0 did not run\)$", summary,
                     re.M), summary
    areas = [line.split()[0] for line in summary.splitlines()[2:] if re.match(r"^  [a-z_]+ +(\d+/\d+|-) ", line)]
    assert areas == ["machine_deletion"], summary


def test_on_wall_time_scenarios_needing_more_virtual_time_did_not_run_and_the_verdict_is_incomplete(
    tmp_path: Path,
) -> None:
    quick = "a_machine_that_is_not_being_deleted_says_so or marks_it_for_deletion_and_its_finalizer"
    slow = "removing_one_of_several"  # "has been waiting for its hooks for 5 minutes"
    run = _conformance("--command", REFERENCE_WALL_CLOCK, "-k", f"{quick} or {slow}", "--report-dir", str(tmp_path))
    summary = _summary(run)
    assert run.returncode == 3, run.stdout[-6000:] + run.stderr[-3000:]
    assert "2 passed, 0 failed, 0 skipped, 2 did not run, 0 not applicable" in summary
    assert "Verdict: INCOMPLETE — machine_controller INCOMPLETE" in summary
    assert "machine_controller: INCOMPLETE (1 MUST passed, 0 failed, 2 did not run); did not run: " in summary
    assert f"× the scenario lets more than {WALL_BUDGET_SECONDS:.0f} s of virtual time pass" in summary
    document = yaml.safe_load((tmp_path / RESULTS_FILE).read_text())
    assert document["verdict"] == "INCOMPLETE"
    # One of the quick scenarios is a SHOULD: the MUST counts leave it out.
    assert document["profiles"]["machine_controller"]["must"] == {"passed": 1, "failed": 0, "not-run": 2}
    for key, scenario in _results(tmp_path).items():
        if slow not in key:
            assert scenario["status"] == "passed", key
            continue
        assert scenario["status"] == "not-run"
        assert str(scenario["reason"]).startswith(
            f"the scenario lets more than {WALL_BUDGET_SECONDS:.0f} s of virtual time pass (this step 300 s")
        steps = [step["status"] for step in scenario["steps"]]  # type: ignore[union-attr]
        assert "skipped" in steps and steps[-1] == "not run" and "failed" not in steps


@pytest.mark.parametrize("mode", [["--stdio-control"], []], ids=["lockstep", "wall-clock"])
def test_a_command_that_exits_at_once_fails_with_its_exit_code_in_bounded_time_leaving_no_process(
    mode: list[str],
) -> None:
    marker = f"31{os.getpid() % 1000:03d}{len(mode)}"
    # It leaves a child behind in its process group: that must go too.
    command = f"sh -c \"sleep {marker} & echo giving up >&2; exit 3\""
    started = time.monotonic()
    run = _conformance(*mode, "--command", command, "-k", "marks_it_for_deletion_and_its_finalizer",
                       timeout=BAD_INPUT_SECONDS * 2)
    assert time.monotonic() - started < BAD_INPUT_SECONDS
    summary = _summary(run)
    assert run.returncode == 1, summary
    assert "0 passed, 1 failed" in summary
    assert "exit code 3" in summary and "giving up" in summary
    assert _leftovers(f"sleep {marker}") == []


def test_a_missing_command_is_a_usage_error() -> None:
    run = _conformance()
    assert run.returncode == 2
    assert "--target machine-controller needs --command CMD" in run.stderr


def test_the_wall_budget_is_the_users_to_choose(tmp_path: Path) -> None:
    slow = "removing_one_of_several"  # 300 s of virtual time: beyond a budget of 1 s as of 10 s
    run = _conformance("--command", REFERENCE_WALL_CLOCK, "--wall-budget", "1", "-k", slow,
                       "--report-dir", str(tmp_path))
    assert run.returncode == 3, run.stdout[-6000:]
    scenarios = list(_results(tmp_path).values())
    assert scenarios and all(s["status"] == "not-run" for s in scenarios), scenarios
    assert all(str(s["reason"]).startswith("the scenario lets more than 1 s of virtual time pass") for s in scenarios)


def test_a_command_whose_program_is_not_found_is_a_usage_error() -> None:
    run = _conformance("--command", "no-such-machine-controller --flag")
    assert run.returncode == 2
    assert "the program 'no-such-machine-controller' is not found" in run.stderr


def test_the_commands_kubeconfig_has_the_management_context_current_and_one_per_workload_cluster() -> None:
    from harness.targets.machine_controller import served_kubeconfig
    from harness.world.world import World

    world = World(controllers=[])
    world.set_base_url("http://127.0.0.1:1")
    world.add_cluster("default/c1")
    config = yaml.safe_load(served_kubeconfig(world))
    assert config["current-context"] == "management"
    assert [c["name"] for c in config["contexts"]] == ["management", "default/c1"]
    servers = {c["name"]: c["cluster"]["server"] for c in config["clusters"]}
    assert servers == {"management": "http://127.0.0.1:1", "default/c1": "http://127.0.0.1:1/clusters/default/c1"}
    assert [u["user"] for u in config["users"]] == [{"token": MACHINE_CONTROLLER_USER}]
