"""The conformance reports: ``conformance-results.yaml`` and ``report.html``.

Both are written from the same run description (:func:`write_reports`): the suite and target, what
was selected, and one entry per scenario::

    {"id": nodeid, "name": ..., "feature": ..., "file": "machine_deletion/hooks.feature", "area": ...,
     "status": "passed|failed|skipped|not-applicable", "reason": ..., "behaviors": [...],
     "level": "must|should|may|None", "profile": [...], "seed": [...],
     "steps": [{"keyword", "name", "status"}], "timeline": [audit entries]}

The timeline of a scenario is what its world's audit trail recorded while it ran (every accepted
write: virtual time, cluster, verb, resource, namespace, name, user, and what changed), collected by
features/conftest.py under :data:`TIMELINE` when a report is being written.
"""

from __future__ import annotations

import html
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

RESULTS_FILE = "conformance-results.yaml"
HTML_FILE = "report.html"
JUNIT_FILE = "junit.xml"
CUCUMBER_FILE = "cucumber.json"
PASSED, FAILED, SKIPPED, NOT_APPLICABLE = "passed", "failed", "skipped", "not-applicable"
STATUSES = (PASSED, FAILED, SKIPPED, NOT_APPLICABLE)
# Per scenario: the audit records of its world (as Scene.audit gives them) while it ran.
TIMELINE = pytest.StashKey[list[dict[str, Any]]]()
# A scenario's timeline in the reports is cut here (a runaway controller must not make a 100 MB report).
TIMELINE_KEPT = 500
CHANGES_KEPT = 12
VALUE_CHARS = 80
# What a write changes that says nothing to a reader.
_IGNORED_PATHS = (
    "root['metadata']['resourceVersion']", "root['metadata']['managedFields']", "root['metadata']['generation']",
)


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else yaml.safe_dump(value, default_flow_style=True, width=10_000).strip()
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


def _path(deep_path: str) -> str:
    # root['metadata']['annotations']['x'] → metadata.annotations.x (as kubectl's jsonpath reads)
    parts = deep_path.removeprefix("root").strip("[]").split("][")
    return ".".join(p.strip("'") for p in parts if p)


def changes(old: dict[str, Any] | None, new: dict[str, Any] | None) -> list[str]:
    """What a write changed, one line per changed field (``path: old → new``, ``+path: value``,
    ``-path``), at most :data:`CHANGES_KEPT` lines (the last one says how many more)."""
    if old is None and new is None:
        return []
    if old is None:
        return ["created"]
    if new is None:
        return ["deleted"]
    from deepdiff import DeepDiff  # imported here: only reports need it

    diff = DeepDiff(old, new, exclude_paths=list(_IGNORED_PATHS), verbose_level=2)
    lines: list[str] = []
    for kind, entries in diff.items():
        for deep_path, detail in dict(entries).items() if isinstance(entries, dict) else []:
            if kind in ("values_changed", "type_changes"):
                before, after = _short(detail.get("old_value")), _short(detail.get("new_value"))
                lines.append(f"{_path(deep_path)}: {before} → {after}")
            elif kind.endswith("_added"):
                lines.append(f"+{_path(deep_path)}: {_short(detail)}")
            elif kind.endswith("_removed"):
                lines.append(f"-{_path(deep_path)}")
    lines.sort()
    if len(lines) > CHANGES_KEPT:
        lines = lines[: CHANGES_KEPT - 1] + [f"… and {len(lines) - CHANGES_KEPT + 1} more"]
    return lines


