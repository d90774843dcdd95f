"""Errors the machine controller returns, with the text Go prints for them: ``errors.Wrapf`` chains,
``kerrors.NewAggregate`` lists and ``%q`` quoting. A reconcile that returns one of these is retried
with back-off, and the text is what conditions and events show."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from harness.kube.errors import FieldError, StatusError, invalid_object
from harness.kube.names.meta import ADMISSION_DENIED_MESSAGE
from harness.kube.validation import go_quote  # Go's %q, written once in harness.kube

__all__ = ["ReconcileError", "aggregate", "go_quote", "run_phases", "webhook_denied", "wrap"]


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


def webhook_denied(webhook: str, kind: str, group: str, obj: dict[str, Any], errs: list[FieldError]) -> StatusError:
    """A validating webhook's ``apierrors.NewInvalid`` as kube-apiserver relays it (``ToStatusErr``): 422
    ``Invalid`` with the causes, the message prefixed with ``admission webhook "<name>" denied the request: ``."""
    err = invalid_object(kind, group, str((obj.get("metadata") or {}).get("name", "")), errs)
    err.status["message"] = ADMISSION_DENIED_MESSAGE.format(name=go_quote(webhook), message=err.status["message"])
    return StatusError(err.status)


def run_phases(
    phases: Iterable[Callable[[], float | None]], *, also: tuple[type[Exception], ...] = ()
) -> tuple[list[str], float | None]:
    """Cluster API's ``doReconcile``: every phase runs even after an earlier one failed; returns the error
    texts (a :class:`ReconcileError` or an ``also`` exception by its ``str``, an API error by its message)
    and the shortest requeue the phases asked for before the first failure."""
    errors: list[str] = []
    requeue: float | None = None
    for phase in phases:
        try:
            after = phase()
        except (ReconcileError, *also) as err:
            errors.append(str(err))
            continue
        except StatusError as err:
            errors.append(err.message)
            continue
        if after and not errors:
            requeue = after if requeue is None else min(requeue, after)
    return errors, requeue

