"""A faster way for pytest-bdd to find the step definitions that match a step, with the same answer.

pytest-bdd 9 finds a step's definitions by asking pytest, for every fixture name of the session (a few
hundred here: each step sentence is a fixture), which of its definitions the scenario can see, and then
whether each one's parser matches the step's text. Asking pytest about visibility is the expensive part
(about 7 ms per step, some 15 % of an in-process conformance run), and nearly every name is not a step
definition matching the step at all. This module asks the cheap question first: among *all* definitions
registered under a name, wherever they are visible, is there a step definition of the step's type whose
parser matches its text (answers kept per parser and text, since a parser is a fixed pattern)? Those
names are kept per step text while the registries hold as many names as they did. Only for them does it
ask pytest which definitions the scenario sees, and it keeps exactly the ones the library would keep, in
the same order.

``install()`` replaces ``pytest_bdd.scenario.find_fixturedefs_for_step`` (called by name from that
module) when the installed pytest-bdd and pytest keep their registries as this module expects, and does
nothing otherwise, so another version of either library falls back to its own lookup.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Iterator
from typing import Any

# (step type, step text, how many names each fixture registry holds) → the fixture names with a step
# definition that can parse it, wherever visible. Step definitions are registered while modules are
# collected, before any scenario runs; a name registered later changes the counts, and the names are
# looked at again.
_CANDIDATES: dict[tuple[str, str, int, int], tuple[str, ...]] = {}
# (id of the parser, step text) → whether it matches; the parser itself is kept beside the answer so its
# id cannot be reused by another object while the entry lives.
_MATCHES: dict[tuple[int, str], tuple[Any, bool]] = {}


def _matches(parser: Any, text: str) -> bool:
    key = (id(parser), text)
    known = _MATCHES.get(key)
    if known is None:
        known = (parser, bool(parser.is_matching(text)))
        _MATCHES[key] = known
    return known[1]


def _can_parse(context: Any, step: Any) -> bool:
    """Whether ``context`` (a step definition's, or None for another fixture) can parse ``step``."""
    return context is not None and (context.type is None or context.type == step.type) \
        and _matches(context.parser, step.name)


def _registered(fixturemanager: Any, name: str) -> Iterator[Any]:
    """Every definition registered under ``name``, visible to whichever node (pytest >= 9.2 registries)."""
    for registry in (fixturemanager._arg2node2fixturedefs, fixturemanager._arg2nodeid2fixturedefs):
        for fixturedefs in (registry.get(name) or {}).values():
            yield from fixturedefs


def install() -> bool:
    """Put the faster lookup in place; True when it was (the libraries are the versions it knows)."""
    try:
        # The module, not the function ``pytest_bdd.scenario`` the package exports under the same name.
        bdd_scenario = importlib.import_module("pytest_bdd.scenario")
        from pytest_bdd.compat import get_fixture_names, getfixturedefs
        from pytest_bdd.steps import step_function_context_registry
    except ImportError:
        return False
    original = getattr(bdd_scenario, "find_fixturedefs_for_step", None)
    if original is None or getattr(original, "_lifecycle_tck", False):
        return original is not None

    def find_fixturedefs_for_step(step: Any, fixturemanager: Any, node: Any) -> Iterable[Any]:
        """The definitions that can parse ``step`` and that ``node`` sees: pytest-bdd's own answer."""
        # The registries this lookup reads are pytest >= 9.2's; without them, the library's own lookup.
        if not (hasattr(fixturemanager, "_arg2node2fixturedefs")
                and hasattr(fixturemanager, "_arg2nodeid2fixturedefs")):
            yield from original(step=step, fixturemanager=fixturemanager, node=node)
            return
        contexts = step_function_context_registry
        key = (step.type, step.name, len(fixturemanager._arg2node2fixturedefs),
               len(fixturemanager._arg2nodeid2fixturedefs))
        candidates = _CANDIDATES.get(key)
        if candidates is None:
            candidates = _CANDIDATES[key] = tuple(
                name for name in get_fixture_names(fixturemanager=fixturemanager)
                if any(_can_parse(contexts.get(fixturedef.func), step)
                       for fixturedef in _registered(fixturemanager, name)))
        for name in candidates:
            for fixturedef in getfixturedefs(fixturemanager, name, node) or []:
                context = contexts.get(fixturedef.func)
                if context is None:
                    continue
                if context.type is not None and context.type != step.type:
                    continue
                if not _matches(context.parser, step.name):
                    continue
                yield fixturedef

    find_fixturedefs_for_step._lifecycle_tck = True  # type: ignore[attr-defined]
    bdd_scenario.find_fixturedefs_for_step = find_fixturedefs_for_step
    return True
