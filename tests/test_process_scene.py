"""The reference controllers as a separate process, settled together with a served world
(harness/targets/process.py, the ``--control stdio`` protocol of harness/client/remote.py)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import pytest

from harness.client import ApiError, Controller, Manager, Request, Result
from harness.client.remote import run_controlled
from harness.clock import EPOCH, Scheduler, VirtualClock
from harness.kube.names.capi import (
    CLUSTER_API_VERSION,
    INFRASTRUCTURE_API_VERSION,
    MACHINES_RESOURCE,
)
from harness.kube.names.core import DEFAULT_NAMESPACE
from harness.targets.process import CONTROLLER_USER, ControllerProcess, ControllerProcessError, ProcessScene
from harness.world.http_scene import WorldServer
from harness.world.providers.objects import fake_machine
from harness.world.scene import InProcessScene, Scene
from harness.world.world import World

PRE_DRAIN_HOOK = "pre-drain.delete.hook.machine.cluster.x-k8s.io/hic"


@pytest.fixture(scope="module")
def server() -> Iterator[WorldServer]:
    served = WorldServer()
    yield served
    served.stop()


@pytest.fixture
def scene(server: WorldServer) -> Iterator[ProcessScene]:
    with ProcessScene(server=server, only=["machine"]) as process_scene:
        yield process_scene


def _create_machine(scene: Scene, name: str, *, labels: dict[str, str] | None = None,
                    annotations: dict[str, str] | None = None) -> None:
    client = scene.client()
    for obj in fake_machine(name, "c1", labels=labels, annotations=annotations):
        client.create(obj)


def _machine(scene: Scene, *, annotations: dict[str, str] | None = None) -> None:
    """A Cluster with a running control plane Machine ``cp-0`` (so that a worker's Node may be
    deleted, and its hooks are waited for), and a running worker Machine ``m1``."""
    scene.client().create(
        {
            "apiVersion": CLUSTER_API_VERSION,
            "kind": "Cluster",
            "metadata": {"name": "c1", "namespace": DEFAULT_NAMESPACE},
        }
    )
    _create_machine(scene, "cp-0", labels={"cluster.x-k8s.io/control-plane": ""})
    _create_machine(scene, "m1", annotations=annotations)
    scene.advance(60)


def _exists(scene: Scene, kind: str, api_version: str = CLUSTER_API_VERSION) -> bool:
    try:
        scene.client().get(api_version, kind, "m1", DEFAULT_NAMESPACE)
    except ApiError as err:
        assert err.code == 404
        return False
    return True


def test_a_world_that_runs_reference_controllers_itself_is_refused(server: WorldServer) -> None:
    with pytest.raises(ValueError, match="machine"):
        ProcessScene(World(), server=server)


def test_the_process_runs_the_machine_controller_and_it_writes_as_its_own_user(scene: ProcessScene) -> None:
    _machine(scene)
    machine = scene.client().get(CLUSTER_API_VERSION, "Machine", "m1", DEFAULT_NAMESPACE)
    assert "machine.cluster.x-k8s.io" in machine["metadata"]["finalizers"]
    assert machine["status"]["nodeRef"]["name"] == "m1"
    writers = {r["user"] for r in scene.audit(resource=MACHINES_RESOURCE, name="m1") if r["verb"] != "create"}
    assert CONTROLLER_USER in writers


def test_a_deletion_runs_to_the_end(scene: ProcessScene) -> None:
    _machine(scene)
    scene.client().delete(CLUSTER_API_VERSION, "Machine", "m1", DEFAULT_NAMESPACE)
    scene.advance(60)
    assert not _exists(scene, "Machine")
    assert not _exists(scene, "FakeMachine", INFRASTRUCTURE_API_VERSION)


def test_a_hook_holds_the_deletion_until_removed_and_nothing_moves_between_settles(scene: ProcessScene) -> None:
    _machine(scene, annotations={PRE_DRAIN_HOOK: ""})
    scene.client().delete(CLUSTER_API_VERSION, "Machine", "m1", DEFAULT_NAMESPACE)
    scene.advance(3 * 86400)
    held = scene.audit_size()
    scene.advance(0)
    assert scene.audit_size() == held  # settled: the process writes nothing unless something changes
    assert _exists(scene, "Machine") and _exists(scene, "FakeMachine", INFRASTRUCTURE_API_VERSION)
    scene.client().patch(
        CLUSTER_API_VERSION,
        "Machine",
        "m1",
        {"metadata": {"annotations": {PRE_DRAIN_HOOK: None}}},
        namespace=DEFAULT_NAMESPACE,
    )
    scene.advance(60)
    assert not _exists(scene, "Machine")


def _deletion_with_a_slow_infrastructure(scene: Scene) -> list[tuple[str, str, str, str]]:
    """Delete ``m1`` whose infrastructure takes 90 s to go; the Machine's writes (time, verb,
    subresource, name), as the audit trail has them."""
    _machine(scene)
    delay = {"metadata": {"annotations": {"harness.test/deletion-delay": "90s"}}}
    scene.client().patch(INFRASTRUCTURE_API_VERSION, "FakeMachine", "m1", delay, namespace=DEFAULT_NAMESPACE)
    mark = scene.audit_size()
    scene.client().delete(CLUSTER_API_VERSION, "Machine", "m1", DEFAULT_NAMESPACE)
    scene.advance(89)
    assert _exists(scene, "Machine")
    scene.advance(60)
    assert not _exists(scene, "Machine")
    return [(r["time"], r["verb"], r["subresource"], r["name"])
            for r in scene.audit(since=mark, resource=MACHINES_RESOURCE)]


def test_the_process_sees_each_write_and_timer_at_the_virtual_instant_an_in_process_controller_does(
    scene: ProcessScene,
) -> None:
    in_process = _deletion_with_a_slow_infrastructure(InProcessScene(World()))
    as_process = _deletion_with_a_slow_infrastructure(scene)
    assert as_process == in_process
    assert in_process[-1][0] >= "2026-01-01T00:02:30Z"  # the infrastructure's 90 s were waited for


def test_closing_the_scene_ends_the_process_and_its_streams(server: WorldServer) -> None:
    scene = ProcessScene(server=server, only=["machine"])
    scene.settle()
    process = scene.process._process
    scene.close()  # HttpScene.close checks that the server ended every stream, the process's too
    assert process.poll() is not None


def test_a_process_that_cannot_reach_the_server_fails_clearly() -> None:
    process = ControllerProcess("http://127.0.0.1:9", only=["machine"])
    try:
        with pytest.raises(ControllerProcessError, match="ConnectionError"):
            process.settle(EPOCH)
    finally:
        process.stop()


class _Counter(Controller):
    """Counts its reconciles and asks to be reconciled again 30 s later."""

    name = "counter"

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[float] = []

    def reconcile(self, request: Request) -> Result | None:
        self.seen.append(self.now())
        return Result(requeue_after=30)


def _protocol(lines: list[dict[str, Any] | str]) -> tuple[list[dict[str, Any]], _Counter, list[float]]:
    counter = _Counter()
    connected: list[float] = []

    def connect(now: float) -> tuple[Manager, Any]:
        connected.append(now)
        manager = Manager(Scheduler(VirtualClock(now)))
        manager.add(counter)
        counter.enqueue(Request("", "x"))
        return manager, lambda: {}

    requests = io.StringIO("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    answers = io.StringIO()
    run_controlled(["counter"], connect, requests, answers)
    return [json.loads(line) for line in answers.getvalue().splitlines()], counter, connected


def test_the_control_protocol_settles_at_the_instant_asked_and_reports_the_next_timer() -> None:
    answers, counter, connected = _protocol([{"op": "settle", "now": EPOCH}, {"op": "settle", "now": EPOCH + 30},
                                             {"op": "stop"}, {"op": "settle", "now": EPOCH + 60}])
    assert answers[0] == {"ready": True, "controllers": ["counter"]}
    assert answers[1]["nextDue"] == EPOCH + 30 and answers[1]["steps"] >= 1
    assert answers[2]["nextDue"] == EPOCH + 60
    assert answers[3] == {"stopped": True}
    assert len(answers) == 4  # nothing is read after stop
    assert counter.seen == [EPOCH, EPOCH + 30]
    assert connected == [EPOCH]  # at the first settle, once


def test_the_control_protocol_answers_unreadable_requests_with_an_error_and_goes_on() -> None:
    answers, _, connected = _protocol(["not json", {"op": "dance"}, {"op": "settle"}, {"op": "settle", "now": EPOCH}])
    assert "unreadable request" in answers[1]["error"]
    assert answers[2] == {"error": "unknown op 'dance'"}
    assert "KeyError" in answers[3]["error"]  # a settle needs the instant
    assert answers[4]["nextDue"] == EPOCH + 30 and connected == [EPOCH]
