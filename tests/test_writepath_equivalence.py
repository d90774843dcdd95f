"""The server's update, delete and eviction paths answer, store, audit and notify exactly as their
reference (tests/writepath_reference.py, the code before the round-4 rework) on random objects and
random requests: no-op updates, status-only changes, metadata changes, stale resourceVersions,
wrong names, graceful and final deletes with every kind of options, evictions refused and
allowed by budgets, with and without mutating admission.

Two servers (the real one and the reference) receive the same requests with the same random
draws (uids, generated names); after every request the answers (the object or the Status, in JSON
key order), every stored object, the resourceVersion counter, the audit trail (records and the
object versions they hold), the events of several watches (by order) and the per-node pod index
must be the same.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import partial
from typing import Any

import orjson
import pytest

from harness.apiserver import builtins
from harness.apiserver import server as server_module
from harness.apiserver.resources import ResourceType
from harness.apiserver.server import APIServer
from harness.apiserver.subresources import binding, eviction
from harness.clock import VirtualClock
from harness.kube import errors
from harness.kube.objects import clone
from tests import writepath_reference as reference

NS = "a"
POD, PDB, DEPLOYMENT, CONFIGMAP = builtins.POD, builtins.POD_DISRUPTION_BUDGET, builtins.DEPLOYMENT, builtins.CONFIG_MAP
KINDS = (POD, PDB, DEPLOYMENT, CONFIGMAP)
LABELS = ({"app": "x"}, {"app": "y"}, {"app": "x", "tier": "web"}, {})


class _Mutating:
    """Mutating admission: every updated object gets an annotation (so a status write copies the
    whole stored object); and a stateful one: every fifth DELETE it is asked about is refused, so
    asking it once more or once less than the reference shows."""

    def __init__(self) -> None:
        self.deletes = 0

    def __call__(
        self, operation: str, rt: ResourceType, new: dict[str, Any] | None, old: dict[str, Any] | None
    ) -> list[errors.FieldError]:
        if new is not None and operation == "UPDATE":
            new["metadata"].setdefault("annotations", {})["admitted"] = str(len(new["metadata"].get("labels") or {}))
        if operation == "DELETE":
            self.deletes += 1
            if self.deletes % 5 == 0:
                return [errors.forbidden("metadata.name", "every fifth delete is refused")]
        return []


def _server(cls: type[APIServer], admitted: tuple[ResourceType, ...]) -> tuple[APIServer, list[Any]]:
    server_module._UID_RANDOM.seed(-1)  # noqa: SLF001 - the same uids for the namespaces of both
    server = cls("equivalence", VirtualClock())
    plugin = _Mutating()
    for rt in admitted:
        server.add_admission(rt.group, rt.kind, plugin)
    server.create(builtins.NAMESPACE, None, {"metadata": {"name": NS}})
    watches = [
        server.watch(POD),
        server.watch(POD, NS, label_selector="app=x"),
        server.watch(PDB),
        server.watch(DEPLOYMENT, NS),
        server.watch(CONFIGMAP),
    ]
    return server, watches


def _pod(rng: random.Random, name: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": NS, "labels": dict(rng.choice(LABELS))}
    if rng.random() < 0.2:
        meta["finalizers"] = ["example.com/keep"]
    spec: dict[str, Any] = {"containers": [{"name": "app", "image": "registry.example/app:1.0"}]}
    if rng.random() < 0.8:
        spec["nodeName"] = rng.choice(("n1", "n2"))
    grace = rng.choice((None, 0, 1, 30))
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _pod_status(rng: random.Random, now: str) -> dict[str, Any]:
    phase = rng.choice(("Running",) * 8 + ("Pending", "Succeeded", "Failed"))
    ready = rng.choice(("True", "True", "False"))
    conditions = [{"type": kind, "status": ready if kind == "Ready" else "True", "lastProbeTime": None,
                   "lastTransitionTime": now} for kind in ("Initialized", "Ready", "PodScheduled")]
    if rng.random() < 0.2:
        conditions.append({"type": "DisruptionTarget", "status": "True", "lastTransitionTime": now,
                           "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting"})
    return {"phase": phase, "hostIP": "10.0.0.1", "conditions": conditions}


def _pdb(rng: random.Random, name: str) -> dict[str, Any]:
    # Each budget its own pods mostly (one budget per pod), sometimes all of them (two: a 500).
    labels = {} if rng.random() < 0.1 else {"app": "y" if name.endswith("1") else "x"}
    spec: dict[str, Any] = {"selector": {"matchLabels": labels}}
    if rng.random() < 0.5:
        spec["minAvailable"] = rng.choice((0, 1, 2, "50%"))
    else:
        spec["maxUnavailable"] = rng.choice((0, 1, "50%"))
    if rng.random() < 0.3:
        spec["unhealthyPodEvictionPolicy"] = rng.choice(("AlwaysAllow", "IfHealthyBudget"))
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name, "namespace": NS},
            "spec": spec}


def _pdb_status(rng: random.Random, generation: int, now: str) -> dict[str, Any]:
    status: dict[str, Any] = {
        "observedGeneration": generation - rng.choice((0, 0, 0, 1)),
        "disruptionsAllowed": rng.choice((0, 0, 1, 2, 5, -1)),
        "currentHealthy": rng.randrange(4), "desiredHealthy": rng.randrange(4), "expectedPods": rng.randrange(4),
    }
    if rng.random() < 0.5:
        status["conditions"] = [{"type": "DisruptionAllowed", "status": "True", "reason": "SufficientPods",
                                 "message": "", "lastTransitionTime": now, "observedGeneration": generation}]
    if rng.random() < 0.3:
        status["disruptedPods"] = {"p-0": now}
    return status


def _deployment(rng: random.Random, name: str) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": NS},
            "spec": {"replicas": rng.randrange(3), "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "app", "image": "app:1"}]}}}}


def _configmap(rng: random.Random, name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": NS},
            "data": {"k": str(rng.randrange(3))}}


MAKERS: dict[str, Callable[[random.Random, str], dict[str, Any]]] = {
    "Pod": _pod, "PodDisruptionBudget": _pdb, "Deployment": _deployment, "ConfigMap": _configmap,
}


def _mutated_body(rng: random.Random, rt: ResourceType, stored: dict[str, Any], now: str) -> dict[str, Any]:
    """The object as read, with random changes (none at all a fifth of the time)."""
    body = clone(stored)
    meta = body["metadata"]
    for _ in range(rng.choice((0, 1, 1, 2, 3))):
        change = rng.randrange(16)
        if change == 0:
            meta["labels"] = dict(rng.choice(LABELS))
        elif change == 1:
            meta.setdefault("annotations", {})["note"] = str(rng.randrange(3))
        elif change == 2:
            meta["finalizers"] = rng.choice(([], ["example.com/keep"], ["example.com/keep", "example.com/two"]))
        elif change == 3:
            meta.pop("finalizers", None)
        elif change == 4:
            meta["resourceVersion"] = rng.choice(("1", "999999"))
        elif change == 5:
            meta.pop("resourceVersion", None)
        elif change == 6:
            meta["managedFields"] = rng.choice(([], [{}], None))
        elif change == 7:
            meta["name"] = "other"
        elif change == 8:
            for field in ("uid", "creationTimestamp", "generation"):
                meta.pop(field, None)
        elif change == 9:
            meta["deletionTimestamp"] = now
            meta["generation"] = 42
        elif change == 10 and rt is POD:
            body["status"] = _pod_status(rng, now)
        elif change == 10 and rt is PDB:
            body["status"] = _pdb_status(rng, int(meta.get("generation") or 1), now)
        elif change == 11:
            body.pop("status", None)
        elif change == 12 and rt is DEPLOYMENT:
            body["spec"]["replicas"] = rng.randrange(4)
        elif change == 12 and rt is PDB:
            body["spec"] = _pdb(rng, "x")["spec"]
        elif change == 12 and rt is POD:
            body["spec"]["activeDeadlineSeconds"] = rng.randrange(1, 100)
        elif change == 13 and rt is CONFIGMAP:
            body["data"] = {"k": str(rng.randrange(3))}
        elif change == 13 and rt is DEPLOYMENT:
            body["status"] = {"replicas": rng.randrange(3), "observedGeneration": int(meta.get("generation") or 1)}
        elif change == 14:
            meta["ownerReferences"] = rng.choice(([], [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o",
                                                         "uid": "u-1"}]))
        elif change == 15:
            meta["labels"] = {}
    return body


def _delete_options(rng: random.Random, stored: dict[str, Any] | None) -> dict[str, Any] | None:
    options: dict[str, Any] = {}
    meta = (stored or {}).get("metadata") or {}
    for _ in range(rng.choice((0, 1, 1, 2, 3))):
        choice = rng.randrange(9)
        if choice == 0:
            options["gracePeriodSeconds"] = rng.choice((0, 0, 1, 5, -3))
        elif choice == 1:
            options["preconditions"] = {"uid": rng.choice((meta.get("uid"), "wrong"))}
        elif choice == 2:
            options["preconditions"] = {"resourceVersion": rng.choice((meta.get("resourceVersion"), "1"))}
        elif choice == 3:
            options["propagationPolicy"] = rng.choice(("Background", "Foreground", "Orphan", "Sideways"))
        elif choice == 4:
            options["orphanDependents"] = rng.choice((True, False))
        elif choice == 5:
            options["dryRun"] = ["All"]
        else:
            options["gracePeriodSeconds"] = 0
    return options if options or rng.random() < 0.5 else None


def _eviction_body(rng: random.Random, name: str, stored: dict[str, Any] | None) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": NS}}
    if rng.random() < 0.4:
        options = _delete_options(rng, stored) or {}
        options.pop("propagationPolicy", None)
        options.pop("orphanDependents", None)
        body["deleteOptions"] = options
    return body


def _answer(call: Callable[[], Any]) -> tuple[Any, ...]:
    try:
        result = call()
    except errors.StatusError as err:
        return ("error", err.code, orjson.dumps(err.status), getattr(err, "retry_after", None))
    return ("ok", orjson.dumps(result))


def _state(server: APIServer, watches: list[Any], since: int = 0) -> tuple[Any, ...]:
    """What a request may have changed: the stored objects, the counter, the audit records from
    ``since`` on (the earlier ones were compared already), the watches' new events, the indexes."""
    store = server.store
    objects = {f"{skey}{key}": obj for skey, bucket in store._data.items() for key, obj in bucket.items()}  # noqa: SLF001
    audit = [(record.to_dict(with_diff=False), orjson.dumps(record.old), orjson.dumps(record.new))
             for record in server.audit.records[since:]]
    events = [[(kind, orjson.dumps(obj)) for kind, obj in watch.drain()] for watch in watches]
    by_node = {node: sorted(keys) for node, keys in store._pods_by_node.items() if keys}  # noqa: SLF001
    return (orjson.dumps(objects), store.resource_version, audit, events, by_node,
            {skey: dict(by_ns) for skey, by_ns in store._ns_keys.items()})  # noqa: SLF001


