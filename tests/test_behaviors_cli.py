"""``lifecycle-tck behaviors``: every behavior with its seed, level, scenarios and latest result, the
coverage summary, and the README's coverage table kept equal to what the command prints."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

import pytest
import yaml

from harness.__main__ import main
from harness.resources import features_dir
from harness.targets import behaviors
from harness.targets.report import RESULTS_FILE

README = Path(__file__).resolve().parent.parent / "README.md"
FEATURES = features_dir()
START, END = "<!-- behaviors-summary:start -->", "<!-- behaviors-summary:end -->"
PDB = "MD_PDB_001"


def _cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["behaviors", *args])
    return code, out.getvalue()


def _results(folder: Path, scenarios: list[dict[str, object]]) -> Path:
    path = folder / RESULTS_FILE
    path.write_text(yaml.safe_dump({"verdict": "pass", "scenarios": scenarios}))
    return path


def test_the_readme_coverage_table_is_what_the_command_prints() -> None:
    text = README.read_text()
    assert START in text and END in text, "README.md lost its coverage table markers"
    in_readme = text[text.index(START) + len(START): text.index(END)].strip()
    code, printed = _cli("--summary", "--format", "markdown", "--results", "none")
    assert code == 0
    assert in_readme == printed.strip(), (
        "README.md's coverage table is stale: replace it with the output of "
        "`lifecycle-tck behaviors --summary --format markdown --results none`"
    )


def test_every_behavior_is_listed_with_its_seed_level_scenarios_and_no_result_before_a_run() -> None:
    listed = behaviors.load(FEATURES, None)
    ids = [str(b["id"]) for b in yaml.safe_load((FEATURES / "behaviors.yaml").read_text())["behaviors"]]
    assert [b.id for b in listed] == ids
    pdb = next(b for b in listed if b.id == PDB)
    assert (pdb.level, pdb.seed, pdb.profile, pdb.result) == ("must", "001", "machine_controller", "not run")
    assert pdb.source.startswith("seeds/001_")
    assert "machine_deletion/drain_pdb.feature: A Pod its budget protects is not evicted and the Machine keeps " \
           "draining" in pdb.scenarios
    assert next(b for b in listed if b.id.startswith("API_")).seed == "-"


def test_a_behavior_tagged_on_a_feature_or_rule_finds_the_scenarios_inside_it(tmp_path: Path) -> None:
    (tmp_path / "area").mkdir()
    (tmp_path / "area" / "x.feature").write_text(
        "@FEAT_001\nFeature: f\n  Rule: r\n    @RULE_001\n    Example: inside the rule\n      Given a thing\n"
        "  @OWN_001\n  Scenario: outside\n    Given a thing\n"
    )
    tagged = behaviors.scenarios_by_tag(tmp_path)
    assert tagged["FEAT_001"] == ["area/x.feature: inside the rule", "area/x.feature: outside"]
    assert tagged["RULE_001"] == ["area/x.feature: inside the rule"]
    assert tagged["OWN_001"] == ["area/x.feature: outside"]


@pytest.mark.parametrize(("statuses", "result"), [
    ([], "not run"),
    (["passed", "passed"], "passed"),
    (["passed", "failed"], "failed"),
    (["passed", "not-applicable"], "passed"),
    (["not-applicable"], "not-applicable"),
    (["passed", "skipped"], "skipped"),
])
def test_a_behaviors_result_folds_the_results_of_its_scenarios(statuses: list[str], result: str) -> None:
    assert behaviors._fold(statuses) == result


def test_results_come_from_the_file_given_and_add_a_passing_column(tmp_path: Path) -> None:
    path = _results(tmp_path, [{"id": "a", "status": "passed", "behaviors": [PDB]},
                               {"id": "b", "status": "failed", "behaviors": ["MD_PDB_002"]}])
    code, printed = _cli("--results", str(path))
    assert code == 0
    rows = {line.split()[0]: line.split() for line in printed.splitlines()[1:]}
    assert rows[PDB][-1] == "passed" and rows["MD_PDB_002"][-1] == "failed"
    assert rows["API_EVICT_001"][-2:] == ["not", "run"]
    code, summary = _cli("--summary", "--results", str(tmp_path))  # a report folder will do
    assert code == 0
    header, *lines = summary.splitlines()
    assert header.split()[-1] == "passing"
    seed_001_must = next(line.split() for line in lines if line.split()[:2] == ["001", "must"])
    assert seed_001_must[-1] == "1"


def test_by_default_the_newest_results_under_reports_are_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert behaviors.latest_results() is None
    (tmp_path / "reports" / "old").mkdir(parents=True)
    (tmp_path / "reports" / "new").mkdir()
    old = _results(tmp_path / "reports" / "old", [{"status": "failed", "behaviors": [PDB]}])
    new = _results(tmp_path / "reports" / "new", [{"status": "passed", "behaviors": [PDB]}])
    os.utime(old, (1, 1))
    assert behaviors.latest_results() == Path("reports") / "new" / RESULTS_FILE
    code, printed = _cli("--format", "yaml")
    assert code == 0
    document = yaml.safe_load(printed)
    assert document["results"] == str(Path("reports") / "new" / RESULTS_FILE)
    assert next(b for b in document["behaviors"] if b["id"] == PDB)["result"] == "passed"
    assert new.exists()


def test_the_markdown_list_names_every_scenario_of_a_behavior() -> None:
    code, printed = _cli("--format", "markdown", "--results", "none")
    assert code == 0
    lines = printed.splitlines()
    assert lines[0] == "| id | level | seed | profile | scenarios | result |"
    pdb = next(line for line in lines if line.startswith(f"| {PDB} |"))
    assert "machine_deletion/drain_pdb.feature: A Pod its budget protects" in pdb and pdb.endswith("| not run |")


def test_a_results_file_that_is_not_there_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["behaviors", "--results", str(tmp_path / "nope.yaml")]) == 2
    assert "no such file" in capsys.readouterr().err
