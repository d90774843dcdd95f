"""``make test`` runs each transport's own part (features/selection.py): over HTTP and with the controllers
as a process, the selected scenarios still cover every step definition, feature file and profile they
are meant to, and in-process nothing is deselected (no scenario is lost)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from features.selection import COVERED, cover

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT_SECONDS = 120


def process_features() -> list[str]:
    """The binders the Makefile runs with ``--transport process``."""
    makefile = (ROOT / "Makefile").read_text()
    block = re.search(r"PROCESS_FEATURES := \$\(wildcard (.*?)\)", makefile, re.S)
    assert block, "the Makefile names PROCESS_FEATURES"
    return block.group(1).replace("\\", " ").split()


def selection(tmp_path: Path, transport: str, paths: list[str]) -> dict:
    """The report of ``--transport-selection cover`` over ``paths`` (a child pytest that only collects)."""
    report = tmp_path / f"{transport}.json"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist", *paths, "--transport", transport,
         "--transport-selection", "cover", "--transport-selection-report", str(report)],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
        timeout=TIMEOUT_SECONDS, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return json.loads(report.read_text())


def units_of(report: dict, nodeids: list[str]) -> set[str]:
    kinds = tuple(report["covered"])
    return {u for n in nodeids for u in report["scenarios"][n] if u.split(" ", 1)[0] in kinds}


def test_cover_takes_the_forced_entries_then_the_largest_gain_first() -> None:
    units = [["a"], ["a", "b", "c"], ["c", "d"], ["d"], ["e"]]
    assert cover(units, [True, False, False, False, False]) == [0, 1, 2, 4]
    assert cover([], []) == []


@pytest.mark.parametrize("transport", ["http", "process"])
def test_the_selection_covers_every_step_definition_feature_and_profile_of_the_transport(
        tmp_path: Path, transport: str) -> None:
    paths = ["features"] if transport == "http" else process_features()
    report = selection(tmp_path, transport, paths)
    everything = list(report["scenarios"])
    chosen = report["selected"]
    assert report["selection"] == "cover"
    assert set(chosen) < set(everything)
    assert units_of(report, chosen) == units_of(report, everything)
    kinds = {u.split(" ", 1)[0] for u in units_of(report, everything)}
    assert kinds == set(COVERED[transport]), kinds
    assert not [u for n in everything for u in report["scenarios"][n] if u.startswith("undefined")]
    profiles = {u for u in units_of(report, everything) if u.startswith("profile ")}
    assert len(profiles) >= 9, profiles
    if transport == "http":
        # "Every step definition" means every one of the kit's step functions, not only those some scenario
        # happens to use: a function no scenario reaches would be covered by no selection (and no run).
        used = {u.split(" ", 2)[1] for n in everything for u in report["scenarios"][n]
                if u.split(" ", 1)[0] in ("given", "when", "then")}
        kit = {f for f in report["step_functions"] if f.startswith("features.")}
        assert len(kit) > 300, len(kit)
        assert not sorted(kit - used), f"step functions no scenario uses: {sorted(kit - used)}"
        # Every scenario about the wire or the API server's semantics runs over HTTP.
        assert set(report["always"]) <= set(chosen)
        assert any("test_wire_scenarios" in n for n in report["always"])
        assert any("test_apiserver_scenarios" in n for n in report["always"])


def test_in_process_nothing_is_deselected(tmp_path: Path) -> None:
    report = selection(tmp_path, "inprocess", ["features"])
    assert report["selection"] == "all"
    assert report["selected"] == list(report["scenarios"])
    # Every scenario but those about the wire runs in-process (the wire ones run over HTTP, selected above).
    assert len(report["selected"]) > 400


def test_every_binder_with_reference_controllers_runs_as_a_process() -> None:
    # The Makefile's $(wildcard ...) drops a binder that is renamed, and a new one is not in it until named:
    # its scenarios would then never run with the controllers as a process, and no report would say so.
    named = process_features()
    binders = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "features").glob("test_*_scenarios.py"))
    # The API server's semantics and the wire have no controllers to run elsewhere.
    without_controllers = {"features/test_apiserver_scenarios.py", "features/test_wire_scenarios.py"}
    assert sorted(named) == [b for b in binders if b not in without_controllers]