# A request: what the real server is asked and what the reference is asked (the same but for the
# eviction, whose reference is a function of its own).
Call = Callable[[APIServer], Any]


def _create(rt: ResourceType, name: str, body: dict[str, Any], status: dict[str, Any] | None, s: APIServer) -> Any:
    created = s.create(rt, NS, clone(body))
    if status is not None:
        s.update(rt, NS, name, {**created, "status": clone(status)}, subresource="status", answer=False)
    return created


def _update(rt: ResourceType, name: str, body: dict[str, Any], options: dict[str, Any], s: APIServer) -> Any:
    return s.update(rt, NS, name, clone(body), **options)


def _delete(rt: ResourceType, name: str, options: Any, answer: bool, s: APIServer) -> Any:
    return s.delete(rt, NS, name, clone(options), answer=answer)


def _bind(name: str, body: dict[str, Any], s: APIServer) -> Any:
    return binding.bind(s, NS, name, clone(body))


def _evict(evict: Callable[..., Any], name: str, body: dict[str, Any], dry_run: bool, s: APIServer) -> Any:
    return evict(s, NS, name, clone(body), dry_run=dry_run)


def _request(rng: random.Random, server: APIServer, names: dict[str, list[str]]) -> tuple[Call, Call] | float:
    """A random request (for both servers), or the seconds to move the clocks by."""
    rt = rng.choice(KINDS)
    name = rng.choice(names[rt.kind])
    stored = server.store.get(server.skey(rt), (NS, name))
    now = server.now()
    op = rng.randrange(12)
    if stored is None or op == 0:
        # Most pods then run (as a kubelet would write it), so that budgets are asked.
        body = MAKERS[rt.kind](rng, name)
        status = _pod_status(rng, now) if rt is POD and rng.random() < 0.8 else None
        call = partial(_create, rt, name, body, status)
        return call, call
    answer = rng.random() < 0.7
    if rt is POD and not (stored.get("spec") or {}).get("nodeName") and rng.random() < 0.3:
        # The scheduler's binding: the pod moves to a node (the per-node index).
        call = partial(_bind, name, {"target": {"name": rng.choice(("n1", "n2"))}})
        return call, call
    target = name
    if op in (1, 2, 3, 4, 5) and rng.random() < 0.1:
        # An update of an object that does not exist: its body's own errors come first.
        target = f"ghost-{name}"
    if op in (1, 2, 3):
        body = _mutated_body(rng, rt, server.get(rt, NS, name), now)
        if target != name and rng.random() < 0.5:
            body["metadata"]["name"] = target  # a body without errors: the 404 then
        options = {"dry_run": rng.random() < 0.1, "field_manager": rng.choice((None, "kubelet", "other")),
                   "answer": answer}
        call = partial(_update, rt, target, body, options)
        return call, call
    if op in (4, 5):
        body = _mutated_body(rng, rt, server.get(rt, NS, name), now)
        if rt is POD and rng.random() < 0.7:
            body["status"] = _pod_status(rng, now)
        elif rt is PDB and rng.random() < 0.7:
            body["status"] = _pdb_status(rng, int(stored["metadata"].get("generation") or 1), now)
        subresource = rng.choice(("status", "status", "status", "approval", "scale2"))
        call = partial(_update, rt, target, body, {"subresource": subresource, "answer": answer})
        return call, call
    if op in (6, 7):
        call = partial(_delete, rt, name, _delete_options(rng, stored), answer)
        return call, call
    if op in (8, 9, 10):
        pod = rng.choice(names["Pod"])
        body = _eviction_body(rng, pod, server.store.get(server.skey(POD), (NS, pod)))
        dry_run = rng.random() < 0.1
        return partial(_evict, eviction.evict, pod, body, dry_run), partial(_evict, reference.evict, pod, body, dry_run)
    return float(rng.choice((1, 2, 30)))


