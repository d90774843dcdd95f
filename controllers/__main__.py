"""``python -m controllers [--kubeconfig PATH] [--only NAMES] [--control stdio]``: the reference controllers
as a process of their own, against a served world (``python -m harness serve``), until SIGINT or SIGTERM.

The controllers follow the server's clock (``ServerClock``), so ``POST /harness/v1/clock/advance`` moves
their timers too. With ``--control stdio`` the process runs only when told, through the JSON-line
protocol of :mod:`harness.client.remote` on its standard input and output (how the conformance suite
settles a world and a controller process together); until the input ends. Exit codes: 0 after a signal
or the end of the input, 2 for bad usage, 1 when the kubeconfig cannot be used.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controllers.registry import CONTROLLERS, load
from harness.client import Manager
from harness.client.cache import CachedClient
from harness.client.http import HttpClient
from harness.client.remote import ServerClock, run_controlled, run_forever
from harness.clock import Scheduler, VirtualClock

USER = "system:serviceaccount:capi-system:capi-controller-manager"
# A controlled process reads watched kinds from its watches (harness/client/cache.py); set this to 0 to
# have every read be a round trip (to compare the two, or to rule the cache out when chasing a failure).
READ_CACHE_ENV = "LIFECYCLE_TCK_READ_CACHE"
CONTROL_STDIO = "stdio"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m controllers", description=__doc__.splitlines()[0])
    kubeconfig = os.environ.get("KUBECONFIG")
    parser.add_argument("--kubeconfig", required=not kubeconfig, default=kubeconfig,
                        help="kubeconfig of the management cluster (default: $KUBECONFIG)")
    parser.add_argument("--only", default="", help="comma-separated controller names (default: all): "
                        + ", ".join(CONTROLLERS))
    parser.add_argument("--control", choices=[CONTROL_STDIO], help="run only when told, through stdin/stdout")
    return parser


def selected(only: str) -> list[str]:
    """The controller names ``--only`` selects (all when empty); ValueError naming unknown ones."""
    names = [n.strip() for n in only.split(",") if n.strip()] or list(CONTROLLERS)
    unknown = [n for n in names if n not in CONTROLLERS]
    if unknown:
        raise ValueError(f"unknown controller(s) {', '.join(unknown)}; known: {', '.join(CONTROLLERS)}")
    return names


def _controlled(kubeconfig: str, names: list[str]) -> int:
    """``--control stdio``: the protocol of :mod:`harness.client.remote` on stdin/stdout; the
    kubeconfig is read, and the controllers start, at the first request."""
    clients: list[HttpClient] = []

    def connect(now: float) -> tuple[Manager, Callable[[], dict[str, dict[str, Any]]]]:
        client = HttpClient.from_kubeconfig(Path(kubeconfig).read_text(), user=USER)
        clients.append(client)
        manager = Manager(Scheduler(VirtualClock(now)))  # moved by the requests only
        # Reads of watched kinds come from the watches, as through informers (harness/client/cache.py).
        reader = CachedClient(client) if os.environ.get(READ_CACHE_ENV, "1") != "0" else client
        for name in names:
            manager.add(load(name)(reader))
        if isinstance(reader, CachedClient):
            reader.serve_from(manager)
        return manager, client.watch_streams

    try:
        run_controlled(names, connect, sys.stdin, sys.stdout)
    finally:
        for client in clients:
            client.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the selected controllers until SIGINT/SIGTERM; the exit code."""
    args = _parser().parse_args(argv)
    try:
        names = selected(args.only)
    except ValueError as err:
        print(f"controllers: {err}", file=sys.stderr)
        return 2
    if args.control == CONTROL_STDIO:
        return _controlled(args.kubeconfig, names)
    try:
        client = HttpClient.from_kubeconfig(Path(args.kubeconfig).read_text(), user=USER)
        clock = ServerClock(client.clock)
    except (OSError, ValueError, ConnectionError) as err:
        print(f"controllers: cannot use {args.kubeconfig}: {err}", file=sys.stderr)
        return 1
    manager = Manager(Scheduler(clock))
    for name in names:
        manager.add(load(name)(client))
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda _signum, _frame: stop.set())
    print(f"Controllers: {', '.join(names)}", flush=True)
    run_forever(manager, clock, stop)
    client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
