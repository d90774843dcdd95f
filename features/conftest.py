"""pytest wiring of the Gherkin suite: the step modules, a fresh world per scenario, and the markers
for every tag a scenario may carry (behavior ids, levels and profiles from ``behaviors.yaml``), so
``--strict-markers`` holds.

``--transport inprocess`` (the default) hands steps a world in this thread; ``--transport http``
serves each scenario's world over HTTP (one server for the session, a fresh world per scenario),
so every step goes through the wire; ``--transport process`` does too, and runs the reference
controllers as a separate process (``python -m controllers``, harness/targets/process.py) instead
of in the world. Scenarios tagged ``@wire`` are about the wire itself: they run only over HTTP
(in-process they are deselected)."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator

import pytest

from features import step_lookup
from features.steps.context import ScenarioContext
from harness.resources import behaviors
from harness.targets.chaos import RetryingScene
from harness.targets.conformance import TARGET_AREAS, area_of, install_chaos
from harness.targets.process import ControllerProcesses, ProcessScene
from harness.targets.report import TIMELINE
from harness.world.http_scene import HttpScene, WorldServer
from harness.world.scene import InProcessScene, Scene
from harness.world.world import World

LEVELS = {"must": "conformance level MUST", "should": "conformance level SHOULD", "may": "conformance level MAY"}
INPROCESS = "inprocess"
HTTP = "http"
PROCESS = "process"
REFERENCE_PROCESS = "reference-process"
# --target hic: the features/hic/ scenarios against a HIC process (features/steps/hic.py, harness/targets/hic.py).
HIC_TARGET = "hic"
# --target machine-controller: features/machine_deletion/ against a machine controller command.
MACHINE_CONTROLLER_TARGET = "machine-controller"
# --target controller: the scenarios of the claimed --profile(s) against a controller command.
CONTROLLER_TARGET = "controller"
WIRE = "wire"
# The seed documents a scenario may be tagged with (@seed_000 .. @seed_004).
SEEDS = tuple(f"seed_{n:03d}" for n in range(5))

# One module per topic; each registers its step sentences (listed in steps/README.md).
pytest_plugins = [
    # --target and each target's options (the root conftest.py of a checkout loads it too).
    "features.options",
    # --transport-selection: the transports' own part of the features (make test).
    "features.selection",
    "features.steps.objects",
    "features.steps.responses",
    "features.steps.pods",
    "features.steps.eviction",
    "features.steps.pdb",
    "features.steps.namespaces",
    "features.steps.volumes",
    "features.steps.watch",
    "features.steps.concurrency",
    "features.steps.time",
    "features.steps.simulators",
    "features.steps.wire",
    "features.steps.fields",
    "features.steps.machines",
    "features.steps.drain",
    "features.steps.volume_detach",
    "features.steps.rollout",
    "features.steps.runtime",
    "features.steps.clusters",
    "features.steps.addons",
    "features.steps.hic",
    "features.steps.runtime_extension",
]


# Python's cyclic garbage collector ran a full pass every 700 allocations, over every object the
# imports and the collected scenarios left: about a sixth of an in-process conformance run's CPU. The
# scenarios' objects come and go in bulk (a World per scenario), so they are collected in larger batches,
# and what exists once collection is done (modules, test items) is set aside from the collector's passes.
GC_FIRST_GENERATION_THRESHOLD = 10_000
# Each scenario then ends with one collection of what it made (its World is garbage by then), and what
# survives it (caches of the process) is set aside as well: each object is looked at about once, instead of
# at each young pass it survives (the stored objects and audit trail of a scenario live as long as it does)
# and at every full pass after. While a scenario runs, the threshold is only a bound for one that makes a
# great deal; other tests of the session (tests/ beside features/) keep the one above.
GC_SCENARIO_FIRST_GENERATION_THRESHOLD = 100_000
# Every so many scenarios, what earlier ones set aside is looked at again (see pytest_runtest_protocol).
GC_FULL_PASS_EVERY = 100
_GC_BEFORE: list[tuple[int, int, int]] = []
_SCENARIOS_ENDED = [0]
# Where the interpreter keeps the last uncaught exception (last_exc: Python 3.12 on).
_LAST_EXCEPTION = ("last_type", "last_value", "last_traceback", "last_exc")


def pytest_collection_finish(session: pytest.Session) -> None:
    """Speed only (the same objects are freed, in larger batches): see GC_FIRST_GENERATION_THRESHOLD."""
    if _GC_BEFORE:
        return
    _GC_BEFORE.append(gc.get_threshold())
    gc.freeze()
    gc.set_threshold(max(GC_FIRST_GENERATION_THRESHOLD, _GC_BEFORE[0][0]), *_GC_BEFORE[0][1:])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Speed only: after each scenario (its fixtures torn down), one collection of what it made, then what
    survives is set aside (see GC_SCENARIO_FIRST_GENERATION_THRESHOLD). The same objects are freed, once a
    scenario ends."""
    if not _GC_BEFORE:  # the collector is not set up for the session (pytest_collection_finish)
        yield
        return
    session = gc.get_threshold()
    gc.set_threshold(max(GC_SCENARIO_FIRST_GENERATION_THRESHOLD, session[0]), *session[1:])
    try:
        yield
    finally:
        gc.set_threshold(*session)
        # A failed scenario's traceback (kept for post-mortem debugging, which has run by now) holds its
        # frames and so its World: frozen, it would stay until the session ends once the traceback goes.
        for name in _LAST_EXCEPTION:
            sys.__dict__.pop(name, None)
        _SCENARIOS_ENDED[0] += 1
        if _SCENARIOS_ENDED[0] % GC_FULL_PASS_EVERY == 0:
            gc.unfreeze()  # a bound for anything else set aside alive and dropped later
        gc.collect()
        gc.freeze()


