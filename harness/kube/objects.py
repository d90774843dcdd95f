"""Copies of objects shaped as Kubernetes JSON (apimachinery's generated DeepCopy has this role)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

import orjson

_SORTED = orjson.OPT_SORT_KEYS
K = TypeVar("K")
V = TypeVar("V")


def clone(value: Any) -> Any:
    """A deep copy of JSON-shaped data (dicts, lists, scalars); several times faster than deepcopy.
    Only plain dicts and lists are copied; anything else (strings, numbers, None) is immutable and shared."""
    kind = type(value)
    if kind is dict:
        return _clone_dict(value)
    if kind is list:
        return _clone_list(value)
    return value


# Each container is copied whole in C (``dict.copy``, ``list.copy``) and only its nested containers are
# then replaced by copies: most values of an object are scalars (names, labels, timestamps), so this is
# two to three times faster than building every container item by item.
def _clone_dict(value: dict[Any, Any]) -> dict[Any, Any]:
    out = value.copy()
    for key, item in value.items():
        kind = type(item)
        if kind is dict:
            out[key] = _clone_dict(item)
        elif kind is list:
            out[key] = _clone_list(item)
    return out


def _clone_list(value: list[Any]) -> list[Any]:
    out = value.copy()
    for index, item in enumerate(value):
        kind = type(item)
        if kind is dict:
            out[index] = _clone_dict(item)
        elif kind is list:
            out[index] = _clone_list(item)
    return out


def same_json(first: Any, second: Any) -> bool:
    """Whether two values are the same JSON, types included: Python's ``==`` takes ``1``, ``1.0`` and
    ``true`` for one another, JSON (and a Go client decoding it) does not. Data that is not plain JSON
    is never the same."""
    if first is second:
        # One value is the same JSON as itself when it is JSON at all: encode it once, not twice
        # (a NaN is not equal to itself, so it is not the same either way).
        return first == first and _is_json(first)  # noqa: PLR0124 - a NaN is not equal to itself
    if first != second:
        return False
    try:
        # The same bytes in the same key order are the same JSON; otherwise the order may differ.
        return orjson.dumps(first) == orjson.dumps(second) or bool(
            orjson.dumps(first, option=_SORTED) == orjson.dumps(second, option=_SORTED)
        )
    except TypeError:  # orjson.JSONEncodeError: a non-string key, an integer beyond 64 bits
        return False


def _is_json(value: Any) -> bool:
    """Whether orjson encodes ``value`` (what :func:`same_json` compares by)."""
    try:
        orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError
        return False
    return True


class IdentityMemo(Generic[K, V]):
    """What was worked out of objects never changed in place (a stored object's parts), by their identity,
    bounded (forgotten all at once when full). Each key object is held with its answer, so its id stays its
    own while it is remembered; a change made to it in place would not be seen."""

    __slots__ = ("_entries", "_limit")

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._entries: dict[int, tuple[K, V]] = {}

    def get(self, key: K, make: Callable[[K], V]) -> V:
        """The answer remembered for ``key`` itself, else ``make(key)``, remembered."""
        found = self._entries.get(id(key))
        if found is not None and found[0] is key:
            return found[1]
        answer = make(key)
        if len(self._entries) >= self._limit:
            self._entries.clear()
        self._entries[id(key)] = (key, answer)
        return answer


def _json_or_none(value: Any) -> bytes | None:
    try:
        return orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError: not plain JSON
        return None


# For memos keyed by a large value that comes back as the same object: a CRD's schema, which the worlds
# replaying the packaged CRDs share (harness/world/crd_snapshot.py).
_KEPT_JSON: IdentityMemo[Any, bytes | None] = IdentityMemo(256)


def kept_json(value: Any) -> bytes | None:
    """The JSON of ``value``, encoded once per object (None when it is not plain JSON). Only for values
    never changed in place (a stored object's parts): a change would not be seen."""
    return _KEPT_JSON.get(value, _json_or_none)


def replacement(stored: dict[str, Any], *own: str) -> dict[str, Any]:
    """A new version of ``stored`` for a write that changes only the top-level fields ``own``, one level
    down: each of them a dict of its own (a shallow copy; an empty one when absent or null), everything
    else shared with ``stored``. A write replaces a stored object and never changes it, so sharing the
    rest is safe where copying it whole costs a deep copy per write."""
    out = dict(stored)
    for name in own:
        out[name] = dict(stored.get(name) or {})
    return out


class JsonMemo:
    """Answers remembered per JSON value, bounded (forgotten all at once when full): a value is the one
    remembered when its JSON is the same bytes (so ``1``, ``1.0`` and ``true`` differ) and Python finds
    it equal (so a tuple, or a NaN that JSON prints as null, is not taken for the list or null it
    prints as). Values that are not plain JSON (a key that is no string, an integer beyond 64 bits) are
    never remembered."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._entries: dict[tuple[Any, bytes], tuple[Any, Any]] = {}

    def find(self, tag: Any, value: Any) -> tuple[tuple[Any, bytes] | None, Any]:
        """(the key to :meth:`remember` ``value`` under for ``tag``, or None when it cannot be; the answer
        remembered for it, or None)."""
        try:
            key = (tag, orjson.dumps(value))
        except TypeError:  # orjson.JSONEncodeError
            return None, None
        found = self._entries.get(key)
        if found is not None and found[0] == value:
            return key, found[1]
        return key, None

    def remember(self, key: tuple[Any, bytes] | None, value: Any, answer: Any) -> None:
        """Remember ``answer`` (not None) for ``value`` under ``key`` from :meth:`find` (a copy of ``value``
        is kept, so a caller changing it later changes nothing here)."""
        if key is None:
            return
        if len(self._entries) >= self._limit:
            self._entries.clear()
        self._entries[key] = (clone(value), answer)
