"""``lifecycle-tck serve``: the world over HTTPS until interrupted, looking like a fresh cluster.

The clock follows wall time (plus whatever ``POST /harness/v1/clock/advance`` adds), the world is
settled after every write and every few milliseconds between requests, and the kubeconfig is
rewritten whenever a workload cluster comes or goes.

A fresh ``serve`` looks like a kind cluster: HTTPS with a CA it makes (carried in the kubeconfig as
``certificate-authority-data``; plain HTTP only with ``--insecure-http``), Ready Nodes (``--nodes``),
the system namespaces, and kube-controller-manager's defaults in every namespace (the ``default``
ServiceAccount, the ``kube-root-ca.crt`` ConfigMap, the storage protection finalizers;
harness/world/cluster_defaults.py).

Safe by default: without a token it listens on loopback only (another ``--host`` needs a token or
``--insecure-allow-remote``); the token comes from ``--token-file`` or ``LIFECYCLE_TCK_TOKEN`` rather
than the command line (``--token`` is kept); the ``Host`` header must name the server; the state
directory (kubeconfig, serving key) is private to the user.
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from harness.apiserver.faults import chaos_rules, injector_of
from harness.apiserver.http import create_app, serve_forever, url, write_kubeconfig
from harness.apiserver.http.guard import HostCheck, is_loopback
from harness.world.cluster_defaults import add_nodes
from harness.world.fixtures import FixtureError, apply_documents, read_documents
from harness.world.world import (
    CLUSTER_DEFAULT_SIMULATORS,
    MANAGEMENT_SIMULATORS,
    REFERENCE_CONTROLLERS,
    SIMULATORS,
    SYSTEM_USER,
    World,
)

# The world's provisioner of workload clusters acts as this system user (harness/world/world.py).
WORKLOAD_CLUSTERS = "workload-clusters"
# How often the served world runs its due work between requests (timers, kubelet, ...).
TICK_SECONDS = 0.05
TOKEN_ENV = "LIFECYCLE_TCK_TOKEN"
STATE_DIR_NAME = "lifecycle-tck"
SERVING_CERT = "serving.crt"
SERVING_KEY = "serving.key"
# The CA certificate, written beside the kubeconfig (curl --cacert).
CA_FILE = "ca.crt"
REMOTE_WITHOUT_TOKEN = (
    "refusing to listen on {} without a token: anyone who can reach it could change the world. Give "
    "--token-file PATH (or LIFECYCLE_TCK_TOKEN), or --insecure-allow-remote if that is really meant"
)

# Retention of a long-running serve (scenario worlds keep everything): enough for any test run to
# read back its own writes and resume its watches, bounded so that hours of traffic (or 300
# rewrites of a 1 MiB ConfigMap) cannot grow the process without end.
DEFAULT_AUDIT_MAX_RECORDS = 20_000
DEFAULT_AUDIT_MAX_BYTES = 64 * 1024 * 1024
DEFAULT_HISTORY_MAX_EVENTS = 50_000
DEFAULT_HISTORY_MAX_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Retention:
    """How much audit trail and watch history (per cluster) ``serve`` keeps; oldest go first."""

    audit_max_records: int = DEFAULT_AUDIT_MAX_RECORDS
    audit_max_bytes: int = DEFAULT_AUDIT_MAX_BYTES
    history_max_events: int = DEFAULT_HISTORY_MAX_EVENTS
    history_max_bytes: int = DEFAULT_HISTORY_MAX_BYTES


class UsageError(ValueError):
    """A command-line value that cannot be used; the message says which."""


def controller_names(spec: str) -> list[str]:
    """The simulators and reference controllers that ``--controllers`` names (``all``, ``none`` or a list)."""
    known = [*SIMULATORS, *CLUSTER_DEFAULT_SIMULATORS, *MANAGEMENT_SIMULATORS, *REFERENCE_CONTROLLERS]
    if spec == "all":
        return known
    if spec == "none":
        return []
    names = [n.strip() for n in spec.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(f"unknown controller(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return names


def default_state_dir() -> Path:
    """Where ``serve`` keeps its kubeconfig and serving key unless told otherwise, private to the
    user: ``$XDG_RUNTIME_DIR/lifecycle-tck`` when there is such a directory, else
    ``<temp dir>/lifecycle-tck-<uid>`` (never one directory shared by every user)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and Path(runtime).is_dir():
        return Path(runtime) / STATE_DIR_NAME
    return Path(tempfile.gettempdir()) / f"{STATE_DIR_NAME}-{os.getuid()}"


