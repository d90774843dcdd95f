"""The admin API as a typed API: its OpenAPI document and offline docs, validation errors as
``Status`` bodies, checked knobs and cluster names, bounded clock advances that leave the server
answering, and the browser checks (Origin, Content-Type, Host)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_http_fixtures import Served, serving

from harness.apiserver.http import create_app, run_server
from harness.apiserver.http.admin import MAX_ADVANCE_SECONDS
from harness.apiserver.http.guard import HostCheck
from harness.clock import EPOCH
from harness.world.world import World

ADVANCE = "/harness/v1/clock/advance"
REQUEST_TIMEOUT = 30.0


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    yield from serving(tmp_path, simulators=["namespace", "kubelet"])


def _is_status(answer: httpx.Response, code: int) -> dict[str, Any]:
    body = answer.json()
    assert answer.status_code == code, body
    assert body["kind"] == "Status" and body["code"] == code and "detail" not in body
    return body  # type: ignore[no-any-return]


def test_the_openapi_document_describes_the_typed_endpoints(served: Served) -> None:
    with served.http() as http:
        document = http.get("/harness/v1/openapi.json").json()
    advance = document["paths"]["/clock/advance"]["post"]
    schema_ref = advance["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    advance_schema = document["components"]["schemas"][schema_ref.rsplit("/", 1)[1]]
    assert set(advance_schema["properties"]) == {"seconds", "to", "stopAfterWrite"}
    assert {"/clock", "/audit", "/faults", "/clusters", "/simulators/{name}", "/controllers/restart"} <= set(
        document["paths"])
    assert document["servers"] == [{"url": "/harness/v1"}]


def test_the_docs_page_loads_its_assets_from_the_server_not_a_cdn(served: Served) -> None:
    with served.http() as http:
        page = http.get("/harness/v1/docs")
        script = http.get("/harness/v1/docs-assets/swagger-ui-bundle.js")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "/harness/v1/docs-assets/swagger-ui-bundle.js" in page.text
    assert "/harness/v1/openapi.json" in page.text
    assert "cdn" not in page.text.lower() and "https://" not in page.text
    assert script.status_code == 200 and len(script.content) > 100_000


@pytest.mark.parametrize(("body", "names"), [
    ('{"seconds": 1, "second": 2}', "second"),
    ('{"seconds": "5"}', "seconds"),
    ('{"seconds": -1}', "seconds"),
    ('{"seconds": 1, "stopAfterWrite": "yes"}', "stopAfterWrite"),
    ('{"to": 1e400}', "to"),
    ("{}", '"seconds"'),
], ids=str)
def test_a_malformed_advance_is_a_bad_request_status_naming_the_field(served: Served, body: str, names: str) -> None:
    with served.http() as http:
        answer = http.post(ADVANCE, content=body.encode(), headers={"Content-Type": "application/json"})
        clock = http.get("/harness/v1/clock").json()
    status = _is_status(answer, 400)
    assert status["reason"] == "BadRequest" and names in status["message"]
    assert clock["unix"] == EPOCH


@pytest.mark.parametrize("body", [{"seconds": MAX_ADVANCE_SECONDS + 1}, {"to": EPOCH + MAX_ADVANCE_SECONDS + 1}],
                         ids=str)
def test_an_advance_beyond_31_days_is_refused(served: Served, body: dict[str, Any]) -> None:
    with served.http() as http:
        answer = http.post(ADVANCE, json=body)
        clock = http.get("/harness/v1/clock").json()
    assert _is_status(answer, 400)["reason"] == "BadRequest"
    assert clock["unix"] == EPOCH


def test_an_advance_to_a_time_already_passed_moves_nothing(served: Served) -> None:
    with served.http() as http:
        answer = http.post(ADVANCE, json={"to": EPOCH - 1})
        clock = http.get("/harness/v1/clock").json()
    assert answer.status_code == 200 and answer.json()["unix"] == EPOCH and not answer.json()["wrote"]
    assert clock["unix"] == EPOCH


def test_the_longest_advance_leaves_health_checks_and_reads_answering(served: Served) -> None:
    answers: list[httpx.Response] = []

    def advance() -> None:
        with served.http(timeout=REQUEST_TIMEOUT) as http:
            answers.append(http.post(ADVANCE, json={"seconds": MAX_ADVANCE_SECONDS}))

    runner = threading.Thread(target=advance)
    runner.start()
    try:
        with served.http(timeout=REQUEST_TIMEOUT) as http:
            # Wait until the advance has begun (the clock moved), then ask while it runs.
            deadline = EPOCH + 60
            clock = http.get("/harness/v1/clock").json()
            while clock["unix"] < deadline and runner.is_alive():
                clock = http.get("/harness/v1/clock").json()
            health = http.get("/healthz", timeout=1.0)
            namespaces = http.get("/api/v1/namespaces", timeout=1.0)
            still_running = runner.is_alive()
    finally:
        runner.join(REQUEST_TIMEOUT)
    assert health.status_code == 200 and namespaces.status_code == 200
    assert still_running, "the advance ended before the server was asked anything"
    assert answers[0].status_code == 200 and answers[0].json()["unix"] == EPOCH + MAX_ADVANCE_SECONDS


def test_unknown_knobs_and_knobs_of_the_wrong_type_are_refused_and_nothing_is_set(served: Served) -> None:
    kubelet = served.world.simulator("kubelet")
    with served.http() as http:
        internal = http.post("/harness/v1/simulators/kubelet", json={"knobs": {"client": None}})
        wrong_type = http.post("/harness/v1/simulators/kubelet", json={"knobs": {"ready_delay": "5"}})
        boolean = http.post("/harness/v1/simulators/kubelet", json={"knobs": {"ready_delay": True}})
        half = http.post("/harness/v1/simulators/kubelet", json={"knobs": {"ready_delay": 3, "speed": 2}})
        unchanged = kubelet.ready_delay
        good = http.post("/harness/v1/simulators/kubelet", json={"knobs": {"ready_delay": 5}})
        nodes = http.post("/api/v1/nodes", json={"metadata": {"name": "n1"}})
    assert 'knob "client"' in _is_status(internal, 400)["message"]
    assert 'knob "ready_delay" must be a finite number, not a string' in _is_status(wrong_type, 400)["message"]
    assert "not a boolean" in _is_status(boolean, 400)["message"]
    assert 'knob "speed"' in _is_status(half, 400)["message"] and unchanged == 0.0
    assert good.status_code == 200 and kubelet.ready_delay == 5
    assert kubelet.client is not None and nodes.status_code == 201  # the simulator still works


@pytest.mark.parametrize("name", ["../..", "x/y#frag", "ns/", "/x", "Ns/x", "a/b/c", "management", "x" * 64 + "/y"])
def test_a_cluster_name_that_is_not_two_dns_labels_is_refused(served: Served, name: str) -> None:
    with served.http() as http:
        answer = http.post("/harness/v1/clusters", json={"name": name})
    assert _is_status(answer, 400)["reason"] == "BadRequest"
    assert served.world.clusters.names() == ["management"]


def test_a_cluster_lookup_by_a_malformed_name_is_refused(served: Served) -> None:
    with served.http() as http:
        answer = http.post("/harness/v1/compact", json={"cluster": "../.."})
        created = http.post("/harness/v1/clusters", json={"name": "team-a/wl-1"})
    assert "DNS-1123" in _is_status(answer, 400)["message"]
    assert created.json() == {"name": "team-a/wl-1", "path": "/clusters/team-a/wl-1"}


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
                                          ""])
def test_an_admin_body_that_is_not_json_is_415(served: Served, content_type: str) -> None:
    with served.http() as http:
        answer = http.post(ADVANCE, content=b'{"seconds": 60}', headers={"Content-Type": content_type})
        clock = http.get("/harness/v1/clock").json()
    assert _is_status(answer, 415)["reason"] == "UnsupportedMediaType"
    assert clock["unix"] == EPOCH


def test_a_request_from_a_foreign_origin_is_403_and_the_own_origin_passes(served: Served) -> None:
    with served.http() as http:
        foreign = http.post(ADVANCE, json={"seconds": 60}, headers={"Origin": "https://evil.example"})
        null = http.get("/harness/v1/audit", headers={"Origin": "null"})
        own = http.post(ADVANCE, json={"seconds": 60}, headers={"Origin": served.base_url})
    assert _is_status(foreign, 403)["reason"] == "Forbidden"
    assert _is_status(null, 403)["reason"] == "Forbidden"
    assert own.status_code == 200 and own.json()["unix"] == EPOCH + 60


def test_with_a_token_the_admin_api_needs_it_but_its_docs_do_not(tmp_path: Path) -> None:
    for running in serving(tmp_path, simulators=[], token="s3cret"):
        with httpx.Client(base_url=running.base_url, timeout=10.0) as anonymous:
            clock = anonymous.get("/harness/v1/clock")
            docs = anonymous.get("/harness/v1/docs")
            document = anonymous.get("/harness/v1/openapi.json")
        with running.http() as http:
            allowed = http.get("/harness/v1/clock")
    assert _is_status(clock, 401)["reason"] == "Unauthorized"
    assert docs.status_code == 200 and document.status_code == 200 and allowed.status_code == 200


def test_a_host_header_naming_another_server_is_refused() -> None:
    server, port = run_server(create_app(World(simulators=[]), hosts=HostCheck("127.0.0.1")), "127.0.0.1", 0)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10.0) as http:
            rebound = http.get("/api/v1/namespaces", headers={"Host": f"evil.example:{port}"})
            admin = http.post(ADVANCE, json={"seconds": 1}, headers={"Host": "evil.example"})
            by_name = http.get("/api/v1/namespaces", headers={"Host": f"localhost:{port}"})
            by_address = http.get("/api/v1/namespaces")
    finally:
        server.stop(10.0)
    assert "evil.example" in _is_status(rebound, 400)["message"]
    assert _is_status(admin, 400)["reason"] == "BadRequest"
    assert by_name.status_code == 200 and by_address.status_code == 200
