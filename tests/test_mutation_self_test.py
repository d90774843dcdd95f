"""The mutation self-test's rotating subset (``python -m tests.wrong_controllers`` runs them all): a few
deliberately wrong variants of the reference, drawn by a seed derived from today's date (so CI covers the
whole catalogue over time and a failure is reproducible the same day), must each be caught by the
scenarios of the rule it breaks."""

from __future__ import annotations

import datetime
import os
import re

import pytest

from harness.resources import behaviors
from tests.wrong_controllers.__main__ import INPROCESS, chosen, command, run
from tests.wrong_controllers.catalogue import APISERVER, VARIANTS, apply

PER_DAY = 3


def _seed() -> int:
    # LIFECYCLE_TCK_MUTANT_SEED reproduces another day's draw; CI gets the date's.
    override = os.environ.get("LIFECYCLE_TCK_MUTANT_SEED")
    return int(override) if override else int(datetime.date.today().strftime("%Y%m%d"))


TODAY = [v.name for v in chosen(None, PER_DAY, _seed())]


@pytest.mark.parametrize("name", TODAY)
def test_todays_wrong_variant_is_caught(name: str) -> None:
    outcome = run(VARIANTS[name], INPROCESS)
    assert outcome.caught, f"{name} ({VARIANTS[name].bug}) was not caught: {outcome.detail}"
    assert outcome.scenario.startswith("features/"), outcome


def test_the_catalogue_has_forty_variants_over_every_seed_and_the_apiserver() -> None:
    assert len(VARIANTS) >= 40
    assert {v.seed for v in VARIANTS.values()} >= {"000", "001", "002", "003", "004"}
    assert any(v.profile == APISERVER for v in VARIANTS.values())


def test_an_apiserver_variant_runs_in_process_even_when_process_is_asked() -> None:
    variant = next(v for v in VARIANTS.values() if v.profile == APISERVER)
    assert "--target" not in command(variant, "process")
    machine = VARIANTS["drain-retry-2s"]
    argv = command(machine, "process")
    assert "--profile=machine_controller" in argv and "--stdio-control" in argv


def test_an_unknown_variant_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown wrong controller"):
        apply("no-such-variant")


def test_the_variants_once_missed_stay_in_the_catalogue() -> None:
    # Each was left out while the suite passed it; the suite was strengthened (README "Mutation
    # self-test"), so dropping one again would hide a regression of the scenario that catches it.
    once_missed = {"grace-period-ignored", "eviction-all-pods-ready", "long-job-names-not-cut",
                   "parallel-groups-daemonset", "no-cap-statefulset", "abort-ignored-daemonset"}
    assert once_missed <= set(VARIANTS)


def test_a_behavior_id_a_variant_names_is_in_the_catalogue() -> None:
    # The rule is what --list and the README's kill rate name; an id that is not in behaviors.yaml names
    # no rule a user can look up.
    known = {b["id"] for b in behaviors()}
    behavior_id = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_\d{3}\b")
    named = {(v.name, i) for v in VARIANTS.values() for i in behavior_id.findall(v.rule)}
    assert named, "no variant names a behavior id"
    assert not sorted((name, i) for name, i in named if i not in known)
