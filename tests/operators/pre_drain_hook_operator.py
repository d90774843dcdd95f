"""A small kopf operator owning one Cluster API pre-drain hook.

Cluster API waits, before draining a deleting Machine's node, until no annotation with the prefix
``pre-drain.delete.hook.machine.cluster.x-k8s.io`` is left; each owner removes its own once it has
done its work. This operator owns ``pre-drain.delete.hook.machine.cluster.x-k8s.io/my-hook``: when
its Machine is deleting, it removes that annotation (and only that one).

Run: ``kopf run --standalone --namespace default tests/operators/pre_drain_hook_operator.py``.
"""

from __future__ import annotations

from typing import Any

import kopf

MACHINE_GROUP = "cluster.x-k8s.io"
MACHINE_VERSION = "v1beta1"
MACHINE_PLURAL = "machines"
PRE_DRAIN_HOOK_PREFIX = "pre-drain.delete.hook.machine.cluster.x-k8s.io"
OWN_HOOK = f"{PRE_DRAIN_HOOK_PREFIX}/my-hook"
DELETED_EVENT = "DELETED"


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    """No peering (there is no KopfPeering resource) and watches that end and resume now and then."""
    settings.peering.standalone = True
    settings.watching.server_timeout = 60


@kopf.on.event(MACHINE_GROUP, MACHINE_VERSION, MACHINE_PLURAL)
def release_pre_drain_hook(event: kopf.RawEvent, meta: kopf.Meta, patch: kopf.Patch, logger: Any, **_: Any) -> None:
    """Remove our pre-drain hook from a deleting Machine; leave every other annotation alone."""
    if event.get("type") == DELETED_EVENT or not meta.get("deletionTimestamp"):
        return
    if OWN_HOOK not in (meta.get("annotations") or {}):
        return
    # A merge patch with null removes just this key.
    patch.metadata.annotations[OWN_HOOK] = None
    logger.info("Released the pre-drain hook %s", OWN_HOOK)
