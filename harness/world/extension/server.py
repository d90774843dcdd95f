"""Starting and stopping the reference Runtime Extension over HTTPS, and its command line.

:class:`ExtensionServer` makes a CA and a server certificate (``cryptography``; hosts ``127.0.0.1``,
``localhost`` and any extra names, e.g. ``<service>.<namespace>.svc`` for the ``service`` form of an
ExtensionConfig), writes them to a directory (``ca.crt``, ``tls.crt``, ``tls.key``), and serves the app on
a background thread, with bounded start and stop (:data:`START_SECONDS`, :data:`STOP_SECONDS`).
``ca_bundle`` is the base64 CA to put into ``spec.clientConfig.caBundle``.

``python -m harness extension --port N --cert-dir DIR [--host H] [--kubeconfig PATH] [--failure-policy
Fail|Ignore] [--timeout-seconds N]`` serves it in the foreground until SIGINT/SIGTERM; it keeps the
certificates of DIR when they exist (so a registered ExtensionConfig stays valid across restarts), prints
the URL, the CA and an ExtensionConfig to apply (also written to ``DIR/extensionconfig.yaml``), and, with
``--kubeconfig``, syncs the test extension's ConfigMaps with that cluster every second, printing
``answering from the ConfigMap <namespace>/<name>`` whenever the answers it read change.
"""

from __future__ import annotations

import base64
import socket
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Any

from harness.apiserver.http.certificates import KeyPair, issue_server_certificate, make_ca, write_private
from harness.apiserver.http.serve import Server, bind, run_server
from harness.kube.names.runtime_sdk import EXTENSION_CONFIG_KIND, FAILURE_POLICY_FAIL
from harness.kube.names.runtime_sdk import RUNTIME_API_VERSION as API_VERSION
from harness.world.extension.app import VirtualClockLike, VirtualHangs, create_app
from harness.world.extension.responses import ConfigMapSync, HookResponder

HOST = "127.0.0.1"
START_SECONDS = 10.0
STOP_SECONDS = 10.0
CA_FILE = "ca.crt"
CERT_FILE = "tls.crt"
KEY_FILE = "tls.key"
CA_KEY_FILE = "ca.key"
DEFAULT_HOSTS = ("127.0.0.1", "localhost")
# What the command writes next to the certificates, ready for ``kubectl apply -f``.
EXTENSION_CONFIG_FILE = "extensionconfig.yaml"
CONFIGMAP_READ = "answering from the ConfigMap {namespace}/{name}"


def load_or_make_certificates(cert_dir: Path, hosts: list[str]) -> tuple[KeyPair, KeyPair]:
    """``(CA, server certificate)`` from ``cert_dir``, made (and written) when not there yet."""
    cert_dir.mkdir(parents=True, exist_ok=True)
    paths = [cert_dir / name for name in (CA_FILE, CA_KEY_FILE, CERT_FILE, KEY_FILE)]
    if all(p.exists() for p in paths):
        for key_file in (paths[1], paths[3]):
            key_file.chmod(0o600)  # a key left readable by others (an older kit, a copy) is narrowed
        ca_pem, ca_key, cert, key = (p.read_bytes() for p in paths)
        return KeyPair(ca_pem, ca_key), KeyPair(cert, key)
    ca = make_ca("lifecycle-tck-extension-ca")
    server = issue_server_certificate(ca, list(dict.fromkeys([*DEFAULT_HOSTS, *hosts])),
                                      common_name="lifecycle-tck-extension")
    for path, data in zip(paths, (ca.cert_pem, ca.key_pem, server.cert_pem, server.key_pem)):
        if path.name.endswith(".key"):
            write_private(path, data)
        else:
            path.write_bytes(data)
    return ca, server


class _Server(Server):
    """A uvicorn server that drops its connections at shutdown instead of waiting for them: a client's
    idle keep-alive TLS connection (the Runtime SDK client pools them) would otherwise hold the shutdown
    for the whole graceful timeout, and a hanging call has nothing worth finishing."""

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for connection in list(self.server_state.connections):
            transport: Any = getattr(connection, "transport", None)
            if transport is not None:
                transport.abort()
        await super().shutdown(sockets)

    def abort_peer(self, peer: tuple[str, int] | None) -> bool:
        """Drop the connection of the client at ``peer`` (host, port) without an answer, as a caller that
        gave up would see it go; False when there is none. Called on the server's event loop."""
        for connection in list(self.server_state.connections):
            transport: Any = getattr(connection, "transport", None)
            if peer is not None and getattr(connection, "client", None) == peer and transport is not None:
                transport.abort()
                return True
        return False