def _run(seed: int, steps: int, admitted: tuple[ResourceType, ...]) -> None:
    new_server, new_watches = _server(APIServer, admitted)
    old_server, old_watches = _server(reference.ReferenceServer, admitted)
    rng = random.Random(seed)
    names = {rt.kind: [f"{rt.kind.lower()}-{i}" for i in range(2 if rt is PDB else 4)] for rt in KINDS}
    audited = 0  # the audit records compared so far
    for step in range(steps):
        request = _request(rng, new_server, names)
        if isinstance(request, float):
            for server in (new_server, old_server):
                server.clock.advance_to(server.clock.now() + request)
            continue
        answers = []
        for server, call in zip((new_server, old_server), request, strict=True):
            # The same draws (uids, generated names) on both sides.
            server_module._UID_RANDOM.seed(step)  # noqa: SLF001
            random.seed(step)
            answers.append(_answer(partial(call, server)))
        assert answers[0] == answers[1], f"seed {seed} step {step}"
        assert _state(new_server, new_watches, audited) == _state(old_server, old_watches, audited), \
            f"seed {seed} step {step}"
        audited = len(new_server.audit.records)


@pytest.mark.parametrize("seed", range(12))
def test_update_delete_and_eviction_are_the_reference_s(seed: int) -> None:
    _run(seed, 250, ())


