"""``lifecycle-tck conformance --report-dir``: the results YAML, JUnit XML, Cucumber JSON and the HTML
report, the profile filter (not applicable is not passed), and a failing run's verdict."""

from __future__ import annotations

import contextlib
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.resources import features_dir
from harness.targets import conformance, report
from harness.targets.conformance import run
from harness.versions import CLUSTER_API_VERSION, KUBERNETES_VERSION, kit_version

# Two machine deletion scenarios and one API server scenario: quick, and from two areas and profiles.
MACHINE_SCENARIOS = "budget_protects_is_not_evicted or conditions_say_which_budget"
APISERVER_SCENARIO = "a_builtin_object_written_without_a_resourceversion"
SELECTION = f"{MACHINE_SCENARIOS} or {APISERVER_SCENARIO}"
MACHINE_USER = "system:serviceaccount:kube-system:machine"


class Run:
    """One conformance run: its exit code, stdout, and the report folder."""

    def __init__(self, code: int, out: str, folder: Path) -> None:
        self.code, self.out, self.folder = code, out, folder

    @property
    def results(self) -> dict[str, Any]:
        return dict(yaml.safe_load((self.folder / report.RESULTS_FILE).read_text()))

    def scenario(self, fragment: str) -> dict[str, Any]:
        matching = [s for s in self.results["scenarios"] if fragment in s["id"]]
        assert len(matching) == 1, [s["id"] for s in self.results["scenarios"]]
        return dict(matching[0])


def _run(folder: Path, capsys: pytest.CaptureFixture[str], **options: Any) -> Run:
    code = run(features=features_dir(), target="reference", report_dir=str(folder), level="may", **options)
    return Run(code, capsys.readouterr().out, folder)


@pytest.fixture(scope="module")
def passing(tmp_path_factory: pytest.TempPathFactory) -> Run:
    folder = tmp_path_factory.mktemp("reports")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = run(features=features_dir(), target="reference", report_dir=str(folder), level="may", keyword=SELECTION)
    return Run(code, out.getvalue(), folder)


def test_a_passing_run_exits_0_and_keeps_its_summary_on_stdout(passing: Run) -> None:
    assert passing.code == 0
    assert "3 passed, 0 failed, 0 skipped, 0 did not run, 0 not applicable" in passing.out
    assert "machine_deletion" in passing.out and "apiserver" in passing.out


def test_the_results_yaml_lists_every_scenario_with_its_traceability(passing: Run) -> None:
    results = passing.results
    assert results["suite"]["name"] == "lifecycle-tck" and results["suite"]["version"]
    assert results["target"] == {"name": "reference", "profiles": ["all"]}
    assert results["verdict"] == "CONFORMANT"
    assert results["summary"] == {"passed": 3, "failed": 0, "skipped": 0, "not-run": 0, "not-applicable": 0}
    assert results["profiles"]["machine_controller"] == {
        "verdict": "CONFORMANT", "must": {"passed": 2, "failed": 0, "not-run": 0}, "not-run reasons": {}}
    pdb = passing.scenario("budget_protects_is_not_evicted")
    assert pdb["name"] == "A Pod its budget protects is not evicted and the Machine keeps draining"
    assert pdb["feature"] == "A drain blocked by a PodDisruptionBudget"
    assert pdb["file"] == "machine_deletion/drain_pdb.feature" and pdb["area"] == "machine_deletion"
    assert (pdb["status"], pdb["reason"], pdb["level"]) == ("passed", "", "must")
    assert pdb["behaviors"] == ["MD_PDB_001"] and pdb["profile"] == ["machine_controller"]
    assert pdb["seed"] == ["seed_001"]
    first = {"keyword": "Given", "name": 'a Cluster "c1" whose control plane Machine "cp-0" is running',
             "status": "passed"}
    assert pdb["steps"][0] == first
    assert all(step["status"] == "passed" for step in pdb["steps"])
    assert "timeline" not in pdb  # the timeline is the HTML report's
    assert passing.scenario(APISERVER_SCENARIO)["profile"] == ["apiserver"]


def test_junit_xml_has_a_testcase_per_scenario(passing: Run) -> None:
    root = ET.parse(passing.folder / report.JUNIT_FILE).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "0", "0")
    names = {case.get("name") for case in suite.iter("testcase")}
    assert any(name and "budget_protects_is_not_evicted" in name for name in names)


