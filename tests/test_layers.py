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
COMPOSITION_ROOTS = {"harness.world.world", "harness.world.__init__"}


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
