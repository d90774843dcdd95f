"""The kit's packaged files, found through package resources (``importlib.resources``).

The feature files, step definitions and ``behaviors.yaml`` live in the ``features`` package; the
CRDs and other YAML objects in the ``fixtures`` package. A wheel carries both as package data, so
an installed kit and a checkout find them the same way, from any working directory. Every lookup
goes through this module; a resource that is missing or unreadable raises :class:`ResourceError`,
whose message names it (the CLI prints that one line and exits 2).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import yaml

FEATURES_PACKAGE = "features"
FIXTURES_PACKAGE = "fixtures"
BEHAVIORS_FILE = "behaviors.yaml"
CRD_FOLDER = "crds"
# The HIC config of the reference hook implementing controller (features/hic/).
REFERENCE_HIC_CONFIG = ("hic", "reference-hic-config.yaml")
REINSTALL = "reinstall lifecycle-tck"


class ResourceError(RuntimeError):
    """A packaged resource of the kit that is missing or corrupt; the message names it."""


def package_dir(package: str) -> Path:
    """The folder of one of the kit's packages (``features``, ``fixtures``, ``harness``, ...) on disk.

    ``features`` and ``fixtures`` are common names: when a user's own package of that name comes
    first on ``sys.path`` (``python -m pytest`` in their project), the kit's, installed beside
    ``harness``, is the one meant."""
    try:
        root = resources.files(package)
    except ModuleNotFoundError:
        root = None
    kit = resources.files("harness")
    if isinstance(kit, Path) and package != "harness":
        beside = kit.parent / package
        if (beside / "__init__.py").is_file() and root != beside:
            root = beside
    if root is None:
        raise ResourceError(f"packaged resource {package}/ is missing (the package {package!r} is not "
                            f"installed; {REINSTALL})")
    # pytest and the YAML loaders need real files: the kit is installed unzipped (as pip does).
    if not isinstance(root, Path) or not root.is_dir():
        raise ResourceError(f"packaged resource {package}/ is not a folder on disk ({root}); {REINSTALL}")
    return root


# libyaml's safe loader where PyYAML was built with it: behaviors.yaml (about 400 behaviors) is read by every
# pytest process of a run, and the pure-Python loader takes about ten times as long.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def resource(package: str, *parts: str, folder: bool = False) -> Path:
    """The packaged file (or, with ``folder``, folder) ``package/parts...``; ResourceError if absent."""
    path = package_dir(package).joinpath(*parts)
    present = path.is_dir() if folder else path.is_file()
    if not present:
        name = "/".join((package, *parts)) + ("/" if folder else "")
        raise ResourceError(f"packaged resource {name} is missing ({path}); {REINSTALL}")
    return path


def load_yaml(path: Path) -> Any:
    """The YAML document of a packaged file; ResourceError naming it if it cannot be read or parsed."""
    try:
        return yaml.load(path.read_text(), Loader=_LOADER)
    except FileNotFoundError:
        raise ResourceError(f"packaged resource {_name(path)} is missing ({path}); {REINSTALL}") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ResourceError(f"packaged resource {_name(path)} is corrupt ({first}); {REINSTALL}") from None


def _name(path: Path) -> str:
    """``features/behaviors.yaml`` for a path inside one of the kit's packages, else the path."""
    for package in (FEATURES_PACKAGE, FIXTURES_PACKAGE):
        try:
            return f"{package}/{path.relative_to(package_dir(package)).as_posix()}"
        except (ValueError, ResourceError):
            continue
    return str(path)


def features_dir() -> Path:
    """The folder of the Gherkin suite: feature files by area, step definitions, ``behaviors.yaml``."""
    return package_dir(FEATURES_PACKAGE)


def behaviors_file() -> Path:
    """``features/behaviors.yaml``, the behaviors catalogue."""
    return resource(FEATURES_PACKAGE, BEHAVIORS_FILE)


def behaviors() -> list[dict[str, Any]]:
    """The behaviors of the catalogue; ResourceError if it is missing or not a catalogue."""
    path = behaviors_file()
    document = load_yaml(path)
    if document is None:
        document = {}
    items = document.get("behaviors") if isinstance(document, dict) else None
    if not isinstance(document, dict) or not isinstance(items or [], list):
        raise ResourceError(f"packaged resource {_name(path)} is corrupt (no list of behaviors); {REINSTALL}")
    return list(items or [])


def crd_dir() -> Path:
    """``fixtures/crds``: the CustomResourceDefinitions every world installs."""
    return resource(FIXTURES_PACKAGE, CRD_FOLDER, folder=True)


def reference_hic_config() -> Path:
    """The reference HIC's config (``features/hic/reference-hic-config.yaml``)."""
    return resource(FEATURES_PACKAGE, *REFERENCE_HIC_CONFIG)


def import_root() -> Path:
    """The folder the kit's packages import from (a checkout, or site-packages): what a child
    process that runs ``python -m controllers`` needs on its path."""
    return package_dir("harness").parent
