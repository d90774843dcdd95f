"""``lifecycle-tck behaviors``: every behavior of ``features/behaviors.yaml`` with its seed reference,
level, the scenarios that check it and the latest result, and the coverage summary the README shows.

The scenarios come from the feature files (read with the Gherkin parser pytest-bdd uses; a tag on a
Feature or Rule counts for the scenarios inside it, a Scenario Outline is one scenario). The latest
result comes from a ``conformance-results.yaml`` (``lifecycle-tck conformance --report-dir``): by
default the newest one under ``reports/``; with none, every behavior is "not run". A behavior's result
folds those of its scenarios' runs: failed if any failed, passed if every one that applied passed,
skipped if some were skipped, not-applicable if none applied to the target.

The summary (``--summary``) counts, per seed and level, the behaviors, those with at least one
scenario, and (with results) those passing. A behavior's seed is the seed file its ``source`` names
(``seeds/001_....txt`` → ``001``); behaviors stated by a reference digest or DESIGN.md have none
(``-``).
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from gherkin.parser import Parser
from gherkin.token_scanner import TokenScanner

from harness.resources import BEHAVIORS_FILE, load_yaml
from harness.targets.report import FAILED, NOT_APPLICABLE, PASSED, RESULTS_FILE, SKIPPED

FORMATS = ("table", "yaml", "markdown")
LEVELS = ("must", "should", "may")
NOT_RUN = "not run"
NO_SEED = "-"
SEED_IN_SOURCE = re.compile(r"seeds/(\d{3})_")
# Where ``lifecycle-tck conformance --report-dir`` output is looked for by default.
REPORTS_DIR = "reports"


@dataclass
class Behavior:
    """One behavior, the scenarios checking it (``file: name``) and its latest result."""

    id: str
    level: str
    profile: str
    source: str
    statement: str
    decision: str = ""
    scenarios: list[str] = field(default_factory=list)
    result: str = NOT_RUN

    @property
    def seed(self) -> str:
        found = SEED_IN_SOURCE.findall(self.source)
        return "+".join(sorted(set(found))) if found else NO_SEED

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "level": self.level, "profile": self.profile, "seed": self.seed,
                               "source": self.source, "statement": self.statement}
        if self.decision:
            out["decision"] = self.decision
        out["scenarios"] = list(self.scenarios)
        out["result"] = self.result
        return out


def _tags(node: dict[str, Any]) -> set[str]:
    return {t["name"].lstrip("@") for t in node.get("tags") or []}


def scenarios_by_tag(features: Path) -> dict[str, list[str]]:
    """Every tag a scenario carries (its own, its Rule's and its Feature's) → the scenarios
    (``<path under features/>: <name>``) carrying it, in file order."""
    out: dict[str, list[str]] = {}
    for path in sorted(features.rglob("*.feature")):
        feature = Parser().parse(TokenScanner(path.read_text())).get("feature") or {}
        where = path.relative_to(features).as_posix()

        def walk(children: list[dict[str, Any]], inherited: set[str], where: str = where) -> None:
            for child in children:
                if "rule" in child:
                    walk(child["rule"].get("children") or [], inherited | _tags(child["rule"]))
                elif "scenario" in child:
                    scenario = child["scenario"]
                    for tag in sorted(inherited | _tags(scenario)):
                        out.setdefault(tag, []).append(f"{where}: {scenario.get('name', '')}")

        walk(feature.get("children") or [], _tags(feature))
    return out


def latest_results(reports: Path = Path(REPORTS_DIR)) -> Path | None:
    """The newest ``conformance-results.yaml`` under ``reports`` (itself or a folder in it), or None."""
    if not reports.is_dir():
        return None
    found = [p for p in [reports / RESULTS_FILE, *reports.glob(f"*/{RESULTS_FILE}")] if p.is_file()]
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


def _fold(statuses: list[str]) -> str:
    applied = [s for s in statuses if s != NOT_APPLICABLE]
    if not statuses:
        return NOT_RUN
    if not applied:
        return NOT_APPLICABLE
    if FAILED in applied:
        return FAILED
    return PASSED if all(s == PASSED for s in applied) else SKIPPED


def load(features: Path, results: Path | None) -> list[Behavior]:
    """Every behavior of ``features/behaviors.yaml`` with its scenarios and, from ``results`` (a
    ``conformance-results.yaml``; None: not run), its latest result."""
    document = load_yaml(features / BEHAVIORS_FILE) or {}
    tagged = scenarios_by_tag(features)
    statuses: dict[str, list[str]] = {}
    if results is not None:
        for scenario in (yaml.safe_load(results.read_text()) or {}).get("scenarios") or []:
            for behavior_id in scenario.get("behaviors") or []:
                statuses.setdefault(str(behavior_id), []).append(str(scenario.get("status")))
    out = []
    for entry in document.get("behaviors") or []:
        behavior_id = str(entry["id"])
        out.append(Behavior(
            id=behavior_id, level=str(entry.get("level", "")), profile=str(entry.get("profile", "")),
            source=str(entry.get("source", "")), statement=str(entry.get("statement", "")),
            decision=str(entry.get("decision", "") or ""), scenarios=tagged.get(behavior_id, []),
            result=_fold(statuses.get(behavior_id, [])),
        ))
    return out


def summary_rows(behaviors: list[Behavior], with_results: bool) -> list[list[str]]:
    """The coverage table: a row per seed and level (seeds in order, no seed last), then the totals."""
    counts: dict[tuple[str, str], Counter[str]] = {}
    for behavior in behaviors:
        row = counts.setdefault((behavior.seed, behavior.level), Counter())
        row["behaviors"] += 1
        row["scenarios"] += bool(behavior.scenarios)
        row["passing"] += behavior.result == PASSED

    def order(key: tuple[str, str]) -> tuple[bool, str, int]:
        seed, level = key
        return seed == NO_SEED, seed, LEVELS.index(level) if level in LEVELS else len(LEVELS)

    def cells(row: Counter[str]) -> list[str]:
        return [str(row["behaviors"]), str(row["scenarios"])] + ([str(row["passing"])] if with_results else [])

    rows = [[seed, level, *cells(row)] for (seed, level), row in sorted(counts.items(), key=lambda kv: order(kv[0]))]
    total: Counter[str] = sum(counts.values(), Counter())
    rows.append(["all", "all", *cells(total)])
    return rows


def summary_header(with_results: bool) -> list[str]:
    return ["seed", "level", "behaviors", "with scenarios"] + (["passing"] if with_results else [])


def _markdown(header: list[str], rows: list[list[str]]) -> str:
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    return "\n".join([line(header), "| " + " | ".join("---" for _ in header) + " |", *(line(r) for r in rows)])


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [header, *rows])


def render(behaviors: list[Behavior], fmt: str, *, summary: bool, results: Path | None) -> str:
    """What ``lifecycle-tck behaviors`` prints (without its trailing newline)."""
    if summary:
        header, rows = summary_header(results is not None), summary_rows(behaviors, results is not None)
        if fmt == "yaml":
            return yaml.safe_dump([dict(zip(header, r)) for r in rows], sort_keys=False).rstrip()
        return _markdown(header, rows) if fmt == "markdown" else _table(header, rows)
    if fmt == "yaml":
        document = {"results": str(results) if results else None, "behaviors": [b.as_dict() for b in behaviors]}
        return yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=120).rstrip()
    header = ["id", "level", "seed", "profile", "scenarios", "result"]
    if fmt == "markdown":
        rows = [[b.id, b.level, b.seed, b.profile, "<br>".join(b.scenarios) or "none", b.result] for b in behaviors]
        return _markdown(header, rows)
    rows = [[b.id, b.level, b.seed, b.profile, str(len(b.scenarios)), b.result] for b in behaviors]
    return _table(header, rows)


def run(*, features: Path, fmt: str, summary: bool, results: str | None) -> int:
    """Print the behaviors (or the summary); 0, or 2 when the results file given cannot be read.
    ``results``: a ``conformance-results.yaml`` or a report folder holding one; ``none``: no results;
    None: the newest under ``reports/``."""
    path: Path | None
    if results is None:
        path = latest_results()
    elif results == "none":
        path = None
    else:
        path = Path(results)
        path = path / RESULTS_FILE if path.is_dir() else path
        if not path.is_file():
            print(f"lifecycle-tck behaviors: --results {results}: no such file", file=sys.stderr)
            return 2
    try:
        behaviors = load(features, path)
    except (OSError, yaml.YAMLError, AttributeError, TypeError) as err:
        print(f"lifecycle-tck behaviors: cannot read {path}: {err}", file=sys.stderr)
        return 2
    print(render(behaviors, fmt, summary=summary, results=path))
    return 0
