"""``report.html`` as a person sees it: rendered by headless Chromium (Debian's ``chromium``, which
``.ci/run`` installs), from a real conformance run.

What a person sees is the rendered text (``innerText``: what is laid out, not what is folded away in a
closed ``<details>``), read back by a script appended to a copy of the report and printed with
``--dump-dom``; once as the page opens, once with every scenario and timeline unfolded (what clicking
shows). A screenshot is taken too and must be a real picture of the page. Without Chromium the tests
are skipped, except in CI (``CI`` set), where they fail.
"""

from __future__ import annotations

import contextlib
import html
import io
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from harness.resources import features_dir
from harness.targets.conformance import run
from harness.targets.report import HTML_FILE

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
BROWSER_SECONDS = 90
# Two quick scenarios from two areas, levels and profiles.
SELECTION = "budget_protects_is_not_evicted or a_builtin_object_written_without_a_resourceversion"
PDB_SCENARIO = "A Pod its budget protects is not evicted and the Machine keeps draining"
# Appended to a copy of the report: the page's rendered text, into the DOM --dump-dom prints.
READ_BACK = """<script>
{unfold}
const seen = document.createElement("textarea");
seen.id = "seen";
seen.textContent = document.body.innerText;
document.body.appendChild(seen);
</script>"""
UNFOLD = 'document.querySelectorAll("details").forEach(d => { d.open = true; });'


@pytest.fixture(scope="module")
def chromium() -> str:
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing in CI: .ci/run installs Debian's chromium")
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)")
    return CHROMIUM


def _browse(chromium: str, page: Path, profile: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([chromium, *FLAGS, f"--user-data-dir={profile}", *extra, page.as_uri()],
                          capture_output=True, text=True, timeout=BROWSER_SECONDS, check=False)


def _seen(chromium: str, report: Path, tmp: Path, *, unfold: bool) -> str:
    """The text a person sees on ``report`` (every ``<details>`` opened with ``unfold``)."""
    copy = tmp / f"seen-{unfold}.html"
    copy.write_text(report.read_text().replace("</body>", READ_BACK.format(unfold=UNFOLD if unfold else "")
                                               + "</body>"))
    dumped = _browse(chromium, copy, tmp / f"profile-{unfold}", "--dump-dom")
    match = re.search(r'<textarea id="seen">(.*?)</textarea>', dumped.stdout, re.S)
    assert match, f"chromium printed no rendered text: {dumped.stderr[-2000:]}"
    return html.unescape(match.group(1))


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A passing run of two scenarios, and a failing one (a machine controller command that exits)."""
    passing, failing = tmp_path_factory.mktemp("passing"), tmp_path_factory.mktemp("failing")
    with contextlib.redirect_stdout(io.StringIO()):
        assert run(features=features_dir(), target="reference", report_dir=str(passing), level="may",
                   keyword=SELECTION) == 0
        assert run(features=features_dir(), target="machine-controller", report_dir=str(failing), level="may",
                   keyword=f"{SELECTION} or names_them_sorted",
                   target_args=["--controller-command=sh -c 'echo the controller gave up >&2; exit 3'",
                                "--stdio-control"]) == 1
    return {"passing": passing / HTML_FILE, "failing": failing / HTML_FILE}


def test_the_page_opens_on_the_verdict_and_a_summary_by_area_level_and_profile(
    chromium: str, reports: dict[str, Path], tmp_path: Path
) -> None:
    seen = _seen(chromium, reports["passing"], tmp_path, unfold=False)
    lines = [line.strip() for line in seen.splitlines() if line.strip()]
    assert lines[0] == "Lifecycle TCK conformance report"
    assert "Verdict: CONFORMANT — 2 passed, 0 failed, 0 skipped, 0 not-run, 0 not-applicable" in lines
    summary = seen[seen.index("Summary"):]
    for group in ("By area", "By level", "By profile"):
        assert group in summary
    # Tab-separated cells: name, passed, failed, skipped, not run, not applicable, total.
    assert re.search(r"machine_deletion\t1\t\t\t\t\t1", summary)
    assert re.search(r"apiserver\t1\t\t\t\t\t1", summary)
    assert re.search(r"must\t2\t\t\t\t\t2", summary)
    assert re.search(r"machine_controller\t1\t\t\t\t\t1", summary)
    # Folded: the scenario's name shows, its steps and timeline do not yet.
    assert f"[passed] {PDB_SCENARIO}" in seen
    assert "When 10 minutes pass" not in seen and "Timeline:" not in seen
    for raw in ("{'", "None", "True,", "datetime"):  # no Python reprs anywhere
        assert raw not in seen


def test_a_scenario_unfolded_shows_its_steps_and_the_timeline_of_its_writes(
    chromium: str, reports: dict[str, Path], tmp_path: Path
) -> None:
    seen = _seen(chromium, reports["passing"], tmp_path, unfold=True)
    scenario = seen[seen.index(f"[passed] {PDB_SCENARIO}"):]
    assert "@must @machine_controller @seed_001 @MD_PDB_001" in scenario
    assert '✓ Given a Cluster "c1" whose control plane Machine "cp-0" is running' in scenario
    assert "✓ When 10 minutes pass" in scenario
    timeline = scenario[scenario.index("Timeline:"):]
    assert re.match(r"Timeline: \d+ writes", timeline)
    header = timeline.splitlines()[1]
    assert header.split("\t") == ["time", "cluster", "user", "write", "changes"]
    # The machine controller's writes, with virtual time since the first write and what changed.
    rows = [line.split("\t") for line in timeline.splitlines()[2:] if line.count("\t") >= 4]
    machine = [r for r in rows if r[2] == "machine" and r[3].startswith("update machines/status default/m1")]
    assert machine, rows[:20]
    assert all(re.fullmatch(r"\+(\d+s|\d+m \d+s|\d+h \d+m)", r[0]) for r in rows), [r[0] for r in rows]
    changed = "\n".join("\t".join(r) for r in machine)
    assert "status.v1beta2.conditions[Deleting]" in changed or "status.conditions[" in changed
    assert "created: Warning" in timeline or "created: Normal" in timeline  # events say what happened
    for raw in ("{'", "\n...\n", "root["):
        assert raw not in timeline


def test_failures_come_first_opened_with_their_reason(chromium: str, reports: dict[str, Path], tmp_path: Path) -> None:
    seen = _seen(chromium, reports["failing"], tmp_path, unfold=False)
    assert "Verdict: NOT CONFORMANT" in seen
    failures = seen.index("Failed scenarios (3)")
    assert failures < seen.index("machine_deletion: ") < seen.index("apiserver\n", failures)
    # Opened without a click: the reason, naming the exit code and the command's own words.
    assert "ended (exit code 3) before answering" in seen[failures:]
    assert "the controller gave up" in seen[failures:]
    assert "✗ Given a Cluster" in seen[failures:]
    # What the target does not claim is listed after, not applicable, with the reason.
    assert "[not-applicable] A built-in object written without a resourceVersion" in seen
    unfolded = _seen(chromium, reports["failing"], tmp_path, unfold=True)
    assert "profile apiserver is not claimed by target machine-controller" in unfolded


def test_the_screenshot_is_a_picture_of_the_page(chromium: str, reports: dict[str, Path], tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    done = _browse(chromium, reports["failing"], tmp_path / "profile", f"--screenshot={shot}",
                   "--window-size=1400,1600")
    assert shot.exists(), done.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1400, 1600)
    assert len(data) > 20_000  # a page with text and tables, not a blank
    keep = os.environ.get("LIFECYCLE_TCK_KEEP_SCREENSHOT")
    if keep:
        shutil.copy(shot, keep)
