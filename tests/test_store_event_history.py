"""The watch history's flat event list (harness/apiserver/store.py ``EventHistory``) against a deque of
tuples, what it replaces: the same events in the same order, both ways, through appends, trims and
clears; and a store's watches resumed from any resourceVersion get the events a scan of the history gives."""

from __future__ import annotations

import random
from collections import deque
from typing import Any

import pytest

from harness.apiserver.store import EventHistory, Store
from harness.apiserver.watch import Watch
from harness.kube.names.meta import ADDED, DELETED, MODIFIED


def _entry(rng: random.Random, rv: int) -> tuple[int, tuple[str, str], str, dict[str, Any], dict[str, Any] | None]:
    skey = rng.choice([("", "pods"), ("", "configmaps"), ("apps", "replicasets")])
    obj = {"metadata": {"name": f"o{rng.randrange(5)}", "resourceVersion": str(rv)}}
    old = None if rng.random() < 0.3 else {"metadata": {"name": obj["metadata"]["name"]}}
    return rv, skey, rng.choice([ADDED, MODIFIED, DELETED]), obj, old


@pytest.mark.parametrize("seed", range(30))
def test_the_flat_history_holds_the_events_a_deque_of_tuples_holds(seed: int) -> None:
    rng = random.Random(seed)
    flat, reference = EventHistory(), deque()
    rv = 0
    for _ in range(rng.randrange(1, 400)):
        op = rng.random()
        if op < 0.7:
            rv += 1
            entry = _entry(rng, rv)
            flat.append(entry)
            reference.append(entry)
        elif op < 0.95:
            if reference:
                expected = reference.popleft()
                got = flat.popleft()
                assert got == expected and all(a is b for a, b in zip(got, expected, strict=True))
            else:
                with pytest.raises(IndexError):
                    flat.popleft()
        else:
            flat.clear()
            reference.clear()
        assert len(flat) == len(reference) and bool(flat) == bool(reference)
    assert list(flat) == list(reference)
    assert list(reversed(flat)) == list(reversed(reference))
    assert all(a[3] is b[3] and a[4] is b[4] for a, b in zip(flat, reference, strict=True))


@pytest.mark.parametrize("seed", range(10))
def test_a_watch_resumed_from_any_resource_version_replays_the_events_after_it(seed: int) -> None:
    rng = random.Random(seed)
    store = Store(history=rng.randrange(5, 60))
    skeys = [("", "pods"), ("", "configmaps")]
    log = []
    for _ in range(rng.randrange(20, 120)):
        skey, name = rng.choice(skeys), f"o{rng.randrange(6)}"
        if store.get(skey, ("ns", name)) is not None and rng.random() < 0.3:
            rv = store.next_rv()
            final = {"metadata": {"name": name, "resourceVersion": rv}}
            store.remove(skey, ("ns", name), final)
            log.append((int(rv), skey, DELETED, final))
        else:
            existed = store.get(skey, ("ns", name)) is not None
            obj = {"metadata": {"name": name, "resourceVersion": store.next_rv()}}
            store.put(skey, ("ns", name), obj)
            log.append((int(obj["metadata"]["resourceVersion"]), skey, MODIFIED if existed else ADDED, obj))
    kept = log[-store.history_length():]
    assert [(rv, skey, kind, obj) for rv, skey, kind, obj, _ in store._history] == kept  # noqa: SLF001
    for since in range(max(store.oldest_rv, 1), store.resource_version + 1):  # "0": the current objects
        for skey in skeys:
            watch = store.watch(skey, Watch(namespace=None, matcher=None), str(since))
            expected = [(kind, obj) for rv, key, kind, obj in kept if rv > since and key == skey]
            assert [(kind, obj) for kind, obj in watch.drain()] == expected
            watch.stop()
