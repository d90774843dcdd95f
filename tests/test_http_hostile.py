"""Hostile input (issue 17): every malformed request is a 4xx Status that writes nothing, every
limit is upstream's, and the one 500 a client can cause is etcd's ``request is too large``.

Each test is one of the issue's reproductions. The served world runs in-process (Starlette's
TestClient): what matters here is the answer and what the world holds afterwards.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from harness.apiserver import limits, parsing
from harness.apiserver.http import create_app
from harness.world.world import World

NS = "/api/v1/namespaces/default"
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1"},
       "spec": {"containers": [{"name": "c", "image": "i"}]}}
MERGE = {"content-type": "application/merge-patch+json"}
JSON_PATCH = {"content-type": "application/json-patch+json"}
DEEP = ("[" * 1000 + "]" * 1000).encode()
DEEP_OBJECT = ('{"a":' * 1000 + "1" + "}" * 1000).encode()


@pytest.fixture
def world() -> World:
    return World(simulators=[])


@pytest.fixture
def http(world: World) -> Iterator[TestClient]:
    with TestClient(create_app(world), raise_server_exceptions=False) as client:
        yield client


def _status(response: httpx.Response, code: int, reason: str | None = None) -> dict[str, Any]:
    assert response.status_code == code, response.text[:800]
    body = response.json()
    assert body["kind"] == "Status" and body["code"] == code
    if reason is not None:
        assert body.get("reason", "") == reason
    return body


def _snapshot(world: World) -> tuple[int, int]:
    """What a refused request must not change: the resourceVersion and the audit trail."""
    return world.management.store.resource_version, len(world.audit)


def _lists_everything(http: TestClient) -> None:
    for path in ("/api/v1/namespaces", f"{NS}/configmaps", f"{NS}/pods", "/api/v1/pods", "/api/v1/secrets",
                 "/apis/apps/v1/deployments"):
        assert http.get(path).status_code == 200, path
        table = http.get(path, headers={"accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
        assert table.status_code == 200, path


def test_json_nested_1000_deep_is_a_400_on_every_body_endpoint(http: TestClient, world: World) -> None:
    assert http.post(f"{NS}/pods", json=POD).status_code == 201
    before = _snapshot(world)
    for method, path, headers in [
        ("POST", f"{NS}/configmaps", {}),
        ("PUT", f"{NS}/pods/p1", {}),
        ("PUT", f"{NS}/pods/p1/status", {}),
        ("PATCH", f"{NS}/pods/p1", MERGE),
        ("PATCH", f"{NS}/pods/p1", JSON_PATCH),
        ("PATCH", f"{NS}/pods/p1", {"content-type": "application/strategic-merge-patch+json"}),
        ("DELETE", f"{NS}/pods/p1", {}),
        ("POST", f"{NS}/pods/p1/eviction", {}),
        ("POST", f"{NS}/pods/p1/binding", {}),
        ("POST", "/harness/v1/faults", {}),
    ]:
        for body in (DEEP, DEEP_OBJECT):
            answer = http.request(method, path, content=body, headers=headers)
            assert 400 <= answer.status_code < 500, (method, path, answer.text)
    for body in (DEEP, DEEP_OBJECT):
        message = _status(http.post(f"{NS}/configmaps", content=body), 400, "BadRequest")["message"]
        assert "exceeded max depth" in message
    assert _snapshot(world) == before
    _lists_everything(http)


def test_yaml_nested_too_deep_is_a_400(http: TestClient) -> None:
    answer = http.post(f"{NS}/configmaps", content=b"[" * 5000, headers={"content-type": "application/yaml"})
    assert "exceeded max depth" in _status(answer, 400, "BadRequest")["message"]


def test_numbers_past_float64_and_non_finite_constants_are_refused(http: TestClient, world: World) -> None:
    before = _snapshot(world)
    for literal in ("1e400", "-1e400", "Infinity", "-Infinity", "NaN", "9" * 400):
        raw = '{"metadata":{"name":"hf"},"x":' + literal + "}"
        _status(http.post(f"{NS}/configmaps", content=raw), 400, "BadRequest")
    message = http.post(f"{NS}/configmaps", content='{"metadata":{"name":"hf"},"x":1e400}').json()["message"]
    assert message == "json: cannot unmarshal number 1e400 into Go value of type float64"
    assert http.post(f"{NS}/configmaps", json={"metadata": {"name": "ok"}, "data": {"a": "1"}}).status_code == 201
    _status(http.patch(f"{NS}/configmaps/ok", content='{"x":1e400}', headers=MERGE), 400, "BadRequest")
    assert world.management.store.resource_version == before[0] + 1
    _lists_everything(http)


def test_a_475_byte_yaml_alias_bomb_is_refused_at_once(http: TestClient, world: World) -> None:
    lines = ["metadata: {name: bomb}", 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    bomb = "\n".join(lines).encode()
    assert len(bomb) < 500  # 9**9 "lol"s once expanded: hundreds of megabytes
    before = _snapshot(world)
    started = time.monotonic()
    answer = http.post(f"{NS}/configmaps", content=bomb, headers={"content-type": "application/yaml"})
    assert time.monotonic() - started < 2.0
    assert _status(answer, 400, "BadRequest")["message"].endswith("yaml: document contains excessive aliasing")
    apply = http.patch(f"{NS}/configmaps/bomb?fieldManager=m", content=bomb,
                       headers={"content-type": "application/apply-patch+yaml"})
    _status(apply, 400, "BadRequest")
    assert _snapshot(world) == before


def test_a_few_yaml_aliases_are_expanded(http: TestClient) -> None:
    body = b"metadata: {name: a, labels: &l {x: y}}\ndata:\n  k: &v hello\n  j: *v\n"
    answer = http.post(f"{NS}/configmaps", content=body, headers={"content-type": "application/yaml"})
    assert answer.status_code == 201, answer.text
    assert answer.json()["data"] == {"k": "hello", "j": "hello"}


def test_lone_surrogates_become_replacement_characters(http: TestClient, world: World) -> None:
    before = _snapshot(world)
    answer = http.post(f"{NS}/configmaps", content=b'{"metadata":{"name":"a\\ud800"}}')
    _status(answer, 422, "Invalid")  # U+FFFD is no DNS-1123 character, as upstream finds
    assert _snapshot(world) == before
    stored = http.post(f"{NS}/configmaps", content=b'{"metadata":{"name":"s"},"data":{"k":"x\\udc00y"}}')
    assert stored.status_code == 201, stored.text
    assert stored.json()["data"]["k"] == "x\ufffdy"
    _lists_everything(http)


def test_a_continue_token_carrying_infinity_or_garbage_is_a_400(http: TestClient) -> None:
    import base64

    for raw in (b'{"v":"meta.k8s.io/v1","rv":Infinity,"start":"a/b"}', b'{"rv":1e400,"start":"x"}',
                b'{"rv":1e300,"start":"x"}', b"[" * 2000, b"\xff\xfe", b'"just a string"'):
        token = base64.urlsafe_b64encode(raw).decode().rstrip("=")
        body = _status(http.get(f"{NS}/configmaps?limit=1&continue={token}"), 400, "BadRequest")
        assert body["message"].startswith("continue key is not valid")
    _status(http.get(f"{NS}/configmaps?limit=1&continue=%%%"), 400, "BadRequest")


def test_delete_options_of_the_wrong_shape_are_a_400_before_anything_changes(http: TestClient, world: World) -> None:
    assert http.post(f"{NS}/pods", json=POD).status_code == 201
    before = _snapshot(world)
    for options in ({"preconditions": 5}, {"preconditions": "x"}, {"preconditions": {"uid": 5}},
                    {"gracePeriodSeconds": "x"}, {"gracePeriodSeconds": 1.5}, {"dryRun": "All"},
                    {"orphanDependents": "yes"}, {"propagationPolicy": 1}, [1], "x", 5):
        answer = http.request("DELETE", f"{NS}/pods/p1", content=json.dumps(options))
        _status(answer, 400, "BadRequest")
    message = http.request("DELETE", f"{NS}/pods/p1", content='{"preconditions":5}').json()["message"]
    assert message == ('DeleteOptions in version "v1" cannot be handled as a DeleteOptions: json: cannot unmarshal '
                       "number into Go struct field DeleteOptions.preconditions of type v1.Preconditions")
    assert _snapshot(world) == before


def _eviction(options: Any) -> dict[str, Any]:
    return {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p1"}, "deleteOptions": options}


def test_an_eviction_with_bad_delete_options_leaves_nothing_behind(http: TestClient, world: World) -> None:
    pod = {**POD, "spec": {**POD["spec"], "nodeName": "n1"}}
    assert http.post(f"{NS}/pods", json=pod).status_code == 201
    status = {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
    assert http.patch(f"{NS}/pods/p1/status", json=status, headers=MERGE).status_code == 200
    pdb = {"metadata": {"name": "b"}, "spec": {"minAvailable": 0, "selector": {}}}
    assert http.post("/apis/policy/v1/namespaces/default/poddisruptionbudgets", json=pdb).status_code == 201
    world.settle()
    before = _snapshot(world)
    for options in ({"gracePeriodSeconds": "x"}, {"preconditions": 5}, 5, "x", [1]):
        answer = http.post(f"{NS}/pods/p1/eviction", json=_eviction(options))
        body = _status(answer, 400, "BadRequest")
        assert body["message"].startswith('Eviction in version "v1" cannot be handled as a Eviction: json: ')
    message = http.post(f"{NS}/pods/p1/eviction", json=_eviction({"gracePeriodSeconds": "x"})).json()["message"]
    assert message.endswith("Go struct field DeleteOptions.deleteOptions.gracePeriodSeconds of type int64")
    assert _snapshot(world) == before
    conditions = http.get(f"{NS}/pods/p1").json()["status"]["conditions"]
    assert [c["type"] for c in conditions] == ["Ready"]
    assert "disruptedPods" not in (http.get("/apis/policy/v1/namespaces/default/poddisruptionbudgets/b")
                                   .json().get("status") or {})


def test_an_eviction_the_delete_would_refuse_spends_no_budget(http: TestClient, world: World) -> None:
    pod = {**POD, "spec": {**POD["spec"], "nodeName": "n1"}}
    assert http.post(f"{NS}/pods", json=pod).status_code == 201
    status = {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
    assert http.patch(f"{NS}/pods/p1/status", json=status, headers=MERGE).status_code == 200
    pdb = {"metadata": {"name": "b"}, "spec": {"maxUnavailable": 1, "selector": {}}}
    pdbs = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"
    assert http.post(pdbs, json=pdb).status_code == 201
    # What the disruption controller (not running here) would have written.
    observed = {"status": {"observedGeneration": 1, "disruptionsAllowed": 1, "currentHealthy": 1,
                           "desiredHealthy": 0, "expectedPods": 1}}
    assert http.patch(f"{pdbs}/b/status", json=observed, headers=MERGE).status_code == 200

    def refuse(operation: str, rt: Any, new: Any, old: Any) -> list[Any]:
        from harness.kube import errors

        if operation == "DELETE":
            raise errors.forbidden_error("pods", "", "p1", "deletes are closed today")
        return []

    world.management.add_admission("", "Pod", refuse)
    before = _snapshot(world)
    _status(http.post(f"{NS}/pods/p1/eviction", json=_eviction(None)), 403, "Forbidden")
    assert _snapshot(world) == before
    pdb_status = http.get("/apis/policy/v1/namespaces/default/poddisruptionbudgets/b").json()["status"]
    assert not pdb_status.get("disruptedPods")


def test_seventeen_json_patch_copies_cannot_build_megabytes(http: TestClient, world: World) -> None:
    assert http.post(f"{NS}/configmaps", json={"metadata": {"name": "c"}, "data": {"k": "x" * 700}}).status_code == 201
    # Each copy doubles /data: unchecked, 17 of them would build about 90 MB.
    ops = [{"op": "copy", "from": "/data", "path": f"/data/{i}"} for i in range(17)]
    raw = json.dumps(ops, separators=(",", ":"))
    assert len(raw) < 850
    before = _snapshot(world)
    body = _status(http.patch(f"{NS}/configmaps/c", content=raw, headers=JSON_PATCH), 422, "Invalid")
    assert body["message"] == "the server rejected our request due to an error in our request"
    assert _snapshot(world) == before


def test_configmap_and_secret_data_over_one_mebibyte_are_422(http: TestClient, world: World) -> None:
    before = _snapshot(world)
    big = "x" * (limits.MAX_DATA_BYTES + 1)
    body = _status(http.post(f"{NS}/configmaps", json={"metadata": {"name": "big"}, "data": {"k": big}}), 422,
                   "Invalid")
    assert body["message"] == 'ConfigMap "big" is invalid: []: Too long: may not be more than 1048576 bytes'
    body = _status(http.post(f"{NS}/secrets", json={"metadata": {"name": "big"}, "stringData": {"k": big}}), 422,
                   "Invalid")
    assert body["message"] == 'Secret "big" is invalid: data: Too long: may not be more than 1048576 bytes'
    assert _snapshot(world) == before
    fits = "x" * (limits.MAX_DATA_BYTES - 10)
    assert http.post(f"{NS}/configmaps", json={"metadata": {"name": "fits"}, "data": {"k": fits}}).status_code == 201


def test_objects_over_etcds_limit_are_its_500_and_nothing_is_stored(http: TestClient, world: World) -> None:
    huge = {**POD, "spec": {"containers": [{"name": "c", "image": "i", "args": ["x" * 1_700_000]}]}}
    before = _snapshot(world)
    body = _status(http.post(f"{NS}/pods", json=huge), 500)
    assert body["message"] == "etcdserver: request is too large" and "reason" not in body
    assert _snapshot(world) == before
    # A patch whose result is too large: refused the same way, the stored object unchanged.
    assert http.post(f"{NS}/pods", json={**POD, "metadata": {"name": "h"}}).status_code == 201
    half = {"status": {"message": "y" * 900_000}}
    assert http.patch(f"{NS}/pods/h/status", json=half, headers=MERGE).status_code == 200
    before = _snapshot(world)
    grow = {"status": {"reason": "z" * 900_000}}
    _status(http.patch(f"{NS}/pods/h/status", json=grow, headers=MERGE), 500)
    assert _snapshot(world) == before
    assert "reason" not in http.get(f"{NS}/pods/h").json()["status"]
    _lists_everything(http)


def test_a_pod_with_a_bad_node_name_never_exists_without_its_audit_record(http: TestClient, world: World) -> None:
    pod = {**POD, "spec": {**POD["spec"], "nodeName": ["n"]}}
    answer = http.post(f"{NS}/pods", json=pod)
    assert answer.status_code < 500, answer.text
    exists = http.get(f"{NS}/pods/p1").status_code == 200
    audited = bool(world.audit.query(resource="pods", name="p1", verb="create"))
    assert exists == audited == (answer.status_code == 201)
    _lists_everything(http)
    assert http.get("/api/v1/pods?fieldSelector=spec.nodeName%3Dn").status_code == 200


def test_a_server_bug_is_a_500_status_with_its_traceback_in_the_log(
    http: TestClient, world: World, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(operation: str, rt: Any, new: Any, old: Any) -> list[Any]:
        raise RuntimeError("a bug in an admission plugin")

    world.management.add_admission("", "ConfigMap", broken)
    with caplog.at_level(logging.ERROR, logger="lifecycle_tck.http"):
        body = _status(http.post(f"{NS}/configmaps", json={"metadata": {"name": "x"}}), 500, "InternalError")
    assert "a bug in an admission plugin" in body["message"]
    logged = [r for r in caplog.records if r.exc_info]
    assert logged and "a bug in an admission plugin" in str(logged[0].exc_info[1])


def test_bodies_over_3_mib_stay_a_413(http: TestClient) -> None:
    answer = http.post(f"{NS}/configmaps", content=b"{" + b" " * (3 * 1024 * 1024) + b"}")
    _status(answer, 413, "RequestEntityTooLarge")


def test_the_depth_limit_leaves_every_layer_room_to_recurse() -> None:
    # The deepest accepted body still passes through copies, JSON encoding and the audit diff.
    from harness.apiserver.audit import AuditRecord

    value: Any = 1
    for _ in range(parsing.MAX_DEPTH):
        value = {"a": value}
    decoded = parsing.loads_json(json.dumps(value))
    record = AuditRecord(seq=1, time=0, cluster="m", verb="update", resource="x", subresource="", namespace="",
                         name="n", user="u", code=200, old={"v": 1}, new={"v": decoded})
    assert record.to_dict()["diff"]
    with pytest.raises(parsing.DecodeError):
        parsing.loads_json(json.dumps({"a": value}))


def test_yaml_the_reader_cannot_decode_or_numbers_of_thousands_of_digits_are_a_400(
    http: TestClient, world: World
) -> None:
    # Both were 500s the fuzz suite found (tests/fuzz/).
    before = _snapshot(world)
    yaml_type = {"content-type": "application/yaml"}
    _status(http.post(f"{NS}/pods", content=b"\xff\xfe\x00", headers=yaml_type), 400, "BadRequest")
    _status(http.post(f"{NS}/pods", content=b"metadata: {name: " + b"9" * 5000 + b"}", headers=yaml_type), 400,
            "BadRequest")
    _status(http.post(f"{NS}/pods", content=b"metadata: {name: " + b"9" * 400 + b"}", headers=yaml_type), 400,
            "BadRequest")
    assert _snapshot(world) == before


def test_the_reference_extension_refuses_deep_or_non_finite_bodies_with_a_400() -> None:
    from harness.world.extension.app import HOOKS_PREFIX
    from harness.world.extension.app import create_app as extension_app
    from harness.world.extension.responses import HookResponder

    responder = HookResponder()
    with TestClient(extension_app(responder), raise_server_exceptions=False) as client:
        for body in (DEEP, DEEP_OBJECT, b'{"a":1e400}', b'{"a":NaN}'):
            answer = client.post(f"{HOOKS_PREFIX}/beforeclustercreate/h", content=body)
            assert answer.status_code == 400, answer.text[:300]
            answer = client.post("/admin/answers", content=body, headers={"content-type": "application/json"})
            assert answer.status_code == 400
        assert client.post(f"{HOOKS_PREFIX}/beforeclustercreate/h", content=b"{" + b" " * (4 * 1024 * 1024) + b"}"
                           ).status_code == 400
    assert not responder.calls_of(None)
