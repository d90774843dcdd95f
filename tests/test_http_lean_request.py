"""The facade's cheaper request look-ups (harness/apiserver/http/leanrequest.py) and its direct JSON
``Response`` answer exactly what Starlette's own classes answer, on random headers, queries and bodies."""

from __future__ import annotations

import random

import pytest
from starlette.datastructures import Headers, QueryParams
from starlette.requests import Request
from starlette.responses import Response

from harness.apiserver.http.leanrequest import NO_QUERY, LeanHeaders, LeanQueryParams, LeanRequest
from harness.apiserver.http.responses import encode, json_response
from harness.kube.names.meta import JSON_CONTENT_TYPE

NAMES = ["authorization", "impersonate-user", "content-type", "user-agent", "content-length", "accept", "host",
         "x-forwarded-proto", "Content-Type", "ACCEPT", "audit-id", "é-header"]
ASKED = [*NAMES, "missing", "Authorization", "USER-AGENT", "Impersonate-User"]
PARAMS = ["watch", "dryRun", "fieldValidation", "fieldManager", "limit", "continue", "labelSelector", "a b", "é"]


def _random_headers(rng: random.Random) -> list[tuple[bytes, bytes]]:
    # ASGI servers give lower-cased names; upper-case ones are kept here too, to compare on them as well.
    return [(rng.choice(NAMES).lower().encode("latin-1") if rng.random() < 0.9 else rng.choice(NAMES).encode("latin-1"),
             rng.choice([b"", b"x", b"Bearer t", b"application/json", "caf\xe9".encode("latin-1")]))
            for _ in range(rng.randrange(0, 9))]


def _random_query(rng: random.Random) -> bytes:
    parts = [f"{rng.choice(PARAMS)}={rng.choice(['', '1', 'true', 'All', 'x%20y', '%C3%A9', 'a+b'])}"
             for _ in range(rng.randrange(0, 6))]
    if rng.random() < 0.2:
        parts.append(rng.choice(PARAMS))  # a parameter without a value
    return "&".join(parts).encode()


def _scope(headers: list[tuple[bytes, bytes]], query: bytes) -> dict[str, object]:
    return {"type": "http", "method": "POST", "path": "/api/v1/namespaces/default/pods", "query_string": query,
            "headers": headers, "root_path": "", "scheme": "http", "server": ("127.0.0.1", 8080)}


@pytest.mark.parametrize("seed", range(20))
def test_lean_headers_answer_as_starlettes_headers(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(50):
        raw = _random_headers(rng)
        lean, plain = LeanHeaders(raw=list(raw)), Headers(raw=list(raw))
        for name in ASKED:
            assert lean.get(name) == plain.get(name)
            assert lean.get(name, "d") == plain.get(name, "d")
            assert (name in lean) == (name in plain)
            assert lean.getlist(name) == plain.getlist(name)
        assert lean.items() == plain.items()
        assert lean == plain and plain == lean and repr(lean) == repr(plain)


@pytest.mark.parametrize("seed", range(20))
def test_lean_query_params_answer_as_starlettes(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(50):
        query = _random_query(rng)
        lean, plain = LeanQueryParams(query), QueryParams(query)
        for name in [*PARAMS, "missing"]:
            assert lean.get(name) == plain.get(name)
            assert lean.get(name, "d") == plain.get(name, "d")
            assert lean.getlist(name) == plain.getlist(name)
            assert (name in lean) == (name in plain)
        assert lean.multi_items() == plain.multi_items()
        assert str(lean) == str(plain) and repr(lean) == repr(plain)
        assert lean == plain and plain == lean


@pytest.mark.parametrize("seed", range(10))
def test_a_lean_request_reads_what_starlettes_request_reads(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(50):
        headers, query = _random_headers(rng), _random_query(rng)
        lean, plain = LeanRequest(_scope(list(headers), query)), Request(_scope(list(headers), query))
        assert lean.headers == plain.headers
        assert lean.headers.raw == plain.headers.raw
        assert lean.query_params == plain.query_params
        assert lean.query_params.multi_items() == plain.query_params.multi_items()
        for name in ASKED:
            assert lean.headers.get(name) == plain.headers.get(name)
        for name in [*PARAMS, "missing"]:
            assert lean.query_params.get(name) == plain.query_params.get(name)
        assert str(lean.url) == str(plain.url)


def test_requests_without_a_query_share_one_empty_query() -> None:
    first, second = LeanRequest(_scope([], b"")), LeanRequest(_scope([], b""))
    assert first.query_params is NO_QUERY and second.query_params is NO_QUERY
    assert len(NO_QUERY) == 0 and QueryParams(b"") == NO_QUERY and NO_QUERY.get("watch") is None


BODIES = [{"kind": "Pod", "metadata": {"name": "p"}}, [], {"items": [1, 2, "é"]}, {"kind": "Status", "code": 404}]


@pytest.mark.parametrize("status", [200, 201, 202, 204, 304, 404, 422, 500, 100])
@pytest.mark.parametrize("body", BODIES)
@pytest.mark.parametrize("headers", [None, {"Retry-After": "1"}, {"content-type": "text/plain"}])
@pytest.mark.parametrize("media_type", [JSON_CONTENT_TYPE, "application/json;g=apidiscovery.k8s.io"])
def test_a_json_response_is_the_response_starlette_builds(status: int, body: object, headers: dict[str, str] | None,
                                                        media_type: str) -> None:
    built = json_response(body, status, headers=headers, media_type=media_type)
    plain = Response(encode(body) + b"\n", status_code=status, headers=headers, media_type=media_type)
    assert type(built) is Response
    assert (built.status_code, built.body, built.raw_headers, built.media_type, built.background) == (
        plain.status_code, plain.body, plain.raw_headers, plain.media_type, plain.background)
    assert built.headers.items() == plain.headers.items()
    # Every attribute Response.__init__ sets (a newer Starlette may set more): built without the call,
    # the response must still have them all, alike.
    assert {k: v for k, v in vars(built).items() if k != "_headers"} == {
        k: v for k, v in vars(plain).items() if k != "_headers"}
    assert vars(built).keys() == vars(plain).keys()
