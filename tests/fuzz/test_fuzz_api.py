"""Property-based fuzzing of the served API (issue 17): whatever a client sends, the answer is a
success or a 4xx ``Status`` (the one 500 allowed is etcd's ``request is too large``), a refused
request writes nothing (no object, resourceVersion or audit record), and every collection still
lists afterwards.

The requests cover core, apps and CRD-backed resources, the status, scale, eviction, binding and
finalize subresources, list query parameters, the four patch types and the body media types (JSON,
YAML, protobuf, text). Bodies are valid objects with one field replaced by arbitrary JSON, arbitrary
JSON, or hand-made hostile bytes (deep nesting, out-of-range numbers, alias bombs, surrogates).

CI runs it derandomized (a fixed seed) with a bounded number of examples; ``FUZZ_EXAMPLES`` raises
the count for a longer local run. One world serves every example of a test, so state carries over
between examples, as it would for a client throwing requests at ``serve``.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from harness.apiserver.http import create_app
from harness.world.world import World
from tests.manifests import crd

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "100"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    derandomize=True,  # a fixed seed: CI sees the same requests every run
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
ETCD_TOO_LARGE = "etcdserver: request is too large"
NS = "/api/v1/namespaces/default"
APPS = "/apis/apps/v1/namespaces/default"
POLICY = "/apis/policy/v1/namespaces/default"
CR = "/apis/fuzz.example.com/v1/namespaces/default"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"

CRD = crd("Widget", group="fuzz.example.com", status_subresource=True, schema={"type": "object", "properties": {
    "spec": {"type": "object", "properties": {"size": {"type": "integer"}, "colour": {"type": "string"},
                                              "parts": {"type": "array", "items": {"type": "string"}}}},
    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}})
CONTAINERS = [{"name": "c", "image": "i"}]
TEMPLATES: dict[str, dict[str, Any]] = {
    "pods": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "labels": {"app": "a"}},
             "spec": {"containers": CONTAINERS, "nodeName": "n1"}},
    "configmaps": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c1"}, "data": {"k": "v"}},
    "secrets": {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s1"}, "data": {"k": "dg=="},
                "type": "Opaque"},
    "namespaces": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns1"}},
    "deployments": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d1"},
                    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "a"}},
                             "template": {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": CONTAINERS}}}},
    "poddisruptionbudgets": {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "b1"},
                             "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "a"}}}},
    "widgets": {"apiVersion": "fuzz.example.com/v1", "kind": "Widget", "metadata": {"name": "w1"},
                "spec": {"size": 1, "colour": "red", "parts": ["a"]}},
    "eviction": {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p1"},
                 "deleteOptions": {"gracePeriodSeconds": 0}},
    "binding": {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p1"}, "target": {"name": "n1"}},
    "scale": {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "d1"}, "spec": {"replicas": 2}},
    "finalize": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns1"}, "spec": {"finalizers": []}},
    "deleteoptions": {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0,
                      "preconditions": {"uid": "x"}, "propagationPolicy": "Background", "dryRun": ["All"]},
}
COLLECTIONS = {
    "pods": f"{NS}/pods", "configmaps": f"{NS}/configmaps", "secrets": f"{NS}/secrets",
    "namespaces": "/api/v1/namespaces", "deployments": f"{APPS}/deployments",
    "poddisruptionbudgets": f"{POLICY}/poddisruptionbudgets", "widgets": f"{CR}/widgets",
}
# (method, path, template of its body)
ENDPOINTS: list[tuple[str, str, str]] = []
for _kind, _collection in COLLECTIONS.items():
    _name = TEMPLATES[_kind]["metadata"]["name"]
    ENDPOINTS += [("POST", _collection, _kind), ("PUT", f"{_collection}/{_name}", _kind),
                  ("PATCH", f"{_collection}/{_name}", _kind), ("DELETE", f"{_collection}/{_name}", "deleteoptions"),
                  ("GET", _collection, _kind),
                  ("GET", f"{_collection}/{_name}", _kind)]
# Collections are deleted with a selector: deleting every namespace would end the run's usefulness
# (without the namespace controller, a deleted "default" stays Terminating and refuses all creates).
ENDPOINTS += [("DELETE", f"{path}?labelSelector=fuzz%3Dyes", "deleteoptions") for path in COLLECTIONS.values()]
ENDPOINTS += [
    ("PUT", f"{NS}/pods/p1/status", "pods"), ("PATCH", f"{NS}/pods/p1/status", "pods"),
    ("POST", f"{NS}/pods/p1/eviction", "eviction"), ("POST", f"{NS}/pods/p2/eviction", "eviction"),
    ("POST", f"{NS}/pods/p1/binding", "binding"), ("POST", f"{NS}/pods/p2/binding", "binding"),
    ("GET", f"{APPS}/deployments/d1/scale", "scale"), ("PUT", f"{APPS}/deployments/d1/scale", "scale"),
    ("PATCH", f"{APPS}/deployments/d1/scale", "scale"), ("PUT", f"{APPS}/deployments/d1/status", "deployments"),
    ("PATCH", f"{APPS}/deployments/d1/status", "deployments"), ("PUT", "/api/v1/namespaces/ns1/finalize", "finalize"),
    ("PUT", f"{CR}/widgets/w1/status", "widgets"), ("PATCH", f"{CR}/widgets/w1/status", "widgets"),
]

JSON_CT = "application/json"
MEDIA_TYPES = [JSON_CT, "application/yaml", "application/vnd.kubernetes.protobuf", "text/plain", None,
               "application/json; charset=utf-8"]
PATCH_TYPES = ["application/merge-patch+json", "application/json-patch+json",
               "application/strategic-merge-patch+json", "application/apply-patch+yaml", JSON_CT, None]

ALIAS_BOMB = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{n}: &{n} [" + ",".join([f"*{p}"] * 9) + "]\n" for p, n in zip("abcdefgh", "bcdefghi"))
HOSTILE = [
    b"", b"null", b"[]", b"5", b'"x"', b"{", b"{}", b"[" * 3000, b'{"a":' * 3000, b'{"a":1e400}', b"NaN",
    b'{"metadata":{"name":"x"},"x":Infinity}', b'{"metadata":{"name":"a\\ud800"}}', b"\xff\xfe\x00",
    b'{"metadata":{"name":' + b"9" * 5000 + b"}}", ALIAS_BOMB.encode(), b"a: &a [*a]", b"- - - - - - x",
    b"\x6b\x38\x73\x00garbage", b'{"metadata":5}', b'{"metadata":{"name":"x","labels":[1]}}',
    b'{"apiVersion":["v1"],"kind":{},"metadata":{"name":"x"}}', b'[{"op":"copy","from":"","path":"/x"}]' * 1,
    b'{"metadata":{"name":"x","annotations":{"a":"' + b"z" * 300_000 + b'"}}}',
]


def _json_values() -> st.SearchStrategy[Any]:
    scalars = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
               | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12))
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
        max_leaves=8,
    )


def _paths(value: Any, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))


def _replace(value: Any, path: tuple[str, ...], new: Any) -> Any:
    if not path:
        return new
    out = dict(value)
    out[path[0]] = _replace(value.get(path[0], {}), path[1:], new)
    return out


@st.composite
def mutated(draw: st.DrawFn, template: dict[str, Any]) -> Any:
    """A valid body with one field (or a new one) replaced by arbitrary JSON."""
    path = draw(st.sampled_from(list(_paths(template))))
    target: Any = template
    for key in path:
        target = target[key]
    if isinstance(target, dict) and draw(st.booleans()):
        # A field the template does not have (the key is added, not replaced).
        path = (*path, draw(st.sampled_from(["name", "x", "spec", "status", "nodeName", "finalizers"])))
    return _replace(template, path, draw(_json_values()))


CONFUSING = [5, -1, 1.5, True, None, "x", "", [], ["x"], [1], {}, {"x": 1}]


@st.composite
def confused(draw: st.DrawFn, template: dict[str, Any]) -> Any:
    """A valid body with one field given a value of another JSON type (``name: 5``, ``template: null``)."""
    path = draw(st.sampled_from([p for p in _paths(template) if p]))
    target: Any = template
    for key in path:
        target = target[key]
    value = draw(st.sampled_from([v for v in CONFUSING if type(v) is not type(target)]))
    return _replace(template, path, value)


def _json_patch_ops(template: dict[str, Any]) -> st.SearchStrategy[list[dict[str, Any]]]:
    pointers = ["/" + "/".join(p) for p in _paths(template) if p] + ["", "/", "/x/y", "/spec/-", "/metadata/labels/a"]
    op = st.fixed_dictionaries(
        {"op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "bogus"]),
         "path": st.sampled_from(pointers)},
        optional={"value": _json_values(), "from": st.sampled_from(pointers)},
    )
    return st.lists(op, max_size=6)


def _encode(body: Any, media_type: str | None) -> bytes:
    if media_type and "yaml" in media_type:
        import yaml

        return yaml.safe_dump(body).encode()
    return json.dumps(body).encode()


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, str, dict[str, str], bytes, dict[str, str]]:
    """(method, path, headers, body, query) of one request."""
    method, path, kind = draw(st.sampled_from(ENDPOINTS))
    template = TEMPLATES[kind]
    if method == "POST" and path in COLLECTIONS.values():
        # New names, so that creates get past "already exists" (the selector deletes find them).
        meta = {**template["metadata"], "name": draw(st.sampled_from(["f1", "f2", "f3"]))}
        template = {**template, "metadata": {**meta, "labels": {**meta.get("labels", {}), "fuzz": "yes"}}}
    media = draw(st.sampled_from(PATCH_TYPES if method == "PATCH" else MEDIA_TYPES))
    shape = draw(st.sampled_from(["mutated", "confused", "confused", "valid", "valid", "hostile", "json", "ops"]))
    if shape == "confused":
        body = _encode(draw(confused(template)), media)
    elif shape == "hostile":
        body = draw(st.sampled_from(HOSTILE))
    elif shape == "ops":
        body = json.dumps(draw(_json_patch_ops(template))).encode()
    elif shape == "json":
        body = _encode(draw(_json_values()), media)
    elif shape == "valid":
        body = _encode(template, media)
    else:
        body = _encode(draw(mutated(template)), media)
    if method == "GET":
        body = b""
    # Most requests carry no query, so that their bodies get past the options checks.
    query = {} if draw(st.integers(0, 2)) else draw(st.dictionaries(
        st.sampled_from(["dryRun", "fieldManager", "force", "labelSelector", "fieldSelector", "limit", "continue",
                         "resourceVersion", "gracePeriodSeconds", "propagationPolicy", "fieldValidation", "pretty",
                         "orphanDependents", "includeObject"]),
        st.sampled_from(["All", "x", "", "1", "-1", "true", "app=a", "metadata.name=p1", "spec.nodeName=n1",
                         "Strict", "Background", "a in (b", "99999999999999999999", "eyJydiI6MX0", "\u0000"]),
        max_size=3,
    ))
    headers = {"content-type": media} if media else {}
    if draw(st.booleans()):
        headers["accept"] = draw(st.sampled_from([JSON_CT, TABLE, "application/yaml", "text/html"]))
    return method, path, headers, body, query


@dataclass
class Fuzzed:
    """The served world of a fuzz test, and the in-process client to it."""

    test: str
    world: World
    http: TestClient

    def rv(self) -> int:
        return self.world.management.store.resource_version

    def reseed(self) -> None:
        """Create again the objects the endpoints name that earlier examples deleted, so that every
        example finds something to update, patch, evict or bind."""
        seeds = [(COLLECTIONS[kind], TEMPLATES[kind]) for kind in
                 ("namespaces", "pods", "configmaps", "secrets", "deployments", "poddisruptionbudgets", "widgets")]
        seeds.append((COLLECTIONS["pods"], {**TEMPLATES["pods"], "metadata": {"name": "p2"},
                                            "spec": {"containers": CONTAINERS}}))
        for collection, body in seeds:
            if self.http.get(f"{collection}/{body['metadata']['name']}").status_code == 404:
                self.http.post(collection, json={**body, "metadata": {**body["metadata"], "labels": {"fuzz": "yes"}}})


_WORLDS: dict[str, Fuzzed] = {}


def _fuzzed(test: str) -> Fuzzed:
    """The world of fuzz test ``test`` (each test has its own, so a run does not depend on which
    tests ran before it in the same process)."""
    if test in _WORLDS:
        return _WORLDS[test]
    # No simulators or controllers: only the requests write, so every change is the fuzzer's.
    world = World(simulators=[], controllers=[], crds=False)
    http = TestClient(create_app(world), raise_server_exceptions=False)
    assert http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=CRD).status_code == 201
    world.settle()
    fuzzed = Fuzzed(test, world, http)
    fuzzed.reseed()
    _WORLDS[test] = fuzzed
    return fuzzed


ANSWERS: Counter[tuple[str, int]] = Counter()  # what the fuzzer got, for a look at its reach


def _lists_everything(fuzzed: Fuzzed, cause: tuple[str, str, dict[str, str], bytes, dict[str, str]]) -> None:
    """Every collection lists, as JSON and as a Table (``cause``: the request just made)."""
    for path in COLLECTIONS.values():
        for headers in ({}, {"accept": TABLE}):
            answer = fuzzed.http.get(path, headers=headers)
            assert answer.status_code == 200, (path, answer.text[:500])


def _check(fuzzed: Fuzzed, method: str, path: str, headers: dict[str, str], body: bytes,
           query: dict[str, str]) -> None:
    fuzzed.reseed()
    rv, audited = fuzzed.rv(), len(fuzzed.world.audit)
    answer = fuzzed.http.request(method, path, content=body, headers=headers, params=query)
    code = answer.status_code
    ANSWERS[(method, code)] += 1
    described = (method, path, headers, body[:300], query, code, answer.text[:500])
    if code >= 400:
        status = answer.json()
        assert status.get("kind") == "Status" and status.get("code") == code, described
    assert code < 500 or answer.json().get("message") == ETCD_TOO_LARGE, described
    if code >= 400:
        # Nothing half-written: no new resourceVersion, no audit record.
        assert (fuzzed.rv(), len(fuzzed.world.audit)) == (rv, audited), described
    elif fuzzed.rv() != rv:
        # Every accepted write has its audit record.
        assert len(fuzzed.world.audit) > audited, described
    _lists_everything(fuzzed, (method, path, headers, body[:300], query))


@SETTINGS
@given(requests())
def test_any_request_is_a_status_or_a_success_and_refusals_write_nothing(
    request: tuple[str, str, dict[str, str], bytes, dict[str, str]],
) -> None:
    _check(_fuzzed("any"), *request)


@SETTINGS
@given(st.sampled_from(ENDPOINTS), st.sampled_from(HOSTILE),
       st.sampled_from(MEDIA_TYPES + PATCH_TYPES))
def test_every_hostile_body_on_every_endpoint(endpoint: tuple[str, str, str], body: bytes, media: str | None) -> None:
    method, path, _ = endpoint
    _check(_fuzzed("hostile"), method, path, {"content-type": media} if media else {}, body, {})


@SETTINGS
@given(st.data())
def test_a_field_of_the_wrong_type_on_any_write_is_refused_or_stored_whole(data: st.DataObject) -> None:
    method, path, kind = data.draw(st.sampled_from([e for e in ENDPOINTS if e[0] in ("POST", "PUT", "PATCH")]))
    template = TEMPLATES[kind]
    if method == "POST" and path in COLLECTIONS.values():
        template = {**template, "metadata": {**template["metadata"], "name": "t1", "labels": {"fuzz": "yes"}}}
    body = json.dumps(data.draw(confused(template))).encode()
    media = "application/merge-patch+json" if method == "PATCH" else JSON_CT
    fuzzed = _fuzzed("types")
    _check(fuzzed, method, path, {"content-type": media}, body, {})
    if path in COLLECTIONS.values():
        _fuzzed("types").http.delete(f"{path}/t1")  # the next example creates t1 afresh
