"""Where a Runtime Extension is and how it is called: the HTTPS POST of the Runtime SDK.

``resolve`` turns an ExtensionConfig's ``spec.clientConfig`` into an :class:`Endpoint`:

- ``url``: the URL as given (it must be ``https``); the connection goes to its host and port (443 by
  default), and the server certificate must name that host.
- ``service`` (``namespace``, ``name``, ``port`` default 443, ``path``): upstream calls
  ``https://<name>.<namespace>.svc:<port>/<path>``. The world has no cluster network, so the Service is
  read from the management cluster and the call goes to the loopback: **the connection is made to
  ``127.0.0.1`` at the ``targetPort`` of the Service's ``spec.ports`` entry whose ``port`` is the
  ExtensionConfig's port** (an integer ``targetPort``; without one, the port itself, as Kubernetes
  defaults it). TLS still verifies the certificate for ``<name>.<namespace>.svc`` (sent as SNI), as upstream.

``post`` sends one request: JSON body, ``?timeout=<n>s`` when a timeout is set and a deadline of that many
seconds for the whole exchange, the server certificate verified against ``caBundle`` (the system roots when
there is none), redirects not followed (a 3xx is just a non-200 answer).

The deadline is measured on two clocks, whichever passes it first: wall time (a third-party extension that
hangs is given up after ``n`` real seconds, as upstream's context deadline does), and, when ``post`` is
given the caller's ``now`` (the world's virtual clock, ``Client.now``), virtual time. The harness's own
extension never makes a caller wait: when it is told to hang, the world moves its clock past the call's
deadline and cancels the call (it drops the connection, harness/world/extension/app.py); a call that
ends without an answer once ``now()`` has passed its deadline failed with ``context deadline exceeded``,
exactly as one the wall clock gave up (anything else that drops a connection stays the error it is). Transport
failures raise :class:`TransportError` with Go's wording where the Runtime SDK's errors show it
(``Post "<url>": dial tcp <addr>: connect: connection refused``, ``... context deadline exceeded``,
``... tls: failed to verify certificate: x509: certificate signed by unknown authority``).
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from controllers.runtime.api import DEFAULT_SERVICE_PORT
from harness.client import ApiError, Client
from harness.kube.names.meta import JSON_CONTENT_TYPE

LOOPBACK = "127.0.0.1"
HTTPS = "https"
HTTPS_PORT = 443
SERVICE_HOST = "{name}.{namespace}.svc"
# Upstream reads at most this much of an answer (maxExtensionResponseBodyBytes) and quotes 512 bytes of a
# non-200 body in its error.
MAX_RESPONSE_BYTES = 20 << 20
QUOTED_BODY_BYTES = 512
# How many (CA bundle) clients are kept for connection reuse.
CLIENT_CACHE_SIZE = 64

# Error texts.
POST_FAILED = 'Post "{url}": {reason}'
CONNECTION_REFUSED = "dial tcp {address}: connect: connection refused"
DEADLINE_EXCEEDED = "context deadline exceeded"
UNKNOWN_AUTHORITY = "tls: failed to verify certificate: x509: certificate signed by unknown authority"
CERTIFICATE_INVALID = "tls: failed to verify certificate: x509: {reason}"
NOT_VALID_FOR = "certificate is not valid for {host}"
# OpenSSL's X509_V_ERR_HOSTNAME_MISMATCH; every other verification failure reads as Go's unknown authority.
HOSTNAME_MISMATCH = 62
SERVICE_NOT_FOUND = "failed to compute URL: failed to get Service {namespace}/{name}: {error}"
SERVICE_PORT_NOT_FOUND = "failed to compute URL: Service {namespace}/{name} has no port {port}"
URL_NOT_HTTPS = "failed to compute URL: expected https scheme, got {scheme}"
URL_MISSING = "failed to compute URL: at least one of service and url should be defined in config"
CA_BUNDLE_INVALID = "failed to create tls config: caBundle is not a base64-encoded PEM bundle: {error}"


class TransportError(Exception):
    """The call did not get an HTTP answer (connection refused, deadline, TLS)."""


class ConfigError(Exception):
    """The client config cannot be turned into an endpoint (no service, bad URL, bad CA bundle)."""


@dataclass(frozen=True)
class Endpoint:
    """Where to call: the URL upstream would call (shown in errors), and where the bytes really go."""

    url: str  # scheme://host[:port][/prefix], no trailing slash
    connect_host: str
    connect_port: int
    server_name: str
    ca_bundle: str  # base64, as stored in spec.clientConfig.caBundle

    def url_for(self, path: str) -> str:
        return self.url.rstrip("/") + path


def resolve(client: Client, client_config: dict[str, Any]) -> Endpoint:
    """The endpoint of ``spec.clientConfig`` (see the module docstring); ConfigError when it has none."""
    ca_bundle = str(client_config.get("caBundle") or "")
    service = client_config.get("service")
    if isinstance(service, dict):
        namespace, name = str(service.get("namespace", "")), str(service.get("name", ""))
        port = int(service.get("port") or DEFAULT_SERVICE_PORT)
        host = SERVICE_HOST.format(name=name, namespace=namespace)
        try:
            svc = client.get("v1", "Service", name, namespace)
        except ApiError as err:
            raise ConfigError(SERVICE_NOT_FOUND.format(namespace=namespace, name=name, error=err)) from None
        target = _target_port(svc, port)
        if target is None:
            raise ConfigError(SERVICE_PORT_NOT_FOUND.format(namespace=namespace, name=name, port=port))
        prefix = str(service.get("path") or "")
        return Endpoint(f"{HTTPS}://{host}:{port}{prefix}".rstrip("/"), LOOPBACK, target, host, ca_bundle)
    url = str(client_config.get("url") or "")
    if not url:
        raise ConfigError(URL_MISSING)
    parts = urlsplit(url)
    if parts.scheme != HTTPS:
        raise ConfigError(URL_NOT_HTTPS.format(scheme=parts.scheme))
    host = parts.hostname or ""
    return Endpoint(url.rstrip("/"), host, parts.port or HTTPS_PORT, host, ca_bundle)


def _target_port(service: dict[str, Any], port: int) -> int | None:
    for entry in (service.get("spec") or {}).get("ports") or []:
        if entry.get("port") != port:
            continue
        target = entry.get("targetPort", port)
        return target if isinstance(target, int) and not isinstance(target, bool) else None
    return None


@functools.lru_cache(maxsize=CLIENT_CACHE_SIZE)
def _http_client(ca_bundle: str) -> httpx.Client:
    """One connection-pooling client per CA bundle (building an SSL context reads and parses the bundle)."""
    if ca_bundle:
        try:
            pem = base64.b64decode(ca_bundle, validate=True).decode()
            context = ssl.create_default_context(cadata=pem)
        except (binascii.Error, UnicodeDecodeError, ssl.SSLError, ValueError) as err:
            raise ConfigError(CA_BUNDLE_INVALID.format(error=err)) from None
    else:
        context = ssl.create_default_context()
    return httpx.Client(verify=context, follow_redirects=False, trust_env=False)


def post(endpoint: Endpoint, path: str, body: dict[str, Any], timeout_seconds: int,
         now: Callable[[], float] | None = None) -> tuple[int, bytes, str]:
    """POST ``body`` to ``path`` of ``endpoint``; ``(status code, body, URL called)``. TransportError when
    no answer came within ``timeout_seconds`` (0: no deadline) of wall time, or of ``now``'s time (the
    caller's virtual clock; see the module docstring), or the TLS handshake failed."""
    query = f"?timeout={timeout_seconds}s" if timeout_seconds else ""
    shown_url = endpoint.url_for(path) + query
    real_url = f"{HTTPS}://{_host(endpoint.connect_host)}:{endpoint.connect_port}" + urlsplit(shown_url).path + query
    client = _http_client(endpoint.ca_bundle)
    deadline = time.monotonic() + timeout_seconds if timeout_seconds else None
    timeout = httpx.Timeout(float(timeout_seconds) if timeout_seconds else None)
    headers = {"Content-Type": JSON_CONTENT_TYPE, "Accept": JSON_CONTENT_TYPE, "Host": urlsplit(shown_url).netloc}
    started = time.monotonic()
    virtual_deadline = _virtual_now(now) + timeout_seconds if now is not None and timeout_seconds else None
    try:
        with client.stream("POST", real_url, content=json.dumps(body).encode(), headers=headers, timeout=timeout,
                           extensions={"sni_hostname": endpoint.server_name}) as answer:
            data = b""
            for chunk in answer.iter_bytes():
                data += chunk
                if len(data) > MAX_RESPONSE_BYTES or (deadline is not None and time.monotonic() > deadline):
                    raise httpx.ReadTimeout(DEADLINE_EXCEEDED)
            code = answer.status_code
    except httpx.TimeoutException:
        error = POST_FAILED.format(url=shown_url, reason=DEADLINE_EXCEEDED)
    except httpx.ConnectError as err:
        error = POST_FAILED.format(url=shown_url, reason=_connect_reason(endpoint, err))
    except httpx.HTTPError as err:
        reason = str(err) or type(err).__name__
        if virtual_deadline is not None and now is not None and _virtual_now(now) >= virtual_deadline:
            reason = DEADLINE_EXCEEDED  # cancelled once the caller's clock passed the deadline
        error = POST_FAILED.format(url=shown_url, reason=reason)
    else:
        _tell(Exchange(shown_url, body, code, data, None, time.monotonic() - started))
        return code, data, shown_url
    _tell(Exchange(shown_url, body, None, b"", error, time.monotonic() - started))
    raise TransportError(error)


