"""One shared watch per kind (harness/client/runtime.py): sources of one manager that would open the identical
in-process watch read one server watch, as kube-controller-manager's controllers share one informer. Each
source still gets the events its own watch would have given, in the same order and at the same pumps; one
that joins late first gets the watch's current state as ADDED events; one that leaves leaves the watch to
the others. The randomized and World tests compare a manager that shares against one that does not."""

from __future__ import annotations

import random
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_http_fixtures import Served, serving

from benchmarks import machine as bench
from harness.apiserver.clusters import MANAGEMENT, ClusterSet
from harness.client import runtime
from harness.client.http import HttpClient
from harness.client.inprocess import InProcessClient
from harness.client.runtime import Controller, Manager, Request
from harness.clock import Scheduler, VirtualClock
from harness.kube.errors import StatusError
from harness.world.world import World

# uids, Events' name suffixes, a Node's machine and boot IDs, container IDs: random in every world.
RANDOM = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
                    r"|(?<![0-9a-f])[0-9a-f]{16,}(?![0-9a-f])")
Spec = tuple[str, str | None, str | None]  # kind, namespace, label selector


class _Logger(Controller):
    """Logs what its mappers see and what it reconciles. ``writes``: a ConfigMap whose name ends in ``-w``
    arriving makes its mapper create a Secret; ``opens``: a MODIFIED event makes its mapper open that watch
    (joining a shared one while a pump runs)."""

    def __init__(self, name: str, client: InProcessClient, specs: list[Spec], log: list[str], *,
                 writes: bool = False, opens: Spec | None = None) -> None:
        super().__init__()
        self.name = name
        self.client = client
        self.specs = specs
        self.log = log
        self.writes = writes
        self.opens = opens
        self.mappers = {spec: self._mapper(spec) for spec in [*specs, *([opens] if opens else [])]}

    def setup(self) -> None:
        for spec in self.specs:
            self._watch(spec)

    def _watch(self, spec: Spec) -> None:
        kind, namespace, labels = spec
        self.watch(self.client, "v1", kind, self.mappers[spec], namespace=namespace, label_selector=labels)

    def _mapper(self, spec: Spec):  # type: ignore[no-untyped-def]
        def mapper(event: str, obj: dict[str, Any]) -> Iterable[Request]:
            meta = obj["metadata"]
            self.log.append(f"{self.name}:{spec}:{event}:{meta['namespace']}/{meta['name']}@{meta['resourceVersion']}")
            if self.writes and spec[0] == "ConfigMap" and event == "ADDED" and meta["name"].endswith("-w"):
                try:
                    self.client.create({"apiVersion": "v1", "kind": "Secret", "metadata": {
                        "name": f"{meta['name']}-{self.name}", "namespace": meta["namespace"],
                        "labels": {"tier": "web"}}})
                except StatusError as err:
                    self.log.append(f"{self.name}: {err.status['reason']}")
            if self.opens is not None and event == "MODIFIED":
                self._watch(self.opens)
            return (Request.of(obj),)

        return mapper

    def reconcile(self, request: Request) -> None:
        self.log.append(f"{self.name}:reconcile:{request.namespace}/{request.name}")


KINDS = ("ConfigMap", "Secret")
SPECS: list[Spec] = [(kind, namespace, labels) for kind in KINDS for namespace in (None, "a")
                     for labels in (None, "tier=web")]


