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

Which names hold a step definition at all, and the parsers of each step type, are indexed once per state
of the registries (a few hundred names, most of them ordinary fixtures), so a new step text is tried
against the step definitions of its type only, rather than walking every fixture of the session again
(which was, per new text, some 550 names and 160,000 generator steps over a suite).

``install()`` replaces ``pytest_bdd.scenario.find_fixturedefs_for_step`` (called by name from that
module) when the installed pytest-bdd and pytest keep their registries as this module expects, and does
nothing otherwise, so another version of either library falls back to its own lookup.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Iterator
from typing import Any

# (step type, step text, how many names each fixture registry holds, how many step definitions exist) →
# the fixture names with a step definition that can parse it, wherever visible. Step definitions are
# registered while modules are collected, before any scenario runs; a name or a definition registered
# later changes the counts, and the names are looked at again.
_CANDIDATES: dict[tuple[str, str, int, int, int], tuple[str, ...]] = {}
# (how many names each registry holds, how many step definitions exist) → per step type, the fixture names
# holding a step definition of that type (or of no type), in the registries' order, each with the parsers
# of those definitions.
Index = dict[str, tuple[tuple[str, tuple[Any, ...]], ...]]
_INDEX: dict[tuple[int, int, int], Index] = {}
STEP_TYPES = ("given", "when", "then")
# (id of the parser, step text) → whether it matches; the parser itself is kept beside the answer so its
# id cannot be reused by another object while the entry lives.
_MATCHES: dict[tuple[int, str], tuple[Any, bool]] = {}


# (id of the parser) → (the parser, the lowercased text every step it matches starts with, "" when none is known).
_PREFIXES: dict[int, tuple[Any, str]] = {}


def _literal_prefix(parser: Any) -> str:
    """The text, lowercased, before the first field of a ``parsers.parse`` sentence ("" for other parsers, or
    when it is not plain ASCII). parse matches its format from the start, the text before the first ``{``
    literally (regex characters escaped), case-insensitively unless told otherwise: a step that does not
    start with it, ignoring ASCII case, cannot match."""
    parse_type = getattr(importlib.import_module("pytest_bdd.parsers"), "parse", None)
    if parse_type is None or type(parser) is not parse_type or not isinstance(parser.name, str):
        return ""
    head = parser.name.split("{", 1)[0]
    return head.lower() if head.isascii() and "}" not in head else ""


def prefix_of(parser: Any) -> str:
    """:func:`_literal_prefix` of ``parser``, worked out once per parser: a plain ASCII step text that does not
    start with it, ignoring ASCII case, is not one ``parser`` matches."""
    known = _PREFIXES.get(id(parser))
    if known is None:
        known = _PREFIXES[id(parser)] = (parser, _literal_prefix(parser))
    return known[1]


def _matches(parser: Any, text: str) -> bool:
    key = (id(parser), text)
    known = _MATCHES.get(key)
    if known is None:
        known = (parser, bool(parser.is_matching(text)))
        _MATCHES[key] = known
    return known[1]


# Per state of the registries (as _INDEX) and step type: the definitions' parsers by the text every step
# they match starts with (see by_prefix).
Buckets = dict[str, list[tuple[int, str, Any]]]
_BUCKETS: dict[tuple[int, int, int], dict[str, Buckets]] = {}


def by_prefix(entries: tuple[tuple[str, tuple[Any, ...]], ...]) -> Buckets:
    """The parsers of ``entries`` (names with their definitions' parsers, as :func:`_index` lists them), each
    as (the name's position, the name, the parser), grouped by the lowercased text every step the parser
    matches starts with ("" when none is known)."""
    buckets: Buckets = {}
    for position, (name, parsers) in enumerate(entries):
        for parser in parsers:
            buckets.setdefault(prefix_of(parser), []).append((position, name, parser))
    return buckets


def candidate_names(entries: tuple[tuple[str, tuple[Any, ...]], ...], buckets: Buckets, text: str) -> tuple[str, ...]:
    """The names of ``entries``, in their order, with a parser that matches the step text ``text``.

    A plain ASCII text is tried only against the parsers whose known start it starts with (ignoring ASCII
    case): the texts it starts with are its own first 0, 1, 2... characters, so those are the buckets looked
    up, rather than every parser of every name asked in turn (a new step text met some 300 names)."""
    if not text.isascii():
        return tuple(name for name, parsers in entries if any(_matches(parser, text) for parser in parsers))
    lowered = text.lower()
    found: dict[int, str] = {}
    for end in range(len(lowered) + 1):
        bucket = buckets.get(lowered[:end])
        if bucket is None:
            continue
        for position, name, parser in bucket:
            if position not in found and _matches(parser, text):
                found[position] = name
    return tuple(found[position] for position in sorted(found))


def _registered(fixturemanager: Any, name: str) -> Iterator[Any]:
    """Every definition registered under ``name``, visible to whichever node (pytest >= 9.2 registries)."""
    for registry in (fixturemanager._arg2node2fixturedefs, fixturemanager._arg2nodeid2fixturedefs):
        for fixturedefs in (registry.get(name) or {}).values():
            yield from fixturedefs


def _index(names: Iterable[str], fixturemanager: Any, contexts: Any) -> Index:
    """Per step type, the names (in ``names``' order) holding a step definition that a step of that type
    may use, each with those definitions' parsers."""
    by_type: dict[str, list[tuple[str, tuple[Any, ...]]]] = {step_type: [] for step_type in STEP_TYPES}
    for name in names:
        found = [context for fixturedef in _registered(fixturemanager, name)
                 if (context := contexts.get(fixturedef.func)) is not None]
        for step_type, entries in by_type.items():
            parsers = tuple(c.parser for c in found if c.type is None or c.type == step_type)
            if parsers:
                entries.append((name, parsers))
    return {step_type: tuple(entries) for step_type, entries in by_type.items()}


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
        # The registries this lookup reads are pytest >= 9.2's, the step types pytest-bdd 9's; otherwise the
        # library's own lookup.
        if not (hasattr(fixturemanager, "_arg2node2fixturedefs")
                and hasattr(fixturemanager, "_arg2nodeid2fixturedefs")) or step.type not in STEP_TYPES:
            yield from original(step=step, fixturemanager=fixturemanager, node=node)
            return
        contexts = step_function_context_registry
        state = (len(fixturemanager._arg2node2fixturedefs), len(fixturemanager._arg2nodeid2fixturedefs),
                 len(contexts))
        key = (step.type, step.name, *state)
        candidates = _CANDIDATES.get(key)
        if candidates is None:
            index = _INDEX.get(state)
            if index is None:
                index = _INDEX[state] = _index(get_fixture_names(fixturemanager=fixturemanager), fixturemanager,
                                               contexts)
                _BUCKETS[state] = {step_type: by_prefix(entries) for step_type, entries in index.items()}
            candidates = _CANDIDATES[key] = candidate_names(
                index.get(step.type, ()), _BUCKETS[state].get(step.type, {}), step.name)
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
