"""Where the test suite's time goes (``make test`` within 5 minutes on 2 CPUs, README "Quickstart").

Two things, neither changing what a test checks:

- ``slow``: tests that cost the most and whose rule another test of ``make test`` already holds (named
  below). ``make test`` deselects them (``-m "not slow"``); ``make test-all`` runs them, as CI's nightly
  run does (README "Continuous integration"); CI's regular run (``.ci/run``) runs one of them (the
  whole machine-controller profile in lockstep) as a step of its own.
- Long tests first: with ``--maxschedchunk 1`` (Makefile) xdist hands tests out two at a time, so the
  longest are spread over the workers from the start and none runs alone at the end. The order is by
  module, from the timings of a serial run.
"""

from __future__ import annotations

import pytest

SLOW = "slow"

# nodeid prefix -> the test of `make test` that holds the same rule.
SLOW_TESTS = {
    # ~15 s: the same variant is caught by
    # test_mutation_self_test.py::test_todays_wrong_variant_is_caught[drain-retry-2s].
    "tests/test_oracle_catches_wrong_controllers.py::test_a_drain_retrying_every_2_seconds_fails_the_20_second_rule":
        "tests/test_mutation_self_test.py (drain-retry-2s)",
    # ~33 s: a compliant HIC passing is test_the_compliant_hic_written_with_the_kubernetes_client_passes; kopf
    # against serve is tests/test_kopf_operator.py.
    "tests/test_hic_target.py::test_the_compliant_hic_written_with_kopf_passes":
        "tests/test_hic_target.py (kubernetes client HIC), tests/test_kopf_operator.py",
    # ~9-16 s each: the reference controllers pass the same scenarios as a process (--transport process) and
    # the stdio protocol passing a profile is test_the_reference_deployment_controller_as_a_third_party_is_conformant;
    # each profile's harness is driven by test_each_profiles_broken_example_is_not_conformant_naming_the_rule.
    "tests/test_controller_target.py::test_each_profiles_reference_controller_as_a_third_party_is_conformant":
        "features --transport process, tests/test_controller_target.py (deployment, broken examples)",
    # ~37 s: about twenty machine deletion scenarios against the reference machine controller in lockstep; the
    # same controller as a process over the same stdio protocol is features --transport process, and the
    # lockstep runner passing a controller is test_the_reference_deployment_controller_as_a_third_party_is_conformant.
    "tests/test_machine_controller_target.py::test_the_reference_machine_controller_as_the_command_passes_in_lockstep":
        "features --transport process, tests/test_controller_target.py (deployment)",
    # ~2 min on 2 idle CPUs (one of them busy; 4-5 min under heavy load): every scenario of the machine_controller
    # profile against the reference machine controller in lockstep. Not in `make test` (which is at its 5 minutes
    # already): CI's regular run (`.ci/run`) runs it as a step of its own beside the wheel check, the nightly run
    # in `make test-all`; the process transport holds the same rules in `make test`.
    "tests/test_machine_controller_target.py::test_the_reference_machine_controller_as_the_command_passes_the_whole_profile_in_lockstep":
        "features --transport process, tests/test_machine_controller_target.py (lockstep subset, in make test-all)",
}

# Modules whose tests are the longest (subprocesses, bounded real-time waits), longest first.
LONG_MODULES = (
    "tests/test_controller_target.py",
    "tests/test_machine_controller_target.py",
    "tests/test_hic_target.py",
    "tests/test_oracle_catches_wrong_controllers.py",
    "tests/test_extension_target.py",
    "tests/test_serve_process.py",
    "tests/fuzz/test_fuzz_api.py",
    "tests/test_serve_safety.py",
    "tests/test_report_browser.py",
    "tests/test_kubectl_rollout.py",
    "tests/test_serve_cli.py",
    "tests/test_machine_controllers_cli.py",
    "tests/test_pytest_plugin.py",
    "tests/test_mutation_self_test.py",
    "tests/test_runtime_walkthrough.py",
)


def _rank(item: pytest.Item) -> int:
    module = item.nodeid.partition("::")[0]
    return LONG_MODULES.index(module) if module in LONG_MODULES else len(LONG_MODULES)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark :data:`SLOW_TESTS` ``slow``; put the :data:`LONG_MODULES` first (a stable sort: the order
    within a module, and of every other test, is kept)."""
    for item in items:
        if any(item.nodeid.startswith(prefix) for prefix in SLOW_TESTS):
            item.add_marker(SLOW)
    items.sort(key=_rank)
