"""``lifecycle-tck conformance``: run the Gherkin suite against a target, summarise it, write reports.

The suite is pytest-bdd; this module chooses what runs (level, keyword, target, the target's
profiles) and reads the outcome per scenario from a small in-process plugin, so the summary counts
scenarios, not tests. A scenario outside the profiles its target claims (:data:`TARGET_PROFILES`)
is deselected and reported as not applicable, never as passed.

With ``report_dir``: JUnit XML (``junit.xml``) and Cucumber JSON (``cucumber.json``) from pytest and
pytest-bdd, and ``conformance-results.yaml`` and ``report.html`` (harness/targets/report.py), for
which features/conftest.py keeps each scenario's audit trail (``--scenario-timeline``).

With ``chaos``: the reference controllers' reads and writes fail at about that rate with 409, 429
and 500 (:func:`install_chaos`, called by features/conftest.py for every scenario's world).
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from _pytest.junitxml import xml_key as junitxml_key
from pytest_bdd.reporting import test_report_context_registry
from pytest_bdd.scenario import scenario_wrapper_template_registry

from harness.apiserver.faults import chaos_rules, injector_of
from harness.resources import BEHAVIORS_FILE, load_yaml
from harness.targets import report
from harness.targets import verdict as verdicts
from harness.targets.process import CONTROLLER_USER
from harness.targets.profiles import PROFILES as ALL_PROFILES
from harness.versions import faithful_to, kit_version
from harness.world.world import REFERENCE_CONTROLLERS, SYSTEM_USER

LEVEL_ORDER = {"must": 0, "should": 1, "may": 2}
SUITE_NAME = "lifecycle-tck"
# The kit's pytest plugin (entry point pytest11; harness/pytest_plugin.py).
PLUGIN_NAME = "lifecycle_tck"
# pytest plugins of installed libraries that the Gherkin suite does not use (the kit's test dependencies).
UNUSED_PLUGINS = ("hypothesispytest", "anyio", "xdist.looponfail")
# Every profile a target may claim (DESIGN.md "Conformance levels, profiles and traceability").
PROFILES = ALL_PROFILES
# What each target claims; None: every profile (the reference implementation claims them all).
# ``controller`` claims what its --profile options say (run(profiles=...)).
TARGET_PROFILES: dict[str, tuple[str, ...] | None] = {
    "reference": None,
    "reference-process": None,
    "hic": ("hic",),
    "controller": (),
    "machine-controller": ("machine_controller",),
    "extension": ("runtime_extension",),
}
# Targets that run only some feature areas of their profiles: the others' scenarios do not involve the
# implementation under test (machine_deletion's @hic scenarios play the hook owner in their steps).
TARGET_AREAS: dict[str, tuple[str, ...]] = {"hic": ("hic",), "machine-controller": ("machine_deletion",),
                                           "extension": ("runtime_extension",)}
NOT_DRIVEN = "target {} runs only the scenarios that drive the implementation under test ({})"
SEED_PREFIX = "seed_"
FAULTS_PATH = "/harness/v1/faults"
NOT_CLAIMED = "profile {} is not claimed by target {}"
# A scenario a target stops as not applicable at run time skips with a reason starting so
# (harness/targets/machine_controller.py: more virtual time than a wall-clock controller can be given).
NOT_APPLICABLE_SKIP = "not applicable: "
_NOT_APPLICABLE = report.NOT_APPLICABLE  # (the plugin's hooks name their argument ``report``)
# --jobs N > 1: the plugin of the controller and of the workers (harness/targets/workers.py).
WORKERS_PLUGIN = "harness.targets.workers"
# Scenarios handed to a worker at a time after the first batch: few, so that the workers end together
# (a scenario costs from a few milliseconds to over a second of CPU).
WORKER_CHUNK = 2
CRASHED = "a worker process died while running {}"


def reference_controller_users() -> list[str]:
    """Who the reference controllers are on the wire: each in-world controller, and the process."""
    return [SYSTEM_USER.format(name) for name in REFERENCE_CONTROLLERS] + [CONTROLLER_USER]


def install_chaos(scene: Any, rate: float, users: list[str] | None = None) -> None:
    """Make about ``rate`` of the reads and writes of ``users`` (default: the reference controllers)
    in ``scene``'s world fail (409, 429, 500); the scenario's own requests are untouched. In-process
    through the world's injector, over HTTP through ``POST /harness/v1/faults``."""
    rules = chaos_rules(rate, users=users or reference_controller_users())
    world = getattr(scene, "world", None)
    if world is not None and not hasattr(scene, "http"):
        injector = injector_of(world.clusters)
        for rule in rules:
            injector.add(rule)
        return
    http = scene.http()
    for rule in rules:
        http.post(FAULTS_PATH, json=rule).raise_for_status()


