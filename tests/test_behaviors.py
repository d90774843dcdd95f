"""Traceability between features/behaviors.yaml, the Gherkin scenarios and the step vocabulary.

Every behavior has a scenario; every scenario names known behaviors, exactly one level (the level of
its behaviors) and a profile; every step sentence is in features/steps/README.md, and that list is
exactly what the step definitions implement. Features are read with the Gherkin parser pytest-bdd
uses; tags on a Feature or Rule count for the scenarios inside it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from gherkin.parser import Parser
from gherkin.token_scanner import TokenScanner

ROOT = Path(__file__).resolve().parent.parent
FEATURES = ROOT / "features"
BEHAVIORS_FILE = FEATURES / "behaviors.yaml"
STEPS_DIR = FEATURES / "steps"
VOCABULARY_FILE = STEPS_DIR / "README.md"

LEVELS = ("must", "should", "may")
# The profiles of DESIGN.md ("topology_controller": the Runtime SDK client calling the lifecycle hooks;
# "runtime_extension": what an extension itself must do).
PROFILES = ("hic", "machine_controller", "runtime_extension", "topology_controller", "addon_controller",
            "rollout_deployment", "rollout_statefulset", "rollout_daemonset", "apiserver", "cluster_controller")
BEHAVIOR_ID = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
KEYWORDS = {"Context": "given", "Action": "when", "Outcome": "then"}
STEP_DECORATORS = ("given", "when", "then")
PLACEHOLDER = re.compile(r"<[^<>]+>")
STEP_FIELD = re.compile(r"\{[^{}]*\}")
VOCABULARY_LINE = re.compile(r"^- (Given|When|Then) (.+)$")
SEED_IN_SOURCE = re.compile(r"seeds/(\d{3})_")


# -- reading ------------------------------------------------------------------------------------------


@dataclass
class Scenario:
    """A scenario as the checks see it: where it is, its effective tags and its steps (outlines rendered)."""

    where: str
    name: str
    tags: set[str]
    steps: list[tuple[str, str]] = field(default_factory=list)  # (given|when|then, text)


def load_behaviors(path: Path = BEHAVIORS_FILE) -> list[dict[str, Any]]:
    return list((yaml.safe_load(path.read_text()) or {}).get("behaviors") or [])


def _tags(node: dict[str, Any]) -> set[str]:
    return {t["name"].lstrip("@") for t in node.get("tags") or []}


def _typed_steps(steps: list[dict[str, Any]], previous: str = "given") -> list[tuple[str, str]]:
    out = []
    for step in steps:
        keyword = KEYWORDS.get(step.get("keywordType", ""), previous)
        if step.get("keywordType") not in KEYWORDS:
            keyword = previous
        out.append((keyword, step["text"]))
        previous = keyword
    return out


def _render(steps: list[tuple[str, str]], scenario: dict[str, Any]) -> list[tuple[str, str]]:
    """The steps once per Examples row, with ``<placeholders>`` filled in (pytest-bdd's rendering)."""
    rows: list[dict[str, str]] = []
    for examples in scenario.get("examples") or []:
        header = [c["value"] for c in (examples.get("tableHeader") or {}).get("cells") or []]
        for row in examples.get("tableBody") or []:
            rows.append(dict(zip(header, (c["value"] for c in row["cells"]))))
    if not rows:
        return steps
    rendered = []
    for row in rows:
        def fill(match: re.Match[str], row: dict[str, str] = row) -> str:
            return row.get(match.group(0)[1:-1], match.group(0))

        rendered.extend((keyword, PLACEHOLDER.sub(fill, text)) for keyword, text in steps)
    return rendered


def parse_feature(text: str, where: str) -> list[Scenario]:
    """The scenarios of one feature file's text."""
    document = Parser().parse(TokenScanner(text))
    feature = document.get("feature") or {}
    out: list[Scenario] = []

    def walk(children: list[dict[str, Any]], inherited: set[str], background: list[tuple[str, str]]) -> None:
        for child in children:
            if "background" in child:
                background = _typed_steps(child["background"].get("steps") or [])
            elif "rule" in child:
                rule = child["rule"]
                walk(rule.get("children") or [], inherited | _tags(rule), list(background))
            elif "scenario" in child:
                scenario = child["scenario"]
                steps = background + _typed_steps(scenario.get("steps") or [])
                line = scenario.get("location", {}).get("line", 0)
                out.append(Scenario(f"{where}:{line}", scenario.get("name", ""), inherited | _tags(scenario),
                                    _render(steps, scenario)))

    walk(feature.get("children") or [], _tags(feature), [])
    return out


def load_scenarios(root: Path = FEATURES) -> list[Scenario]:
    out = []
    for path in sorted(root.rglob("*.feature")):
        out.extend(parse_feature(path.read_text(), str(path.relative_to(ROOT))))
    return out


def vocabulary(path: Path = VOCABULARY_FILE) -> list[tuple[str, str]]:
    """``(keyword, sentence)`` lines of the README, placeholders as ``<...>``."""
    out = []
    for line in path.read_text().splitlines():
        match = VOCABULARY_LINE.match(line.strip())
        if match:
            out.append((match.group(1).lower(), match.group(2)))
    return out


def step_definitions(steps_dir: Path = STEPS_DIR) -> list[tuple[str, str, str]]:
    """``(keyword, pattern, module)`` of every ``@given/@when/@then`` in the step modules."""
    out = []
    for path in sorted(steps_dir.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.FunctionDef):
                continue
            for decorator in node.decorator_list:
                if not (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Name)
                        and decorator.func.id in STEP_DECORATORS and decorator.args):
                    continue
                argument = decorator.args[0]
                if isinstance(argument, ast.Call) and argument.args:
                    argument = argument.args[0]
                if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                    out.append((decorator.func.id, argument.value, path.name))
    return out


