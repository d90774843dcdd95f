"""The JSONPath subset CRD ``additionalPrinterColumns`` use: ``.a.b``, ``.a['x.y/z']``,
``.a\\.b``, ``.items[0]``, ``.items[*].name`` and filters ``[?(@.type=="Ready")]``.

Anything else finds nothing, which a printer column shows as an empty cell.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Step = Callable[[Any], list[Any]]

_FILTER = re.compile(r"^\?\(@((?:\.[^=!<>]+)*)\s*(==|!=)\s*(?:\"([^\"]*)\"|'([^']*)'|([^)\s]+))\s*\)$")


class UnsupportedPath(ValueError):
    """A path outside the supported subset."""


def _field(name: str) -> Step:
    return lambda value: [value[name]] if isinstance(value, dict) and name in value else []


def _index(position: int) -> Step:
    def step(value: Any) -> list[Any]:
        if isinstance(value, list) and -len(value) <= position < len(value):
            return [value[position]]
        return []

    return step


def _all(value: Any) -> list[Any]:
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict):
        return list(value.values())
    return []


def _literal(text: str) -> Any:
    if text in ("true", "false"):
        return text == "true"
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def _filter(expression: str) -> Step:
    match = _FILTER.match(expression)
    if match is None:
        raise UnsupportedPath(expression)
    path, operator, double, single, bare = match.groups()
    expected: Any = double if double is not None else single if single is not None else _literal(bare)
    steps = compile_path(path) if path else []

    def holds(item: Any) -> bool:
        found = evaluate(steps, item)
        equal = bool(found) and found[0] == expected
        return equal if operator == "==" else not equal

    return lambda value: [item for item in value if holds(item)] if isinstance(value, list) else []


def _bracket(content: str) -> Step:
    content = content.strip()
    if content == "*":
        return _all
    if content.startswith("?"):
        return _filter(content)
    if len(content) >= 2 and content[0] == content[-1] and content[0] in "'\"":
        return _field(content[1:-1])
    try:
        return _index(int(content))
    except ValueError:
        raise UnsupportedPath(content) from None


def compile_path(path: str) -> list[Step]:
    """Steps for ``path`` (with or without surrounding ``{}``); UnsupportedPath when outside the subset."""
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    if text.startswith("$"):
        text = text[1:]
    steps: list[Step] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == ".":
            if text.startswith("..", i):
                raise UnsupportedPath(path)
            i += 1
            name = []
            while i < len(text) and text[i] not in ".[":
                if text[i] == "\\" and i + 1 < len(text):
                    i += 1
                name.append(text[i])
                i += 1
            if name:
                steps.append(_field("".join(name)))
        elif ch == "[":
            depth, j = 0, i
            while j < len(text):
                depth += {"[": 1, "]": -1}.get(text[j], 0)
                if depth == 0:
                    break
                j += 1
            if j >= len(text):
                raise UnsupportedPath(path)
            steps.append(_bracket(text[i + 1:j]))
            i = j + 1
        else:
            raise UnsupportedPath(path)
    return steps


def evaluate(steps: list[Step], value: Any) -> list[Any]:
    """Every value the steps reach from ``value``, in document order."""
    current = [value]
    for step in steps:
        current = [found for item in current for found in step(item)]
    return current


def find(path: str, value: Any) -> list[Any]:
    """Every value ``path`` reaches in ``value``; nothing for paths outside the subset."""
    try:
        return evaluate(compile_path(path), value)
    except UnsupportedPath:
        return []
