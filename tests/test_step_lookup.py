"""features/step_lookup.py: the faster step lookup finds the same definitions, in the same order, as
pytest-bdd's own, for every step of a small suite that exercises what decides the answer (step types,
a definition of no type, two definitions matching one text, a definition overridden in a sub-directory,
parsed arguments). The suite runs in its own pytest process, which checks each lookup against the
library's and counts them."""

from __future__ import annotations

import itertools
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CONFTEST = '''
import importlib
from pathlib import Path

from pytest_bdd import given, parsers, step, then, when

from features import step_lookup

_scenario = importlib.import_module("pytest_bdd.scenario")
LIBRARY = _scenario.find_fixturedefs_for_step
assert step_lookup.install()
FAST = _scenario.find_fixturedefs_for_step
LOOKUPS = []


def compare(step, fixturemanager, node):
    fast = list(FAST(step=step, fixturemanager=fixturemanager, node=node))
    library = list(LIBRARY(step=step, fixturemanager=fixturemanager, node=node))
    assert fast == library, (step.type, step.name, fast, library)
    LOOKUPS.append((step.type, step.name, len(fast)))
    return iter(fast)


_scenario.find_fixturedefs_for_step = compare


def pytest_sessionfinish(session):
    found = sum(1 for _type, _name, count in LOOKUPS if count)
    several = sum(1 for _type, _name, count in LOOKUPS if count > 1)
    Path(session.config.rootpath, "lookups.txt").write_text(f"{len(LOOKUPS)} {found} {several}")


@given("a basket", target_fixture="basket")
def basket():
    return []


@given(parsers.parse("{count:d} apples in it"))
def apples(basket, count):
    basket.extend(["apple"] * count)


@given("3 apples in it")
def three_apples(basket):
    basket.extend(["apple"] * 3)


@step("it is checked")
def checked(basket):
    basket.append("checked")


@when(parsers.parse("{count:d} apples are eaten"))
def eaten(basket, count):
    for _ in range(count):
        basket.remove("apple")


@then(parsers.parse("{count:d} apples are left"))
def left(basket, count):
    assert basket.count("apple") == count
'''

ROOT_FEATURE = '''
Feature: Apples
  Scenario: Eating apples
    Given a basket
    And 5 apples in it
    And it is checked
    When 2 apples are eaten
    Then 3 apples are left
    And it is checked

  Scenario: A text two definitions match
    Given a basket
    And 3 apples in it
    When 1 apples are eaten
    Then 2 apples are left
'''

SUB_CONFTEST = '''
from pytest_bdd import given


@given("a basket", target_fixture="basket")
def basket():
    return ["apple"]
'''

SUB_FEATURE = '''
Feature: Apples in a sub-directory
  Scenario: The basket of the sub-directory
    Given a basket
    And 2 apples in it
    Then 3 apples are left
'''


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip())


def test_the_fast_lookup_finds_what_pytest_bdd_finds(tmp_path: Path) -> None:
    _write(tmp_path / "conftest.py", CONFTEST)
    _write(tmp_path / "apples.feature", ROOT_FEATURE)
    _write(tmp_path / "test_apples.py", 'from pytest_bdd import scenarios\n\nscenarios("apples.feature")\n')
    _write(tmp_path / "sub" / "conftest.py", SUB_CONFTEST)
    _write(tmp_path / "sub" / "sub.feature", SUB_FEATURE)
    _write(tmp_path / "sub" / "test_sub.py", 'from pytest_bdd import scenarios\n\nscenarios("sub.feature")\n')
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", "-p", "no:lifecycle_tck",
         "--rootdir", str(tmp_path), str(tmp_path)],
        cwd=tmp_path, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout, done.stdout
    lookups, found, several = map(int, (tmp_path / "lookups.txt").read_text().split())
    # Every step was looked up, and found; the text two definitions parse was answered with both.
    assert (lookups, found) == (13, 13)
    assert several >= 1


