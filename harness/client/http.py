"""The client interface over HTTP: what controllers use when they run as separate processes.

It speaks the Kubernetes REST API (so it works against any server, ours or a real one), finds
resources through discovery, raises :class:`ApiError` with the server's ``Status``, and streams
watches on a background thread. A cluster that cannot be reached raises :class:`ConnectionError`.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import select
import socket
import ssl
import threading
from collections import deque
from collections.abc import Callable
from email.message import Message
from typing import Any, Protocol
from urllib.parse import urlencode, urlparse

import httpx
import yaml

from harness.client.interface import binding_body, delete_options_body, eviction_body, finalize_body
from harness.kube.errors import StatusError, status
from harness.kube.names.meta import AUDIT_ID_HEADER, MERGE_PATCH_CONTENT_TYPE

ADMIN_PATH = "/harness/v1"
_READS = frozenset({"GET", "HEAD", "OPTIONS"})


class _WriteCounter:
    """How many requests that may have changed a server this process has sent (every client's): a
    write the server accepted, or one whose answer never came. A read cache fed by watches knows from
    it whether what the watches delivered can still be the servers' state (harness/client/cache.py)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.value = 0

    def add(self) -> None:
        with self._lock:
            self.value += 1


WRITES = _WriteCounter()


def writes_sent() -> int:
    """How many writes this process's HTTP clients have sent that may have changed a server (refused
    ones, 4xx and 5xx, do not count: the server changes nothing for them)."""
    return WRITES.value


class _Answer(Protocol):
    """What the client reads of an answer: an :class:`httpx.Response` or a :class:`PlainAnswer`."""

    status_code: int

    @property
    def headers(self) -> Any: ...

    @property
    def text(self) -> str: ...

    @property
    def reason_phrase(self) -> str: ...

    def json(self) -> Any: ...


class PlainAnswer:
    """An answer read by :class:`PlainConnections`: the parts of :class:`httpx.Response` the client uses."""

    def __init__(self, status_code: int, reason: str, headers: Message, content: bytes) -> None:
        self.status_code = status_code
        self.reason_phrase = reason
        self.headers = headers  # case-insensitive look-ups, as httpx's
        self.content = content

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        return json.loads(self.content)


def _readable(sock: socket.socket) -> bool:
    """Whether ``sock`` has something to read right now (on an idle kept-alive connection: the server
    closed it). poll, where there is one: select cannot look at descriptors past FD_SETSIZE."""
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        return bool(poller.poll(0))
    readable, _, _ = select.select([sock], [], [], 0)
    return bool(readable)


class PlainConnections:
    """Requests (not watches) to a plain-HTTP server through the standard library's ``http.client``,
    one keep-alive connection per thread.

    Why not httpx for these: a controller process in lockstep (harness/targets/process.py) sends
    thousands of small requests per scenario, one at a time, while the world waits for it; httpx's
    layers (request building, URL parsing, auth and redirect handling, httpcore's pool and h11) cost
    about a millisecond of CPU a request on a small machine, several times what the exchange itself
    costs. The wire is the same HTTP/1.1 (a Kubernetes server sees no difference); TLS servers, and
    every watch, keep httpx."""

    def __init__(self, host: str, port: int, headers: dict[str, str], timeout: float) -> None:
        self._host = host
        self._port = port
        self._headers = headers
        self._timeout = timeout
        self._local = threading.local()
        self._lock = threading.Lock()
        self._open: list[http.client.HTTPConnection] = []  # every thread's, for close()

    def _connection(self) -> tuple[http.client.HTTPConnection, bool]:
        """This thread's connection, and whether it served a request before. One the server has
        closed since (its socket reads as ready: the end of the stream) is replaced first, as
        httpcore does before reusing a connection."""
        conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        if conn is not None and conn.sock is not None and not _readable(conn.sock):
            return conn, True
        if conn is not None:
            self._forget(conn)
        conn = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)
        self._local.conn = conn
        with self._lock:
            self._open.append(conn)
        return conn, False

    def _forget(self, conn: http.client.HTTPConnection) -> None:
        conn.close()
        self._local.conn = None
        with self._lock, contextlib.suppress(ValueError):
            self._open.remove(conn)

    def request(self, method: str, target: str, body: bytes | None, headers: dict[str, str]) -> PlainAnswer:
        """Send one request and read its whole answer; OSError or http.client.HTTPException if the
        connection fails. A read that fails on a reused connection is sent once more on a new one
        (the server may have closed it just then); a write is not (it may have been applied)."""
        all_headers = {**self._headers, **headers}
        while True:
            conn, reused = self._connection()
            try:
                conn.request(method, target, body=body, headers=all_headers)
                response = conn.getresponse()
                content = response.read()
            except (OSError, http.client.HTTPException):
                self._forget(conn)
                if reused and method in _READS:
                    continue
                raise
            if response.will_close:
                conn.close()
            return PlainAnswer(response.status, response.reason, response.headers, content)

    def close(self) -> None:
        """Close every thread's connection (call it once the client is no longer used)."""
        with self._lock:
            conns, self._open = self._open, []
        for conn in conns:
            conn.close()
        self._local.conn = None


