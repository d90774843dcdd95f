"""pytest wiring of the Gherkin suite: the step modules, a fresh world per scenario, and the markers
for every tag a scenario may carry (behavior ids, levels and profiles from ``behaviors.yaml``), so
``--strict-markers`` holds.

``--transport inprocess`` (the default) hands steps a world in this thread; ``--transport http``
serves each scenario's world over HTTP (one server for the session, a fresh world per scenario),
so every step goes through the wire. Scenarios tagged ``@wire`` are about the wire itself: they
run only over HTTP (in-process they are deselected)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from features.steps.context import ScenarioContext
from harness.world.http_scene import HttpScene, WorldServer
from harness.world.scene import InProcessScene, Scene
from harness.world.world import World

BEHAVIORS_FILE = Path(__file__).resolve().parent / "behaviors.yaml"
LEVELS = {"must": "conformance level MUST", "should": "conformance level SHOULD", "may": "conformance level MAY"}
INPROCESS = "inprocess"
HTTP = "http"
WIRE = "wire"
# The seed documents a scenario may be tagged with (@seed_000 .. @seed_004).
SEEDS = tuple(f"seed_{n:03d}" for n in range(5))

# One module per topic; each registers its step sentences (listed in steps/README.md).
pytest_plugins = [
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
    "features.steps.machines",
    "features.steps.drain",
    "features.steps.volume_detach",
]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("lifecycle-tck").addoption(
        "--transport", default=INPROCESS, choices=(INPROCESS, HTTP),
        help="how steps reach the world: in this thread (default) or over HTTP",
    )


def load_behaviors() -> list[dict[str, str]]:
    """The behaviors of ``features/behaviors.yaml``."""
    return list((yaml.safe_load(BEHAVIORS_FILE.read_text()) or {}).get("behaviors") or [])


def pytest_configure(config: pytest.Config) -> None:
    """Register a marker for each behavior id, level and profile a scenario may be tagged with."""
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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the @wire scenarios unless the transport is HTTP: in-process there is no wire, so
    they do not apply (deselected rather than skipped: a skipped MUST scenario fails conformance)."""
    if config.getoption("--transport") == HTTP:
        return
    wire = [item for item in items if item.get_closest_marker(WIRE) is not None]
    if wire:
        config.hook.pytest_deselected(items=wire)
        items[:] = [item for item in items if item.get_closest_marker(WIRE) is None]


@pytest.fixture(scope="session")
def world_server() -> Iterator[WorldServer]:
    """The HTTP server the scenarios' worlds take turns on (``--transport http``)."""
    server = WorldServer()
    yield server
    server.stop()


@pytest.fixture
def scene(request: pytest.FixtureRequest) -> Iterator[Scene]:
    """A fresh world with every simulator, for one scenario, reached as ``--transport`` says."""
    if request.config.getoption("--transport") != HTTP:
        yield InProcessScene(World())
        return
    server = request.getfixturevalue("world_server")
    with HttpScene(World(), server=server) as scene:
        yield scene


@pytest.fixture
def ctx(scene: Scene) -> ScenarioContext:
    """What the scenario remembers between steps (the last answer or API error, watches, copies)."""
    return ScenarioContext(scene)
