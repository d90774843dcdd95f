"""The conformance reports: ``conformance-results.yaml`` and ``report.html``.

Both are written from the same run description (:func:`write_reports`): the suite and target, what
was selected, and one entry per scenario::

    {"id": nodeid, "name": ..., "feature": ..., "file": "machine_deletion/hooks.feature", "area": ...,
     "status": "passed|failed|skipped|not-run|not-applicable", "reason": ..., "behaviors": [...],
     "level": "must|should|may|None", "profile": [...], "seed": [...],
     "steps": [{"keyword", "name", "status"}], "timeline": [audit entries]}

The timeline of a scenario is what its world's audit trail recorded while it ran (every accepted
write: virtual time, cluster, verb, resource, namespace, name, user, and what changed), collected by
features/conftest.py under :data:`TIMELINE` when a report is being written.
"""

from __future__ import annotations

import html
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
import yaml

from harness.clock import parse_rfc3339
from harness.kube.objects import same_json

RESULTS_FILE = "conformance-results.yaml"
HTML_FILE = "report.html"
JUNIT_FILE = "junit.xml"
CUCUMBER_FILE = "cucumber.json"
PASSED, FAILED, SKIPPED, NOT_APPLICABLE = "passed", "failed", "skipped", "not-applicable"
# A scenario of a claimed profile that did not run (wall-clock budget, unclaimed capability, a scenario
# the target cannot drive): it makes the verdict INCOMPLETE (harness/targets/verdict.py).
NOT_RUN = "not-run"
STATUSES = (PASSED, FAILED, SKIPPED, NOT_RUN, NOT_APPLICABLE)
# Per scenario: the audit records of its world (as Scene.audit gives them) while it ran.
TIMELINE = pytest.StashKey[list[dict[str, Any]]]()
# A scenario's timeline in the reports is cut here (a runaway controller must not make a 100 MB report).
TIMELINE_KEPT = 500
CHANGES_KEPT = 12
VALUE_CHARS = 80
# What a write changes that says nothing to a reader.
_IGNORED_KEYS = {"metadata": ("resourceVersion", "managedFields", "generation")}  # by the path of their object
_IGNORED_PATHS = tuple(f"root['{holder}']['{key}']" for holder, keys in _IGNORED_KEYS.items() for key in keys)


def _short(value: Any) -> str:
    """A value on one line: a string as it is, anything else as compact JSON (never a Python repr)."""
    if isinstance(value, str):
        text = value if value else '""'
    else:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


_PART = re.compile(r"\[('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|-?\d+)\]")


def _path(deep_path: str, obj: Any = None) -> str:
    """A DeepDiff path as a reader writes it: ``root['status']['conditions'][1]['reason']`` →
    ``status.conditions[Ready].reason``, a list item named by its ``type`` or ``name`` in ``obj``
    (its index otherwise)."""
    out = ""
    for token in _PART.findall(deep_path):
        if token[0] in "'\"":
            key = token[1:-1]
            obj = obj.get(key) if isinstance(obj, dict) else None
            out += f".{key}" if out else key
            continue
        index = int(token)
        item = obj[index] if isinstance(obj, list) and -len(obj) <= index < len(obj) else None
        label = (item.get("type") or item.get("name")) if isinstance(item, dict) else None
        out += f"[{label if isinstance(label, str) else index}]"
        obj = item
    return out


def _created(new: dict[str, Any]) -> str:
    # An Event says what happened: its reason and message are the point of writing it.
    if new.get("kind") == "Event" and (new.get("reason") or new.get("message")):
        return f"created: {new.get('type', '')} {new.get('reason', '')}: {_short(new.get('message', ''))}".strip()
    return "created"


def _same_item(first: Any, second: Any, level: Any = None) -> bool:
    """List items are the same item when their ``type`` (conditions) or ``name`` agree, wherever they
    are in the list (DeepDiff's ``iterable_compare_func``); other items are compared by position."""
    from deepdiff.helper import CannotCompare

    if isinstance(first, dict) and isinstance(second, dict):
        for key in ("type", "name"):
            if key in first and key in second:
                return bool(first[key] == second[key])
    raise CannotCompare() from None


