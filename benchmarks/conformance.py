"""Conformance runs, per scenario: in-process, and the lockstep controller target.

In-process (the default): CPU seconds per scenario of a whole ``lifecycle-tck conformance --jobs 1``
run in a child process (start-up and collection included: what a user pays), against the CPU of
building an empty ``World`` and settling it in this process (the baseline: what a scenario cannot cost
less than); the run's wall time against its CPU time; the same run spread over a worker process per
CPU (``--jobs auto``, what ``make conformance`` runs), its wall and CPU against the serial run's; and
how long the most blocked scenario waited on something other than a CPU (benchmarks/scenario_clock.py).
CPU time, not wall time: the machine is shared, and CPU time of the child process moves far less with
the load than its wall time. Given feature files, the same per scenario for ``pytest -p no:xdist`` over
them, the CPU of collecting them subtracted.

Lockstep: wall seconds per scenario of ``--target machine-controller --stdio-control`` with the
reference machine controller as the command under test (a process started for each scenario), against
the same scenarios in-process. ``python -m benchmarks.conformance [FEATURE_FILE ...]``.
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import scenario_clock
from benchmarks.timing import report
from harness.__main__ import usable_cpus
from harness.world.world import World

ROOT = Path(__file__).resolve().parent.parent
FEATURES = ["features/test_rollout_hooks_scenarios.py", "features/test_machine_deletion_scenarios.py"]
# Ten machine deletion scenarios of different kinds (hooks, drains, timeouts, volumes).
LOCKSTEP_SUBSET = " or ".join([
    "removing_one_of_several", "budget_protects_is_not_evicted", "terminating_namespace_is_not_evicted",
    "pods_whose_daemonset_is_gone", "drained_in_batches_by_order", "nodedeletiontimeout_defaults",
    "node_is_deleted_then_the_machine_goes", "marks_it_for_deletion_and_its_finalizer",
    "removing_the_last_predrain_hook_starts", "preterminate_hook_keeps_the_infrastructure_machine",
])
RUN_TIMEOUT = 1800


def _child(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """Run ``argv`` from the checkout; (CPU seconds of the child and its children, wall seconds, output)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    run = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=RUN_TIMEOUT,
                         env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, run.stdout + run.stderr


def _passed(output: str) -> int:
    found = re.search(r"(\d+) passed", output)
    if found is None or re.search(r"\d+ (failed|error)", output):
        raise RuntimeError(f"the run did not pass:\n{output[-2000:]}")
    return int(found.group(1))


def empty_world_cpu(repeat: int = 5) -> float:
    """CPU seconds of building a World (every simulator and controller) and settling it, best of ``repeat``."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        World().settle()
        best = min(best, time.process_time() - start)
    return best


def in_process(files: list[str]) -> None:
    """CPU per scenario of the in-process feature run of ``files``."""
    baseline = empty_world_cpu()
    report("build and settle an empty World (CPU)", baseline * 1000, "ms")
    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider"]
    collect_cpu, _, _ = _child([*pytest, "--collect-only", *files])
    cpu, wall, output = _child([*pytest, *files])
    scenarios = _passed(output)
    per = (cpu - collect_cpu) / scenarios
    report(f"in-process scenario, {scenarios} scenarios (CPU)", per * 1000, "ms", baseline * 1000,
           "an empty World's build and settle")
    report(f"  the whole run: CPU {cpu:.1f} s, wall {wall:.1f} s, collecting", collect_cpu, "s CPU")
    report("  500 scenarios at this rate (CPU)", 500 * per, "s")


def whole_run() -> None:
    """``lifecycle-tck conformance`` in-process, whole: CPU per scenario against an empty World's build
    and settle, wall time against CPU time, and the scenarios that waited on something else for over a
    second (benchmarks/scenario_clock.py)."""
    baseline = empty_world_cpu()
    report("build and settle an empty World (CPU)", baseline * 1000, "ms")
    with tempfile.TemporaryDirectory() as tmp:
        clock = Path(tmp) / "scenarios.jsonl"
        # One process: the per-scenario figures below are about the scenarios, not about spreading them.
        cpu, wall, output = _child([sys.executable, "-m", "harness", "conformance", "--jobs", "1"],
                                   env={"PYTEST_PLUGINS": "benchmarks.scenario_clock", scenario_clock.OUT: str(clock)})
        records = [json.loads(line) for line in clock.read_text().splitlines()] if clock.exists() else []
    found = re.search(r"(\d+) passed, (\d+) failed", output)
    if found is None or int(found.group(2)) or "Verdict: CONFORMANT" not in output:
        raise RuntimeError(f"the conformance run did not pass:\n{output[-2000:]}")
    scenarios = int(found.group(1))
    per = cpu / scenarios
    report(f"lifecycle-tck conformance, {scenarios} scenarios (CPU per scenario)", per * 1000, "ms",
           baseline * 1000, "an empty World's build and settle")
    report("  the whole run (CPU, start-up and collection included)", cpu, "s")
    report("  the whole run (wall)", wall, "s", cpu, "its CPU time")
    # The same run as `make conformance` runs it: spread over a worker per usable CPU (harness/targets/workers.py).
    auto_cpu, auto_wall, auto_output = _child([sys.executable, "-m", "harness", "conformance", "--jobs", "auto"])
    if f"{scenarios} passed, 0 failed" not in auto_output or "Verdict: CONFORMANT" not in auto_output:
        raise RuntimeError(f"the --jobs auto run did not pass as the serial one did:\n{auto_output[-2000:]}")
    report(f"  the whole run, --jobs auto = {usable_cpus()} (wall)", auto_wall, "s", wall, "the serial run's wall")
    report(f"  the whole run, --jobs auto = {usable_cpus()} (CPU)", auto_cpu, "s", cpu, "the serial run's CPU")
    report(f"  load average (1 min) at the end, on {os.cpu_count()} CPUs", os.getloadavg()[0], "")
    blocked = sorted(((r["wall"] - r["thread_cpu"] - r["thread_waiting"], r["nodeid"]) for r in records),
                     reverse=True)
    if blocked:
        report("  scenarios blocked on something else for over 1 s", sum(1 for b, _ in blocked if b > 1.0),
               "scenarios")
        report(f"  the most blocked: {blocked[0][1].rpartition('::')[2][:40]}", blocked[0][0], "s")


def lockstep() -> None:
    """Wall seconds per scenario under ``--target machine-controller --stdio-control``, against in-process."""
    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
              "features/test_machine_deletion_scenarios.py", "-k", LOCKSTEP_SUBSET]
    _, base_wall, output = _child(pytest)
    base_n = _passed(output)
    command = f"{sys.executable} -m controllers --only machine --control stdio"
    _, wall, output = _child([*pytest, "--target", "machine-controller", "--stdio-control",
                              f"--controller-command={command}"])
    n = _passed(output)
    report(f"in-process, {base_n} machine deletion scenarios (wall, per scenario)", base_wall / base_n, "s")
    report(f"lockstep --stdio-control, the same {n} (wall, per scenario)", wall / n, "s", base_wall / base_n,
           "in-process")


def main(argv: list[str] | None = None) -> None:
    """Print the figures: the whole in-process conformance run (or, given feature files, those alone)
    and the lockstep target."""
    print("== conformance runs, per scenario ==", flush=True)
    if argv:
        in_process(argv)
    else:
        whole_run()
    lockstep()


if __name__ == "__main__":
    main(sys.argv[1:])
