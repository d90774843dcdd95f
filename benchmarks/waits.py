"""What used to wait: hanging Runtime Extensions, and a controller process's reads.

Hangs: a BeforeClusterCreate call (``timeoutSeconds: 1``) to the reference extension scripted to hang,
held on the world's virtual clock (the extension passes the deadline in virtual time and cancels the
call), against the same call answered at once (the baseline), and one call to an extension that hangs in
wall time (what a third-party extension costs: the real 1 s deadline). Discovery: ``world.settle()`` of a
new ExtensionConfig whose discovery hangs (10 s virtual deadline), against one whose discovery answers.

Reads: a GET of a watched object by a controller process's client as a round trip to the served world,
against the same GET served from its watch-backed cache (harness/client/cache.py), the baseline.
``python -m benchmarks.waits``.
"""

from __future__ import annotations

import time
from typing import Any

from benchmarks.timing import best_of, report
from controllers.runtime.client import RuntimeClient, RuntimeSDKError
from harness.client import Controller, Manager, Request, Result
from harness.client.cache import CachedClient
from harness.client.http import HttpClient
from harness.client.remote import settle_with_server
from harness.clock import Scheduler, VirtualClock
from harness.world.extension import ExtensionServer, HookResponder
from harness.world.http_scene import HttpScene, WorldServer
from harness.world.world import World

RUNTIME = "runtime.cluster.x-k8s.io/v1alpha1"
NS = "default"
CALLS = 30
READS = 500


def _cluster() -> dict[str, Any]:
    return {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "metadata": {"name": "c1", "namespace": NS}}


def _register(world: World, name: str, server: ExtensionServer) -> None:
    world.client().create({"apiVersion": RUNTIME, "kind": "ExtensionConfig", "metadata": {"name": name},
                           "spec": {"clientConfig": {"url": server.url, "caBundle": server.ca_bundle}}})


def _call(client: RuntimeClient) -> None:
    try:
        client.call_all("BeforeClusterCreate", _cluster(), {"cluster": _cluster()})
    except RuntimeSDKError:
        pass  # a hang under the failure policy Fail: what is measured is how long it took


def hangs() -> None:
    """A hanging hook call on the virtual clock, against an answered one and a wall-clock hang."""
    world = World(audit=False)
    virtual = ExtensionServer(HookResponder(timeout_seconds=1), clock=world.clock).start()
    walled = ExtensionServer(HookResponder(timeout_seconds=1, hang_seconds=3.0)).start()
    try:
        _register(world, "virtual", virtual)
        world.settle()
        client = RuntimeClient(world.client())
        answered = best_of(lambda: _call(client), repeat=3, number=CALLS)
        virtual.responder.script("BeforeClusterCreate", behaviour="hang")
        before = world.now()
        held = best_of(lambda: _call(client), repeat=3, number=CALLS)
        passed = (world.now() - before) / (3 * CALLS)
        world.client().delete(RUNTIME, "ExtensionConfig", "virtual")
        _register(world, "walled", walled)
        world.settle()
        walled.responder.script("BeforeClusterCreate", behaviour="hang")
        start = time.perf_counter()
        _call(client)
        wall = time.perf_counter() - start
        report("hook call answered at once", answered * 1000, "ms")
        report(f"hook call that hangs, on the virtual clock ({passed:.0f} s virtual)", held * 1000, "ms",
               answered * 1000, "an answered call")
        report("hook call that hangs, wall-clock deadline (third party)", wall * 1000, "ms", answered * 1000,
               "an answered call")
    finally:
        virtual.stop()
        walled.stop()


def _discovery_settle(hang: bool) -> tuple[float, float]:
    world = World(audit=False)
    server = ExtensionServer(HookResponder(timeout_seconds=1), clock=world.clock).start()
    try:
        if hang:
            server.responder.set_discovery_behaviour("hang")
        before = world.now()
        _register(world, "ext", server)
        start = time.perf_counter()
        world.settle()
        return time.perf_counter() - start, world.now() - before
    finally:
        server.stop()


def discovery() -> None:
    """Settling a new ExtensionConfig whose discovery hangs, against one whose discovery answers."""
    answered = min(_discovery_settle(False)[0] for _ in range(3))
    runs = [_discovery_settle(True) for _ in range(3)]
    held = min(seconds for seconds, _ in runs)
    report("settle a new ExtensionConfig, discovery answered", answered * 1000, "ms")
    report(f"settle a new ExtensionConfig, discovery hangs ({runs[0][1]:.0f} s virtual)", held * 1000, "ms",
           answered * 1000, "discovery answered")


def _process_client(server: WorldServer, user: str) -> HttpClient:
    """A client as a controller process has (its watches are not the scene's synced ones)."""
    return HttpClient(server.base_url, token=user, user=user)


class _Watcher(Controller):
    name = "watcher"

    def __init__(self, client: Any) -> None:
        super().__init__()
        self.client = client

    def setup(self) -> None:
        self.watch(self.client, "v1", "ConfigMap")

    def reconcile(self, request: Request) -> Result | None:
        return None


def reads() -> None:
    """A GET served by the watch-backed cache, against the same GET as a round trip."""
    server = WorldServer()
    scene = HttpScene(World(controllers=[]), server=server)
    try:
        scene.client().create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": NS},
                               "data": {"k": "v"}})
        plain = scene.client(user="plain")
        cached = CachedClient(_process_client(server, "cached"))
        manager = Manager(Scheduler(VirtualClock(scene.now())))
        manager.add(_Watcher(cached))
        cached.serve_from(manager)
        settle_with_server(manager, cached.watch_streams)
        trip = best_of(lambda: plain.get("v1", "ConfigMap", "a", NS), repeat=3, number=READS)
        hit = best_of(lambda: cached.get("v1", "ConfigMap", "a", NS), repeat=3, number=READS)
        report("GET of a watched ConfigMap, from the read cache", hit * 1e6, "µs")
        report("GET of a watched ConfigMap, round trip", trip * 1e6, "µs", hit * 1e6, "the read cache")
        for controller in list(manager.controllers):
            manager.remove(controller)  # its watches end, as the process's do when it stops
        cached.close()
    finally:
        scene.close()
        server.stop()


def main() -> None:
    print("== waits: hangs on the virtual clock, reads from watches ==", flush=True)
    hangs()
    discovery()
    reads()


if __name__ == "__main__":
    main()
