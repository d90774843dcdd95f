"""REST routing: a parsed API path plus an HTTP method becomes one :class:`APIServer` call.

GET is get, list or watch (``?watch=1|true`` or the legacy ``/watch/`` path); POST creates; PUT
updates; PATCH takes all four patch types; DELETE deletes one object or, on a collection, every
matching one. A request for a subresource goes to its object in the subresource table
(``harness/apiserver/subresources/``), which says which methods it answers; the kubelet's streams
go to ``streaming.py``. Discovery documents are answered here too.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from harness.apiserver import builtins, decoding, faults, managedfields, parsing, reviews, subresources
from harness.apiserver.http import bodies, discovery, options, streaming
from harness.apiserver.http.negotiation import parse_accept
from harness.apiserver.http.protocol import ServedWorld
from harness.apiserver.http.requestinfo import (
    API_VERSIONS,
    GROUP,
    GROUP_LIST,
    RESOURCE_LIST,
    RequestInfo,
)
from harness.apiserver.http.responses import (
    WARNING_HEADER,
    json_response,
    method_not_allowed,
    path_not_found,
    warning_value,
)
from harness.apiserver.http.tables import TableWriter, include_object, table_version
from harness.apiserver.http.watchstream import (
    DEFAULT_TIMEOUT,
    INITIAL_EVENTS_END,
    EventEncoder,
    WatchHub,
    WatchResponse,
    audit_id,
    end_stream,
    events,
    json_line,
)
from harness.apiserver.resources import ResourceType
from harness.apiserver.server import APIServer
from harness.apiserver.subresources import Subresource, SubresourceRequest, binding
from harness.kube import errors
from harness.kube.names.meta import (
    ADDED,
    APPLY_PATCH_CONTENT_TYPE,
    AUDIT_ID_HEADER,
    DELETED,
    META_GROUP,
    MODIFIED,
)

# The methods a resource itself answers (a subresource's come from its verbs).
_RESOURCE_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
# A watch stream whose client leaves this many events unread is closed (harness/apiserver/watch.py).
WATCH_QUEUE_LIMIT = 100_000


@dataclass
class Call:
    """One API request: who asks, which cluster answers, and the world around it."""

    request: Request
    world: ServedWorld
    server: APIServer
    user: str
    hub: WatchHub


# -- discovery --------------------------------------------------------------------------------------


def _discovery(call: Call, info: RequestInfo) -> Response:
    if call.request.method != "GET":
        raise method_not_allowed()
    registry = call.server.registry
    aggregated = discovery.wants_aggregated(parse_accept(call.request.headers.get("accept")))
    if info.target in (API_VERSIONS, GROUP_LIST) and aggregated:
        body = discovery.aggregated(registry, legacy=info.target == API_VERSIONS)
        return json_response(body, media_type=discovery.AGGREGATED_CONTENT_TYPE)
    if info.target == API_VERSIONS:
        return json_response(discovery.api_versions(call.request.url.netloc))
    if info.target == GROUP_LIST:
        return json_response(discovery.group_list(registry))
    if info.target == GROUP:
        return json_response(discovery.api_group(registry, info.group))
    return json_response(discovery.resource_list(registry, info.group, info.version))


async def serve_api(call: Call, info: RequestInfo) -> Response:
    """The response to a request for an ``/api`` or ``/apis`` path."""
    if info.target in (API_VERSIONS, GROUP_LIST, GROUP, RESOURCE_LIST):
        return _discovery(call, info)
    return await _resource(call, info)


# -- resources ---------------------------------------------------------------------------------------


def _check_scope(rt: ResourceType, info: RequestInfo, method: str) -> str | None:
    """The namespace to pass on (None for cluster-scoped or all namespaces); 404/405 for paths
    that do not exist for the resource's scope."""
    if not rt.namespaced:
        if info.namespace:
            raise path_not_found()
        return None
    if not info.namespace:
        if info.name:
            raise path_not_found()
        if method not in ("GET",):
            raise method_not_allowed()
        return None
    return info.namespace


def _subresource(rt: ResourceType, info: RequestInfo, method: str) -> Subresource | None:
    """The subresource addressed (None for the resource itself); 404 when ``rt`` has none by that
    name, 405 for a method it does not answer (a streaming one answers its methods itself)."""
    if not info.subresource:
        if method not in _RESOURCE_METHODS:
            raise method_not_allowed()
        return None
    sub = subresources.lookup(rt, info.subresource)
    if sub is None:
        raise path_not_found()
    if not sub.streaming and method not in sub.methods:
        raise method_not_allowed()
    return sub