def private_dir(path: Path) -> Path:
    """``path`` as a directory only its owner can enter (made 0700; an existing one of ours narrowed
    to 0700); UsageError when it belongs to someone else or is not a directory (a symlink planted
    there, for one)."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = path.lstat()
    except OSError as err:
        raise UsageError(f"cannot use {path} for the state: {err}") from err
    if not stat.S_ISDIR(info.st_mode):
        raise UsageError(f"{path} is not a directory; give --kubeconfig elsewhere")
    if info.st_uid != os.getuid():
        raise UsageError(f"{path} belongs to another user; give --kubeconfig elsewhere")
    if stat.S_IMODE(info.st_mode) & 0o077:
        path.chmod(0o700)
    return path


def default_kubeconfig_path() -> Path:
    """The kubeconfig ``serve`` writes when ``--kubeconfig`` is not given (in :func:`default_state_dir`)."""
    return default_state_dir() / "kubeconfig"


def kubeconfig_problem(path: Path) -> str | None:
    """Why the kubeconfig cannot be written at ``path`` (its folder is made if need be), or None."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a"):
            pass
    except OSError as err:
        return f"cannot write the kubeconfig {path}: {err.strerror or err}"
    return None


def read_token(token: str | None, token_file: str | None) -> str | None:
    """The bearer token to require: from ``--token-file``, ``--token``, or ``LIFECYCLE_TCK_TOKEN``
    (in that order; giving both options is a usage error); None when none is given."""
    if token is not None and token_file is not None:
        raise UsageError("give --token or --token-file, not both")
    if token_file is not None:
        try:
            text = Path(token_file).read_text().strip()
        except (OSError, UnicodeDecodeError) as err:
            raise UsageError(f"--token-file: cannot read {token_file}: {err}") from err
        if not text or any(ch.isspace() for ch in text):
            raise UsageError(f"--token-file: {token_file} must hold one token (no spaces), not {len(text)} characters")
        return text
    if token is not None:
        if not token or any(ch.isspace() for ch in token):
            raise UsageError("--token must be one word")
        return token
    return os.environ.get(TOKEN_ENV) or None


def check_listen_host(host: str, token: str | None, allow_remote: bool) -> None:
    """UsageError for a non-loopback ``host`` without a token, unless remote access is explicitly allowed."""
    if not is_loopback(host) and token is None and not allow_remote:
        raise UsageError(REMOTE_WITHOUT_TOKEN.format(host))


