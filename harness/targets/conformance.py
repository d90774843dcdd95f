"""``lifecycle-tck conformance``: run the Gherkin suite against a target and summarise it.

The suite is pytest-bdd; this module chooses what runs (level, keyword, target) and reads the
outcome per scenario from a small in-process plugin, so the summary counts scenarios, not tests.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

LEVEL_ORDER = {"must": 0, "should": 1, "may": 2}


@dataclass
class _Outcomes:
    """A pytest plugin collecting one outcome per scenario."""

    results: dict[str, dict[str, Any]] = field(default_factory=dict)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        entry = self.results.setdefault(report.nodeid, {"outcome": "passed", "level": None, "reason": ""})
        for marker in report.keywords:
            if marker in LEVEL_ORDER:
                entry["level"] = marker
        if report.failed:
            entry["outcome"] = "failed"
            entry["reason"] = str(report.longrepr).splitlines()[-1] if report.longrepr else ""
        elif report.skipped and entry["outcome"] != "failed":
            entry["outcome"] = "skipped"
            entry["reason"] = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else ""


def _area(nodeid: str) -> str:
    """The feature area of a scenario: ``features/test_<area>_scenarios.py::...`` → ``<area>``."""
    module = nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
    return module.removeprefix("test_").removesuffix(".py").removesuffix("_scenarios")


def _print_table(results: dict[str, dict[str, Any]]) -> None:
    """Passed/total per area and level, one row per area."""
    table: dict[str, Counter[str]] = {}
    for nodeid, result in results.items():
        row = table.setdefault(_area(nodeid), Counter())
        level = result["level"] or "-"
        row[f"{level}:total"] += 1
        if result["outcome"] == "passed":
            row[f"{level}:passed"] += 1
    print(f"  {'area':<22}" + "".join(f"{name:>12}" for name in LEVEL_ORDER))
    for area in sorted(table):
        row = table[area]
        cells = "".join(
            f"{row[f'{name}:passed']:>6}/{row[f'{name}:total']:<5}" if row[f"{name}:total"] else f"{'-':>12}"
            for name in LEVEL_ORDER
        )
        print(f"  {area:<22}{cells}")


def _level_expression(level: str) -> str:
    allowed = [name for name, rank in LEVEL_ORDER.items() if rank <= LEVEL_ORDER[level]]
    return " or ".join(allowed)


def run(*, features: Path, target: str, report_dir: str | None, level: str, keyword: str | None) -> int:
    """Run the suite; print a summary; 0 only when every selected MUST scenario passed."""
    args = [str(features), "-q", "-p", "no:cacheprovider", "-m", _level_expression(level), "--no-header"]
    if keyword:
        args += ["-k", keyword]
    if report_dir:
        out = Path(report_dir)
        out.mkdir(parents=True, exist_ok=True)
        args += [f"--junitxml={out / 'junit.xml'}", f"--cucumberjson={out / 'cucumber.json'}"]
    args += [f"--target={target}"]
    outcomes = _Outcomes()
    code = pytest.main(args, plugins=[outcomes])
    counts = Counter(r["outcome"] for r in outcomes.results.values())
    must_failed = [n for n, r in outcomes.results.items() if r["level"] == "must" and r["outcome"] != "passed"]
    print()
    print(f"Lifecycle TCK conformance — target: {target}, levels: {_level_expression(level)}")
    _print_table(outcomes.results)
    for name, r in sorted(outcomes.results.items()):
        if r["outcome"] != "passed":
            print(f"  {r['outcome'].upper():8} [{r['level'] or '-'}] {name}: {r['reason']}")
    print(f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")
    if not outcomes.results:
        print("no scenario ran")
        return 1
    # Exit codes 2-4 are pytest's own trouble (interrupted, internal error, usage): never a pass.
    if must_failed or code in (2, 3, 4):
        return 1
    return 0