def _sub_request(call: Call, rt: ResourceType, namespace: str | None, info: RequestInfo, *, dry_run: bool = False,
                 field_manager: str | None = None, force: bool = False) -> SubresourceRequest:
    return SubresourceRequest(call.server, rt, namespace, info.name, user=call.user, dry_run=dry_run,
                              field_manager=field_manager, force=force)


def _require_verb(rt: ResourceType, verb: str) -> None:
    if verb not in rt.verbs:
        raise method_not_allowed()


def _verb(call: Call, info: RequestInfo) -> str:
    """The Kubernetes verb of a resource request (as RBAC and fault rules name it)."""
    method = call.request.method
    if method == "GET":
        if info.watch_path or options.parse_bool("watch", call.request.query_params.get("watch")):
            return faults.WATCH
        return faults.GET if info.name else faults.LIST
    if method == "DELETE":
        return faults.DELETE if info.name else faults.DELETECOLLECTION
    return _METHOD_VERBS[method]


_METHOD_VERBS = {"POST": faults.CREATE, "PUT": faults.UPDATE, "PATCH": faults.PATCH}


def _created_name(raw: bytes) -> str:
    # A create names its object in the body; a fault's message names it as the apiserver would.
    try:
        body = parsing.loads_json(raw)
    except parsing.DecodeError:
        return ""
    meta = body.get("metadata") if isinstance(body, dict) else None
    return str(meta.get("name") or "") if isinstance(meta, dict) else ""


async def _inject(call: Call, info: RequestInfo, raw: bytes) -> faults.FaultRule | None:
    """Apply the fault rules to this request (see harness/apiserver/faults.py)."""
    injector = faults.injector_of(call.world.clusters)
    if not injector.rules:
        return None
    verb = _verb(call, info)
    request = faults.FaultRequest(
        cluster=call.server.name, verb=verb, group=info.group, resource=info.resource,
        subresource=info.subresource, namespace=info.namespace,
        name=info.name or (_created_name(raw) if verb == faults.CREATE else ""), user=call.user,
        resource_version=call.request.query_params.get("resourceVersion") or "",
    )
    return await faults.apply(injector, request, str(call.server.store.resource_version))


async def _resource(call: Call, info: RequestInfo) -> Response:
    request = call.request
    method = request.method
    rt = call.server.registry.by_plural(info.group, info.version, info.resource)
    namespace = _check_scope(rt, info, method)
    sub = _subresource(rt, info, method)
    if sub is not None and sub.streaming:
        return streaming.serve(call.server, request, info.namespace, info.name, info.subresource)
    if method == "GET":
        return _read(call, rt, namespace, info, sub, await _inject(call, info, b""))
    raw = await bodies.read_body(request)
    await _inject(call, info, raw)
    if method in _WRITE_OPTIONS:
        directive = options.field_validation(request.query_params, _WRITE_OPTIONS[method])
        # The scope's duplicate-key check parses the body again; skipped when it cannot find any.
        proven = directive != decoding.IGNORE and bodies.without_duplicate_keys(raw)
        with decoding.request_scope(directive, None if proven else raw) as scope:
            if proven:
                scope.raw = raw
            response = _WRITES[method](call, rt, namespace, info, sub, raw)
        for text in scope.warnings:
            response.headers.append(WARNING_HEADER, warning_value(text))
        return response
    if method == "DELETE":
        return _delete(call, rt, namespace, info, raw)
    raise method_not_allowed()


# -- reads -------------------------------------------------------------------------------------------------


def _table_writer(call: Call, rt: ResourceType) -> TableWriter | None:
    version = table_version(parse_accept(call.request.headers.get("accept")))
    if version is None:
        return None
    return TableWriter(rt, version, include_object(call.request.query_params.get("includeObject")))


def _read(
    call: Call, rt: ResourceType, namespace: str | None, info: RequestInfo, sub: Subresource | None,
    fault: faults.FaultRule | None = None,
) -> Response:
    query = call.request.query_params
    server = call.server
    watching = info.watch_path or options.parse_bool("watch", query.get("watch"))
    if watching:
        return _watch(call, rt, namespace, info, fault)
    writer = _table_writer(call, rt) if sub is None or sub.tables else None
    if info.name:
        _require_verb(rt, "get")
        # shared: the object is only serialised below (or read into a table row), never changed.
        obj = sub.get(_sub_request(call, rt, namespace, info)) if sub else server.get(rt, namespace, info.name,
                                                                                        shared=True)
        return json_response(writer.for_object(obj, call.world.now()) if writer else obj)
    _require_verb(rt, "list")
    limit = options.parse_int("limit", query.get("limit"))
    listed = server.list(
        rt,
        namespace,
        label_selector=query.get("labelSelector") or None,
        field_selector=query.get("fieldSelector") or None,
        limit=limit if limit and limit > 0 else None,  # 0 or negative: no limit
        continue_token=query.get("continue") or None,
        resource_version=query.get("resourceVersion"),
        shared=True,  # only serialised below: no need to copy every object first
    )
    return json_response(writer.for_list(listed, call.world.now()) if writer else listed)