def _behaviors(features: Path) -> tuple[set[str], set[str]]:
    """The behavior ids and the profiles ``features/behaviors.yaml`` names (with :data:`PROFILES`)."""
    behaviors = (load_yaml(features / BEHAVIORS_FILE) or {}).get("behaviors") or []
    ids = {str(b["id"]) for b in behaviors if b.get("id")}
    return ids, {str(b["profile"]) for b in behaviors if b.get("profile")} | set(PROFILES)


def area_of(nodeid: str) -> str:
    """The feature area of a scenario: ``features/test_<area>_scenarios.py::...`` → ``<area>``."""
    module = nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
    return module.removeprefix("test_").removesuffix(".py").removesuffix("_scenarios")


def _reason(report_: pytest.TestReport) -> str:
    longrepr = report_.longrepr
    if isinstance(longrepr, tuple):  # a skip: (file, line, reason)
        return str(longrepr[-1])
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None and getattr(crash, "message", None):
        return str(crash.message)
    return str(longrepr).splitlines()[-1] if longrepr else ""


@dataclass
class _Outcomes:
    """A pytest plugin collecting one entry per scenario (see harness/targets/report.py for its shape)."""

    behaviors: set[str]
    profiles: set[str]
    claimed: tuple[str, ...] | None
    target: str
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Scenarios whose worker process died while running them (--jobs N, harness/targets/workers.py).
    crashed: list[str] = field(default_factory=list)

    def parameters(self) -> dict[str, Any]:
        """What this was built with, as plain data (handed to the workers of a --jobs N run)."""
        return {"behaviors": sorted(self.behaviors), "profiles": sorted(self.profiles),
                "claimed": None if self.claimed is None else list(self.claimed), "target": self.target}

    @classmethod
    def from_parameters(cls, parameters: dict[str, Any]) -> _Outcomes:
        """The same plugin again, from :meth:`parameters`."""
        claimed = parameters["claimed"]
        return cls(behaviors=set(parameters["behaviors"]), profiles=set(parameters["profiles"]),
                   claimed=None if claimed is None else tuple(claimed), target=parameters["target"])

    def pytest_configure(self, config: pytest.Config) -> None:
        """Findable by harness/targets/workers.py's hooks."""
        config.stash[OUTCOMES] = self

    def _entry(self, item: pytest.Item) -> dict[str, Any]:
        entry = self.results.get(item.nodeid)
        if entry is not None:
            return entry
        markers = list(dict.fromkeys(m.name for m in item.iter_markers()))
        template = scenario_wrapper_template_registry.get(getattr(item, "obj", None))
        entry = self.results[item.nodeid] = self._unknown(item.nodeid)
        entry.update({
            "name": template.name if template else item.name,
            "feature": template.feature.name if template else "",
            "file": template.feature.rel_filename if template else "",
            "behaviors": sorted(m for m in markers if m in self.behaviors),
            "level": next((m for m in markers if m in LEVEL_ORDER), None),
            "profile": sorted(m for m in markers if m in self.profiles),
            "seed": sorted(m for m in markers if m.startswith(SEED_PREFIX)),
            "steps": [{"keyword": s.keyword, "name": s.name, "status": "not run"} for s in template.steps]
            if template else [],
        })
        return entry

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """Deselect what the target does not claim; it is reported as not applicable."""
        if self.claimed is None:
            return
        keep, away = [], []
        areas = TARGET_AREAS.get(self.target)
        for item in items:
            profiles = {m.name for m in item.iter_markers()} & self.profiles
            in_area = areas is None or area_of(item.nodeid) in areas
            claimed = (not profiles or profiles & set(self.claimed)) and in_area
            (keep if claimed else away).append(item)
        if away:
            config.hook.pytest_deselected(items=away)
            items[:] = keep
            for item in away:
                entry = self._entry(item)
                entry["status"] = report.NOT_APPLICABLE
                entry["reason"] = NOT_CLAIMED.format(", ".join(entry["profile"]), self.target)
                if areas is not None and set(entry["profile"]) & set(self.claimed):
                    # A scenario of a claimed profile this target cannot drive: it did not run.
                    entry["status"] = report.NOT_RUN
                    entry["reason"] = NOT_DRIVEN.format(self.target, ", ".join(f"features/{a}/" for a in areas))

    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        self._entry(item)

    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> None:
        if call.when == "teardown":
            records = item.stash.get(report.TIMELINE, None)
            if records is not None:
                self._entry(item)["timeline"] = report.timeline(records)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        entry = self.results.get(report.nodeid)
        if entry is None and report.failed:
            # A worker died before it said which scenario this is (--jobs N): still a failed scenario.
            entry = self.results[report.nodeid] = self._unknown(report.nodeid)
        if entry is None:
            return
        context = test_report_context_registry.get(report)
        if context is not None and report.when == "call":
            reported = _steps(context.scenario.get("steps") or [])
            if report.skipped and reported:
                reported[-1]["status"] = "skipped"  # the step that stopped it
            entry["steps"] = reported + entry["steps"][len(reported):]  # the rest, "not run"
            entry["name"] = context.scenario.get("name") or entry["name"]  # an outline's, with its example's values
        if report.failed:
            if entry["status"] != "failed":
                entry["reason"] = _reason(report)
            entry["status"] = "failed"
        elif report.skipped and entry["status"] != "failed":
            reason = _reason(report)
            applies = not reason.removeprefix("Skipped: ").startswith(NOT_APPLICABLE_SKIP)
            entry["status"] = "skipped" if applies else self._not_running(entry)
            entry["reason"] = reason if applies else reason.removeprefix("Skipped: ").removeprefix(NOT_APPLICABLE_SKIP)

    def _unknown(self, nodeid: str) -> dict[str, Any]:
        """The entry of a scenario known only by its id (what its item adds: :meth:`_entry`)."""
        return {"id": nodeid, "name": nodeid.rpartition("::")[2], "feature": "", "file": "", "area": area_of(nodeid),
                "status": report.PASSED, "reason": "", "behaviors": [], "level": None, "profile": [], "seed": [],
                "steps": []}

    def _not_running(self, entry: dict[str, Any]) -> str:
        """A scenario stopped at run time as not applicable (beyond the wall-clock budget, a capability not
        claimed): of a claimed profile it did not run (the verdict is INCOMPLETE); otherwise not applicable."""
        claimed = set(entry["profile"]) if self.claimed is None else set(entry["profile"]) & set(self.claimed)
        return report.NOT_RUN if claimed or not entry["profile"] else _NOT_APPLICABLE