@dataclass(frozen=True)
class Exchange:
    """One POST as an observer sees it: the URL upstream would show, the request body, and either the
    HTTP status and body of the answer or the transport error, with the wall-clock seconds it took."""

    url: str
    request: dict[str, Any]
    status_code: int | None
    body: bytes
    error: str | None
    seconds: float


# Told of every exchange ``post`` makes in this process. The conformance harness records a third-party
# extension's answers with it (harness/targets/extension.py): such an extension keeps no record to read.
_OBSERVERS: list[Callable[[Exchange], None]] = []


def observe(observer: Callable[[Exchange], None]) -> Callable[[], None]:
    """Tell ``observer`` of every exchange from now on; returns the function that stops telling it."""
    _OBSERVERS.append(observer)

    def stop() -> None:
        if observer in _OBSERVERS:
            _OBSERVERS.remove(observer)

    return stop


def _tell(exchange: Exchange) -> None:
    for observer in list(_OBSERVERS):
        observer(exchange)


def _virtual_now(now: Callable[[], float]) -> float:
    """The caller's time; minus infinity when it cannot be read (then only the wall clock counts)."""
    try:
        return float(now())
    except (ApiError, OSError, RuntimeError, ValueError, KeyError):
        return float("-inf")


def _host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _connect_reason(endpoint: Endpoint, err: Exception) -> str:
    cause: BaseException | None = err
    while cause is not None:
        if isinstance(cause, ssl.SSLCertVerificationError):
            if cause.verify_code == HOSTNAME_MISMATCH:
                return CERTIFICATE_INVALID.format(reason=NOT_VALID_FOR.format(host=endpoint.server_name))
            return UNKNOWN_AUTHORITY
        if isinstance(cause, ConnectionRefusedError):
            return CONNECTION_REFUSED.format(address=f"{_host(endpoint.connect_host)}:{endpoint.connect_port}")
        cause = cause.__cause__ or cause.__context__
    text = str(err)
    if "refused" in text.lower():
        return CONNECTION_REFUSED.format(address=f"{_host(endpoint.connect_host)}:{endpoint.connect_port}")
    if "CERTIFICATE_VERIFY_FAILED" in text:
        return UNKNOWN_AUTHORITY
    return text