def _raise_for(response: _Answer) -> None:
    if response.status_code < 400:
        return
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict) or body.get("kind") != "Status":
        body = status(response.status_code, "", response.text[:500] or response.reason_phrase)
    headers = {"Retry-After": response.headers["Retry-After"]} if "Retry-After" in response.headers else {}
    raise StatusError(body, headers)


def shut_down_stream(response: httpx.Response) -> bool:
    """End a streaming response another thread is reading by shutting its socket down; False if
    the response exposes no socket (then nothing was done)."""
    # Closing the response from this thread neither wakes the reader blocked on the socket nor
    # tells the server; shutting the socket down does both (the reader then closes the response).
    network = response.extensions.get("network_stream")
    sock = network.get_extra_info("socket") if network is not None else None
    if sock is None:
        return False
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    return True


class WatchStream:
    """A watch request read on a background thread; events ``(type, object)`` queue until drained.

    The one reader of a watch stream: it opens the request, records the ``Audit-Id`` header
    (``audit_id``; None before the answer or if absent), hands the answer to :meth:`_read`, turns a
    broken stream into the event :meth:`_broken` gives, and calls ``on_event`` after each event and
    once the stream is over. Subclasses say how an answer is read."""

    def __init__(self, client: httpx.Client, url: str, params: dict[str, str], *, thread_name: str,
                 timeout: httpx.Timeout | None = None) -> None:
        self._client = client
        self._url = url
        self._params = params
        self._timeout = timeout
        self._events: deque[tuple[str, dict[str, Any]]] = deque()
        self.on_event: Callable[[], None] | None = None
        self._stopped = threading.Event()
        self._done = False
        self._response: httpx.Response | None = None
        self.audit_id: str | None = None
        self._thread = threading.Thread(target=self._run, name=thread_name, daemon=True)

    def _start(self) -> None:
        self._thread.start()

    @property
    def closed(self) -> bool:
        """Over, and every event drained."""
        return self._done and not self._events

    @property
    def ended(self) -> bool:
        """The stream is over (events may still wait to be drained)."""
        return self._done

    def _queue(self, event: tuple[str, dict[str, Any]]) -> None:
        self._events.append(event)
        if self.on_event is not None:
            self.on_event()

    def _read(self, response: httpx.Response) -> None:
        """Read the whole answer, queueing its events."""
        raise NotImplementedError

    def _broken(self, err: Exception) -> tuple[str, dict[str, Any]]:
        """The event that says the stream broke with ``err``."""
        raise NotImplementedError

    def _run(self) -> None:
        try:
            with self._client.stream("GET", self._url, params=self._params, timeout=self._timeout) as response:
                self._response = response
                self.audit_id = response.headers.get(AUDIT_ID_HEADER)
                if self._stopped.is_set():
                    return  # stopped while connecting: stop() found no response to shut down
                self._read(response)
        except (httpx.HTTPError, ValueError) as err:
            if not self._stopped.is_set():
                self._events.append(self._broken(err))
        finally:
            self._done = True
            if self.on_event is not None:
                self.on_event()

    def drain(self) -> list[tuple[str, dict[str, Any]]]:
        """The events queued so far, oldest first; they are removed from the queue."""
        out = []
        while self._events:
            out.append(self._events.popleft())
        return out

    def stop(self) -> None:
        """End the stream (the reader thread then finishes)."""
        self._stopped.set()
        response = self._response
        if response is None:
            return
        if not shut_down_stream(response):
            with contextlib.suppress(httpx.HTTPError):
                response.close()


