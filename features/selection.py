"""``--transport-selection cover``: over HTTP or with the controllers as a process, run the part of the
features the transport adds rather than every scenario a second and a third time.

The step definitions are the same whatever the transport; what ``--transport http`` and ``process`` add is
the wire (the HTTP facade, every step's client over HTTP) and the controllers as a separate process. So
the transport's own part is a set of scenarios that, between them, cover what the full run would,
computed from the collected scenarios (greedy, in collection order, so the same files always give the
same set):

- over HTTP, every step definition (each step's requests over the wire), every feature file and every
  profile, plus every scenario about the wire or the API server's semantics over it (``@wire``,
  ``@apiserver``: the status codes, bodies and encodings the HTTP facade translates);
- with the controllers as a process, every feature file, every profile and every ``When`` step
  definition: the steps' requests are the same as over HTTP (covered there), what is new is where the
  controllers run, and they react to the actions the ``When`` steps take.
 In-process nothing
is deselected: every scenario still runs there. ``--transport-selection all`` (the default) runs
everything; ``make test-all`` runs the full cross-product.

``--transport-selection-report PATH`` writes, as JSON, each collected scenario's coverage units, the selected
ones and every step function the scenarios could see (tests/test_transport_selection.py checks that the
selection covers everything, and that no step function is left that no scenario uses: the selection can
only cover what some scenario reaches)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest
from pytest_bdd.compat import get_fixture_names, getfixturedefs
from pytest_bdd.scenario import iterparentnodeids, scenario_wrapper_template_registry
from pytest_bdd.steps import step_function_context_registry

from harness.resources import behaviors

ALL = "all"
COVER = "cover"
# Scenarios always run over HTTP under ``cover``: those about the wire, and the API server's semantics,
# whose status codes, bodies and encodings the HTTP facade translates.
ALWAYS_OVER_HTTP = ("wire", "apiserver")
# The kinds of coverage unit (coverage_units) each transport's selection covers.
COVERED = {
    "http": ("feature", "profile", "given", "when", "then"),
    "process": ("feature", "profile", "when"),
}


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--transport-selection`` and ``--transport-selection-report``."""
    group = parser.getgroup("lifecycle-tck")
    group.addoption(
        "--transport-selection", default=ALL, choices=(ALL, COVER),
        help="with --transport http/process: all scenarios (default), or 'cover': scenarios covering every step "
             "definition, feature file and profile, plus every @wire and @apiserver scenario over HTTP",
    )
    group.addoption(
        "--transport-selection-report", default=None, metavar="PATH",
        help="write each collected scenario's coverage units and the selected scenarios as JSON",
    )


def step_definition_name(fixturedef: Any) -> str:
    """A step definition's identity: its module, line and pattern (pytest-bdd step functions are often
    all named ``_``)."""
    context = step_function_context_registry[fixturedef.func]
    code = context.step_func.__code__
    return f"{context.step_func.__module__}:{code.co_firstlineno} {context.parser.name}"


def step_function_name(fixturedef: Any) -> str:
    """The function behind a step definition, ``module:line``: one function may serve several sentences
    (singular and plural), and it is the function's code that a transport runs."""
    code = step_function_context_registry[fixturedef.func].step_func.__code__
    return f"{step_function_context_registry[fixturedef.func].step_func.__module__}:{code.co_firstlineno}"


def visible_step_definitions(item: pytest.Item) -> list[tuple[Any, Any]]:
    """The step definitions ``item`` sees, each (fixture definition, pytest-bdd step context): what
    ``pytest_bdd.scenario.find_fixturedefs_for_step`` goes through for every step, gathered once."""
    fixturemanager = item.session._fixturemanager
    found = []
    for name in get_fixture_names(fixturemanager=fixturemanager):
        for fixturedef in getfixturedefs(fixturemanager, name, item) or []:
            context = step_function_context_registry.get(fixturedef.func)
            if context is not None:
                found.append((fixturedef, context))
    return found