# -- checks (each returns the problems it finds) ------------------------------------------------------


def duplicate_ids(behaviors: list[dict[str, Any]]) -> list[str]:
    seen: set[str] = set()
    duplicates = []
    for behavior in behaviors:
        if behavior.get("id") in seen:
            duplicates.append(str(behavior.get("id")))
        seen.add(str(behavior.get("id")))
    return duplicates


def malformed_behaviors(behaviors: list[dict[str, Any]]) -> list[str]:
    problems = []
    for behavior in behaviors:
        bid = str(behavior.get("id", ""))
        if not BEHAVIOR_ID.match(bid) or not any(c.isdigit() for c in bid):
            problems.append(f"{bid!r}: the id is not UPPERCASE_WITH_DIGITS")
        if behavior.get("level") not in LEVELS:
            problems.append(f"{bid}: level {behavior.get('level')!r} is not one of {LEVELS}")
        if behavior.get("profile") not in PROFILES:
            problems.append(f"{bid}: profile {behavior.get('profile')!r} is not one of {PROFILES}")
        for key in ("source", "statement"):
            if not str(behavior.get(key) or "").strip():
                problems.append(f"{bid}: no {key}")
    return problems


def _is_behavior_tag(tag: str) -> bool:
    return bool(BEHAVIOR_ID.match(tag)) and any(c.isdigit() for c in tag)


def uncovered_behaviors(behaviors: list[dict[str, Any]], scenarios: list[Scenario]) -> list[str]:
    tagged = {t for s in scenarios for t in s.tags}
    return [str(b["id"]) for b in behaviors if b["id"] not in tagged]


def unknown_behavior_tags(behaviors: list[dict[str, Any]], scenarios: list[Scenario]) -> list[str]:
    known = {b["id"] for b in behaviors}
    return [f"{s.where} {s.name!r}: @{t}" for s in scenarios for t in sorted(s.tags)
            if _is_behavior_tag(t) and t not in known]


def untagged_scenarios(scenarios: list[Scenario]) -> list[str]:
    problems = []
    for s in scenarios:
        if not any(_is_behavior_tag(t) for t in s.tags):
            problems.append(f"{s.where} {s.name!r}: no behavior tag")
        levels = sorted(s.tags & set(LEVELS))
        if len(levels) != 1:
            problems.append(f"{s.where} {s.name!r}: level tags {levels}, expected exactly one")
    return problems


def level_mismatches(behaviors: list[dict[str, Any]], scenarios: list[Scenario]) -> list[str]:
    level_of = {b["id"]: b["level"] for b in behaviors}
    problems = []
    for s in scenarios:
        levels = s.tags & set(LEVELS)
        for tag in sorted(s.tags):
            if tag in level_of and {level_of[tag]} != levels:
                problems.append(f"{s.where} {s.name!r}: @{tag} is {level_of[tag]}, the scenario is {sorted(levels)}")
    return problems


