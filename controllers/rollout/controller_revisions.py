"""ControllerRevisions of StatefulSets and DaemonSets, as upstream's history package keeps them: one
``apps/v1`` ControllerRevision per distinct pod template, named ``<owner>-<hash>``, labelled with the
owner's selector labels and ``controller.kubernetes.io/hash``, owned by the workload, numbered by
``revision``, annotated as the workload was when it was made. The template is stored in ``data`` the
way upstream's ``getPatch`` records it (``{"spec": {"template": {..., "$patch": "replace"}}}``, keys
sorted, the empty ``creationTimestamp: null`` a Go client writes), so ``kubectl rollout history`` reads
it and ``kubectl rollout undo`` recognises the current revision ("skipped rollback") by comparing bytes.

A template equal to an older revision's brings that ControllerRevision back with the next revision number
(upstream's ``getStatefulSetRevisions``/``constructHistory``): a rollback. Histories beyond
``revisionHistoryLimit`` lose their oldest revisions that no live pod uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from controllers.rollout.api import (
    CONTROLLER_HASH_LABEL,
    CONTROLLER_REVISION,
    HOOK_STATE_ANNOTATION,
    meta,
    owner_ref,
    spec,
)
from controllers.rollout.revisions import template_hash, templates_equal
from harness.client import MERGE, ApiError, Client, find_in
from harness.clock import parse_rfc3339
from harness.kube.names.apps import APPS_V1
from harness.kube.names.meta import PATCH_DIRECTIVE
from harness.kube.objects import clone
from harness.kube.ownerrefs import is_controlled_by

REPLACE = "replace"


def revision_number(cr: dict[str, Any]) -> int:
    """A ControllerRevision's ``revision`` (0 when unset)."""
    try:
        return int(cr.get("revision") or 0)
    except (TypeError, ValueError):
        return 0


def revision_template(cr: dict[str, Any]) -> dict[str, Any]:
    """The pod template a ControllerRevision records (without the patch directive)."""
    template = clone((((cr.get("data") or {}).get("spec") or {}).get("template")) or {})
    template.pop(PATCH_DIRECTIVE, None)
    return template  # type: ignore[no-any-return]


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


def recorded_patch(template: dict[str, Any]) -> dict[str, Any]:
    """What a ControllerRevision's ``data`` holds for ``template`` (as served: defaulted), byte for byte as
    upstream's getPatch writes it once served compactly: the template through Go's struct (an empty
    ``metadata.creationTimestamp`` as null) with the replace directive, every object's keys sorted (Go
    marshals maps so). kubectl rollout undo compares exactly these bytes with the workload's own."""
    stored = clone(template)
    stored.setdefault("metadata", {}).setdefault("creationTimestamp", None)
    stored[PATCH_DIRECTIVE] = REPLACE
    return _sorted({"spec": {"template": stored}})  # type: ignore[no-any-return]


def _created(cr: dict[str, Any]) -> float:
    stamp = meta(cr).get("creationTimestamp")
    return parse_rfc3339(stamp) if stamp else 0.0


@dataclass
class History:
    """A workload's ControllerRevisions after :func:`sync_history`."""

    update: dict[str, Any]                 # the revision of the workload's current template
    revisions: list[dict[str, Any]]        # every owned revision, by revision number
    fresh: bool                            # the update revision was created or brought back now
    rollback: bool                         # the update revision is an older template brought back

    def named(self, name: str) -> dict[str, Any] | None:
        """The owned revision called ``name``."""
        return next((cr for cr in self.revisions if meta(cr).get("name") == name), None)

    def previous(self) -> dict[str, Any] | None:
        """The highest-numbered revision other than the update revision (what the rollout starts from)."""
        others = [cr for cr in self.revisions if cr is not self.update]
        return max(others, key=revision_number, default=None)


def sync_history(client: Client, owner: dict[str, Any], selector_labels: dict[str, str]) -> History | None:
    """Find or create the ControllerRevision of ``owner``'s template, giving it the next revision number
    when it is not the newest; None when a hash collision needs another sync (collisionCount is raised)."""
    namespace = meta(owner).get("namespace")
    listed = client.list(APPS_V1, CONTROLLER_REVISION, namespace)["items"]
    owned = sorted((cr for cr in listed if is_controlled_by(cr, owner)), key=revision_number)
    template = spec(owner).get("template") or {}
    top = max((revision_number(cr) for cr in owned), default=0)
    equal = [cr for cr in owned if templates_equal(revision_template(cr), template)]
    if equal:
        update = max(equal, key=revision_number)
        if revision_number(update) == top:
            return History(update, owned, False, _older_than_others(update, owned))
        update = client.patch(APPS_V1, CONTROLLER_REVISION, meta(update)["name"], {"revision": top + 1},
                              namespace=namespace, patch_type=MERGE)
        owned = sorted([update if meta(cr)["uid"] == meta(update)["uid"] else cr for cr in owned],
                       key=revision_number)
        return History(update, owned, True, True)
    collisions = (owner.get("status") or {}).get("collisionCount")
    digest = template_hash(template, collisions)
    body = {
        "apiVersion": APPS_V1, "kind": CONTROLLER_REVISION,
        "metadata": {"name": f"{meta(owner)['name']}-{digest}", "namespace": namespace,
                     "labels": {**selector_labels, CONTROLLER_HASH_LABEL: digest},
                     "ownerReferences": [owner_ref(owner)]},
        "data": recorded_patch(template),
        "revision": top + 1,
    }
    # The workload's annotations as they are now (upstream's newRevision and snapshot): kubectl rollout
    # history shows a revision's kubernetes.io/change-cause from them.
    annotations = {k: v for k, v in (meta(owner).get("annotations") or {}).items() if k != HOOK_STATE_ANNOTATION}
    if annotations:
        body["metadata"]["annotations"] = annotations
    try:
        created = client.create(body)
    except ApiError as err:
        if err.code != 409:
            raise
        existing = find_in(client, APPS_V1, CONTROLLER_REVISION, body["metadata"]["name"], namespace)
        if existing is not None and is_controlled_by(existing, owner) and templates_equal(
                revision_template(existing), template):
            return sync_history(client, owner, selector_labels)
        updated = {**owner, "status": {**(owner.get("status") or {}),
                                       "collisionCount": int(collisions or 0) + 1}}
        client.update_status(updated)
        return None
    return History(created, owned + [created], True, False)


def _older_than_others(update: dict[str, Any], owned: list[dict[str, Any]]) -> bool:
    """A newest revision created before another one is an older template that was brought back (so a
    restarted controller still knows the rollout is a rollback)."""
    return any(_created(cr) > _created(update) for cr in owned if cr is not update)


def truncate_history(client: Client, owner: dict[str, Any], history: History, live: set[str]) -> None:
    """Delete the oldest revisions beyond ``revisionHistoryLimit`` that no live pod and neither the current
    nor the update revision uses (``truncateHistory``)."""
    limit = spec(owner).get("revisionHistoryLimit")
    if limit is None:
        return
    keep = live | {meta(history.update)["name"]}
    spare = [cr for cr in history.revisions if meta(cr)["name"] not in keep]
    for cr in spare[: max(0, len(spare) - int(limit))]:
        try:
            client.delete(APPS_V1, CONTROLLER_REVISION, meta(cr)["name"], meta(cr).get("namespace"))
        except ApiError as err:
            if err.code != 404:
                raise