def _operations(seed: int) -> list[tuple[Any, ...]]:
    """A random run: writes, settles, controllers coming and going, ConfigMap watches the server ends."""
    rng = random.Random(seed)
    ops: list[tuple[Any, ...]] = []
    for n in range(4):
        ops.append(("add", f"c{n}", rng.sample(SPECS, rng.randint(1, 4)), rng.random() < 0.5,
                    rng.choice([None, *SPECS])))
    names = [f"o{i}" + ("-w" if i % 3 == 0 else "") for i in range(8)]
    for step in range(70):
        roll = rng.random()
        if roll < 0.35:
            ops.append(("create", rng.choice(KINDS), rng.choice(("a", "b")), rng.choice(names),
                        rng.choice(("web", "db"))))
        elif roll < 0.55:
            ops.append(("relabel", rng.choice(KINDS), rng.choice(("a", "b")), rng.choice(names),
                        rng.choice(("web", "db"))))
        elif roll < 0.65:
            ops.append(("delete", rng.choice(KINDS), rng.choice(("a", "b")), rng.choice(names)))
        elif roll < 0.85:
            ops.append(("settle",))
        elif roll < 0.91:
            ops.append(("add", f"late{step}", rng.sample(SPECS, rng.randint(1, 3)), rng.random() < 0.3, None))
        elif roll < 0.95:
            ops.append(("remove", rng.randrange(100)))
        else:
            ops.append(("end-configmap-watches",))
    ops.append(("settle",))
    return ops


def _run(ops: list[tuple[Any, ...]], share: bool) -> tuple[list[str], int]:
    clusters = ClusterSet(VirtualClock())
    admin = InProcessClient(clusters, MANAGEMENT)
    manager = Manager(Scheduler(clusters.clock), share_watches=share)
    for namespace in ("a", "b"):
        admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    log: list[str] = []
    for op in ops:
        what = op[0]
        try:
            if what == "add":
                _, name, specs, writes, opens = op
                manager.add(_Logger(name, InProcessClient(clusters, MANAGEMENT, f"user-{name}"), specs, log,
                                    writes=writes, opens=opens))
            elif what == "create":
                _, kind, namespace, name, tier = op
                admin.create({"apiVersion": "v1", "kind": kind,
                              "metadata": {"name": name, "namespace": namespace, "labels": {"tier": tier}}})
            elif what == "relabel":
                _, kind, namespace, name, tier = op
                admin.patch("v1", kind, name, {"metadata": {"labels": {"tier": tier}}}, namespace=namespace,
                            patch_type="application/merge-patch+json")
            elif what == "delete":
                _, kind, namespace, name = op
                admin.delete("v1", kind, name, namespace)
            elif what == "settle":
                manager.settle()
            elif what == "remove" and manager.controllers:
                manager.remove(manager.controllers[op[1] % len(manager.controllers)])
            elif what == "end-configmap-watches":
                # The server ends every watch of ConfigMaps (in-process, only a test can): each is re-established
                # by a list. Only the mappers' Secrets are written while that happens, so every source's list
                # sees the same ConfigMaps, shared or not.
                for source in manager._sources:
                    if source.key[2] == "ConfigMap":
                        source.stream.in_process_watch.stop()
        except StatusError as err:
            log.append(f"{what}: {err.status['reason']}")
    return log, clusters.management.store.watcher_count()


@pytest.mark.parametrize("seed", range(40))
def test_shared_watches_deliver_what_a_watch_of_each_source_would(seed: int) -> None:
    ops = _operations(seed)
    shared_log, shared_watchers = _run(ops, share=True)
    own_log, own_watchers = _run(ops, share=False)
    assert shared_log == own_log
    assert any(":reconcile:" in line for line in shared_log)
    assert shared_watchers <= own_watchers


def _client(clusters: ClusterSet, user: str) -> InProcessClient:
    return InProcessClient(clusters, MANAGEMENT, user)


def _configmap(name: str, namespace: str = "default") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}}


def test_one_server_watch_serves_every_source_that_would_open_the_same_one() -> None:
    clusters = ClusterSet(VirtualClock())
    manager = Manager(Scheduler(clusters.clock))
    log: list[str] = []
    for name in ("first", "second", "third"):
        manager.add(_Logger(name, _client(clusters, name), [("ConfigMap", None, None)], log))
    manager.add(_Logger("selective", _client(clusters, "selective"), [("ConfigMap", None, "tier=web")], log))
    store = clusters.management.store
    assert store.watcher_count() == 2  # one per distinct watch, whoever asked
    assert len(manager.sources()) == 2
    _client(clusters, "admin").create(_configmap("one"))
    manager.settle()
    assert [line.split(":")[0] for line in log if ":ADDED:" in line] == ["first", "second", "third"]


