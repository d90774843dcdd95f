"""The HTTP client's plain-HTTP requests (harness/client/http.py ``PlainConnections``): one kept-alive
connection for a client's requests, a connection the server closed while idle replaced rather than
failing the request, bodies and headers as the server expects them, and an unreachable server a
``ConnectionError``. Against a small standard-library server that counts its connections."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from harness.client.http import HttpClient, writes_sent

DISCOVERY = {"kind": "APIResourceList", "groupVersion": "v1",
             "resources": [{"name": "configmaps", "kind": "ConfigMap", "namespaced": True}]}


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, keep_alive: bool) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.keep_alive = keep_alive
        self.connections = 0
        self.requests: list[tuple[str, str, dict[str, str], Any]] = []
        self.hung_up = threading.Semaphore(0)  # released once per connection the server has closed

    def shutdown_request(self, request: Any) -> None:
        super().shutdown_request(request)
        self.hung_up.release()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.server.connections += 1

    def log_message(self, *_args: Any) -> None:
        pass  # quiet

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        self.server.requests.append((self.command, self.path, dict(self.headers), body))
        if self.path.endswith("/api/v1"):
            answer: dict[str, Any] = DISCOVERY
        else:
            answer = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default"}}
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        # Without keep-alive the server hangs up after the answer, unannounced (no "Connection: close"),
        # as a server does whose idle timeout ends a kept-alive connection.
        self.close_connection = not self.server.keep_alive

    do_GET = do_POST = do_PATCH = _answer


@pytest.fixture(params=[True, False], ids=["kept-alive", "closed-while-idle"])
def server(request: pytest.FixtureRequest) -> Iterator[_Server]:
    served = _Server(keep_alive=request.param)
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    yield served
    served.shutdown()
    served.server_close()
    thread.join(10)


def test_requests_share_one_connection_and_a_closed_one_is_replaced(server: _Server) -> None:
    client = HttpClient(f"http://127.0.0.1:{server.server_address[1]}", token="someone")

    closed = 0

    def idle() -> None:
        # Without keep-alive, wait until the server has closed every connection so far (as it would one idle
        # for long): the client must see that and open another, for a write too (which it must never resend).
        nonlocal closed
        while not server.keep_alive and closed < server.connections:
            assert server.hung_up.acquire(timeout=10)
            closed += 1

    try:
        for _ in range(3):
            assert client.get("v1", "ConfigMap", "a", "default")["metadata"]["name"] == "a"
            idle()
        writes = writes_sent()
        client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b", "namespace": "default"}})
        assert writes_sent() == writes + 1
        idle()
        client.patch("v1", "ConfigMap", "a", {"data": {"k": "v"}}, namespace="default")
    finally:
        client.close()
    assert [(method, path) for method, path, _, _ in server.requests] == [
        ("GET", "/api/v1"), *[("GET", "/api/v1/namespaces/default/configmaps/a")] * 3,
        ("POST", "/api/v1/namespaces/default/configmaps"), ("PATCH", "/api/v1/namespaces/default/configmaps/a")]
    # Discovery, three GETs and two writes: one connection kept alive, or one each once the server hangs up.
    assert server.connections == (1 if server.keep_alive else 6)
    _, _, headers, body = server.requests[4]
    assert headers["Authorization"] == "Bearer someone" and headers["Content-Type"] == "application/json"
    assert body["metadata"]["name"] == "b"
    _, _, headers, body = server.requests[5]
    assert headers["Content-Type"] == "application/merge-patch+json" and body == {"data": {"k": "v"}}


def test_query_parameters_are_encoded() -> None:
    served = _Server(keep_alive=True)
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    client = HttpClient(f"http://127.0.0.1:{served.server_address[1]}/clusters/default/c1")
    try:
        client.list("v1", "ConfigMap", "default", label_selector="app in (a,b)", field_selector="metadata.name=a")
    finally:
        client.close()
        served.shutdown()
        served.server_close()
        thread.join(10)
    assert served.requests[-1][1] == ("/clusters/default/c1/api/v1/namespaces/default/configmaps"
                                      "?labelSelector=app+in+%28a%2Cb%29&fieldSelector=metadata.name%3Da")


def test_an_unreachable_server_is_a_connection_error() -> None:
    closed = _Server(keep_alive=True)
    port = closed.server_address[1]
    closed.server_close()  # nothing listens there any more
    client = HttpClient(f"http://127.0.0.1:{port}", timeout=5)
    try:
        with pytest.raises(ConnectionError, match="not reachable"):
            client.get("v1", "ConfigMap", "a", "default")
    finally:
        client.close()
