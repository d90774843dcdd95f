"""A World served over HTTP is freed once its server stopped: a process that serves one World after
another (the HTTP scenes, a user's suite with the HTTP transport) keeps none of them alive.

FastAPI keeps what it learns of each endpoint function in process-wide caches keyed by the function,
so an endpoint closing over its World (the admin API's, the reference Runtime Extension's, the docs
page's) would keep the World, its stores and its audit trail alive for thousands of apps."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable

import httpx

from harness.apiserver.http import create_app, run_server, url
from harness.world.extension import ExtensionServer, HookResponder
from harness.world.http_scene import WorldServer
from harness.world.world import World

TIMEOUT = 10.0
HOOK_PATH = "/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforeclustercreate/handler"


def _freed(refs: list[weakref.ref[World]] | list[weakref.ref[object]]) -> int:
    """How many of the objects ``refs`` point at are gone after a full collection."""
    gc.collect()
    return sum(ref() is None for ref in refs)


def _use_admin_api(http: httpx.Client, base: str) -> None:
    # Every kind of admin endpoint: a read, a validated body, the slices of an advance, the docs.
    assert http.get(f"{base}/harness/v1/clock").status_code == 200
    assert http.post(f"{base}/harness/v1/clock/advance", json={"seconds": 5}).json()["wrote"] in (True, False)
    assert http.get(f"{base}/harness/v1/audit", params={"since": 0}).status_code == 200
    assert http.post(f"{base}/harness/v1/simulators/nope", json={"enabled": True}).status_code == 404
    assert http.get(f"{base}/harness/v1/docs").status_code == 200
    assert http.get(f"{base}/harness/v1/openapi.json").status_code == 200
    assert http.get(f"{base}/api/v1/namespaces").status_code == 200


def _serve_and_stop(world_factory: Callable[[], World]) -> weakref.ref[World]:
    world = world_factory()
    ref = weakref.ref(world)
    server, port = run_server(create_app(world), "127.0.0.1", 0, timeout=TIMEOUT)
    try:
        with httpx.Client(timeout=TIMEOUT) as http:
            _use_admin_api(http, url("127.0.0.1", port))
    finally:
        server.stop(TIMEOUT)
    assert not server.thread.is_alive()
    return ref


def test_each_world_served_by_the_facade_is_freed_after_its_server_stopped() -> None:
    refs = [_serve_and_stop(World), _serve_and_stop(lambda: World(simulators=[])), _serve_and_stop(World)]
    assert _freed(refs) == len(refs)


def test_a_world_server_keeps_no_world_it_served_before_or_after_it_stopped() -> None:
    # The HTTP scenes' server: one uvicorn server, a fresh World put behind it per scenario.
    server = WorldServer(timeout=TIMEOUT)
    refs = []
    try:
        with httpx.Client(timeout=TIMEOUT) as http:
            for _ in range(3):
                world = World()
                refs.append(weakref.ref(world))
                server.serve(world)
                del world
                _use_admin_api(http, server.base_url)
            assert _freed(refs[:-1]) == 2  # the worlds served before the current one
            assert refs[-1]() is not None  # the one being served is kept
    finally:
        server.stop(TIMEOUT)
    assert _freed(refs) == 3  # the server stopped: nothing of the last one is kept either


def test_the_reference_extension_keeps_no_world_clock_or_responder_after_it_stopped() -> None:
    refs: list[weakref.ref[object]] = []
    for _ in range(2):
        world = World(controllers=[])
        responder = HookResponder()
        # Its hangs are held on the world's clock (scenario worlds), so the extension holds the clock.
        extension = ExtensionServer(responder, clock=world.clock).start(TIMEOUT)
        refs += [weakref.ref(world), weakref.ref(world.clock), weakref.ref(responder)]
        del world, responder
        try:
            with httpx.Client(verify=False, timeout=TIMEOUT) as http:  # noqa: S501 - its own throwaway CA
                assert http.post(f"{extension.url}{HOOK_PATH}", json={"kind": "x"}).status_code == 200
                assert http.get(f"{extension.url}/admin/calls").json()["items"]
                assert http.get(f"{extension.url}/admin/docs").status_code == 200
        finally:
            extension.stop(TIMEOUT)
        del extension
    assert _freed(refs) == 6
