"""The namespace controller: empties a Terminating namespace, then lets it go.

For a namespace with a deletionTimestamp it deletes every namespaced object in it, sets the
``NamespaceContentRemaining``/``NamespaceFinalizersRemaining`` conditions while objects remain,
and removes the ``kubernetes`` finalizer through ``/finalize`` once nothing is left.
"""

from __future__ import annotations

from typing import Any

from harness.apiserver.defaults import NAMESPACE_FINALIZER
from harness.client import ApiError, Client, Controller, Request, Result
from harness.clock import rfc3339

# The namespace controller re-checks a namespace whose content is still going away.
RECHECK_SECONDS = 5.0


class NamespaceController(Controller):
    name = "namespace"

    def __init__(self, client: Client) -> None:
        super().__init__()
        self.client = client

    def setup(self) -> None:
        self.watch(self.client, "v1", "Namespace")

    def reconcile(self, request: Request) -> Result | None:
        try:
            ns = self.client.get("v1", "Namespace", request.name)
        except ApiError as err:
            if err.code == 404:
                return None
            raise
        if not ns["metadata"].get("deletionTimestamp"):
            return None
        if NAMESPACE_FINALIZER not in (ns.get("spec") or {}).get("finalizers", []):
            return None
        remaining, with_finalizers = self._delete_content(request.name)
        if remaining:
            self._set_conditions(ns, remaining, with_finalizers)
            return Result(requeue_after=RECHECK_SECONDS)
        finalizers = [f for f in ns["spec"]["finalizers"] if f != NAMESPACE_FINALIZER]
        self.client.finalize_namespace(request.name, finalizers)
        return None

    def _delete_content(self, namespace: str) -> tuple[dict[str, int], dict[str, int]]:
        """Delete what is left; return counts of what still exists, and of what finalizers hold."""
        remaining: dict[str, int] = {}
        with_finalizers: dict[str, int] = {}
        for resource in self.client.discover():
            api_version, kind = resource["apiVersion"], resource["kind"]
            plural, group = resource["plural"], resource["group"]
            if not resource["namespaced"] or kind == "Event" or "list" not in resource["verbs"]:
                continue
            items = self.client.list(api_version, kind, namespace)["items"]
            if not items:
                continue
            resource = f"{plural}.{group}" if group else plural
            remaining[resource] = len(items)
            for item in items:
                meta = item["metadata"]
                for finalizer in meta.get("finalizers") or []:
                    with_finalizers[finalizer] = with_finalizers.get(finalizer, 0) + 1
                if meta.get("deletionTimestamp"):
                    continue
                try:
                    self.client.delete(api_version, kind, meta["name"], namespace, propagation_policy="Background")
                except ApiError as err:
                    if err.code != 404:
                        raise
        # Events go last, once everything else is gone, as the real controller's ordering makes likely.
        if not remaining:
            for event in self.client.list("v1", "Event", namespace)["items"]:
                try:
                    self.client.delete("v1", "Event", event["metadata"]["name"], namespace)
                except ApiError as err:
                    if err.code != 404:
                        raise
        return remaining, with_finalizers

    def _set_conditions(self, ns: dict[str, Any], remaining: dict[str, int], finalizers: dict[str, int]) -> None:
        now = self.client.now()

        content = ", ".join(f"{r} has {n} resource instances" for r, n in sorted(remaining.items()))
        conditions = [{
            "type": "NamespaceContentRemaining", "status": "True", "reason": "SomeResourcesRemain",
            "message": f"Some resources are remaining: {content}", "lastTransitionTime": rfc3339(now),
        }]
        if finalizers:
            held = ", ".join(f"{f} in {n} resource instances" for f, n in sorted(finalizers.items()))
            conditions.append({
                "type": "NamespaceFinalizersRemaining", "status": "True", "reason": "SomeFinalizersRemain",
                "message": f"Some content in the namespace has finalizers remaining: {held}",
                "lastTransitionTime": rfc3339(now),
            })
        old = [c for c in (ns.get("status") or {}).get("conditions") or []]
        if [(c["type"], c["message"]) for c in old] == [(c["type"], c["message"]) for c in conditions]:
            return
        ns.setdefault("status", {})["conditions"] = conditions
        try:
            self.client.update_status(ns)
        except ApiError as err:
            if err.code not in (404, 409):
                raise