class ExtensionServer:
    """The reference extension on ``host:port`` (0: a free port) over HTTPS, on a background thread.

    ``clock``: the virtual clock of the world whose controllers call it, when that world waits for their
    calls (a scenario's world): a scripted hang is then held on that clock, not in wall time (the clock
    passes the call's deadline and the call is cancelled; see harness/world/extension/app.py)."""

    def __init__(self, responder: HookResponder | None = None, *, host: str = HOST, port: int = 0,
                 hosts: list[str] | None = None, cert_dir: Path | None = None,
                 clock: VirtualClockLike | None = None) -> None:
        self.responder = responder if responder is not None else HookResponder()
        self.hangs = VirtualHangs(clock) if clock is not None else None
        if self.hangs is not None:
            self.hangs.cancel = self._abort_peer
        self.host = host
        self._tmp = tempfile.TemporaryDirectory(prefix="lifecycle-tck-extension-") if cert_dir is None else None
        self.cert_dir = cert_dir if cert_dir is not None else Path(self._tmp.name)  # type: ignore[union-attr]
        self.ca, self.certificate = load_or_make_certificates(self.cert_dir, list(hosts or []))
        self._requested_port = port
        self.port = 0
        self._server: _Server | None = None

    def _abort_peer(self, peer: tuple[str, int] | None) -> bool:
        server = self._server
        return server is not None and server.abort_peer(peer)

    @property
    def ca_bundle(self) -> str:
        """The CA, base64-encoded, for ``spec.clientConfig.caBundle``."""
        return base64.b64encode(self.ca.cert_pem).decode()

    @property
    def url(self) -> str:
        return f"https://{self.host}:{self.port}"

    def start(self, timeout: float = START_SECONDS) -> ExtensionServer:
        """Serve (again on the same port after :meth:`interrupt`); returns once connections are accepted
        (RuntimeError after ``timeout`` seconds)."""
        sock = bind(self.host, self.port or self._requested_port)
        self.port = sock.getsockname()[1]
        tls = (str(self.cert_dir / CERT_FILE), str(self.cert_dir / KEY_FILE))
        server, _ = run_server(create_app(self.responder, self.hangs), self.host, sock=sock, timeout=timeout, tls=tls,
                               server_class=_Server, name="extension")
        self._server = server  # type: ignore[assignment]
        return self

    def interrupt(self, timeout: float = STOP_SECONDS) -> None:
        """Stop serving (calls now find the connection refused) but keep the port and the certificates,
        so :meth:`start` serves the same URL with the same CA again."""
        server, self._server = self._server, None
        if server is not None:
            server.stop(timeout)
            if server.thread is not None and server.thread.is_alive():
                raise RuntimeError(f"the extension on {self.url} did not stop within {timeout} s")

    def stop(self, timeout: float = STOP_SECONDS) -> None:
        """Stop serving and wait for the thread; RuntimeError when it does not end within ``timeout``."""
        try:
            self.interrupt(timeout)
        finally:
            if self._tmp is not None:
                self._tmp.cleanup()
                self._tmp = None

    def __enter__(self) -> ExtensionServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()


def extension_config_yaml(name: str, url: str, ca_bundle: str, settings: dict[str, str] | None = None) -> str:
    """An ExtensionConfig for the extension at ``url``, as YAML to apply."""
    lines = [f"apiVersion: {API_VERSION}", f"kind: {EXTENSION_CONFIG_KIND}", "metadata:", f"  name: {name}",
             "spec:", "  clientConfig:", f"    url: {url}", f"    caBundle: {ca_bundle}", "  namespaceSelector: {}"]
    if settings:
        lines.append("  settings:")
        lines.extend(f'    {key}: "{value}"' for key, value in settings.items())
    return "\n".join(lines) + "\n"


def run(*, host: str, port: int, cert_dir: str, kubeconfig: str | None, failure_policy: str = FAILURE_POLICY_FAIL,
        timeout_seconds: int | None = None, name: str = "test-extension") -> int:
    """The ``extension`` command: serve in the foreground until SIGINT/SIGTERM; the exit code. Once it
    listens it prints the URL, the CA and an ExtensionConfig, which it also writes to
    ``<cert dir>/extensionconfig.yaml``; with a kubeconfig, it prints a line whenever it starts answering
    from a changed ConfigMap."""
    responder = HookResponder(failure_policy=failure_policy, timeout_seconds=timeout_seconds)
    ca, _ = load_or_make_certificates(Path(cert_dir), [host])
    ca_bundle = base64.b64encode(ca.cert_pem).decode()
    sync = None
    if kubeconfig:
        from harness.client.http import HttpClient

        def changed(namespace: str, config_map: str) -> None:
            print(CONFIGMAP_READ.format(namespace=namespace, name=config_map), flush=True)

        sync = ConfigMapSync(responder, HttpClient.from_kubeconfig(Path(kubeconfig).read_text()), on_change=changed)
        sync.start()

    def ready(actual_port: int) -> None:
        url = f"https://{host}:{actual_port}"
        config = extension_config_yaml(name, url, ca_bundle, {"extensionConfigName": name})
        config_path = Path(cert_dir) / EXTENSION_CONFIG_FILE
        config_path.write_text(config)
        print(f"Runtime Extension: {url}", flush=True)
        print(f"CA (caBundle): {ca_bundle}", flush=True)
        print(f"ExtensionConfig (also in {config_path}):\n---\n" + config, flush=True)

    sock = bind(host, port)
    actual_port = sock.getsockname()[1]
    # _Server drops the callers' idle keep-alive connections at SIGINT/SIGTERM instead of waiting them out.
    server = _Server(create_app(responder), log_level="warning", on_started=lambda: ready(actual_port),
                     tls=(str(Path(cert_dir) / CERT_FILE), str(Path(cert_dir) / KEY_FILE)))
    server.port = actual_port
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        if sync is not None:
            sync.stop()
    return 0