def profile_problems(behaviors: list[dict[str, Any]], scenarios: list[Scenario]) -> list[str]:
    profile_of = {b["id"]: b["profile"] for b in behaviors}
    problems = []
    for s in scenarios:
        profiles = s.tags & set(PROFILES)
        if not profiles:
            problems.append(f"{s.where} {s.name!r}: no profile tag")
        for tag in sorted(s.tags):
            if tag in profile_of and profile_of[tag] not in profiles:
                problems.append(f"{s.where} {s.name!r}: @{tag} belongs to the profile {profile_of[tag]}")
    return problems


def missing_seed_tags(behaviors: list[dict[str, Any]], scenarios: list[Scenario]) -> list[str]:
    """A scenario carries ``@seed_NNN`` for every seed file its behaviors' sources name."""
    seeds_of = {b["id"]: {f"seed_{n}" for n in SEED_IN_SOURCE.findall(str(b.get("source", "")))} for b in behaviors}
    problems = []
    for s in scenarios:
        wanted = set().union(*(seeds_of.get(t, set()) for t in s.tags))
        problems += [f"{s.where} {s.name!r}: no @{seed}" for seed in sorted(wanted - s.tags)]
    return problems


def non_identifier_tags(scenarios: list[Scenario]) -> list[str]:
    return [f"{s.where} {s.name!r}: @{t}" for s in scenarios for t in sorted(s.tags) if not t.isidentifier()]


def _sentence_regex(template: str) -> re.Pattern[str]:
    parts = PLACEHOLDER.split(template)
    return re.compile("^" + "(.+?)".join(re.escape(p) for p in parts) + "$")


def steps_outside_vocabulary(scenarios: list[Scenario], lines: list[tuple[str, str]]) -> list[str]:
    patterns: dict[str, list[re.Pattern[str]]] = {}
    for keyword, template in lines:
        patterns.setdefault(keyword, []).append(_sentence_regex(template))
    missing = set()
    for s in scenarios:
        for keyword, text in s.steps:
            if not any(p.match(text) for p in patterns.get(keyword, [])):
                missing.add(f"{keyword.capitalize()} {text}  ({s.where})")
    return sorted(missing)


def _shape(text: str, placeholder: re.Pattern[str]) -> str:
    return placeholder.sub("<>", text)


def vocabulary_drift(lines: list[tuple[str, str]], definitions: list[tuple[str, str, str]]) -> list[str]:
    listed = {(k, _shape(t, PLACEHOLDER)) for k, t in lines}
    defined = {(k, _shape(p, STEP_FIELD)): m for k, p, m in definitions}
    problems = [f"listed in README.md but not defined: {k.capitalize()} {t}" for k, t in sorted(listed - set(defined))]
    problems += [f"defined in {defined[(k, t)]} but not listed in README.md: {k.capitalize()} {t}"
                 for k, t in sorted(set(defined) - listed)]
    return problems


# -- the suite's own files ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def behaviors() -> list[dict[str, Any]]:
    return load_behaviors()


@pytest.fixture(scope="module")
def scenarios() -> list[Scenario]:
    return load_scenarios()


def test_behavior_ids_are_unique(behaviors: list[dict[str, Any]]) -> None:
    assert duplicate_ids(behaviors) == []


def test_behaviors_have_an_id_level_profile_source_and_statement(behaviors: list[dict[str, Any]]) -> None:
    assert behaviors, "behaviors.yaml lists no behavior"
    assert malformed_behaviors(behaviors) == []


def test_every_behavior_has_a_scenario(behaviors: list[dict[str, Any]], scenarios: list[Scenario]) -> None:
    assert uncovered_behaviors(behaviors, scenarios) == []


def test_scenarios_name_only_known_behaviors(behaviors: list[dict[str, Any]], scenarios: list[Scenario]) -> None:
    assert unknown_behavior_tags(behaviors, scenarios) == []


def test_every_scenario_names_a_behavior_and_exactly_one_level(scenarios: list[Scenario]) -> None:
    assert scenarios, "no scenario found"
    assert untagged_scenarios(scenarios) == []


def test_a_scenario_has_the_level_of_its_behaviors(
    behaviors: list[dict[str, Any]], scenarios: list[Scenario]
) -> None:
    assert level_mismatches(behaviors, scenarios) == []


def test_every_scenario_has_the_profile_of_its_behaviors(
    behaviors: list[dict[str, Any]], scenarios: list[Scenario]
) -> None:
    assert profile_problems(behaviors, scenarios) == []


def test_scenarios_name_the_seeds_of_their_behaviors(
    behaviors: list[dict[str, Any]], scenarios: list[Scenario]
) -> None:
    assert missing_seed_tags(behaviors, scenarios) == []


def test_tags_are_python_identifiers(scenarios: list[Scenario]) -> None:
    assert non_identifier_tags(scenarios) == []


