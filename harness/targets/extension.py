"""The ``extension`` target: a third-party Runtime Extension, running at ``--extension-url`` with a server
certificate that the CA in ``--ca-file`` signs, checked against the Runtime SDK protocol (seed 002,
reference/runtime-hooks-and-addons.md §1) and against the reference topology controller.

The harness talks to the extension two ways, both over real HTTPS at its URL, the certificate verified
against the CA for the URL's host:

* **probes**, the harness's own calls, made with its own implementation of the protocol
  (harness/targets/runtime_sdk.py, sharing no code with the reference client): :func:`discover` (the
  DiscoveryResponse and what is wrong with it, with upstream's validation texts), :func:`call_handler`
  (one handler, with a request of its hook's schema about a Cluster that does not exist,
  :data:`PROBE_NAMESPACE`/:data:`PROBE_CLUSTER`, answered within the handler's ``timeoutSeconds``),
  :func:`response_problems` (what is wrong with an answer) and :func:`certificate_problem` (the TLS
  handshake alone);
* **through the topology controller**: an ExtensionConfig with the URL and the CA registers it; the
  controller calls it as upstream does. The extension keeps no record the harness can read, so an
  :class:`ExchangeRecorder` hears every exchange of the controller's transport in this process
  (harness/world/runtime_calls.py) and keeps those addressed to the extension as :class:`HookCall`
  records. The controller therefore runs in this process under this target (the in-process or HTTP transport).

:func:`check_extension_options` says what is wrong with the options before anything runs.
"""

from __future__ import annotations

import base64
import json
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from harness.kube.names.capi import CLUSTER_API_VERSION, CLUSTER_KIND
from harness.kube.names.core import KUBERNETES_VERSION as PROBE_TO_VERSION
from harness.kube.names.runtime_sdk import (
    AFTER_CLUSTER_UPGRADE,
    AFTER_CONTROL_PLANE_UPGRADE,
    BEFORE_CLUSTER_UPGRADE,
    CATALOG,
    DEFAULT_HANDLER_TIMEOUT_SECONDS,
    DISCOVERY_HOOK,
    DISCOVERY_RESPONSE_KIND,
    DISCOVERY_TIMEOUT_SECONDS,
    FAILURE_POLICY_IGNORE,
    HOOKS_API_VERSION,
    HOOKS_GROUP,
    HOOKS_VERSION,
    STATUS_FAILURE,
    STATUS_SUCCESS,
    Hook,
    hook_path,
)
from harness.targets import runtime_sdk
from harness.world import runtime_calls

HTTPS = "https"
HTTPS_PORT = 443
# The Cluster the probes ask about: it exists nowhere, so an extension acting on it touches nothing real.
PROBE_NAMESPACE = "lifecycle-tck-probe"
PROBE_CLUSTER = "probe"
PROBE_CLASS = "quick-start"
PROBE_FROM_VERSION = "v1.31.0"
# Hook-specific request fields (lifecyclehooks_types.go).
FROM_VERSION_FIELD = "fromKubernetesVersion"
TO_VERSION_FIELD = "toKubernetesVersion"
VERSION_FIELD = "kubernetesVersion"
# retryAfterSeconds is an int32.
MAX_RETRY_SECONDS = 2**31 - 1
QUOTED_BODY_BYTES = 512
CONNECT_SECONDS = 10.0
# OpenSSL's X509_V_ERR_HOSTNAME_MISMATCH.
HOSTNAME_MISMATCH = 62

# Verdict texts.
NEEDS_OPTIONS = "--target extension needs --extension-url URL and --ca-file FILE"
URL_NOT_HTTPS = "--extension-url {url!r}: a Runtime Extension is called over https (e.g. https://127.0.0.1:8443)"
URL_WITH_QUERY = "--extension-url {url!r}: the URL may not carry a query, a fragment or a user"
BAD_PORT = "--extension-url {url!r}: {error}"
CA_UNREADABLE = "--ca-file {path}: cannot read it: {error}"
CA_NOT_PEM = "--ca-file {path}: no PEM certificate in it (expected -----BEGIN CERTIFICATE-----)"
CA_INVALID = "--ca-file {path}: not a usable CA certificate: {error}"
NOT_JSON = "the answer is not a JSON object: {body}"
HTTP_STATUS = "answered HTTP {code} (the Runtime SDK needs 200): {body}"
NO_STATUS = 'has no status (it must be "Success" or "Failure")'
BAD_STATUS = 'has the status {status}: it must be "Success" or "Failure"'
WRONG_KIND = "has the kind {kind}, not {expected}"
WRONG_API_VERSION = "has the apiVersion {api_version}, not {expected}"
MESSAGE_NOT_STRING = "has a message that is not a string: {message}"
RETRY_INVALID = "has retryAfterSeconds {value}: it must be a whole number of seconds from 0 to 2147483647"
RETRY_ON_NON_BLOCKING = ("has retryAfterSeconds {value} on {hook}, which cannot block: the Runtime SDK's "
                         "{kind} has no such field, so the answer does not hold anything (only BeforeClusterCreate, "
                         "BeforeClusterUpgrade, AfterControlPlaneUpgrade and BeforeClusterDelete can block)")