OUTCOMES = pytest.StashKey[_Outcomes]()


def _steps(reported: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """pytest-bdd's step reports as passed/failed/not run (it marks every step after a failure failed)."""
    out, failed = [], False
    for step in reported:
        status = "not run" if failed else ("failed" if step.get("failed") else "passed")
        failed = failed or bool(step.get("failed"))
        out.append({"keyword": step.get("keyword", ""), "name": step.get("name", ""), "status": status})
    return out


def _print_table(results: dict[str, dict[str, Any]]) -> None:
    """Passed/total per area and level, one row per area (not-applicable scenarios left out)."""
    table: dict[str, Counter[str]] = {}
    for nodeid, result in results.items():
        if result["status"] == report.NOT_APPLICABLE:
            continue
        row = table.setdefault(area_of(nodeid), Counter())
        level = result["level"] or "-"
        row[f"{level}:total"] += 1
        if result["status"] == report.PASSED:
            row[f"{level}:passed"] += 1
    print(f"  {'area':<22}" + "".join(f"{name:>12}" for name in LEVEL_ORDER))
    for area in sorted(table):
        row = table[area]
        cells = "".join(
            f"{row[f'{name}:passed']:>6}/{row[f'{name}:total']:<5}" if row[f"{name}:total"] else f"{'-':>12}"
            for name in LEVEL_ORDER
        )
        print(f"  {area:<22}{cells}")


def isolated(features: Path) -> list[str]:
    """pytest options that run the suite at ``features`` (a checkout's or an installed kit's) on its
    own: no configuration file of the user's (an empty one), the rootdir above the suite, no
    conftest.py above it (a project whose virtualenv sits in its folder keeps its conftest to itself),
    and not the kit's own pytest plugin (its fixtures are for users' tests) nor those of :data:`UNUSED_PLUGINS`."""
    root = str(features.parent)
    return ["-c", os.devnull, f"--rootdir={root}", f"--confcutdir={root}",
            "-o", f"bdd_features_base_dir={features}", "-p", f"no:{PLUGIN_NAME}",
            # Nor the plugins of libraries the suite does not use, which hook every test and fixture (and
            # hypothesis's imports its statistics at the end of the session).
            *[arg for name in UNUSED_PLUGINS for arg in ("-p", f"no:{name}")],
            # This process imported the kit (and pytest-bdd) before pytest started: pytest cannot rewrite
            # their asserts and would say so for each; the steps it loads later are rewritten as usual.
            "-W", "ignore::pytest.PytestAssertRewriteWarning"]


class _JunitVersions:
    """Puts the kit's version and what it follows into junit.xml's ``<properties>``."""

    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        xml = session.config.stash.get(junitxml_key, None)
        if xml is not None:
            xml.add_global_property(SUITE_NAME, kit_version())
            for name, value in faithful_to().items():
                xml.add_global_property(name, value)


def _levels(level: str) -> list[str]:
    return [name for name, rank in LEVEL_ORDER.items() if rank <= LEVEL_ORDER[level]]


def run(
    *,
    features: Path,
    target: str,
    report_dir: str | None,
    level: str,
    keyword: str | None,
    chaos: float | None = None,
    target_args: list[str] | None = None,
    profiles: list[str] | None = None,
    jobs: int = 1,
) -> int:
    """Run the suite; print a summary and the verdict; write the reports into ``report_dir`` when given.
    Exit code: 0 CONFORMANT, 1 NOT CONFORMANT, 3 INCOMPLETE, 2 usage error (harness/targets/verdict.py).
    ``target_args``: the target's own pytest options
    (``--hic-command``, ``--hic-config``); ``profiles``: what the target claims, when the user says it
    (``--target controller --profile P``); ``jobs``: worker processes the scenarios are spread over (1:
    this process alone; more: pytest-xdist, harness/targets/workers.py, with the same results)."""
    levels = _levels(level)
    args = [str(features), "-q", "-p", "no:cacheprovider", "-m", " or ".join(levels), "--no-header",
            *isolated(features)]
    if keyword:
        args += ["-k", keyword]
    out = Path(report_dir) if report_dir else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        args += [f"--junitxml={out / report.JUNIT_FILE}", f"--cucumberjson={out / report.CUCUMBER_FILE}",
                 "--scenario-timeline"]
    if chaos:
        args += [f"--chaos={chaos}"]
    args += [f"--target={target}", *(target_args or [])]
    if jobs > 1:
        args += ["-p", WORKERS_PLUGIN, f"--numprocesses={jobs}", "--dist=load", f"--maxschedchunk={WORKER_CHUNK}"]
    claimed = tuple(profiles) if profiles is not None else TARGET_PROFILES.get(target)
    behaviors, profiles = _behaviors(features)
    outcomes = _Outcomes(behaviors=behaviors, profiles=profiles, claimed=claimed, target=target)
    code = pytest.main(args, plugins=[outcomes, _JunitVersions()])
    if code == pytest.ExitCode.USAGE_ERROR:
        print(f"lifecycle-tck conformance: pytest refused the options {args}", file=sys.stderr)
        return verdicts.USAGE_ERROR_EXIT
    # In the order of the scenario ids, however the workers' reports came in.
    results = dict(sorted(outcomes.results.items()))
    counts = Counter(r["status"] for r in results.values())
    judged = verdicts.judge(list(results.values()), claimed)
    if code in (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.INTERNAL_ERROR):
        # pytest's own trouble is never a pass.
        judged = verdicts.Verdict(verdicts.NOT_CONFORMANT, judged.profiles, f"pytest ended with {code!r}")
    if outcomes.crashed:
        # Whatever the level of the scenario a worker died in, the run did not complete as it should.
        judged = verdicts.Verdict(verdicts.NOT_CONFORMANT, judged.profiles,
                                  CRASHED.format(", ".join(sorted(outcomes.crashed))))
    print()
    print(f"Lifecycle TCK conformance — target: {target}, levels: {' or '.join(levels)}")
    _print_table(results)
    for name, r in sorted(results.items()):
        if r["status"] not in (report.PASSED, report.NOT_APPLICABLE):
            # The rules it checks, so a user sees which rule failed without opening the feature file.
            rules = f" ({', '.join(r['behaviors'])})" if r.get("behaviors") else ""
            print(f"  {r['status'].upper():8} [{r['level'] or '-'}] {name}{rules}: {r['reason']}")
    for profile in judged.profiles:
        print(f"  {profile.line()}")
    print(f"{counts[report.PASSED]} passed, {counts[report.FAILED]} failed, {counts[report.SKIPPED]} skipped, "
          f"{counts[report.NOT_RUN]} did not run, {counts[report.NOT_APPLICABLE]} not applicable")
    if not any(r["status"] in (report.PASSED, report.FAILED) for r in results.values()):
        print(verdicts.NOTHING_RAN)
    print(judged.line())
    if out is not None:
        description = {
            "suite": {"name": SUITE_NAME, "version": kit_version(), **faithful_to()},
            "target": {"name": target, "profiles": sorted(claimed) if claimed is not None else ["all"]},
            "levels": levels,
            "keyword": keyword,
            "chaos": chaos,
            "verdict": judged.verdict,
            "profiles": {p.profile: p.as_dict() for p in judged.profiles},
        }
        report.write_reports(out, description, sorted(results.values(), key=lambda r: r["id"]))
        report.annotate_junit(out / report.JUNIT_FILE, description,
                              [r for r in results.values() if r["status"] == report.NOT_RUN])
        print(f"Reports: {out}")
    return judged.exit_code