def test_a_late_source_starts_with_what_exists_as_a_watch_of_its_own_would() -> None:
    clusters = ClusterSet(VirtualClock())
    admin = _client(clusters, "admin")
    manager = Manager(Scheduler(clusters.clock))
    log: list[str] = []
    manager.add(_Logger("early", _client(clusters, "early"), [("ConfigMap", None, None)], log))
    admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    for name, namespace in (("b", "default"), ("a", "other"), ("a", "default"), ("gone", "default")):
        admin.create(_configmap(name, namespace))
    admin.delete("v1", "ConfigMap", "gone", "default")
    admin.patch("v1", "ConfigMap", "b", {"data": {"k": "v"}}, namespace="default",
                patch_type="application/merge-patch+json")
    # Joins while the early source has not read any of that yet.
    manager.add(_Logger("late", _client(clusters, "late"), [("ConfigMap", None, None)], log))
    fresh = admin.watch("v1", "ConfigMap")
    expected = [(kind, obj["metadata"]["namespace"], obj["metadata"]["name"], obj["metadata"]["resourceVersion"])
                for kind, obj in fresh.drain()]
    assert clusters.management.store.watcher_count() == 2  # the shared one and the test's own
    manager.settle()
    late = [line.split(":", 1)[1] for line in log if line.startswith("late:") and "reconcile" not in line]
    assert late == [f"{('ConfigMap', None, None)}:{kind}:{ns}/{name}@{rv}" for kind, ns, name, rv in expected]
    assert [line for line in log if line.startswith("early:") and "reconcile" not in line][-1].endswith(
        "MODIFIED:default/b@" + expected[1][3])


def test_a_source_that_leaves_leaves_the_watch_to_the_others_and_the_last_ends_it() -> None:
    clusters = ClusterSet(VirtualClock())
    admin = _client(clusters, "admin")
    manager = Manager(Scheduler(clusters.clock))
    log: list[str] = []
    first = manager.add(_Logger("first", _client(clusters, "first"), [("ConfigMap", None, None)], log))
    second = manager.add(_Logger("second", _client(clusters, "second"), [("ConfigMap", None, None)], log))
    (stream,) = manager.sources()
    admin.create(_configmap("before"))
    manager.remove(first)  # with an event it never read
    assert not stream.closed and manager.sources() == [stream]
    admin.create(_configmap("after"))
    manager.settle()
    assert [line for line in log if "reconcile" not in line and line.startswith("second")] == [
        f"second:{('ConfigMap', None, None)}:ADDED:default/before@{_rv(admin, 'before')}",
        f"second:{('ConfigMap', None, None)}:ADDED:default/after@{_rv(admin, 'after')}"]
    assert not any(line.startswith("first") for line in log)
    second.forget_watches(MANAGEMENT)
    assert stream.closed and manager.sources() == []
    assert clusters.management.store.watcher_count() == 0


def _rv(client: InProcessClient, name: str) -> str:
    return str(client.get("v1", "ConfigMap", name, "default")["metadata"]["resourceVersion"])


