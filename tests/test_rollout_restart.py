"""Restarting the reference controllers (``Scene.restart_controllers``): in-process, through the admin API
(``POST /harness/v1/controllers/restart``) and as a killed and replaced controller process."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_http_fixtures import Served, serving

from harness.client import Request
from harness.kube.errors import StatusError
from harness.targets.process import ProcessScene
from harness.world.http_scene import WorldServer
from harness.world.scene import InProcessScene
from harness.world.world import World

RESTART_PATH = "/harness/v1/controllers/restart"
SIMULATORS = ["replicaset", "scheduler", "kubelet", "garbage-collector", "namespace"]


def _deployment(name: str, replicas: int = 1) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}]}}}}


def _replica_sets(client: Any, owner: str) -> list[dict[str, Any]]:
    return [rs for rs in client.list("apps/v1", "ReplicaSet", "default")["items"]
            if any(ref.get("name") == owner for ref in rs["metadata"].get("ownerReferences") or [])]


def test_a_restarted_controller_is_a_new_instance_in_the_same_place_whose_old_watches_ended() -> None:
    world = World(simulators=SIMULATORS, controllers=["machine", "deployment", "statefulset"])
    old = world.controller("deployment")
    old_streams = [s for s in world.manager.sources() if s in _streams_of(world, old)]
    order = [c.name for c in world.manager.controllers]

    assert world.restart_controllers(["deployment"]) == ["deployment"]

    fresh = world.controller("deployment")
    assert fresh is not old and fresh.manager is world.manager
    assert [c.name for c in world.manager.controllers] == order
    assert old not in world.manager.controllers and old.enabled is False
    # It reads none of its watches any more: one it read alone ended, one the world's simulators share with
    # it (one watch per kind, harness/client/runtime.py) goes on for them alone.
    assert old_streams and not _streams_of(world, old)
    assert all(s.closed != (s in world.manager.sources()) for s in old_streams)
    assert world.controller("statefulset") is not None  # the others are untouched
    assert _streams_of(world, fresh)


def _streams_of(world: World, controller: Any) -> list[Any]:
    return [source.stream for source in world.manager._sources if source.controller is controller]


def test_a_restarted_controller_starts_from_a_fresh_list_of_what_exists() -> None:
    world = World(simulators=SIMULATORS, controllers=["deployment"])
    client = world.client()
    client.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    client.create(_deployment("web"))
    world.settle()
    world.restart_controllers()
    fresh = world.controller("deployment")
    seen: list[Request] = []
    reconcile = fresh.reconcile

    def recording(request: Request) -> Any:
        seen.append(request)
        return reconcile(request)

    fresh.reconcile = recording
    world.settle()
    assert Request("default", "web") in seen
    assert len(_replica_sets(client, "web")) == 1  # nothing created twice


def test_a_controller_switched_off_stays_off_across_a_restart() -> None:
    world = World(simulators=SIMULATORS, controllers=["deployment"])
    world.set_enabled("deployment", False)
    world.restart_controllers(["deployment"])
    world.client().create(_deployment("web"))
    world.settle()
    assert world.controller("deployment").enabled is False
    assert _replica_sets(world.client(), "web") == []


def test_restarting_a_controller_the_world_does_not_run_is_a_key_error_and_restarts_nothing() -> None:
    world = World(simulators=SIMULATORS, controllers=["deployment"])
    before = world.controller("deployment")
    with pytest.raises(KeyError, match="'kubelet'"):
        InProcessScene(world).restart_controllers(["deployment", "kubelet"])
    assert world.controller("deployment") is before


# -- the admin API -------------------------------------------------------------------------------------


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    yield from serving(tmp_path, simulators=["namespace"])


def test_the_admin_api_restarts_the_named_controllers_or_all_of_them(served: Served) -> None:
    before = {name: served.world.controller(name) for name in served.world.controller_names}
    with served.http() as http:
        one = http.post(RESTART_PATH, json={"names": ["deployment"]})
        middle = {name: served.world.controller(name) for name in served.world.controller_names}
        every = http.post(RESTART_PATH, json={})
    assert one.status_code == 200 and one.json() == {"restarted": ["deployment"]}
    assert middle["deployment"] is not before["deployment"] and middle["machine"] is before["machine"]
    assert every.status_code == 200 and every.json()["restarted"] == served.world.controller_names
    assert all(served.world.controller(name) is not middle[name] for name in served.world.controller_names)


@pytest.mark.parametrize("body", [{"names": "deployment"}, {"names": [1]}, {"names": 3}])
def test_restart_names_that_are_not_a_list_of_strings_are_400(served: Served, body: dict[str, Any]) -> None:
    with served.http() as http:
        answer = http.post(RESTART_PATH, json=body)
    assert answer.status_code == 400 and answer.json()["kind"] == "Status"
    assert answer.json()["reason"] == "BadRequest" and "names" in answer.json()["message"]


def test_restarting_an_unknown_controller_is_404_naming_it(served: Served) -> None:
    before = served.world.controller("deployment")
    with served.http() as http:
        answer = http.post(RESTART_PATH, json={"names": ["deployment", "kubelet"]})
        wrong_method = http.get(RESTART_PATH)
        not_an_object = http.post(RESTART_PATH, json=["deployment"])
    assert answer.status_code == 404 and answer.json()["reason"] == "NotFound"
    assert 'reference controller "kubelet" does not run in this world' in answer.json()["message"]
    assert served.world.controller("deployment") is before  # nothing restarted
    assert wrong_method.status_code == 405 and not_an_object.status_code == 400


# -- the controller process -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server() -> Iterator[WorldServer]:
    running = WorldServer()
    yield running
    running.stop()


def test_a_process_restart_kills_the_process_and_a_new_one_catches_up_from_a_fresh_list(server: WorldServer) -> None:
    with ProcessScene(World(simulators=SIMULATORS, controllers=[]), server=server, only=["deployment"]) as scene:
        client = scene.client()
        client.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
        client.create(_deployment("web"))
        scene.settle()
        old = scene.process
        scene.restart_controllers(["deployment"])
        # Written while no controller runs: the new process learns of it only from its first list.
        client.create(_deployment("api"))
        scene.settle()
        assert scene.process is not old
        assert old._process.returncode == -signal.SIGKILL  # killed, not asked to stop
        assert len(_replica_sets(client, "web")) == 1 and len(_replica_sets(client, "api")) == 1
        with pytest.raises(StatusError, match='reference controller "machine" does not run'):
            scene.restart_controllers(["machine"])  # neither in the process nor in the world
        assert scene.process is not old and scene.process.controllers == ["deployment"]
