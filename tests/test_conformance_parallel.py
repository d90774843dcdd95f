"""``lifecycle-tck conformance --jobs N``: the scenarios spread over worker processes give the same
summary, verdict, exit code and reports as one process (harness/targets/workers.py); a failing scenario
is NOT CONFORMANT both ways; a worker that dies makes the run NOT CONFORMANT; which --jobs a target gets."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.__main__ import main, resolve_jobs, usable_cpus
from harness.targets import report
from harness.targets.conformance import _Outcomes

ROOT = Path(__file__).resolve().parent.parent
RUN_TIMEOUT = 300
# Outline examples (the drain label's values, a MachineDrainRule's refused values), a plain scenario, and
# scenarios of two profiles the run below does not claim (cluster_controller, hic): not applicable.
SELECTION = ("clusterxk8siodrainvalue or machinedrainrule_with_an_order or pods_whose_daemonset_is_gone "
             "or scaledown_waits_for_its_predrain or predrain_hic_removes")
# The run claims one profile, as a third-party machine controller's would: the claimed profiles reach the
# workers from the controller (the reference target claims every profile, so nothing would be deselected).
CLAIMING = ("import sys; from harness.targets import conformance; "
            "conformance.TARGET_PROFILES['reference'] = ('machine_controller',); "
            "from harness.__main__ import main; sys.exit(main(sys.argv[1:]))")
# A wrong machine controller (README "Mutation self-test"): the drain label is ignored.
WRONG = "drain-label-ignored"
# What a serial and a parallel run may differ in: how long things took, when, and where.
VOLATILE = ("duration", "time", "timestamp", "hostname")


class Run:
    """One ``lifecycle-tck conformance`` in a child process: exit code, output, report folder."""

    def __init__(self, folder: Path, jobs: int, env: dict[str, str] | None = None, keyword: str = SELECTION) -> None:
        self.folder = folder
        argv = ["conformance", "-k", keyword, "--report-dir", str(folder), "--jobs", str(jobs)]
        done = subprocess.run([sys.executable, "-c", CLAIMING, *argv], cwd=ROOT, capture_output=True, text=True,
                              timeout=RUN_TIMEOUT, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
        self.code, self.out = done.returncode, done.stdout + done.stderr

    def summary(self) -> list[str]:
        """The runner's summary (after pytest's own output): table, scenario lines, counts, verdict."""
        lines = self.out.splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("Lifecycle TCK conformance"))
        return [line for line in lines[start:] if not line.startswith("Reports:")]

    def results(self) -> dict[str, Any]:
        return dict(yaml.safe_load((self.folder / report.RESULTS_FILE).read_text()))

    def junit(self) -> tuple[dict[str, str], set[tuple[str, str, str]]]:
        """junit.xml: the suite's properties and its test cases (class, name, outcome)."""
        suite = ET.parse(self.folder / report.JUNIT_FILE).getroot().find("testsuite")
        assert suite is not None
        properties = {p.get("name", ""): p.get("value", "") for p in suite.iter("property")}
        cases = set()
        for case in suite.iter("testcase"):
            outcome = next((child.tag for child in case if child.tag in ("failure", "error", "skipped")), "passed")
            cases.add((case.get("classname", ""), case.get("name", ""), outcome))
        return properties, cases

    def cucumber(self) -> dict[tuple[str, str], list[tuple[str, str, str]]]:
        """cucumber.json: each scenario's steps and their statuses."""
        features = json.loads((self.folder / report.CUCUMBER_FILE).read_text())
        return {(f["uri"], e["id"]): [(s["keyword"], s["name"], s["result"]["status"]) for s in e["steps"]]
                for f in features for e in f["elements"]}

    def timelines(self) -> dict[str, int]:
        """report.html: how many writes each scenario's timeline shows (its generated names differ run to run)."""
        html = (self.folder / report.HTML_FILE).read_text()
        found = re.findall(r'<details class="scenario" id="([^"]+)">(.*?)(?=<details class="scenario"|$)', html, re.S)
        return {nodeid: int(m.group(1)) if (m := re.search(r"Timeline: (\d+) writes", body)) else -1
                for nodeid, body in found}


def _without(data: Any, keys: tuple[str, ...]) -> Any:
    if isinstance(data, dict):
        return {k: _without(v, keys) for k, v in data.items() if k not in keys}
    if isinstance(data, list):
        return [_without(v, keys) for v in data]
    return data


