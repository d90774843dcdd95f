"""``python -m harness`` (installed as ``lifecycle-tck``): serve the fake API, run the conformance suite."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from harness.resources import ResourceError, features_dir
from harness.versions import version_line

LEVELS = ("must", "should", "may")
TARGETS = ("reference", "reference-process", "hic", "controller", "machine-controller", "extension")


def _rate(text: str) -> float:
    """A fault rate: a number greater than 0 and at most 1."""
    try:
        rate = float(text)
    except ValueError:
        rate = -1.0
    if not 0 < rate <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a rate: give a number greater than 0 and at most 1")
    return rate


_UNITS = {"": 1, "Ki": 1024, "Mi": 1024**2, "Gi": 1024**3}


def _size(text: str) -> int:
    """A byte count: a positive integer, optionally with a Ki, Mi or Gi suffix (``64Mi``)."""
    number, unit = text, ""
    for suffix in ("Ki", "Mi", "Gi"):
        if text.endswith(suffix):
            number, unit = text[: -len(suffix)], suffix
    if not number.isdigit() or int(number) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size: a positive integer, optionally with Ki, Mi or Gi")
    return int(number) * _UNITS[unit]


def _count(text: str) -> int:
    """A positive integer."""
    if not text.isdigit() or int(text) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive integer")
    return int(text)


AUTO = "auto"
# Targets whose scenarios each build their own World in this process, sharing nothing: --jobs auto by default.
# Any other target runs a user's command or extension, which may not stand several instances at once.
PARALLEL_TARGETS = ("reference",)


def _jobs(text: str) -> int | str:
    """Worker processes: a positive integer, or ``auto``."""
    if text == AUTO:
        return AUTO
    if not text.isdigit() or int(text) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of jobs: a positive integer or {AUTO}")
    return int(text)


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity, where the platform says), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no sched_getaffinity (macOS, Windows)
        return max(1, os.cpu_count() or 1)


def resolve_jobs(jobs: int | str | None, target: str) -> int:
    """The worker processes of a conformance run: ``--jobs`` as given; ``auto`` is :func:`usable_cpus`;
    not given: ``auto`` for :data:`PARALLEL_TARGETS`, 1 otherwise."""
    if jobs is None:
        jobs = AUTO if target in PARALLEL_TARGETS else 1
    return usable_cpus() if jobs == AUTO else int(jobs)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lifecycle-tck", description=__doc__)
    parser.add_argument("--version", action="version", version=version_line(),
                        help="print the kit's version and the Kubernetes and Cluster API versions it follows")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="serve the fake API server over HTTPS until interrupted")
    serve.add_argument("--host", default="127.0.0.1",
                       help="the address to listen on (not loopback: needs a token or --insecure-allow-remote)")
    serve.add_argument("--port", type=int, default=0, help="0 picks a free port")
    serve.add_argument("--kubeconfig", default=None,
                       help="where to write the kubeconfig (default: a directory private to the user)")
    serve.add_argument("--controllers", default="all", help="all, none, or a comma-separated list")
    serve.add_argument("--fixtures", nargs="*", default=[], help="YAML files or folders to load at start")
    serve.add_argument("--token-file", default=None, metavar="PATH",
                       help="require the bearer token this file holds (or set LIFECYCLE_TCK_TOKEN)")
    serve.add_argument("--token", default=None,
                       help="require this bearer token (visible to other users in the process list: "
                            "prefer --token-file or LIFECYCLE_TCK_TOKEN)")
    serve.add_argument("--insecure-http", action="store_true", default=False,
                       help="serve plain HTTP instead of HTTPS")
    serve.add_argument("--insecure-allow-remote", action="store_true", default=False,
                       help="allow a non-loopback --host without a token")
    serve.add_argument("--nodes", type=int, default=1, metavar="N", help="Ready Nodes to start with (0: none)")
    serve.add_argument("--chaos", type=_rate, default=None, metavar="RATE",
                       help="answer about RATE (0..1] of the API requests with 409, 429 or 500 "
                            "(not those of the world's simulators)")
    # Retention: the oldest audit records and watch events go first (defaults: harness/targets/serve.py).
    serve.add_argument("--audit-max-records", type=_count, default=None, metavar="N",
                       help="audit records kept (default 20000)")
    serve.add_argument("--audit-max-bytes", type=_size, default=None, metavar="SIZE",
                       help="bytes of object versions the audit trail keeps (default 64Mi)")
    serve.add_argument("--history-max-events", type=_count, default=None, metavar="N",
                       help="watch events each cluster keeps for resuming watches (default 50000)")
    serve.add_argument("--history-max-bytes", type=_size, default=None, metavar="SIZE",
                       help="bytes of object versions each cluster's watch history keeps (default 64Mi)")

    extension = sub.add_parser("extension", help="serve the reference Runtime Extension over HTTPS until interrupted")
    extension.add_argument("--host", default="127.0.0.1")
    extension.add_argument("--port", type=int, default=0, help="0 picks a free port")
    extension.add_argument("--cert-dir", required=True, help="where the CA and server certificate are (made if absent)")
    extension.add_argument("--kubeconfig", default=None, help="sync the test extension's ConfigMaps with this cluster")
    extension.add_argument("--failure-policy", default="Fail", choices=("Fail", "Ignore"))
    extension.add_argument("--timeout-seconds", type=int, default=None, help="timeoutSeconds of every handler")

    behaviors = sub.add_parser("behaviors",
                               help="list every behavior with its seed, level, scenarios and latest result")
    behaviors.add_argument("--format", dest="fmt", default="table", choices=("table", "yaml", "markdown"))
    behaviors.add_argument("--summary", action="store_true", help="only the coverage counts per seed and level")
    behaviors.add_argument("--results", default=None, metavar="FILE",
                           help="a conformance-results.yaml (or its report folder); 'none' for no results "
                                "(default: the newest under reports/)")

    conformance = sub.add_parser("conformance", help="run the conformance suite and print its summary")
    conformance.add_argument("--target", default="reference", choices=TARGETS)
    conformance.add_argument("--hic-command", default=None, metavar="CMD",
                             help="--target hic: the command running the HIC under test (it gets KUBECONFIG "
                                  "and LIFECYCLE_TCK_HIC_CONFIG)")
    conformance.add_argument("--hic-config", default=None, metavar="FILE",
                             help="--target hic: the HIC config (YAML): its hooks, whether it adds them, its selector")
    conformance.add_argument("--profile", dest="profiles", action="append", default=None, metavar="P",
                             help="--target controller: a controller profile the command claims (repeatable): "
                                  "machine_controller, cluster_controller, topology_controller, addon_controller, "
                                  "rollout_deployment, rollout_statefulset, rollout_daemonset")
    conformance.add_argument("--command", dest="controller_command", default=None, metavar="CMD",
                             help="--target controller/machine-controller: the command running the controller under "
                                  "test (it gets KUBECONFIG); see harness/targets/machine_controller.py")
    conformance.add_argument("--stdio-control", action="store_true", default=False,
                             help="--target controller/machine-controller: the command speaks the harness's stdio "
                                  "control protocol and runs in lockstep with the virtual clock (otherwise: on wall "
                                  "time, and scenarios needing more virtual time than --wall-budget do not run)")
    conformance.add_argument("--wall-budget", type=float, default=None, metavar="SECONDS",
                             help="--target controller/machine-controller on wall time: the virtual seconds a "
                                  "scenario may let pass (default 10); beyond it the scenario does not run and "
                                  "the verdict is INCOMPLETE")
    conformance.add_argument("--extension-url", default=None, metavar="URL",
                             help="--target extension: the base URL of the Runtime Extension under test (https; "
                                  "discovery at URL/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery)")
    conformance.add_argument("--ca-file", default=None, metavar="FILE",
                             help="--target extension: the PEM file of the CA that signs the extension's certificate")
    conformance.add_argument("--report-dir", default=None)
    conformance.add_argument("--level", default="may", choices=LEVELS,
                             help="run scenarios of this level and stricter ones (must ⊂ should ⊂ may)")
    conformance.add_argument("-k", dest="keyword", default=None, help="only scenarios matching this expression")
    conformance.add_argument("--chaos", type=_rate, default=None, metavar="RATE",
                             help="make about RATE (0..1] of the reference controllers' reads and writes fail "
                                  "with 409, 429 or 500")
    conformance.add_argument("--jobs", type=_jobs, default=None, metavar="N|auto",
                             help="worker processes to spread the scenarios over (pytest-xdist; the same results "
                                  "as one process); auto: the CPUs this process may use. Default: auto for "
                                  "--target reference, 1 for the others (a command or extension under test may "
                                  "not stand several instances at once)")
    return parser


def _conformance(args: argparse.Namespace) -> int:
    # Imported here so that `serve` starts without pytest's import cost.
    from harness.targets.conformance import run

    target_args: list[str] = []
    profiles: list[str] | None = None
    if args.profiles and args.target != "controller":
        print("lifecycle-tck conformance: --profile goes with --target controller", file=sys.stderr)
        return 2
    if args.target == "hic":
        from harness.targets.hic import check_hic_options

        problem = check_hic_options(args.hic_command, args.hic_config)
        if problem:
            print(f"lifecycle-tck conformance: {problem}", file=sys.stderr)
            return 2
        target_args = [f"--hic-command={args.hic_command}", f"--hic-config={Path(args.hic_config).resolve()}"]
    if args.target in ("machine-controller", "controller"):
        from harness.targets.machine_controller import check_options

        problem = check_options(args.controller_command, args.target, args.profiles, args.wall_budget)
        if problem:
            print(f"lifecycle-tck conformance: {problem}", file=sys.stderr)
            return 2
        target_args = [f"--controller-command={args.controller_command}"]
        target_args += ["--stdio-control"] if args.stdio_control else []
        target_args += [f"--wall-budget={args.wall_budget}"] if args.wall_budget is not None else []
        if args.target == "controller":
            profiles = list(dict.fromkeys(args.profiles))
            target_args += [f"--profile={profile}" for profile in profiles]
    if args.target == "extension":
        from harness.targets.extension import check_extension_options

        problem = check_extension_options(args.extension_url, args.ca_file)
        if problem:
            print(f"lifecycle-tck conformance: {problem}", file=sys.stderr)
            return 2
        target_args = [f"--extension-url={args.extension_url}", f"--ca-file={Path(args.ca_file).resolve()}"]
    return run(
        features=features_dir(), target=args.target, report_dir=args.report_dir, level=args.level, keyword=args.keyword,
        chaos=args.chaos, target_args=target_args, profiles=profiles, jobs=resolve_jobs(args.jobs, args.target),
    )


def _serve(args: argparse.Namespace) -> int:
    from harness.targets.serve import Retention, serve

    limits = {name: getattr(args, name) for name in
              ("audit_max_records", "audit_max_bytes", "history_max_events", "history_max_bytes")}
    return serve(
        host=args.host, port=args.port, kubeconfig=args.kubeconfig, controllers=args.controllers,
        fixtures=args.fixtures, token=args.token, chaos=args.chaos, token_file=args.token_file,
        insecure_http=args.insecure_http, insecure_allow_remote=args.insecure_allow_remote, nodes=args.nodes,
        retention=Retention(**{k: v for k, v in limits.items() if v is not None}),
    )


def main(argv: list[str] | None = None) -> int:
    """Run the command ``argv`` names; its exit code. A packaged resource that is missing or
    corrupt is one line naming it on stderr and exit 2, never a traceback."""
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except ResourceError as err:
        print(f"lifecycle-tck {args.command}: {err}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    if args.command == "conformance":
        return _conformance(args)
    if args.command == "serve":
        return _serve(args)
    if args.command == "behaviors":
        from harness.targets.behaviors import run as list_behaviors

        return list_behaviors(features=features_dir(), fmt=args.fmt, summary=args.summary, results=args.results)
    if args.command == "extension":
        from harness.world.extension.server import run

        return run(host=args.host, port=args.port, cert_dir=args.cert_dir, kubeconfig=args.kubeconfig,
                   failure_policy=args.failure_policy, timeout_seconds=args.timeout_seconds)
    return 2


if __name__ == "__main__":
    sys.exit(main())
