"""Writing a StatefulSet's or DaemonSet's status: its conditions (which, unlike a Deployment's, have no
``lastUpdateTime``) with the lifecycle hooks' condition, and the write itself."""

from __future__ import annotations

from typing import Any

from controllers.rollout import conditions as cond
from controllers.rollout.api import lifecycle_hooks, status
from harness.client import ApiError, Client, Result


def with_hook_condition(obj: dict[str, Any], hook_condition: tuple[str, str, str] | None,
                        now: float) -> list[dict[str, Any]]:
    """The object's conditions with the lifecycle hooks' one set to ``hook_condition`` (status,
    reason, message), or without it once the object has no hooks; no ``lastUpdateTime`` on any."""
    conditions = [dict(c) for c in status(obj).get("conditions") or []]
    if hook_condition is not None:
        cond.set_hook_condition(conditions, *hook_condition, now)
        for condition in conditions:
            condition.pop("lastUpdateTime", None)
    elif not lifecycle_hooks(obj):
        cond.remove(conditions, cond.LIFECYCLE_HOOKS)
    return conditions


def write_status(client: Client, obj: dict[str, Any], new_status: dict[str, Any]) -> tuple[bool, Result | None]:
    """Write ``new_status`` unless the object has it already: ``(True, None)`` to go on, or
    ``(False, result)`` to end the reconcile with ``result`` (the object is gone, or changed meanwhile:
    try again)."""
    if new_status == status(obj):
        return True, None
    try:
        client.update_status({**obj, "status": new_status})
    except ApiError as err:
        if err.code == 404:
            return False, None
        if err.code == 409:
            return False, Result(requeue=True)
        raise
    return True, None