def test_a_shared_watch_the_server_ends_is_listed_once_and_every_source_gets_the_differences() -> None:
    clusters = ClusterSet(VirtualClock())
    admin = _client(clusters, "admin")
    manager = Manager(Scheduler(clusters.clock))
    log: list[str] = []
    lists: list[str] = []
    for name in ("first", "second"):
        client = _client(clusters, name)
        listing = client.list

        def counted(*args: Any, _name: str = name, _list: Any = listing, **kwargs: Any) -> dict[str, Any]:
            lists.append(_name)
            return _list(*args, **kwargs)  # type: ignore[no-any-return]

        client.list = counted  # type: ignore[method-assign]
        manager.add(_Logger(name, client, [("ConfigMap", None, None)], log))
    admin.create(_configmap("kept"))
    admin.create(_configmap("deleted"))
    manager.settle()
    (stream,) = manager.sources()
    stream.in_process_watch.stop()
    deleted_rv = _rv(admin, "deleted")
    admin.delete("v1", "ConfigMap", "deleted", "default")
    admin.create(_configmap("new"))
    log.clear()
    manager.settle()
    assert lists == ["first"]  # one list, through the client of the source that opened the watch
    (reopened,) = manager.sources()
    assert reopened is not stream and not reopened.closed
    for name in ("first", "second"):
        assert [line.split(":", 2)[2] for line in log if line.startswith(name + ":") and "reconcile" not in line] \
            == [f"ADDED:default/new@{_rv(admin, 'new')}", f"DELETED:default/deleted@{deleted_rv}"]
    admin.create(_configmap("later"))
    manager.settle()
    assert sum(line.endswith("ADDED:default/later@" + _rv(admin, "later")) for line in log) == 2


def test_a_manager_that_does_not_share_opens_a_watch_per_source() -> None:
    clusters = ClusterSet(VirtualClock())
    manager = Manager(Scheduler(clusters.clock), share_watches=False)
    for name in ("first", "second"):
        manager.add(_Logger(name, _client(clusters, name), [("ConfigMap", None, None)], []))
    assert clusters.management.store.watcher_count() == 2


def _drain_world(pods: int, monkeypatch: pytest.MonkeyPatch, share: bool) -> dict[str, Any]:
    """The drain benchmark's world (a Machine on a workload cluster with PDB-protected Pods, deleted and
    drained), run to the end: what a scenario could see of it."""
    monkeypatch.setattr(runtime, "SHARE_WATCHES", share)
    monkeypatch.setattr(bench, "SET_SIZE", 6)  # sets of 6 Pods, 4 of which must stay available
    monkeypatch.setattr(bench, "MIN_AVAILABLE", 4)
    world = World()
    random.seed(16)  # generated names come from the random module; uids and the like are mapped below
    client = world.client()
    for obj in bench.fake_cluster(bench.CLUSTER):
        client.create(obj)
    world.settle()
    bench._machine(client, "cp", control_plane=True)
    bench._machine(client, "spare")
    bench._machine(client, "m1")
    world.settle()
    bench._protected_sets(world.client(bench.WORKLOAD), pods, "m1")
    world.settle()
    client.delete("cluster.x-k8s.io/v1beta1", "Machine", "m1", "default")

    def drained() -> bool:
        try:
            machine = client.get("cluster.x-k8s.io/v1beta1", "Machine", "m1", "default")
        except StatusError:
            return True  # drained and gone
        return any(c["type"] == "DrainingSucceeded" and c["status"] == "True"
                   for c in machine["status"].get("conditions") or [])

    bench._advance_until(world, drained)
    world.advance(30)
    uids: dict[str, str] = {}

    def plain(value: Any) -> Any:
        # (uids also in managedFields' keys of owner references)
        if isinstance(value, dict):
            return {plain(k): plain(v) for k, v in value.items()}
        if isinstance(value, list):
            return [plain(v) for v in value]
        if isinstance(value, str):
            return RANDOM.sub(lambda match: uids.setdefault(match.group(0), f"<{len(uids)}>"), value)
        return value

    return {
        "audit": plain([r.to_dict(with_diff=False) | {"old": r.old, "new": r.new} for r in world.audit.records]),
        "history": {server.name: plain([[rv, list(skey), kind, obj, old]
                                        for rv, skey, kind, obj, old in server.store._history])
                    for server in world.clusters},
        "now": world.clock.now(),
        "errors": [e for controller in world.manager.controllers for e in controller.errors],
        "watchers": sum(server.store.watcher_count() for server in world.clusters),
    }


