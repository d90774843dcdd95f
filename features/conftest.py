"""pytest wiring of the Gherkin suite: the step modules, a fresh world per scenario, and the markers
for every tag a scenario may carry (behavior ids, levels and profiles from ``behaviors.yaml``), so
``--strict-markers`` holds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from features.steps.context import ScenarioContext
from harness.world.scene import InProcessScene, Scene
from harness.world.world import World

BEHAVIORS_FILE = Path(__file__).resolve().parent / "behaviors.yaml"
LEVELS = {"must": "conformance level MUST", "should": "conformance level SHOULD", "may": "conformance level MAY"}

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
]


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


@pytest.fixture
def scene() -> Iterator[Scene]:
    """A fresh world with every simulator, for one scenario."""
    yield InProcessScene(World())


@pytest.fixture
def ctx(scene: Scene) -> ScenarioContext:
    """What the scenario remembers between steps (the last answer or API error, watches, copies)."""
    return ScenarioContext(scene)
