"""The import direction of DESIGN.md's layers, checked on the source (the lint env also runs import-linter)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Lower index = lower layer. A module may import its own layer or lower ones.
LAYERS = [
    "harness.kube", "harness.clock", "harness.apiserver", "harness.client", "controllers", "harness.world",
    "harness.targets",
]
# Modules that talk to clusters as a controller would: only through harness.client.
CLIENT_ONLY = ("controllers", "harness.world.")
STORE_MODULES = ("harness.apiserver.store", "harness.apiserver.server")
COMPOSITION_ROOTS = {"harness.world.world", "harness.world.crd_snapshot", "harness.world.__init__"}


def _layer(module: str) -> int | None:
    best = None
    for i, prefix in enumerate(LAYERS):
        if module == prefix or module.startswith(prefix + "."):
            best = i
    return best


def _modules() -> list[tuple[str, Path]]:
    out = []
    for package in ("harness", "controllers"):
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).with_suffix("")
            out.append((".".join(rel.parts), path))
    return out


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
            names.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return [n for n in names if n.startswith(("harness", "controllers"))]


@pytest.mark.parametrize("module,path", _modules(), ids=[m for m, _ in _modules()])
def test_imports_point_down_only(module: str, path: Path) -> None:
    own = _layer(module)
    if own is None:
        return  # harness/__main__ and the package roots wire everything together
    upward = [name for name in _imports(path) if (_layer(name) or 0) > own]
    assert not upward, f"{module} imports from a higher layer: {upward}"


@pytest.mark.parametrize("module,path", _modules(), ids=[m for m, _ in _modules()])
def test_controllers_never_touch_the_store(module: str, path: Path) -> None:
    if not module.startswith(CLIENT_ONLY) or module in COMPOSITION_ROOTS:
        return
    direct = [name for name in _imports(path) if name.startswith(STORE_MODULES)]
    assert not direct, f"{module} reaches behind the client interface: {direct}"


# The steps' deliberate tools besides harness.kube and harness.spec (.importlinter, contract
# "steps-use-the-vocabulary-and-the-scene", says why each one).
STEPS_VOCABULARY = ("harness.kube", "harness.spec")
STEPS_TOOLS = (
    "harness.world.scene", "harness.world.http_scene", "harness.world.extension", "harness.world.hic",
    "harness.targets.extension", "harness.targets.runtime_sdk", "harness.targets.hic", "harness.targets.conformance",
    "harness.targets.profiles", "harness.targets.chaos", "harness.resources",
)
PACKAGE_ROOTS = {"harness", "harness.__init__", "harness.__main__", "harness.world.__init__",
                 "harness.targets.__init__"}


def _under(module: str, prefixes: tuple[str, ...] | list[str]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _steps_forbidden() -> list[str]:
    import configparser

    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    section = config["importlinter:contract:steps-use-the-vocabulary-and-the-scene"]
    return section["forbidden_modules"].split()


def test_every_module_of_the_kit_is_either_forbidden_to_the_steps_or_one_of_their_tools() -> None:
    forbidden = _steps_forbidden()
    undecided = [module for module, _ in _modules()
                 if module not in PACKAGE_ROOTS and not _under(module, STEPS_VOCABULARY)
                 and not _under(module, STEPS_TOOLS) and not _under(module, forbidden)]
    assert not undecided, f"decide whether the steps may import these (.importlinter): {undecided}"


@pytest.mark.parametrize("path", sorted((ROOT / "features" / "steps").glob("*.py")), ids=lambda p: p.name)
def test_the_steps_import_only_the_vocabulary_the_spec_and_their_tools(path: Path) -> None:
    kit = [name for name in _imports(path) if not name.startswith("features")]
    outside = [name for name in kit if not _under(name, STEPS_VOCABULARY + STEPS_TOOLS)
               and name not in ("harness", "controllers")]
    # ``from harness.world.extension import X`` also lists ``harness.world.extension.X``: under a tool.
    assert not outside, f"{path.name} imports beyond the vocabulary, the spec and the Scene: {outside}"


# What the reference controllers keep for themselves (harness/kube/names defines it beside the public
# contract, for the controllers): another implementation need not write it, so the oracle never reads it.
REFERENCE_BOOKKEEPING = ("HOOK_STATE_ANNOTATION",)
ORACLE_SOURCES = [path for folder in ("features", "harness/targets", "harness/spec")
                  for path in sorted((ROOT / folder).rglob("*.py"))]


@pytest.mark.parametrize("path", ORACLE_SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_oracle_never_reads_the_reference_controllers_bookkeeping(path: Path) -> None:
    from harness.kube.names import rollout_hooks

    text = path.read_text()
    named = [name for name in REFERENCE_BOOKKEEPING if name in text or getattr(rollout_hooks, name) in text]
    assert not named, f"{path.relative_to(ROOT)} reads the reference controllers' own bookkeeping: {named}"
