"""The Gherkin suite's handling of Python's cyclic garbage collector (features/conftest.py): speed only, so
what a scenario leaves must still be freed, once the scenario ends."""

from __future__ import annotations

import gc
import sys
import weakref
from collections.abc import Iterator

import pytest

from features import conftest as features_conftest


class _Node:
    """Something that can refer to itself (a cycle only the cyclic collector frees)."""

    me: _Node | None = None


@pytest.fixture(autouse=True)
def _collector_as_it_was() -> Iterator[None]:
    """The hook freezes what survives a scenario: the rest of this session gets its collector back."""
    frozen, enabled = gc.get_freeze_count(), gc.isenabled()
    yield
    if not frozen:
        gc.unfreeze()
    if enabled:
        gc.enable()


def _end_scenario() -> None:
    """One scenario's run through the hook, as pytest drives it."""
    hook = features_conftest.pytest_runtest_protocol(item=None, nextitem=None)  # type: ignore[arg-type]
    next(hook)
    with pytest.raises(StopIteration):
        hook.send(None)


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


def test_a_failed_scenario_is_freed_at_its_end_although_its_traceback_was_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # pytest keeps a failure's traceback for post-mortem debugging; its frames hold the scenario's World.
    monkeypatch.setattr(features_conftest, "_GC_BEFORE", [gc.get_threshold()])
    world = _Node()
    world.me = world
    freed = weakref.ref(world)
    try:
        raise AssertionError("a step failed")
    except AssertionError as err:
        held = err
    sys.last_traceback = held.__traceback__
    del world, held
    try:
        _end_scenario()
        assert not hasattr(sys, "last_traceback")
        assert freed() is None
    finally:
        sys.__dict__.pop("last_traceback", None)


def test_what_was_set_aside_alive_and_dropped_later_is_freed_within_a_bound_of_scenarios(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(features_conftest, "_GC_BEFORE", [gc.get_threshold()])
    monkeypatch.setattr(features_conftest, "GC_FULL_PASS_EVERY", 3)
    monkeypatch.setattr(features_conftest, "_SCENARIOS_ENDED", [0])
    holder = [_Node()]
    holder[0].me = holder[0]
    freed = weakref.ref(holder[0])
    _end_scenario()  # alive at this end: set aside
    holder.clear()  # garbage now, in the set-aside generation
    _end_scenario()
    assert freed() is not None  # not looked at again yet
    _end_scenario()  # the third end looks at everything
    assert freed() is None


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