def changes(old: dict[str, Any] | None, new: dict[str, Any] | None) -> list[str]:
    """What a write changed, one line per changed field (``path: old → new``, ``+path: value``,
    ``-path``), at most :data:`CHANGES_KEPT` lines (the last one says how many more)."""
    if old is None and new is None:
        return []
    if old is None:
        return [_created(new or {})]
    if new is None:
        return ["deleted"]
    lines = _changed(old, new, "")
    lines.sort(key=lambda line: line.lstrip("+-"))
    if len(lines) > CHANGES_KEPT:
        lines = lines[: CHANGES_KEPT - 1] + [f"… and {len(lines) - CHANGES_KEPT + 1} more"]
    return lines


def _deepdiff_lines(old: Any, new: Any, prefix: str = "") -> list[str]:
    """DeepDiff's changes from ``old`` to ``new`` as lines, each path after ``prefix`` (the path of ``old``
    and ``new`` in the objects written); list items are named by their ``type`` or ``name``."""
    from deepdiff import DeepDiff  # imported here: only reports need it

    # threshold_to_diff_deeper=0: each changed key on a line of its own, however few keys two objects share
    # (by default DeepDiff reports an object sharing under a third of its keys as one changed value).
    diff = DeepDiff(old, new, exclude_paths=list(_IGNORED_PATHS), verbose_level=2, iterable_compare_func=_same_item,
                    threshold_to_diff_deeper=0)
    lines: list[str] = []
    for kind, entries in diff.items():
        for deep_path, detail in dict(entries).items() if isinstance(entries, dict) else []:
            if kind in ("values_changed", "type_changes"):
                before, after = _short(detail.get("old_value")), _short(detail.get("new_value"))
                lines.append(f"{_joined(prefix, _path(deep_path, new))}: {before} → {after}")
            elif kind.endswith("_added"):
                lines.append(f"+{_joined(prefix, _path(deep_path, new))}: {_short(detail)}")
            elif kind.endswith("_removed"):
                # A removed list item's path counts in the old list; any other path in the new one.
                where = old if kind == "iterable_item_removed" else new
                lines.append(f"-{_joined(prefix, _path(deep_path, where))}")
    return lines


def _joined(prefix: str, rest: str) -> str:
    """``prefix`` and the path after it (``status.conditions`` and ``[Ready].reason``)."""
    if not prefix or rest.startswith("["):
        return prefix + rest
    return f"{prefix}.{rest}" if rest else prefix