def _suite_texts() -> list[str]:
    """The step texts of the features suite as written (outline placeholders included), each also in other
    letter cases and with a non-ASCII letter that matches an ASCII one case-insensitively."""
    keywords = ("Given ", "When ", "Then ", "And ", "But ", "* ")
    texts: set[str] = set()
    for path in (ROOT / "features").rglob("*.feature"):
        for line in path.read_text(encoding="utf-8").splitlines():
            stripped = line.strip()
            for keyword in keywords:
                if stripped.startswith(keyword):
                    texts.add(stripped[len(keyword):])
    variants = set(texts)
    for text in texts:
        variants.update((text.upper(), text.swapcase(), text.replace("s", "\u017f", 1), text.replace("k", "\u212a")))
    return sorted(variants)


def test_a_parser_the_prefix_rules_out_never_matches() -> None:
    """The lookup skips a ``parsers.parse`` definition whose text before its first field the step does not start
    with (ignoring ASCII case): over every definition of the suite and every step text of its features (and
    case variants), each one skipped is one the library's own matching refuses too, and the skip does happen."""
    import importlib

    from pytest_bdd.steps import step_function_context_registry

    from features import step_lookup

    for module in ("features.steps." + p.stem for p in (ROOT / "features" / "steps").glob("*.py")
                   if p.stem != "__init__"):
        importlib.import_module(module)
    parsers = {id(c.parser): c.parser for c in step_function_context_registry.values()}.values()
    assert len(parsers) > 100
    skipped = 0
    for text in _suite_texts():
        if not text.isascii():
            continue  # (case-insensitive matching is then more than str.lower: no prefix is trusted)
        lowered = text.lower()
        for parser in parsers:
            if not lowered.startswith(step_lookup.prefix_of(parser)):
                skipped += 1
                assert not parser.is_matching(text), (parser.name, text)
    assert skipped > 100_000


def test_the_prefix_buckets_find_the_names_every_parser_would() -> None:
    """candidate_names (parsers looked up by the texts a step starts with) against asking every parser of every
    name in turn, with the library's own matching: over every definition of the suite, grouped under names
    (some holding several definitions, of several types), and every step text of its features and its case
    and non-ASCII variants, the same names in the same order."""
    import importlib
    import random

    from pytest_bdd.steps import step_function_context_registry

    from features import step_lookup

    for module in ("features.steps." + p.stem for p in (ROOT / "features" / "steps").glob("*.py")
                   if p.stem != "__init__"):
        importlib.import_module(module)
    contexts = list(step_function_context_registry.values())
    rng = random.Random(5)
    rng.shuffle(contexts)
    names: list[tuple[str, list[object]]] = []
    for context in contexts:
        if names and rng.random() < 0.2:
            names[rng.randrange(len(names))][1].append(context)  # a name with several definitions
        else:
            names.append((f"name{len(names)}", [context]))
    texts = _suite_texts()
    compared = found = 0
    # Both orders of the names: a text several names match is answered in the names' order either way.
    for step_type, ordered in itertools.product(step_lookup.STEP_TYPES, (names, names[::-1])):
        entries = tuple(
            (name, parsers) for name, group in ordered
            if (parsers := tuple(c.parser for c in group if c.type is None or c.type == step_type)))
        buckets = step_lookup.by_prefix(entries)
        for text in texts:
            expected = tuple(name for name, parsers in entries if any(p.is_matching(text) for p in parsers))
            assert step_lookup.candidate_names(entries, buckets, text) == expected, (step_type, text)
            compared += 1
            found += bool(expected)
    assert compared > 1000 and found > 300


def test_names_come_in_their_order_whatever_their_parsers_start_with() -> None:
    from pytest_bdd import parsers

    from features import step_lookup

    long_first = parsers.parse("a basket of {count:d} apples")
    short = parsers.parse("a {thing}")
    pattern = parsers.re(r"a basket of (?P<count>\d+) apples")
    other = parsers.parse("no basket {x}")
    for order in itertools.permutations([("long", (long_first,)), ("short", (short,)), ("re", (pattern,)),
                                         ("other", (other,)), ("both", (other, short))]):
        entries = tuple(order)
        buckets = step_lookup.by_prefix(entries)
        for text in ("a basket of 3 apples", "A Basket of 3 apples", "a pear", "no basket here", "\u212a basket"):
            expected = tuple(name for name, group in entries if any(p.is_matching(text) for p in group))
            assert step_lookup.candidate_names(entries, buckets, text) == expected, (order, text)
