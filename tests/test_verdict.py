"""harness.targets.verdict: CONFORMANT, NOT CONFORMANT, INCOMPLETE per claimed profile and overall, with
counts and reasons (DESIGN.md "Targets and verdicts"), and the JUnit annotation of a run's verdict."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from harness.targets import report
from harness.targets.verdict import (
    CONFORMANT,
    INCOMPLETE,
    NOT_CONFORMANT,
    NOTHING_SELECTED,
    judge,
)

BUDGET = "the scenario lets more than 10 s of virtual time pass"


def scenario(status: str, profile: str = "machine_controller", level: str = "must", reason: str = "",
             name: str = "s") -> dict[str, Any]:
    return {"id": f"features/test_x_scenarios.py::{name}", "status": status, "profile": [profile], "level": level,
            "reason": reason}


def test_every_must_scenario_passed_is_conformant_and_exits_0() -> None:
    verdict = judge([scenario("passed"), scenario("failed", level="should")], ("machine_controller",))
    assert (verdict.verdict, verdict.exit_code) == (CONFORMANT, 0)
    assert verdict.line() == "Verdict: CONFORMANT — machine_controller CONFORMANT"


def test_a_must_scenario_that_did_not_run_makes_the_profile_incomplete_with_the_reason() -> None:
    scenarios = [scenario("passed"), scenario("not-run", reason=BUDGET), scenario("not-run", reason=BUDGET),
                 scenario("skipped", reason="Skipped: no kubectl")]
    verdict = judge(scenarios, ("machine_controller",))
    assert (verdict.verdict, verdict.exit_code) == (INCOMPLETE, 3)
    (profile,) = verdict.profiles
    assert (profile.passed, profile.failed, profile.not_run) == (1, 0, 3)
    assert profile.reasons == {BUDGET: 2, "Skipped: no kubectl": 1}
    assert f"2 × {BUDGET}" in profile.line()


def test_a_failed_must_scenario_is_not_conformant_even_with_others_not_run() -> None:
    verdict = judge([scenario("failed"), scenario("not-run", reason=BUDGET)], ("machine_controller",))
    assert (verdict.verdict, verdict.exit_code) == (NOT_CONFORMANT, 1)


def test_each_claimed_profile_has_its_own_verdict() -> None:
    scenarios = [scenario("passed"), scenario("not-run", profile="rollout_deployment", reason=BUDGET),
                 scenario("not-applicable", profile="hic")]
    verdict = judge(scenarios, ("machine_controller", "rollout_deployment", "cluster_controller"))
    assert [(p.profile, p.verdict) for p in verdict.profiles] == [
        ("machine_controller", CONFORMANT), ("rollout_deployment", INCOMPLETE), ("cluster_controller", INCOMPLETE)]
    assert verdict.profiles[2].reasons == {NOTHING_SELECTED: 1}
    assert verdict.verdict == INCOMPLETE


def test_nothing_ran_is_incomplete_never_conformant() -> None:
    verdict = judge([scenario("not-applicable")], None)
    assert verdict.verdict == INCOMPLETE and "no scenario ran" in verdict.line()


def test_the_reference_is_judged_on_every_profile_it_ran() -> None:
    scenarios = [scenario("passed"), scenario("passed", profile="apiserver"), scenario("passed", profile="hic",
                                                                                       level="may")]
    verdict = judge(scenarios, None)
    assert [p.profile for p in verdict.profiles] == ["apiserver", "machine_controller"]
    assert verdict.verdict == CONFORMANT


def test_junit_carries_the_verdict_and_the_scenarios_that_did_not_run(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    path.write_text('<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="1" skipped="0">'
                    '<testcase classname="features.test_x_scenarios" name="ran"/></testsuite></testsuites>')
    run = {"verdict": INCOMPLETE, "profiles": {"machine_controller": {"verdict": INCOMPLETE}}}
    report.annotate_junit(path, run, [scenario("not-run", reason=BUDGET, name="slow"),
                                      scenario("not-run", reason=BUDGET, name="ran")])
    suite = ElementTree.parse(path).getroot().find("testsuite")
    assert suite is not None
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties == {"verdict": INCOMPLETE, "verdict.machine_controller": INCOMPLETE}
    slow = [c for c in suite.iter("testcase") if c.get("name") == "slow"]
    assert len(slow) == 1 and slow[0].find("skipped").get("message") == BUDGET  # type: ignore[union-attr]
    assert (suite.get("tests"), suite.get("skipped")) == ("2", "1")


def test_the_html_report_shows_each_profiles_verdict(tmp_path: Path) -> None:
    run = {"verdict": INCOMPLETE, "target": {"name": "machine-controller", "profiles": ["machine_controller"]},
           "profiles": {"machine_controller": {"verdict": INCOMPLETE, "must": {"passed": 1, "failed": 0, "not-run": 2},
                                               "not-run reasons": {BUDGET: 2}}}}
    report.write_html(tmp_path / "report.html", run, [scenario("passed"), scenario("not-run", reason=BUDGET)])
    page = (tmp_path / "report.html").read_text()
    assert 'class="verdict-incomplete">Verdict: <b>INCOMPLETE</b>' in page
    assert 'id="profiles"' in page and f"2 × {BUDGET}" in page and "[not-run]" in page
