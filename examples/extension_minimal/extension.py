"""A minimal Runtime Extension for Cluster API's lifecycle hooks (Runtime SDK), with the Python standard
library's ``http.server`` and ``ssl`` (and ``cryptography`` to make its certificates).

It advertises four handlers. The blocking ones (BeforeClusterCreate, BeforeClusterUpgrade,
BeforeClusterDelete) hold each Cluster for its first ``--hold`` calls (answering ``retryAfterSeconds``
``--retry``), then let it go; AfterControlPlaneInitialized just says Success. It counts calls, not seconds,
so it behaves the same whatever clock the caller keeps.

    python examples/extension_minimal/extension.py [--host 127.0.0.1] [--port 0] [--cert-dir DIR]
                                                   [--hold 2] [--retry 5] [--broken KIND]

It prints its URL and the CA file to give to Cluster API (``caBundle``) or to ``lifecycle-tck conformance
--target extension``. ``--broken`` makes it wrong on purpose: ``handler-name`` advertises a handler name
that is not a DNS-1123 label, ``retry-after`` answers AfterControlPlaneInitialized (which cannot block)
with a retryAfterSeconds, ``garbage`` answers discovery with something that is not JSON.
"""

from __future__ import annotations

import argparse
import datetime
import ipaddress
import json
import ssl
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

API_VERSION = "hooks.runtime.cluster.x-k8s.io/v1alpha1"
PREFIX = "/" + API_VERSION
# handler name -> the hook it handles
HANDLERS = {
    "before-cluster-create": "BeforeClusterCreate",
    "after-control-plane-initialized": "AfterControlPlaneInitialized",
    "before-cluster-upgrade": "BeforeClusterUpgrade",
    "before-cluster-delete": "BeforeClusterDelete",
}
BLOCKING_HOOKS = {"BeforeClusterCreate", "BeforeClusterUpgrade", "AfterControlPlaneUpgrade", "BeforeClusterDelete"}
BROKEN = ("handler-name", "retry-after", "garbage")


def make_certificates(cert_dir: Path, host: str) -> tuple[Path, Path, Path]:
    """A CA and a server certificate for ``host`` in ``cert_dir`` (kept if already there): ca.crt, tls.crt, tls.key."""
    ca_file, cert_file, key_file = cert_dir / "ca.crt", cert_dir / "tls.crt", cert_dir / "tls.key"
    if ca_file.exists() and cert_file.exists() and key_file.exists():
        return ca_file, cert_file, key_file
    cert_dir.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "extension-minimal-ca")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=365))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    try:
        names: list[x509.GeneralName] = [x509.IPAddress(ipaddress.ip_address(host))]
    except ValueError:
        names = [x509.DNSName(host)]
    cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=365))
            .add_extension(x509.SubjectAlternativeName([*names, x509.DNSName("localhost")]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    key_file.chmod(0o600)
    return ca_file, cert_file, key_file


class Extension:
    """What the extension answers; it remembers how often each Cluster asked each hook."""

    def __init__(self, hold: int, retry: int, broken: str | None) -> None:
        self.hold, self.retry, self.broken = hold, retry, broken
        self.calls: dict[tuple[str, str], int] = {}
        self.lock = threading.Lock()

    def discovery(self) -> dict:
        handlers = [{"name": "Before_Cluster_Create" if self.broken == "handler-name" and hook == "BeforeClusterCreate"
                     else name, "requestHook": {"apiVersion": API_VERSION, "hook": hook},
                     "timeoutSeconds": 5, "failurePolicy": "Fail"} for name, hook in HANDLERS.items()]
        return {"apiVersion": API_VERSION, "kind": "DiscoveryResponse", "status": "Success", "handlers": handlers}

    def answer(self, hook: str, request: dict) -> dict:
        meta = (request.get("cluster") or {}).get("metadata") or {}
        cluster = f"{meta.get('namespace')}/{meta.get('name')}"
        with self.lock:
            count = self.calls[(hook, cluster)] = self.calls.get((hook, cluster), 0) + 1
        response = {"apiVersion": API_VERSION, "kind": hook + "Response", "status": "Success"}
        if hook in BLOCKING_HOOKS:
            held = count <= self.hold
            response["retryAfterSeconds"] = self.retry if held else 0
            response["message"] = f"preparing add-ons of {cluster} ({count} of {self.hold})" if held else "ready"
        elif self.broken == "retry-after":
            response["retryAfterSeconds"] = 30
        return response


def handler_class(extension: Extension) -> type[BaseHTTPRequestHandler]:
    hooks_by_path = {f"{PREFIX}/{hook.lower()}/{name.lower()}": hook for name, hook in HANDLERS.items()}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            path = self.path.split("?", 1)[0]
            try:
                request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            except ValueError:
                return self._send(400, b"the request is not JSON")
            if path == PREFIX + "/discovery":
                if extension.broken == "garbage":
                    return self._send(200, b"<html>this is not a DiscoveryResponse")
                return self._send(200, json.dumps(extension.discovery()).encode())
            if path in hooks_by_path:
                return self._send(200, json.dumps(extension.answer(hooks_by_path[path], request)).encode())
            return self._send(404, b"no such handler")

        def _send(self, code: int, body: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (http.server's name)
            print(f"{self.address_string()} {format % args}", flush=True)

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--cert-dir", default=None, help="where ca.crt, tls.crt and tls.key are (made if absent)")
    parser.add_argument("--hold", type=int, default=2, help="how many calls of a blocking hook it holds per Cluster")
    parser.add_argument("--retry", type=int, default=5, help="the retryAfterSeconds it answers while holding")
    parser.add_argument("--broken", choices=BROKEN, default=None, help="be wrong on purpose (see above)")
    args = parser.parse_args()
    cert_dir = Path(args.cert_dir or tempfile.mkdtemp(prefix="extension-minimal-"))
    ca_file, cert_file, key_file = make_certificates(cert_dir, args.host)
    server = ThreadingHTTPServer((args.host, args.port), handler_class(Extension(args.hold, args.retry, args.broken)))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    url = f"https://{args.host}:{server.server_address[1]}"
    print(f"Runtime Extension: {url}", flush=True)
    print(f"CA: {ca_file}", flush=True)
    print(f"Check it: lifecycle-tck conformance --target extension --extension-url {url} --ca-file {ca_file}",
          flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
