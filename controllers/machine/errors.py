"""Errors the machine controller returns, with the text Go prints for them: ``errors.Wrapf`` chains,
``kerrors.NewAggregate`` lists and ``%q`` quoting. A reconcile that returns one of these is retried
with back-off, and the text is what conditions and events show."""

from __future__ import annotations

from collections.abc import Iterable


class ReconcileError(Exception):
    """A reconcile failure whose ``str`` is the Go error text."""


def wrap(message: str, cause: BaseException | str) -> ReconcileError:
    """``errors.Wrapf(cause, message)``: ``<message>: <cause>``."""
    return ReconcileError(f"{message}: {cause}")


def aggregate(messages: Iterable[str]) -> str:
    """``kerrors.NewAggregate(errs).Error()``: one message alone, several de-duplicated in brackets."""
    unique = list(dict.fromkeys(messages))
    if len(unique) == 1:
        return unique[0]
    return "[" + ", ".join(unique) + "]"


def go_quote(text: str) -> str:
    """Go's ``%q`` of a string (the ASCII escapes the controller's strings need)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{escaped}"'
