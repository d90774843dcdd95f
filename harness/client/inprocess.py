"""The in-process client: calls a cluster's :class:`APIServer` directly, as the HTTP facade does.

Like Starlette's ``TestClient`` it is a first-class implementation of the client interface: every
request goes through the same API semantics as over HTTP; only the transport is missing. Results
are copies, so callers never share state with the store.

A write may be told ``answer=False`` (``create``, ``update``, ``update_status``, ``delete``): the caller does
not read what the server answers (a simulator writing a status it already knows), so the server
makes no copy of the written object for it and the call returns None. The write, its audit record,
its watch events and its errors are exactly those of the same call with an answer.

A read or a create may be told ``shared=True`` (``get``, ``list``, ``create``): the caller only reads the
answer and never changes it (the machine controller's drain reading the Node's Pods, the ReplicaSet
simulator keeping the Pod it created), so the server answers views whose nested values are the stored
objects' own instead of deep copies. Stored objects are never changed (a write replaces them), so such a
view stays the snapshot it was; changing it would change the store.
"""

from __future__ import annotations

from typing import Any

from harness.apiserver import subresources
from harness.apiserver.clusters import ClusterSet, cluster_from_url, server_from_kubeconfig
from harness.apiserver.resources import ResourceType
from harness.apiserver.server import APIServer
from harness.apiserver.subresources import SubresourceRequest
from harness.apiserver.watch import Watch
from harness.client.interface import binding_body, delete_options_body, eviction_body, finalize_body
from harness.kube.errors import StatusError
from harness.kube.names.meta import MERGE_PATCH_CONTENT_TYPE
from harness.kube.objects import clone


class InProcessWatch:
    """A :class:`Watch` whose events are handed out as copies."""

    def __init__(self, watch: Watch) -> None:
        self._watch = watch

    @property
    def in_process_watch(self) -> Watch:
        """The store's Watch behind this stream (its ``events`` and ``closed``), for a manager that
        skips idle watches without draining them; not for reading events (they are not copies)."""
        return self._watch

    @property
    def on_event(self):  # type: ignore[no-untyped-def]
        return self._watch.on_event

    @on_event.setter
    def on_event(self, callback) -> None:  # type: ignore[no-untyped-def]
        self._watch.on_event = callback

    @property
    def closed(self) -> bool:
        return self._watch.closed and not self._watch.events

    def drain(self) -> list[tuple[str, dict[str, Any]]]:
        return [(t, clone(o)) for t, o in self._watch.drain()]

    def drain_shared(self) -> list[tuple[str, dict[str, Any]]]:
        """The events without copying: for consumers that only read them."""
        return self._watch.drain()

    def stop(self) -> None:
        self._watch.stop()


