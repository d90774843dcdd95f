"""The cleanup gate: the add-on controller as a Runtime Extension serving BeforeClusterDelete (seed 003's
``EnforceRemovePolicies``), over real HTTPS, and the ExtensionConfig that registers it.

One HTTPS server per process (``harness.apiserver.http.serve`` on a background thread, a certificate for
``127.0.0.1``/``localhost`` from ``harness.apiserver.http.certificates``), started the first time a gate
needs it. Each :class:`CleanupGate` (one per controller instance: a world, or a controller process) gets a
path prefix ``/gates/<id>`` of its own, which its ExtensionConfig's ``spec.clientConfig.url`` names, with
the server's CA as ``caBundle``; the controller writes that ExtensionConfig itself
(:data:`~controllers.addons.api.EXTENSION_CONFIG_NAME`), so the endpoint is right whether it runs in a
world or as ``python -m controllers``.

The answer never reads the API (the server thread must not touch a world another thread runs): the
controller tells the gate, as it reconciles, which ClusterSummaries of ``EnforceRemovePolicies`` profiles
each Cluster still has and what they wait for. Any left: ``retryAfterSeconds``
(:data:`~controllers.addons.api.ENFORCE_RETRY_SECONDS`) and a message saying why; none: let the deletion go
on. Discovery declares one handler, ``before-cluster-delete``, failure policy ``Fail`` (a gate that does not
answer keeps the Cluster: "ensure deletion").
"""

from __future__ import annotations

import base64
import itertools
import tempfile
import threading
import weakref
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from controllers.addons.api import ENFORCE_RETRY_SECONDS, HANDLER_NAME, WAITING_FOR_CLEANUP
from controllers.runtime.api import (
    BEFORE_CLUSTER_DELETE,
    CATALOG,
    DISCOVERY_HOOK,
    FAILURE_POLICY_FAIL,
    HOOKS_API_VERSION,
    STATUS_SUCCESS,
    hook_path,
)
from harness.apiserver.http.certificates import issue_server_certificate, make_ca
from harness.apiserver.http.serve import bind, run_server

HOST = "127.0.0.1"
GATE_PATH = "/gates/{gate}"
HANDLER_TIMEOUT_SECONDS = 10
UNKNOWN_GATE = "no cleanup gate {gate}"


class CleanupGate:
    """What one controller instance answers BeforeClusterDelete with (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # "<namespace>/<cluster>" -> {ClusterSummary name: what it waits for}
        self._waiting: dict[str, dict[str, str]] = {}
        self.id = ""

    def set_waiting(self, cluster: str, summary: str, reason: str | None) -> None:
        """Record that ``summary`` of ``cluster`` still has policies to remove (``reason``), or not (None)."""
        with self._lock:
            entry = self._waiting.setdefault(cluster, {})
            if reason is None:
                entry.pop(summary, None)
                if not entry:
                    del self._waiting[cluster]
            else:
                entry[summary] = reason

    def waiting(self, cluster: str) -> dict[str, str]:
        with self._lock:
            return dict(self._waiting.get(cluster, {}))

    def answer(self, cluster: str) -> dict[str, Any]:
        """The BeforeClusterDeleteResponse for ``cluster`` (``<namespace>/<name>``)."""
        waiting = self.waiting(cluster)
        response: dict[str, Any] = {"apiVersion": HOOKS_API_VERSION,
                                    "kind": CATALOG[BEFORE_CLUSTER_DELETE].response_kind, "status": STATUS_SUCCESS}
        if waiting:
            details = "; ".join(f"{name}: {reason}" for name, reason in sorted(waiting.items()))
            response["message"] = WAITING_FOR_CLEANUP.format(details=details)
            response["retryAfterSeconds"] = ENFORCE_RETRY_SECONDS
        else:
            response["retryAfterSeconds"] = 0
        return response


def discovery_response() -> dict[str, Any]:
    """The DiscoveryResponse: one BeforeClusterDelete handler."""
    return {"apiVersion": HOOKS_API_VERSION, "kind": DISCOVERY_HOOK.response_kind, "status": STATUS_SUCCESS,
            "handlers": [{"name": HANDLER_NAME,
                          "requestHook": {"apiVersion": HOOKS_API_VERSION, "hook": BEFORE_CLUSTER_DELETE},
                          "timeoutSeconds": HANDLER_TIMEOUT_SECONDS, "failurePolicy": FAILURE_POLICY_FAIL}]}


class _GateServer:
    """The process's HTTPS server for every gate."""

    def __init__(self) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="lifecycle-tck-addons-gate-")
        ca = make_ca("lifecycle-tck-addons-gate-ca")
        certificate = issue_server_certificate(ca, [HOST, "localhost"], common_name="addons-cleanup-gate")
        cert_file, key_file = Path(self._dir.name) / "tls.crt", Path(self._dir.name) / "tls.key"
        cert_file.write_bytes(certificate.cert_pem)
        key_file.write_bytes(certificate.key_pem)
        key_file.chmod(0o600)
        self.ca_bundle = base64.b64encode(ca.cert_pem).decode()
        self._gates: weakref.WeakValueDictionary[str, CleanupGate] = weakref.WeakValueDictionary()
        self._ids = itertools.count(1)
        sock = bind(HOST, 0)
        self.port = sock.getsockname()[1]
        self._server, _ = run_server(self._app(), sock=sock, tls=(str(cert_file), str(key_file)))

    def add(self, gate: CleanupGate) -> str:
        gate.id = str(next(self._ids))
        self._gates[gate.id] = gate
        return f"https://{HOST}:{self.port}" + GATE_PATH.format(gate=gate.id)

    def _app(self) -> FastAPI:
        app = FastAPI(title="lifecycle-tck add-on cleanup gate", docs_url=None, redoc_url=None, openapi_url=None)
        prefix = GATE_PATH.format(gate="{gate}")

        @app.post(prefix + hook_path(DISCOVERY_HOOK.name))
        async def discovery(gate: str) -> Response:
            if self._gates.get(gate) is None:
                return PlainTextResponse(UNKNOWN_GATE.format(gate=gate), status_code=404)
            return JSONResponse(discovery_response())

        @app.post(prefix + hook_path(BEFORE_CLUSTER_DELETE, HANDLER_NAME))
        async def before_cluster_delete(gate: str, request: Request) -> Response:
            found = self._gates.get(gate)
            if found is None:
                return PlainTextResponse(UNKNOWN_GATE.format(gate=gate), status_code=404)
            try:
                body = await request.json()
                meta = body["cluster"]["metadata"]
                cluster = f"{meta['namespace']}/{meta['name']}"
            except (ValueError, KeyError, TypeError):
                return JSONResponse({"apiVersion": HOOKS_API_VERSION, "status": "Failure",
                                     "message": "the request carries no cluster"})
            return JSONResponse(found.answer(cluster))

        return app


_lock = threading.Lock()
_server: _GateServer | None = None


def serve(gate: CleanupGate) -> tuple[str, str]:
    """Serve ``gate`` (starting the process's server the first time); its ``(url, caBundle)``."""
    global _server
    with _lock:
        if _server is None:
            _server = _GateServer()
        return _server.add(gate), _server.ca_bundle