def _table_encoder(writer: TableWriter, call: Call) -> EventEncoder:
    first = True

    def encode(event_type: str, obj: dict[str, Any]) -> bytes:
        nonlocal first
        if event_type in (ADDED, MODIFIED, DELETED):
            rv = (obj.get("metadata") or {}).get("resourceVersion")
            obj = writer.table([obj], call.world.now(), metadata={"resourceVersion": rv}, with_columns=first)
            first = False
        return json_line(event_type, obj)

    return encode


def _watch(
    call: Call, rt: ResourceType, namespace: str | None, info: RequestInfo, fault: faults.FaultRule | None = None
) -> Response:
    """A watch stream; ``fault``: an injected ``Expired`` (one in-stream 410, then the end) or
    ``DropWatch`` (the stream ends after ``afterEvents`` events)."""
    _require_verb(rt, "watch")
    if info.subresource:
        raise method_not_allowed()
    query = call.request.query_params
    server = call.server
    field_selector = query.get("fieldSelector") or None
    if info.name:
        # Watching one object by path is a watch with a name field selector.
        by_name = f"metadata.name={info.name}"
        field_selector = f"{by_name},{field_selector}" if field_selector else by_name
    initial_events = options.parse_bool("sendInitialEvents", query.get("sendInitialEvents"))
    timeout = options.parse_int("timeoutSeconds", query.get("timeoutSeconds"))
    writer = _table_writer(call, rt)
    watch = server.watch(
        rt,
        namespace,
        label_selector=query.get("labelSelector") or None,
        field_selector=field_selector,
        resource_version=None if initial_events else query.get("resourceVersion") or None,
        allow_bookmarks=options.parse_bool("allowWatchBookmarks", query.get("allowWatchBookmarks")),
    )
    watch.max_queued = WATCH_QUEUE_LIMIT
    if initial_events:
        watch.bookmark(str(server.store.resource_version), {INITIAL_EVENTS_END: "true"})
    if fault is not None and fault.fault == faults.EXPIRED:
        watch.drain()  # nothing but the error: the watch cache refuses the resourceVersion outright
        watch.expire(faults.expired_message(query.get("resourceVersion") or "", str(server.store.resource_version)))
    stream_id = audit_id(call.request.headers.get(AUDIT_ID_HEADER))
    record = call.hub.track(stream_id, watch, user=call.user,
                            resource=f"{rt.plural}.{rt.group}" if rt.group else rt.plural)
    stream = events(
        watch,
        hub=call.hub,
        timeout=float(timeout) if timeout and timeout > 0 else DEFAULT_TIMEOUT,
        encoder=_table_encoder(writer, call) if writer else json_line,
        current_rv=lambda: str(server.store.resource_version),
        record=record,
        limit=fault.after_events if fault is not None and fault.fault == faults.DROP_WATCH else None,
    )
    return WatchResponse(stream, audit_id=stream_id, on_close=lambda: end_stream(watch, call.hub, record))


# -- writes ------------------------------------------------------------------------------------------------


def _field_manager(call: Call) -> str:
    """``fieldManager``, else the User-Agent prefix (``kubectl``, ``OpenAPI-Generator``) as the
    apiserver derives it; longer than 128 bytes is 422 on the verb's options."""
    given = call.request.query_params.get("fieldManager")
    if given:
        if len(given.encode()) > managedfields.MAX_MANAGER_LENGTH:
            options_kind = {"POST": "CreateOptions", "PUT": "UpdateOptions"}.get(call.request.method, "PatchOptions")
            raise errors.invalid_object(
                options_kind, META_GROUP, "",
                [errors.too_long("fieldManager", managedfields.MAX_MANAGER_LENGTH)],
            )
        return given
    return _manager_from_user_agent(call.request.headers.get("user-agent"))


# A client sends the same User-Agent with each request: its manager name is worked out once.
_manager_from_user_agent = functools.lru_cache(maxsize=256)(managedfields.manager_from_user_agent)


def _object_body(call: Call, raw: bytes) -> Any:
    return bodies.decode_object(raw, call.request.headers.get("content-type"))


