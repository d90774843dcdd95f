"""``lifecycle-tck serve``: the world over HTTP until interrupted.

The clock follows wall time (plus whatever ``POST /harness/v1/clock/advance`` adds), the world is
settled after every write and every few milliseconds between requests, and the kubeconfig is
rewritten whenever a workload cluster comes or goes.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from harness.apiserver.http import create_app, serve_forever, url, write_kubeconfig
from harness.apiserver.http.faults import chaos_rules, injector_of
from harness.world.fixtures import FixtureError, apply_documents, read_documents
from harness.world.world import MANAGEMENT_SIMULATORS, REFERENCE_CONTROLLERS, SIMULATORS, SYSTEM_USER, World

# The world's provisioner of workload clusters acts as this system user (harness/world/world.py).
WORKLOAD_CLUSTERS = "workload-clusters"
# How often the served world runs its due work between requests (timers, kubelet, ...).
TICK_SECONDS = 0.05


class UsageError(ValueError):
    """A command-line value that cannot be used; the message says which."""


def controller_names(spec: str) -> list[str]:
    """The simulators and reference controllers that ``--controllers`` names (``all``, ``none`` or a list)."""
    known = list(SIMULATORS) + list(MANAGEMENT_SIMULATORS) + list(REFERENCE_CONTROLLERS)
    if spec == "all":
        return known
    if spec == "none":
        return []
    names = [n.strip() for n in spec.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(f"unknown controller(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return names


def default_kubeconfig_path() -> Path:
    return Path(tempfile.gettempdir()) / "lifecycle-tck" / "kubeconfig"


def _tls_files(folder: Path, host: str) -> tuple[str, str, bytes]:
    """A CA and a server certificate for ``host``, written beside the kubeconfig: (cert, key, CA PEM)."""
    # Imported here: cryptography costs start-up time that a server without a token need not pay.
    from harness.apiserver.http.certificates import issue_server_certificate, make_ca

    ca = make_ca()
    pair = issue_server_certificate(ca, [host, "127.0.0.1", "localhost", "::1"])
    folder.mkdir(parents=True, exist_ok=True)
    cert, key = folder / "serving.crt", folder / "serving.key"
    cert.write_bytes(pair.cert_pem)
    key.touch(mode=0o600)
    key.write_bytes(pair.key_pem)
    return str(cert), str(key), ca.cert_pem


def serve(
    *,
    host: str,
    port: int,
    kubeconfig: str | None,
    controllers: str,
    fixtures: list[str],
    token: str | None,
    chaos: float | None = None,
) -> int:
    """Serve until SIGINT/SIGTERM; 0 on a clean stop, 1 for bad fixtures, 2 for bad usage.
    ``chaos``: answer about that share of the API requests with 409, 429 or 500, except those of
    the world's own simulators (harness/apiserver/http/faults.py; ``GET /harness/v1/faults`` shows
    the rules, ``DELETE`` clears them)."""
    try:
        names = controller_names(controllers)
    except UsageError as err:
        print(f"lifecycle-tck serve: {err}", file=sys.stderr)
        return 2
    world = World(simulators=[n for n in names if n not in REFERENCE_CONTROLLERS],
                  controllers=[n for n in names if n in REFERENCE_CONTROLLERS], start=time.time(),
                  follow_wall_time=True)
    if fixtures:
        try:
            apply_documents(world.client(), read_documents(fixtures))
        except FixtureError as err:
            print(f"lifecycle-tck serve: fixtures: {err}", file=sys.stderr)
            return 1
        world.settle()
    path = Path(kubeconfig) if kubeconfig else default_kubeconfig_path()
    app = create_app(world, token=token, tick_seconds=TICK_SECONDS)
    # kubectl sends bearer tokens only over TLS (as kube-apiserver only takes them there): with a
    # token, serve HTTPS with a CA of our own, which the kubeconfig carries.
    tls = _tls_files(path.parent, host) if token else None
    if tls is not None:
        world.clusters.ca_pem = tls[2]

    def ready(bound_port: int) -> None:
        base = url(host, bound_port, tls=tls is not None)
        world.set_base_url(base, token)
        if chaos:
            # From now on (the world's own start-up is not under test). The simulators stand for
            # kubelets and Kubernetes' own controllers, not for what is tested: they are spared.
            simulators = [n for n in names if n not in REFERENCE_CONTROLLERS] + [WORKLOAD_CLUSTERS]
            injector = injector_of(world.clusters)
            for rule in chaos_rules(chaos, except_users=[SYSTEM_USER.format(n) for n in simulators]):
                injector.add(rule)
        write_kubeconfig(world.clusters, path)
        world.on_clusters_changed(lambda _name: write_kubeconfig(world.clusters, path))
        print(f"Serving the fake Kubernetes API at {base}", flush=True)
        print(f"Kubeconfig: {path}  (export KUBECONFIG={path})", flush=True)
        print(f"Controllers: {', '.join(names) if names else 'none'}", flush=True)

    try:
        serve_forever(app, host, port, on_ready=ready, log_level="warning",
                      tls=(tls[0], tls[1]) if tls is not None else None)
    except OSError as err:
        print(f"lifecycle-tck serve: cannot listen on {host}:{port}: {err}", file=sys.stderr)
        return 1
    return 0