class InProcessClient:
    """A client of one cluster in this process."""

    # Its writes take ``answer=False`` (see the module's docstring); code written for any client
    # asks :func:`harness.client.interface.answers_optional` before passing it.
    answers_optional = True
    # Its reads take ``shared=True`` (see the module's docstring), asked through
    # :func:`harness.client.interface.shared_reads`.
    reads_shared = True

    def __init__(self, clusters: ClusterSet, cluster: str, user: str = "admin") -> None:
        self._clusters = clusters
        self.cluster = cluster
        self.user = user

    @property
    def _server(self) -> APIServer:
        server = self._clusters.get(self.cluster)
        if server is None:
            # The workload cluster is gone (its Cluster was deleted): unreachable, as a real one would be.
            raise ConnectionError(f"cluster {self.cluster} is not reachable")
        return server

    def _fault(self, verb: str, rt: ResourceType, namespace: str | None, name: str, subresource: str = "") -> None:
        # The world's fault rules (harness/apiserver/faults.py; none unless a test installed some):
        # the world's own controllers see injected errors as HTTP clients do. Without any rule (the
        # usual case) there is nothing to match, so no request record is built for the check.
        faults = self._clusters.faults
        if not faults.rules:
            return
        faults.check(cluster=self.cluster, verb=verb, group=rt.group, resource=rt.plural,
                     subresource=subresource, namespace=namespace or "", name=name, user=self.user)

    def _rt(self, api_version: str, kind: str) -> ResourceType:
        return self._server.registry.by_kind(api_version, kind)

    def _rt_of(self, obj: dict[str, Any]) -> ResourceType:
        if not isinstance(obj, dict) or "apiVersion" not in obj or "kind" not in obj:
            raise StatusError(
                {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                 "message": "Object 'Kind' is missing in the object", "reason": "BadRequest", "code": 400}
            )
        return self._rt(obj["apiVersion"], obj["kind"])

    def get(
        self, api_version: str, kind: str, name: str, namespace: str | None = None, *, shared: bool = False
    ) -> dict[str, Any]:
        rt = self._rt(api_version, kind)
        self._fault("get", rt, namespace, name)
        return self._server.get(rt, namespace, name, shared=shared)

    def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
        shared: bool = False,
    ) -> dict[str, Any]:
        rt = self._rt(api_version, kind)
        self._fault("list", rt, namespace, "")
        return self._server.list(
            rt, namespace, label_selector=label_selector, field_selector=field_selector,
            limit=limit, continue_token=continue_token, shared=shared,
        )

    def watch(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        allow_bookmarks: bool = False,
    ) -> InProcessWatch:
        watch = self._server.watch(
            self._rt(api_version, kind), namespace, label_selector=label_selector, field_selector=field_selector,
            resource_version=resource_version, allow_bookmarks=allow_bookmarks,
        )
        return InProcessWatch(watch)

    def create(
        self, obj: dict[str, Any], *, dry_run: bool = False, answer: bool = True, shared: bool = False
    ) -> dict[str, Any] | None:
        rt = self._rt_of(obj)
        meta = obj.get("metadata") or {}
        self._fault("create", rt, meta.get("namespace"), meta.get("name", ""))
        return self._server.create(rt, meta.get("namespace"), obj, dry_run=dry_run, user=self.user, answer=answer,
                                   shared=shared)

    def update(self, obj: dict[str, Any], *, dry_run: bool = False, answer: bool = True) -> dict[str, Any] | None:
        rt = self._rt_of(obj)
        meta = obj.get("metadata") or {}
        self._fault("update", rt, meta.get("namespace"), meta.get("name", ""))
        return self._server.update(rt, meta.get("namespace"), meta.get("name", ""), obj, dry_run=dry_run,
                                   user=self.user, answer=answer)

    def _subresource(
        self, rt: ResourceType, name: str, subresource: str, namespace: str | None, *, dry_run: bool = False,
        field_manager: str | None = None, force: bool = False, answer: bool = True,
    ) -> tuple[subresources.Subresource | None, SubresourceRequest]:
        """The subresource from the table (None when ``rt`` has none by that name) and the request to it."""
        # (Positional: every in-process status write and eviction builds one.)
        request = SubresourceRequest(self._server, rt, namespace, name, self.user, dry_run, field_manager, force,
                                     answer)
        return subresources.lookup(rt, subresource), request

    def update_status(
        self, obj: dict[str, Any], *, dry_run: bool = False, answer: bool = True
    ) -> dict[str, Any] | None:
        rt = self._rt_of(obj)
        meta = obj.get("metadata") or {}
        self._fault("update", rt, meta.get("namespace"), meta.get("name", ""), "status")
        status, request = self._subresource(rt, meta.get("name", ""), "status", meta.get("namespace"),
                                            dry_run=dry_run, answer=answer)
        if status is None:
            # A kind without the subresource: the server's own 404 for it.
            return self._server.update(rt, meta.get("namespace"), meta.get("name", ""), obj, subresource="status",
                                       dry_run=dry_run, user=self.user, answer=answer)
        return status.update(request, obj)

    def patch(
        self,
        api_version: str,
        kind: str,
        name: str,
        body: Any,
        *,
        namespace: str | None = None,
        patch_type: str = MERGE_PATCH_CONTENT_TYPE,
        subresource: str = "",
        dry_run: bool = False,
        field_manager: str | None = None,
        force: bool = False,
    ) -> dict[str, Any]:
        rt = self._rt(api_version, kind)
        self._fault("patch", rt, namespace, name, subresource)
        if subresource:
            sub, request = self._subresource(rt, name, subresource, namespace, dry_run=dry_run,
                                             field_manager=field_manager, force=force)
            if sub is not None:
                return sub.patch(request, clone(body), patch_type)[1]
        _, obj = self._server.patch(
            rt, namespace, name, clone(body), patch_type, subresource=subresource,
            dry_run=dry_run, field_manager=field_manager, force=force, user=self.user,
        )
        return obj

    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        *,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        preconditions: dict[str, str] | None = None,
        dry_run: bool = False,
        answer: bool = True,
    ) -> dict[str, Any] | None:
        options = delete_options_body(propagation_policy=propagation_policy,
                                      grace_period_seconds=grace_period_seconds, preconditions=preconditions,
                                      dry_run=dry_run)
        rt = self._rt(api_version, kind)
        self._fault("delete", rt, namespace, name)
        _, body = self._server.delete(rt, namespace, name, options, user=self.user, answer=answer)
        return body

    def evict(
        self, name: str, namespace: str, *, delete_options: dict[str, Any] | None = None, dry_run: bool = False
    ) -> dict[str, Any]:
        body = eviction_body(name, namespace, None if delete_options is None else clone(delete_options))
        pods = self._rt("v1", "Pod")
        self._fault("create", pods, namespace, name, "eviction")
        eviction, request = self._subresource(pods, name, "eviction", namespace, dry_run=dry_run)
        assert eviction is not None  # the table serves it for pods
        return eviction.create(request, body)

    def bind(self, name: str, namespace: str, node_name: str) -> dict[str, Any]:
        body = binding_body(name, namespace, node_name)
        binding, request = self._subresource(self._rt("v1", "Pod"), name, "binding", namespace)
        assert binding is not None  # the table serves it for pods
        return binding.create(request, body)

    def finalize_namespace(self, name: str, finalizers: list[str]) -> dict[str, Any]:
        body = finalize_body(name, finalizers)
        finalize, request = self._subresource(self._rt("v1", "Namespace"), name, "finalize", None)
        assert finalize is not None  # the table serves it for namespaces
        return finalize.update(request, body)

    def now(self) -> float:
        return self._clusters.clock.now()

    def discover(self, *, shared: bool = False) -> list[dict[str, Any]]:
        """The kinds the cluster serves, one entry per resource. ``shared``: the caller only reads the answer,
        so it gets the list worked out for the cluster's current kinds itself (the same list object until
        what the cluster serves changes) instead of a copy."""
        registry = self._server.registry
        cached = registry.discovery_cache
        if cached is None or cached[0] != registry.generation:
            # Worked out once per change of what the cluster serves (the garbage collector asks at
            # every CRD event); each caller gets its own copy.
            seen: set[tuple[str, str]] = set()
            out = []
            for rt in registry.all():
                if (rt.group, rt.plural) in seen:
                    continue
                seen.add((rt.group, rt.plural))
                out.append({"apiVersion": rt.api_version, "group": rt.group, "kind": rt.kind, "plural": rt.plural,
                            "namespaced": rt.namespaced, "verbs": list(rt.verbs),
                            "subresources": list(subresources.names(rt))})
            cached = registry.discovery_cache = (registry.generation, out)
        if shared:
            return cached[1]
        return [{**entry, "verbs": list(entry["verbs"]), "subresources": list(entry["subresources"])}
                for entry in cached[1]]

    def for_kubeconfig(self, kubeconfig: str, user: str | None = None) -> InProcessClient:
        cluster = cluster_from_url(server_from_kubeconfig(kubeconfig))
        return InProcessClient(self._clusters, cluster, user or self.user)

    def for_cluster(self, cluster: str, user: str | None = None) -> InProcessClient:
        """A client of another cluster of the same world."""
        return InProcessClient(self._clusters, cluster, user or self.user)