def _gc_as_before() -> None:
    """The collector as it was, for whatever runs in this process after the session."""
    if _GC_BEFORE:
        gc.unfreeze()
        gc.set_threshold(*_GC_BEFORE.pop())


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("lifecycle-tck").addoption(
        "--transport", default=INPROCESS, choices=(INPROCESS, HTTP, PROCESS),
        help="how steps reach the world: in this thread (default), over HTTP, or over HTTP with the "
             "reference controllers as a separate process",
    )
    parser.getgroup("lifecycle-tck").addoption(
        "--chaos", type=float, default=None, metavar="RATE",
        help="make about RATE (0..1] of the reference controllers' reads and writes fail with 409, 429 and 500 "
             "(the scenario's own requests are untouched)",
    )
    parser.getgroup("lifecycle-tck").addoption(
        "--scenario-timeline", action="store_true", default=False,
        help="keep each scenario's audit trail for the conformance report (lifecycle-tck conformance --report-dir)",
    )


def load_behaviors() -> list[dict[str, str]]:
    """The behaviors of ``features/behaviors.yaml``."""
    return behaviors()


def pytest_configure(config: pytest.Config) -> None:
    """Register a marker for each behavior id, level and profile a scenario may be tagged with; put the
    faster step lookup in place (features/step_lookup.py: same definitions found, fewer questions to pytest)."""
    step_lookup.install()
    # The collector is put back last: pytest's own end of session collects every generation twice (its
    # unraisable-exception check, in pytest_unconfigure and in its cleanup), and with what collection left still
    # set aside those passes look only at what the run made since (all of it), not at every module and test item
    # again (about half a second). Cleanups run last registered first, and this conftest configures before
    # pytest's own plugins.
    config.add_cleanup(_gc_as_before)
    profiles: set[str] = set()
    for behavior in load_behaviors():
        config.addinivalue_line("markers", f"{behavior['id']}: {behavior.get('statement', '')}")
        profiles.add(str(behavior.get("profile", "")))
    for level, text in LEVELS.items():
        config.addinivalue_line("markers", f"{level}: {text}")
    for profile in sorted(p for p in profiles if p):
        config.addinivalue_line("markers", f"{profile}: scenarios of the {profile} profile")
    config.addinivalue_line("markers", f"{WIRE}: scenarios about the HTTP wire (run with --transport http)")
    for seed in SEEDS:
        config.addinivalue_line("markers", f"{seed}: scenarios stating a rule of seeds/{seed[5:]}_*.txt")


def transport(config: pytest.Config) -> str:
    """How steps reach the world: ``--transport``, except that the ``reference-process`` target
    always runs the controllers as a process."""
    if config.getoption("--target") == REFERENCE_PROCESS:
        return PROCESS
    return str(config.getoption("--transport"))