def _changed(old: dict[str, Any], new: dict[str, Any], path: str) -> list[str]:
    """The lines of what differs between two objects at ``path``, the lines DeepDiff gives of the whole
    objects (tests/test_report_changes.py compares them): a key whose values are the same JSON is passed
    over, nested objects are walked here, and only two lists that differ go to DeepDiff (which pairs
    their items by ``type`` or ``name``). A DeepDiff of both whole objects for each write was most of a
    ``--report-dir`` run's CPU."""
    lines: list[str] = []
    ignored = _IGNORED_KEYS.get(path, ())
    for key, before in old.items():
        if key in ignored:
            continue
        here = f"{path}.{key}" if path else key
        if key not in new:
            lines.append(f"-{here}")
            continue
        after = new[key]
        if same_json(before, after):
            continue
        if isinstance(before, dict) and isinstance(after, dict):
            lines += _changed(before, after, here)
        elif isinstance(before, list) and isinstance(after, list):
            lines += _deepdiff_lines(before, after, here)
        else:
            lines.append(f"{here}: {_short(before)} → {_short(after)}")
    for key, after in new.items():
        if key not in old and key not in ignored:
            lines.append(f"+{f'{path}.{key}' if path else key}: {_short(after)}")
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
body { font-family: system-ui, sans-serif; margin: 1.5em 2em; color: #1f2328; max-width: 1500px; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { font-size: 1.2em; margin-top: 1.6em; }
.run { color: #555; margin-top: 0; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #d0d7de; padding: 0.2em 0.6em; text-align: left; vertical-align: top; font-size: 0.9em; }
th { background: #f6f8fa; }
table.summary td.n { text-align: right; min-width: 4em; }
table.summary tr.group th { background: #eaeef2; text-align: left; }
.passed { color: #1a7f37; } .failed { color: #cf222e; font-weight: bold; }
.skipped { color: #9a6700; } .not-run { color: #9a6700; font-weight: bold; } .not-applicable { color: #6e7781; }
#verdict { font-size: 1.15em; padding: 0.4em 0.7em; border-radius: 6px; display: inline-block; }
.verdict-pass { color: #1a7f37; background: #dafbe1; } .verdict-fail { color: #cf222e; background: #ffebe9; }
.verdict-incomplete { color: #9a6700; background: #fff8c5; }
table.profiles td { font-size: 0.9em; }
details.scenario { border: 1px solid #d0d7de; margin: 0.4em 0; padding: 0.3em 0.6em; border-radius: 6px; }
details.scenario[open] { background: #fcfcfd; }
details.scenario > summary { cursor: pointer; }
ol.steps { margin: 0.4em 0; } ol.steps li.failed { background: #ffebe9; }
ol.steps li.not-run { color: #6e7781; }
.reason { white-space: pre-wrap; font-family: ui-monospace, monospace; font-size: 0.85em; background: #fff8f8;
          border-left: 3px solid #cf222e; padding: 0.4em 0.6em; margin: 0.4em 0; }
.reason.not-applicable, .reason.skipped { background: #f6f8fa; border-left-color: #8c959f; }
table.timeline { width: 100%; table-layout: auto; }
table.timeline td { font-size: 0.8em; }
table.timeline td.changes { font-family: ui-monospace, monospace; white-space: pre-wrap; word-break: break-word; }
table.timeline td.t { white-space: nowrap; }
.tags { color: #57606a; font-size: 0.85em; }
.add { color: #1a7f37; } .del { color: #cf222e; }
"""
_GROUPS = (("By area", "area"), ("By level", "level"), ("By profile", "profile"))
_STEP_MARKS = {PASSED: "✓", FAILED: "✗", SKIPPED: "↷", "not run": "–"}
_STATUS_ORDER = {FAILED: 0, NOT_RUN: 1, SKIPPED: 2, PASSED: 3, NOT_APPLICABLE: 4}
# The page's verdict classes: the verdict (CONFORMANT, NOT CONFORMANT, INCOMPLETE) as a colour.
_VERDICT_CLASS = {"CONFORMANT": "pass", "NOT CONFORMANT": "fail", "INCOMPLETE": "incomplete"}


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _summary_table(scenarios: list[dict[str, Any]]) -> str:
    """One table: per area, level and profile, how many scenarios have each status."""
    head = "".join(f"<th>{_e(status)}</th>" for status in STATUSES) + "<th>total</th>"
    body = []
    for title, key in _GROUPS:
        rows: dict[str, Counter[str]] = {}
        for scenario in scenarios:
            values = scenario.get(key)
            for value in values if isinstance(values, list) and values else [values]:
                rows.setdefault(str(value or "-"), Counter())[scenario["status"]] += 1
        body.append(f'<tr class="group"><th colspan="{len(STATUSES) + 2}">{_e(title)}</th></tr>')
        for name, row in sorted(rows.items()):
            cells = "".join(f'<td class="n {status}">{row[status] or ""}</td>' for status in STATUSES)
            body.append(f"<tr><td>{_e(name)}</td>{cells}<td class=\"n\">{sum(row.values())}</td></tr>")
    return f'<table class="summary"><tr><th></th>{head}</tr>{"".join(body)}</table>'


def _name(scenario: dict[str, Any]) -> str:
    """The scenario's name; an outline not run keeps its ``<placeholders>``: its example's id is added."""
    name = str(scenario.get("name") or "")
    example = str(scenario.get("id", "")).partition("[")[2].rstrip("]")
    return f"{name} [{example}]" if example and "<" in name else name


def _steps(scenario: dict[str, Any]) -> str:
    items = "".join(
        f'<li class="{_e(step["status"]).replace(" ", "-")}" title="{_e(step["status"])}">'
        f'{_STEP_MARKS.get(step["status"], "")} <b>{_e(step["keyword"])}</b> {_e(step["name"])}</li>'
        for step in scenario.get("steps") or []
    )
    return f'<ol class="steps">{items}</ol>' if items else "<p>(no steps recorded)</p>"


def _elapsed(seconds: float) -> str:
    """``+0s``, ``+45s``, ``+10m 5s``, ``+2h 0m``: virtual time since the scenario's first write."""
    whole = int(round(seconds))
    if whole < 60:
        return f"+{whole}s"
    if whole < 3600:
        return f"+{whole // 60}m {whole % 60}s"
    return f"+{whole // 3600}h {whole % 3600 // 60}m"


def _resource(entry: dict[str, Any]) -> str:
    # machines.cluster.x-k8s.io/status → machines/status (the group is in the cell's title)
    plural, _, rest = str(entry.get("resource") or "").partition(".")
    sub = rest.partition("/")[2] if "/" in rest else ""
    return f"{plural}/{sub}" if sub else plural


def _who(user: str) -> str:
    # system:serviceaccount:kube-system:machine → machine (the full name is in the cell's title)
    return user.rsplit(":", 1)[-1] if user.startswith("system:") else user


def _change(line: str) -> str:
    css = "add" if line.startswith("+") else "del" if line.startswith("-") else ""
    return f'<span class="{css}">{_e(line)}</span>' if css else _e(line)


def _timeline(scenario: dict[str, Any]) -> str:
    entries = scenario.get("timeline")
    if not entries:
        return ""
    times = [parse_rfc3339(e["time"]) for e in entries if isinstance(e.get("time"), str)]
    first = min(times) if times else 0.0
    rows = []
    for entry in entries:
        if "truncated" in entry:
            rows.append(f'<tr><td colspan="6">… {entry["truncated"]} more writes not shown</td></tr>')
            continue
        when = entry.get("time")
        elapsed = _elapsed(parse_rfc3339(when) - first) if isinstance(when, str) else ""
        obj = "/".join(p for p in (entry.get("namespace"), entry.get("name")) if p)
        user = str(entry.get("user") or "")
        code = entry.get("code")
        rows.append(
            f'<tr><td class="t" title="{_e(when)}">{elapsed}</td><td>{_e(entry.get("cluster"))}</td>'
            f'<td title="{_e(user)}">{_e(_who(user))}</td>'
            f'<td title="{_e(entry.get("resource"))}">{_e(entry.get("verb"))} {_e(_resource(entry))} '
            f'<b>{_e(obj)}</b>{"" if code in (200, 201, None) else f" → {_e(code)}"}</td>'
            f'<td class="changes">{chr(10).join(_change(c) for c in entry.get("changes") or [])}</td></tr>'
        )
    head = "".join(f"<th>{h}</th>" for h in ("time", "cluster", "user", "write", "changes"))
    return (f'<details class="timeline"><summary>Timeline: {len(entries)} writes (time since the first; '
            f"hover for the instant and full names)</summary>"
            f'<table class="timeline"><tr>{head}</tr>{"".join(rows)}</table></details>')


def _scenario(scenario: dict[str, Any], *, show_area: bool = False) -> str:
    status = scenario["status"]
    tags = " ".join(f"@{t}" for t in [scenario.get("level"), *scenario.get("profile", []), *scenario.get("seed", []),
                                        *scenario.get("behaviors", [])] if t)
    reason = (f'<div class="reason {_e(status)}">{_e(scenario["reason"])}</div>'
              if scenario.get("reason") else "")
    opened = " open" if status == FAILED else ""
    where = f'{_e(scenario.get("area"))}: ' if show_area else ""
    return (
        f'<details class="scenario" id="{_e(scenario["id"])}"{opened}><summary>'
        f'<span class="{status}">[{_e(status)}]</span> {where}{_e(_name(scenario))} '
        f'<span class="tags">— {_e(scenario.get("feature"))} ({_e(scenario.get("file"))})</span></summary>'
        f'<p class="tags">{_e(tags)}</p>{reason}{_steps(scenario)}{_timeline(scenario)}</details>'
    )


def write_html(path: Path, run: dict[str, Any], scenarios: list[dict[str, Any]]) -> None:
    """``report.html``: the verdict and a summary table (by area, level and profile) at the top, then
    the failed scenarios (opened), then every other scenario by area (skipped first, not applicable
    last), each with its steps and the timeline of the writes it caused. Self-contained (no scripts)."""
    counts = summary(scenarios)
    verdict = str(run.get("verdict", ""))
    target = run.get("target") or {}
    suite = run.get("suite") or {}
    failed = [s for s in scenarios if s["status"] == FAILED]
    by_area: dict[str, list[dict[str, Any]]] = {}
    for scenario in scenarios:
        if scenario["status"] != FAILED:
            by_area.setdefault(scenario.get("area") or "-", []).append(scenario)
    failures = (f'<h2 id="failures" class="failed">Failed scenarios ({len(failed)})</h2>'
                + "".join(_scenario(s, show_area=True) for s in failed)) if failed else ""
    sections = "".join(
        f"<h2>{_e(area)}</h2>" + "".join(_scenario(s) for s in sorted(items, key=lambda s: _STATUS_ORDER[s["status"]]))
        for area, items in sorted(by_area.items())
    )
    # A count of zero is plain text: "0 failed" in red would read as an alarm.
    totals = ", ".join(f'<span class="{status}">{counts[status]} {status}</span>' if counts[status]
                       else f"0 {status}" for status in STATUSES)
    page = (
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>Lifecycle TCK conformance: {_e(target.get('name'))}</title><style>{_STYLE}</style></head><body>"
        f"<h1>Lifecycle TCK conformance report</h1>"
        f"<p class=\"run\">Suite {_e(suite.get('name'))} {_e(suite.get('version'))}"
        f" (Kubernetes {_e(suite.get('kubernetes'))}, Cluster API {_e(suite.get('clusterAPI'))}); target "
        f"<b>{_e(target.get('name'))}</b> (profiles: {_e(', '.join(target.get('profiles') or []))}); "
        f"levels {_e(', '.join(run.get('levels') or []))}"
        f"{'; keyword ' + _e(run['keyword']) if run.get('keyword') else ''}"
        f"{'; chaos rate ' + _e(run['chaos']) if run.get('chaos') else ''}.</p>"
        f'<p id="verdict" class="verdict-{_e(_VERDICT_CLASS.get(verdict, verdict))}">Verdict: <b>{_e(verdict)}</b>'
        f' — {totals}</p>{_profiles_table(run.get("profiles") or {})}'
        f'<h2 id="summary">Summary</h2>{_summary_table(scenarios)}{failures}{sections}</body></html>'
    )
    path.write_text(page)


def _profiles_table(profiles: dict[str, Any]) -> str:
    """Each claimed profile's verdict, its MUST counts and why scenarios did not run."""
    if not profiles:
        return ""
    rows = []
    for name, entry in profiles.items():
        must = entry.get("must") or {}
        reasons = "; ".join(f"{count} × {reason}" for reason, count in (entry.get("not-run reasons") or {}).items())
        verdict = str(entry.get("verdict", ""))
        rows.append(f'<tr><td>{_e(name)}</td><td class="verdict-{_e(_VERDICT_CLASS.get(verdict, verdict))}">'
                    f'{_e(verdict)}</td><td class="n">{must.get("passed", 0)}</td><td class="n">{must.get("failed", 0)}'
                    f'</td><td class="n">{must.get("not-run", 0)}</td><td>{_e(reasons)}</td></tr>')
    return ('<table class="profiles" id="profiles"><tr><th>profile</th><th>verdict</th><th>MUST passed</th>'
            f'<th>failed</th><th>did not run</th><th>why not run</th></tr>{"".join(rows)}</table>')


def annotate_junit(path: Path, run: dict[str, Any], not_run: list[dict[str, Any]]) -> None:
    """Add the verdict to ``junit.xml`` (testsuite properties ``verdict`` and ``verdict.<profile>``) and a
    skipped test case, typed ``not-run`` with its reason, for each scenario of a claimed profile that did
    not run and that pytest never saw (deselected), so a CI reading only JUnit sees it too."""
    if not path.exists():
        return
    tree = ElementTree.parse(path)
    root = tree.getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    if suite is None:
        return
    properties = suite.find("properties")
    if properties is None:
        properties = ElementTree.Element("properties")
        suite.insert(0, properties)
    ElementTree.SubElement(properties, "property", name="verdict", value=str(run.get("verdict", "")))
    for profile, entry in (run.get("profiles") or {}).items():
        ElementTree.SubElement(properties, "property", name=f"verdict.{profile}", value=str(entry.get("verdict")))
    seen = {case.get("name") for case in suite.iter("testcase")}
    added = 0
    for scenario in not_run:
        module, _, name = scenario["id"].partition("::")
        if name in seen:
            continue
        case = ElementTree.SubElement(suite, "testcase", classname=module.removesuffix(".py").replace("/", "."),
                                      name=name, time="0")
        ElementTree.SubElement(case, "skipped", type="not-run", message=str(scenario.get("reason", "")))
        added += 1
    suite.set("skipped", str(int(suite.get("skipped", "0")) + added))
    suite.set("tests", str(int(suite.get("tests", "0")) + added))
    tree.write(path, encoding="utf-8", xml_declaration=True)


def write_reports(folder: Path, run: dict[str, Any], scenarios: list[dict[str, Any]]) -> None:
    """Write ``conformance-results.yaml`` and ``report.html`` into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    write_results(folder / RESULTS_FILE, run, scenarios)
    write_html(folder / HTML_FILE, run, scenarios)