@pytest.mark.parametrize("seed", range(4))
def test_the_same_under_mutating_admission(seed: int) -> None:
    # A plugin on pods: the eviction's DELETE is then checked again before every write; on
    # deployments: a status write copies the whole stored object.
    _run(100 + seed, 250, (POD, DEPLOYMENT))


def test_evictions_of_a_budget_that_allows_them_are_the_reference_s() -> None:
    # Enough evictions that budgets allow (the DisruptionTarget write, the budget's status write and
    # the delete): budgets with room and ready pods, evicted in turn.
    for seed in range(3):
        rng = random.Random(1000 + seed)
        new_server, new_watches = _server(APIServer, ())
        old_server, old_watches = _server(reference.ReferenceServer, ())
        servers = ((new_server, new_watches, eviction.evict), (old_server, old_watches, reference.evict))
        for step in range(60):
            pod = f"p-{step % 8}"
            advance = rng.random() < 0.5
            results = []
            for server, _, evict in servers:
                server_module._UID_RANDOM.seed(step)  # noqa: SLF001
                if server.store.get(server.skey(POD), (NS, pod)) is None:
                    server.create(POD, NS, {**_pod(random.Random(step), pod), "metadata": {
                        "name": pod, "namespace": NS, "labels": {"app": "x"}}})
                    running = server.get(POD, NS, pod)
                    running["status"] = _pod_status(random.Random(step), server.now())
                    server.update_status(POD, NS, pod, running)
                if server.store.get(server.skey(PDB), (NS, "budget")) is None:
                    server.create(PDB, NS, {**_pdb(random.Random(0), "budget"),
                                            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "x"}}}})
                if step % 5 == 0:
                    budget = server.get(PDB, NS, "budget")
                    budget["status"] = {**_pdb_status(random.Random(step), 1, server.now()), "observedGeneration": 1,
                                        "disruptionsAllowed": random.Random(step).randrange(1, 4)}
                    server.update_status(PDB, NS, "budget", budget)
                body = _eviction_body(random.Random(step), pod, server.store.get(server.skey(POD), (NS, pod)))
                results.append(_answer(partial(_evict, evict, pod, body, False, server)))
                if advance:
                    server.clock.advance_to(server.clock.now() + 1)
            assert results[0] == results[1], f"seed {seed} step {step}"
            assert _state(new_server, new_watches) == _state(old_server, old_watches), f"seed {seed} step {step}"
