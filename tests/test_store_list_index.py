"""The store's lists read a namespace's own keys, kept in order, and answer as a scan of every key would."""

from __future__ import annotations

import random
from typing import Any

from harness.apiserver import builtins
from harness.apiserver.server import APIServer
from harness.apiserver.store import Store
from harness.apiserver.watch import Watch
from harness.clock import VirtualClock
from harness.kube import selectors
from harness.kube.errors import StatusError

PODS = ("", "pods")
SECRETS = ("", "secrets")
NAMESPACES = ["", "a", "b", "kube-system", "z"]
NAMES = [f"p-{i}" for i in range(40)]
NODES = ["", "n1", "n2"]


def _obj(store: Store, key: tuple[str, str], node: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": key[1], "resourceVersion": store.next_rv()}
    if key[0]:
        meta["namespace"] = key[0]
    return {"metadata": meta, "spec": {"nodeName": node}}


def _reference(objects: dict[tuple[str, str], dict[str, Any]], namespace: str | None,
               after: tuple[str, str] | None) -> list[dict[str, Any]]:
    # The scan the index replaces: every key of the resource, filtered, sorted.
    keys = sorted(k for k in objects if (namespace is None or k[0] == namespace) and (after is None or k > after))
    return [objects[k] for k in keys]


def _random_after(rng: random.Random) -> tuple[str, str] | None:
    return None if rng.random() < 0.4 else (rng.choice(NAMESPACES), rng.choice([*NAMES, "", "p-", "zz"]))


def test_items_answer_as_a_sorted_scan_randomized() -> None:
    rng = random.Random(5)
    store = Store()
    model: dict[tuple[str, str], dict[tuple[str, str], dict[str, Any]]] = {PODS: {}, SECRETS: {}}
    for _ in range(6000):
        skey = rng.choice([PODS, SECRETS])
        objects = model[skey]
        roll = rng.random()
        key = (rng.choice(NAMESPACES), rng.choice(NAMES))
        if roll < 0.5:  # create or update
            objects[key] = store.put(skey, key, _obj(store, key, rng.choice(NODES)))
        elif roll < 0.85:
            if key in objects:
                store.remove(skey, key, _obj(store, key, ""))
                del objects[key]
        elif roll < 0.86:
            store.drop_resource(skey)
            objects.clear()
        for _ in range(3):
            namespace = None if rng.random() < 0.3 else rng.choice(NAMESPACES)
            after = _random_after(rng)
            assert store.items(skey, namespace, after) == _reference(objects, namespace, after)
            assert store.items(skey, namespace) == _reference(objects, namespace, None)
        node = rng.choice(NODES)
        namespace = None if rng.random() < 0.5 else rng.choice(NAMESPACES)
        after = _random_after(rng)
        on_node = {k: o for k, o in model[PODS].items() if o["spec"]["nodeName"] == node}
        assert store.pods_on_node(node, namespace, after) == _reference(on_node, namespace, after)


def test_keys_that_come_and_go_between_reads_answer_as_a_sorted_scan_randomized() -> None:
    # Between two reads, from none to hundreds of keys come, go and come back (the notes a read puts in place
    # one by one when few, by a sort when many), in namespaces of a few keys to a thousand.
    rng = random.Random(11)
    store = Store()
    objects: dict[tuple[str, str], dict[str, Any]] = {}
    names = [f"p-{i}" for i in range(1200)]
    for _ in range(300):
        for _ in range(rng.choice((0, 1, 2, 5, 40, 400))):
            key = (rng.choice(NAMESPACES[:3]), rng.choice(names[: rng.choice((10, 100, 1200))]))
            if key in objects and rng.random() < 0.45:
                store.remove(PODS, key, _obj(store, key, ""))
                del objects[key]
            else:
                objects[key] = store.put(PODS, key, _obj(store, key, ""))
        if rng.random() < 0.02:
            store.drop_resource(PODS)
            objects.clear()
        namespace = None if rng.random() < 0.3 else rng.choice(NAMESPACES)
        after = _random_after(rng)
        assert store.items(PODS, namespace, after) == _reference(objects, namespace, after)
        assert store.items(PODS, namespace) == _reference(objects, namespace, None)


def test_items_of_one_namespace_skip_the_others() -> None:
    store = Store()
    for ns in ("a", "b", "c"):
        for name in ("y", "x"):
            store.put(PODS, (ns, name), _obj(store, (ns, name), ""))
    assert [o["metadata"]["name"] for o in store.items(PODS, "b")] == ["x", "y"]
    assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in store.items(PODS)] == [
        ("a", "x"), ("a", "y"), ("b", "x"), ("b", "y"), ("c", "x"), ("c", "y")]
    assert [o["metadata"]["name"] for o in store.items(PODS, "b", after=("b", "x"))] == ["y"]
    assert store.items(PODS, "nowhere") == []
    assert store.items(SECRETS) == []


def _events(watch: Watch) -> list[tuple[str, str, str]]:
    return [(t, o["metadata"].get("namespace", ""), o["metadata"]["resourceVersion"]) for t, o in watch.events]