def test_every_step_sentence_is_in_the_vocabulary(scenarios: list[Scenario]) -> None:
    assert steps_outside_vocabulary(scenarios, vocabulary()) == []


def test_the_vocabulary_is_exactly_what_the_step_definitions_implement() -> None:
    assert vocabulary_drift(vocabulary(), step_definitions()) == []


# -- the checks catch what they are for ----------------------------------------------------------------

SAMPLE_BEHAVIORS = [
    {"id": "X_ONE_001", "level": "must", "profile": "apiserver", "source": "s", "statement": "one"},
    {"id": "X_TWO_001", "level": "should", "profile": "apiserver", "source": "s", "statement": "two"},
]

SAMPLE_FEATURE = """\
@apiserver
Feature: sample

  Background:
    Given a Node "n1" that is Ready

  @X_ONE_001 @must
  Scenario: tagged well
    When the Pod "default/p" is evicted
    Then the eviction is accepted

  @X_ONE_001 @should
  Scenario: level disagrees with its behavior
    When the Pod "default/p" is evicted
    Then the eviction is accepted

  @X_UNKNOWN_009 @must
  Scenario: names an unknown behavior
    When the Pod "default/p" is evicted
    Then the eviction is flabbergasted

  Rule: inherited tags
    @X_TWO_001 @should
    Scenario Outline: a rendered <case>
      When <n> seconds pass
      Then the eviction is accepted

      Examples:
        | case | n  |
        | one  | 30 |
"""


def test_checks_find_unknown_and_uncovered_behaviors_and_wrong_levels() -> None:
    sample = parse_feature(SAMPLE_FEATURE, "sample.feature")
    assert [s.name for s in sample][-1] == "a rendered <case>"
    assert unknown_behavior_tags(SAMPLE_BEHAVIORS, sample) == [
        "sample.feature:18 'names an unknown behavior': @X_UNKNOWN_009"
    ]
    assert uncovered_behaviors(SAMPLE_BEHAVIORS[:1] + [{"id": "X_THREE_001"}], sample) == ["X_THREE_001"]
    assert len(level_mismatches(SAMPLE_BEHAVIORS, sample)) == 1
    assert profile_problems(SAMPLE_BEHAVIORS, sample) == []
    assert duplicate_ids(SAMPLE_BEHAVIORS + SAMPLE_BEHAVIORS[:1]) == ["X_ONE_001"]


def test_checks_find_scenarios_without_the_seed_of_their_behavior() -> None:
    sample = parse_feature(SAMPLE_FEATURE, "sample.feature")
    seeded = [{**SAMPLE_BEHAVIORS[0], "source": "seeds/001_6948c2535bf9c9aa.txt phase 2"}]
    assert missing_seed_tags(seeded, sample) == [
        "sample.feature:8 'tagged well': no @seed_001",
        "sample.feature:13 'level disagrees with its behavior': no @seed_001",
    ]
    assert missing_seed_tags(SAMPLE_BEHAVIORS, sample) == []


def test_checks_find_scenarios_without_behavior_level_or_profile() -> None:
    text = "Feature: bare\n\n  Scenario: nothing\n    When 5 seconds pass\n"
    sample = parse_feature(text, "bare.feature")
    assert len(untagged_scenarios(sample)) == 2
    assert profile_problems(SAMPLE_BEHAVIORS, sample) == ["bare.feature:3 'nothing': no profile tag"]


def test_checks_find_sentences_outside_the_vocabulary_after_rendering_outlines() -> None:
    sample = parse_feature(SAMPLE_FEATURE, "sample.feature")
    lines = [("given", 'a Node "<name>" that is Ready'), ("when", 'the Pod "<ref>" is evicted'),
             ("when", "<seconds> seconds pass"), ("then", "the eviction is accepted")]
    assert steps_outside_vocabulary(sample, lines) == ["Then the eviction is flabbergasted  (sample.feature:18)"]
    assert ("when", "30 seconds pass") in sample[-1].steps


def test_checks_find_drift_between_vocabulary_and_step_definitions() -> None:
    lines = [("when", "<seconds> seconds pass"), ("then", "the eviction is accepted")]
    definitions = [("when", "{seconds:Int} seconds pass", "time.py"), ("then", "the write is accepted", "responses.py")]
    assert vocabulary_drift(lines, definitions) == [
        "listed in README.md but not defined: Then the eviction is accepted",
        "defined in responses.py but not listed in README.md: Then the write is accepted",
    ]
