"""``python -m harness`` (installed as ``lifecycle-tck``): serve the fake API, run the conformance suite."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FEATURES = REPO / "features"
LEVELS = ("must", "should", "may")
TARGETS = ("reference",)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lifecycle-tck", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="serve the fake API server over HTTP until interrupted")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=0, help="0 picks a free port")
    serve.add_argument("--kubeconfig", default=None, help="where to write the kubeconfig")
    serve.add_argument("--controllers", default="all", help="all, none, or a comma-separated list")
    serve.add_argument("--fixtures", nargs="*", default=[], help="YAML files or folders to load at start")
    serve.add_argument("--token", default=None, help="require this bearer token")

    conformance = sub.add_parser("conformance", help="run the conformance suite and print its summary")
    conformance.add_argument("--target", default="reference", choices=TARGETS)
    conformance.add_argument("--report-dir", default=None)
    conformance.add_argument("--level", default="may", choices=LEVELS,
                             help="run scenarios of this level and stricter ones (must ⊂ should ⊂ may)")
    conformance.add_argument("-k", dest="keyword", default=None, help="only scenarios matching this expression")
    return parser


def _conformance(args: argparse.Namespace) -> int:
    # Imported here so that `serve` starts without pytest's import cost.
    from harness.targets.conformance import run

    return run(
        features=FEATURES, target=args.target, report_dir=args.report_dir, level=args.level, keyword=args.keyword
    )


def _serve(args: argparse.Namespace) -> int:
    from harness.targets.serve import serve

    return serve(
        host=args.host, port=args.port, kubeconfig=args.kubeconfig, controllers=args.controllers,
        fixtures=args.fixtures, token=args.token,
    )


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "conformance":
        return _conformance(args)
    if args.command == "serve":
        return _serve(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
