"""The Pods one server creates from one spec (a ReplicaSet's, a Job's, a benchmark's) store one
defaulted spec object between them: stored objects are never changed in place, so the copy the
decoding memo made for each Pod (and the defaults written into it) is made once per spec and server.
What is stored, answered and watched is the same as with a copy per Pod: compared here with a server
that copies (an admission plugin on Pods turns the sharing off, as one may change the spec in place)."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from harness.apiserver import builtins, decoding, defaults
from harness.apiserver import server as server_module
from harness.apiserver.server import APIServer
from harness.clock import VirtualClock
from harness.kube import errors
from harness.kube.objects import JsonMemo
from tests import decoding_reference as reference


@pytest.fixture(autouse=True)
def _fresh_memos(monkeypatch: pytest.MonkeyPatch) -> None:
    """The decoding memos are the process's: each test starts with empty ones, so what the tests before it
    decoded (and a memo filling up and clearing mid-test) does not change what it sees."""
    monkeypatch.setattr(decoding, "_MEMO", JsonMemo(decoding._MEMO._limit))
    monkeypatch.setattr(decoding, "_LIST_MEMO", JsonMemo(decoding._LIST_MEMO._limit))


def _server(*, copying: bool = False) -> APIServer:
    api = APIServer("c", VirtualClock())
    if copying:
        api.add_admission("", "Pod", lambda operation, rt, new, old: [])
    return api


def _spec(rng: random.Random) -> dict[str, Any]:
    containers = []
    for index in range(rng.randint(1, 3)):
        container: dict[str, Any] = {"name": f"c{index}",
                                     "image": rng.choice(["app:1.0", "app:latest", "app", "r.example/app:2"])}
        if rng.random() < 0.5:
            container["env"] = [{"name": f"E{i}", "value": str(i)} for i in range(rng.randint(0, 4))]
        if rng.random() < 0.3:
            container["imagePullPolicy"] = "Never"
        if rng.random() < 0.3:
            container["resources"] = {"limits": {"cpu": rng.choice(["1", 2, "500m"])}}
        containers.append(container)
    spec: dict[str, Any] = {"containers": containers}
    for key, value in (("restartPolicy", "Never"), ("terminationGracePeriodSeconds", 5), ("nodeName", "n1"),
                       ("securityContext", {"runAsUser": 1000}), ("dnsPolicy", "Default")):
        if rng.random() < 0.3:
            spec[key] = value
    return spec


def _pod(name: str, spec: dict[str, Any], *, generate: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"generateName": name + "-"} if generate else {"name": name}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {**meta, "labels": {"app": "a"}},
            "spec": copy.deepcopy(spec)}


def _comparable(obj: dict[str, Any]) -> str:
    # What two servers store alike (uids and generated names are drawn at random).
    meta = {k: v for k, v in obj["metadata"].items() if k not in ("uid", "name")}
    return json.dumps({**obj, "metadata": meta})


@pytest.mark.parametrize("seed", range(4))
def test_pods_of_one_spec_share_it_and_store_what_copies_store(seed: int) -> None:
    rng = random.Random(seed)
    sharing, copying = _server(), _server(copying=True)
    specs = [_spec(rng) for _ in range(3)]
    for step in range(30):
        spec = rng.choice(specs)
        generate = rng.random() < 0.4
        dry_run = rng.random() < 0.1
        answers = [api.create(builtins.POD, "default", _pod(f"p{step}", spec, generate=generate), dry_run=dry_run)
                   for api in (sharing, copying)]
        assert answers[0] is not None and answers[1] is not None
        assert _comparable(answers[0]) == _comparable(answers[1])
    stored = [api.store.items(api.skey(builtins.POD), "default") for api in (sharing, copying)]
    assert sorted(map(_comparable, stored[0])) == sorted(map(_comparable, stored[1]))
    # One spec object per distinct spec with sharing (the first Pod of each keeps its own copy); one
    # per Pod without.
    assert len({id(obj["spec"]) for obj in stored[0]}) <= 2 * len(specs)
    assert len({id(obj["spec"]) for obj in stored[1]}) == len(stored[1])


def test_the_remembered_spec_is_never_changed() -> None:
    # Pods, then a Deployment whose template holds the same spec (defaulted there too), then Pods
    # again: every decode of the body still gives what the plain walk gives (no defaults leaked).
    api = _server()
    spec = {"containers": [{"name": "c", "image": "app:latest"}]}
    for i in range(3):
        api.create(builtins.POD, "default", _pod(f"p{i}", spec))
    api.create(builtins.DEPLOYMENT, "default", {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"app": "a"}},
                 "template": {"metadata": {"labels": {"app": "a"}}, "spec": copy.deepcopy(spec)}}})
    for i in range(3, 6):
        api.create(builtins.POD, "default", _pod(f"p{i}", spec))
    body = _pod("x", spec)
    assert repr(decoding.decode_builtin("v1", "Pod", body)) == repr(reference.decode_builtin("v1", "Pod", body))
    stored = [api.store.get(api.skey(builtins.POD), ("default", f"p{i}")) for i in range(6)]
    assert all(obj["spec"] == stored[0]["spec"] for obj in stored)
    assert stored[0]["spec"]["containers"][0]["imagePullPolicy"] == "Always"
    assert stored[2]["spec"] is stored[5]["spec"]


def test_two_servers_never_share_a_spec() -> None:
    spec = {"containers": [{"name": "c", "image": "app:1"}]}
    first, second = _server(), _server()
    for api in (first, second):
        for i in range(3):
            api.create(builtins.POD, "default", _pod(f"p{i}", spec))
    one = first.store.get(first.skey(builtins.POD), ("default", "p2"))["spec"]
    other = second.store.get(second.skey(builtins.POD), ("default", "p2"))["spec"]
    assert one == other and one is not other


def test_a_mutating_admission_plugin_changes_its_pod_alone() -> None:
    api = _server()
    spec = {"containers": [{"name": "c", "image": "app:1"}]}
    for i in range(2):
        api.create(builtins.POD, "default", _pod(f"p{i}", spec))

    def label_image(operation: str, rt: Any, new: Any, old: Any) -> list[Any]:
        if operation == "CREATE" and new["metadata"]["name"] == "p3":
            new["spec"]["containers"][0]["image"] = "edited:1"
        return []

    api.add_admission("", "Pod", label_image)
    for i in range(2, 5):
        api.create(builtins.POD, "default", _pod(f"p{i}", spec))
    images = [api.store.get(api.skey(builtins.POD), ("default", f"p{i}"))["spec"]["containers"][0]["image"]
              for i in range(5)]
    assert images == ["app:1", "app:1", "app:1", "edited:1", "app:1"]


def test_a_generated_name_taken_is_drawn_again_from_the_request(monkeypatch: pytest.MonkeyPatch) -> None:
    api = _server()
    spec = {"containers": [{"name": "c", "image": "app:1"}]}
    for i in range(2):
        api.create(builtins.POD, "default", _pod(f"p{i}", spec))
    suffixes = iter(["taken", "taken", "fresh"])
    monkeypatch.setattr(server_module, "_suffix", lambda: next(suffixes))
    api.create(builtins.POD, "default", _pod("g", spec, generate=True))
    answer = api.create(builtins.POD, "default", _pod("g", spec, generate=True))
    assert answer is not None and answer["metadata"]["name"] == "g-fresh"
    assert answer["spec"] == api.store.get(api.skey(builtins.POD), ("default", "p1"))["spec"]
    with pytest.raises(errors.StatusError):  # the name given is taken: nothing shared is touched
        api.create(builtins.POD, "default", _pod("p1", spec))
    assert api.store.get(api.skey(builtins.POD), ("default", "p0"))["spec"] == answer["spec"]


@pytest.mark.parametrize("seed", range(3))
def test_pod_defaults_change_nothing_in_a_defaulted_spec(seed: int) -> None:
    # The shared spec goes through the Pod's create-time defaults again at every create: they must
    # leave a spec they defaulted as it is (setdefault only).
    rng = random.Random(seed)
    for _ in range(50):
        obj = {"spec": _spec(rng)}
        defaults.prepare_for_create("v1", "Pod", obj)
        spec = obj["spec"]
        before = copy.deepcopy(spec)
        ids = [id(spec), *(id(c) for c in spec["containers"])]
        defaults.prepare_for_create("v1", "Pod", {"spec": spec})
        assert json.dumps(spec) == json.dumps(before)
        assert ids == [id(spec), *(id(c) for c in spec["containers"])]


# -- status writes: a remembered conditions list is stored as this server's one copy of it ------------


def _condition(kind: str, status: Any, when: str) -> dict[str, Any]:
    return {"type": kind, "status": status, "lastProbeTime": None, "lastTransitionTime": when}


@pytest.mark.parametrize("seed", range(4))
def test_status_writes_share_a_remembered_conditions_list_and_store_what_copies_store(seed: int) -> None:
    rng = random.Random(seed)
    pool = [[_condition(kind, rng.choice(["True", "False"]), rng.choice(["2026-01-01T00:00:00Z",
                                                                          "2026-01-01T00:00:05Z"]))
             for kind in rng.sample(["Ready", "Initialized", "PodScheduled", "ContainersReady"], rng.randint(1, 4))]
            for _ in range(4)]
    sharing, copying = _server(), _server(copying=True)
    spec = {"containers": [{"name": "c", "image": "app:1"}]}
    for api in (sharing, copying):
        for i in range(4):
            api.create(builtins.POD, "default", _pod(f"p{i}", spec))
    for _ in range(60):
        name = f"p{rng.randrange(4)}"
        conditions = copy.deepcopy(rng.choice(pool))
        if rng.random() < 0.2:
            conditions[0]["status"] = True  # a wrong type: a 400 either way
        answers = []
        for api in (sharing, copying):
            stored = api.store.get(api.skey(builtins.POD), ("default", name))
            body = {**stored, "status": {"phase": "Running", "conditions": copy.deepcopy(conditions)}}
            try:
                answers.append(api.update(builtins.POD, "default", name, body, subresource="status"))
            except errors.StatusError as err:
                answers.append(err.status)
        assert _comparable(answers[0]) == _comparable(answers[1]) if "metadata" in answers[0] \
            else answers[0] == answers[1]
    stored = [api.store.items(api.skey(builtins.POD), "default") for api in (sharing, copying)]
    assert [_comparable(o) for o in stored[0]] == [_comparable(o) for o in stored[1]]
    lists = [o["status"]["conditions"] for o in stored[0] if "conditions" in o["status"]]
    assert len({id(x) for x in lists}) == len({json.dumps(x) for x in lists})  # one object per list
    # The memo's own lists are never stored.
    memo_lists = {id(answer) for _, answer in decoding._LIST_MEMO._entries.values()}
    assert not memo_lists & {id(x) for x in lists}


def test_a_remembered_value_moved_by_the_reused_parts_is_listed_where_it_now_is() -> None:
    # A status write whose spec differs from the stored one (decoded, through the PodSpec memo) while
    # its metadata is the stored one (reused): the answer is rebuilt in the body's order, and the listed
    # places are the answer's.
    api = _server()
    spec = {"containers": [{"name": "c", "image": "app:1"}]}
    other = {"containers": [{"name": "c", "image": "app:2"}]}
    for i in range(2):
        api.create(builtins.POD, "default", _pod(f"p{i}", spec))
        api.create(builtins.POD, "default", _pod(f"q{i}", other))
    stored = api.store.get(api.skey(builtins.POD), ("default", "p1"))
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": stored["metadata"], "spec": copy.deepcopy(other),
            "status": {"conditions": [_condition("Ready", "True", "2026-01-01T00:00:00Z")]}}
    decoding.decode(builtins.POD, copy.deepcopy(body), status_of=stored)  # the conditions remembered
    remembered: list[Any] = []
    decoded = decoding.decode(builtins.POD, body, status_of=stored, remembered=remembered)
    assert {key for _, key, _ in remembered} == {"spec", "conditions"}
    for holder, key, value in remembered:
        assert holder[key] is value
        assert holder is decoded or holder is decoded["status"]
