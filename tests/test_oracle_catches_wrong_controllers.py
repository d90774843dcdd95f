"""The oracle judges from what any controller leaves behind, so it fails controllers that break the seeds'
rules even where the reference's own bookkeeping would look fine: each deliberately wrong variant of the
reference (tests/wrong_controllers/) runs the scenarios of the rule it breaks in a child pytest, which must
fail for that rule and say why."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = "tests.wrong_controllers.rollout_variants"
MACHINE_PLUGIN = "tests.wrong_controllers.machine_variants"
TIMEOUT_SECONDS = 300


def run_scenarios(variant: str, behaviors: str, plugin: str = PLUGIN,
                  features: str = "features/test_rollout_hooks_scenarios.py") -> subprocess.CompletedProcess[str]:
    """The scenarios of ``features`` tagged ``behaviors`` (a -m expression) against ``variant``, in a child
    pytest."""
    env = {**os.environ, "LIFECYCLE_TCK_WRONG": variant, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", "-p", plugin,
         features, "-m", behaviors],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=TIMEOUT_SECONDS, check=False)


@pytest.mark.parametrize(("variant", "behaviors", "failed", "why"), [
    # Two values resolving to one count run in parallel: the order table alone passes (both at 3).
    ("parallel-groups", "RH_ORDER_001", 1, "the hook sixty started while the hooks ['fifty'] of another point ran"),
    # No auto-pause while a group runs: the order table and "ran at the same time" alone pass.
    ("no-pause", "RH_ORDER_002", 1, "scaled while hooks ['count', 'share'] ran"),
    ("no-cap", "RH_RECREATE_001 or RH_DS_003", 2, "hooks ran as"),
    ("abort-ignored", "RH_FAIL_001 or RH_BAD_002 or RH_STS_006", 3, "rolled out"),
])
def test_a_wrong_rollout_controller_fails_the_rule_it_breaks(variant: str, behaviors: str, failed: int,
                                                              why: str) -> None:
    result = run_scenarios(variant, behaviors)
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-2000:]
    assert f"{failed} failed" in result.stdout, result.stdout[-3000:]
    assert why in result.stdout, result.stdout[-3000:]


def test_the_reference_passes_the_same_scenarios() -> None:
    result = run_scenarios("", "RH_ORDER_001 or RH_ORDER_002 or RH_RECREATE_001 or RH_FAIL_001")
    assert result.returncode == 0, result.stdout[-3000:]


def test_a_drain_retrying_every_2_seconds_fails_the_20_second_rule() -> None:
    machines = "features/test_machine_deletion_scenarios.py"
    result = run_scenarios("drain-retry-2s", "MD_DRAIN_015", MACHINE_PLUGIN, machines)
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-2000:]
    assert "1 failed" in result.stdout and "a refused drain is retried every 20 s, not sooner" in result.stdout
    assert run_scenarios("", "MD_DRAIN_015", MACHINE_PLUGIN, machines).returncode == 0
