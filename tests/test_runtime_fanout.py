"""The manager's watch fan-out (harness/client/runtime.py): a pump looks only at the in-process watches that
told of an event, yet controllers get their keys in the order a look at every watch, in the order the
watches were opened, gives: a mapper that writes (the disruption simulator records an Event from one) or
opens a watch (the garbage collector does when a CRD appears) while a pump runs changes nothing in
what is delivered when."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from harness.apiserver.clusters import MANAGEMENT, ClusterSet
from harness.client.inprocess import InProcessClient
from harness.client.runtime import Controller, Manager, Request
from harness.clock import Scheduler, VirtualClock


class _Blind:
    """A watch stream that does not tell the manager when it has events: with one of these among the
    sources, every pump walks every watch (the walk the ready watches must match)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    @property
    def closed(self) -> bool:
        return bool(self._stream.closed)

    def drain(self) -> list[tuple[str, dict[str, Any]]]:
        return list(self._stream.drain())

    def stop(self) -> None:
        self._stream.stop()


class _Logger(Controller):
    """Logs every event its mappers see; ``writes`` on a ConfigMap named ``trigger`` creates Secrets and
    opens a watch from inside the mapper, as some simulators do."""

    def __init__(self, name: str, client: InProcessClient, kinds: list[str], log: list[str],
                 writes: bool = False) -> None:
        super().__init__()
        self.name = name
        self.client = client
        self.kinds = kinds
        self.log = log
        self.writes = writes

    def setup(self) -> None:
        for kind in self.kinds:
            self.watch(self.client, "v1", kind, self._mapper(kind))

    def _mapper(self, kind: str):  # type: ignore[no-untyped-def]
        def mapper(event: str, obj: dict[str, Any]) -> Iterable[Request]:
            name = obj["metadata"]["name"]
            self.log.append(f"{self.name}:{kind}:{event}:{name}")
            if self.writes and kind == "ConfigMap" and name == "trigger" and event == "ADDED":
                for secret in ("s-1", "s-2"):
                    self.client.create({"apiVersion": "v1", "kind": "Secret",
                                        "metadata": {"name": secret, "namespace": "default"}})
                self.watch(self.client, "v1", "ServiceAccount", self._mapper("ServiceAccount"))
            return (Request.of(obj),)

        return mapper

    def reconcile(self, request: Request) -> None:
        self.log.append(f"{self.name}:reconcile:{request.name}")


def _run(blind: bool) -> list[str]:
    clusters = ClusterSet(VirtualClock())
    client = InProcessClient(clusters, MANAGEMENT)
    manager = Manager(Scheduler(clusters.clock))
    log: list[str] = []
    manager.add(_Logger("first", client, ["Secret"], log))
    manager.add(_Logger("writer", client, ["ConfigMap", "Secret"], log, writes=True))
    manager.add(_Logger("last", client, ["Secret", "ConfigMap"], log))
    if blind:
        quiet = _Logger("blind", client, [], log)
        manager.add(quiet)
        manager.add_source(quiet, _Blind(client.watch("v1", "Namespace")), lambda _e, _o: (), ("blind",))
    client.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa", "namespace": "default"}})
    manager.settle()
    for name in ("before", "trigger", "after"):
        client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}})
    client.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s-0", "namespace": "default"}})
    manager.settle()
    client.delete("v1", "ConfigMap", "before", "default")
    manager.settle()
    return log


def test_a_pump_of_the_ready_watches_delivers_as_a_walk_over_every_watch() -> None:
    ready, walked = _run(blind=False), _run(blind=True)
    assert ready == walked
    # The Secrets written by the writer's mapper reach the watches after it within that pump, the one
    # before it at the next pump; the watch it opened gets its first events after that.
    trigger = ready.index("writer:ConfigMap:ADDED:trigger")
    assert ready[trigger:trigger + 11] == [
        "writer:ConfigMap:ADDED:trigger", "writer:ConfigMap:ADDED:after",
        "writer:Secret:ADDED:s-0", "writer:Secret:ADDED:s-1", "writer:Secret:ADDED:s-2",
        "last:Secret:ADDED:s-0", "last:Secret:ADDED:s-1", "last:Secret:ADDED:s-2",
        "last:ConfigMap:ADDED:before", "last:ConfigMap:ADDED:trigger", "last:ConfigMap:ADDED:after",
    ]
    assert ready.index("first:Secret:ADDED:s-1") > ready.index("last:ConfigMap:ADDED:after")
    assert ready.index("writer:ServiceAccount:ADDED:sa") > ready.index("first:Secret:ADDED:s-2")
    assert ready[-4:] == ["writer:ConfigMap:DELETED:before", "last:ConfigMap:DELETED:before",
                          "writer:reconcile:before", "last:reconcile:before"]
