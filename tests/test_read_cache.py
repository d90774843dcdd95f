"""The watch-backed read cache of a controller process (harness/client/cache.py): reads of watched kinds
are answered from the watches once they are caught up, with the server's 404 text; once the process has
sent a write, reads go to the server until the watches catch up again (so what the write changed, itself
or through the server, is read whether or not its watch event has arrived); round trips for everything
else."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

import pytest

from harness.client import ApiError, Controller, Manager, Request, Result
from harness.client.cache import CachedClient
from harness.client.http import HttpClient
from harness.client.remote import CaughtUp, catch_up, settle_with_server
from harness.clock import Scheduler, VirtualClock
from harness.targets.process import controller_kubeconfig
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


def test_after_a_write_reads_go_to_the_server_until_the_next_catch_up(served: Any) -> None:
    _scene, client, manager = served
    _round(client, manager)
    hits = client.hits
    client.get("v1", "ConfigMap", "a", NS)
    assert client.hits == hits + 1
    client.patch("v1", "ConfigMap", "a", {"data": {"k": "2"}}, namespace=NS)
    misses = client.misses
    assert client.get("v1", "ConfigMap", "a", NS)["data"] == {"k": "2"}
    assert client.misses == misses + 1
    client.delete("v1", "ConfigMap", "a", NS)
    with pytest.raises(ApiError):
        client.get("v1", "ConfigMap", "a", NS)
    assert client.misses == misses + 2
    _round(client, manager)
    hits = client.hits
    with pytest.raises(ApiError):
        client.get("v1", "ConfigMap", "a", NS)
    assert client.hits == hits + 1  # caught up again: the watch said it is gone


def test_a_refused_write_leaves_the_cache_answering(served: Any) -> None:
    _scene, client, manager = served
    _round(client, manager)
    with pytest.raises(ApiError):
        client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": NS}})
    hits = client.hits
    assert client.get("v1", "ConfigMap", "a", NS)["data"] == {"k": "1"}
    assert client.hits == hits + 1


def _finalized(scene: HttpScene, client: CachedClient, manager: Manager) -> None:
    """ConfigMap ``a`` held by a finalizer and deleted by someone else; the process caught up with that."""
    scene.client().patch("v1", "ConfigMap", "a", {"metadata": {"finalizers": ["example.com/hold"]}}, namespace=NS)
    scene.client().delete("v1", "ConfigMap", "a", NS)
    _round(client, manager)
    assert "deletionTimestamp" in client.get("v1", "ConfigMap", "a", NS)["metadata"]


def _received(client: CachedClient, manager: Manager) -> None:
    """Wait (bounded) until the process's watches have read every event the server gave them, then move
    them in, as the next step of a settle would; the cache is not told (no catch-up round)."""
    catch_up(manager.sources(), client.watch_streams)
    manager._pump()


@pytest.mark.parametrize("event", ["not yet arrived", "arrived and delivered"])
def test_removing_the_last_finalizer_is_read_as_gone_whenever_the_deletion_event_arrives(
        served: Any, event: str) -> None:
    # The race that made the cache opt-in: the write's answer is the object (finalizers emptied), the
    # server deletes it at once, and the watch's DELETED event comes on its own thread, whenever.
    scene, client, manager = served
    _finalized(scene, client, manager)
    client.patch("v1", "ConfigMap", "a", {"metadata": {"finalizers": None}}, namespace=NS)
    if event == "arrived and delivered":
        _received(client, manager)
    with pytest.raises(ApiError) as gone:
        client.get("v1", "ConfigMap", "a", NS)
    assert gone.value.status["code"] == 404


@pytest.mark.parametrize("event", ["not yet arrived", "arrived and delivered"])
def test_a_write_is_read_back_whenever_its_watch_event_arrives(served: Any, event: str) -> None:
    _scene, client, manager = served
    _round(client, manager)
    written = client.patch("v1", "ConfigMap", "a", {"data": {"k": "2"}}, namespace=NS)
    if event == "arrived and delivered":
        _received(client, manager)
    read = client.get("v1", "ConfigMap", "a", NS)
    assert read["data"] == {"k": "2"}
    assert read["metadata"]["resourceVersion"] == written["metadata"]["resourceVersion"]


def test_a_watch_counts_an_event_as_received_only_once_it_is_queued(served: Any) -> None:
    # catch_up trusts ``received``: an event counted before it is queued could be missed by the pump
    # that follows, and the cache would answer with the object before it.
    scene, client, manager = served
    _round(client, manager)
    watch = manager.sources()[0]
    seen: list[tuple[int, int]] = []

    class Recording(deque):  # type: ignore[type-arg]
        def append(self, item: Any) -> None:
            seen.append((watch.received, len(self)))
            super().append(item)

    watch._events = Recording(watch._events)
    scene.client().patch("v1", "ConfigMap", "a", {"data": {"k": "4"}}, namespace=NS)
    _received(client, manager)
    assert seen and seen[-1][0] == watch.received - 1


def test_a_round_that_writes_nothing_is_the_last_and_asks_the_server_once(served: Any) -> None:
    scene, client, manager = served
    _round(client, manager)
    scene.client().patch("v1", "ConfigMap", "a", {"data": {"k": "5"}}, namespace=NS)
    rounds = []
    settle = manager.settle

    def counted_settle() -> int:
        rounds.append(1)
        return settle()

    manager.settle = counted_settle  # type: ignore[method-assign]
    assert settle_with_server(manager, client.watch_streams) == 1  # the reconcile of "a", which only reads
    # One round: the catch-up may ask the server more than once while the patch's event is on its way
    # (how often depends on the machine's load), but no second round follows a round that wrote nothing.
    assert len(rounds) == 1
    assert manager.get("configmaps").read[-1]["data"] == {"k": "5"}


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


def test_a_read_repeated_within_a_round_is_sent_once_until_something_is_written(served: Any) -> None:
    scene, client, manager = served
    scene.client().create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": NS},
                           "data": {"k": "MQ=="}})
    _round(client, manager)
    misses = client.misses
    first = client.get("v1", "Secret", "s", NS)
    first["data"]["k"] = "changed by the controller"  # a copy: the next answer is the server's
    assert client.get("v1", "Secret", "s", NS)["data"] == {"k": "MQ=="}
    assert client.list("v1", "Secret", NS)["items"][0]["metadata"]["name"] == "s"
    assert client.list("v1", "Secret", NS)["items"][0]["data"] == {"k": "MQ=="}
    assert (client.misses - misses, client.repeats) == (2, 2)  # one GET and one list went to the server
    client.patch("v1", "Secret", "s", {"data": {"k": "Mg=="}}, namespace=NS)  # a write: ask again
    assert client.get("v1", "Secret", "s", NS)["data"] == {"k": "Mg=="}
    assert client.misses - misses == 3


def test_the_next_round_reads_again(served: Any) -> None:
    scene, client, manager = served
    scene.client().create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": NS}})
    _round(client, manager)
    assert "data" not in client.get("v1", "Secret", "s", NS)
    scene.client().patch("v1", "Secret", "s", {"data": {"k": "Mw=="}}, namespace=NS)
    _round(client, manager)
    assert client.get("v1", "Secret", "s", NS)["data"] == {"k": "Mw=="}


def test_a_failed_read_is_asked_again(served: Any) -> None:
    _scene, client, manager = served
    _round(client, manager)
    misses = client.misses
    for _ in range(2):
        with pytest.raises(ApiError) as err:
            client.get("v1", "Secret", "missing", NS)
        assert err.value.code == 404
    assert (client.misses - misses, client.repeats) == (2, 0)


def test_another_clusters_client_repeats_reads_within_the_parents_round(served: Any) -> None:
    scene, client, manager = served
    scene.client().create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": NS}})
    other = client.for_kubeconfig(controller_kubeconfig(scene.server.base_url, "controller"))
    assert isinstance(other, CachedClient)
    try:
        other.get("v1", "Secret", "s", NS)  # before the first catch-up: a round trip each time
        other.get("v1", "Secret", "s", NS)
        assert (other.misses, other.repeats) == (2, 0)
        _round(client, manager)
        other.get("v1", "Secret", "s", NS)
        other.get("v1", "Secret", "s", NS)
        assert (other.misses, other.repeats) == (3, 1)
        _round(client, manager)
        other.get("v1", "Secret", "s", NS)
        assert (other.misses, other.repeats) == (4, 1)
    finally:
        other.close()


def test_when_the_harness_says_the_world_is_unchanged_the_last_rounds_answers_stand(served: Any) -> None:
    scene, client, manager = served
    scene.client().create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": NS}})
    _round(client, manager)
    client.get("v1", "Secret", "s", NS)
    settle_with_server(manager, client.watch_streams, unchanged=True)
    misses, repeats = client.misses, client.repeats
    assert client.get("v1", "Secret", "s", NS)["metadata"]["name"] == "s"
    assert (client.misses - misses, client.repeats - repeats) == (0, 1)
    _round(client, manager)  # no hint: the world may have changed
    client.get("v1", "Secret", "s", NS)
    assert client.misses - misses == 1


def test_a_watch_event_ends_the_last_rounds_answers_whatever_the_hint(served: Any) -> None:
    scene, client, manager = served
    scene.client().create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": NS}})
    _round(client, manager)
    client.get("v1", "Secret", "s", NS)
    scene.client().patch("v1", "ConfigMap", "a", {"data": {"k": "9"}}, namespace=NS)  # an event for the watch
    settle_with_server(manager, client.watch_streams, unchanged=True)
    misses = client.misses
    client.get("v1", "Secret", "s", NS)
    assert client.misses - misses == 1


def test_a_later_round_of_the_same_settle_keeps_the_answers(served: Any) -> None:
    scene, client, manager = served
    scene.client().create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": NS}})
    _round(client, manager)
    client.get("v1", "Secret", "s", NS)
    sources = manager.sources()
    catch_up(sources, client.watch_streams)
    manager.caught_up(CaughtUp(sources, first=False))  # the next round of one settle request
    misses = client.misses
    client.get("v1", "Secret", "s", NS)
    assert (client.misses - misses, client.repeats) == (0, 1)


def test_a_watch_event_between_the_rounds_of_one_settle_ends_the_answers(served: Any) -> None:
    scene, client, manager = served
    scene.client().create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": NS}})
    _round(client, manager)
    client.get("v1", "Secret", "s", NS)
    # The world wrote while the process settled (the harness's own extension moves the world's clock when
    # told to hang): the watch's event says so.
    scene.client().patch("v1", "ConfigMap", "a", {"data": {"k": "7"}}, namespace=NS)
    sources = manager.sources()
    catch_up(sources, client.watch_streams)
    manager.caught_up(CaughtUp(sources, first=False))
    misses = client.misses
    client.get("v1", "Secret", "s", NS)
    assert client.misses - misses == 1