def _post(
    call: Call, rt: ResourceType, namespace: str | None, info: RequestInfo, sub: Subresource | None, raw: bytes
) -> Response:
    query = call.request.query_params
    server = call.server
    if sub is not None:
        body = _object_body(call, raw)
        result = sub.create(
            _sub_request(call, rt, namespace, info, dry_run=options.dry_run(query, "CreateOptions")), body
        )
        return json_response(result, int(result.get("code") or 201))
    if info.name:
        raise method_not_allowed()
    _require_verb(rt, "create")
    body = _object_body(call, raw)
    # The kinds first: comparing two ResourceTypes compares every field, and equal types have equal kinds.
    if rt.kind in _REVIEW_KINDS and reviews.is_review(rt):
        return json_response(reviews.answer(rt, namespace, body, call.user), 201)
    if rt.kind == builtins.BINDING.kind and rt == builtins.BINDING:
        # POST .../bindings is the older spelling of pods/<name>/binding; the Binding names the Pod.
        result = binding.bind_named(server, namespace or "", body, user=call.user,
                                    dry_run=options.dry_run(query, "CreateOptions"))
        return json_response(result, int(result.get("code") or 201))
    # shared: the created object is only serialised, at once, so the server need not copy it first.
    created = server.create(rt, namespace, body, dry_run=options.dry_run(query, "CreateOptions"), user=call.user,
                            field_manager=_field_manager(call), shared=True)
    return json_response(created, 201)


_REVIEW_KINDS = frozenset(review.kind for review in reviews.REVIEWS)


def _put(
    call: Call, rt: ResourceType, namespace: str | None, info: RequestInfo, sub: Subresource | None, raw: bytes
) -> Response:
    if not info.name:
        raise method_not_allowed()
    _require_verb(rt, "update")
    server = call.server
    dry_run = options.dry_run(call.request.query_params, "UpdateOptions")
    body = _object_body(call, raw)
    if sub is not None:
        manager = _field_manager(call) if sub.field_managed else None
        return json_response(sub.update(_sub_request(call, rt, namespace, info, dry_run=dry_run,
                                                     field_manager=manager), body))
    updated = server.update(
        rt, namespace, info.name, body, dry_run=dry_run, user=call.user, field_manager=_field_manager(call),
    )
    return json_response(updated)


def _patch(
    call: Call, rt: ResourceType, namespace: str | None, info: RequestInfo, sub: Subresource | None, raw: bytes
) -> Response:
    if not info.name:
        raise method_not_allowed()
    _require_verb(rt, "patch")
    query = call.request.query_params
    content_type = call.request.headers.get("content-type")
    patch_type = bodies.patch_type(content_type)
    body = bodies.decode_patch(raw, content_type)
    dry_run = options.dry_run(query, "PatchOptions")
    applying = patch_type == APPLY_PATCH_CONTENT_TYPE and (sub is None or sub.applies)
    field_manager = query.get("fieldManager") or None if applying else _field_manager(call)
    # Only what takes apply reads ``force`` (a Scale patch is a merge whatever its type).
    force = options.parse_bool("force", query.get("force")) if sub is None or sub.applies else False
    if sub is not None:
        code, result = sub.patch(_sub_request(call, rt, namespace, info, dry_run=dry_run, field_manager=field_manager,
                                              force=force), body, patch_type)
        return json_response(result, code)
    code, result = call.server.patch(
        rt, namespace, info.name, body, patch_type, dry_run=dry_run, field_manager=field_manager, force=force,
        user=call.user,
    )
    return json_response(result, code)


# The options kind each write verb validates its query against (fieldValidation, dryRun).
_WRITE_OPTIONS = {"POST": "CreateOptions", "PUT": "UpdateOptions", "PATCH": "PatchOptions"}
_WRITES = {"POST": _post, "PUT": _put, "PATCH": _patch}


def _delete(call: Call, rt: ResourceType, namespace: str | None, info: RequestInfo, raw: bytes) -> Response:
    query = call.request.query_params
    body = bodies.decode_optional(raw, call.request.headers.get("content-type"))
    delete_options = options.delete_options(query, body)
    server = call.server
    if not info.name:
        _require_verb(rt, "deletecollection")
        listed = server.delete_collection(
            rt,
            namespace,
            delete_options,
            label_selector=query.get("labelSelector") or None,
            field_selector=query.get("fieldSelector") or None,
            user=call.user,
        )
        return json_response(listed)
    _require_verb(rt, "delete")
    code, result = server.delete(rt, namespace, info.name, delete_options, user=call.user)
    return json_response(result, code)