@pytest.fixture(scope="module")
def serial(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return Run(tmp_path_factory.mktemp("jobs1"), jobs=1)


@pytest.fixture(scope="module")
def parallel(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return Run(tmp_path_factory.mktemp("jobs2"), jobs=2)


def test_jobs_2_prints_the_same_summary_and_verdict_as_one_process(serial: Run, parallel: Run) -> None:
    assert serial.code == 0, serial.out
    assert "bringing up nodes" in parallel.out  # it did run on workers
    assert parallel.code == serial.code
    assert parallel.summary() == serial.summary()
    assert any("not applicable" in line and " 0 not applicable" not in line for line in serial.summary())


def test_jobs_2_writes_the_same_results_yaml_as_one_process(serial: Run, parallel: Run) -> None:
    results = serial.results()
    statuses = {s["status"] for s in results["scenarios"]}
    assert {report.PASSED, report.NOT_APPLICABLE} <= statuses
    assert any("[" in s["id"] and s["steps"] for s in results["scenarios"])  # outline examples, with their steps
    assert _without(parallel.results(), VOLATILE) == _without(results, VOLATILE)


def test_jobs_2_writes_the_same_junit_cases_and_verdict_properties_as_one_process(serial: Run, parallel: Run) -> None:
    properties, cases = serial.junit()
    assert properties["verdict"] == "CONFORMANT"
    assert parallel.junit() == (properties, cases)


def test_jobs_2_writes_the_same_cucumber_steps_as_one_process(serial: Run, parallel: Run) -> None:
    steps = serial.cucumber()
    assert steps and all(statuses for statuses in steps.values())
    assert parallel.cucumber() == steps


def test_jobs_2_keeps_each_scenarios_timeline_as_one_process(serial: Run, parallel: Run) -> None:
    timelines = serial.timelines()
    assert timelines and max(timelines.values()) > 0
    assert parallel.timelines() == timelines


def test_a_wrong_controller_is_not_conformant_with_the_same_failing_scenarios_with_jobs_2(
        tmp_path: Path) -> None:
    env = {"PYTEST_PLUGINS": "tests.wrong_controllers.plugin", "LIFECYCLE_TCK_WRONG": WRONG}
    keyword = "clusterxk8siodrainvalue or pods_whose_daemonset_is_gone"
    one, two = (Run(tmp_path / f"jobs{n}", jobs=n, env=env, keyword=keyword) for n in (1, 2))
    assert one.code == 1, one.out
    assert "Verdict: NOT CONFORMANT" in one.summary()[-1]
    failed = sorted(s["id"] for s in one.results()["scenarios"] if s["status"] == report.FAILED)
    assert failed
    assert two.code == 1
    assert sorted(s["id"] for s in two.results()["scenarios"] if s["status"] == report.FAILED) == failed
    assert two.summary() == one.summary()
    assert _without(two.results(), VOLATILE) == _without(one.results(), VOLATILE)


def test_a_worker_that_dies_makes_the_run_not_conformant_naming_its_scenario(tmp_path: Path) -> None:
    dying = "pods_whose_daemonset_is_gone"
    run = Run(tmp_path, jobs=2, env={"PYTEST_PLUGINS": "tests.dying_worker", "LIFECYCLE_TCK_DIE_IN": dying},
              keyword="clusterxk8siodrainvalue or pods_whose_daemonset_is_gone")
    assert run.code == 1, run.out
    verdict = run.summary()[-1]
    assert verdict.startswith("Verdict: NOT CONFORMANT") and "a worker process died while running" in verdict
    scenarios = {s["id"]: s for s in run.results()["scenarios"]}
    died = [s for nodeid, s in scenarios.items() if dying in nodeid]
    assert len(died) == 1 and died[0]["status"] == report.FAILED and "crashed" in died[0]["reason"]
    assert died[0]["level"] == "must"  # its entry came over before it died
    # The other scenarios still ran, on a worker started in its place or on the other.
    others = [s["status"] for nodeid, s in scenarios.items() if dying not in nodeid]
    assert others.count(report.PASSED) >= 4 and set(others) <= {report.PASSED, report.NOT_APPLICABLE}


def test_a_failed_report_of_a_scenario_never_seen_is_a_failed_scenario() -> None:
    """A worker that dies in a scenario's setup sends nothing about it: it still counts, as failed."""
    outcomes = _Outcomes(behaviors=set(), profiles=set(), claimed=None, target="reference")
    nodeid = "features/test_machine_deletion_scenarios.py::test_x"
    outcomes.pytest_runtest_logreport(pytest.TestReport(nodeid, ("x", None, "x"), {}, "failed", "crashed", "???"))
    assert outcomes.results[nodeid]["status"] == report.FAILED
    assert outcomes.results[nodeid]["area"] == "machine_deletion"


def test_the_parameters_handed_to_a_worker_rebuild_the_same_outcomes() -> None:
    outcomes = _Outcomes(behaviors={"MD_1"}, profiles={"hic", "apiserver"}, claimed=("hic",), target="hic")
    again = _Outcomes.from_parameters(json.loads(json.dumps(outcomes.parameters())))
    assert again == outcomes


@pytest.mark.parametrize(("given", "target", "expected"), [
    (None, "reference", usable_cpus()),
    ("auto", "reference", usable_cpus()),
    (None, "hic", 1),
    (None, "reference-process", 1),
    (None, "controller", 1),
    ("auto", "machine-controller", usable_cpus()),
    (3, "extension", 3),
    (1, "reference", 1),
])
def test_jobs_is_auto_for_the_reference_target_and_1_for_the_others(given: Any, target: str, expected: int) -> None:
    assert resolve_jobs(given, target) == expected


def test_auto_is_the_cpus_this_process_may_use() -> None:
    assert usable_cpus() == len(os.sched_getaffinity(0))


@pytest.mark.parametrize("jobs", ["0", "-1", "two", "1.5"])
def test_jobs_that_are_not_a_positive_number_or_auto_are_a_usage_error(
        jobs: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["conformance", "--jobs", jobs])
    assert exited.value.code == 2
    assert "not a number of jobs" in capsys.readouterr().err