def test_cucumber_json_has_the_features_scenarios_and_step_results(passing: Run) -> None:
    features = json.loads((passing.folder / report.CUCUMBER_FILE).read_text())
    scenarios = [element for feature in features for element in feature["elements"]]
    assert len(scenarios) == 3
    pdb = next(s for s in scenarios if s["name"].startswith("A Pod its budget protects"))
    assert {step["result"]["status"] for step in pdb["steps"]} == {"passed"}
    assert {"MD_PDB_001", "must", "seed_001"} <= {tag["name"] for tag in pdb["tags"]}


def test_the_html_report_shows_each_scenarios_steps_and_the_writes_it_caused(passing: Run) -> None:
    page = (passing.folder / report.HTML_FILE).read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert 'id="verdict" class="verdict-pass"' in page and "Verdict: <b>CONFORMANT</b>" in page
    for heading in ("By area", "By level", "By profile"):
        assert heading in page
    section = page[page.index('id="features/test_machine_deletion_scenarios.py::test_a_pod_its_budget'):]
    section = section[: section.index("</details></details>")]
    assert "<b>When</b> 10 minutes pass" in section
    assert "Timeline:" in section and "<th>changes</th>" in section
    # The machine controller's own writes are there, with what they changed.
    assert f'<td title="{MACHINE_USER}">machine</td>' in section  # the short name, the full one on hover
    assert "metadata.finalizers" in section or "status.conditions" in section


def test_scenarios_outside_the_targets_profiles_are_not_applicable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(conformance.TARGET_PROFILES, "reference", ("apiserver",))
    outcome = _run(tmp_path, capsys, keyword=SELECTION)
    assert outcome.code == 0  # the one claimed scenario passed
    assert outcome.results["target"]["profiles"] == ["apiserver"]
    assert outcome.results["summary"] == {"passed": 1, "failed": 0, "skipped": 0, "not-run": 0, "not-applicable": 2}
    pdb = outcome.scenario("budget_protects_is_not_evicted")
    assert pdb["status"] == "not-applicable"
    assert pdb["reason"] == "profile machine_controller is not claimed by target reference"
    assert [step["status"] for step in pdb["steps"]] == ["not run"] * len(pdb["steps"])
    assert "1 passed, 0 failed, 0 skipped, 0 did not run, 2 not applicable" in outcome.out
    suite = ET.parse(tmp_path / report.JUNIT_FILE).getroot()
    assert sum(1 for _ in suite.iter("testcase")) == 1  # deselected: never run, never counted as passed


def test_a_failing_must_scenario_fails_the_run_and_says_where(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Every read and write of the reference controllers fails: no Machine ever gets running.
    outcome = _run(tmp_path, capsys, keyword="budget_protects_is_not_evicted", chaos=1.0)
    assert outcome.code == 1
    assert outcome.results["verdict"] == "NOT CONFORMANT" and outcome.results["chaos"] == 1.0
    failed = outcome.scenario("budget_protects_is_not_evicted")
    assert failed["status"] == "failed"
    assert "the world did not bring about" in failed["reason"]
    statuses = [step["status"] for step in failed["steps"]]
    assert statuses[0] == "failed" and set(statuses[1:]) == {"not run"}
    assert "FAILED   [must]" in outcome.out
    page = (tmp_path / report.HTML_FILE).read_text()
    assert "Verdict: <b>NOT CONFORMANT</b>" in page and " open><summary><span class=\"failed\">[failed]</span>" in page


def test_every_report_names_the_kit_and_the_kubernetes_and_cluster_api_versions(passing: Run) -> None:
    suite = passing.results["suite"]
    assert (suite["version"], suite["kubernetes"], suite["clusterAPI"]) == (
        kit_version(), KUBERNETES_VERSION, CLUSTER_API_VERSION)
    properties = {p.get("name"): p.get("value")
                  for p in ET.parse(passing.folder / report.JUNIT_FILE).getroot().iter("property")}
    assert {key: properties.get(key) for key in ("lifecycle-tck", "kubernetes", "clusterAPI")} == {
        "lifecycle-tck": kit_version(), "kubernetes": KUBERNETES_VERSION, "clusterAPI": CLUSTER_API_VERSION}
    page = (passing.folder / report.HTML_FILE).read_text()
    assert f"(Kubernetes {KUBERNETES_VERSION}, Cluster API {CLUSTER_API_VERSION})" in page
