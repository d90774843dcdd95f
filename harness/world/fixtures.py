"""Loading objects from YAML: multi-document files, or folders of them (``serve --fixtures``)."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from harness.client import ApiError, Client

# CRDs first so their kinds exist, then namespaces so content has somewhere to go.
_ORDER = {"CustomResourceDefinition": 0, "Namespace": 1}


class FixtureError(ValueError):
    """A fixture file that cannot be read or an object the API refused, with where it came from."""


# libyaml's loader when the machine has it: several times faster than the pure-Python one.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# Parsed files by (path, modification time, size): every World loads the same CRDs.
_PARSED: dict[tuple[str, int, int], list[Any]] = {}


def _parse(file: Path) -> list[Any]:
    """The documents of a YAML file, as fresh copies (callers may change them)."""
    stat = file.stat()
    key = (str(file), stat.st_mtime_ns, stat.st_size)
    if key not in _PARSED:
        _PARSED[key] = list(yaml.load_all(file.read_text(), Loader=_LOADER))
    return copy.deepcopy(_PARSED[key])


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
            except (OSError, yaml.YAMLError) as err:
                raise FixtureError(f"{file}: {err}") from err
            for doc in docs:
                if doc is None:
                    continue
                if not isinstance(doc, dict) or "kind" not in doc or "apiVersion" not in doc:
                    raise FixtureError(f"{file}: a document without apiVersion and kind")
                is_list = doc["kind"].endswith("List") and isinstance(doc.get("items"), list)
                out.extend((str(file), item) for item in (doc["items"] if is_list else [doc]))
    return out


def apply_documents(client: Client, documents: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Create each object (replacing one that exists); the API's refusal names the file."""
    created = []
    for source, doc in sorted(documents, key=lambda d: _ORDER.get(d[1].get("kind", ""), 2)):
        try:
            created.append(client.create(doc))
        except ApiError as err:
            if err.code != 409 or err.reason != "AlreadyExists":
                name = (doc.get("metadata") or {}).get("name")
                raise FixtureError(f"{source}: {doc['kind']} {name}: {err.message}") from err
            meta = doc.get("metadata") or {}
            current = client.get(doc["apiVersion"], doc["kind"], meta.get("name", ""), meta.get("namespace"))
            replacement = dict(doc)
            replacement["metadata"] = {**meta, "resourceVersion": current["metadata"]["resourceVersion"]}
            created.append(client.update(replacement))
    return created
