"""The HTTP scene (harness/world/http_scene.py) and the admin endpoints it drives: the same
scene operations as in-process, watches that catch up with the server, nothing left running."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import httpx
import pytest

from harness.apiserver.http import bind
from harness.client import ApiError
from harness.world.http_scene import HttpScene, WorldServer
from harness.world.scene import InProcessScene
from harness.world.world import World

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
THREAD_PREFIXES = ("uvicorn-", "watch ", "raw watch ")


def _configmap(name: str, namespace: str = "default") -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}}


def _ours() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith(THREAD_PREFIXES)]


@pytest.fixture(scope="module")
def server() -> Iterator[WorldServer]:
    running = WorldServer()
    yield running
    running.stop()


@pytest.fixture
def scene(server: WorldServer) -> Iterator[HttpScene]:
    with HttpScene(World(simulators=["namespace", "kubelet"]), server=server) as opened:
        yield opened


def test_a_scene_that_started_its_server_leaves_no_server_or_watch_thread_behind() -> None:
    before = _ours()
    with HttpScene(World(simulators=[])) as scene:
        watch = scene.client().watch("v1", "ConfigMap", "default")
        scene.client().create(_configmap("a"))
        assert [(t, o["metadata"]["name"]) for t, o in watch.drain()] == [("ADDED", "a")]
    deadline = threading.Event()
    for _ in range(250):  # threads end right after their sockets close; bounded wait
        if _ours() == before:
            break
        deadline.wait(0.02)
    assert _ours() == before


def test_a_watch_drains_every_event_the_server_sent_before_it_answers(scene: HttpScene) -> None:
    client = scene.client()
    watch = client.watch("v1", "ConfigMap", "default", resource_version="0")
    for i in range(20):
        client.create(_configmap(f"c{i}"))
    names = [o["metadata"]["name"] for _, o in watch.drain()]
    assert names == [f"c{i}" for i in range(20)]
    assert watch.drain() == [] and not watch.closed


def test_a_watch_the_server_ended_is_closed_once_drained(scene: HttpScene) -> None:
    client = scene.client()
    client.create(_configmap("a"))
    old = client.list("v1", "ConfigMap", "default")["metadata"]["resourceVersion"]
    client.create(_configmap("b"))
    scene.compact()
    watch = client.watch("v1", "ConfigMap", "default", resource_version=old)
    events = watch.drain()
    assert [(t, o.get("code"), o.get("reason")) for t, o in events] == [("ERROR", 410, "Expired")]
    assert watch.closed


def test_the_audit_over_http_is_the_audit_in_process() -> None:
    def act(scene: InProcessScene | HttpScene) -> list[dict[str, object]]:
        mark = scene.audit_size()
        client = scene.client(user="alice")
        client.create(_configmap("a"))
        client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}})
        client.delete("v1", "ConfigMap", "a", "default")
        scene.settle()
        keep = ("seq", "verb", "resource", "subresource", "namespace", "name", "user", "cluster")
        cluster_scoped = [r["name"] for r in scene.audit(since=mark, name="a", namespace="")]
        records = [{k: r[k] for k in keep} | {"gone": r["new"] is None, "had": r["old"] is not None}
                   for r in scene.audit(since=mark)]
        return [*records, {"cluster-scoped": cluster_scoped, "size": scene.audit_size() - mark}]

    in_process = act(InProcessScene(World(simulators=[])))
    with HttpScene(World(simulators=[])) as scene:
        over_http = act(scene)
    assert over_http == in_process
    assert [r.get("user") for r in over_http[:3]] == ["alice", "alice", "alice"]
    assert over_http[-1]["cluster-scoped"] == ["a"]


def test_time_moves_only_when_the_scene_advances_it(scene: HttpScene) -> None:
    start = scene.now()
    scene.settle()
    assert scene.now() == start
    scene.advance(90)
    assert scene.now() == start + 90
    assert float(httpx.get(scene.server.base_url + "/harness/v1/clock").json()["unix"]) == start + 90


def test_a_switched_off_simulator_leaves_its_work_until_switched_on(scene: HttpScene) -> None:
    client = scene.client()
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}})
    scene.set_enabled("namespace", False)
    client.delete("v1", "Namespace", "shop")
    scene.advance(60)
    assert client.get("v1", "Namespace", "shop")["status"]["phase"] == "Terminating"
    scene.set_enabled("namespace", True)
    scene.settle()
    with pytest.raises(ApiError) as gone:
        client.get("v1", "Namespace", "shop")
    assert gone.value.code == 404


def test_knobs_and_calls_reach_the_simulator(scene: HttpScene) -> None:
    scene.configure("kubelet", ready_delay=5.0)
    scene.call("kubelet", "set_node_health", "n1", "Unknown")
    assert scene.call("kubelet", "node_health", "n1") == "Unknown"
    assert scene.call("kubelet", "node_health", "n2") == "True"


@pytest.mark.parametrize(
    "action,code",
    [
        (lambda s: s.configure("no-such-simulator", speed=1), 404),
        (lambda s: s.configure("kubelet", no_such_knob=1), 400),
        (lambda s: s.configure("kubelet", setup=1), 400),
        (lambda s: s.call("kubelet", "_pods"), 400),
        (lambda s: s.call("kubelet", "set_node_health", "n1", "Sometimes"), 400),
        (lambda s: s.set_enabled("kubelet", False, cluster="ns/none"), 404),
        (lambda s: s.compact("ns/none"), 404),
        (lambda s: s.add_cluster("no-namespace"), 400),
    ],
    ids=["unknown simulator", "unknown knob", "method as knob", "private method", "refused argument",
         "unknown cluster", "compact unknown cluster", "cluster name without namespace"],
)
def test_the_admin_api_refuses_what_the_world_does_not_have(scene: HttpScene, action: object, code: int) -> None:
    with pytest.raises(ApiError) as refused:
        action(scene)  # type: ignore[operator]
    assert refused.value.code == code and refused.value.status["kind"] == "Status"


def test_a_workload_cluster_added_over_http_is_served_at_its_own_path(scene: HttpScene) -> None:
    scene.add_cluster("fleet/east")
    scene.client("fleet/east").create(_configmap("a"))
    [record] = scene.audit(cluster="fleet/east", name="a")
    assert record["verb"] == "create"
    with pytest.raises(ApiError) as missing:
        scene.client().get("v1", "ConfigMap", "a", "default")
    assert missing.value.code == 404


def test_a_watch_stream_is_named_by_its_audit_id_and_the_admin_api_counts_its_events(scene: HttpScene) -> None:
    scene.client().create(_configmap("a"))
    http = scene.http()
    with http.stream("GET", CONFIGMAPS, params={"watch": "1"}, headers={"Audit-ID": "tck-1"}) as response:
        assert response.headers["Audit-Id"] == "tck-1"
        lines = response.iter_lines()  # kept: a dropped half-read iterator closes the connection
        next(lines)
        streams = {s["auditID"]: s for s in httpx.get(scene.server.base_url + "/harness/v1/watches").json()["items"]}
    assert streams["tck-1"] == {"auditID": "tck-1", "events": 1, "written": 1, "ended": False,
                                 "user": "admin", "resource": "configmaps"}


def test_bound_sockets_say_they_are_tcp_so_asyncio_turns_nagle_off() -> None:
    # asyncio sets TCP_NODELAY only on sockets whose proto is TCP; without it every keep-alive
    # response waits for a delayed ACK.
    sock = bind("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
    finally:
        sock.close()


def _fault_scenes(server: WorldServer) -> Iterator[tuple[str, object]]:
    yield "in-process", InProcessScene(World(simulators=[]))
    with HttpScene(World(simulators=[]), server=server) as over_http:
        yield "http", over_http


def test_fault_rules_are_added_read_and_cleared_through_the_scene_whatever_its_transport(
    server: WorldServer,
) -> None:
    for transport, scene in _fault_scenes(server):
        client = scene.client()  # type: ignore[attr-defined]
        scene.add_fault({"fault": "Conflict", "verbs": ["create"], "resource": "configmaps", "count": 1})  # type: ignore[attr-defined]
        with pytest.raises(ApiError) as info:
            client.create(_configmap("a"))
        assert info.value.code == 409, transport
        faults = scene.faults()  # type: ignore[attr-defined]
        assert [r["fault"] for r in faults["items"]] == ["Conflict"], transport
        assert len(faults["injected"]) == 1, transport
        scene.clear_faults()  # type: ignore[attr-defined]
        assert scene.faults() == {"items": [], "injected": []}, transport  # type: ignore[attr-defined]
        client.create(_configmap("a"))


def test_an_unusable_fault_rule_is_a_bad_request_whatever_the_transport(server: WorldServer) -> None:
    for transport, scene in _fault_scenes(server):
        with pytest.raises(ApiError) as info:
            scene.add_fault({"fault": "NoSuchFault"})  # type: ignore[attr-defined]
        assert info.value.code == 400, transport