def timeline(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Audit records (with ``old``/``new``) as timeline entries, at most :data:`TIMELINE_KEPT`."""
    out = []
    for record in records[:TIMELINE_KEPT]:
        resource = record.get("resource", "")
        if record.get("subresource"):
            resource = f"{resource}/{record['subresource']}"
        out.append({
            "time": record.get("time"), "cluster": record.get("cluster"), "verb": record.get("verb"),
            "resource": resource, "namespace": record.get("namespace") or "", "name": record.get("name"),
            "user": record.get("user"), "code": record.get("code"),
            "changes": changes(record.get("old"), record.get("new")),
        })
    if len(records) > TIMELINE_KEPT:
        out.append({"truncated": len(records) - TIMELINE_KEPT})
    return out


def summary(scenarios: list[dict[str, Any]]) -> dict[str, int]:
    """How many scenarios have each status."""
    counts = Counter(s["status"] for s in scenarios)
    return {status: counts[status] for status in STATUSES}


def write_results(path: Path, run: dict[str, Any], scenarios: list[dict[str, Any]]) -> None:
    """``conformance-results.yaml``: the run, the summary and every scenario (steps, no timeline)."""
    entries = [{k: v for k, v in s.items() if k != "timeline"} for s in scenarios]
    document = {**run, "summary": summary(scenarios), "scenarios": entries}
    path.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=120))


# -- HTML ------------------------------------------------------------------------------------------------

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: left; vertical-align: top; font-size: 0.9em; }
th { background: #f3f3f3; }
.passed { color: #1a7f37; } .failed { color: #cf222e; font-weight: bold; }
.skipped { color: #9a6700; } .not-applicable { color: #6e7781; }
.verdict-pass { color: #1a7f37; } .verdict-fail { color: #cf222e; }
details.scenario { border: 1px solid #ddd; margin: 0.4em 0; padding: 0.3em 0.6em; border-radius: 4px; }
details.scenario > summary { cursor: pointer; }
ol.steps { margin: 0.4em 0; } ol.steps li.failed { background: #ffebe9; }
.reason { white-space: pre-wrap; font-family: monospace; background: #fff8f8; padding: 0.3em; }
.changes { font-family: monospace; font-size: 0.85em; white-space: pre-wrap; }
.tags { color: #555; font-size: 0.85em; }
"""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _count_table(title: str, scenarios: list[dict[str, Any]], key: str) -> str:
    rows: dict[str, Counter[str]] = {}
    for scenario in scenarios:
        values = scenario.get(key)
        for value in values if isinstance(values, list) else [values]:
            rows.setdefault(str(value or "-"), Counter())[scenario["status"]] += 1
    head = "".join(f"<th>{_e(status)}</th>" for status in STATUSES)
    body = "".join(
        f"<tr><td>{_e(name)}</td>" + "".join(f'<td class="{status}">{row[status] or ""}</td>' for status in STATUSES)
        + "</tr>"
        for name, row in sorted(rows.items())
    )
    return f"<h3>By {_e(title)}</h3><table><tr><th>{_e(title)}</th>{head}</tr>{body}</table>"


def _steps(scenario: dict[str, Any]) -> str:
    items = "".join(
        f'<li class="{_e(step["status"])}"><b>{_e(step["keyword"])}</b> {_e(step["name"])}'
        f' <span class="{_e(step["status"])}">({_e(step["status"])})</span></li>'
        for step in scenario.get("steps") or []
    )
    return f'<ol class="steps">{items}</ol>' if items else "<p>(no steps recorded)</p>"


def _timeline(scenario: dict[str, Any]) -> str:
    entries = scenario.get("timeline")
    if not entries:
        return ""
    rows = []
    for entry in entries:
        if "truncated" in entry:
            rows.append(f'<tr><td colspan="8">… {entry["truncated"]} more writes not shown</td></tr>')
            continue
        rows.append(
            "<tr>" + "".join(f"<td>{_e(entry.get(k))}</td>" for k in ("time", "cluster", "verb", "resource"))
            + f"<td>{_e('/'.join(p for p in (entry.get('namespace'), entry.get('name')) if p))}</td>"
            + f"<td>{_e(entry.get('user'))}</td><td>{_e(entry.get('code'))}</td>"
            + f'<td class="changes">{_e(chr(10).join(entry.get("changes") or []))}</td></tr>'
        )
    head = "".join(f"<th>{h}</th>" for h in ("time", "cluster", "verb", "resource", "object", "user", "code",
                                             "changes"))
    return (f'<details class="timeline"><summary>Timeline: {len(entries)} writes</summary>'
            f"<table><tr>{head}</tr>{''.join(rows)}</table></details>")


def _scenario(scenario: dict[str, Any]) -> str:
    status = scenario["status"]
    tags = " ".join(f"@{t}" for t in [scenario.get("level"), *scenario.get("profile", []), *scenario.get("seed", []),
                                        *scenario.get("behaviors", [])] if t)
    reason = f'<div class="reason">{_e(scenario["reason"])}</div>' if scenario.get("reason") else ""
    opened = " open" if status == FAILED else ""
    return (
        f'<details class="scenario" id="{_e(scenario["id"])}"{opened}><summary>'
        f'<span class="{status}">[{_e(status)}]</span> {_e(scenario.get("name"))} '
        f'<span class="tags">— {_e(scenario.get("feature"))} ({_e(scenario.get("file"))})</span></summary>'
        f'<p class="tags">{_e(tags)}</p>{reason}{_steps(scenario)}{_timeline(scenario)}</details>'
    )


def write_html(path: Path, run: dict[str, Any], scenarios: list[dict[str, Any]]) -> None:
    """``report.html``: the verdict, counts by area, level and profile, then every scenario (failed
    ones opened) with its steps and the timeline of the writes it caused. Self-contained (no scripts)."""
    counts = summary(scenarios)
    verdict = run.get("verdict", "")
    target = run.get("target") or {}
    suite = run.get("suite") or {}
    by_area: dict[str, list[dict[str, Any]]] = {}
    for scenario in scenarios:
        by_area.setdefault(scenario.get("area") or "-", []).append(scenario)
    sections = "".join(
        f"<h2>{_e(area)}</h2>" + "".join(_scenario(s) for s in items) for area, items in sorted(by_area.items())
    )
    totals = ", ".join(f'<span class="{status}">{counts[status]} {status}</span>' for status in STATUSES)
    page = (
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>Lifecycle TCK conformance: {_e(target.get('name'))}</title><style>{_STYLE}</style></head><body>"
        f"<h1>Lifecycle TCK conformance report</h1>"
        f"<p>Suite {_e(suite.get('name'))} {_e(suite.get('version'))}; target <b>{_e(target.get('name'))}</b> "
        f"(profiles: {_e(', '.join(target.get('profiles') or []))}); levels {_e(', '.join(run.get('levels') or []))}"
        f"{'; keyword ' + _e(run['keyword']) if run.get('keyword') else ''}"
        f"{'; chaos rate ' + _e(run['chaos']) if run.get('chaos') else ''}.</p>"
        f'<p id="verdict" class="verdict-{_e(verdict)}">Verdict: <b>{_e(verdict.upper())}</b> — {totals}</p>'
        f"<h2>Summary</h2>{_count_table('area', scenarios, 'area')}{_count_table('level', scenarios, 'level')}"
        f"{_count_table('profile', scenarios, 'profile')}{sections}</body></html>"
    )
    path.write_text(page)


def write_reports(folder: Path, run: dict[str, Any], scenarios: list[dict[str, Any]]) -> None:
    """Write ``conformance-results.yaml`` and ``report.html`` into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    write_results(folder / RESULTS_FILE, run, scenarios)
    write_html(folder / HTML_FILE, run, scenarios)