def test_watch_resume_replays_what_a_whole_history_scan_would_randomized() -> None:
    rng = random.Random(9)
    store = Store()
    live: dict[tuple[tuple[str, str], tuple[str, str]], bool] = {}
    for _ in range(800):
        skey = rng.choice([PODS, SECRETS])
        key = (rng.choice(NAMESPACES[1:]), rng.choice(NAMES[:10]))
        if live.get((skey, key)) and rng.random() < 0.3:
            store.remove(skey, key, _obj(store, key, ""))
            live[(skey, key)] = False
        else:
            store.put(skey, key, _obj(store, key, rng.choice(NODES)))
            live[(skey, key)] = True
    history = list(store._history)  # noqa: SLF001 - the reference replays the store's own record
    for _ in range(200):
        skey = rng.choice([PODS, SECRETS])
        namespace = rng.choice([None, *NAMESPACES[1:]])
        since = rng.randint(0, store.resource_version + 2)
        expected = Watch(namespace=namespace, matcher=None)
        for rv, key, event_type, obj, old in history:
            if rv > since and key == skey:
                expected.offer(event_type, obj, old)
        got = store.watch(skey, Watch(namespace=namespace, matcher=None), str(since))
        assert _events(got) == _events(expected)
        assert got.last_rv == str(max(since, int(expected.last_rv)))
        got.stop()


def test_watch_from_zero_in_a_namespace_starts_with_its_objects_only() -> None:
    store = Store()
    for ns in ("a", "b"):
        for name in ("x", "y"):
            store.put(PODS, (ns, name), _obj(store, (ns, name), ""))
    watch = store.watch(PODS, Watch(namespace="b", matcher=None), None)
    assert [(t, o["metadata"]["namespace"], o["metadata"]["name"]) for t, o in watch.events] == [
        ("ADDED", "b", "x"), ("ADDED", "b", "y")]


def _old_list(server: APIServer, namespace: str | None, label: str | None, field: str | None, limit: int | None,
              after: tuple[str, str] | None, list_rv: int) -> dict[str, Any]:
    # The list as it was: scan every Pod, sort, skip to the token, match on all ten rendered fields, page.
    labels = selectors.parse_label_selector(label) if label else None
    fields = selectors.parse_field_selector(field) if field else None
    everything = server.store._data.get(("", "pods"), {})  # noqa: SLF001 - the reference scans the store itself
    items, remaining = [], 0
    for key in sorted(k for k in everything if namespace is None or k[0] == namespace):
        obj = everything[key]
        if after is not None and key <= after:
            continue
        if labels is not None and not labels.matches(obj["metadata"].get("labels") or {}):
            continue
        if fields is not None and not fields.matches(selectors.object_fields("Pod", obj)):
            continue
        if limit and len(items) >= limit:
            remaining += 1
            continue
        items.append(obj)
    meta: dict[str, Any] = {"resourceVersion": str(list_rv)}
    if remaining and items:
        last = items[-1]["metadata"]
        meta["continue"] = server._encode_continue((last["namespace"], last["name"]), list_rv)  # noqa: SLF001
        meta["remainingItemCount"] = remaining
    return {"metadata": meta, "items": [o["metadata"]["uid"] for o in items]}


def test_list_pages_and_selects_as_the_whole_scan_did_randomized() -> None:
    rng = random.Random(23)
    server = APIServer("c", VirtualClock())
    for ns in ("a", "b", "c"):
        server.create(builtins.NAMESPACE, None, {"metadata": {"name": ns}})
    for _ in range(150):
        ns, name = rng.choice(["a", "b", "c", "default"]), f"p-{rng.randrange(60)}"
        pod = {"metadata": {"name": name, "labels": {"app": rng.choice(["x", "y"])}},
               "spec": {"containers": [{"name": "c", "image": "i"}], "nodeName": rng.choice(["n1", "n2", ""])}}
        try:
            server.create(builtins.POD, ns, pod)
        except StatusError:  # AlreadyExists: delete it instead, so the keys come and go
            server.delete(builtins.POD, ns, name, {"gracePeriodSeconds": 0})
    fields = [None, "spec.nodeName=n1", "spec.host=n2", "spec.nodeName=n1,status.phase!=Failed",
              "metadata.name=p-3", "spec.nodeName!=n1"]
    for _ in range(400):
        namespace = rng.choice([None, "a", "b", "default", "nowhere"])
        label, field = rng.choice([None, "app=x", "app!=x"]), rng.choice(fields)
        limit = rng.choice([None, 0, -1, 1, 3, 7, 500])
        token, after, list_rv = None, None, server.store.resource_version
        if rng.random() < 0.5:
            after = (rng.choice(["a", "b", "default"]), f"p-{rng.randrange(60)}")
            token = server._encode_continue(after, list_rv)  # noqa: SLF001
        got = server.list(builtins.POD, namespace, label_selector=label, field_selector=field, limit=limit,
                          continue_token=token, shared=True)
        expected = _old_list(server, namespace, label, field, limit, after, list_rv)
        assert {"metadata": got["metadata"], "items": [o["metadata"]["uid"] for o in got["items"]]} == expected
