"""``lifecycle-tck conformance --jobs N``: the scenarios spread over N pytest-xdist worker processes,
with the same summary, verdict and reports as a run in one process.

Loaded with ``-p harness.targets.workers`` (harness/targets/conformance.py adds it with ``-n N``), so it
is a plugin of the controller and of every worker:

- The controller hands each worker what the runner's :class:`~harness.targets.conformance._Outcomes`
  was built with (target, claimed profiles, behavior ids, profiles) through ``workerinput``.
- A worker builds the same ``_Outcomes`` (only it sees the ``pytest.Item``: markers, the pytest-bdd
  template, the audit trail of ``--scenario-timeline``), without its report hook, and sends each
  scenario's entry, as collected before it ran, on its setup report, its timeline on its teardown
  report, and pytest-bdd's step report on every report. The controller turns them back into its own
  ``_Outcomes`` entry and pytest-bdd's ``ReportContext``, so that the controller's ``_Outcomes`` judges
  the reports exactly as in one process, and pytest-bdd's Cucumber JSON (written by the controller
  only) has its steps.
- Scenarios deselected at collection (a profile the target does not claim) are deselected in every
  worker; their entries come back in ``workeroutput`` when a worker ends.
- A worker that dies: xdist reports the scenario it was running failed; the runner's verdict is then
  NOT CONFORMANT, whatever that scenario's level (:attr:`_Outcomes.crashed`).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from pytest_bdd.reporting import ReportContext, test_report_context_registry

from harness.targets.conformance import OUTCOMES, _Outcomes

# The keys of workerinput / workeroutput and of a serialised report that this plugin owns.
PARAMETERS = "lifecycle_tck_outcomes"
DESELECTED = "lifecycle_tck_deselected"
ENTRY = "lifecycle_tck_entry"
TIMELINE = "lifecycle_tck_timeline"
STEPS = "lifecycle_tck_bdd"


def _in_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


# --- the controller ---------------------------------------------------------------------------------------


def pytest_configure_node(node: Any) -> None:
    """Give a worker the parameters of the runner's ``_Outcomes`` (xdist hook, on the controller)."""
    outcomes = node.config.stash.get(OUTCOMES, None)
    if outcomes is not None:
        node.workerinput[PARAMETERS] = outcomes.parameters()


def pytest_testnodedown(node: Any, error: object) -> None:
    """The entries of the scenarios the worker deselected at collection (every worker deselects the same)."""
    outcomes = node.config.stash.get(OUTCOMES, None)
    output = getattr(node, "workeroutput", None) or {}
    if outcomes is not None:
        for entry in output.get(DESELECTED) or []:
            outcomes.results.setdefault(entry["id"], entry)


def pytest_handlecrashitem(crashitem: str, report: pytest.TestReport, sched: Any) -> None:
    """A worker died while running ``crashitem``: the run cannot be a pass (xdist hook, on the controller)."""
    outcomes = _scheduler_outcomes(sched)
    if outcomes is not None:
        outcomes.crashed.append(crashitem)


def _scheduler_outcomes(sched: Any) -> _Outcomes | None:
    """The runner's ``_Outcomes`` through the scheduler's config (xdist hands the crash hook no config)."""
    config = getattr(sched, "config", None)
    return config.stash.get(OUTCOMES, None) if config is not None else None


@pytest.hookimpl(wrapper=True)
def pytest_report_from_serializable(config: pytest.Config, data: dict[str, Any]) -> Any:
    """A worker's report on the controller: its scenario's entry into the runner's ``_Outcomes``, its
    pytest-bdd step report back into pytest-bdd's registry (read by its Cucumber JSON and by ``_Outcomes``)."""
    entry, timeline, steps = data.pop(ENTRY, None), data.pop(TIMELINE, None), data.pop(STEPS, None)
    report = yield
    outcomes = config.stash.get(OUTCOMES, None)
    if outcomes is not None and report is not None:
        if entry is not None:
            outcomes.results.setdefault(entry["id"], entry)
        if timeline is not None and report.nodeid in outcomes.results:
            outcomes.results[report.nodeid]["timeline"] = timeline
    if steps is not None and report is not None:
        test_report_context_registry[report] = ReportContext(scenario=steps["scenario"], name=steps["name"])
    return report


# --- a worker ---------------------------------------------------------------------------------------------


def pytest_configure(config: pytest.Config) -> None:
    """In a worker: the runner's ``_Outcomes``, built from what the controller handed over. It is not
    registered as a plugin: registered last, its trylast collection hook would run before
    features/conftest.py's (pluggy calls later registrations first), while in one process the runner's
    plugin is registered before any conftest.py. This module, loaded with ``-p`` before any conftest.py
    too, calls its hooks in that same order."""
    if not _in_worker(config):
        return
    parameters = config.workerinput.get(PARAMETERS)  # type: ignore[attr-defined]
    if parameters is not None:
        config.stash[OUTCOMES] = _Outcomes.from_parameters(parameters)


def _worker_outcomes(config: pytest.Config) -> _Outcomes | None:
    return config.stash.get(OUTCOMES, None) if _in_worker(config) else None


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a worker: the runner's deselection, and the deselected scenarios' entries for the controller."""
    outcomes = _worker_outcomes(config)
    if outcomes is None:
        return
    outcomes.pytest_collection_modifyitems(config, items)
    config.workeroutput[DESELECTED] = list(outcomes.results.values())  # type: ignore[attr-defined]


def pytest_runtest_setup(item: pytest.Item) -> None:
    """In a worker: the scenario's entry, from its item."""
    outcomes = _worker_outcomes(item.config)
    if outcomes is not None:
        outcomes.pytest_runtest_setup(item)


def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> None:
    """In a worker: the scenario's timeline (``--scenario-timeline``), kept at teardown."""
    outcomes = _worker_outcomes(item.config)
    if outcomes is not None:
        outcomes.pytest_runtest_makereport(item, call)


@pytest.hookimpl(wrapper=True)
def pytest_report_to_serializable(config: pytest.Config, report: pytest.TestReport) -> Any:
    """In a worker: the scenario's entry (setup), its timeline (teardown) and pytest-bdd's step report go
    with the report to the controller."""
    data = yield
    outcomes = _worker_outcomes(config)
    if outcomes is None or data is None or not isinstance(report, pytest.TestReport):
        return data
    entry = outcomes.results.get(report.nodeid)
    if entry is not None:
        if report.when == "setup":
            data[ENTRY] = copy.deepcopy({k: v for k, v in entry.items() if k != "timeline"})
        elif report.when == "teardown" and "timeline" in entry:
            data[TIMELINE] = entry.pop("timeline")
    context = test_report_context_registry.get(report)
    if context is not None:
        data[STEPS] = {"scenario": context.scenario, "name": context.name}
    return data
