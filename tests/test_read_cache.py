"""The watch-backed read cache of a controller process (harness/client/cache.py): reads of watched kinds
are answered from the watches once they are caught up, with the server's 404 text, read-your-own-writes
within a round, and round trips for everything else."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from harness.client import ApiError, Controller, Manager, Request, Result
from harness.client.cache import CachedClient
from harness.client.http import HttpClient
from harness.client.remote import settle_with_server
from harness.clock import Scheduler, VirtualClock
from harness.world.http_scene import HttpScene, WorldServer
from harness.world.world import World

NS = "default"


class _ConfigMaps(Controller):
    """Watches ConfigMaps and reads each one it is told of through the client under test."""

    name = "configmaps"

    def __init__(self, client: Any) -> None:
        super().__init__()
        self.client = client
        self.read: list[dict[str, Any]] = []

    def setup(self) -> None:
        self.watch(self.client, "v1", "ConfigMap")

    def reconcile(self, request: Request) -> Result | None:
        try:
            self.read.append(self.client.get("v1", "ConfigMap", request.name, request.namespace))
        except ApiError:
            pass
        return None


@pytest.fixture
def served() -> Iterator[tuple[HttpScene, CachedClient, Manager]]:
    server = WorldServer()
    scene = HttpScene(World(controllers=[]), server=server)
    try:
        admin = scene.client()
        admin.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": NS},
                      "data": {"k": "1"}})
        client = CachedClient(_process_client(server, "controller"))
        manager = Manager(Scheduler(VirtualClock(scene.now())))
        manager.add(_ConfigMaps(client))
        client.serve_from(manager)
        yield scene, client, manager
        for controller in list(manager.controllers):
            manager.remove(controller)  # its watches end, as the process's do when it stops
        client.close()
    finally:
        scene.close()
        server.stop()


def _process_client(server: WorldServer, user: str) -> HttpClient:
    """A client as a controller process has (its watches are not the scene's synced ones)."""
    return HttpClient(server.base_url, token=user, user=user)


def _round(client: CachedClient, manager: Manager) -> None:
    settle_with_server(manager, client.watch_streams)


def test_a_watched_kind_is_read_from_the_watch_once_it_is_caught_up(served: Any) -> None:
    _scene, client, manager = served
    assert client.get("v1", "ConfigMap", "a", NS)["data"] == {"k": "1"}
    assert (client.hits, client.misses) == (0, 1)  # not caught up yet: a round trip
    _round(client, manager)
    read = client.get("v1", "ConfigMap", "a", NS)
    assert read["data"] == {"k": "1"} and client.hits >= 1
    read["data"]["k"] = "changed"  # a copy: the cache is not changed through it
    assert client.get("v1", "ConfigMap", "a", NS)["data"] == {"k": "1"}


def test_an_object_the_watch_did_not_deliver_is_404_with_the_servers_text(served: Any) -> None:
    scene, client, manager = served
    _round(client, manager)
    with pytest.raises(ApiError) as cached:
        client.get("v1", "ConfigMap", "nope", NS)
    with pytest.raises(ApiError) as from_server:
        scene.client().get("v1", "ConfigMap", "nope", NS)
    assert cached.value.status == from_server.value.status


def test_own_writes_are_read_back_within_a_round_and_deletes_go_to_the_server(served: Any) -> None:
    _scene, client, manager = served
    _round(client, manager)
    client.patch("v1", "ConfigMap", "a", {"data": {"k": "2"}}, namespace=NS)
    hits = client.hits
    assert client.get("v1", "ConfigMap", "a", NS)["data"] == {"k": "2"}
    assert client.hits == hits + 1
    client.delete("v1", "ConfigMap", "a", NS)
    misses = client.misses
    with pytest.raises(ApiError):
        client.get("v1", "ConfigMap", "a", NS)
    assert client.misses == misses + 1


def test_writes_by_others_are_seen_after_the_next_catch_up(served: Any) -> None:
    scene, client, manager = served
    _round(client, manager)
    scene.client().patch("v1", "ConfigMap", "a", {"data": {"k": "3"}}, namespace=NS)
    _round(client, manager)
    assert client.get("v1", "ConfigMap", "a", NS)["data"] == {"k": "3"}


def test_a_kind_nobody_watches_is_a_round_trip(served: Any) -> None:
    scene, client, manager = served
    scene.client().create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": NS}})
    _round(client, manager)
    misses = client.misses
    assert client.get("v1", "Secret", "s", NS)["metadata"]["name"] == "s"
    assert client.misses == misses + 1