def coverage_units(item: pytest.Item, profiles: set[str], cache: dict[Any, Any]) -> list[str] | None:
    """What running ``item`` exercises, each unit a string whose first word is its kind: ``given``,
    ``when``, ``then`` for each step definition its steps resolve to (as pytest-bdd resolves them: the
    deepest visible definition, the last one registered), ``feature`` for its feature file,
    ``profile`` for its profiles (an undefined step is ``undefined``). None for an item that is not a
    scenario."""
    template = scenario_wrapper_template_registry.get(getattr(item, "obj", None))  # type: ignore[arg-type]
    if template is None:
        return None
    callspec = getattr(item, "callspec", None)
    example = callspec.params.get("_pytest_bdd_example", {}) if callspec is not None else {}
    scenario = template.render(example)
    units = [f"feature {scenario.feature.rel_filename}"]
    # Which definitions a scenario sees depends on its folder's conftests only.
    folder = item.path.parent
    if folder not in cache:
        cache[folder] = visible_step_definitions(item)
    for step in scenario.steps:
        key = (folder, step.type, step.name)
        if key not in cache:
            defs = [fixturedef for fixturedef, context in cache[folder]
                    if context.type in (None, step.type) and context.parser.is_matching(step.name)]
            defs.sort(key=lambda d: list(iterparentnodeids(d.baseid)))
            # (the step's own type: a definition made with ``step()`` serves any)
            found = f"{step.type} {step_definition_name(defs[-1])}" if defs else f"undefined {step.type} {step.name}"
            cache[key] = found
        units.append(cache[key])
    units.extend(f"profile {marker.name}" for marker in item.iter_markers() if marker.name in profiles)
    return sorted(set(units))


def cover(units: Sequence[Iterable[str]], always: Sequence[bool]) -> list[int]:
    """The indexes of a set of entries whose units together are every entry's units: the ``always``
    ones, then greedily the entry adding the most units not yet covered (the first such on a tie)."""
    chosen = [i for i, must in enumerate(always) if must]
    covered: set[str] = set()
    for i in chosen:
        covered.update(units[i])
    sets = [set(u) for u in units]
    wanted = set().union(*sets) if sets else set()
    taken = set(chosen)
    while covered != wanted:
        best, gain = -1, 0
        for i, s in enumerate(sets):
            if i in taken:
                continue
            new = len(s - covered)
            if new > gain:
                best, gain = i, new
        chosen.append(best)
        taken.add(best)
        covered |= sets[best]
    return sorted(chosen)


def _transport(config: pytest.Config) -> str:
    # As features/conftest.py's transport(): the reference-process target always runs the controllers as a process.
    if config.getoption("--target") == "reference-process":
        return "process"
    return str(config.getoption("--transport"))


@pytest.hookimpl(wrapper=True)  # after every other hook has deselected (targets' areas, @wire in-process)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]):  # noqa: ANN201
    """Under ``--transport-selection cover`` with ``--transport http``/``process``: keep the transport's
    own part (module docstring), deselect the rest."""
    result = yield
    selection = config.getoption("--transport-selection")
    report = config.getoption("--transport-selection-report")
    how = _transport(config)
    reference = config.getoption("--target") in ("reference", "reference-process")
    applies = selection == COVER and how != "inprocess" and reference
    if not applies and not report:
        return result
    profiles = {str(b.get("profile")) for b in behaviors() if b.get("profile")}
    cache: dict[Any, Any] = {}
    units = [coverage_units(item, profiles, cache) for item in items]
    scenarios = [i for i, u in enumerate(units) if u is not None]
    always_tags = ALWAYS_OVER_HTTP if how == "http" else ()
    always = [any(items[i].get_closest_marker(tag) is not None for tag in always_tags) for i in scenarios]
    kinds = COVERED.get(how, COVERED["http"])
    wanted = [[u for u in units[i] or [] if u.split(" ", 1)[0] in kinds] for i in scenarios]
    chosen = {scenarios[j] for j in cover(wanted, always)}
    keep = [item for i, item in enumerate(items) if i in chosen or units[i] is None] if applies else list(items)
    if report:
        Path(report).write_text(json.dumps({
            "transport": how,
            "covered": list(kinds),
            "selection": selection if applies else ALL,
            "scenarios": {items[i].nodeid: units[i] for i in scenarios},
            "always": [items[i].nodeid for i, must in zip(scenarios, always, strict=True) if must],
            "selected": [items[i].nodeid for i in scenarios if i in chosen or not applies],
            # Every step function the collected scenarios could see, used or not: a function no collected
            # scenario uses is run by no selection (tests/test_transport_selection.py wants none).
            "step_functions": sorted({step_function_name(fixturedef) for folder, found in cache.items()
                                      if isinstance(folder, Path) for fixturedef, _ in found}),
        }, indent=1))
    if applies:
        away = [item for i, item in enumerate(items) if i not in chosen and units[i] is not None]
        if away:
            config.hook.pytest_deselected(items=away)
            items[:] = keep
    return result
