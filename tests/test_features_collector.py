"""The Gherkin suite's handling of Python's cyclic garbage collector (features/conftest.py): speed only, so
what a scenario leaves must still be freed, once the scenario ends."""

from __future__ import annotations

import gc
import weakref

import pytest

from features import conftest as features_conftest


class _Node:
    """Something that can refer to itself (a cycle only the cyclic collector frees)."""

    me: _Node | None = None


def test_a_scenario_ends_with_its_cyclic_garbage_freed_and_what_survives_set_aside(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(features_conftest, "_GC_BEFORE", [gc.get_threshold()])  # as after pytest_collection_finish
    gc.disable()  # no automatic pass may free the cycle before the scenario's end does
    try:
        garbage = _Node()
        garbage.me = garbage
        freed = weakref.ref(garbage)
        del garbage
        kept = _Node()
        kept.me = kept
        frozen = gc.get_freeze_count()
        session = gc.get_threshold()
        hook = features_conftest.pytest_runtest_protocol(item=None, nextitem=None)  # type: ignore[arg-type]
        next(hook)  # the scenario runs here
        assert freed() is not None  # nothing collected while it runs
        assert gc.get_threshold()[0] >= features_conftest.GC_SCENARIO_FIRST_GENERATION_THRESHOLD
        with pytest.raises(StopIteration):
            hook.send(None)
        assert gc.get_threshold() == session  # the other tests of the session keep theirs
        assert freed() is None
        assert gc.get_freeze_count() > frozen  # what survived (``kept``) is set aside from later passes
        assert kept.me is kept
    finally:
        gc.enable()


def test_outside_a_session_set_up_for_it_a_scenario_end_leaves_the_collector_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(features_conftest, "_GC_BEFORE", [])
    frozen = gc.get_freeze_count()
    hook = features_conftest.pytest_runtest_protocol(item=None, nextitem=None)  # type: ignore[arg-type]
    next(hook)
    with pytest.raises(StopIteration):
        hook.send(None)
    assert gc.get_freeze_count() == frozen
