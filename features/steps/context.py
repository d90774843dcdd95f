"""What a scenario remembers between its steps, and how sentences name things.

Step definitions are thin: they turn a sentence into client calls through the :class:`Scene` and
compare what comes back. This module holds the little they share: the per-scenario
:class:`ScenarioContext` (the last API answer or error, the audit mark taken at the ``When``, a
watch and its events, copies a client holds), the parse types used in sentences, and the mapping
from the kinds a sentence names to their API versions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import parse
from pytest_bdd import parsers

from harness.kube.client import ApiError, Client, find_in
from harness.kube.names.core import DEFAULT_NAMESPACE
from harness.targets.chaos import transient
from harness.world.scene import Scene

# Parse types of the step sentences: a quoted value never contains a quote, a kind is one word.
TYPES: dict[str, Callable[[str], Any]] = {
    "Q": parse.with_pattern(r'[^"]*')(lambda text: text),
    "Kind": parse.with_pattern(r"[A-Z][A-Za-z]*")(lambda text: text),
    "Word": parse.with_pattern(r"[A-Za-z][-A-Za-z]*")(lambda text: text),
    "Int": parse.with_pattern(r"-?\d+")(lambda text: int(text)),
}


# The kinds sentences name, with the apiVersion a client uses for them.
KINDS: dict[str, str] = {
    "ConfigMap": "v1",
    "Secret": "v1",
    "ServiceAccount": "v1",
    "Service": "v1",
    "Namespace": "v1",
    "Node": "v1",
    "Pod": "v1",
    "Event": "v1",
    "PersistentVolume": "v1",
    "PersistentVolumeClaim": "v1",
    "Deployment": "apps/v1",
    "ReplicaSet": "apps/v1",
    "StatefulSet": "apps/v1",
    "DaemonSet": "apps/v1",
    "Job": "batch/v1",
    "PodDisruptionBudget": "policy/v1",
    "VolumeAttachment": "storage.k8s.io/v1",
    "CustomResourceDefinition": "apiextensions.k8s.io/v1",
}
CLUSTER_SCOPED = {"Namespace", "Node", "PersistentVolume", "VolumeAttachment", "CustomResourceDefinition"}

# How long a Then-step that waits ("within N seconds") looks between checks, in virtual seconds.
POLL_SECONDS = 1.0


def sentence(pattern: str) -> parsers.StepParser:
    """A step sentence: ``parse`` syntax with the types above (``"{pod:Q}"``, ``{kind:Kind}``, ``{n:Int}``)."""
    return parsers.parse(pattern, extra_types=TYPES)


@dataclass
class ObjectRef:
    """An object a sentence names: its kind, apiVersion, name and namespace (None when cluster-scoped)."""

    kind: str
    api_version: str
    name: str
    namespace: str | None

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"


@dataclass
class ScenarioContext:
    """The memory of one scenario."""

    scene: Scene
    # The answer to, or the refusal of, the scenario's action (the When step).
    result: Any = None
    error: ApiError | None = None
    # Audit size when the action started: Then-steps about writes look only after it.
    mark: int = 0
    watch: Any = None
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    remembered_rv: str | None = None
    compacted_rv: str | None = None
    # Copies of objects a client read earlier, by (kind, namespace, name).
    copies: dict[tuple[str, str | None, str], dict[str, Any]] = field(default_factory=dict)
    # Kinds beyond KINDS (namespaced custom resources a scenario serves).
    kinds: dict[str, str] = field(default_factory=dict)
    # Under --chaos: the reference controllers' requests fail now and then (harness/targets/chaos.py).
    chaos: bool = False

    @property
    def client(self) -> Client:
        """The scenario's own client: an administrator of the management cluster."""
        return self.scene.client()

    def ref(self, kind: str, text: str) -> ObjectRef:
        """The object ``text`` names: ``namespace/name``, or ``name`` (``default`` for namespaced kinds)."""
        api_version = self.kinds.get(kind) or KINDS.get(kind)
        if api_version is None:
            raise AssertionError(f"sentences do not know the kind {kind!r}")
        if kind in CLUSTER_SCOPED:
            return ObjectRef(kind, api_version, text, None)
        namespace, _, name = text.rpartition("/")
        return ObjectRef(kind, api_version, name, namespace or DEFAULT_NAMESPACE)

    def get(self, ref: ObjectRef) -> dict[str, Any]:
        return self.client.get(ref.api_version, ref.kind, ref.name, ref.namespace)

    def find(self, ref: ObjectRef) -> dict[str, Any] | None:
        """The object, or None when the API answers 404."""
        return find_in(self.client, ref.api_version, ref.kind, ref.name, ref.namespace)

    def act(self, action: Callable[[], Any]) -> None:
        """Run the scenario's action: remember its answer or its API error, then let the world react."""
        self.mark = self.scene.audit_size()
        self.result = None
        self.error = None
        try:
            self.result = action()
        except ApiError as err:
            self.error = err
        self.scene.settle()

    def setup(self, action: Callable[[], Any]) -> Any:
        """Run a Given step's write (an API error fails the scenario) and let the world settle."""
        result = action()
        self.scene.settle()
        return result

    def transient(self, message: str | None) -> bool:
        """Under ``--chaos``, whether ``message`` reports a request an injected fault failed (steps that
        check nothing went wrong ignore those); never without chaos."""
        return self.chaos and transient(message)

    def writes(self, **filters: Any) -> list[dict[str, Any]]:
        """Audit records since the action started."""
        return self.scene.audit(since=self.mark, **filters)

    def wait_until(self, check: Callable[[], bool], seconds: float) -> bool:
        """Advance virtual time in small steps until ``check()`` holds or ``seconds`` have passed."""
        deadline = self.scene.now() + seconds
        while True:
            if check():
                return True
            if self.scene.now() >= deadline:
                return False
            self.scene.advance(min(POLL_SECONDS, deadline - self.scene.now()))

    def collect_events(self) -> list[tuple[str, dict[str, Any]]]:
        """Every event the scenario's watch has delivered so far."""
        if self.watch is not None:
            self.events.extend(self.watch.drain())
        return self.events


def labels_of(text: str) -> dict[str, str]:
    """``app=web,tier=front`` as a dict (an empty text is no labels)."""
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, _, value = part.partition("=")
        out[key.strip()] = value.strip()
    return out