def tls_files(folder: Path, host: str) -> tuple[str, str, bytes]:
    """A fresh CA and a server certificate for ``host`` (and the loopback names), written to
    ``folder`` (the key 0600): (cert path, key path, CA PEM)."""
    # Imported here: cryptography costs start-up time that an --insecure-http server need not pay.
    from harness.apiserver.http.certificates import issue_server_certificate, make_ca, write_private

    ca = make_ca()
    hosts = [host, "127.0.0.1", "localhost", "::1"]
    if host in ("0.0.0.0", "::", ""):
        hosts.append(socket.gethostname())
    pair = issue_server_certificate(ca, [h for h in hosts if h not in ("0.0.0.0", "::", "")])
    folder.mkdir(parents=True, exist_ok=True)
    cert, key = folder / SERVING_CERT, folder / SERVING_KEY
    cert.write_bytes(pair.cert_pem)
    write_private(key, pair.key_pem)
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
    token_file: str | None = None,
    insecure_http: bool = False,
    insecure_allow_remote: bool = False,
    nodes: int = 1,
    retention: Retention | None = None,
) -> int:
    """Serve until SIGINT/SIGTERM; 0 on a clean stop, 1 for bad fixtures or an unusable address,
    2 for bad usage (a port already taken, a kubeconfig that cannot be written). ``chaos``: answer
    about that share of the API requests with 409, 429 or 500, except those of the world's own
    simulators (harness/apiserver/faults.py; ``GET /harness/v1/faults`` shows the rules, ``DELETE``
    clears them). ``retention``: audit and watch-history limits (defaults: :class:`Retention`)."""
    try:
        names = controller_names(controllers)
        token = read_token(token, token_file)
        check_listen_host(host, token, insecure_allow_remote)
        if nodes < 0:
            raise UsageError(f"--nodes must be 0 or more, not {nodes}")
        path = Path(kubeconfig) if kubeconfig else private_dir(default_state_dir()) / "kubeconfig"
    except UsageError as err:
        print(f"lifecycle-tck serve: {err}", file=sys.stderr)
        return 2
    problem = kubeconfig_problem(path)
    if problem:
        print(f"lifecycle-tck serve: {problem}", file=sys.stderr)
        return 2
    keep = retention or Retention()
    world = World(simulators=[n for n in names if n not in REFERENCE_CONTROLLERS],
                  controllers=[n for n in names if n in REFERENCE_CONTROLLERS], start=time.time(),
                  follow_wall_time=True,
                  history=keep.history_max_events, history_bytes=keep.history_max_bytes,
                  audit_max_records=keep.audit_max_records, audit_max_bytes=keep.audit_max_bytes)
    # kubectl sends bearer tokens only over TLS, and JavaScript clients refuse plain-HTTP watches:
    # HTTPS with a CA of our own, which the kubeconfig carries (and kube-root-ca.crt publishes). The
    # serving key lives in a directory of this process only (0700), gone when it stops; the CA
    # certificate is written beside the kubeconfig for curl and friends.
    serving_dir = None if insecure_http else Path(tempfile.mkdtemp(prefix="lifecycle-tck-serving-"))
    try:
        return _run(world, names, path, serving_dir, host=host, port=port, token=token, chaos=chaos, nodes=nodes,
                    fixtures=fixtures)
    finally:
        if serving_dir is not None:
            shutil.rmtree(serving_dir, ignore_errors=True)


def _run(
    world: World,
    names: list[str],
    path: Path,
    serving_dir: Path | None,
    *,
    host: str,
    port: int,
    token: str | None,
    chaos: float | None,
    nodes: int,
    fixtures: list[str],
) -> int:
    tls = None if serving_dir is None else tls_files(serving_dir, host)
    if tls is not None:
        world.clusters.ca_pem = tls[2]
        path.parent.mkdir(parents=True, exist_ok=True)
        (path.parent / CA_FILE).write_bytes(tls[2])
    if nodes:
        add_nodes(world.client(), nodes, world.now())
    world.settle()
    if fixtures:
        try:
            apply_documents(world.client(), read_documents(fixtures))
        except FixtureError as err:
            print(f"lifecycle-tck serve: fixtures: {' '.join(str(err).split())}", file=sys.stderr)
            return 1
        world.settle()
    app = create_app(world, token=token, tick_seconds=TICK_SECONDS, hosts=HostCheck(host))

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
        if tls is not None:
            print(f"CA: {path.parent / CA_FILE}", flush=True)
        print(f"Controllers: {', '.join(names) if names else 'none'}", flush=True)

    try:
        serve_forever(app, host, port, on_ready=ready, log_level="warning",
                      tls=(tls[0], tls[1]) if tls is not None else None)
    except OSError as err:
        print(f"lifecycle-tck serve: cannot listen on {host}:{port}: {err.strerror or err}", file=sys.stderr)
        return 2
    return 0