class HttpWatch(WatchStream):
    """A client's watch: one event per JSON line. ``received`` counts the events read from the stream
    (not the ``ERROR`` a broken stream adds); an error answer is one ``ERROR`` event with its Status."""

    def __init__(self, client: httpx.Client, url: str, params: dict[str, str]) -> None:
        super().__init__(client, url, params, thread_name=f"watch {url}")
        self.received = 0
        self._start()

    def _read(self, response: httpx.Response) -> None:
        if response.status_code >= 400:
            response.read()
            try:
                body = response.json()
            except ValueError:
                body = status(response.status_code, "", response.text[:500])
            self._queue(("ERROR", body))
            return
        for line in response.iter_lines():
            if self._stopped.is_set():
                break
            if not line.strip():
                continue
            event = json.loads(line)
            # Counted once queued, never before: a reader that sees ``received`` reach the server's
            # count (harness/client/remote.py's catch-up) must find the event in the queue.
            self._events.append((event["type"], event["object"]))
            self.received += 1
            if self.on_event is not None:
                self.on_event()

    def _broken(self, err: Exception) -> tuple[str, dict[str, Any]]:
        return ("ERROR", status(503, "ServiceUnavailable", f"watch ended: {err}"))


class HttpClient:
    """A client of the cluster served at ``server`` (a URL, a workload cluster's path included)."""

    def __init__(
        self, server: str, *, token: str | None = None, user: str = "admin", timeout: float = 30.0,
        verify: bool | str | ssl.SSLContext = True,
    ) -> None:
        self.server = server.rstrip("/")
        parsed = urlparse(self.server)
        self._origin = f"{parsed.scheme}://{parsed.netloc}"
        self.cluster = parsed.path.strip("/").removeprefix("clusters/") or "management"
        self.user = user
        self._token = token
        headers = {"Accept": "application/json", "User-Agent": f"lifecycle-tck/{user}"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._http = httpx.Client(headers=headers, timeout=timeout, verify=verify)
        self._path_prefix = parsed.path.rstrip("/")
        self._plain = (PlainConnections(parsed.hostname or "127.0.0.1", parsed.port or 80, headers, timeout)
                       if parsed.scheme == "http" else None)
        self._resources: dict[tuple[str, str], tuple[str, bool]] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_kubeconfig(cls, text: str, *, context: str | None = None, user: str = "admin") -> HttpClient:
        """A client for a kubeconfig's context (the current one unless named)."""
        config = yaml.safe_load(text) or {}
        name = context or config.get("current-context")
        contexts = {c["name"]: c.get("context", {}) for c in config.get("contexts") or []}
        clusters = {c["name"]: c.get("cluster", {}) for c in config.get("clusters") or []}
        users = {u["name"]: u.get("user", {}) for u in config.get("users") or []}
        ctx = contexts.get(name or "", {})
        cluster = clusters.get(ctx.get("cluster", ""), {}) if ctx else next(iter(clusters.values()), {})
        auth = users.get(ctx.get("user", ""), {}) if ctx else {}
        if not cluster.get("server"):
            raise ValueError("kubeconfig names no server")
        verify: bool | str | ssl.SSLContext = True
        if cluster.get("certificate-authority-data"):
            ca_pem = base64.b64decode(cluster["certificate-authority-data"]).decode()
            verify = ssl.create_default_context(cadata=ca_pem)
        elif cluster.get("certificate-authority"):
            verify = ssl.create_default_context(cafile=cluster["certificate-authority"])
        elif cluster.get("insecure-skip-tls-verify"):
            verify = False
        return cls(cluster["server"], token=auth.get("token"), user=user, verify=verify)

    def close(self) -> None:
        if self._plain is not None:
            self._plain.close()
        self._http.close()

    # -- plumbing ----------------------------------------------------------------------------------

    def _request(self, method: str, path: str, *, params: dict[str, str] | None = None, json: Any = None,
                 content: str | None = None, headers: dict[str, str] | None = None) -> _Answer:
        response: _Answer
        try:
            if self._plain is not None:
                response = self._send_plain(method, self._path_prefix + path, params, json, content, headers)
            else:
                response = self._http.request(method, self.server + path, params=params, json=json,
                                              content=content, headers=headers)
        except (httpx.TransportError, OSError, http.client.HTTPException) as err:
            if method not in _READS:
                WRITES.add()  # it may have reached the server before the connection broke
            raise ConnectionError(f"cluster {self.cluster} is not reachable: {err}") from err
        if method not in _READS and response.status_code < 400:
            WRITES.add()
        _raise_for(response)
        return response

    def _send_plain(self, method: str, target: str, params: dict[str, str] | None, body: Any, content: str | None,
                    headers: dict[str, str] | None) -> PlainAnswer:
        assert self._plain is not None
        if params:
            target += "?" + urlencode(params)
        extra = dict(headers or {})
        data: bytes | None = None
        if body is not None:
            data = json.dumps(body).encode()
            extra.setdefault("Content-Type", "application/json")
        elif content is not None:
            data = content.encode()
        if data is not None or method not in _READS:
            extra["Content-Length"] = str(len(data or b""))
        return self._plain.request(method, target, data, extra)

    def _resource(self, api_version: str, kind: str) -> tuple[str, bool]:
        key = (api_version, kind)
        with self._lock:
            found = self._resources.get(key)
        if found is None:
            base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
            listing = self._request("GET", base).json()
            with self._lock:
                for res in listing.get("resources", []):
                    if "/" not in res["name"]:
                        self._resources[(api_version, res["kind"])] = (res["name"], bool(res["namespaced"]))
                found = self._resources.get(key)
        if found is None:
            raise StatusError(status(404, "NotFound", f'no kind "{kind}" is registered for version "{api_version}"'))
        return found

    def _path(self, api_version: str, kind: str, name: str | None = None, namespace: str | None = None,
              subresource: str = "") -> str:
        plural, namespaced = self._resource(api_version, kind)
        base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        path = base
        if namespaced and namespace:
            path += f"/namespaces/{namespace}"
        path += f"/{plural}"
        if name is not None:
            path += f"/{name}"
        if subresource:
            path += f"/{subresource}"
        return path

    @staticmethod
    def _params(**values: Any) -> dict[str, str]:
        out = {}
        for key, value in values.items():
            if value is None or value is False:
                continue
            out[key] = "true" if value is True else str(value)
        return out

    # -- the interface -----------------------------------------------------------------------------

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        return self._request("GET", self._path(api_version, kind, name, namespace)).json()

    def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> dict[str, Any]:
        params = self._params(labelSelector=label_selector, fieldSelector=field_selector, limit=limit,
                              **{"continue": continue_token})
        return self._request("GET", self._path(api_version, kind, None, namespace), params=params).json()

    def watch(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        allow_bookmarks: bool = False,
    ) -> HttpWatch:
        params = self._params(watch=True, resourceVersion=resource_version, labelSelector=label_selector,
                              fieldSelector=field_selector, allowWatchBookmarks=allow_bookmarks)
        return HttpWatch(self._http, self.server + self._path(api_version, kind, None, namespace), params)

    def create(self, obj: dict[str, Any], *, dry_run: bool = False) -> dict[str, Any]:
        meta = obj.get("metadata") or {}
        path = self._path(obj["apiVersion"], obj["kind"], None, meta.get("namespace"))
        return self._request("POST", path, json=obj, params=self._params(dryRun="All" if dry_run else None)).json()

    def update(self, obj: dict[str, Any], *, dry_run: bool = False) -> dict[str, Any]:
        return self._put(obj, "", dry_run)

    def update_status(self, obj: dict[str, Any], *, dry_run: bool = False) -> dict[str, Any]:
        return self._put(obj, "status", dry_run)

    def _put(self, obj: dict[str, Any], subresource: str, dry_run: bool) -> dict[str, Any]:
        meta = obj.get("metadata") or {}
        path = self._path(obj["apiVersion"], obj["kind"], meta.get("name", ""), meta.get("namespace"), subresource)
        return self._request("PUT", path, json=obj, params=self._params(dryRun="All" if dry_run else None)).json()

    def patch(
        self,
        api_version: str,
        kind: str,
        name: str,
        body: Any,
        *,
        namespace: str | None = None,
        patch_type: str = MERGE_PATCH_CONTENT_TYPE,
        subresource: str = "",
        dry_run: bool = False,
        field_manager: str | None = None,
        force: bool = False,
    ) -> dict[str, Any]:
        path = self._path(api_version, kind, name, namespace, subresource)
        params = self._params(dryRun="All" if dry_run else None, fieldManager=field_manager, force=force)
        response = self._request("PATCH", path, content=json.dumps(body), params=params,
                                 headers={"Content-Type": patch_type})
        return response.json()

    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        *,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        preconditions: dict[str, str] | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        options = {"kind": "DeleteOptions", "apiVersion": "v1",
                   **delete_options_body(propagation_policy=propagation_policy,
                                    grace_period_seconds=grace_period_seconds, preconditions=preconditions,
                                    dry_run=dry_run)}
        path = self._path(api_version, kind, name, namespace)
        return self._request("DELETE", path, content=json.dumps(options),
                             headers={"Content-Type": "application/json"}).json()

    def evict(
        self, name: str, namespace: str, *, delete_options: dict[str, Any] | None = None, dry_run: bool = False
    ) -> dict[str, Any]:
        body = eviction_body(name, namespace, delete_options)
        path = f"/api/v1/namespaces/{namespace}/pods/{name}/eviction"
        return self._request("POST", path, json=body, params=self._params(dryRun="All" if dry_run else None)).json()

    def bind(self, name: str, namespace: str, node_name: str) -> dict[str, Any]:
        body = binding_body(name, namespace, node_name)
        return self._request("POST", f"/api/v1/namespaces/{namespace}/pods/{name}/binding", json=body).json()

    def finalize_namespace(self, name: str, finalizers: list[str]) -> dict[str, Any]:
        body = finalize_body(name, finalizers)
        return self._request("PUT", f"/api/v1/namespaces/{name}/finalize", json=body).json()

    def _admin(self, path: str) -> Any:
        response: _Answer
        try:
            if self._plain is not None:
                response = self._plain.request("GET", ADMIN_PATH + path, None, {})
            else:
                response = self._http.get(self._origin + ADMIN_PATH + path)
        except (httpx.TransportError, OSError, http.client.HTTPException) as err:
            raise ConnectionError(str(err)) from err
        _raise_for(response)
        return response.json()

    def now(self) -> float:
        return float(self.clock()["unix"])

    def clock(self) -> dict[str, Any]:
        """The served world's clock (``GET /harness/v1/clock``: ``unix``, ``followsWallTime``,
        ``nextDue``); the server must be this project's."""
        return dict(self._admin("/clock"))

    def watch_streams(self) -> dict[str, dict[str, Any]]:
        """What the server has given each watch stream, by audit ID (``GET /harness/v1/watches``:
        ``events`` and ``ended``); the server must be this project's."""
        return {stream["auditID"]: stream for stream in self._admin("/watches")["items"]}

    def discover(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        seen: set[tuple[str, str]] = set()
        versions = [("", "v1")]
        for group in self._request("GET", "/apis").json().get("groups", []):
            preferred = (group.get("preferredVersion") or {}).get("version") or group["versions"][0]["version"]
            versions.append((group["name"], preferred))
        for group, version in versions:
            api_version = f"{group}/{version}" if group else version
            base = "/api/v1" if not group else f"/apis/{api_version}"
            resources = self._request("GET", base).json().get("resources", [])
            subs: dict[str, list[str]] = {}
            for res in resources:
                if "/" in res["name"]:
                    parent, _, sub = res["name"].partition("/")
                    subs.setdefault(parent, []).append(sub)
            for res in resources:
                if "/" in res["name"] or (group, res["name"]) in seen:
                    continue
                seen.add((group, res["name"]))
                with self._lock:
                    self._resources[(api_version, res["kind"])] = (res["name"], bool(res["namespaced"]))
                out.append({"apiVersion": api_version, "group": group, "kind": res["kind"], "plural": res["name"],
                            "namespaced": bool(res["namespaced"]), "verbs": list(res.get("verbs", [])),
                            "subresources": subs.get(res["name"], [])})
        return out

    def for_kubeconfig(self, kubeconfig: str, user: str | None = None) -> HttpClient:
        return HttpClient.from_kubeconfig(kubeconfig, user=user or self.user)