def test_a_world_that_shares_its_watches_does_what_one_that_does_not_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every write, audit record, watch event and the time of each, in the management and workload clusters,
    through a whole drain (late joiners included: the machine controller follows the workload cluster's Nodes
    once it appears, the garbage collector new kinds)."""
    shared = _drain_world(12, monkeypatch, share=True)
    own = _drain_world(12, monkeypatch, share=False)
    assert len(shared["audit"]) > 200
    for key in ("audit", "history", "now", "errors"):
        assert shared[key] == own[key], key
    assert shared["watchers"] < own["watchers"] * 0.6  # 117 of 209 when written


class _Recorder(Controller):
    """Records every key it is asked to reconcile (over HTTP)."""

    def __init__(self, name: str, client: HttpClient) -> None:
        super().__init__()
        self.name = name
        self.client = client
        self.seen: list[str] = []

    def setup(self) -> None:
        self.watch(self.client, "v1", "ConfigMap", namespace="default")

    def reconcile(self, request: Request) -> None:
        self.seen.append(request.name)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    yield from serving(tmp_path, simulators=[], controllers=[])


def _wait_until(stream: Any, condition: Callable[[Any], bool], what: str) -> None:
    """Wait (bounded, wall time: a real stream read on a thread) until ``condition(stream)`` holds."""
    arrived = threading.Event()
    stream.on_event = arrived.set
    deadline = time.monotonic() + 10.0
    while not condition(stream):
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"timed out waiting for {what}"
        arrived.wait(min(remaining, 0.05))
        arrived.clear()


def test_over_http_the_sources_of_one_client_share_its_watch_and_its_reestablishing(served: Served) -> None:
    """A controller process's controllers share its client (one user, one connection): one stream per watch,
    and when the server ends it, one list and one new watch for all of them. Another client (another user,
    say) keeps a watch of its own."""
    world = served.world.client()
    world.create(_configmap("kept"))
    world.create(_configmap("removed"))
    with served.http() as admin:
        admin.post("/harness/v1/faults", json={"fault": "DropWatch", "resource": "configmaps", "count": 1,
                                               "afterEvents": 3})
    client = HttpClient.from_kubeconfig(served.kubeconfig.read_text())
    other = HttpClient.from_kubeconfig(served.kubeconfig.read_text())
    lists: list[int] = []
    listing = client.list

    def counted(*args: Any, **kwargs: Any) -> dict[str, Any]:
        lists.append(1)
        return listing(*args, **kwargs)  # type: ignore[no-any-return]

    client.list = counted  # type: ignore[method-assign]
    try:
        manager = Manager(Scheduler(VirtualClock()))
        first = manager.add(_Recorder("first", client))
        second = manager.add(_Recorder("second", client))
        (stream,) = manager.sources()
        world.create(_configmap("third"))  # the stream's third event: the server ends it after that one
        _wait_until(stream, lambda w: w.ended, "the server to end the shared watch after three events")
        world.delete("v1", "ConfigMap", "removed", "default")
        world.create(_configmap("added"))
        manager.settle()
        assert lists == [1]
        for recorder in (first, second):
            assert sorted(set(recorder.seen)) == ["added", "kept", "removed", "third"]  # type: ignore[attr-defined]
        (reopened,) = manager.sources()
        assert reopened is not stream and not reopened.ended
        last = manager.add(_Recorder("last", other))
        assert len(manager.sources()) == 2
        _wait_until(manager.sources()[1], lambda w: w.received >= 3, "the other client's own watch")
        manager.settle()
        assert sorted(last.seen) == ["added", "kept", "third"]  # type: ignore[attr-defined]
    finally:
        client.close()
        other.close()
