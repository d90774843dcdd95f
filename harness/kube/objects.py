"""Copies of objects shaped as Kubernetes JSON (apimachinery's generated DeepCopy has this role)."""

from __future__ import annotations

from typing import Any


def clone(value: Any) -> Any:
    """A deep copy of JSON-shaped data (dicts, lists, scalars); several times faster than deepcopy."""
    kind = type(value)
    if kind is dict:
        return {k: (v if type(v) not in (dict, list) else clone(v)) for k, v in value.items()}
    if kind is list:
        return [v if type(v) not in (dict, list) else clone(v) for v in value]
    return value