@pytest.hookimpl(trylast=True)  # after the conformance runner has reported the other areas as not applicable
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect what does not apply: under a target that drives only some feature areas
    (:data:`TARGET_AREAS`), the other areas (the conformance runner reports them as not applicable);
    and the @wire scenarios unless the transport is HTTP, since in-process there is no wire
    (deselected rather than skipped: a skipped MUST scenario fails conformance)."""
    areas = TARGET_AREAS.get(config.getoption("--target"))
    if areas:
        away = [item for item in items if area_of(item.nodeid) not in areas]
        if away:
            config.hook.pytest_deselected(items=away)
            items[:] = [item for item in items if area_of(item.nodeid) in areas]
    if transport(config) != INPROCESS:
        return
    wire = [item for item in items if item.get_closest_marker(WIRE) is not None]
    if wire:
        config.hook.pytest_deselected(items=wire)
        items[:] = [item for item in items if item.get_closest_marker(WIRE) is None]


@pytest.fixture(scope="session")
def world_server() -> Iterator[WorldServer]:
    """The HTTP server the scenarios' worlds take turns on (``--transport http`` or ``process``)."""
    server = WorldServer()
    yield server
    server.stop()


# Binders whose features state the API server's own semantics: their worlds run the simulators but no
# reference controller (a Deployment controller would rewrite the Deployment status those scenarios write).
WITHOUT_REFERENCE_CONTROLLERS = ("test_apiserver_scenarios",)


@pytest.fixture(scope="session")
def controller_processes(world_server: WorldServer) -> Iterator[ControllerProcesses]:
    """The reference controllers' processes (``--transport process``), each started while the
    scenario before it runs."""
    processes = ControllerProcesses(world_server.base_url)
    yield processes
    processes.close()


@pytest.fixture(scope="session")
def command_processes(request: pytest.FixtureRequest) -> Iterator[object]:
    """The command under test of ``--target controller``/``machine-controller --stdio-control``, each
    started while the scenario before it runs (None for other targets)."""
    from harness.targets.machine_controller import command_processes as processes

    yield from processes(request)


@pytest.fixture
def scene(request: pytest.FixtureRequest) -> Iterator[Scene]:
    """A fresh world with every simulator, for one scenario, reached as ``--transport`` says."""
    how = transport(request.config)
    if request.config.getoption("--target") == HIC_TARGET:
        from features.steps.hic import hic_scene  # a step module: pytest_plugins loads it (assertion rewriting)

        yield from hic_scene(request)
        return
    if request.config.getoption("--target") in (MACHINE_CONTROLLER_TARGET, CONTROLLER_TARGET):
        from harness.targets.machine_controller import machine_controller_scene

        yield from machine_controller_scene(request)
        return
    bare = request.node.module.__name__.rpartition(".")[2] in WITHOUT_REFERENCE_CONTROLLERS
    if how == INPROCESS:
        yield InProcessScene(World(controllers=[]) if bare else World())
        return
    server = request.getfixturevalue("world_server")
    if bare:
        with HttpScene(World(controllers=[]), server=server) as bare_scene:
            yield bare_scene
        return
    if how == PROCESS:
        processes = request.getfixturevalue("controller_processes")
        with ProcessScene(World(controllers=[]), server=server, processes=processes) as process_scene:
            yield process_scene
        return
    with HttpScene(World(), server=server) as scene:
        yield scene


@pytest.fixture(autouse=True)
def _chaos(request: pytest.FixtureRequest) -> None:
    """With ``--chaos RATE``: faults on the reference controllers' requests in the scenario's world."""
    rate = request.config.getoption("--chaos")
    if rate:
        install_chaos(request.getfixturevalue("scene"), rate)


@pytest.fixture(autouse=True)
def _timeline(request: pytest.FixtureRequest) -> Iterator[None]:
    """With ``--scenario-timeline``: the writes the scenario caused, for the conformance report."""
    if not request.config.getoption("--scenario-timeline"):
        yield
        return
    scene = request.getfixturevalue("scene")
    start = scene.audit_size()
    yield
    request.node.stash[TIMELINE] = scene.audit(since=start)


@pytest.fixture
def ctx(scene: Scene, request: pytest.FixtureRequest) -> ScenarioContext:
    """What the scenario remembers between steps (the last answer or API error, watches, copies).
    Under ``--chaos`` its scene rides out the controllers' retries of failed requests."""
    if request.config.getoption("--chaos"):
        return ScenarioContext(RetryingScene(scene), chaos=True)  # type: ignore[arg-type]
    return ScenarioContext(scene)
