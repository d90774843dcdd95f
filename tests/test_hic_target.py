"""``lifecycle-tck conformance --target hic``: the HIC config is validated, the example HICs of examples/
pass (kopf, plain kubernetes client) or fail for the right reasons (examples/hic_broken), and a HIC that
dies or is not there gives a clear verdict in bounded time with no process left behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.targets.hic import MIN_QUIET_SECONDS, QUIET_SECONDS, QuietPeriod, check_hic_options
from harness.world.hic import HicConfigError, load_config, parse_config

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
PYTHON = sys.executable
# A whole run of the HIC profile takes about a minute; a hung one is cut off well before CI's limit.
RUN_TIMEOUT = 600
HOOK = {"lifecyclePoint": "pre-drain", "name": "drain-app", "owner": "me"}


def _conformance(command: str, config: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PYTHON, "-m", "harness", "conformance", "--target", "hic", "--hic-command", command,
         "--hic-config", str(config), *extra],
        cwd=ROOT, capture_output=True, text=True, timeout=RUN_TIMEOUT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def _summary(run: subprocess.CompletedProcess[str]) -> str:
    return run.stdout[run.stdout.find("Lifecycle TCK conformance"):]


# -- the config ------------------------------------------------------------------------------------------


def test_a_config_naming_an_unknown_lifecycle_point_is_refused_naming_the_field() -> None:
    with pytest.raises(HicConfigError, match=r"hooks\[0\]\.lifecyclePoint: 'pre-delete' is not a lifecycle point; "
                                             r"use one of pre-drain, pre-terminate"):
        parse_config({"hooks": [{**HOOK, "lifecyclePoint": "pre-delete"}]})


@pytest.mark.parametrize(("config", "message"), [
    ({}, "hooks: required"),
    ({"hooks": [HOOK], "addsHook": True}, "config: unknown field(s) addsHook"),
    ({"hooks": [HOOK, HOOK]}, "is claimed twice"),
    ({"hooks": [{**HOOK, "name": "-bad name"}]}, "is not a valid annotation name"),
    ({"hooks": [HOOK], "selector": {"matchExpressions": [{"key": "a", "operator": "Near"}]}}, "selector:"),
    ({"hooks": [HOOK], "addsHooks": "yes"}, "addsHooks: must be true or false"),
])
def test_an_invalid_config_is_refused_saying_what_is_wrong(config: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(HicConfigError) as refused:
        parse_config(config)
    assert message in str(refused.value)


def test_every_example_config_is_valid() -> None:
    for path in sorted(EXAMPLES.glob("hic_*/hic-config.yaml")):
        assert load_config(path).hooks, path


def test_the_options_are_checked_before_anything_runs(tmp_path: Path) -> None:
    config = EXAMPLES / "hic_kubernetes" / "hic-config.yaml"
    assert check_hic_options(None, str(config)) == "--target hic needs --hic-command CMD and --hic-config FILE"
    assert "is not found" in (check_hic_options("no-such-hic-program --flag", str(config)) or "")
    missing = tmp_path / "nope.yaml"
    assert "cannot read the HIC config" in (check_hic_options(PYTHON, str(missing)) or "")


def test_a_bad_config_ends_the_run_at_once_with_its_reason(tmp_path: Path) -> None:
    config = tmp_path / "hic-config.yaml"
    config.write_text("hooks:\n  - {lifecyclePoint: pre-delete, name: x}\n")
    run = _conformance(f"{PYTHON} -c pass", config)
    assert run.returncode == 2
    assert "'pre-delete' is not a lifecycle point" in run.stderr


# -- verdicts --------------------------------------------------------------------------------------------


# The MD_HIC_* rules of seed 000 are judged on the HIC under test (features/hic/): every MUST scenario of the
# hic profile runs, so a compliant HIC is CONFORMANT (exit 0). MD_HIC_005 and MD_HIC_008 are machine
# controller rules (the scenario plays the hook owners) and are not the hic profile's.


def test_the_compliant_hic_written_with_the_kubernetes_client_passes() -> None:
    run = _conformance(f"{PYTHON} examples/hic_kubernetes/hic.py", EXAMPLES / "hic_kubernetes" / "hic-config.yaml")
    summary = _summary(run)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    # It claims a hook at each point and adds its hooks: the MD_HIC_004/006/007 scenarios ran on it too.
    assert "14 passed, 0 failed, 0 skipped, 0 did not run" in summary
    assert "Verdict: CONFORMANT — hic CONFORMANT" in summary


def test_the_compliant_hic_written_with_kopf_passes(tmp_path: Path) -> None:
    command = f"{PYTHON} -m kopf run --standalone --all-namespaces examples/hic_kopf/hic.py"
    run = _conformance(command, EXAMPLES / "hic_kopf" / "hic-config.yaml", "--report-dir", str(tmp_path))
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert "10 passed, 0 failed, 0 skipped" in _summary(run)
    assert "Verdict: CONFORMANT — hic CONFORMANT" in _summary(run)
    # It does not claim to add its hooks, nor a pre-drain hook: those SHOULD/MAY scenarios did not run, saying
    # why (the verdict does not count them).
    results = yaml.safe_load((tmp_path / "conformance-results.yaml").read_text())["scenarios"]
    (adds,) = [s for s in results if "adds them to a new Machine" in s["name"]]
    assert adds["status"] == "not-run" and "addsHooks: false" in adds["reason"], adds
    (pre_drain,) = [s for s in results if "MD_HIC_007" in s["behaviors"]]
    assert pre_drain["status"] == "not-run" and "claims no pre-drain hook" in pre_drain["reason"], pre_drain
    # The MD_HIC_* MUST rules were judged on this HIC, never left out.
    judged = {b for s in results if s["status"] == "passed" for b in s["behaviors"]}
    assert {"MD_HIC_001", "MD_HIC_002"} <= judged


def test_the_broken_hic_is_not_conformant_naming_the_md_hic_rule_it_breaks() -> None:
    run = _conformance(f"{PYTHON} examples/hic_broken/hic.py", EXAMPLES / "hic_broken" / "hic-config.yaml",
                       "-k", "alone_while")
    summary = _summary(run)
    assert run.returncode == 1, summary
    assert "Verdict: NOT CONFORMANT — hic NOT CONFORMANT" in summary
    (failed,) = [line for line in summary.splitlines() if line.lstrip().startswith("FAILED")]
    assert "(HIC_ACT_001, HIC_ACT_002, MD_HIC_001)" in failed
    assert "lost the hooks pre-drain.delete.hook.machine.cluster.x-k8s.io/drain-db" in failed


def test_the_broken_hic_fails_for_acting_early_and_removing_another_owners_hook() -> None:
    run = _conformance(f"{PYTHON} examples/hic_broken/hic.py", EXAMPLES / "hic_broken" / "hic-config.yaml",
                       "-k", "alone_while or only_its_own")
    summary = _summary(run)
    assert run.returncode == 1, summary
    lines = [line for line in summary.splitlines() if line.lstrip().startswith("FAILED")]
    early = next(line for line in lines if "alone_while_the_machine_is_not_being_deleted" in line)
    assert "the Machine m1 lost the hooks pre-drain.delete.hook.machine.cluster.x-k8s.io/drain-db" in early
    # The audit trail names the write, the annotation, whose hook and the virtual time.
    assert ("at 2026-01-01T00:00:00Z patch Machine default/m1 while it was not being deleted: removed "
            "pre-drain.delete.hook.machine.cluster.x-k8s.io/drain-db (the HIC's own hook)") in summary
    foreign = next(line for line in lines if "removes_only_its_own_hooks" in line)
    assert "[should]" in foreign
    assert ("removed pre-drain.delete.hook.machine.cluster.x-k8s.io/another-owners-hook "
            "(a hook the HIC does not claim (owner 'another-owner'))") in summary


def test_a_hic_that_exits_gives_a_clear_verdict_in_bounded_time() -> None:
    run = _conformance(f"{PYTHON} -c \"import sys; print('bye'); sys.exit(3)\"",
                       EXAMPLES / "hic_kubernetes" / "hic-config.yaml", "-k", "alone_while")
    summary = _summary(run)
    assert run.returncode == 1
    assert "the HIC ended with exit code 3" in summary
    assert "bye" in summary


# -- the adaptive quiet period ---------------------------------------------------------------------------


def test_the_quiet_period_is_the_maximum_until_the_hic_has_shown_its_pace() -> None:
    assert QuietPeriod().seconds == QUIET_SECONDS


def test_the_quiet_period_is_a_few_times_the_longest_pause_within_its_bounds() -> None:
    quiet = QuietPeriod(minimum=0.05, maximum=0.2, factor=3.0)
    quiet.saw_pause(0.001)
    assert quiet.seconds == 0.05  # a HIC that answers at once still gets the minimum
    quiet.saw_pause(0.03)
    quiet.saw_pause(0.01)
    assert quiet.seconds == pytest.approx(0.09)  # the longest pause counts, not the last
    quiet.saw_pause(1.5)
    assert quiet.seconds == 0.2


def test_a_write_after_the_hic_was_judged_quiet_makes_the_quiet_period_grow() -> None:
    quiet = QuietPeriod(minimum=MIN_QUIET_SECONDS, maximum=1.0, factor=3.0)
    quiet.saw_pause(0.02)
    before = quiet.seconds
    quiet.saw_late_write()
    assert quiet.seconds == pytest.approx(min(1.0, 3.0 * before))
