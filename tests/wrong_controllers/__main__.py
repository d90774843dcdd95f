"""``python -m tests.wrong_controllers [--variant NAME ...] [--transport inprocess|process] [--sample N
--seed S] [--list]``: the mutation self-test. Runs the scenarios of each wrong variant's area
(tests/wrong_controllers/catalogue.py) against it, one child pytest at a time (``-x``: one failing scenario
catches it), and prints caught/missed with the scenario that caught it. ``process`` runs the variant as a
separate controller process through ``--target controller --stdio-control`` (apiserver variants have no
process: they run in-process). Exit code 0 when every variant run is caught, 1 otherwise."""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from harness.targets.profiles import reference_controllers
from tests.wrong_controllers.catalogue import APISERVER, ENV, VARIANTS, Variant

ROOT = Path(__file__).resolve().parents[2]
INPROCESS, PROCESS = "inprocess", "process"
TIMEOUT_SECONDS = 600
FAILED = re.compile(r"^FAILED (\S+)", re.MULTILINE)


@dataclass(frozen=True)
class Outcome:
    """How one variant fared: ``caught`` when a scenario failed (``scenario`` names the first)."""

    variant: str
    transport: str
    caught: bool
    scenario: str
    seconds: float
    detail: str


def command(variant: Variant, transport: str) -> list[str]:
    """The child pytest judging ``variant`` over ``transport``."""
    argv = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:xdist", "-p", "no:cacheprovider",
            "-p", "no:randomly", *variant.features]
    if variant.marks:
        argv += ["-m", variant.marks]
    if transport == PROCESS and variant.profile != APISERVER:
        only = ",".join(reference_controllers([variant.profile]))
        cmd = f"{sys.executable} -m tests.wrong_controllers.controller_process --only {only} --control stdio"
        argv += ["--target", "controller", f"--profile={variant.profile}", f"--controller-command={cmd}",
                 "--stdio-control"]
    else:
        argv += ["-p", "tests.wrong_controllers.plugin"]
    return argv


def run(variant: Variant, transport: str, *, wrong: bool = True) -> Outcome:
    """Judge ``variant`` (or, with ``wrong=False``, the reference on the same scenarios)."""
    env = {**os.environ, ENV: variant.name if wrong else "", "PYTHONPATH": str(ROOT)}
    started = time.monotonic()
    try:
        result = subprocess.run(command(variant, transport), cwd=ROOT, env=env, capture_output=True, text=True,
                                timeout=TIMEOUT_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        return Outcome(variant.name, transport, False, "", time.monotonic() - started, "timed out")
    seconds = time.monotonic() - started
    failed = FAILED.findall(result.stdout)
    # Exit code 1 is "tests failed"; anything else (usage error, nothing collected) catches nothing.
    caught = result.returncode == 1 and bool(failed)
    tail = (result.stdout + result.stderr).strip().splitlines()[-1:] or [""]
    return Outcome(variant.name, transport, caught, failed[0] if failed else "", seconds, tail[0])


def chosen(names: list[str] | None, sample: int | None, seed: int) -> list[Variant]:
    """The variants named (all when none), or a ``sample`` of them drawn with ``seed``."""
    variants = [VARIANTS[n] for n in names] if names else list(VARIANTS.values())
    if sample is not None and sample < len(variants):
        variants = random.Random(seed).sample(variants, sample)
    return variants


def main(argv: list[str] | None = None) -> int:
    """Run the self-test; 0 when every variant run is caught."""
    parser = argparse.ArgumentParser(prog="python -m tests.wrong_controllers", description=__doc__.splitlines()[0])
    parser.add_argument("--variant", action="append", choices=sorted(VARIANTS), help="a variant (repeatable)")
    parser.add_argument("--transport", choices=(INPROCESS, PROCESS), default=INPROCESS)
    parser.add_argument("--sample", type=int, default=None, help="run N variants drawn at random")
    parser.add_argument("--seed", type=int, default=0, help="the seed of --sample")
    parser.add_argument("--list", action="store_true", help="list the variants and exit")
    parser.add_argument("--reference", action="store_true",
                        help="run the same scenarios against the reference (each must pass): the control")
    args = parser.parse_args(argv)
    if args.list:
        for v in VARIANTS.values():
            print(f"{v.name:32} seed {v.seed:3} {v.profile:20} {v.rule}: {v.bug}")
        return 0
    outcomes = []
    for variant in chosen(args.variant, args.sample, args.seed):
        transport = INPROCESS if variant.profile == APISERVER else args.transport
        outcome = run(variant, transport, wrong=not args.reference)
        if args.reference:
            outcome = Outcome(outcome.variant, transport, not outcome.caught, outcome.scenario, outcome.seconds,
                              outcome.detail)
        outcomes.append(outcome)
        verdict = ("passes" if outcome.caught else "FAILS") if args.reference else (
            "caught" if outcome.caught else "MISSED")
        print(f"{verdict:7} {variant.name:32} [{transport}] {outcome.seconds:6.1f}s "
              f"{outcome.scenario or outcome.detail}", flush=True)
    caught = sum(o.caught for o in outcomes)
    print(f"{caught}/{len(outcomes)} " + ("reference runs passed" if args.reference else "variants caught"))
    return 0 if caught == len(outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