NO_HANDLERS = "advertises no handler"
HANDLER_NOT_OBJECT = "handlers[{index}] is not an object: {value}"
DISCOVERY_FAILURE = "answers discovery with the status {status} (message: {message!r})"
CERT_UNKNOWN_AUTHORITY = ("the certificate of {host}:{port} does not verify against the CA in {ca}: "
                          "x509: certificate signed by unknown authority ({detail})")
CERT_WRONG_HOST = ("the certificate of {host}:{port} does not name {host}: x509: certificate is not valid for "
                   "{host} ({detail})")
TLS_FAILED = "the TLS handshake with {host}:{port} failed: {error}"
CONNECT_FAILED = "cannot connect to {host}:{port}: {error}"


# -- options ----------------------------------------------------------------------------------------------


def check_extension_options(url: str | None, ca_file: str | None) -> str | None:
    """What is wrong with ``--extension-url`` and ``--ca-file`` (None: nothing): both given, an https URL
    with a host and nothing but a path after it, a readable file holding a PEM CA certificate."""
    if not url or not ca_file:
        return NEEDS_OPTIONS
    parts = urlsplit(url)
    if parts.scheme != HTTPS or not parts.hostname:
        return URL_NOT_HTTPS.format(url=url)
    if parts.query or parts.fragment or parts.username:
        return URL_WITH_QUERY.format(url=url)
    try:
        parts.port  # noqa: B018 (reading it validates it)
    except ValueError as err:
        return BAD_PORT.format(url=url, error=err)
    try:
        load_ca(ca_file)
    except ValueError as err:
        return str(err)
    return None


def load_ca(ca_file: str | Path) -> bytes:
    """The PEM CA of ``ca_file``; ValueError saying what is wrong (unreadable, not PEM, not a CA ssl takes)."""
    path = Path(ca_file)
    try:
        pem = path.read_bytes()
    except OSError as err:
        raise ValueError(CA_UNREADABLE.format(path=path, error=err.strerror or err)) from None
    if b"-----BEGIN CERTIFICATE-----" not in pem:
        raise ValueError(CA_NOT_PEM.format(path=path))
    try:
        ssl.create_default_context(cadata=pem.decode(errors="replace"))
    except (ssl.SSLError, ValueError) as err:
        raise ValueError(CA_INVALID.format(path=path, error=err)) from None
    return pem


def ca_bundle(ca_pem: bytes) -> str:
    """``spec.clientConfig.caBundle`` for the CA: its PEM, base64-encoded."""
    return base64.b64encode(ca_pem).decode()


# -- what was called and answered ------------------------------------------------------------------------


@dataclass(frozen=True)
class HookCall:
    """One call of a lifecycle hook's handler: the Cluster it was about (``namespace/name``), and the
    answer (a JSON object) or why there was none usable (``error``: no answer, not 200, not JSON)."""

    hook: str
    handler: str
    cluster: str
    response: dict[str, Any] | None
    error: str | None
    seconds: float = 0.0

    @property
    def status(self) -> str | None:
        return None if self.response is None else self.response.get("status")

    def retry_after(self) -> int:
        """The answer's retryAfterSeconds as the Runtime SDK reads it (0 for a hook that cannot block)."""
        if self.response is None or not CATALOG[self.hook].retry:
            return 0
        value = self.response.get("retryAfterSeconds") or 0
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    def describe(self) -> str:
        if self.error is not None:
            return f"{self.hook} {self.handler}: no usable answer ({self.error})"
        return f"{self.hook} {self.handler}: {json.dumps(self.response, sort_keys=True)}"


def cluster_of(request: dict[str, Any]) -> str:
    """``namespace/name`` of the Cluster a hook request is about."""
    meta = (request.get("cluster") or {}).get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def _quoted(data: bytes) -> str:
    text = data.decode(errors="replace")
    return json.dumps(text[:QUOTED_BODY_BYTES] + ("..." if len(text) > QUOTED_BODY_BYTES else ""))


