"""Loading objects from YAML: multi-document files, or folders of them (``serve --fixtures``)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from harness.client import ApiError, Client
from harness.kube.objects import clone

# CRDs first so their kinds exist, then namespaces so content has somewhere to go.
_ORDER = {"CustomResourceDefinition": 0, "Namespace": 1}


class FixtureError(ValueError):
    """A fixture file that cannot be read or an object the API refused, with where it came from."""


# libyaml's loader when the machine has it: several times faster than the pure-Python one.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# Parsed files by (path, modification time, size): every World loads the same CRDs.
_PARSED: dict[tuple[str, int, int], list[Any]] = {}


def _parse(file: Path) -> list[Any]:
    """The documents of a YAML file, as fresh copies (callers may change them). YAML gives JSON-shaped
    data (and immutable scalars such as timestamps), so the store's copy does: a World copies about 20
    CRDs, and ``copy.deepcopy`` of them was a sixth of the World's construction."""
    stat = file.stat()
    key = (str(file), stat.st_mtime_ns, stat.st_size)
    if key not in _PARSED:
        _PARSED[key] = list(yaml.load_all(file.read_text(), Loader=_LOADER))
    return clone(_PARSED[key])


def read_documents(paths: Iterable[str | Path]) -> list[tuple[str, dict[str, Any]]]:
    """Every object in the given files and folders (``*.yaml``/``*.yml``/``*.json``, sorted), with its file.

    ``List`` documents are flattened; empty documents are skipped."""
    out: list[tuple[str, dict[str, Any]]] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
        else:
            files = [path]
        for file in files:
            try:
                docs = _parse(file)
            except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
                raise FixtureError(f"{file}: {' '.join(str(err).split())}") from err
            for number, doc in enumerate(docs, start=1):
                if doc is None:
                    continue
                _check_object(file, number, doc)
                is_list = doc["kind"].endswith("List") and isinstance(doc.get("items"), list)
                items = doc["items"] if is_list else [doc]
                for item in items:
                    _check_object(file, number, item)
                out.extend((str(file), item) for item in items)
    return out


def _check_object(file: Path, number: int, doc: Any) -> None:
    """FixtureError unless ``doc`` is an object with string ``apiVersion`` and ``kind`` and, when
    given, an object ``metadata``: what every later step takes for granted."""
    where = f"{file}: document {number}"
    if not isinstance(doc, dict):
        raise FixtureError(f"{where}: not an object but {type(doc).__name__}")
    for field in ("apiVersion", "kind"):
        if not isinstance(doc.get(field), str) or not doc[field]:
            shown = "missing" if field not in doc else f"{doc[field]!r} ({type(doc[field]).__name__})"
            raise FixtureError(f"{where}: {field} must be a non-empty string, not {shown}")
    if "metadata" in doc and not isinstance(doc["metadata"], dict):
        raise FixtureError(f"{where}: metadata must be an object")


def apply_documents(client: Client, documents: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Create each object (replacing one that exists); a refusal, whatever its kind, is a
    :class:`FixtureError` naming the file and the object."""
    created = []
    for source, doc in sorted(documents, key=lambda d: _ORDER.get(d[1].get("kind", ""), 2)):
        try:
            created.append(_create_or_replace(client, doc))
        except ApiError as err:
            name = (doc.get("metadata") or {}).get("name")
            raise FixtureError(f"{source}: {doc['kind']} {name}: {err.message}") from err
        except Exception as err:  # noqa: BLE001 - whatever the server makes of it, the user needs the file
            name = (doc.get("metadata") or {}).get("name")
            raise FixtureError(f"{source}: {doc['kind']} {name}: refused: {type(err).__name__}: {err}") from err
    return created


def _create_or_replace(client: Client, doc: dict[str, Any]) -> dict[str, Any]:
    try:
        return client.create(doc)
    except ApiError as err:
        if err.code != 409 or err.reason != "AlreadyExists":
            raise
    meta = doc.get("metadata") or {}
    current = client.get(doc["apiVersion"], doc["kind"], meta.get("name", ""), meta.get("namespace"))
    replacement = dict(doc)
    replacement["metadata"] = {**meta, "resourceVersion": current["metadata"]["resourceVersion"]}
    return client.update(replacement)
