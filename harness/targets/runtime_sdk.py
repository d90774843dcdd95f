"""The oracle's own side of the Runtime SDK protocol, written from the protocol's rules (seed 002,
reference/runtime-hooks-and-addons.md §1), not from the reference client (controllers/runtime): the
conformance harness judges a third-party Runtime Extension with it, so a bug of the reference client
cannot make the harness agree with it.

* :func:`post`: one HTTPS POST of a JSON request to a path under the extension's URL, the server
  certificate verified against the given CA for the URL's host, with ``?timeout=<n>s`` and a deadline of
  ``n`` seconds; the status code and body, or :class:`CallFailed` with Go's wording of what went wrong
  (the texts a Cluster API user sees for the same failure: ``connection refused``, ``context deadline
  exceeded``, ``certificate signed by unknown authority``).
* :func:`handler_problems`: the rules a DiscoveryResponse's handlers obey (names unique DNS-1123 labels,
  ``timeoutSeconds`` 0..30, ``failurePolicy`` ``Fail`` or ``Ignore``, a hook of the catalog), each broken
  rule said in upstream's words, with the defaults (``Fail``, 10 seconds) applied to what is returned.
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import time
from typing import Any
from urllib.parse import urlsplit

from harness.kube.groupversion import parse_group_version
from harness.kube.names.meta import JSON_CONTENT_TYPE
from harness.kube.names.runtime_sdk import (
    CATALOG,
    DEFAULT_HANDLER_TIMEOUT_SECONDS,
    FAILURE_POLICY_FAIL,
    FAILURE_POLICY_IGNORE,
    HOOKS_GROUP,
    HOOKS_VERSION,
    MAX_HANDLER_TIMEOUT_SECONDS,
)
from harness.kube.validation import is_dns1123_label

HTTPS_PORT = 443
# An answer larger than this is not read to its end (upstream caps answers at 20 MiB).
MAX_ANSWER_BYTES = 20 << 20
READ_CHUNK_BYTES = 64 << 10
# OpenSSL's X509_V_ERR_HOSTNAME_MISMATCH.
HOSTNAME_MISMATCH = 62

# Go's wording of a failed call (net/http, crypto/x509), as the Runtime SDK's errors show it.
POST_FAILED = 'Post "{url}": {reason}'
CONNECTION_REFUSED = "dial tcp {address}: connect: connection refused"
DEADLINE_EXCEEDED = "context deadline exceeded"
UNKNOWN_AUTHORITY = "tls: failed to verify certificate: x509: certificate signed by unknown authority"
NOT_VALID_FOR = "tls: failed to verify certificate: x509: certificate is not valid for {host}"

# The discovery rules' texts (upstream's defaultAndValidateDiscoveryResponse).
DUPLICATE_NAME = "duplicate name for handler {name} found"
NAME_INVALID = "handler name {name} is not valid: [{errors}]"
TIMEOUT_INVALID = "handler {name} timeoutSeconds {timeout} must be between 0 and 30"
POLICY_INVALID = 'handler {name} failurePolicy {policy} must equal "Ignore" or "Fail"'
HOOK_UNKNOWN = "handler {name} requestHook {api_version}/{hook} is not in the Runtime SDK catalog"


class CallFailed(Exception):
    """The call got no HTTP answer (refused, deadline, TLS); ``str()`` says why in Go's words."""


def _address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _reason(err: BaseException, host: str, port: int) -> str:
    """Go's text for why a call got no answer."""
    if isinstance(err, ssl.SSLCertVerificationError):
        return NOT_VALID_FOR.format(host=host) if err.verify_code == HOSTNAME_MISMATCH else UNKNOWN_AUTHORITY
    if isinstance(err, ConnectionRefusedError):
        return CONNECTION_REFUSED.format(address=_address(host, port))
    if isinstance(err, (socket.timeout, TimeoutError)):
        return DEADLINE_EXCEEDED
    return str(err) or type(err).__name__


def post(url: str, path: str, body: dict[str, Any], timeout_seconds: int, ca_pem: bytes) -> tuple[int, bytes]:
    """POST ``body`` as JSON to ``path`` under ``url`` over HTTPS, verifying the server's certificate
    against ``ca_pem`` for the URL's host; ``(status code, body)`` of the answer. CallFailed when no answer
    came within ``timeout_seconds`` (0: no deadline) or the connection or handshake failed."""
    parts = urlsplit(url.rstrip("/"))
    host, port = parts.hostname or "", parts.port or HTTPS_PORT
    query = f"?timeout={timeout_seconds}s" if timeout_seconds else ""
    target = parts.path + path + query
    shown = f"{parts.scheme}://{parts.netloc}{target}"
    context = ssl.create_default_context(cadata=ca_pem.decode(errors="replace"))
    deadline = time.monotonic() + timeout_seconds if timeout_seconds else None
    connection = http.client.HTTPSConnection(host, port, context=context,
                                             timeout=float(timeout_seconds) if timeout_seconds else None)
    try:
        connection.request("POST", target, body=json.dumps(body).encode(),
                           headers={"Content-Type": JSON_CONTENT_TYPE, "Accept": JSON_CONTENT_TYPE})
        answer = connection.getresponse()
        data = b""
        while chunk := answer.read(READ_CHUNK_BYTES):
            data += chunk
            if len(data) > MAX_ANSWER_BYTES or (deadline is not None and time.monotonic() > deadline):
                raise TimeoutError(DEADLINE_EXCEEDED)
        return answer.status, data
    except (OSError, http.client.HTTPException) as err:
        raise CallFailed(POST_FAILED.format(url=shown, reason=_reason(err, host, port))) from None
    finally:
        connection.close()


def handler_problems(handlers: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """The handlers with the protocol's defaults applied (``failurePolicy`` Fail, ``timeoutSeconds`` 10),
    and every rule they break (empty: none), each in upstream's words."""
    defaulted: list[dict[str, Any]] = []
    problems: list[str] = []
    names: set[str] = set()
    for given in handlers:
        handler = {"failurePolicy": FAILURE_POLICY_FAIL, "timeoutSeconds": DEFAULT_HANDLER_TIMEOUT_SECONDS,
                   **{k: v for k, v in given.items() if v is not None}}
        defaulted.append(handler)
        name = str(handler.get("name", ""))
        if name in names:
            problems.append(DUPLICATE_NAME.format(name=name))
        names.add(name)
        errors = is_dns1123_label(name)
        if errors:
            problems.append(NAME_INVALID.format(name=name, errors=" ".join(errors)))
        timeout = handler["timeoutSeconds"]
        if isinstance(timeout, bool) or not isinstance(timeout, int) \
                or not 0 <= timeout <= MAX_HANDLER_TIMEOUT_SECONDS:
            problems.append(TIMEOUT_INVALID.format(name=name, timeout=timeout))
        policy = handler["failurePolicy"]
        if policy not in (FAILURE_POLICY_FAIL, FAILURE_POLICY_IGNORE):
            problems.append(POLICY_INVALID.format(name=name, policy=policy))
        hook_ref = handler.get("requestHook")
        hook_ref = hook_ref if isinstance(hook_ref, dict) else {}
        api_version, hook = str(hook_ref.get("apiVersion", "")), str(hook_ref.get("hook", ""))
        try:
            group_version: tuple[str, str] | None = parse_group_version(api_version)
        except ValueError:
            group_version = None
        if group_version != (HOOKS_GROUP, HOOKS_VERSION) or hook not in CATALOG:
            problems.append(HOOK_UNKNOWN.format(name=name, api_version=api_version, hook=hook))
    return defaulted, problems