def decode_answer(code: int | None, body: bytes, error: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """``(answer, None)`` for a 200 with a JSON object; ``(None, why not)`` otherwise."""
    if error is not None:
        return None, error
    if code != 200:
        return None, HTTP_STATUS.format(code=code, body=_quoted(body))
    try:
        decoded = json.loads(body)
    except ValueError:
        decoded = None
    if not isinstance(decoded, dict):
        return None, NOT_JSON.format(body=_quoted(body))
    return decoded, None


_HOOKS_BY_PATH = {name.lower(): name for name in CATALOG}


def hook_call_of(exchange: runtime_calls.Exchange, url: str) -> HookCall | None:
    """The exchange as a HookCall when it called a lifecycle hook of the extension at ``url``."""
    base = url.rstrip("/")
    if not exchange.url.startswith(base + "/"):
        return None
    path = urlsplit(exchange.url).path.removeprefix(urlsplit(base).path)
    parts = path.strip("/").split("/")
    if len(parts) != 4 or parts[:2] != [HOOKS_GROUP, HOOKS_VERSION] or parts[2] not in _HOOKS_BY_PATH:
        return None
    response, error = decode_answer(exchange.status_code, exchange.body, exchange.error)
    return HookCall(_HOOKS_BY_PATH[parts[2]], parts[3], cluster_of(exchange.request), response, error,
                    exchange.seconds)


class ExchangeRecorder:
    """Keeps every lifecycle hook call made to the extension at ``url`` from this process, from
    :meth:`start` to :meth:`stop`."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._calls: list[HookCall] = []
        self._lock = threading.Lock()
        self._stop: Any = None

    def _heard(self, exchange: runtime_calls.Exchange) -> None:
        call = hook_call_of(exchange, self.url)
        if call is not None:
            with self._lock:
                self._calls.append(call)

    def start(self) -> ExchangeRecorder:
        self._stop = runtime_calls.observe(self._heard)
        return self

    def stop(self) -> None:
        if self._stop is not None:
            self._stop()
            self._stop = None

    def calls(self) -> list[HookCall]:
        """The calls so far, oldest first."""
        with self._lock:
            return list(self._calls)


# -- probes ------------------------------------------------------------------------------------------------


@dataclass
class Discovery:
    """What discovery answered: the answer (None when there was no usable one), the handlers with the
    Runtime SDK's defaults applied, and everything wrong with it (empty: a valid DiscoveryResponse)."""

    answer: dict[str, Any] | None
    handlers: list[dict[str, Any]]
    problems: list[str]


def discover(url: str, ca_pem: bytes) -> Discovery:
    """POST the DiscoveryRequest to the extension and judge its DiscoveryResponse (reference §1.2)."""
    request = {"apiVersion": HOOKS_API_VERSION, "kind": DISCOVERY_HOOK.request_kind}
    try:
        code, body = runtime_sdk.post(url, hook_path(DISCOVERY_HOOK.name), request, DISCOVERY_TIMEOUT_SECONDS, ca_pem)
    except runtime_sdk.CallFailed as err:
        return Discovery(None, [], [str(err)])
    answer, error = decode_answer(code, body, None)
    if answer is None:
        return Discovery(None, [], [f"discovery: {error}"])
    problems = _envelope_problems(answer, DISCOVERY_RESPONSE_KIND)
    if answer.get("status") != STATUS_SUCCESS:
        problems.append(DISCOVERY_FAILURE.format(status=json.dumps(answer.get("status")),
                                                 message=answer.get("message") or ""))
    raw = answer.get("handlers")
    if not isinstance(raw, list) or not raw:
        problems.append(NO_HANDLERS)
        raw = []
    problems += [HANDLER_NOT_OBJECT.format(index=i, value=json.dumps(h)) for i, h in enumerate(raw)
                 if not isinstance(h, dict)]
    handlers, rules_broken = runtime_sdk.handler_problems([h for h in raw if isinstance(h, dict)])
    problems += rules_broken
    return Discovery(answer, [] if rules_broken else handlers, problems)


def _envelope_problems(answer: dict[str, Any], kind: str) -> list[str]:
    problems = []
    if "kind" in answer and answer["kind"] != kind:
        problems.append(WRONG_KIND.format(kind=json.dumps(answer["kind"]), expected=kind))
    if "apiVersion" in answer and answer["apiVersion"] != HOOKS_API_VERSION:
        problems.append(WRONG_API_VERSION.format(api_version=json.dumps(answer["apiVersion"]),
                                                 expected=HOOKS_API_VERSION))
    return problems


def probe_request(hook: str, namespace: str = PROBE_NAMESPACE, name: str = PROBE_CLUSTER) -> dict[str, Any]:
    """A request of ``hook``'s schema about the Cluster ``namespace/name`` (status emptied, as upstream sends)."""
    cluster = {"apiVersion": CLUSTER_API_VERSION, "kind": CLUSTER_KIND,
               "metadata": {"name": name, "namespace": namespace},
               "spec": {"topology": {"class": PROBE_CLASS, "version": PROBE_TO_VERSION,
                                     "controlPlane": {"replicas": 1}}}}
    fields: dict[str, Any] = {}
    if hook == BEFORE_CLUSTER_UPGRADE:
        fields = {FROM_VERSION_FIELD: PROBE_FROM_VERSION, TO_VERSION_FIELD: PROBE_TO_VERSION}
    elif hook in (AFTER_CONTROL_PLANE_UPGRADE, AFTER_CLUSTER_UPGRADE):
        fields = {VERSION_FIELD: PROBE_TO_VERSION}
    # Sent as upstream's cleanupCluster leaves a Cluster: an empty v1beta1 status, whose two booleans read false.
    cluster["status"] = {"infrastructureReady": False, "controlPlaneReady": False}
    return {"apiVersion": HOOKS_API_VERSION, "kind": CATALOG[hook].request_kind, "settings": {},
            "cluster": cluster, **fields}


def handler_timeout(handler: dict[str, Any]) -> int:
    """The seconds a call of ``handler`` may take: its timeoutSeconds, 0 and none meaning the default 10."""
    value = handler.get("timeoutSeconds")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 \
        else DEFAULT_HANDLER_TIMEOUT_SECONDS


def call_handler(url: str, ca_pem: bytes, handler: dict[str, Any]) -> HookCall:
    """Call one discovered handler with a request of its hook's schema about the probe Cluster, with the
    handler's deadline; the answer or why there was none."""
    hook = str((handler.get("requestHook") or {}).get("hook", ""))
    name = str(handler.get("name", ""))
    request = probe_request(hook)
    started = time.monotonic()
    try:
        code, body = runtime_sdk.post(url, hook_path(hook, name), request, handler_timeout(handler), ca_pem)
    except runtime_sdk.CallFailed as err:
        return HookCall(hook, name, cluster_of(request), None, str(err), time.monotonic() - started)
    response, error = decode_answer(code, body, None)
    return HookCall(hook, name, cluster_of(request), response, error, time.monotonic() - started)


def response_problems(hook: Hook, response: dict[str, Any]) -> list[str]:
    """What is wrong with ``response`` as an answer to ``hook`` (empty: nothing): its kind and apiVersion
    when given, a status Success or Failure, a string message, and retryAfterSeconds only on a hook that
    can block, as a whole number of seconds."""
    problems = _envelope_problems(response, hook.response_kind)
    status = response.get("status")
    if status is None:
        problems.append(NO_STATUS)
    elif status not in (STATUS_SUCCESS, STATUS_FAILURE):
        problems.append(BAD_STATUS.format(status=json.dumps(status)))
    if "message" in response and not isinstance(response["message"], str):
        problems.append(MESSAGE_NOT_STRING.format(message=json.dumps(response["message"])))
    retry = response.get("retryAfterSeconds")
    if retry is None:
        return problems
    whole = isinstance(retry, int) and not isinstance(retry, bool)
    if not hook.retry:
        if retry != 0 or not whole:
            problems.append(RETRY_ON_NON_BLOCKING.format(value=json.dumps(retry), hook=hook.name,
                                                         kind=hook.response_kind))
    elif not whole or not 0 <= retry <= MAX_RETRY_SECONDS:
        problems.append(RETRY_INVALID.format(value=json.dumps(retry)))
    return problems


def ignored(call: HookCall, policy: str) -> bool:
    """Whether the Runtime SDK takes ``call`` as a non-blocking Success: it had no usable answer and its
    handler's failure policy is Ignore (reference §1.4)."""
    return call.error is not None and policy == FAILURE_POLICY_IGNORE


def certificate_problem(url: str, ca_pem: bytes, ca_name: str = "the CA file") -> str | None:
    """None when the extension's certificate verifies against the CA for its URL's host; else why not."""
    parts = urlsplit(url)
    host, port = parts.hostname or "", parts.port or HTTPS_PORT
    context = ssl.create_default_context(cadata=ca_pem.decode(errors="replace"))
    try:
        with socket.create_connection((host, port), timeout=CONNECT_SECONDS) as sock, \
                context.wrap_socket(sock, server_hostname=host):
            return None
    except ssl.SSLCertVerificationError as err:
        detail = err.verify_message or str(err)
        if err.verify_code == HOSTNAME_MISMATCH:
            return CERT_WRONG_HOST.format(host=host, port=port, detail=detail)
        return CERT_UNKNOWN_AUTHORITY.format(host=host, port=port, ca=ca_name, detail=detail)
    except ssl.SSLError as err:
        return TLS_FAILED.format(host=host, port=port, error=err)
    except OSError as err:
        return CONNECT_FAILED.format(host=host, port=port, error=err.strerror or err)
