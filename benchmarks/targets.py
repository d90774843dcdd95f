"""Third-party targets, per scenario: ``--target hic`` and ``--target controller --stdio-control``.

Wall seconds per scenario of ``pytest -p no:xdist`` over a feature file with the target's options, the
wall time of collecting the same scenarios subtracted (the interpreter, the imports, the collection),
against the same scenarios in the same run in-process with the reference controllers (the baseline:
what the scenario costs without a third party). Wall time, since what a third-party target costs is
mostly waiting (its process starting, a quiet period, a round trip); so the runs take turns: the
baseline and the target alternate, ``ROUNDS`` times, and the best of each is kept.

* ``hic``: features/test_hic_scenarios.py with examples/hic_kubernetes as the HIC (a Python process
  using the kubernetes client), against the same scenarios with the reference HIC in-process;
* ``controller --stdio-control``: the machine deletion scenarios of :data:`CONTROLLER_SUBSET` with the
  reference machine controller as the command (``python -m controllers --only machine --control
  stdio``), with its read cache and without (``LIFECYCLE_TCK_READ_CACHE=0``), against in-process.

``python -m benchmarks.targets [hic|controller ...]``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.timing import report

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
ROUNDS = 2
RUN_TIMEOUT = 1800
HIC_FEATURES = "features/test_hic_scenarios.py"
HIC_OPTIONS = ["--target", "hic", f"--hic-command={PYTHON} examples/hic_kubernetes/hic.py",
               "--hic-config", "examples/hic_kubernetes/hic-config.yaml"]
CONTROLLER_FEATURES = "features/test_machine_deletion_scenarios.py"
# Machine deletion scenarios of every kind (hooks, drains and their timeouts, PDBs, volumes, Node
# deletion), one of them letting 6 hours of virtual time pass in 20 s drain retries.
CONTROLLER_SUBSET = " or ".join([
    "removing_one_of_several", "budget_protects_is_not_evicted", "terminating_namespace_is_not_evicted",
    "pods_whose_daemonset_is_gone", "drained_in_batches_by_order", "nodedeletiontimeout_defaults",
    "node_is_deleted_then_the_machine_goes", "marks_it_for_deletion_and_its_finalizer",
    "removing_the_last_predrain_hook_starts", "preterminate_hook_keeps_the_infrastructure_machine",
    "without_nodedraintimeout_a_blocked_drain_goes_on", "volume_still_attached_to_the_node_holds",
])
CONTROLLER_OPTIONS = ["--target", "controller", "--profile", "machine_controller", "--stdio-control",
                      f"--controller-command={PYTHON} -m controllers --only machine --control stdio"]


def _wall(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    start = time.perf_counter()
    run = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=RUN_TIMEOUT,
                         env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
    return time.perf_counter() - start, run.stdout + run.stderr


def _passed(output: str) -> int:
    found = re.search(r"(\d+) passed", output)
    if found is None or re.search(r"\d+ (failed|error)", output):
        raise RuntimeError(f"the run did not pass:\n{output[-3000:]}")
    return int(found.group(1))


def per_scenario(files: list[str], options: list[str], env: dict[str, str] | None = None) -> tuple[float, int]:
    """Wall seconds per scenario of ``files`` run with ``options`` (collection subtracted), and how many."""
    pytest = [PYTHON, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", *files]
    collect, _ = _wall([*pytest, "--collect-only", *options], env)
    wall, output = _wall([*pytest, *options], env)
    scenarios = _passed(output)
    return max(0.0, wall - collect) / scenarios, scenarios


def _best(runs: dict[str, tuple[list[str], list[str], dict[str, str] | None]]) -> dict[str, tuple[float, int]]:
    """Each run ``ROUNDS`` times, taking turns; the best per-scenario time of each."""
    best: dict[str, tuple[float, int]] = {}
    for _ in range(ROUNDS):
        for name, (files, options, env) in runs.items():
            seconds, count = per_scenario(files, options, env)
            if name not in best or seconds < best[name][0]:
                best[name] = (seconds, count)
    return best


def hic() -> None:
    """``--target hic`` with the kubernetes-client example HIC, against the reference HIC in-process."""
    best = _best({"in-process": ([HIC_FEATURES], [], None), "hic": ([HIC_FEATURES], HIC_OPTIONS, None)})
    base, count = best["in-process"]
    report(f"in-process, the {count} HIC scenarios (wall, per scenario)", base, "s")
    seconds, count = best["hic"]
    report(f"--target hic, examples/hic_kubernetes, {count} scenarios (wall, per scenario)", seconds, "s", base,
           "in-process")


def controller() -> None:
    """``--target controller --stdio-control`` with the reference machine controller, with and without its
    read cache, against the same scenarios in-process."""
    subset = ["-k", CONTROLLER_SUBSET]
    best = _best({
        "in-process": ([CONTROLLER_FEATURES], subset, None),
        "cached": ([CONTROLLER_FEATURES], [*subset, *CONTROLLER_OPTIONS], None),
        "uncached": ([CONTROLLER_FEATURES], [*subset, *CONTROLLER_OPTIONS], {"LIFECYCLE_TCK_READ_CACHE": "0"}),
    })
    base, count = best["in-process"]
    report(f"in-process, {count} machine deletion scenarios (wall, per scenario)", base, "s")
    report(f"--target controller --stdio-control, the same {best['cached'][1]} (wall, per scenario)",
           best["cached"][0], "s", base, "in-process")
    report("  the same without the read cache (wall, per scenario)", best["uncached"][0], "s", base, "in-process")


def main(argv: list[str] | None = None) -> None:
    """Print the figures (``argv``: which of ``hic``, ``controller``; default both)."""
    chosen = argv or ["hic", "controller"]
    print("== third-party targets, per scenario ==", flush=True)
    if "hic" in chosen:
        hic()
    if "controller" in chosen:
        controller()


if __name__ == "__main__":
    main(sys.argv[1:])
